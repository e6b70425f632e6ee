// LINK: kernel/prof/sample.c kernel/prof/trace.c kernel/prof/trace_hooks.c kernel/prof/ring.c kernel/prof/session.c kernel/prof/offcpu.c kernel/prof/offreport.c kernel/prof/wall.c kernel/prof/stream.c kernel/prof/stream_encode.c kernel/prof/report.c kernel/prof/lockreport.c kernel/prof/export.c kernel/prof/fold.c kernel/prof/fold_order.c kernel/prof/quantile.c kernel/prof/fold_index.c kernel/cmd/profile.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c lib/sha256.c kernel/symtab.c tests/unit/fake_profiler.c kernel/stacks.c kernel/stacktrace.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c lib/printf.c lib/parse.c uapi/profile_raw.c kernel/cmd/profile_heap.c kernel/prof/heapview.c mm/heapprof.c tests/unit/fake_heap_table.c kernel/cmd/profile_stream.c uapi/stream_ctl.c kernel/cmd/profile_say.c kernel/irqname.c
/* Host tests of kernel/prof/report.c through the real sampler: a
 * fake window (sleep_ms runs a callback) ticks samples in, and the report
 * is checked as exact text: folding, order, percentages, cost, names,
 * limits, the empty-report messages, and what the header and
 * profile_cpus say of a run's sources, drops and injected records. The
 * session's and the rings' facts behind them are checked in
 * test_prof_session.c and test_prof_ring.c. Fakes: fake_profiler.c. */
#include "test.h"
#include "fake_hal.h"
#include "fake_profiler.h"
#include <stdlib.h>

#include "hal/cpu.h"
#include "hal/irq.h"
#include "kernel/prof/ring.h"
#include "kernel/prof/sample.h"
#include "kernel/prof/session.h"
#include "kernel/symtab.h"

/* ---- report format -------------------------------------------------- */

TEST(report_leaf_span_callers_by_address)
{
    reset();
    fake_window_cycles = 1000000;
    window_fn = win_span;
    CHECK_EQ(run_cmd("profile"), 0);
    CHECK_EQ(last_sleep_ms, 1000);
    CHECK_STR(got(),
        "profiled 1000 ms\n"
        "6 samples on 3 cpus, 0 dropped, source tick 100Hz\n"
        "sample cost 1 cycles median (min 1, max 1), 0.000% of cpu time\n"
        "66.7% 4 burn_inner+0x1a..0x3e\n"
        "        <- burn_mid+0x44\n"
        "        <- burn_outer+0x1b2\n"
        "33.3% 2 burn_inner+0x10\n"
        "        <- burn_mid+0x48\n"
        "        <- burn_outer+0x1b2\n");
}

/* The report's table and overflow set are freed; the buffers are kept. */
TEST(report_frees_what_it_allocates)
{
    reset();
    window_fn = win_span;
    CHECK_EQ(run_cmd("profile 10"), 0);
    long before = live_allocs;
    CHECK_EQ(before, 4);                /* the 4 CPUs' buffers, never freed */
    CHECK_EQ(run_cmd("profile 10"), 0);
    CHECK_EQ(live_allocs, before);
}

static void win_sixteenth(void)
{
    tick(3, 5, 0x3001, NULL);
    for (int i = 0; i < 15; i++)
        tick(i % 4, 5, 0x2002, NULL);
}

TEST(report_percent_rounds_half_up)
{
    reset();
    window_fn = win_sixteenth;
    CHECK_EQ(run_cmd("profile 5"), 0);
    CHECK(strstr(out, "\n93.8% 15 burn_mid+0x2\n6.3% 1 burn_inner+0x1\n") != NULL);
}

/* Costs 100, 200, 3000 and 500 cycles: the median of an even count is the
 * mean of the middle two, (200 + 500) / 2; the share is 3800 cycles over
 * window x 4 cpus, rounded half up to 3 decimals. */
static void win_costs(void)
{
    static const uint64_t c[] = { 99, 199, 2999, 499 };
    for (int i = 0; i < 4; i++) {
        walk_cycles = c[i];
        tick(i, 5, 0x3000, NULL);
    }
    walk_cycles = 0;
}

TEST(report_sample_cost_line)
{
    reset();
    fake_window_cycles = 60800;
    window_fn = win_costs;
    CHECK_EQ(run_cmd("profile 2000 all 1"), 0);
    /* 3800 / (60800 * 4) = 1.5625% */
    CHECK(strstr(out, "\nsample cost 350 cycles median (min 100, max 3000), "
                      "1.563% of cpu time\n") != NULL);
    reset();
    fake_window_cycles = 6080000;
    window_fn = win_costs;
    CHECK_EQ(run_cmd("profile 2000 all 1"), 0);
    CHECK(strstr(out, "(min 100, max 3000), 0.016% of cpu time\n") != NULL);
}

/* Four chains of one sample each, recorded in some order across CPUs. */
static const struct fstack st_1100 = { 1, { 0x1100 } };
static const struct fstack st_1200 = { 1, { 0x1200 } };
static const uintptr_t tie_pc[4] = { 0x9000, 0x3005, 0x3005, 0x2010 };
static const struct fstack *tie_st[4] = { &st_1100, &st_1200, &st_1100, NULL };
static const unsigned *tie_perm;

static void win_ties(void)
{
    for (int i = 0; i < 4; i++) {
        unsigned k = tie_perm[i];
        tick(3 - (unsigned)i, 5, tie_pc[k], tie_st[k]);
    }
}

TEST(report_ties_are_deterministic)
{
    static const unsigned p1[4] = { 0, 1, 2, 3 }, p2[4] = { 3, 2, 1, 0 };
    static const char want[] =
        "25.0% 1 burn_mid+0x10\n"
        "25.0% 1 burn_inner+0x5\n"
        "        <- burn_outer+0x100\n"
        "25.0% 1 burn_inner+0x5\n"
        "        <- burn_outer+0x200\n"
        "25.0% 1 0x9000\n"
        "        <- burn_outer+0x100\n";
    static char first[4096];
    reset();
    tie_perm = p1;
    window_fn = win_ties;
    CHECK_EQ(run_cmd("profile 10"), 0);
    CHECK(strstr(out, want) != NULL);
    CHECK(strlen(out) < sizeof first);
    memcpy(first, out, sizeof first - 1);
    reset();
    tie_perm = p2;
    window_fn = win_ties;
    CHECK_EQ(run_cmd("profile 10"), 0);
    CHECK(strcmp(out, first) == 0);
}

static const struct fstack st_junk = { 1, { 0x8888 } };

static void win_unresolved(void)
{
    tick(1, 5, 0x9abc, &st_junk);
    tick(1, 5, 0x9abd, &st_junk);   /* unresolved leaves fold by address */
}

TEST(report_unresolved_addresses_in_hex)
{
    reset();
    window_fn = win_unresolved;
    CHECK_EQ(run_cmd("profile 10"), 0);
    CHECK(strstr(out, "\n50.0% 1 0x9abc\n        <- 0x0000000000008888\n"
                      "50.0% 1 0x9abd\n        <- 0x0000000000008888\n") != NULL);
}

static const struct fstack st_end = { 1, { 0x3080 } };
static void win_call_at_end(void) { tick(0, 5, 0x3084, &st_end); }

/* The callers' lines are the kernel's own symtab_format_ret: a return
 * address is named from the byte before it (the call), with the offset of
 * the address itself, so one just past a function's last byte (a call to
 * a noreturn function) names that function, not the next one. */
TEST(symtab_format_ret_names_the_call)
{
    reset();
    char buf[64];
    symtab_format_ret(0x3080, buf, sizeof buf);
    CHECK_STR(buf, "burn_inner+0x80");
    symtab_format(0x3080, buf, sizeof buf);
    CHECK_STR(buf, "burn_spin+0x0");
    symtab_format_ret(0x2044, buf, sizeof buf);
    CHECK_STR(buf, "burn_mid+0x44");
    symtab_format_ret(0x2001, buf, sizeof buf);
    CHECK_STR(buf, "burn_mid+0x1");
    symtab_format_ret(0x2000, buf, sizeof buf);     /* byte before: a gap */
    CHECK_STR(buf, "0x0000000000002000");
    symtab_format_ret(0x8888, buf, sizeof buf);
    CHECK_STR(buf, "0x0000000000008888");
    symtab_format_ret(0, buf, sizeof buf);
    CHECK_STR(buf, "0x0000000000000000");
    CHECK_EQ(symtab_format_ret(0xffffffff80201234ull, buf, sizeof buf), 18);
    CHECK_STR(buf, "0xffffffff80201234");
    /* and so in a report: a caller at burn_spin's first byte */
    window_fn = win_call_at_end;
    CHECK_EQ(run_cmd("profile 10"), 0);
    CHECK(strstr(out, "\n100.0% 1 burn_spin+0x4\n        <- burn_inner+0x80\n") != NULL);
}

/* A deep stack keeps frame 0 and the first 7 return addresses. */
static const struct fstack st_deep = { 9, { 0x1001, 0x1002, 0x1003, 0x1004,
                                            0x1005, 0x1006, 0x1007, 0x1008,
                                            0x1009 } };
static void win_deep(void) { tick(0, 5, 0x3000, &st_deep); }

TEST(report_depth_is_at_most_8)
{
    reset();
    window_fn = win_deep;
    CHECK_EQ(run_cmd("profile 10"), 0);
    CHECK(strstr(out, "<- burn_outer+0x7\n") != NULL);
    CHECK(strstr(out, "<- burn_outer+0x8\n") == NULL);
}

/* 128 chains of one sample fill the table; 5 more, of 2 samples each,
 * do not fit. */
static const struct fstack *over_st(unsigned i)
{
    static struct fstack s[133];
    s[i].n = 1;
    s[i].ret[0] = 0x1100 + i;
    return &s[i];
}

static void win_overflow(void)
{
    for (unsigned i = 0; i < 133; i++)
        tick(0, 5, 0x301a, over_st(i));
    for (unsigned i = 128; i < 133; i++)
        tick(0, 5, 0x301a, over_st(i));
}

TEST(report_overflow_line_counts_exactly)
{
    reset();
    room(256);                          /* 138 samples in a 10 ms window */
    long before = live_allocs;
    window_fn = win_overflow;
    CHECK_EQ(run_cmd("profile 10 all 1"), 0);
    CHECK(strstr(out, "\n138 samples on 1 cpus, 0 dropped, source tick 100Hz\n") != NULL);
    CHECK(strstr(out, "\n0.7% 1 burn_inner+0x1a\n"
                      "        <- burn_outer+0x100\n"
                      "5 more chains did not fit the 128-chain table (10 samples)\n")
          != NULL);
    CHECK_EQ(live_allocs, before);
    /* All 128 that fit, in order, then the line. */
    reset();
    room(256);
    window_fn = win_overflow;
    CHECK_EQ(run_cmd("profile 10 all 128"), 0);
    CHECK_EQ(count_leaves(), 128);
    CHECK(strstr(out, "\n0.7% 1 burn_inner+0x1a\n        <- burn_outer+0x17f\n5 more") != NULL);
}

/* A 10 ms tick window is sized for 2 samples plus margin: 256 records,
 * the least any window gets. */
static void win_fill(void)
{
    for (int i = 0; i < 257; i++)
        tick(1, 5, 0x3000 + (i & 7), NULL);
}

TEST(report_full_buffer_drops_and_counts)
{
    reset();
    window_fn = win_fill;
    CHECK_EQ(run_cmd("profile 10 all 1"), 0);
    CHECK(strstr(out, "\n256 samples on 1 cpus, 1 dropped, source tick 100Hz\n") != NULL);
    CHECK(strstr(out, "\n100.0% 256 burn_inner+0x0..0x7\n") != NULL);
}

static void win_pid7_only(void)
{
    tick(0, 5, 0x3000, NULL);
    tick(1, 7, 0x2000, NULL);
    tick(2, 5, 0x3000, NULL);
}

TEST(report_pid_filter_at_sample_time)
{
    reset();
    window_fn = win_pid7_only;
    CHECK_EQ(run_cmd("profile 500 7"), 0);
    CHECK_EQ(last_sleep_ms, 500);
    CHECK(strstr(out, "\n1 samples on 1 cpus, 0 dropped, source tick 100Hz\n") != NULL);
    CHECK(strstr(out, "\n100.0% 1 burn_mid+0x0\n") != NULL);
    CHECK(strstr(out, "burn_inner") == NULL);
}

TEST(report_empty_pid_filter)
{
    reset();
    window_fn = win_pid7_only;          /* nothing from pid 12 */
    CHECK_EQ(run_cmd("profile 500 12"), 0);
    CHECK_STR(got(),
        "profiled 500 ms\n"
        "0 samples on 0 cpus, 0 dropped, source tick 100Hz\n"
        "no samples for pid 12: that task may have been asleep the whole window\n");
}

TEST(report_empty_counter_and_tick)
{
    reset();
    pmu_usable = true;
    pmu_name = "pmu/nmi intel fixed-ctr1";
    CHECK_EQ(run_cmd("profile 200"), 0);
    CHECK_STR(got(),
        "profiled 200 ms\n"
        "0 samples on 0 cpus, 0 dropped, source pmu/nmi intel fixed-ctr1\n"
        "no samples: the counter counts unhalted cycles, so a CPU that spent "
        "the window in hlt contributes nothing; this machine was idle\n");
    reset();
    CHECK_EQ(run_cmd("profile 200"), 0);
    CHECK_STR(got(),
        "profiled 200 ms\n"
        "0 samples on 0 cpus, 0 dropped, source tick 100Hz\n"
        "no samples\n");
}

TEST(report_probe_note_after_line_2)
{
    reset();
    pmu_note = "counter claimed (intel fixed-ctr1) but did not count in 10 us: tick only";
    window_fn = win_deep;
    CHECK_EQ(run_cmd("profile 10"), 0);
    static const char want[] =
        "profiled 10 ms\n1 samples on 1 cpus, 0 dropped, source tick 100Hz\n"
        "counter claimed (intel fixed-ctr1) but did not count in 10 us: "
        "tick only\nsample cost ";
    CHECK(strncmp(out, want, strlen(want)) == 0);
}

TEST(report_chain_table_alloc_failure)
{
    reset();
    window_fn = win_deep;
    room(64);
    kzalloc_fail = 1;
    long before = live_allocs;
    CHECK(run_cmd("profile 10") != 0);
    CHECK(strncmp(out, "profile: no memory for the chain table (", 40) == 0);
    CHECK_EQ(live_allocs, before);
    CHECK_EQ(run_cmd("profile 10"), 0);   /* not left busy */
}

/* The fold's arrays start small and double: a growth that finds no
 * memory ends the report with one line (nothing else printed), frees
 * everything, and leaves the profiler usable. 133 distinct chains: the
 * chain array (64 at first) must grow twice. */
TEST(report_fold_growth_alloc_failure)
{
    reset();
    room(256);
    window_fn = win_overflow;
    CHECK_EQ(run_cmd("profile 10 all 1"), 0);
    long before = live_allocs;
    kmalloc_fail_after = 3;             /* tab, syms, costs; not the growth */
    buf_printer_init(&bp, out, sizeof out);
    CHECK_EQ(prof_report_again(1, &bp.pr, NULL), PROF_ENOMEM);
    CHECK_STR(got(), "profile: no memory for the chain table (138 records, 64 "
                     "distinct chains so far)\n");
    CHECK_EQ(live_allocs, before);
    kmalloc_fail_after = -1;
    buf_printer_init(&bp, out, sizeof out);
    CHECK_EQ(prof_report_again(1, &bp.pr, NULL), 0);
    CHECK(strstr(out, "\n138 samples on 1 cpus") != NULL);
}

/* ---- moved from the session's tests: what the report says of a run's
 * sources, drops and injected records (the facts themselves:
 * test_prof_session.c) ---------------------------------------------- */


TEST(report_mixed_sources_say_which_cpu)
{
    reset();
    pmu_usable = true;
    pmu_claim = true;
    pmu_name = "pmu/nmi intel fixed-ctr1";
    arm_fails = 1u << 1;
    fake_window_cycles = 1000000;
    window_fn = fake_win_mixed;
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

TEST(report_again_reads_injected_records)
{
    reset();
    CHECK_EQ(run_cmd("profile 1"), 0);   /* fresh counts */
    buf_printer_init(&bp, out, sizeof out);
    CHECK_EQ(prof_session_reserve(1024, NULL), 0);
    uintptr_t f[3] = { 0x3010, 0x2044, 0x11b2 };
    for (int i = 0; i < 1025; i++)
        CHECK_EQ(prof_inject(3, 5, f, 3, 40), 0);
    CHECK_EQ(prof_inject(3, 5, f, 0, 40), PROF_EINVAL);
    CHECK_EQ(prof_inject(3, 5, f, 9, 40), PROF_EINVAL);
    CHECK_EQ(prof_inject(40, 5, f, 3, 40), PROF_EINVAL);   /* no buffer */
    buf_printer_init(&bp, out, sizeof out);
    uint64_t before = fake_cycles;
    CHECK_EQ(prof_report_again(1, &bp.pr, NULL), 0);
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
    CHECK_EQ(prof_report_again(8, &bp.pr, NULL), 0);
    CHECK(strstr(out, "\n3 samples on 1 cpus, 0 dropped, source tick 100Hz\n") != NULL);
    CHECK(strstr(out, "\n100.0% 3 burn_inner+0x10\n") != NULL);
    CHECK(strstr(out, "4096") == NULL);
}

/* Drops are the records that did not fit, summed over cpus, exactly:
 * both full buffers' overflow and a nested sample. */
TEST(report_drops_summed_over_cpus)
{
    reset();
    pmu_claim = true;
    window_fn = win_nested;             /* cpu 2: 1 + 4 samples, 1 nested drop */
    CHECK_EQ(run_cmd("profile 1"), 0);
    buf_printer_init(&bp, out, sizeof out);
    CHECK_EQ(prof_session_reserve(1000, NULL), 0);    /* 1024: a power of two */
    uintptr_t f[2] = { 0x3010, 0x2044 };
    for (int i = 0; i < 1024 + 37; i++)
        CHECK_EQ(prof_inject(0, 5, f, 2, 40), 0);
    for (int i = 0; i < 1023 + 5; i++)
        CHECK_EQ(prof_inject(2, 5, f, 2, 40), 0);
    buf_printer_init(&bp, out, sizeof out);
    CHECK_EQ(prof_report_again(1, &bp.pr, NULL), 0);
    CHECK(strstr(out, "\n2048 samples on 2 cpus, 47 dropped, source tick 100Hz\n") != NULL);
}
