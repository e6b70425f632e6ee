/* arch/x86_64/trap_inline.h: hal/irq.h's trap_regs, inline for the
 * sample path (see there); trap.c's trap_regs is this. */
#pragma once
#include "arch/x86_64/trap.h"

static inline void trap_regs_inline(const struct trap_frame *tf, struct trap_regs *r)
{
    r->tr_pc = tf->rip;
    r->tr_sp = tf->rsp;
    r->tr_fp = tf->rbp;
    r->tr_link = 0;                 /* calls push the return address */
}

/* hal/irq.h: nothing here; the host tests' twin runs an NMI there. */
static inline void nmi_window_inline(unsigned step)
{
    (void)step;
}
