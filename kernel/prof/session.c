/* kernel/profiler.c: the sampling profiler behind `profile`.
 *
 * Record raw, present later. A sample (tick or NMI, interrupts off) copies
 * the pid, the interrupted pc and at most 7 return addresses from the
 * frame-pointer walk into this CPU's own preallocated buffer: no lock, no
 * allocation, no symbol lookup. The shell task that started the run sleeps
 * out the window, stops it, waits until no CPU is inside the sampler, and
 * only then freezes the records into a snapshot for profiler_report.c,
 * which folds them by call chain, resolves names and prints.
 *
 * The buffer is a single-producer, single-consumer ring: the sampler on
 * its own CPU produces, and `profile stream`'s task (kernel/profstream.c)
 * consumes while a stream runs. A windowed run never consumes, so its
 * records are simply 0..n-1 and the report reads them as it always did.
 *
 * Sources: the timer tick (100 Hz per CPU) always; the performance counter
 * (hal/pmu.h, an NMI about every ms) where the probe says one really
 * counts. Each CPU arms and disarms its own counter from its own tick,
 * because the control registers are per CPU. Once armed, a CPU's tick stops
 * sampling, so nothing is counted twice. */
#include "kernel/profiler.h"
#include "hal/cpu.h"
#include "hal/irq.h"
#include "hal/pmu.h"
#include "kernel/panic.h"
#include "kernel/profiler_internal.h"
#include "kernel/profstream.h"
#include "kernel/sched.h"
#include "kernel/shell.h"
#include "kernel/stacktrace.h"
#ifdef SONDE_HOST_TEST
/* The host tests fake the walk and the counter's claim
 * (tests/unit/fake_profiler.c). */
#define prof_capture(tf, out, max, cpu) st_capture_trap(tf, out, max)
#define prof_pmu_claim(cpu) pmu_nmi_claim()
#else
/* Both inline: a call would save and restore their registers on every
 * sample (kernel/stacktrace_inline.h, kernel/pmu_nmi.h). */
#include "kernel/pmu_nmi.h"
#include "kernel/stacktrace_inline.h"
#define prof_capture(tf, out, max, cpu) st_capture_trap_inline(tf, out, max, cpu)
#define prof_pmu_claim(cpu) pmu_nmi_claim_on(cpu)
#endif
#include "kernel/task.h"
#include "kernel/timer.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "mm/heap.h"

#define PROF_QUIESCE_MS 50      /* Stop's bound on waiting out samplers */
#define PROF_START_WAIT_MS 1000 /* Start's, for one Stop left behind */

/* Written only by its own CPU from its own tick or NMI, except that Start
 * zeroes the counters while no run is active and no CPU is inside. */
struct prof_cpu {
    struct prof_record *pc_buf; /* never freed: see prof_alloc */
    uint32_t pc_cap;            /* records pc_buf holds, a power of two;
                                   set only at Start */
    uint32_t pc_count;          /* records written (the ring's producer
                                   index); release-published */
    uint32_t pc_tail;           /* records drained (the consumer index):
                                   written only by the stream's drainer,
                                   release; 0 all through a window */
    uint32_t pc_from_tick;      /* of those, taken by the tick (the rest:
                                   by the counter's NMI, counted at freeze) */
    uint32_t pc_full;           /* dropped: the ring was full */
    uint32_t pc_nested;         /* dropped: arrived inside the sampler */
    uint32_t pc_inside;         /* re-entrancy guard; Stop waits on it */
    bool pc_in_window;          /* online with a buffer at Start */
} __attribute__((aligned(64)));

static struct prof_cpu prof_cpus[MAX_CPUS];

/* The run's flags and its pid filter, side by side so that the sampler
 * reaches both from one address. The flags are one word, so the idle tick
 * pays exactly one atomic load. PMU is set once the probe said a counter
 * is usable and never cleared (the probe's answer is cached for the
 * boot): an idle tick needs it to know there may be a counter left armed
 * to disarm. */
#define PROF_ACTIVE 1u
#define PROF_PMU    2u
static struct {
    unsigned state;             /* PROF_ACTIVE, PROF_PMU */
    int pid;                    /* PROFILER_ALL, or the one pid sampled */
} prof_run = { 0, PROFILER_ALL };

static unsigned prof_busy;      /* a run or report holds the profiler */

/* The last run, frozen by Stop (window fields filled by Start and
 * Stop). Read and written only under the run lock. */
static bool prof_ran;
static struct prof_snapshot prof_snap;

/* ---- the sample path: tick or NMI context, interrupts off ----------- */

/* Takes one sample on this CPU. No lock, no allocation, no symbol lookup,
 * and nothing here dereferences interrupted state except through the walk,
 * which checks every frame against the registered stacks and never
 * faults: this runs in NMI context on whatever the CPU was doing.
 *
 * Every atomic here is load-bearing; nothing else is atomic:
 *  - the store that takes the guard is seq_cst: it and the seq_cst load
 *    of prof_run.state are our half of Dekker's pattern with Stop (see
 *    there). On x86 the store is one xchg, the full barrier itself, and
 *    the load a plain mov; on arm64 an stlr and an ldar, which the
 *    architecture keeps in that order. The guard is tested before it is
 *    taken by a plain load, not an atomic exchange: only this CPU writes
 *    it, and an NMI that lands between the tick's test and its store
 *    runs whole (takes, samples, releases) before the tick goes on, so
 *    the two samples follow each other and neither sees the other's
 *    half-done.
 *  - the load of prof_run.state also acquires Start's release of it, so the
 *    buffer, its capacity, the zeroed counts and the pid filter read
 *    after it are this run's (the filter is read only under the guard
 *    for that reason, never before the check).
 *  - pc_count is stored with release: a report that finds Stop's bounded
 *    wait run out still reads only whole records, and the stream's drainer
 *    (prof_ring_avail's acquire) reads only whole records.
 *  - pc_tail, the drainer's consumer index, is loaded with acquire: it
 *    pairs with prof_ring_release's release store, so the drainer's copy
 *    of a slot is complete before this sampler reuses it. The ring is full
 *    when count - tail reaches the capacity: the sample is dropped and
 *    counted, never written over a record not yet drained.
 *  - the guard is released with release: Stop, seeing it clear, sees
 *    every write of the sample before it.
 * The counters (pc_nested, pc_full, pc_from_tick) have one writer, this
 * CPU under its guard or the nested NMI that found the guard taken. The
 * drop counters are also read by the stream's drainer while the run goes
 * on, so they are stored with relaxed atomics (the same plain add and
 * store on x86 and arm64; the drainer only needs a whole value). */
static inline __attribute__((always_inline))
void prof_sample(const struct trap_frame *tf, bool from_tick, unsigned cpu)
{
    uint64_t c0 = cycles_now_inline();
    struct prof_cpu *pc = &prof_cpus[cpu];

    /* Only an NMI landing inside the tick's sample can find the guard
     * taken (interrupts are off in both, and NMIs do not nest), so
     * pc_nested has a single writer and needs no atomic add. */
    if (__atomic_load_n(&pc->pc_inside, __ATOMIC_RELAXED)) {
        __atomic_store_n(&pc->pc_nested, pc->pc_nested + 1, __ATOMIC_RELAXED);
        return;
    }
    __atomic_store_n(&pc->pc_inside, 1, __ATOMIC_SEQ_CST);
    /* Recheck under the guard. With Stop's seq_cst clear-then-scan this is
     * Dekker's pattern: either Stop sees our guard and waits for us, or we
     * see the flag clear and touch nothing. A plain check before taking
     * the guard would let us write a record Stop is already reading. */
    if (__atomic_load_n(&prof_run.state, __ATOMIC_SEQ_CST) & PROF_ACTIVE) {
        /* The filter is applied here, not in the report: a filtered-out
         * sample takes no slot and is not a drop. Relaxed: the load above
         * ordered it after Start's store. */
        int want = __atomic_load_n(&prof_run.pid, __ATOMIC_RELAXED);
        int pid = task_current_pid_inline();
        /* pc_cap is 0 for a CPU that had no buffer at Start (it came
         * online since): the capacity check covers it, so the common path
         * needs no check of pc_buf, and only the full path asks which. */
        uint32_t n = pc->pc_count;
        uint32_t tail = __atomic_load_n(&pc->pc_tail, __ATOMIC_ACQUIRE);
        if (want != PROFILER_ALL && pid != want) {
            /* not this run's task: nothing recorded, nothing dropped */
        } else if (n - tail >= pc->pc_cap) {
            /* Full (unsigned: right across the indices' wrap). */
            __atomic_store_n(&pc->pc_full, pc->pc_full + (pc->pc_cap != 0), __ATOMIC_RELAXED);
        } else {
            /* pc_cap is a power of two: the slot is a mask away. */
            struct prof_record *r = &pc->pc_buf[n & (pc->pc_cap - 1)];
            r->pr_pid = pid;
            r->pr_tick = from_tick;
            r->pr_depth = (uint8_t)prof_capture(tf, r->pr_frames, PROFILER_FRAMES, cpu);
            uint64_t cost = cycles_now_inline() - c0;
            r->pr_cost = cost > UINT32_MAX ? UINT32_MAX : (uint32_t)cost;
            /* Which source took each CPU's samples is how a CPU left on
             * the tick during a counter run shows in the report. Only the
             * tick's are counted (an add of 0 or 1, no branch); the
             * counter's are the rest. */
            pc->pc_from_tick += from_tick;
            __atomic_store_n(&pc->pc_count, n + 1, __ATOMIC_RELEASE);
        }
    }
    __atomic_store_n(&pc->pc_inside, 0, __ATOMIC_RELEASE);
}

/* The tick's sample, out of line, where the NMI's is inlined: inside
 * profiler_tick, the registers the sample saves would be saved by every
 * idle tick too (x86 builds with -pg, which GCC does not shrink-wrap). */
static __attribute__((noinline)) void prof_sample_tick(const struct trap_frame *tf)
{
    /* cpu_index() < MAX_CPUS is hal/cpu.h's promise: not checked again
     * on the path of every sample. */
    prof_sample(tf, true, cpu_index_inline());
}

void profiler_tick(const struct trap_frame *tf)
{
    /* The sampler's lock-free single-writer design rests on this. */
    BUG_ON(irqs_enabled_inline());
    unsigned s = __atomic_load_n(&prof_run.state, __ATOMIC_ACQUIRE);
    if (!(s & PROF_ACTIVE)) {
        /* Stop only cleared the flag; each CPU disarms its own counter on
         * its next tick (pmu_disarm clears the armed flag after the
         * counter, so an overflow in flight is still claimed). */
        if ((s & PROF_PMU) && pmu_armed())
            pmu_disarm();
        return;
    }
    if (s & PROF_PMU) {
        if (!pmu_armed())
            pmu_arm();
        if (pmu_armed())
            return;             /* the counter samples this CPU now */
    }
    prof_sample_tick(tf);
}

bool profiler_nmi(const struct trap_frame *tf)
{
    BUG_ON(irqs_enabled_inline());
    /* The claim checks the index against MAX_CPUS (pmu_nmi_claim_on). */
    unsigned cpu = cpu_index_inline();
    if (!prof_pmu_claim(cpu))
        return false;           /* not ours: the caller panics */
    /* Ours even when no run is active: an overflow in flight after Stop,
     * before this CPU's tick disarmed the counter, is dropped silently by
     * prof_sample's check under its guard. No check of the flag here:
     * that one is needed anyway, and such NMIs are rare. */
    prof_sample(tf, false, cpu);
    return true;
}

/* ---- Start and Stop: the shell task -------------------------------- */

static bool prof_take(void)
{
    unsigned zero = 0;
    return __atomic_compare_exchange_n(&prof_busy, &zero, 1, false,
                                       __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static void prof_give(void)
{
    __atomic_store_n(&prof_busy, 0, __ATOMIC_RELEASE);
}

/* Who holds the profiler, when a stream does (prof_set_busy_note). */
static const char *prof_busy_note;

void prof_set_busy_note(const char *note)
{
    __atomic_store_n(&prof_busy_note, note, __ATOMIC_RELEASE);
}

/* "<cmd>: busy", and while a stream holds the profiler, which one. */
static void prof_say_busy(const char *cmd, struct printer *p)
{
    const char *note = __atomic_load_n(&prof_busy_note, __ATOMIC_ACQUIRE);
    if (note)
        pr_printf(p, "%s: busy (%s)\n", cmd, note);
    else
        pr_printf(p, "%s: busy\n", cmd);
}

/* Records a window of ms needs at hz samples per second: the window
 * ends at the first tick after it (up to PROF_LATE_MS late); the source
 * may run faster than planned by up to 1/8 (a core clocked above the
 * TSC that set the period; the period's +-1/4 jitter, whose mean is
 * exact and whose sum over a window strays by ~sqrt(n) / 7); a few records of
 * slack. Rounded up to a power of two so that growth is geometric: the
 * smaller buffers left behind (never freed, see prof_alloc) add up to
 * less than the one in use. At least PROF_MIN_RECS (20 KiB a CPU): a
 * short window whose end the host delays (a vCPU descheduled for a
 * while under TCG) still fits 2.5 s of ticks; with 64, a 1 ms window
 * that the host stretched to 0.8 s dropped samples. */
#define PROF_LATE_MS    (1000 / TIMER_HZ)
#define PROF_MIN_RECS   256u

uint32_t prof_records_for(unsigned ms, unsigned hz)
{
    uint64_t n = (uint64_t)hz * (ms + PROF_LATE_MS) / 1000;
    n += n / 8 + 16;
    uint32_t cap = PROF_MIN_RECS;
    while (cap < n)
        cap *= 2;
    return cap;
}

/* The fastest source this run can use: the counter's ~1 kHz
 * (PMU_PERIOD_US) where the probe found one, else the tick. */
static unsigned prof_rate_hz(bool pmu)
{
    return pmu ? 1000000u / PMU_PERIOD_US : TIMER_HZ;
}

/* A buffer for every online CPU big enough for this window, grown where
 * the one it has is smaller. Buffers only grow and are never freed, not
 * even the smaller one a bigger one replaces: a CPU can be inside
 * prof_sample, past its active check, when another CPU stops the run
 * (Stop waits for it only a bounded time), and freeing the buffer under
 * it would be a use-after-free for the sake of reclaiming memory. So the
 * buffers end up enough for the longest window at the fastest source,
 * kept for the life of the kernel. Do not add a kfree here or on Stop. */
static int prof_alloc(uint32_t want, struct printer *p)
{
    /* The sampler finds a slot with a mask (prof_sample). */
    BUG_ON(want == 0 || (want & (want - 1)) != 0);
    unsigned n = cpu_count();
    for (unsigned i = 0; i < n && i < MAX_CPUS; i++) {
        if (!cpu_online(i) || prof_cpus[i].pc_cap >= want)
            continue;
        size_t bytes = (size_t)want * sizeof(struct prof_record);
        struct prof_record *b = kmalloc(bytes);
        if (!b) {
            pr_printf(p, "profile: no memory for cpu %u's sample buffer "
                      "(%zu bytes)\n", i, bytes);
            return PROFILER_ENOMEM;
        }
        /* The last run's records move with the buffer, so a report of
         * it again (after a reserve, or a start that fails on a later
         * CPU) reads them, not fresh memory. Published to that CPU by the
         * release store of PROF_ACTIVE; no run is active, so no sampler
         * reads either field now. */
        if (prof_cpus[i].pc_buf)
            memcpy(b, prof_cpus[i].pc_buf, prof_cpus[i].pc_cap * sizeof *b);
        prof_cpus[i].pc_buf = b;
        prof_cpus[i].pc_cap = want;
    }
    return PROFILER_OK;
}

/* Zero the counts, fix the filter, then set the flag with release
 * ordering: a CPU that sees it active sees all of the above. */
static void prof_start(int pid, bool pmu)
{
    unsigned ncpus = 0;
    for (unsigned i = 0; i < MAX_CPUS; i++) {
        struct prof_cpu *pc = &prof_cpus[i];
        pc->pc_count = pc->pc_tail = pc->pc_full = pc->pc_nested = 0;
        pc->pc_from_tick = 0;
        pc->pc_in_window = pc->pc_buf && i < cpu_count() && cpu_online(i);
        ncpus += pc->pc_in_window;
    }
    unsigned s = pmu ? PROF_PMU : 0;
    __atomic_store_n(&prof_run.pid, pid, __ATOMIC_RELAXED);
    prof_snap.ps_pid = pid;
    prof_snap.ps_ncpus = ncpus;
    prof_snap.ps_cycles = cycles_now();
    __atomic_store_n(&prof_run.state, s | PROF_ACTIVE, __ATOMIC_RELEASE);
    /* This CPU arms its own counter now rather than at its next tick: a
     * window shorter than a tick (profile 1) ends at that same tick, and
     * at -smp 1 would otherwise never see the counter armed at all. The
     * other CPUs arm from their ticks (their registers are theirs). With
     * interrupts off, as pmu_arm requires: no migration in between. */
    if (s & PROF_PMU) {
        unsigned long f = irq_save();
        if (!pmu_armed())
            pmu_arm();
        irq_restore(f);
    }
}

/* Clear the flag, then wait until no CPU is inside the sampler: after
 * that nothing writes a buffer until the next Start. The wait is bounded;
 * a CPU stuck inside longer than that is broken anyway, and the report
 * still reads only records whose count was published. */
/* Wait, at most ms, until no CPU is inside the sampler. A sampler holds
 * its guard for microseconds: spin, bounded by the cycle counter
 * (sleep_ms would round each step up to a whole tick). -1 if every CPU
 * is out, else the first CPU still inside (a vCPU the host has
 * descheduled mid-sample, under TCG). */
static int prof_quiesce(unsigned ms)
{
    uint64_t t0 = cycles_now(), limit = (uint64_t)ms * 1000 * cycles_per_us();
    for (unsigned i = 0; i < MAX_CPUS; i++) {
        while (__atomic_load_n(&prof_cpus[i].pc_inside, __ATOMIC_SEQ_CST)) {
            if (cycles_now() - t0 >= limit)
                return (int)i;
            cpu_relax();
        }
    }
    return -1;
}

/* Take the profiler for a new run (windowed or a stream), or say why
 * not: a second `profile` (the other shell) must not zero or read the
 * buffers of a run in progress, and a sampler of the last run still
 * inside (Stop waits only so long) would finish its record after Start
 * zeroed the counts, and count it into this run: wait it out, or say so.
 * PROFILER_OK with the profiler held, or PROFILER_EBUSY (said to p). */
static int prof_claim(struct printer *p)
{
    if (!prof_take()) {
        prof_say_busy("profile", p);
        return PROFILER_EBUSY;
    }
    int late = prof_quiesce(PROF_START_WAIT_MS);
    if (late >= 0) {
        prof_give();
        pr_printf(p, "profile: busy (cpu %d is still finishing a sample of the last run)\n", late);
        return PROFILER_EBUSY;
    }
    return PROFILER_OK;
}

static void prof_stop(void)
{
    unsigned s = __atomic_load_n(&prof_run.state, __ATOMIC_RELAXED);
    __atomic_store_n(&prof_run.state, s & ~PROF_ACTIVE, __ATOMIC_SEQ_CST);
    prof_snap.ps_cycles = cycles_now() - prof_snap.ps_cycles;
    prof_quiesce(PROF_QUIESCE_MS);
}

/* Hand the run over: from here the report reads only the snapshot. Also
 * after an inject, which adds records under the same lock. */
static void prof_freeze(void)
{
    struct prof_snapshot *s = &prof_snap;
    s->ps_dropped = 0;
    for (unsigned i = 0; i < MAX_CPUS; i++) {
        struct prof_cpu *pc = &prof_cpus[i];
        uint32_t n = pc->pc_buf ? __atomic_load_n(&pc->pc_count, __ATOMIC_ACQUIRE) : 0;
        if (n > pc->pc_cap)
            n = pc->pc_cap;
        s->ps_recs[i] = pc->pc_buf;
        s->ps_count[i] = n;
        s->ps_from_tick[i] = pc->pc_from_tick < n ? pc->pc_from_tick : n;
        s->ps_from_pmu[i] = n - s->ps_from_tick[i];
        s->ps_in_window[i] = pc->pc_in_window;
        s->ps_dropped += pc->pc_full + pc->pc_nested;
    }
    s->ps_counter = __atomic_load_n(&prof_run.state, __ATOMIC_RELAXED) & PROF_PMU;
    s->ps_source = pmu_source_name();
    s->ps_note = pmu_probe_note();
}

static int prof_report_snap(unsigned chains, enum profiler_format fmt,
                            struct printer *p)
{
    struct prof_report_opts o = { .ro_chains = chains, .ro_format = fmt };
    prof_freeze();
    return prof_report(&prof_snap, &o, p);
}

/* ---- entry points from task context --------------------------------- */

static bool prof_window_ok(uint64_t ms, struct printer *p)
{
    if (ms >= PROFILER_WINDOW_MIN && ms <= PROFILER_WINDOW_MAX)
        return true;
    pr_printf(p, "profile: window %lu out of range (%u-%u ms)\n",
              (unsigned long)ms, PROFILER_WINDOW_MIN, PROFILER_WINDOW_MAX);
    return false;
}

static bool prof_chains_ok(uint64_t n, struct printer *p)
{
    if (n >= 1 && n <= PROFILER_CHAINS)
        return true;
    pr_printf(p, "profile: chains %lu out of range (1-%u)\n",
              (unsigned long)n, PROFILER_CHAINS);
    return false;
}

int profiler_run(unsigned ms, int pid, unsigned chains, struct printer *p)
{
    return profiler_run_format(ms, pid, chains, PROFILER_TEXT, p);
}

int profiler_run_format(unsigned ms, int pid, unsigned chains,
                        enum profiler_format fmt, struct printer *p)
{
    if (!prof_window_ok(ms, p) || !prof_chains_ok(chains, p))
        return PROFILER_EINVAL;
    if (fmt != PROFILER_TEXT && fmt != PROFILER_FOLDED && fmt != PROFILER_RAW) {
        pr_printf(p, "profile: unknown output format %d\n", (int)fmt);
        return PROFILER_EINVAL;
    }
    if (pid < PROFILER_ALL) {
        pr_printf(p, "profile: pid %d: no such task\n", pid);
        return PROFILER_EINVAL;
    }
    if (prof_claim(p) != PROFILER_OK)
        return PROFILER_EBUSY;
    /* The probe (cached after the first run) says which source, and so
     * how many records the window needs. */
    bool pmu = pmu_probe();
    int rc = prof_alloc(prof_records_for(ms, prof_rate_hz(pmu)), p);
    if (rc == PROFILER_OK) {
        prof_ran = true;
        prof_snap.ps_ms = ms;
        prof_start(pid, pmu);
        sleep_ms(ms);
        prof_stop();
        rc = prof_report_snap(chains, fmt, p);
    }
    prof_give();
    return rc;
}

int profiler_report_again(unsigned chains, struct printer *p)
{
    if (!prof_chains_ok(chains, p))
        return PROFILER_EINVAL;
    if (!prof_take()) {
        prof_say_busy("profile", p);
        return PROFILER_EBUSY;
    }
    int rc = prof_ran ? prof_report_snap(chains, PROFILER_TEXT, p) : PROFILER_EINVAL;
    if (!prof_ran)
        pr_puts(p, "profile: no run to report yet\n");
    prof_give();
    return rc;
}

int profiler_cost_permille(unsigned permille, uint32_t *cost)
{
    if (permille < 1 || permille > 1000)
        return PROFILER_EINVAL;
    if (!prof_take())
        return PROFILER_EBUSY;
    int rc = PROFILER_EINVAL;
    uint32_t total = 0;
    if (prof_ran) {
        prof_freeze();
        for (unsigned i = 0; i < MAX_CPUS; i++)
            total += prof_snap.ps_count[i];
    }
    uint32_t *a = total ? kmalloc(total * sizeof *a) : NULL;
    if (total && !a)
        rc = PROFILER_ENOMEM;
    if (a) {
        uint32_t n = 0;
        for (unsigned i = 0; i < MAX_CPUS; i++)
            for (uint32_t j = 0; j < prof_snap.ps_count[i]; j++)
                a[n++] = prof_snap.ps_recs[i][j].pr_cost;
        /* Nearest rank: the smallest cost at or above permille of them. */
        uint32_t rank = (uint32_t)(((uint64_t)total * permille + 999) / 1000);
        *cost = prof_select(a, total, rank - 1);
        kfree(a);
        rc = PROFILER_OK;
    }
    prof_give();
    return rc;
}

int profiler_reserve(uint32_t records, struct printer *p)
{
    if (records == 0 || records > PROFILER_RESERVE_MAX) {
        pr_printf(p, "profile: reserve %u out of range (1-%u records)\n",
                  records, PROFILER_RESERVE_MAX);
        return PROFILER_EINVAL;
    }
    if (!prof_take()) {
        prof_say_busy("profile", p);
        return PROFILER_EBUSY;
    }
    uint32_t cap = PROF_MIN_RECS;
    while (cap < records)
        cap *= 2;
    int rc = prof_alloc(cap, p);
    prof_give();
    return rc;
}

int profiler_inject(unsigned cpu, int pid, const uintptr_t *frames,
                    unsigned depth, uint32_t cost)
{
    if (cpu >= MAX_CPUS || depth < 1 || depth > PROFILER_FRAMES)
        return PROFILER_EINVAL;
    if (!prof_take())
        return PROFILER_EBUSY;
    struct prof_cpu *pc = &prof_cpus[cpu];
    int rc = PROFILER_OK;
    if (!pc->pc_buf) {
        rc = PROFILER_EINVAL;
    } else if (pc->pc_count >= pc->pc_cap) {
        pc->pc_full++;
    } else {
        struct prof_record *r = &pc->pc_buf[pc->pc_count];
        r->pr_pid = pid;
        r->pr_cost = cost;
        r->pr_depth = (uint8_t)depth;
        for (unsigned i = 0; i < depth; i++)
            r->pr_frames[i] = frames[i];
        pc->pc_count++;
        /* As if from the source the last run used (the counter's are
         * the records the tick did not take). */
        if (!(__atomic_load_n(&prof_run.state, __ATOMIC_RELAXED) & PROF_PMU))
            pc->pc_from_tick++;
    }
    prof_give();
    return rc;
}

/* ---- the stream's side of the rings (profiler_internal.h) ----------- */

int prof_stream_begin(int pid, unsigned drain_ms, bool *pmu, struct printer *p)
{
    if (prof_claim(p) != PROFILER_OK)
        return PROFILER_EBUSY;
    *pmu = pmu_probe();
    uint32_t want = prof_records_for(4 * drain_ms, prof_rate_hz(*pmu));
    int rc = prof_alloc(want < PROF_STREAM_MIN_RECS ? PROF_STREAM_MIN_RECS : want, p);
    if (rc != PROFILER_OK) {
        prof_give();
        return rc;
    }
    /* The rings are about to wrap: what they hold is no window's any more. */
    prof_ran = false;
    prof_start(pid, *pmu);
    return PROFILER_OK;
}

void prof_stream_stop(void)
{
    prof_stop();
}

void prof_stream_end(void)
{
    prof_set_busy_note(NULL);
    prof_give();
}

bool prof_ring_in_stream(unsigned cpu)
{
    return cpu < MAX_CPUS && prof_cpus[cpu].pc_in_window;
}

uint32_t prof_ring_cap(unsigned cpu)
{
    return prof_cpus[cpu].pc_cap;
}

/* Acquire: pairs with the sampler's release of pc_count, so every record
 * counted is whole. The tail is the drainer's own: a plain load. */
uint32_t prof_ring_avail(unsigned cpu, uint32_t *first)
{
    struct prof_cpu *pc = &prof_cpus[cpu];
    uint32_t head = __atomic_load_n(&pc->pc_count, __ATOMIC_ACQUIRE);
    *first = pc->pc_tail;
    uint32_t n = head - pc->pc_tail;
    /* The sampler never lets head pass tail + cap (it drops instead); a
     * larger difference would mean the ring's invariant broke. */
    BUG_ON(n > pc->pc_cap);
    return n;
}

const struct prof_record *prof_ring_at(unsigned cpu, uint32_t idx)
{
    struct prof_cpu *pc = &prof_cpus[cpu];
    return &pc->pc_buf[idx & (pc->pc_cap - 1)];
}

/* Release: the copies of the slots before upto are done before the
 * sampler (its acquire of pc_tail) may write them again. */
void prof_ring_release(unsigned cpu, uint32_t upto)
{
    __atomic_store_n(&prof_cpus[cpu].pc_tail, upto, __ATOMIC_RELEASE);
}

uint32_t prof_ring_drops(unsigned cpu)
{
    struct prof_cpu *pc = &prof_cpus[cpu];
    return __atomic_load_n(&pc->pc_full, __ATOMIC_RELAXED) +
           __atomic_load_n(&pc->pc_nested, __ATOMIC_RELAXED);
}

#ifdef SONDE_HOST_TEST
/* Forget every buffer, as at boot, so that each test sizes its own. Only
 * a host test may free them: no sampler can be inside here. */
void profiler_test_reset(void)
{
    for (unsigned i = 0; i < MAX_CPUS; i++) {
        kfree(prof_cpus[i].pc_buf);
        prof_cpus[i].pc_buf = NULL;
        prof_cpus[i].pc_cap = 0;
        prof_cpus[i].pc_count = 0;
        prof_cpus[i].pc_tail = 0;
    }
    prof_ran = false;
}

void profiler_test_ring_at(unsigned cpu, uint32_t idx)
{
    prof_cpus[cpu].pc_count = prof_cpus[cpu].pc_tail = idx;
}

void profiler_test_set_inside(unsigned cpu, bool inside)
{
    __atomic_store_n(&prof_cpus[cpu].pc_inside, inside ? 1u : 0u, __ATOMIC_SEQ_CST);
}
#endif

/* ---- the shell command ---------------------------------------------- */

static bool prof_is_all(const char *s)
{
    return s[0] == 'a' && s[1] == 'l' && s[2] == 'l' && s[3] == '\0';
}

/* PROFILER_FOLDED or PROFILER_RAW for the output words, else -1. */
static int prof_format_word(const char *s)
{
    if (strcmp(s, "folded") == 0)
        return PROFILER_FOLDED;
    if (strcmp(s, "raw") == 0)
        return PROFILER_RAW;
    return -1;
}

#define PROF_USAGE "profile [ms] [pid|all] [chains|folded|raw]"

/* profile [ms] [pid|all] [chains|folded|raw]: positional, every argument
 * checked before anything starts, in order, and the first bad one named.
 * An output word (folded, raw) takes the chain count's place, and may
 * also come early, in place of the window or the pid, which then take
 * their defaults: `profile raw` is `profile 1000 all raw`, `profile 500
 * folded` is `profile 500 all folded`. It is always the last argument,
 * so no word means two things. */
static int cmd_profile(int argc, char **argv, struct printer *p)
{
    uint64_t ms = PROFILER_WINDOW_DEF, chains = PROFILER_CHAINS_DEF, v;
    int pid = PROFILER_ALL, fmt = PROFILER_TEXT, rc;

    /* stream, stop, keepalive, status: kernel/profstream.c's. */
    if (profstream_command(argc, argv, p, &rc))
        return rc;

    if (argc > 4) {
        pr_puts(p, "profile: too many arguments (usage: " PROF_USAGE ")\n");
        return 1;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int f = prof_format_word(a);
        if (f >= 0) {
            if (i != argc - 1) {
                pr_printf(p, "profile: '%s' must be the last argument "
                          "(usage: " PROF_USAGE ")\n", a);
                return 1;
            }
            fmt = f;
        } else if (i == 1) {
            if (!parse_u64(a, &ms)) {
                pr_printf(p, "profile: '%s' is not a window (%u-%u ms), "
                          "folded or raw\n", a, PROFILER_WINDOW_MIN,
                          PROFILER_WINDOW_MAX);
                return 1;
            }
            if (!prof_window_ok(ms, p))
                return 1;
        } else if (i == 2) {
            if (prof_is_all(a))
                continue;
            if (!parse_u64(a, &v)) {
                pr_printf(p, "profile: '%s' is not a pid, all, folded or "
                          "raw\n", a);
                return 1;
            }
            if (v > INT32_MAX || !task_exists((int)v)) {
                pr_printf(p, "profile: pid %lu: no such task\n", (unsigned long)v);
                return 1;
            }
            pid = (int)v;
        } else {
            if (!parse_u64(a, &chains)) {
                pr_printf(p, "profile: '%s' is not a chain count (1-%u), "
                          "folded or raw\n", a, PROFILER_CHAINS);
                return 1;
            }
            if (!prof_chains_ok(chains, p))
                return 1;
        }
    }
    return profiler_run_format((unsigned)ms, pid, (unsigned)chains,
                               (enum profiler_format)fmt, p) ? 1 : 0;
}

SHELL_COMMAND(profile, "profile", PROF_USAGE "  sample; the hottest chains, or every chain folded or raw"
              " (also: profile stream <port> [ms|0] [pid|all], stop, keepalive <id>, status)",
              cmd_profile);

/* profile_cpus: which source took each CPU's samples in the last run (the
 * report prints the same line itself only when the sources were mixed). */
static int cmd_profile_cpus(int argc, char **argv, struct printer *p)
{
    if (argc != 1) {
        pr_puts(p, "profile_cpus: takes no arguments\n");
        return 1;
    }
    if (!prof_take()) {
        prof_say_busy("profile_cpus", p);
        return 1;
    }
    int rc = 1;
    if (prof_ran) {
        prof_freeze();
        prof_print_sources(&prof_snap, p);
        rc = 0;
    } else {
        pr_puts(p, "profile_cpus: no run to report yet\n");
    }
    prof_give();
    return rc;
}

SHELL_COMMAND(profile_cpus, "profile_cpus", "profile_cpus  the last profile's samples per cpu, by source",
              cmd_profile_cpus);
