// LINK: kernel/prof/sample.c kernel/prof/trace.c kernel/prof/trace_hooks.c kernel/prof/ring.c kernel/prof/session.c kernel/prof/offcpu.c kernel/prof/offreport.c kernel/prof/wall.c kernel/prof/stream.c kernel/prof/stream_encode.c kernel/prof/report.c kernel/prof/lockreport.c kernel/prof/export.c kernel/prof/fold.c kernel/prof/fold_order.c kernel/prof/quantile.c kernel/prof/fold_index.c kernel/cmd/profile.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c lib/sha256.c kernel/symtab.c tests/unit/fake_profiler.c kernel/stacks.c kernel/stacktrace.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c lib/printf.c lib/parse.c uapi/profile_raw.c kernel/cmd/profile_heap.c kernel/prof/heapview.c mm/heapprof.c tests/unit/fake_heap_table.c kernel/cmd/profile_stream.c uapi/stream_ctl.c kernel/cmd/profile_say.c kernel/irqname.c
/* tests/unit/test_prof_session.c: run control (kernel/prof/session.c) over
 * the real sampler and rings, asserting on what a run leaves and what the
 * session's calls return, never on a report's words: which source took
 * each cpu's records (the rings' records themselves), the drops, inject
 * (prof_inject) and report again, Start (busy, a late sampler, a CPU
 * online later, its own counter armed at once), ring sizing, the cost
 * quantiles and reserve. What the report prints of all this is
 * test_prof_report.c's; the messages a user reads, test_cmd_profile.c's. */
#include "test.h"
#include "fake_hal.h"
#include "fake_profiler.h"
#include <stdlib.h>

#include "hal/cpu.h"
#include "hal/irq.h"
#include "kernel/prof/ring.h"
#include "kernel/prof/sample.h"
#include "kernel/prof/session.h"
#include "lib/printf.h"

/* ---- what a run left in the rings ------------------------------------ */

/* A windowed run through the session (its report goes to out, unread). */
static int run(unsigned ms)
{
    buf_printer_init(&bp, out, sizeof out);
    struct prof_window_spec ws = { .ws_kind = PROF_KIND_CPU, .ws_ms = ms, .ws_pid = PROF_ALL,
                                   .ws_chains = 8, .ws_format = PROF_TEXT };
    return prof_window_run(&ws, &bp.pr, NULL);
}

/* cpu c's CPU records as the last run left them (nothing drains a
 * window's rings: its records are 0..n-1), those the tick took (tick)
 * or the counter's NMI (!tick). */
static uint32_t recs_by(unsigned c, bool tick)
{
    uint32_t first, n = prof_ring_avail(c, &first), k = 0;
    CHECK_EQ(first, 0);
    for (uint32_t i = 0; i < n; i++) {
        const struct prof_record *r = prof_ring_at(c, i);
        k += r->pr_kind == PROF_KIND_CPU && r->pr_tick == tick;
    }
    return k;
}

static uint32_t recs(unsigned c)
{
    uint32_t first;
    return prof_ring_avail(c, &first);
}

static uint32_t drops_all(void)
{
    uint32_t d = 0;
    for (unsigned c = 0; c < MAX_CPUS; c++)
        d += prof_ring_drops(c);
    return d;
}

/* ---- which source took each cpu's samples ------------------------------ */


TEST(session_sources_per_cpu)
{
    reset();
    pmu_usable = true;
    pmu_claim = true;
    pmu_name = "pmu/nmi intel fixed-ctr1";
    arm_fails = 1u << 1;
    window_fn = fake_win_mixed;
    CHECK_EQ(run(10), PROF_OK);
    CHECK_EQ(recs(0), 3);
    CHECK_EQ(recs_by(0, false), 3);             /* the counter's */
    for (uint32_t i = 0; i < 3; i++)
        CHECK_EQ(prof_ring_at(0, i)->pr_frames[0], 0x3002);
    CHECK_EQ(recs(1), 2);
    CHECK_EQ(recs_by(1, true), 2);              /* the tick's */
    CHECK_EQ(prof_ring_at(1, 0)->pr_frames[0], 0x3001);
    CHECK_EQ(prof_ring_at(1, 1)->pr_frames[0], 0x3003);
    CHECK_EQ(prof_cpus[0].pc_from_tick, 0);
    CHECK_EQ(prof_cpus[1].pc_from_tick, 2);
    CHECK_EQ(recs(2) + recs(3), 0);
    CHECK(prof_ring_in_window(2) && prof_ring_in_window(3));
    CHECK_EQ(drops_all(), 0);
    CHECK(pmu_cpus[0].pc_armed && !pmu_cpus[1].pc_armed);
    /* profile_cpus answers from the last run (its words:
     * test_prof_report.c); a run must exist. */
    buf_printer_init(&bp, out, sizeof out);
    struct prof_err e;
    CHECK_EQ(prof_print_last_sources(&bp.pr, &e), PROF_OK);
    prof_test_reset();
    buf_printer_init(&bp, out, sizeof out);
    CHECK_EQ(prof_print_last_sources(&bp.pr, &e), PROF_EINVAL);
    CHECK_EQ(e.pe_why, PROF_NOT_NO_RUN);
}

/* Injected records take the last run's source: the tick's after a tick
 * run, the counter's after a counter run. */
TEST(session_inject_takes_the_last_runs_source)
{
    reset();
    window_fn = win_span;
    CHECK_EQ(run(10), PROF_OK);
    uintptr_t f[1] = { 0x3000 };
    CHECK_EQ(prof_inject(3, 5, f, 1, 40), PROF_OK);
    CHECK_EQ(recs(3), 1);
    CHECK_EQ(recs_by(3, true), 1);
    reset();
    pmu_usable = true;
    window_fn = win_counter;
    CHECK_EQ(run(10), PROF_OK);
    CHECK_EQ(prof_inject(3, 5, f, 1, 40), PROF_OK);
    CHECK_EQ(recs_by(3, false), 1);
}

/* ---- inject and report_again (the bench's hooks) -------------------- */

TEST(session_inject_fills_and_drops)
{
    reset();
    CHECK_EQ(run(1), PROF_OK);           /* fresh counts */
    buf_printer_init(&bp, out, sizeof out);
    CHECK_EQ(prof_session_reserve(1024, NULL), PROF_OK);
    uintptr_t f[3] = { 0x3010, 0x2044, 0x11b2 };
    for (int i = 0; i < 1025; i++)
        CHECK_EQ(prof_inject(3, 5, f, 3, 40), PROF_OK);
    CHECK_EQ(prof_inject(3, 5, f, 0, 40), PROF_EINVAL);
    CHECK_EQ(prof_inject(3, 5, f, 9, 40), PROF_EINVAL);
    CHECK_EQ(prof_inject(40, 5, f, 3, 40), PROF_EINVAL);   /* no buffer */
    CHECK_EQ(prof_inject(MAX_CPUS, 5, f, 3, 40), PROF_EINVAL);
    CHECK_EQ(recs(3), 1024);
    CHECK_EQ(prof_ring_drops(3), 1);
    const struct prof_record *r = prof_ring_at(3, 1023);
    CHECK_EQ(r->pr_pid, 5);
    CHECK_EQ(r->pr_depth, 3);
    CHECK_EQ(r->pr_cost, 40);
    CHECK_EQ(r->pr_frames[0], 0x3010);
    CHECK_EQ(r->pr_frames[2], 0x11b2);
    /* Report again reads the rings as they stand, and times itself. */
    buf_printer_init(&bp, out, sizeof out);
    uint64_t before = fake_cycles;
    CHECK_EQ(prof_report_again(1, &bp.pr, NULL), PROF_OK);
    CHECK(prof_report_cycles() > 0);
    CHECK(prof_report_cycles() < fake_cycles - before);
    CHECK_EQ(recs(3), 1024);             /* and leaves them */
}

/* Drops are the records that did not fit, per cpu, exactly: a full
 * ring's overflow and a nested sample alike. */
TEST(session_drops_exact_when_rings_fill)
{
    reset();
    pmu_claim = true;
    window_fn = win_nested;             /* cpu 2: 1 + 4 samples, 1 nested drop */
    CHECK_EQ(run(1), PROF_OK);
    CHECK_EQ(recs(2), 1 + PROF_DEFER);
    CHECK_EQ(prof_ring_drops(2), 1);
    CHECK_EQ(prof_cpus[2].pc_nested, 1);
    buf_printer_init(&bp, out, sizeof out);
    CHECK_EQ(prof_session_reserve(1000, NULL), PROF_OK);    /* 1024: a power of two */
    CHECK_EQ(prof_ring_cap(0), 1024);
    uintptr_t f[2] = { 0x3010, 0x2044 };
    for (int i = 0; i < 1024 + 37; i++)
        CHECK_EQ(prof_inject(0, 5, f, 2, 40), PROF_OK);
    for (int i = 0; i < 1023 + 5; i++)
        CHECK_EQ(prof_inject(2, 5, f, 2, 40), PROF_OK);
    CHECK_EQ(recs(0), 1024);
    CHECK_EQ(prof_ring_drops(0), 37);
    CHECK_EQ(recs(2), 1024);
    CHECK_EQ(prof_ring_drops(2), 1 + 5 + PROF_DEFER);
    CHECK_EQ(drops_all(), 43 + PROF_DEFER);
    /* The nested drop's cpu kept its one sample first, in its place. */
    CHECK_EQ(prof_ring_at(2, 0)->pr_frames[0], 0x2000);
}

/* ---- Start: busy, buffers ------------------------------------------- */

static int busy_rc;
static struct prof_err busy_err;
static void win_busy(void)
{
    tick(0, 5, 0x3000, NULL);
    struct buf_printer b2;
    char o[256];
    buf_printer_init(&b2, o, sizeof o);
    struct prof_window_spec ws = { .ws_kind = PROF_KIND_CPU, .ws_ms = 1, .ws_pid = PROF_ALL,
                                   .ws_chains = 8, .ws_format = PROF_TEXT };
    busy_rc = prof_window_run(&ws, &b2.pr, &busy_err);
    tick(1, 5, 0x3000, NULL);
}

TEST(start_second_run_is_busy)
{
    reset();
    unsigned s0 = sleeps;
    window_fn = win_busy;
    CHECK_EQ(run(100), PROF_OK);
    CHECK_EQ(busy_rc, PROF_EBUSY);
    CHECK_EQ(busy_err.pe_why, PROF_NOT_BUSY);
    CHECK_EQ(sleeps - s0, 1);            /* the second run slept no window */
    CHECK_EQ(recs(0) + recs(1), 2);      /* and left the first one's alone */
    CHECK_EQ(drops_all(), 0);
    /* and the profiler is free again afterwards */
    CHECK_EQ(run(1), PROF_OK);
}

static void win_one(void) { tick(0, 5, 0x3000, NULL); }

/* A sampler of the last run still inside its sample (Stop waits 50 ms at
 * most) would count its record into the next run once Start had zeroed
 * the counts: Start waits it out, bounded, and says busy, leaving the
 * last run's records as they were. */
TEST(start_waits_out_a_late_sampler_or_says_busy)
{
    reset();
    window_fn = win_one;
    CHECK_EQ(run(10), PROF_OK);
    prof_ring_test_set_inside(2, true);
    unsigned s0 = sleeps;
    CHECK_EQ(run(10), PROF_EBUSY);
    CHECK_EQ(sleeps, s0);                        /* started nothing */
    CHECK_EQ(recs(0), 1);                        /* the last run's, untouched */
    prof_ring_test_set_inside(2, false);
    CHECK_EQ(run(10), PROF_OK);                  /* and the profiler is usable again */
    CHECK_EQ(recs(0), 0);                        /* a fresh run: nothing ticked */
}

static void win_cpu5(void) { tick(5, 5, 0x3000, NULL); tick(4, 5, 0x3000, NULL); }

TEST(start_buffer_for_cpu_online_later)
{
    reset();
    CHECK_EQ(run(10), PROF_OK);          /* cpus 0-3 have buffers */
    fake_ncpus = 6;
    fake_online = 0x2f;                  /* cpu 5 came online; cpu 4 is not */
    unsigned s0 = sleeps;
    kmalloc_fail = 1;
    CHECK_EQ(run(10), PROF_ENOMEM);
    CHECK_EQ(sleeps, s0);                /* started nothing */
    CHECK_EQ(prof_ring_cap(5), 0);
    window_fn = win_cpu5;
    CHECK_EQ(run(10), PROF_OK);
    CHECK(prof_ring_in_window(5));
    CHECK_EQ(recs(5), 1);
    /* cpu 4 has no buffer: its tick records nothing (and is no drop) */
    CHECK(!prof_ring_in_window(4));
    CHECK_EQ(prof_ring_cap(4), 0);
    CHECK_EQ(recs(4), 0);
    CHECK_EQ(drops_all(), 0);
}

static bool armed_in_window;
static void win_look(void) { armed_in_window = pmu_cpus[2].pc_armed; }

/* Start arms the starting CPU's counter at once (a 1 ms window ends at
 * the next tick, which would otherwise be the one that arms it), and no
 * other CPU's: their registers are their own, armed from their ticks. */
TEST(start_arms_its_own_cpu_at_once)
{
    reset();
    pmu_usable = true;
    pmu_name = "pmu/nmi intel fixed-ctr1";
    fake_cpu = 2;
    window_fn = win_look;
    armed_in_window = false;
    CHECK_EQ(run(1), PROF_OK);
    CHECK(armed_in_window);
    CHECK_EQ(arms, 1);
    CHECK(!pmu_cpus[0].pc_armed && !pmu_cpus[1].pc_armed && !pmu_cpus[3].pc_armed);
    CHECK_EQ(fake_irq_depth, 0);         /* interrupts back on */
    /* On the tick only, nothing is armed. */
    reset();
    fake_cpu = 2;
    CHECK_EQ(run(1), PROF_OK);
    CHECK_EQ(arms, 0);
}

/* ---- ring sizing ---------------------------------------------------- */

TEST(sizing_window_at_rate_with_margin)
{
    /* The longest window on each source: ~2000 and ~200 samples. */
    CHECK_EQ(prof_ring_records_for(2000, 1000), 4096);
    CHECK_EQ(prof_ring_records_for(2000, 100), 256);
    CHECK_EQ(prof_ring_records_for(1, 100), 256);
    for (unsigned hz = 100; hz <= 1000; hz += 900)
        for (unsigned ms = 1; ms <= 2000; ms++) {
            uint32_t n = prof_ring_records_for(ms, hz);
            uint64_t late = (uint64_t)hz * (ms + 10) / 1000;   /* one tick late */
            CHECK(n >= late + late / 8 + 16);
            CHECK((n & (n - 1)) == 0);
            CHECK(n >= prof_ring_records_for(ms - 1 ? ms - 1 : 1, hz));
        }
}

static void win_counter_2000(void)
{
    for (unsigned c = 0; c < 4; c++)
        tick(c, 5, 0x3000, NULL);       /* arms */
    for (int i = 0; i < 2010; i++)      /* 2000 ms at 1 kHz, a tick late */
        for (unsigned c = 0; c < 4; c++)
            nmi(c, 5, 0x3000, NULL);
}

TEST(sizing_longest_counter_window_fits)
{
    reset();
    pmu_usable = pmu_claim = true;
    pmu_name = "pmu/nmi intel fixed-ctr1";
    window_fn = win_counter_2000;
    CHECK_EQ(run(2000), PROF_OK);
    for (unsigned c = 0; c < 4; c++) {
        CHECK_EQ(prof_ring_cap(c), 4096);
        CHECK_EQ(recs_by(c, false), 2010);
    }
    CHECK_EQ(drops_all(), 0);
}

static void win_counter_burst(void)
{
    for (unsigned c = 0; c < 2; c++)
        tick(c, 5, 0x3000, NULL);
    for (int i = 0; i < 3000; i++)
        nmi(0, 5, 0x3000, NULL);
    for (int i = 0; i < 100; i++)
        nmi(1, 5, 0x3000, NULL);
}

/* Rings only grow: a short window after a long one allocates nothing
 * and keeps the room; a source faster than the sizing planned for counts
 * what did not fit as drops. */
TEST(sizing_grows_only_and_a_faster_source_drops)
{
    reset();
    pmu_usable = pmu_claim = true;
    pmu_name = "pmu/nmi intel fixed-ctr1";
    CHECK_EQ(run(1), PROF_OK);                  /* 256 records each */
    CHECK_EQ(prof_ring_cap(0), 256);
    window_fn = win_counter_burst;
    CHECK_EQ(run(1), PROF_OK);
    CHECK_EQ(recs(0), 256);
    CHECK_EQ(prof_ring_drops(0), 3000 - 256);
    CHECK_EQ(recs(1), 100);
    CHECK_EQ(prof_ring_drops(1), 0);
    long allocs = live_allocs;
    window_fn = NULL;
    CHECK_EQ(run(2000), PROF_OK);               /* grows to 4096 */
    CHECK_EQ(live_allocs, allocs + 4);
    CHECK_EQ(prof_ring_cap(0), 4096);
    allocs = live_allocs;
    window_fn = win_counter_burst;
    CHECK_EQ(run(1), PROF_OK);                  /* keeps 4096 */
    CHECK_EQ(live_allocs, allocs);
    CHECK_EQ(recs(0), 3000);
    CHECK_EQ(recs(1), 100);
    CHECK_EQ(drops_all(), 0);
    /* The tick's longest window is smaller: nothing to grow. */
    pmu_usable = false;
    window_fn = NULL;
    CHECK_EQ(run(2000), PROF_OK);
    CHECK_EQ(live_allocs, allocs);
    CHECK_EQ(prof_ring_cap(0), 4096);
}

/* Nearest rank over every record: 1..100 injected, p50 is 50, p99 99. */
TEST(cost_permille_nearest_rank)
{
    reset();
    uint32_t c = 7;
    CHECK_EQ(prof_cost_permille(500, &c), PROF_EINVAL);   /* no run */
    CHECK_EQ(run(1), PROF_OK);
    CHECK_EQ(prof_cost_permille(500, &c), PROF_EINVAL);   /* no samples */
    room(128);
    uintptr_t f[1] = { 0x3010 };
    for (uint32_t i = 100; i >= 1; i--)
        CHECK_EQ(prof_inject(i % 3, 5, f, 1, i), PROF_OK);
    long allocs = live_allocs;
    CHECK_EQ(prof_cost_permille(500, &c), PROF_OK);
    CHECK_EQ(c, 50);
    CHECK_EQ(prof_cost_permille(990, &c), PROF_OK);
    CHECK_EQ(c, 99);
    CHECK_EQ(prof_cost_permille(1000, &c), PROF_OK);
    CHECK_EQ(c, 100);
    CHECK_EQ(prof_cost_permille(1, &c), PROF_OK);
    CHECK_EQ(c, 1);
    CHECK_EQ(prof_cost_permille(0, &c), PROF_EINVAL);
    CHECK_EQ(prof_cost_permille(1001, &c), PROF_EINVAL);
    CHECK_EQ(live_allocs, allocs);
}

/* The range's words: test_cmd_profile.c. */
TEST(reserve_checks_its_range)
{
    reset();
    buf_printer_init(&bp, out, sizeof out);
    long allocs = live_allocs;
    struct prof_err e;
    CHECK_EQ(prof_session_reserve(0, &e), PROF_EINVAL);
    CHECK_EQ(e.pe_why, PROF_NOT_RESERVE);
    CHECK_EQ(e.pe_value, 0);
    CHECK_EQ(prof_session_reserve(PROF_RESERVE_MAX + 1, &e), PROF_EINVAL);
    CHECK_EQ(e.pe_value, PROF_RESERVE_MAX + 1);
    CHECK_STR(got(), "");                       /* the core says nothing */
    CHECK_EQ(live_allocs, allocs);
    CHECK_EQ(prof_session_reserve(2048, &e), PROF_OK);
    CHECK_EQ(live_allocs, allocs + 4);
    CHECK_EQ(prof_ring_cap(0), 2048);
    CHECK_EQ(prof_session_reserve(100, &e), PROF_OK);         /* never shrinks */
    CHECK_EQ(live_allocs, allocs + 4);
    CHECK_EQ(prof_ring_cap(0), 2048);
}

/* Out of range: refused before anything starts (the words:
 * test_cmd_profile.c). */
TEST(run_rejects_bad_ranges)
{
    reset();
    unsigned s0 = sleeps, p0 = probes;
    buf_printer_init(&bp, out, sizeof out);
    static const struct {
        unsigned ms, chains;
        int pid;
        enum prof_kind kind;
        enum prof_view view;
        enum prof_format fmt;
        enum prof_why_not why;
        long long value;
    } bad[] = {
        { 0, 8, PROF_ALL, PROF_KIND_CPU, 0, PROF_TEXT, PROF_NOT_WINDOW, 0 },
        { PROF_WINDOW_MAX + 1, 8, PROF_ALL, PROF_KIND_CPU, 0, PROF_TEXT, PROF_NOT_WINDOW,
          PROF_WINDOW_MAX + 1 },
        { 10, 0, PROF_ALL, PROF_KIND_CPU, 0, PROF_TEXT, PROF_NOT_CHAINS, 0 },
        { 10, PROF_CHAINS + 1, PROF_ALL, PROF_KIND_CPU, 0, PROF_TEXT, PROF_NOT_CHAINS,
          PROF_CHAINS + 1 },
        { 10, 8, -2, PROF_KIND_CPU, 0, PROF_TEXT, PROF_NOT_PID, -2 },
        { 10, 8, PROF_ALL, PROF_KIND_CPU, 0, (enum prof_format)7, PROF_NOT_FORMAT, 7 },
        { 10, 8, PROF_ALL, PROF_KIND_OFFCPU, PROF_VIEW_WALL, PROF_RAW, PROF_NOT_WALL_RAW, 0 },
        { 10, 8, PROF_ALL, PROF_KIND_HEAP, 0, PROF_TEXT, PROF_NOT_HEAP_OFF, 0 },
    };
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct prof_window_spec ws = { .ws_kind = bad[i].kind, .ws_view = bad[i].view,
                                       .ws_ms = bad[i].ms, .ws_pid = bad[i].pid,
                                       .ws_chains = bad[i].chains, .ws_format = bad[i].fmt };
        struct prof_err e;
        CHECK_EQ(prof_window_run(&ws, &bp.pr, &e), PROF_EINVAL);
        CHECK_EQ(e.pe_why, bad[i].why);
        CHECK_EQ(e.pe_value, bad[i].value);
    }
    CHECK_STR(got(), "");                   /* the core says nothing */
    CHECK_EQ(sleeps, s0);
    CHECK_EQ(probes, p0);
    CHECK_EQ(prof_ring_cap(0), 0);       /* no ring grown */
}
