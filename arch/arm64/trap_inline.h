/* arch/arm64/trap_inline.h: hal/irq.h's trap_regs, inline for the
 * sample path (see there); trap.c's trap_regs is this. */
#pragma once
#include "arch/arm64/trap.h"

/* Only fields the PMU's short path saves (vectors.S: pc, sp, x29, x30):
 * the counter's sample reads its frame through this alone. */
static inline void trap_regs_inline(const struct trap_frame *tf, struct trap_regs *r)
{
    r->tr_pc = tf->pc;
    r->tr_sp = tf->sp;
    r->tr_fp = tf->x[29];
    r->tr_link = tf->x[30];
}

/* hal/irq.h: nothing here; the host tests' twin runs an NMI there. */
static inline void nmi_window_inline(unsigned step)
{
    (void)step;
}
