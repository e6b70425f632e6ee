/* arch/arm64/pmu.c: hal/pmu.h on arm64: PMUv3's cycle counter, overflowing
 * about every millisecond into the PMU's PPI, taken as a pseudo-NMI.
 *
 * The counter is PMCCNTR_EL0, not event counter 0 with CPU_CYCLES (0x11):
 * both count the same processor cycles, but the cycle counter is there
 * whenever PMUv3 is (PMCR_EL0.N may be 0 event counters, and EL2 can take
 * them all away with MDCR_EL2.HPMN), it is 64 bits wide with PMCR_EL0.LC
 * (so -period needs no width games), and it leaves the event counters to
 * anyone else. cycles_now() stays the generic timer (cpu.c): it is the
 * clock every CPU agrees on; this counter is only the sample source.
 *
 * Armed: PMCCNTR = -period, PMINTENSET.C, PMCNTENSET.C, PMCR.E. When it
 * wraps, PMOVSSET_EL0.C is set and the PMU raises its PPI (the device
 * tree's /pmu interrupt; 23 on QEMU virt), which the GIC delivers above
 * the kernel's interrupt mask (gic.c, cpu.c): a pseudo-NMI, so code that
 * runs with interrupts masked is sampled too. The handler recognises the
 * overflow by PMOVSSET.C, clears it through PMOVSCLR, and reloads the
 * counter to overflow one period after the last wrap. PMCCFILTR_EL0 = 0: EL1 and EL0 both counted, EL2 not.
 *
 * The period comes from the counter's rate, measured by the probe
 * against the generic timer, not assumed: QEMU's TCG counts it at a
 * virtual 1 GHz, real parts at their core clock.
 *
 * Probe discipline as on x86 (spec: "CPUID is not trusted on its own"):
 * ID_AA64DFR0_EL1.PMUVer says whether PMUv3 is claimed; the counter then
 * has to prove it moves within 10 us of the generic timer, with
 * interrupts off; the answer is cached and published with release
 * ordering, read with acquire. Unlike x86 the loop runs the whole 10 us
 * when the counter is live too: the same 10 us give its rate.
 *
 * Arming order: the armed flag before the counter is enabled, and cleared
 * only after it is disabled (pmu_arm/pmu_disarm). An interrupt on the
 * PMU's PPI with PMOVSSET.C set is always the counter's and is claimed,
 * armed or not: nothing else raises that PPI (unlike x86's shared NMI),
 * so an overflow whose interrupt lands after disarm is acknowledged, not
 * panicked on. One with no overflow recorded is nobody's: trap.c panics
 * and names it. */
#include "arch/arm64/arm64.h"
#include "arch/arm64/gic.h"
#include "hal/cpu.h"
#include "hal/pmu.h"
#include "kernel/once.h"
#include "lib/printf.h"

#define PMCR_E          (1ull << 0)     /* enable (all counters, with PMCNTENSET) */
#define PMCR_P          (1ull << 1)     /* reset event counters (write) */
#define PMCR_C          (1ull << 2)     /* reset the cycle counter (write) */
#define PMCR_D          (1ull << 3)     /* count every 64th cycle: must be clear */
#define PMCR_LC         (1ull << 6)     /* cycle counter overflows at 64 bits, not 32 */
#define PMCR_N(v)       ((unsigned)((v) >> 11) & 0x1f)
#define CCNT            (1ull << 31)    /* bit C of PMCNTEN*, PMINTEN*, PMOVS*: the cycle counter */

#define PROBE_BUDGET_US 10
#define PERIOD_US       1000
#define SOURCE_NAME     "pmu/pseudo-nmi arm64 pmuv3 cycles"
#define WHAT            "PMUv3 cycle counter"


static enum pmu_mode pmu_mode = PMU_MODE_AUTO;
static unsigned ppi;                  /* the PMU's PPI, 0: none in the tree */
static unsigned pmuver;               /* ID_AA64DFR0_EL1.PMUVer as read */
static bool probe_ran;                /* the counter was actually tried */
static bool usable;                   /* the probe's answer: sample on it */
static uint64_t probe_delta, probe_us;
static uint64_t rate;                 /* counter increments per us, measured */
static uint64_t period;               /* counter increments between overflows */
static char note[160];
static int probe_state;               /* kernel/once.h: published after the probe */
static bool cpu_armed[MAX_CPUS];
/* Per CPU, written only by that CPU's pseudo-NMI: overflows claimed, and
 * of them those that arrived after disarm (lscpu shows the sums). */
static uint32_t cpu_claims[MAX_CPUS], cpu_stale[MAX_CPUS];

/* The interrupt that reads cpu_armed runs on this same CPU: program order
 * is all it needs, so a compiler barrier suffices. */
static inline void barrier(void)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static unsigned this_cpu_idx(void)
{
    unsigned c = cpu_index();
    return c < MAX_CPUS ? c : 0;
}

/* ID_AA64DFR0_EL1.PMUVer: 0 none, 0xf IMPLEMENTATION DEFINED (not PMUv3). */
static bool pmuver_is_v3(unsigned v)
{
    return v != 0 && v != 0xf;
}

void pmu_set_ppi(unsigned intid)
{
    ppi = intid >= 16 && intid < 32 ? intid : 0;
    gic_set_nmi_ppi(ppi);
}

void pmu_set_mode(enum pmu_mode mode)
{
    if (mode == PMU_MODE_AUTO || mode == PMU_MODE_OFF || mode == PMU_MODE_ASSUME)
        pmu_mode = mode;
}

/* ---- the probe ---- */

/* One reading of the counter, bracketed by two of the generic timer and
 * dated at their midpoint. A bracket wider than 1 us means something came
 * between the reads (under TCG: the host descheduled this vCPU thread)
 * and is read again, a bounded number of times, so one such pause cannot
 * skew the rate and with it the period. */
static void probe_read(uint64_t per_us, uint64_t *count, uint64_t *when)
{
    uint64_t a, b;
    for (int i = 0; i < 4; i++) {
        a = cycles_now();
        *count = pmu_reg_read(PMREG_PMCCNTR);
        b = cycles_now();
        if (b - a <= per_us)
            break;
    }
    *when = a + (b - a) / 2;
}

/* Count without the interrupt, for PROBE_BUDGET_US of generic timer, with
 * interrupts off (both clocks read on this CPU, nothing in between). The
 * bound is a duration, not a number of reads. Moved means the counter
 * left the 0 it was set to; the rate is taken between the first and the
 * last reading, not from the enable: under TCG the first pass through
 * this code is translated while the counter already runs. */
static bool pmu_try(void)
{
    uint64_t per_us = cycles_per_us();
    uint64_t budget = per_us * PROBE_BUDGET_US;
    unsigned long flags = irq_save();
    uint64_t pmcr = pmu_reg_read(PMREG_PMCR);
    pmu_reg_write(PMREG_PMCNTENCLR, CCNT);
    pmu_reg_write(PMREG_PMINTENCLR, CCNT);
    pmu_reg_write(PMREG_PMCCFILTR, 0);
    pmu_reg_write(PMREG_PMCR, (pmcr & ~(PMCR_D | PMCR_C | PMCR_P)) | PMCR_LC | PMCR_E);
    pmu_reg_write(PMREG_PMCCNTR, 0);
    pmu_reg_write(PMREG_PMCNTENSET, CCNT);
    isb();
    uint64_t c0, start, v, now;
    probe_read(per_us, &c0, &start);
    do
        probe_read(per_us, &v, &now);
    while (now - start < budget);
    /* Stopped is how it was found: nothing else in Sonde uses the PMU. */
    pmu_reg_write(PMREG_PMCNTENCLR, CCNT);
    pmu_reg_write(PMREG_PMCR, pmcr & ~(PMCR_C | PMCR_P));
    isb();
    irq_restore(flags);
    uint64_t elapsed = now - start;
    probe_delta = v - c0;
    probe_us = elapsed / per_us;
    rate = elapsed ? (v - c0) * per_us / elapsed : 0;
    return v != 0;
}

static void pmu_probe_run(void)
{
    pmuver = (unsigned)(pmu_reg_read(PMREG_ID_AA64DFR0) >> 8) & 0xf;
    bool claimed = pmuver_is_v3(pmuver) || pmu_mode == PMU_MODE_ASSUME;
    const char *how = pmuver_is_v3(pmuver) ? "claimed by ID_AA64DFR0_EL1" : "assumed (pmu=assume)";
    if (!claimed)
        return;
    if (pmu_mode == PMU_MODE_OFF) {
        fmt_snprintf(note, sizeof note, "pmu: " WHAT " not used (pmu=off): tick only");
        return;
    }
    probe_ran = true;
    if (!pmu_try()) {
        fmt_snprintf(note, sizeof note, "pmu: " WHAT " %s but did not count in %d us: tick only",
                     how, PROBE_BUDGET_US);
        return;
    }
    /* At least one increment per us, or a 1 ms period is not a period. */
    if (rate == 0) {
        fmt_snprintf(note, sizeof note, "pmu: " WHAT " %s counted only %llu in %d us: too slow, tick only",
                     how, (unsigned long long)probe_delta, PROBE_BUDGET_US);
        return;
    }
    if (!ppi) {
        fmt_snprintf(note, sizeof note, "pmu: " WHAT " counts, but the device tree names no PMU "
                     "interrupt (/pmu): tick only");
        return;
    }
    period = rate * PERIOD_US;
    usable = true;
}

static bool pmu_probe_done(void)
{
    return once_done(&probe_state);
}

bool pmu_probe(void)
{
    /* Every CPU arms on the strength of this answer: once() publishes it
     * only after everything it depends on is written; a CPU that asks
     * while another probes waits the ~10 us out. */
    once(&probe_state, pmu_probe_run);
    return usable;
}

/* After the probe published, and only then: until it did, the PMU's
 * registers may not even exist (PMUVer 0). */
static bool pmu_ready(void)
{
    return pmu_probe_done() && usable;
}

const char *pmu_source_name(void)
{
    return pmu_ready() ? SOURCE_NAME : "tick 100Hz";
}

const char *pmu_probe_note(void)
{
    if (!pmu_probe_done() || note[0] == 0)
        return NULL;
    return note;
}

/* ---- arming, per CPU (its tick, interrupts off; the pseudo-NMI can
 * still arrive between any two of these writes) ---- */

void pmu_arm(void)
{
    if (!pmu_ready())
        return;
    /* Flag first: the first overflow may come before the last write below
     * returns, and one that finds the flag clear is not re-armed. */
    __atomic_store_n(&cpu_armed[this_cpu_idx()], true, __ATOMIC_RELEASE);
    barrier();
    pmu_reg_write(PMREG_PMCNTENCLR, CCNT);
    pmu_reg_write(PMREG_PMINTENCLR, CCNT);
    /* A status bit left from before (an overflow claimed late, or a
     * disarm that stopped the counter after it wrapped) would raise the
     * interrupt at once and be taken for a fresh period. */
    pmu_reg_write(PMREG_PMOVSCLR, CCNT);
    pmu_reg_write(PMREG_PMCCFILTR, 0);
    uint64_t pmcr = pmu_reg_read(PMREG_PMCR) & ~(PMCR_D | PMCR_C | PMCR_P);
    pmu_reg_write(PMREG_PMCR, pmcr | PMCR_LC | PMCR_E);
    pmu_reg_write(PMREG_PMCCNTR, 0 - period);
    pmu_reg_write(PMREG_PMINTENSET, CCNT);
    gic_enable_ppi(ppi);                 /* this cpu's redistributor */
    isb();
    /* Enabled last: everything it triggers is set up by now. */
    pmu_reg_write(PMREG_PMCNTENSET, CCNT);
    isb();
}

/* The overflow status is left alone: an interrupt already raised must
 * still find PMOVSSET.C when it is taken. Disabling PMINTEN drops the
 * request, so a stopped counter raises nothing more. */
void pmu_disarm(void)
{
    if (pmu_ready()) {
        pmu_reg_write(PMREG_PMCNTENCLR, CCNT);
        pmu_reg_write(PMREG_PMINTENCLR, CCNT);
        isb();
    }
    barrier();
    /* Flag last: an overflow taken between the writes above and here is
     * re-armed by claim, harmlessly (the counter is already disabled). */
    __atomic_store_n(&cpu_armed[this_cpu_idx()], false, __ATOMIC_RELEASE);
}

bool pmu_armed(void)
{
    return __atomic_load_n(&cpu_armed[this_cpu_idx()], __ATOMIC_ACQUIRE);
}

/* The next load: one period after the wrap that was just taken, not
 * after now, so the time the interrupt took to arrive (under TCG it
 * waits on QEMU's main loop) does not stretch every period. Once more
 * than half a period has gone by, a full period from now: the missed
 * overflows collapse into this one, and a storm of back-to-back
 * interrupts cannot follow a long delay. */
static uint64_t pmu_next_load(uint64_t since_wrap)
{
    return since_wrap < period / 2 ? since_wrap - period : 0 - period;
}

/* Pseudo-NMI context: no lock, no allocation, five register accesses at
 * most, and only after the probe showed the registers are there.
 * Reload before clearing the status, as on x86: the counter, just past
 * zero, cannot wrap again in between. The isb makes the cleared status
 * (and so the dropped request) take effect before trap.c's EOI, so the
 * level-triggered PPI does not come straight back. */
bool pmu_nmi_claim(void)
{
    if (!pmu_ready())
        return false;
    if (!(pmu_reg_read(PMREG_PMOVSSET) & CCNT))
        return false;
    unsigned me = this_cpu_idx();
    if (pmu_armed())
        pmu_reg_write(PMREG_PMCCNTR, pmu_next_load(pmu_reg_read(PMREG_PMCCNTR)));
    else
        cpu_stale[me]++;
    pmu_reg_write(PMREG_PMOVSCLR, CCNT);
    isb();
    cpu_claims[me]++;
    return true;
}

/* ---- lscpu ---- */

/* ID_AA64DFR0_EL1.PMUVer, bits 11:8. */
static const char *pmuver_name(unsigned v)
{
    switch (v) {
    case 0x0: return "none";
    case 0x1: return "PMUv3";
    case 0x4: return "PMUv3 for Armv8.1";
    case 0x5: return "PMUv3 for Armv8.4";
    case 0x6: return "PMUv3 for Armv8.5";
    case 0x7: return "PMUv3 for Armv8.7";
    case 0x8: return "PMUv3 for Armv8.8";
    case 0xf: return "IMPLEMENTATION DEFINED (not PMUv3)";
    default:  return "PMUv3, later revision";
    }
}

void pmu_describe(struct printer *p)
{
    pmu_probe();              /* cached: lscpu always shows the outcome */
    if (!pmuver_is_v3(pmuver)) {
        pr_printf(p, "pmu claims:   %s (ID_AA64DFR0_EL1.PMUVer 0x%x)\n", pmuver_name(pmuver), pmuver);
    } else {
        unsigned n = PMCR_N(pmu_reg_read(PMREG_PMCR));
        pr_printf(p, "pmu claims:   %s (ID_AA64DFR0_EL1.PMUVer 0x%x), %u event counters + cycle counter (PMCR_EL0.N)\n",
                  pmuver_name(pmuver), pmuver, n);
    }
    if (pmu_mode == PMU_MODE_ASSUME)
        pr_puts(p, "pmu=assume:  acting as if PMUv3 were claimed\n");
    else if (pmu_mode == PMU_MODE_OFF)
        pr_puts(p, "pmu=off:     counter never used\n");
    if (ppi)
        pr_printf(p, "interrupt:    PPI %u (device tree /pmu), pseudo-NMI: GIC priority 0x%x, mask 0x%x\n",
                  ppi, GIC_PRIO_NMI, PMR_IRQ_OFF);
    else
        pr_puts(p, "interrupt:    none (the device tree has no /pmu interrupt)\n");
    if (probe_ran && probe_delta)
        pr_printf(p, "probe:        cycle counter moved by %llu in %llu us (%llu per us: period %llu for 1 kHz)\n",
                  (unsigned long long)probe_delta, (unsigned long long)probe_us,
                  (unsigned long long)rate, (unsigned long long)(rate * PERIOD_US));
    else if (probe_ran)
        pr_printf(p, "probe:        did not count in %d us\n", PROBE_BUDGET_US);
    else if (pmuver_is_v3(pmuver) || pmu_mode == PMU_MODE_ASSUME)
        pr_puts(p, "probe:        not run (pmu=off)\n");
    else
        pr_puts(p, "probe:        not run (no PMUv3 claimed)\n");
    if (usable) {
        uint64_t claims = 0, stale = 0;
        for (unsigned i = 0; i < MAX_CPUS; i++) {
            claims += __atomic_load_n(&cpu_claims[i], __ATOMIC_RELAXED);
            stale += __atomic_load_n(&cpu_stale[i], __ATOMIC_RELAXED);
        }
        pr_printf(p, "overflows:    %llu claimed since boot, %llu of them after disarm\n",
                  (unsigned long long)claims, (unsigned long long)stale);
    }
    pr_printf(p, "profile source: %s\n", pmu_source_name());
}

#ifdef SONDE_HOST_TEST
/* Each host test starts from a fresh boot. */
void pmu_test_reset(void)
{
    pmu_mode = PMU_MODE_AUTO;
    ppi = pmuver = 0;
    probe_ran = usable = false;
    probe_delta = probe_us = rate = period = 0;
    note[0] = 0;
    probe_state = ONCE_NOT_RUN;
    for (unsigned i = 0; i < MAX_CPUS; i++) {
        cpu_armed[i] = false;
        cpu_claims[i] = cpu_stale[i] = 0;
    }
}
#endif
