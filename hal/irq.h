/* hal/irq.h: the trap frame as portable code sees it.
 *
 * The layout is the architecture's; portable code reads it only through
 * these accessors, so host tests can supply their own frame. */
#pragma once
#include <stdint.h>

struct trap_frame;

uintptr_t trap_pc(const struct trap_frame *tf);  /* interrupted instruction */
uintptr_t trap_sp(const struct trap_frame *tf);  /* interrupted stack pointer */
uintptr_t trap_fp(const struct trap_frame *tf);  /* interrupted frame pointer */

/* Print the saved registers (panic). */
void trap_print_regs(const struct trap_frame *tf);
/* Print this CPU's registers as they are now: a panic with no trap frame
 * (stack and frame pointer, flags, the paging and control registers). */
void cpu_print_regs_here(void);
