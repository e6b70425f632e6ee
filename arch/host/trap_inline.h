/* arch/host/trap_inline.h: hal/irq.h's trap_regs_inline for host unit
 * tests, the twin of arch/<arch>/trap_inline.h: the same four registers,
 * read from the host's frame (arch/host/trap.h) and the fake link
 * register. tests/unit/fake_hal.c's trap_regs is this.
 *
 * The sample path reads the interrupted context here once per capture,
 * after it took its guard and before the walk: fake_trap_read_hook, if a
 * test set it, runs at that point, as an NMI or the passing of time
 * would arrive in the middle of a real sample. fake_nmi_window_hook, if
 * set, runs at each numbered step of a ring's producer
 * (nmi_window_inline), where a test fires its NMI. */
#pragma once
#include "arch/host/trap.h"

extern uintptr_t fake_trap_link;               /* tests/unit/fake_hal.c */
extern void (*fake_trap_read_hook)(void);
extern void (*fake_nmi_window_hook)(unsigned step);

static inline void trap_regs_inline(const struct trap_frame *tf, struct trap_regs *r)
{
    r->tr_pc = tf->pc;
    r->tr_sp = tf->sp;
    r->tr_fp = tf->fp;
    r->tr_link = fake_trap_link;
    if (fake_trap_read_hook)
        fake_trap_read_hook();
}

static inline void nmi_window_inline(unsigned step)
{
    if (fake_nmi_window_hook)
        fake_nmi_window_hook(step);
}
