/* arch/arm64/gtimer.c: the generic timer's virtual timer (CNTV) as each
 * CPU's TIMER_HZ tick. The counter's frequency is CNTFRQ_EL0; its PPI
 * comes from the device tree (27 on QEMU virt).
 *
 * The timer fires when the count reaches CNTV_CVAL_EL0 and stays asserted
 * until the compare value moves: each tick advances it by one period, so
 * the rate does not drift with handler latency. Ticks a CPU missed (its
 * host thread descheduled) collapse into one, as with a periodic LAPIC
 * timer: the compare value restarts a period from now. */
#include "arch/arm64/arm64.h"
#include "arch/arm64/gic.h"
#include "arch/arm64/gtimer.h"

#define CTL_ENABLE  1u
#define CTL_IMASK   2u

static unsigned tick_intid = 27;
static uint64_t period;                 /* counter units per tick */

void gtimer_init(unsigned intid, unsigned hz)
{
    if (intid)
        tick_intid = intid;
    period = read_sysreg(cntfrq_el0) / hz;
}

unsigned gtimer_intid(void) { return tick_intid; }

void gtimer_start(void)
{
    write_sysreg(cntv_ctl_el0, CTL_IMASK);
    write_sysreg(cntv_cval_el0, read_sysreg(cntvct_el0) + period);
    write_sysreg(cntv_ctl_el0, CTL_ENABLE);
    isb();
    gic_enable_ppi(tick_intid);
}

/* Interrupt context, before the EOI: move the compare value so the
 * level-triggered PPI drops. */
void gtimer_rearm(void)
{
    uint64_t now = read_sysreg(cntvct_el0);
    uint64_t next = read_sysreg(cntv_cval_el0) + period;
    if (next <= now)
        next = now + period;
    write_sysreg(cntv_cval_el0, next);
    isb();
}
