/* kernel/pmu_nmi.h: the PMU core's NMI half (pmu_nmi_claim, hal/pmu.h),
 * inline, for the counter's sample (kernel/prof/sample.c's prof_nmi):
 * as a call it saved and restored registers and read the CPU's index
 * again on every counter sample. kernel/pmu.c owns this state and
 * defines pmu_nmi_claim as this same function out of line. Host unit
 * tests compile both: the backend's acknowledgement is then a fake or
 * simulated counter's (arch/host/pmu_inline.h). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "hal/cpu.h"
#include "hal/pmu.h"
#include "kernel/panic.h"

/* Each CPU's own, together so that the NMI addresses them from one base:
 *  - pc_armed: the flag that brackets the counter (kernel/pmu.c).
 *  - pc_rng: the xorshift64 state of the period's jitter. Only that CPU's
 *    tick (arm) and NMI (reload) step it, and the NMI cannot interrupt the
 *    tick's step (it steps only when armed, and arm draws before setting
 *    the flag), so a plain single-writer word: no lock, no atomic. 0: not
 *    seeded yet (xorshift never yields 0 from a nonzero state).
 *  - pc_drift: how far the next overflow lies from the grid of nominal
 *    periods since arm, in counts, within +-period/2 (pmu_period_draw).
 *    The same single writers as pc_rng.
 *  - pc_claims, pc_stale: written only by that CPU's NMI, overflows
 *    claimed and of them those that arrived after disarm; read (relaxed)
 *    only for lscpu. Volatile stores, not __atomic ones: the same
 *    single-copy atomic word store, but GCC gives an aarch64 __atomic
 *    store no offset addressing. */
struct pmu_cpu {
    bool pc_armed;
    uint32_t pc_claims, pc_stale;
    uint64_t pc_rng;
    int64_t pc_drift;
} __attribute__((aligned(64)));
extern struct pmu_cpu pmu_cpus[MAX_CPUS];

/* Set by the probe before it publishes (kernel/once.h), never changed
 * after: the counter in use (NULL: the tick), its nominal period, and
 * the jitter's band, each draw being jit_lo plus a remainder modulo
 * jit_span. jitter is off only in host tests of exact periods. */
struct pmu_nmi_params {
    const struct pmu_ops *ops;
    uint64_t period, jit_lo, jit_span;
    bool jitter;
};
extern struct pmu_nmi_params pmu_nmi;

/* The next load's period: the nominal one plus a step drawn uniformly
 * within +-1/4 of it, where the steps add up to a drift from the grid of
 * nominal periods that stays within +-1/2 period: a step that would
 * leave that band is taken the other way. So each overflow lands at a
 * random phase of any periodic work (the drift wanders the whole period,
 * about once every 50 samples), yet a window of n nominal periods holds
 * n samples within one, as with a fixed period. Unbounded, the drift was
 * a random walk: its spread over 1000 samples was ~4.6 periods, and a
 * 1 s profile on a 1 kHz counter took 1003 to 1017 samples.
 *
 * The new drift goes to *drift; the caller stores it in pc_drift only
 * once the load is made (an NMI that is not the counter's loads nothing).
 * NMI context: a few ALU instructions and one division, no lock, nothing
 * that faults. Never 0 (a period is at least a thousand counts), which
 * po_nmi_ack reads as "no reload". */
static inline uint64_t pmu_period_draw(struct pmu_cpu *me, int64_t *drift)
{
    *drift = 0;
    if (!pmu_nmi.jitter)
        return pmu_nmi.period;
    uint64_t x = me->pc_rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    me->pc_rng = x;
    int64_t half = (int64_t)(pmu_nmi.period / 2);
    int64_t step = (int64_t)(pmu_nmi.jit_lo + x % pmu_nmi.jit_span) - (int64_t)pmu_nmi.period;
    int64_t d = me->pc_drift + step;
    /* |drift| <= half and |step| <= half / 2: the step taken the other
     * way lands back inside the band. */
    if (d > half || d < -half) {
        step = -step;
        d = me->pc_drift + step;
    }
    *drift = d;
    return pmu_nmi.period + (uint64_t)step;
}

/* kernel/pmu.c: an NMI on a CPU whose counter is not armed. */
bool pmu_nmi_claim_disarmed(struct pmu_cpu *me);

/* pmu_nmi_claim on CPU cpu, the calling one. NMI context: no lock (the
 * interrupted code may hold it), no allocation, one backend call with a
 * bounded number of register accesses, only to registers the probe has
 * shown to exist; the counts are this CPU's own. Armed, the probe has
 * published: pmu_arm sets the flag only after it said so, on this CPU
 * (program order), and ops never changes after; so the armed path, every
 * sample, reads ops without asking the probe again. The draw is taken
 * before the answer is known: an NMI that is not the counter's (x86
 * shares the vector) steps the generator once more, which changes
 * nothing but which period comes next. */
static inline __attribute__((always_inline)) bool pmu_nmi_claim_on(unsigned cpu)
{
    BUG_ON(cpu >= MAX_CPUS);
    struct pmu_cpu *me = &pmu_cpus[cpu];
    if (__builtin_expect(!__atomic_load_n(&me->pc_armed, __ATOMIC_ACQUIRE), 0))
        return pmu_nmi_claim_disarmed(me);
    int64_t drift;
    uint64_t next = pmu_period_draw(me, &drift);
#ifdef PMU_NMI_ACK_INLINE
    /* The one backend there is, inline (hal/pmu.h). */
    if (!pmu_nmi_ack_inline(next))
        return false;
#else
    if (!pmu_nmi.ops->po_nmi_ack(next))
        return false;
#endif
    me->pc_drift = drift;
    *(volatile uint32_t *)&me->pc_claims = me->pc_claims + 1;
    return true;
}
