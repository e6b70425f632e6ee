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
#include "kernel/shell.h"
#include "kernel/stacktrace.h"
#include "kernel/task.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "mm/heap.h"

#define PROF_QUIESCE_MS 50      /* Stop's bound on waiting out samplers */

/* Written only by its own CPU from its own tick or NMI, except that Start
 * zeroes the counters while no run is active and no CPU is inside. */
struct prof_cpu {
    struct prof_record *pc_buf; /* never freed: see prof_alloc */
    uint32_t pc_count;          /* records written; release-published */
    uint32_t pc_from_pmu;       /* of those, taken by the counter's NMI */
    uint32_t pc_from_tick;      /* and by the tick */
    uint32_t pc_full;           /* dropped: the buffer was full */
    uint32_t pc_nested;         /* dropped: arrived inside the sampler */
    uint32_t pc_inside;         /* re-entrancy guard; Stop waits on it */
    bool pc_in_window;          /* online with a buffer at Start */
} __attribute__((aligned(64)));

static struct prof_cpu prof_cpus[MAX_CPUS];

/* One word, so the idle tick pays exactly one atomic load. PMU is set
 * once the probe said a counter is usable and never cleared (the probe's
 * answer is cached for the boot): an idle tick needs it to know there may
 * be a counter left armed to disarm. */
#define PROF_ACTIVE 1u
#define PROF_PMU    2u
static unsigned prof_state;

static unsigned prof_busy;      /* a run or report holds the profiler */
static int prof_pid = PROFILER_ALL;

/* The last run, frozen by Stop (window fields filled by Start and
 * Stop). Read and written only under the run lock. */
static bool prof_ran;
static struct prof_snapshot prof_snap;

/* ---- the sample path: tick or NMI context, interrupts off ----------- */

/* Takes one sample on this CPU. No lock, no allocation, no symbol lookup,
 * and nothing here dereferences interrupted state except through st_walk,
 * which checks every frame against the registered stacks and never
 * faults: this runs in NMI context on whatever the CPU was doing. */
static void prof_sample(const struct trap_frame *tf, bool from_tick)
{
    uint64_t c0 = cycles_now();
    unsigned cpu = cpu_index();
    if (cpu >= MAX_CPUS)
        return;
    struct prof_cpu *pc = &prof_cpus[cpu];

    /* The filter is applied here, not in the report: a filtered-out sample
     * takes no slot and is not a drop. */
    int want = __atomic_load_n(&prof_pid, __ATOMIC_RELAXED);
    int pid = task_current_pid();
    if (want != PROFILER_ALL && pid != want)
        return;

    /* Only an NMI landing inside the tick's sample can find the guard
     * taken (interrupts are off in both, and NMIs do not nest), so
     * pc_nested has a single writer and needs no atomic add. */
    if (__atomic_exchange_n(&pc->pc_inside, 1, __ATOMIC_SEQ_CST)) {
        pc->pc_nested++;
        return;
    }
    /* Recheck under the guard. With Stop's seq_cst clear-then-scan this is
     * Dekker's pattern: either Stop sees our guard and waits for us, or we
     * see the flag clear and touch nothing. A plain check before taking
     * the guard would let us write a record Stop is already reading. */
    if ((__atomic_load_n(&prof_state, __ATOMIC_SEQ_CST) & PROF_ACTIVE) &&
        pc->pc_buf) {
        uint32_t n = pc->pc_count;
        if (n >= PROFILER_BUF_RECORDS) {
            pc->pc_full++;
        } else {
            struct prof_record *r = &pc->pc_buf[n];
            r->pr_pid = pid;
            r->pr_depth = (uint8_t)st_capture_trap(tf, r->pr_frames, PROFILER_FRAMES);
            uint64_t cost = cycles_now() - c0;
            r->pr_cost = cost > UINT32_MAX ? UINT32_MAX : (uint32_t)cost;
            /* Single writer under the guard, like pc_count: which source
             * took each CPU's samples is how a CPU left on the tick during
             * a counter run shows in the report. */
            if (from_tick)
                pc->pc_from_tick++;
            else
                pc->pc_from_pmu++;
            /* The report reads pc_count with acquire: a record is whole
             * before it is counted. */
            __atomic_store_n(&pc->pc_count, n + 1, __ATOMIC_RELEASE);
        }
    }
    __atomic_store_n(&pc->pc_inside, 0, __ATOMIC_RELEASE);
}

void profiler_tick(const struct trap_frame *tf)
{
    /* The sampler's lock-free single-writer design rests on this. */
    BUG_ON(irqs_enabled());
    unsigned s = __atomic_load_n(&prof_state, __ATOMIC_ACQUIRE);
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
    prof_sample(tf, true);
}

bool profiler_nmi(const struct trap_frame *tf)
{
    BUG_ON(irqs_enabled());
    if (!pmu_nmi_claim())
        return false;           /* not ours: the caller panics */
    /* Ours even when no run is active: an overflow in flight after Stop,
     * before this CPU's tick disarmed the counter. Dropped silently. */
    if (__atomic_load_n(&prof_state, __ATOMIC_ACQUIRE) & PROF_ACTIVE)
        prof_sample(tf, false);
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

/* Buffers for every online CPU that lacks one (the first Start, or a CPU
 * that came online since). They are never freed: a CPU can be inside
 * prof_sample, past its active check, when another CPU stops the run, and
 * freeing the buffer under it would be a use-after-free for the sake of
 * reclaiming ~80 KiB per CPU. Do not add a kfree on Stop. */
static int prof_alloc(struct printer *p)
{
    unsigned n = cpu_count();
    for (unsigned i = 0; i < n && i < MAX_CPUS; i++) {
        if (!cpu_online(i) || prof_cpus[i].pc_buf)
            continue;
        size_t bytes = PROFILER_BUF_RECORDS * sizeof(struct prof_record);
        struct prof_record *b = kmalloc(bytes);
        if (!b) {
            pr_printf(p, "profile: no memory for cpu %u's sample buffer "
                      "(%zu bytes)\n", i, bytes);
            return PROFILER_ENOMEM;
        }
        /* Published to that CPU by the release store of PROF_ACTIVE. */
        prof_cpus[i].pc_buf = b;
    }
    return PROFILER_OK;
}

/* Zero the counts, fix the filter, then set the flag with release
 * ordering: a CPU that sees it active sees all of the above. */
static void prof_start(int pid)
{
    unsigned ncpus = 0;
    for (unsigned i = 0; i < MAX_CPUS; i++) {
        struct prof_cpu *pc = &prof_cpus[i];
        pc->pc_count = pc->pc_full = pc->pc_nested = 0;
        pc->pc_from_pmu = pc->pc_from_tick = 0;
        pc->pc_in_window = pc->pc_buf && i < cpu_count() && cpu_online(i);
        ncpus += pc->pc_in_window;
    }
    unsigned s = pmu_probe() ? PROF_PMU : 0;
    __atomic_store_n(&prof_pid, pid, __ATOMIC_RELAXED);
    prof_snap.ps_pid = pid;
    prof_snap.ps_ncpus = ncpus;
    prof_snap.ps_cycles = cycles_now();
    __atomic_store_n(&prof_state, s | PROF_ACTIVE, __ATOMIC_RELEASE);
}

/* Clear the flag, then wait until no CPU is inside the sampler: after
 * that nothing writes a buffer until the next Start. The wait is bounded;
 * a CPU stuck inside longer than that is broken anyway, and the report
 * still reads only records whose count was published. */
static void prof_stop(void)
{
    unsigned s = __atomic_load_n(&prof_state, __ATOMIC_RELAXED);
    __atomic_store_n(&prof_state, s & ~PROF_ACTIVE, __ATOMIC_SEQ_CST);
    prof_snap.ps_cycles = cycles_now() - prof_snap.ps_cycles;
    /* A sampler holds its guard for microseconds: spin, bounded by the
     * cycle counter (sleep_ms would round each step up to a whole tick). */
    uint64_t t0 = cycles_now(), limit = PROF_QUIESCE_MS * 1000 * cycles_per_us();
    for (unsigned i = 0; i < MAX_CPUS; i++)
        while (__atomic_load_n(&prof_cpus[i].pc_inside, __ATOMIC_SEQ_CST) &&
               cycles_now() - t0 < limit)
            cpu_relax();
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
        if (n > PROFILER_BUF_RECORDS)
            n = PROFILER_BUF_RECORDS;
        s->ps_recs[i] = pc->pc_buf;
        s->ps_count[i] = n;
        s->ps_from_pmu[i] = pc->pc_from_pmu;
        s->ps_from_tick[i] = pc->pc_from_tick;
        s->ps_in_window[i] = pc->pc_in_window;
        s->ps_dropped += pc->pc_full + pc->pc_nested;
    }
    s->ps_counter = __atomic_load_n(&prof_state, __ATOMIC_RELAXED) & PROF_PMU;
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
    /* A second `profile` (the other shell) must not zero or read the
     * buffers of a run in progress. */
    if (!prof_take()) {
        pr_puts(p, "profile: busy\n");
        return PROFILER_EBUSY;
    }
    int rc = prof_alloc(p);
    if (rc == PROFILER_OK) {
        prof_ran = true;
        prof_snap.ps_ms = ms;
        prof_start(pid);
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
        pr_puts(p, "profile: busy\n");
        return PROFILER_EBUSY;
    }
    int rc = prof_ran ? prof_report_snap(chains, PROFILER_TEXT, p) : PROFILER_EINVAL;
    if (!prof_ran)
        pr_puts(p, "profile: no run to report yet\n");
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
    } else if (pc->pc_count >= PROFILER_BUF_RECORDS) {
        pc->pc_full++;
    } else {
        struct prof_record *r = &pc->pc_buf[pc->pc_count];
        r->pr_pid = pid;
        r->pr_cost = cost;
        r->pr_depth = (uint8_t)depth;
        for (unsigned i = 0; i < depth; i++)
            r->pr_frames[i] = frames[i];
        pc->pc_count++;
        /* As if from the source the last run used. */
        if (__atomic_load_n(&prof_state, __ATOMIC_RELAXED) & PROF_PMU)
            pc->pc_from_pmu++;
        else
            pc->pc_from_tick++;
    }
    prof_give();
    return rc;
}

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
    int pid = PROFILER_ALL, fmt = PROFILER_TEXT;

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

SHELL_COMMAND(profile, "profile", PROF_USAGE "  sample; the hottest chains, or every chain folded or raw",
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
        pr_puts(p, "profile_cpus: busy\n");
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
