// LINK: kernel/prof/sample.c kernel/prof/ring.c kernel/prof/session.c kernel/prof/offcpu.c kernel/prof/offreport.c kernel/prof/wall.c kernel/prof/stream.c kernel/prof/stream_encode.c kernel/prof/report.c kernel/prof/export.c kernel/prof/fold.c kernel/prof/fold_index.c kernel/cmd/profile.c uapi/profile_stream.c uapi/profile_stream_tag.c lib/sha256.c kernel/symtab.c tests/unit/fake_profiler.c kernel/stacks.c kernel/stacktrace.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c lib/printf.c lib/parse.c uapi/profile_raw.c kernel/cmd/profile_heap.c kernel/prof/heapview.c mm/heapprof.c tests/unit/fake_heap_table.c
/* tests/unit/test_prof_session.c: run control (kernel/prof/session.c) over
 * the real sampler and rings: which source took each cpu's samples, the
 * drops, inject and report again, Start (busy, a late sampler, a CPU
 * online later, its own counter armed at once), ring sizing, the cost
 * quantiles and reserve. The report's own format is test_prof_report.c's. */
#include "test.h"
#include "fake_hal.h"
#include "fake_profiler.h"
#include <stdlib.h>

#include "hal/cpu.h"
#include "hal/irq.h"
#include "kernel/prof/ring.h"
#include "kernel/prof/sample.h"
#include "kernel/prof/session.h"
#include "kernel/shell.h"
#include "lib/printf.h"

/* A counter run where cpu 1's counter never arms: its tick goes on
 * sampling, and the report says which cpu's samples came from where,
 * after the header lines the spec fixes. */
static void win_mixed(void)
{
    tick(0, 5, 0x3000, NULL);           /* arms */
    tick(1, 5, 0x3001, NULL);           /* cannot arm: samples */
    for (int i = 0; i < 3; i++)
        nmi(0, 5, 0x3002, NULL);
    tick(1, 5, 0x3003, NULL);
    tick(0, 5, 0x3004, NULL);           /* armed: no sample */
}

TEST(report_mixed_sources_say_which_cpu)
{
    reset();
    pmu_usable = true;
    pmu_claim = true;
    pmu_name = "pmu/nmi intel fixed-ctr1";
    arm_fails = 1u << 1;
    fake_window_cycles = 1000000;
    window_fn = win_mixed;
    CHECK_EQ(run_cmd("profile 10 all 1"), 0);
    CHECK_STR(got(),
        "profiled 10 ms\n"
        "5 samples on 2 cpus, 0 dropped, source pmu/nmi intel fixed-ctr1\n"
        "sample cost 1 cycles median (min 1, max 1), 0.000% of cpu time\n"
        "cpus: 0 pmu 3, 1 tick 2, 2 none, 3 none\n"
        "100.0% 5 burn_inner+0x1..0x3\n");
    CHECK_EQ(run_cmd("profile_cpus"), 0);
    CHECK_STR(got(), "cpus: 0 pmu 3, 1 tick 2, 2 none, 3 none\n");
    CHECK(run_cmd("profile_cpus now") != 0);
    CHECK_STR(got(), "profile_cpus: takes no arguments\n");
}

/* Every cpu on the counter, or every cpu on the tick: the header's source
 * says it all and no line is added; profile_cpus still tells. */
TEST(report_single_source_adds_no_line)
{
    reset();
    pmu_usable = true;
    pmu_name = "pmu/nmi intel fixed-ctr1";
    window_fn = win_counter;
    CHECK_EQ(run_cmd("profile 10"), 0);
    CHECK(strstr(out, "cpus:") == NULL);
    CHECK_EQ(run_cmd("profile_cpus"), 0);
    CHECK_STR(got(), "cpus: 0 pmu 1, 1 pmu 1, 2 none, 3 none\n");
    reset();
    window_fn = win_span;
    CHECK_EQ(run_cmd("profile 10"), 0);
    CHECK(strstr(out, "cpus:") == NULL);
    CHECK_EQ(run_cmd("profile_cpus"), 0);
    CHECK_STR(got(), "cpus: 0 tick 3, 1 tick 1, 2 tick 2, 3 none\n");
    /* Injected records count as the last run's source. */
    uintptr_t f[1] = { 0x3000 };
    CHECK_EQ(prof_inject(3, 5, f, 1, 40), 0);
    CHECK_EQ(run_cmd("profile_cpus"), 0);
    CHECK_STR(got(), "cpus: 0 tick 3, 1 tick 1, 2 tick 2, 3 tick 1\n");
}

/* ---- inject and report_again (the bench's hooks) -------------------- */

TEST(inject_and_report_again)
{
    reset();
    CHECK_EQ(run_cmd("profile 1"), 0);   /* fresh counts */
    buf_printer_init(&bp, out, sizeof out);
    CHECK_EQ(prof_reserve(1024, &bp.pr), 0);
    uintptr_t f[3] = { 0x3010, 0x2044, 0x11b2 };
    for (int i = 0; i < 1025; i++)
        CHECK_EQ(prof_inject(3, 5, f, 3, 40), 0);
    CHECK_EQ(prof_inject(3, 5, f, 0, 40), PROF_EINVAL);
    CHECK_EQ(prof_inject(3, 5, f, 9, 40), PROF_EINVAL);
    CHECK_EQ(prof_inject(40, 5, f, 3, 40), PROF_EINVAL);   /* no buffer */
    buf_printer_init(&bp, out, sizeof out);
    uint64_t before = fake_cycles;
    CHECK_EQ(prof_report_again(1, &bp.pr), 0);
    CHECK(strstr(out, "\n1024 samples on 1 cpus, 1 dropped, source tick 100Hz\n"
                      "sample cost 40 cycles median (min 40, max 40), ") != NULL);
    CHECK(strstr(out, "\n100.0% 1024 burn_inner+0x10\n        <- burn_mid+0x44\n") != NULL);
    CHECK(prof_report_cycles() > 0);
    CHECK(prof_report_cycles() < fake_cycles - before);
}

/* A window's report reads the records of its own kind: a record of
 * another kind in the ring (as the off-CPU and heap profiles will put
 * there) is neither a sample nor a chain of it. */
TEST(report_reads_its_own_kind_only)
{
    reset();
    CHECK_EQ(run_cmd("profile 1"), 0);   /* fresh counts */
    uintptr_t f[3] = { 0x3010, 0x2044, 0x11b2 };
    for (int i = 0; i < 3; i++)
        CHECK_EQ(prof_inject(3, 5, f, 3, 40), 0);
    struct prof_record other = { .pr_pid = 5, .pr_depth = 1, .pr_kind = PROF_KIND_MAX,
                                 .pr_weight = 4096, .pr_frames = { 0x301a } };
    CHECK_EQ(prof_ring_put(3, &other), PROF_OK);
    buf_printer_init(&bp, out, sizeof out);
    CHECK_EQ(prof_report_again(8, &bp.pr), 0);
    CHECK(strstr(out, "\n3 samples on 1 cpus, 0 dropped, source tick 100Hz\n") != NULL);
    CHECK(strstr(out, "\n100.0% 3 burn_inner+0x10\n") != NULL);
    CHECK(strstr(out, "4096") == NULL);
}

/* Drops are the records that did not fit, summed over cpus, exactly:
 * both full buffers' overflow and a nested sample. */
TEST(report_drops_exact_when_buffers_fill)
{
    reset();
    pmu_claim = true;
    window_fn = win_nested;             /* cpu 2: 1 sample, 1 nested drop */
    CHECK_EQ(run_cmd("profile 1"), 0);
    buf_printer_init(&bp, out, sizeof out);
    CHECK_EQ(prof_reserve(1000, &bp.pr), 0);    /* 1024: a power of two */
    uintptr_t f[2] = { 0x3010, 0x2044 };
    for (int i = 0; i < 1024 + 37; i++)
        CHECK_EQ(prof_inject(0, 5, f, 2, 40), 0);
    for (int i = 0; i < 1023 + 5; i++)
        CHECK_EQ(prof_inject(2, 5, f, 2, 40), 0);
    buf_printer_init(&bp, out, sizeof out);
    CHECK_EQ(prof_report_again(1, &bp.pr), 0);
    CHECK(strstr(out, "\n2048 samples on 2 cpus, 43 dropped, source tick 100Hz\n") != NULL);
}

/* ---- Start: busy, buffers ------------------------------------------- */

static int busy_rc;
static char busy_out[256];
static void win_busy(void)
{
    tick(0, 5, 0x3000, NULL);
    struct buf_printer b2;
    buf_printer_init(&b2, busy_out, sizeof busy_out);
    char a0[] = "profile", a1[] = "1";
    char *argv[] = { a0, a1 };
    busy_rc = cmd_fn("profile")(2, argv, &b2.pr);
    tick(1, 5, 0x3000, NULL);
}

TEST(start_second_run_is_busy)
{
    reset();
    unsigned s0 = sleeps;
    window_fn = win_busy;
    CHECK_EQ(run_cmd("profile 100"), 0);
    CHECK(busy_rc != 0);
    CHECK_STR(busy_out, "profile: busy\n");
    CHECK_EQ(sleeps - s0, 1);            /* the second run slept no window */
    CHECK(strstr(out, "\n2 samples on 2 cpus, 0 dropped") != NULL);
    /* and the profiler is free again afterwards */
    CHECK_EQ(run_cmd("profile 1"), 0);
}

static void win_cpu5(void) { tick(5, 5, 0x3000, NULL); tick(4, 5, 0x3000, NULL); }

/* A sampler of the last run still inside its sample (Stop waits 50 ms at
 * most) would count its record into the next run once Start had zeroed
 * the counts: Start waits it out, bounded, and says busy. */
TEST(start_waits_out_a_late_sampler_or_says_busy)
{
    reset();
    CHECK_EQ(run_cmd("profile 10"), 0);
    prof_ring_test_set_inside(2, true);
    CHECK(run_cmd("profile 10") != 0);
    CHECK(strstr(out, "profile: busy (cpu 2 is still finishing a sample of the last run)") != NULL);
    prof_ring_test_set_inside(2, false);
    CHECK_EQ(run_cmd("profile 10"), 0);         /* and the profiler is usable again */
    CHECK(strstr(out, "profiled 10 ms") != NULL);
}

TEST(start_buffer_for_cpu_online_later)
{
    reset();
    CHECK_EQ(run_cmd("profile 10"), 0);  /* cpus 0-3 have buffers */
    fake_ncpus = 6;
    fake_online = 0x2f;                  /* cpu 5 came online; cpu 4 is not */
    unsigned s0 = sleeps;
    kmalloc_fail = 1;
    CHECK_EQ(run_cmd("profile 10"), 1);
    CHECK(strncmp(out, "profile: no memory for cpu 5's sample buffer (", 46) == 0);
    CHECK_EQ(sleeps, s0);                /* started nothing */
    window_fn = win_cpu5;
    CHECK_EQ(run_cmd("profile 10"), 0);
    /* cpu 4 has no buffer: its tick records nothing (and is no drop) */
    CHECK(strstr(out, "\n1 samples on 1 cpus, 0 dropped") != NULL);
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
    CHECK_EQ(run_cmd("profile 1"), 0);
    CHECK(armed_in_window);
    CHECK_EQ(arms, 1);
    CHECK(!pmu_cpus[0].pc_armed && !pmu_cpus[1].pc_armed && !pmu_cpus[3].pc_armed);
    CHECK_EQ(fake_irq_depth, 0);         /* interrupts back on */
    /* On the tick only, nothing is armed. */
    reset();
    fake_cpu = 2;
    CHECK_EQ(run_cmd("profile 1"), 0);
    CHECK_EQ(arms, 0);
}

/* ---- buffer sizing -------------------------------------------------- */

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
    CHECK_EQ(run_cmd("profile 2000 all 1"), 0);
    CHECK(strstr(out, "\n8040 samples on 4 cpus, 0 dropped, source pmu/nmi") != NULL);
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

/* Buffers only grow: a short window after a long one allocates nothing
 * and keeps the room; a source faster than the sizing planned for counts
 * what did not fit as drops. */
TEST(sizing_grows_only_and_a_faster_source_drops)
{
    reset();
    pmu_usable = pmu_claim = true;
    pmu_name = "pmu/nmi intel fixed-ctr1";
    CHECK_EQ(run_cmd("profile 1"), 0);          /* 256 records each */
    window_fn = win_counter_burst;
    CHECK_EQ(run_cmd("profile 1"), 0);
    CHECK(strstr(out, "\n356 samples on 2 cpus, 2744 dropped, source pmu/nmi") != NULL);
    long allocs = live_allocs;
    window_fn = NULL;
    CHECK_EQ(run_cmd("profile 2000"), 0);       /* grows to 4096 */
    CHECK_EQ(live_allocs, allocs + 4);
    allocs = live_allocs;
    window_fn = win_counter_burst;
    CHECK_EQ(run_cmd("profile 1"), 0);          /* keeps 4096 */
    CHECK_EQ(live_allocs, allocs);
    CHECK(strstr(out, "\n3100 samples on 2 cpus, 0 dropped, source pmu/nmi") != NULL);
    /* The tick's longest window is smaller: nothing to grow. */
    pmu_usable = false;
    window_fn = NULL;
    CHECK_EQ(run_cmd("profile 2000"), 0);
    CHECK_EQ(live_allocs, allocs);
}

/* Nearest rank over every record: 1..100 injected, p50 is 50, p99 99. */
TEST(cost_permille_nearest_rank)
{
    reset();
    uint32_t c = 7;
    CHECK_EQ(prof_cost_permille(500, &c), PROF_EINVAL);   /* no run */
    CHECK_EQ(run_cmd("profile 1"), 0);
    CHECK_EQ(prof_cost_permille(500, &c), PROF_EINVAL);   /* no samples */
    room(128);
    uintptr_t f[1] = { 0x3010 };
    for (uint32_t i = 100; i >= 1; i--)
        CHECK_EQ(prof_inject(i % 3, 5, f, 1, i), 0);
    long allocs = live_allocs;
    CHECK_EQ(prof_cost_permille(500, &c), 0);
    CHECK_EQ(c, 50);
    CHECK_EQ(prof_cost_permille(990, &c), 0);
    CHECK_EQ(c, 99);
    CHECK_EQ(prof_cost_permille(1000, &c), 0);
    CHECK_EQ(c, 100);
    CHECK_EQ(prof_cost_permille(1, &c), 0);
    CHECK_EQ(c, 1);
    CHECK_EQ(prof_cost_permille(0, &c), PROF_EINVAL);
    CHECK_EQ(live_allocs, allocs);
}

TEST(reserve_checks_its_range)
{
    reset();
    buf_printer_init(&bp, out, sizeof out);
    long allocs = live_allocs;
    CHECK_EQ(prof_reserve(0, &bp.pr), PROF_EINVAL);
    CHECK_STR(got(), "profile: reserve 0 out of range (1-65536 records)\n");
    CHECK_EQ(prof_reserve(2048, &bp.pr), 0);
    CHECK_EQ(live_allocs, allocs + 4);
    CHECK_EQ(prof_reserve(100, &bp.pr), 0);     /* never shrinks */
    CHECK_EQ(live_allocs, allocs + 4);
}

TEST(run_rejects_bad_ranges)
{
    reset();
    buf_printer_init(&bp, out, sizeof out);
    CHECK_EQ(prof_run(0, PROF_ALL, 8, PROF_TEXT, &bp.pr), PROF_EINVAL);
    CHECK_STR(got(), "profile: window 0 out of range (1-2000 ms)\n");
    buf_printer_init(&bp, out, sizeof out);
    CHECK_EQ(prof_run(10, PROF_ALL, 200, PROF_TEXT, &bp.pr), PROF_EINVAL);
    CHECK_STR(got(), "profile: chains 200 out of range (1-128)\n");
}
