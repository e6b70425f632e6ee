/* hal/task.h: what the scheduler needs from the architecture to start,
 * switch and inspect a task's kernel stack. */
#pragma once
#include <stdint.h>

/* Switch stacks: save the callee-saved registers on this stack and its
 * pointer in *save_sp, load new_sp's, return there. */
void arch_switch(uint64_t *save_sp, uint64_t new_sp);

/* Lay out a fresh stack ending at top so that arch_switch to the returned
 * stack pointer "returns" into entry, with a frame chain that ends there. */
uint64_t arch_stack_init(uintptr_t top, void (*entry)(void));

/* For a task switched out at saved_sp: the frame pointer and stack pointer
 * a frame-pointer walk of it starts from. */
void arch_saved_frame(uint64_t saved_sp, uintptr_t *fp, uintptr_t *sp);
/* The same fp as an offset above saved_sp (sp is saved_sp itself): for
 * the scheduler's off-CPU walk on every recorded switch, where the call
 * would cost more than the load. */
extern const unsigned arch_saved_fp_off;
