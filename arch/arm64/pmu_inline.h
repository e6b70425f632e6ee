/* arch/arm64/pmu_inline.h: hal/pmu.h's inline NMI acknowledgement for
 * arm64 (see there), whose one counter backend is PMUv3's cycle counter
 * (arch/arm64/pmu.c): kernel/pmu_nmi.h calls it directly, not through
 * the table, saving the call's frame and return on every counter
 * sample. arch/arm64/pmu.c's table entry is this same function, so host
 * tests of the backend, against the simulated PMU, run it. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "arch/arm64/arm64.h"

#define PMUV3_CCNT (1ull << 31) /* bit C of PMCNTEN*, PMINTEN*, PMOVS*: the cycle counter */

/* The next load: one period after the wrap that was just taken, not
 * after now, so the time the interrupt took to arrive (under TCG it
 * waits on QEMU's main loop) does not stretch every period. Once more
 * than half a period has gone by, a full period from now: the missed
 * overflows collapse into this one, and a storm of back-to-back
 * interrupts cannot follow a long delay. */
static inline uint64_t pmuv3_next_load(uint64_t since_wrap, uint64_t period)
{
    return since_wrap < period / 2 ? since_wrap - period : 0 - period;
}

/* hal/pmu.h's po_nmi_ack for the cycle counter. Pseudo-NMI context: at
 * most four register accesses. Reload before clearing the status, as on
 * x86: the counter, just past zero, cannot wrap again in between. The
 * isb makes the cleared status (and so the dropped request) take effect
 * before the vector's EOI, so the level-triggered PPI does not come
 * straight back. */
#define PMU_NMI_ACK_INLINE 1
static inline bool pmu_nmi_ack_inline(uint64_t period)
{
    if (!(pmu_reg_read(PMREG_PMOVSSET) & PMUV3_CCNT))
        return false;
    if (__builtin_expect(period != 0, 1))
        pmu_reg_write(PMREG_PMCCNTR, pmuv3_next_load(pmu_reg_read(PMREG_PMCCNTR), period));
    pmu_reg_write(PMREG_PMOVSCLR, PMUV3_CCNT);
    isb();
    return true;
}
