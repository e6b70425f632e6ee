// LINK: mm/heapprof.c tests/unit/fake_heapprof.c
// LIBS: -lm
/* Host tests of mm/heapprof.c: the thresholds' distribution, the scaling
 * against the host's libm, the chain, the in-use table and its bound. The
 * allocator's side (marking, kfree's retire, double frees) is in
 * test_heap.c. */
#include "test.h"
#include "fake_hal.h"
#include "fake_heapprof.h"
#include "kernel/percpu.h"
#include "kernel/prof/ring.h"
#include "mm/heapprof.h"
#include <math.h>
#include <stdlib.h>

static void reset(void)
{
    heapprof_test_reset();
    fake_hp_walk_n = 0;
    fake_hp_nemit = 0;
    prof_gate.pg_state = 0;
    fake_cpu = 0;
}

/* 10^6 draws from a seeded generator: the mean within 2% of the rate,
 * and the shape exponential (P(X > R) = 1/e, P(X > 3R) = e^-3). */
TEST(heapprof_threshold_distribution)
{
    const uint32_t rates[] = { 512 * 1024, 4096, 64 };
    for (unsigned k = 0; k < 3; k++) {
        uint64_t st = 12345 + k;
        double sum = 0;
        unsigned over1 = 0, over3 = 0;
        const unsigned n = 1000000;
        for (unsigned i = 0; i < n; i++) {
            uint64_t x = heapprof_draw(&st, rates[k]);
            sum += (double)x;
            over1 += x > rates[k];
            over3 += x > 3ull * rates[k];
        }
        double mean = sum / n;
        CHECK(fabs(mean / rates[k] - 1) < 0.02);
        /* Thresholds are whole bytes: x > R means X >= R + 1. */
        double r = rates[k];
        CHECK(fabs((double)over1 / n - exp(-(r + 1) / r)) < 0.003);
        CHECK(fabs((double)over3 / n - exp(-(3 * r + 1) / r)) < 0.002);
    }
}

/* The thresholds are not all alike: two seeds, two streams. */
TEST(heapprof_threshold_streams_differ)
{
    uint64_t a = 1, b = 2;
    unsigned same = 0;
    for (unsigned i = 0; i < 1000; i++)
        same += heapprof_draw(&a, 1 << 20) == heapprof_draw(&b, 1 << 20);
    CHECK(same < 5);
}

/* size / (1 - e^(-size/R)) against libm, to a millionth, from blocks far
 * below the rate to far above it. */
TEST(heapprof_scaling_matches_libm)
{
    const uint32_t rates[] = { 1, 64, 1000, 4096, 512 * 1024, 1u << 30 };
    const uint64_t sizes[] = { 1, 15, 16, 64, 255, 256, 1000, 4096, 65536,
                               1u << 20, 3u << 20, 1ull << 30, 1ull << 36 };
    for (unsigned i = 0; i < sizeof rates / sizeof rates[0]; i++) {
        for (unsigned j = 0; j < sizeof sizes / sizeof sizes[0]; j++) {
            double s = (double)sizes[j], r = rates[i];
            double want = s / -expm1(-s / r);
            double got = (double)heapprof_scale(sizes[j], rates[i]);
            if (fabs(got / want - 1) > 1e-6 && fabs(got - want) > 0.5) {
                char m[160];
                snprintf(m, sizeof m, "scale(%llu, %u) = %.1f, libm says %.3f",
                         (unsigned long long)sizes[j], rates[i], got, want);
                test_fail(__FILE__, __LINE__, m);
            }
        }
    }
    CHECK_EQ(heapprof_scale(0, 4096), 0);
    /* A block 42 rates big or more is always sampled: it weighs itself. */
    CHECK_EQ(heapprof_scale(100000, 64), 100000);
}

TEST(heapprof_objects)
{
    CHECK_EQ(heapprof_objects_q16(128, 64), 2u << 16);
    CHECK_EQ(heapprof_objects_q16(96, 64), 3u << 15);
    CHECK_EQ(heapprof_objects_q16(5, 0), 1u << 16);
}

/* The first crossing after the rate is set draws a threshold of the new
 * rate and counts the allocation against it (here a 64-byte block that
 * does not reach it); the next ones are samples: the chain starts at the
 * site, the allocator's own frames skipped, the weight scaled. */
TEST(heapprof_sample_chain_and_weight)
{
    reset();
    heapprof_test_seed(0, 99);
    heapprof_set_rate(4096);
    char blk[2][64];
    CHECK(!heapprof_sample(blk[0], 64, 0x5000));
    uintptr_t walk[] = { 0x1010, 0x1020, 0x5000, 0x6000, 0x7000 };
    memcpy(fake_hp_walk, walk, sizeof walk);
    fake_hp_walk_n = 5;
    CHECK(heapprof_sample(blk[1], 64, 0x5000));
    struct prof_record r[4];
    struct heapprof_stats st;
    CHECK_EQ(heapprof_copy(r, 4, &st), 1);
    CHECK_EQ(st.hs_live, 1);
    CHECK_EQ(st.hs_samples, 1);
    CHECK_EQ(st.hs_rate, 4096);
    CHECK_EQ(r[0].pr_kind, PROF_KIND_HEAP);
    CHECK_EQ(r[0].pr_pid, 7);
    CHECK_EQ(r[0].pr_size, 64);
    CHECK_EQ(r[0].pr_weight, heapprof_scale(64, 4096));
    CHECK_EQ(r[0].pr_depth, 3);
    CHECK_EQ(r[0].pr_frames[0], 0x4fff);
    CHECK_EQ(r[0].pr_frames[1], 0x6000);
    CHECK_EQ(r[0].pr_frames[2], 0x7000);
    /* A walk that never reached the site still names it. */
    fake_hp_walk_n = 2;
    CHECK(heapprof_sample(blk[0], 64, 0x5000));
    CHECK_EQ(heapprof_copy(r, 4, NULL), 2);
    CHECK(r[0].pr_depth == 1 || r[1].pr_depth == 1);
    heapprof_retire(blk[0]);
    heapprof_retire(blk[1]);
    CHECK_EQ(heapprof_copy(r, 4, &st), 0);
    CHECK_EQ(st.hs_retired, 2);
    CHECK_EQ(st.hs_missing, 0);
    /* A retire with no entry is counted, never silent. */
    heapprof_retire(blk[1]);
    heapprof_copy(r, 4, &st);
    CHECK_EQ(st.hs_missing, 1);
}

/* Off, the countdown is INT64_MAX, so no allocation crosses it and the
 * fast path needs no test of the rate; a crossing that finds sampling
 * off (the countdown used up, however unlikely) only puts it back. On,
 * only allocations that cross: each one a subtract. */
TEST(heapprof_count_off_and_on)
{
    reset();
    CHECK_EQ(cpus[0].heap_left, INT64_MAX);
    CHECK(!heapprof_count(1 << 30));
    CHECK_EQ(cpus[0].heap_left, INT64_MAX - (1 << 30));
    cpus[0].heap_left = 5;
    CHECK(heapprof_count(6));
    CHECK(!heapprof_sample((void *)0x1000, 6, 0x10));
    CHECK_EQ(cpus[0].heap_left, INT64_MAX);
    heapprof_set_rate(1 << 20);
    CHECK_EQ(cpus[0].heap_left, 0);
    CHECK_EQ(cpus[MAX_CPUS - 1].heap_left, 0);
    heapprof_test_seed(0, 5);
    CHECK(heapprof_count(1));                       /* the new rate's first */
    CHECK(!heapprof_sample((void *)0x1000, 1, 0x10));
    int64_t left = cpus[0].heap_left;
    CHECK(left > 0);
    if (left > 1) {
        CHECK(!heapprof_count(1));
        CHECK_EQ(cpus[0].heap_left, left - 1);
    }
    /* Each CPU counts its own: CPU 1's allocations leave CPU 0's alone. */
    fake_cpu = 1;
    heapprof_count(100);
    CHECK_EQ(cpus[1].heap_left, -100);
    CHECK_EQ(cpus[0].heap_left, left - (left > 1));
    fake_cpu = 0;
    heapprof_set_rate(0);
    CHECK_EQ(cpus[1].heap_left, INT64_MAX);
}

/* The first allocation after the rate is set is sampled with the same
 * chance as any other: a block far above the rate is, and the countdown
 * after a small one that is not is the fresh threshold less its size. */
TEST(heapprof_first_crossing_after_rate_change)
{
    reset();
    heapprof_test_seed(0, 42);
    heapprof_set_rate(4096);
    CHECK(heapprof_count(1 << 20));
    CHECK(heapprof_sample((void *)0x1000, 1 << 20, 0x10));
    heapprof_retire((void *)0x1000);
    /* Replay the same draws: a small block against a fresh threshold. */
    uint64_t st = 42;
    int64_t t = (int64_t)heapprof_draw(&st, 4096);
    reset();
    heapprof_test_seed(0, 42);
    heapprof_set_rate(4096);
    CHECK(t > 8);
    CHECK(heapprof_count(8));
    CHECK(!heapprof_sample((void *)0x1000, 8, 0x10));
    CHECK_EQ(cpus[0].heap_left, t - 8);
    struct heapprof_stats s;
    heapprof_copy(NULL, 0, &s);
    CHECK_EQ(s.hs_samples, 0);
}

static void deliver_ipi(unsigned cpu)
{
    unsigned was = fake_cpu;
    CHECK(fake_hp_ipi_pending & (1ull << cpu));
    fake_hp_ipi_pending &= ~(1ull << cpu);
    fake_cpu = cpu;
    CHECK(fake_hp_refresh == heapprof_cpu_refresh);    /* mm's, handed down */
    fake_hp_refresh();
    fake_cpu = was;
}

/* arm64's way (hal/cpu.h): a rate change sets the caller's countdown at
 * once and each other CPU's in its own interrupt, which comes when that
 * CPU next has interrupts on, maybe after it has crossed and drawn at the
 * new rate under the heap lock: that threshold stands. */
TEST(heapprof_rate_change_by_ipi)
{
    reset();
    for (unsigned i = 0; i < 4; i++)
        heapprof_test_seed(i, 100 + i);
    heapprof_set_rate(4096);                        /* all at once, as x86-64 */
    fake_hp_by_ipi = true;
    fake_hp_ipi_pending = 0;
    heapprof_set_rate(8192);
    CHECK_EQ(cpus[0].heap_left, 0);                 /* the caller's own, now */
    CHECK_EQ(fake_hp_ipi_pending, ~1ull);           /* every other CPU's by SGI */
    /* CPU 1 takes it before allocating: it crosses at its next one. */
    deliver_ipi(1);
    CHECK_EQ(cpus[1].heap_left, 0);
    fake_cpu = 1;
    CHECK(heapprof_count(8));
    CHECK(!heapprof_sample((void *)0x1000, 8, 0x10));
    CHECK(cpus[1].heap_left > 0);
    /* CPU 2 crosses its old threshold (4096's) first, the lock held and
     * the SGI waiting: a fresh one at 8192, less this allocation... */
    fake_cpu = 2;
    CHECK_EQ(cpus[2].heap_left, 0);
    CHECK(heapprof_count(8));
    CHECK(!heapprof_sample((void *)0x2000, 8, 0x10));
    int64_t fresh = cpus[2].heap_left;
    CHECK(fresh > 0);
    /* ...which its SGI, after the lock, leaves alone. */
    fake_cpu = 0;
    deliver_ipi(2);
    CHECK_EQ(cpus[2].heap_left, fresh);
    /* Off, then on again before CPU 3 takes either interrupt: the one it
     * takes reads the newest rate. */
    heapprof_set_rate(0);
    CHECK_EQ(cpus[0].heap_left, INT64_MAX);
    deliver_ipi(2);
    CHECK_EQ(cpus[2].heap_left, INT64_MAX);
    int64_t old3 = cpus[3].heap_left;
    heapprof_set_rate(4096);
    CHECK_EQ(cpus[3].heap_left, old3);              /* not yet */
    deliver_ipi(3);
    CHECK_EQ(cpus[3].heap_left, 0);
    heapprof_set_rate(0);
    deliver_ipi(3);
    CHECK_EQ(cpus[3].heap_left, INT64_MAX);
    /* A CPU whose SGI is late crosses its stale threshold with sampling
     * off: nothing sampled, its countdown put back to INT64_MAX. */
    fake_cpu = 1;
    cpus[1].heap_left = 2;
    CHECK(heapprof_count(8));
    CHECK(!heapprof_sample((void *)0x3000, 8, 0x10));
    CHECK_EQ(cpus[1].heap_left, INT64_MAX);
    deliver_ipi(1);
    CHECK_EQ(cpus[1].heap_left, INT64_MAX);
    fake_hp_by_ipi = false;
}

/* The table's bound: samples past it are counted as overflow, not kept
 * and not marked; a retire makes room again. */
TEST(heapprof_table_full)
{
    reset();
    heapprof_set_rate(1);
    heapprof_test_seed(0, 3);
    static char blocks[HEAPPROF_BLOCKS + 5][16];
    unsigned kept = 0;
    for (unsigned i = 0; i < HEAPPROF_BLOCKS + 5; i++)
        kept += heapprof_sample(blocks[i], 16, 0x10);
    CHECK_EQ(kept, HEAPPROF_BLOCKS);
    struct heapprof_stats st;
    struct prof_record *r = malloc(HEAPPROF_BLOCKS * sizeof *r);
    CHECK_EQ(heapprof_copy(r, HEAPPROF_BLOCKS, &st), HEAPPROF_BLOCKS);
    CHECK_EQ(st.hs_overflow, 5);
    CHECK_EQ(st.hs_samples, HEAPPROF_BLOCKS + 5);
    heapprof_retire(blocks[17]);
    CHECK(heapprof_sample(blocks[17], 16, 0x10));
    for (unsigned i = 0; i < HEAPPROF_BLOCKS; i++)
        heapprof_retire(blocks[i]);
    CHECK_EQ(heapprof_copy(r, HEAPPROF_BLOCKS, &st), 0);
    CHECK_EQ(st.hs_missing, 0);
    free(r);
}

/* With a `profile allocs` window open to the heap kind, each sample is
 * also recorded through prof_emit; closed, it is not. */
TEST(heapprof_allocs_window_emits)
{
    reset();
    heapprof_set_rate(1);
    heapprof_test_seed(0, 8);
    char b[3][256];
    CHECK(heapprof_sample(b[1], 256, 0x10));
    CHECK_EQ(fake_hp_nemit, 0);
    prof_gate.pg_state = PROF_GATE_KIND(PROF_KIND_HEAP);
    CHECK(heapprof_sample(b[2], 256, 0x10));
    CHECK_EQ(fake_hp_nemit, 1);
    CHECK_EQ(fake_hp_emitted[0].pr_kind, PROF_KIND_HEAP);
    CHECK_EQ(fake_hp_emitted[0].pr_size, 256);
    CHECK_EQ(fake_hp_emitted[0].pr_weight, 256);
    heapprof_retire(b[1]);
    heapprof_retire(b[2]);
    prof_gate.pg_state = 0;
}
