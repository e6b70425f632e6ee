/* kernel/stacktrace.h: the frame-pointer walk.
 *
 * A frame is [saved fp][return address] at fp. A walk accepts a frame
 * pointer only if it is 8-byte aligned, lies (with its 16-byte record)
 * inside the stack the starting sp lies in, or crossing from an IRQ/IST
 * stack into another registered stack (an interrupted context), and is
 * strictly above the previous frame in the same stack. It stops at a null
 * fp, a return address outside kernel text, or max frames. It never faults
 * on garbage: it runs in NMI context. */
#pragma once
#include <stdint.h>

/* Return addresses of the frames above fp, at most max. sp names the
 * stack the walk starts in. */
unsigned st_walk(uintptr_t fp, uintptr_t sp, uintptr_t *out, unsigned max);
/* An interrupted context, with interrupts off on the calling CPU (a
 * sample, a backtrace answer, a panic: it reads this CPU's task stack
 * bounds without a lock, kernel/stacks.h): out[0] is the interrupted
 * instruction itself,
 * taken from the trap frame; then, if pc is on its function's first
 * instruction, inside its prologue before its own frame pointer is set,
 * or past its epilogue (hal/unwind.h), the caller's return address from
 * the stack or the link register; then the walk from its fp and sp. */
struct trap_frame;
unsigned st_capture_trap(const struct trap_frame *tf, uintptr_t *out, unsigned max);
/* From the caller of st_capture_here. */
unsigned st_capture_here(uintptr_t *out, unsigned max);
