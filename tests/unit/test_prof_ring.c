// LINK: kernel/prof/sample.c kernel/prof/trace.c kernel/prof/trace_hooks.c kernel/prof/ring.c kernel/prof/session.c kernel/prof/offcpu.c kernel/prof/offreport.c kernel/prof/wall.c kernel/prof/stream.c kernel/prof/stream_encode.c kernel/prof/report.c kernel/prof/lockreport.c kernel/prof/export.c kernel/prof/fold.c kernel/prof/fold_order.c kernel/prof/quantile.c kernel/prof/fold_index.c kernel/cmd/profile.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c lib/sha256.c kernel/symtab.c tests/unit/fake_profiler.c kernel/stacks.c kernel/stacktrace.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c lib/printf.c lib/parse.c uapi/profile_raw.c kernel/cmd/profile_heap.c kernel/prof/heapview.c mm/heapprof.c tests/unit/fake_heap_table.c kernel/cmd/profile_stream.c uapi/stream_ctl.c kernel/cmd/profile_say.c kernel/irqname.c
/* tests/unit/test_prof_ring.c: the per-CPU SPSC rings (kernel/prof/ring.c)
 * filled by the real sampler (kernel/prof/sample.c): wrap-around (of the
 * slots, and of the indices at 2^32), a full ring that drops and counts
 * and never writes over an undrained record, samples (tick and "NMI")
 * arriving between the drainer's copy and its release, and a drainer
 * never lapped by the sampler. */
#include "test.h"
#include "fake_hal.h"
#include "fake_profiler.h"
#include "prof_ring_fixture.h"
#include <stdlib.h>

/* Copy up to max records out of cpu's ring, checking each is the next
 * expected pc; between runs after the copy and before the release. */
static uint32_t drain(unsigned cpu, uint32_t max, uint32_t *expect, void (*between)(void))
{
    uint32_t first;
    uint32_t n = prof_ring_avail(cpu, &first);
    CHECK(n <= prof_ring_cap(cpu));
    if (n > max)
        n = max;
    for (uint32_t i = 0; i < n; i++) {
        const struct prof_record *r = prof_ring_at(cpu, first + i);
        CHECK_EQ(r->pr_frames[0], PC0 + *expect);
        CHECK_EQ(r->pr_tick, 1);
        (*expect)++;
    }
    if (between)
        between();
    prof_ring_release(cpu, first + n);
    return n;
}

TEST(ring_sized_for_the_stream)
{
    reset();
    memset(tried, 0, sizeof tried);
    CHECK(begin());
    for (unsigned c = 0; c < 4; c++) {
        CHECK(prof_ring_in_window(c));
        CHECK_EQ(prof_ring_cap(c), PROF_STREAM_MIN_RECS);    /* the tick's 4 x 100 ms is less */
    }
    CHECK(!prof_ring_in_window(4));
    end();
}

TEST(ring_full_drops_and_never_overwrites)
{
    reset();
    memset(tried, 0, sizeof tried);
    CHECK(begin());
    uint32_t cap = prof_ring_cap(0);
    for (uint32_t i = 0; i < cap + 3; i++)
        sample(0);
    uint32_t first;
    CHECK_EQ(prof_ring_avail(0, &first), cap);
    CHECK_EQ(first, 0);
    CHECK_EQ(prof_ring_drops(0), 3);
    /* The oldest record is still the first sample: nothing written over it. */
    CHECK_EQ(prof_ring_at(0, 0)->pr_frames[0], PC0);
    CHECK_EQ(prof_ring_at(0, cap - 1)->pr_frames[0], PC0 + cap - 1);
    uint32_t expect = 0;
    CHECK_EQ(drain(0, 100, &expect, NULL), 100);
    for (int i = 0; i < 100; i++)
        sample(0);                  /* fit in the room drained */
    CHECK_EQ(prof_ring_drops(0), 3);
    expect = 100;
    CHECK_EQ(drain(0, cap - 100, &expect, NULL), cap - 100);
    expect = cap + 3;               /* the three dropped never appear */
    CHECK_EQ(drain(0, cap, &expect, NULL), 100);
    CHECK_EQ(prof_ring_avail(0, &first), 0);
    CHECK_EQ(first, cap + 100);     /* delivered: every record but the drops */
    end();
}

/* Producer and consumer in uneven steps for many laps, the indices
 * starting just below 2^32 so they wrap mid-test: every record comes out
 * once, in order, and the consumer never sees more than a ring's worth. */
TEST(ring_wraps_slots_and_indices)
{
    reset();
    memset(tried, 0, sizeof tried);
    CHECK(begin());
    prof_ring_test_at(1, UINT32_MAX - 700);
    uint32_t cap = prof_ring_cap(1), expect = 0, got = 0, first;
    unsigned x = 7;
    for (int round = 0; round < 400; round++) {
        x = x * 1103515245u + 12345u;
        unsigned produce = (x >> 16) % 100;
        for (unsigned i = 0; i < produce; i++)
            sample(1);
        x = x * 1103515245u + 12345u;
        got += drain(1, (x >> 16) % 120, &expect, NULL);
        /* What the ring says of itself after each drain, against what the
         * test counted on its own: the consumer index is the start plus
         * every record taken out, and what waits is what the sampler made
         * less what was taken out and what was dropped. A drain that
         * releases too few or too many slots, or an avail that miscounts
         * across the wrap, breaks one of the two at the round it happens. */
        CHECK_EQ(prof_ring_avail(1, &first), tried[1] - got - prof_ring_drops(1));
        CHECK_EQ(first, (uint32_t)(UINT32_MAX - 700 + got));
    }
    got += drain(1, cap, &expect, NULL);
    CHECK_EQ(prof_ring_avail(1, &first), 0);
    CHECK_EQ(got, tried[1] - prof_ring_drops(1));
    CHECK_EQ(prof_ring_drops(1), 0);         /* never more than 100 behind */
    CHECK_EQ(first, (uint32_t)(UINT32_MAX - 700 + got));
    CHECK(got > 10 * cap);                   /* many laps, across 2^32 */
    end();
}

/* The sampler interrupts the drainer between its copy and its release:
 * with the ring full, the samples are dropped (the slots being copied are
 * not free yet); once released, the next ones land in the freed slots. */
static unsigned between_cpu;
static void sample_ten(void)
{
    for (int i = 0; i < 10; i++)
        sample(between_cpu);
}

TEST(ring_sampler_between_copy_and_release)
{
    reset();
    memset(tried, 0, sizeof tried);
    CHECK(begin());
    uint32_t cap = prof_ring_cap(2), expect = 0;
    for (uint32_t i = 0; i < cap; i++)
        sample(2);
    between_cpu = 2;
    CHECK_EQ(drain(2, 300, &expect, sample_ten), 300);
    CHECK_EQ(prof_ring_drops(2), 10);
    /* The slots just copied are what they were: re-read them. */
    for (uint32_t i = 0; i < 300; i++)
        CHECK_EQ(prof_ring_at(2, i)->pr_frames[0], PC0 + i);
    sample_ten();                   /* room now: all ten land */
    CHECK_EQ(prof_ring_drops(2), 10);
    CHECK_EQ(drain(2, cap - 300, &expect, NULL), cap - 300);
    expect = cap + 10;
    CHECK_EQ(drain(2, cap, &expect, NULL), 10);
    /* Not full: samples between copy and release take free slots and
     * leave the copied ones alone. */
    CHECK_EQ(drain(2, cap, &expect, sample_ten), 0);
    CHECK_EQ(drain(2, cap, &expect, NULL), 10);
    end();
}

/* An NMI nested inside the tick's sample (walk_hook) is dropped and
 * counted in the drops the stream reports. */
static void nested_nmi(void)
{
    nmi(3, 5, PC0, NULL);
}

TEST(ring_nested_nmi_is_a_drop)
{
    reset();
    memset(tried, 0, sizeof tried);
    CHECK(begin());
    pmu_claim = true;
    walk_hook = nested_nmi;
    tick(3, 5, PC0, &st_a);
    uint32_t first;
    CHECK_EQ(prof_ring_avail(3, &first), 1);
    CHECK_EQ(prof_ring_drops(3), 1);
    end();
}
