/* kernel/pmu.c: the portable PMU core (hal/pmu.h) over the backends'
 * tables of operations (arch/x86_64/pmu.c, arch/arm64/pmu.c).
 *
 * The hardware offers a counter (CPUID, ID_AA64DFR0_EL1), but that is not
 * trusted on its own: a hypervisor may offer one and swallow every write
 * to it. So the probe, once per boot, counts without the interrupt for at
 * most PMU_PROBE_BUDGET_US of cycles_now() and uses the counter only if it
 * moved; what it found is published with release ordering (kernel/once.h)
 * and every CPU arms on the strength of it.
 *
 * The per-CPU armed flag brackets the counter: set before it is enabled,
 * cleared only after it is disabled, so an overflow in flight across
 * either edge is still this counter's and is claimed.
 *
 * Every load of the counter (arm and each reload) takes a period drawn
 * uniformly within +-1/4 of the nominal one, from a per-CPU xorshift:
 * a fixed period locks step with any periodic work of the same or a
 * related period and samples the same phase of it every time; a random
 * one samples every phase. The draws are kept within half a period of
 * the nominal grid (kernel/pmu_nmi.h, pmu_period_draw), so a window of
 * n periods still holds n samples within one. Here, so that every
 * backend gets it.
 *
 * Why a quarter: the point of a work's cycle that is sampled moves by a
 * random walk, one draw a sample, whose step has a standard deviation of
 * band / sqrt(3). With +-1/16 (36 us a step at 1 ms) the walk needs some
 * 770 samples to cross a 1 ms cycle, so a 2 s profile of a two-phase loop
 * saw barely two crossings and could read 76/24 (it did, once in a dozen
 * runs); with +-1/4 (144 us) it crosses in about 50, some 40 times in 2 s,
 * and each phase reads within a few points of half. */
#define PMU_JITTER_DIV 4                /* the band: +-period / this */
#include "hal/cpu.h"
#include "hal/pmu.h"
#include "kernel/once.h"
#include "kernel/pmu_nmi.h"
#include "kernel/panic.h"
#include "kernel/timer.h"
#include "lib/printf.h"

/* TIMER_HZ is a plain decimal literal (kernel/timer.h): spelled out at
 * compile time, the name needs no buffer and is valid before the probe. */
#define PMU_STR_(x)    #x
#define PMU_STR(x)     PMU_STR_(x)
#define PMU_TICK_NAME  "tick " PMU_STR(TIMER_HZ) "Hz"

/* A reading whose two clock reads are further apart than this many us
 * was interrupted (under TCG: the host descheduled the vCPU thread). */
#define PMU_BRACKET_US    1
#define PMU_BRACKET_TRIES 4

static enum pmu_mode pmu_mode = PMU_MODE_AUTO;
static const struct pmu_ops *cand;    /* counter the hardware offers, or NULL */
static enum pmu_offer cand_how;       /* offered or assumed: the note says which */
static bool probe_ran;                /* the counter was actually tried */
static uint64_t probe_delta, probe_us;
static uint64_t rate;                 /* counter increments per us, measured */
static char note[160];
static int probe_state;               /* kernel/once.h: published after the probe */

/* The NMI's state and parameters (kernel/pmu_nmi.h). The counter in use
 * (NULL: the tick), its period and the jitter's band are set by the probe
 * before it publishes and never change after. */
struct pmu_cpu pmu_cpus[MAX_CPUS];
struct pmu_nmi_params pmu_nmi = { .jitter = true };

/* The NMI that reads pc_armed runs on this same CPU: program order is
 * all it needs, so a compiler barrier suffices. */
static inline void barrier(void)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* This CPU's, from task or tick context: a compare and a panic. (The
 * NMI checks the index itself: pmu_nmi_claim_on.) */
static struct pmu_cpu *pmu_cpu(void)
{
    unsigned idx = cpu_index_inline();
    BUG_ON(idx >= MAX_CPUS);
    return &pmu_cpus[idx];
}

void pmu_set_mode(enum pmu_mode mode)
{
    if (mode == PMU_MODE_AUTO || mode == PMU_MODE_OFF || mode == PMU_MODE_ASSUME)
        pmu_mode = mode;
}

/* ---- the probe ---- */

/* One reading of the counter, bracketed by two of the clock and dated at
 * their midpoint. A bracket wider than PMU_BRACKET_US means something came
 * between the reads and is read again, a bounded number of times, so one
 * such pause cannot skew a measured rate and with it the period. */
static void probe_sample(const struct pmu_ops *o, uint64_t per_us,
                         uint64_t *count, uint64_t *when)
{
    uint64_t a = 0, b = 0;
    for (int i = 0; i < PMU_BRACKET_TRIES; i++) {
        a = cycles_now();
        *count = o->po_probe_read();
        b = cycles_now();
        if (b - a <= per_us * PMU_BRACKET_US)
            break;
    }
    *when = a + (b - a) / 2;
}

/* Count without the interrupt, with interrupts off (both clocks read on
 * this CPU, nothing in between), bounded by a duration rather than a
 * number of reads: a loop iteration is ten cycles on one part and 140 on
 * the next. Moved means the counter left the 0 it was set to: a live one
 * has by the first read, only a swallowed one spends the budget. Where
 * the rate is wanted and the counter moved, the loop runs on to
 * PMU_RATE_BUDGET_US and the rate is taken between the first and the
 * last reading, not from the enable: under TCG the first pass through
 * this code is translated while the counter runs. Why that long: each
 * reading is dated to the clock's resolution (16 ns on QEMU virt's
 * 62.5 MHz generic timer), so over 10 us the rate was off by up to 0.3%
 * (1001 per us for QEMU's exact 1000) and a 1 s profile one sample
 * short; over 200 us, 0.016%. */
static bool pmu_try_more(const struct pmu_ops *o, uint64_t v, uint64_t spent, uint64_t per_us)
{
    if (spent < per_us * PMU_PROBE_BUDGET_US)
        return o->po_measure_rate || v == 0;
    return o->po_measure_rate && v != 0 && spent < per_us * PMU_RATE_BUDGET_US;
}

static bool pmu_try(const struct pmu_ops *o, uint64_t per_us)
{
    unsigned long flags = irq_save();
    uint64_t saved = o->po_probe_start();
    uint64_t c0, start;
    probe_sample(o, per_us, &c0, &start);
    uint64_t v = c0, now = start;
    while (pmu_try_more(o, v, now - start, per_us)) {
        cpu_relax();
        probe_sample(o, per_us, &v, &now);
    }
    o->po_probe_stop(saved);
    irq_restore(flags);
    uint64_t elapsed = now - start;
    probe_delta = o->po_measure_rate ? v - c0 : v;
    probe_us = elapsed / per_us;
    /* Rounded, not truncated: truncation would set every period short
     * by up to one count per us (0.1% at 1 GHz) and the sample rate as
     * much high. Below one count per us it stays 0: too slow (pmu_judge). */
    uint64_t scaled = (v - c0) * per_us;
    rate = elapsed && scaled >= elapsed ? (scaled + elapsed / 2) / elapsed : 0;
    return v != 0;
}

/* Why the candidate is not used goes into the note; or it is used. */
static void pmu_judge(uint64_t per_us)
{
    char how[48];
    if (cand_how == PMU_OFFER_ASSUMED)
        fmt_snprintf(how, sizeof how, "assumed (pmu=assume)");
    else
        fmt_snprintf(how, sizeof how, "claimed by %s", cand->po_offered_by);
    if (!pmu_try(cand, per_us)) {
        fmt_snprintf(note, sizeof note, "pmu: %s %s but did not count in %d us: tick only",
                     cand->po_what, how, PMU_PROBE_BUDGET_US);
        return;
    }
    /* At least one increment per us, or a 1 ms period is not a period. */
    if (cand->po_measure_rate && rate == 0) {
        fmt_snprintf(note, sizeof note, "pmu: %s %s counted only %llu in %d us: too slow, tick only",
                     cand->po_what, how, (unsigned long long)probe_delta, PMU_PROBE_BUDGET_US);
        return;
    }
    const char *why = cand->po_refuse ? cand->po_refuse() : NULL;
    if (why) {
        fmt_snprintf(note, sizeof note, "pmu: %s %s: tick only", cand->po_what, why);
        return;
    }
    uint64_t period = (cand->po_measure_rate ? rate : per_us) * PMU_PERIOD_US;
    /* With room for the jitter's +1/4 above it. */
    if (period > cand->po_max_period / (PMU_JITTER_DIV + 1) * PMU_JITTER_DIV)
        period = cand->po_max_period / (PMU_JITTER_DIV + 1) * PMU_JITTER_DIV;
    pmu_nmi.period = period;
    pmu_nmi.jit_lo = period - period / PMU_JITTER_DIV;
    pmu_nmi.jit_span = 2 * (period / PMU_JITTER_DIV) + 1;
    pmu_nmi.ops = cand;
}

static void pmu_probe_run(void)
{
    uint64_t per_us = cycles_per_us();
    ASSERT(per_us != 0);                /* hal/cpu.h: never 0 */
    bool assume = pmu_mode == PMU_MODE_ASSUME;
    for (const struct pmu_ops *const *o = pmu_backends.pb_ops; *o && !cand; o++) {
        enum pmu_offer how = (*o)->po_offer(assume);
        if (how != PMU_OFFER_NONE) {
            cand = *o;
            cand_how = how;
        }
    }
    if (!cand)
        return;
    if (pmu_mode == PMU_MODE_OFF) {
        fmt_snprintf(note, sizeof note, "pmu: %s not used (pmu=off): tick only", cand->po_what);
        return;
    }
    probe_ran = true;
    pmu_judge(per_us);
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
    return pmu_nmi.ops != NULL;
}

const char *pmu_source_name(void)
{
    if (!pmu_probe_done() || !pmu_nmi.ops)
        return PMU_TICK_NAME;
    return pmu_nmi.ops->po_name;
}

const char *pmu_probe_note(void)
{
    if (!pmu_probe_done() || note[0] == 0)
        return NULL;
    return note;
}

/* ---- the period's jitter ---- */

/* splitmix64's finaliser: a well-spread nonzero seed from the clock and
 * the CPU index, so CPUs started together still draw different periods. */
static uint64_t pmu_seed(unsigned cpu)
{
    uint64_t z = cycles_now() + (cpu + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return z ? z : 0x2545f4914f6cdd1dull;
}

/* ---- arming, per CPU ---- */

/* After the probe published, and only then: until it did, the counter's
 * registers may not even exist. */
static const struct pmu_ops *pmu_ops_ready(void)
{
    return pmu_probe_done() ? pmu_nmi.ops : NULL;
}

void pmu_arm(void)
{
    BUG_ON(irqs_enabled());
    const struct pmu_ops *o = pmu_ops_ready();
    if (!o)
        return;
    struct pmu_cpu *me = pmu_cpu();
    if (!me->pc_rng)
        me->pc_rng = pmu_seed((unsigned)(me - pmu_cpus));  /* before the flag: see pc_rng */
    /* The grid starts here: a drift left by the last run would shift
     * this one's first overflow by up to half a period. */
    me->pc_drift = 0;
    int64_t drift;
    uint64_t first = pmu_period_draw(me, &drift);
    me->pc_drift = drift;
    /* Flag first: the first overflow may come before the last write of
     * po_arm returns, and an NMI that finds the flag clear is not claimed. */
    __atomic_store_n(&me->pc_armed, true, __ATOMIC_RELEASE);
    barrier();
    o->po_arm(first);
}

void pmu_disarm(void)
{
    BUG_ON(irqs_enabled());
    const struct pmu_ops *o = pmu_ops_ready();
    if (o)
        o->po_disarm();
    barrier();
    /* Flag last: an overflow in flight when the counter stops is still this
     * profiler's and must be claimed. Cleared earlier, that NMI would look
     * like a genuine one. And once cleared, nothing of the stopped counter
     * is believed (unless po_claims_when_disarmed): on AMD without
     * PerfMonV2 the counter keeps the value it stopped at, and its clear
     * sign bit would turn a real NMI minutes later into a "sample",
     * swallowing it instead of panicking. */
    __atomic_store_n(&pmu_cpu()->pc_armed, false, __ATOMIC_RELEASE);
}

bool pmu_armed(void)
{
    return __atomic_load_n(&pmu_cpu()->pc_armed, __ATOMIC_ACQUIRE);
}

bool pmu_nmi_claim(void)
{
    return pmu_nmi_claim_on(cpu_index_inline());
}

/* pmu_nmi_claim_on's rare half: an NMI on a CPU whose flag is clear.
 * Disarmed, nothing of the counter is believed unless the backend says
 * only it raises that interrupt (po_claims_when_disarmed); then the
 * overflow is acknowledged, not reloaded (0), the draw not taken, and it
 * is counted as stale. Until the probe has published, the counter's
 * registers may not even exist. */
bool pmu_nmi_claim_disarmed(struct pmu_cpu *me)
{
    const struct pmu_ops *o = pmu_ops_ready();
    if (!o || !o->po_claims_when_disarmed || !o->po_nmi_ack(0))
        return false;
    *(volatile uint32_t *)&me->pc_claims = me->pc_claims + 1;
    *(volatile uint32_t *)&me->pc_stale = me->pc_stale + 1;
    return true;
}

void pmu_overflow_counts(uint64_t *claimed, uint64_t *stale)
{
    *claimed = *stale = 0;
    for (unsigned i = 0; i < MAX_CPUS; i++) {
        *claimed += __atomic_load_n(&pmu_cpus[i].pc_claims, __ATOMIC_RELAXED);
        *stale += __atomic_load_n(&pmu_cpus[i].pc_stale, __ATOMIC_RELAXED);
    }
}

/* ---- lscpu ---- */

static void describe_probe(struct printer *p)
{
    if (probe_ran && probe_delta) {
        pr_printf(p, "probe:        %s moved by %llu in %llu us", cand->po_counter,
                  (unsigned long long)probe_delta, (unsigned long long)probe_us);
        if (cand->po_measure_rate)
            pr_printf(p, " (%llu per us: period %llu for 1 kHz)", (unsigned long long)rate,
                      (unsigned long long)(rate * PMU_PERIOD_US));
        pr_puts(p, "\n");
    } else if (probe_ran) {
        pr_printf(p, "probe:        did not count in %d us\n", PMU_PROBE_BUDGET_US);
    } else if (cand) {
        pr_puts(p, "probe:        not run (pmu=off)\n");
    } else {
        pr_printf(p, "probe:        not run (no %s claimed)\n", pmu_backends.pb_family);
    }
}

void pmu_describe(struct printer *p)
{
    void (*describe)(struct printer *, enum pmu_describe_at) = pmu_backends.pb_describe;
    pmu_probe();              /* cached: lscpu always shows the outcome */
    pr_puts(p, "pmu claims:   ");
    describe(p, PMU_AT_OFFER);
    if (pmu_mode == PMU_MODE_ASSUME) {
        pr_puts(p, "pmu=assume:  acting as if ");
        describe(p, PMU_AT_ASSUMED);
    } else if (pmu_mode == PMU_MODE_OFF) {
        pr_puts(p, "pmu=off:     counter never used\n");
    }
    describe(p, PMU_AT_WIRING);
    describe_probe(p);
    if (pmu_nmi.ops)
        describe(p, PMU_AT_COUNTS);
    pr_printf(p, "profile source: %s\n", pmu_source_name());
}

#ifdef SONDE_HOST_TEST
void pmu_test_reset(void)
{
    pmu_mode = PMU_MODE_AUTO;
    cand = pmu_nmi.ops = NULL;
    cand_how = PMU_OFFER_NONE;
    probe_ran = false;
    probe_delta = probe_us = rate = 0;
    pmu_nmi.period = pmu_nmi.jit_lo = pmu_nmi.jit_span = 0;
    note[0] = 0;
    probe_state = ONCE_NOT_RUN;
    for (unsigned i = 0; i < MAX_CPUS; i++) {
        pmu_cpus[i] = (struct pmu_cpu){ 0 };
    }
    pmu_nmi.jitter = false;
}

void pmu_test_jitter(bool on)
{
    pmu_nmi.jitter = on;
}
#endif
