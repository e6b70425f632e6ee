// LINK: kernel/prof/sample.c kernel/prof/trace.c kernel/prof/trace_hooks.c kernel/prof/ring.c kernel/prof/session.c kernel/prof/offcpu.c kernel/prof/offreport.c kernel/prof/wall.c kernel/prof/stream.c kernel/prof/stream_encode.c kernel/prof/report.c kernel/prof/lockreport.c kernel/prof/export.c kernel/prof/fold.c kernel/prof/fold_order.c kernel/prof/quantile.c kernel/prof/fold_index.c kernel/cmd/profile.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c lib/sha256.c kernel/symtab.c tests/unit/fake_profiler.c kernel/stacks.c kernel/stacktrace.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c lib/printf.c lib/parse.c uapi/profile_raw.c kernel/cmd/profile_heap.c kernel/prof/heapview.c mm/heapprof.c tests/unit/fake_heap_table.c kernel/cmd/profile_stream.c uapi/stream_ctl.c kernel/cmd/profile_say.c kernel/irqname.c
/* tests/unit/test_prof_ring.c: the per-CPU SPSC rings (kernel/prof/ring.c)
 * filled by the real sampler (kernel/prof/sample.c): wrap-around (of the
 * slots, and of the indices at 2^32), a full ring that drops and counts
 * and never writes over an undrained record, samples (tick and "NMI")
 * arriving between the drainer's copy and its release, and a drainer
 * never lapped by the sampler; and the counter's NMI landing at each
 * step of another producer on its CPU, kept through the deferral. */
#include "test.h"
#include "fake_hal.h"
#include "fake_profiler.h"
#include "prof_ring_fixture.h"
#include "hal/irq.h"
#include "kernel/prof/trace_hooks.h"
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

/* An NMI nested inside the tick's sample (walk_hook) is kept: deferred,
 * then moved in behind the tick's record as the tick lets go, and no
 * drop for the stream to report. */
static void nested_nmi(void)
{
    nmi(3, 5, PC0 + 1, NULL);
}

TEST(ring_nested_nmi_is_kept)
{
    reset();
    memset(tried, 0, sizeof tried);
    CHECK(begin());
    pmu_claim = true;
    walk_hook = nested_nmi;
    tick(3, 5, PC0, &st_a);
    uint32_t first;
    CHECK_EQ(prof_ring_avail(3, &first), 2);
    CHECK_EQ(prof_ring_at(3, first)->pr_frames[0], PC0);
    CHECK_EQ(prof_ring_at(3, first)->pr_tick, 1);
    CHECK_EQ(prof_ring_at(3, first + 1)->pr_frames[0], PC0 + 1);
    CHECK_EQ(prof_ring_at(3, first + 1)->pr_tick, 0);
    CHECK_EQ(prof_ring_drops(3), 0);
    end();
}

/* ---- a nested producer at each step of the outer write ---------------
 * The counter's NMI (its sample and its slice of a trace) lands at each
 * step of another producer on its CPU (kernel/prof/ring_produce.h's
 * PROF_STEP numbers, through hal/irq.h's nmi_window_inline): a trace's switch, an interrupt's slice, the tick's
 * sample. Whatever the step, every record reaches the ring, none is
 * dropped, the ring is in time order and nothing is left behind. */

#define NEST_CPU 1
#define NEST_PID 7
#define NEST_PC  0x4000u        /* the NMIs' pcs: NEST_PC + their number */

static struct {
    unsigned at[4], n;          /* the steps to fire an NMI at, in order */
    unsigned fired;
    unsigned close_at;          /* close the gate at this step (0: never) */
    bool in_nmi;
} nest;

static void nest_step(unsigned step)
{
    if (nest.in_nmi)
        return;                 /* NMIs do not nest */
    if (nest.close_at == step) {
        nest.close_at = 0;
        prof_ring_close();
    }
    while (nest.fired < nest.n && nest.at[nest.fired] == step) {
        nest.in_nmi = true;
        CHECK(nmi(NEST_CPU, NEST_PID, NEST_PC + nest.fired, NULL));
        nest.in_nmi = false;
        nest.fired++;
    }
}

enum nest_outer { NEST_SWITCH, NEST_SLICE, NEST_TICK };

/* A trace's window on NEST_CPU, the outer producer run with the NMIs
 * fired at the steps given; what the ring holds after it. */
static uint32_t nest_run(enum nest_outer o, const unsigned *at, unsigned n, unsigned close_at)
{
    reset();
    room(64);
    pmu_claim = true;
    fake_run(NEST_CPU, NEST_PID);
    prof_trace_begin(100, 1ull << 32);
    prof_ring_open(PROF_ALL, PROF_GATE_TRACE | PROF_GATE_CPU, false);
    memset(&nest, 0, sizeof nest);
    for (unsigned i = 0; i < n; i++)
        nest.at[i] = at[i];
    nest.n = n;
    nest.close_at = close_at;
    fake_nmi_window_hook = nest_step;
    unsigned long f = irq_save();
    if (o == NEST_SWITCH) {
        prof_trace_switch(NEST_PID, PROF_TRACE_LEFT_SLEEP, NULL, 9);
    } else if (o == NEST_SLICE) {
        prof_trace_irq_enter(33, PROF_TRACE_IRQ_DEVICE);
        prof_trace_irq_exit();
    }
    irq_restore(f);
    if (o == NEST_TICK)
        tick(NEST_CPU, NEST_PID, PC0, NULL);
    fake_nmi_window_hook = NULL;
    CHECK_EQ(nest.fired, n);    /* every NMI asked for landed */
    struct prof_cpu *pc = &prof_cpus[NEST_CPU];
    CHECK_EQ(pc->pc_inside, 0);
    uint32_t first;
    return prof_ring_avail(NEST_CPU, &first);
}

/* The ring after nest_run: the outer's record, then each NMI's sample
 * and slice, in time order, nothing dropped or left waiting. */
static void nest_check(enum nest_outer o, uint32_t recs, unsigned nmis)
{
    CHECK_EQ(recs, 1 + 2 * nmis);
    CHECK_EQ(prof_ring_drops(NEST_CPU), 0);
    CHECK_EQ(prof_cpus[NEST_CPU].pc_din, prof_cpus[NEST_CPU].pc_dout);
    CHECK_EQ(prof_cpus[NEST_CPU].pc_dwait, 0);
    unsigned outer = 0, samples = 0, slices = 0;
    uint64_t last = 0;
    for (uint32_t i = 0; i < recs; i++) {
        const struct prof_record *r = prof_ring_at(NEST_CPU, i);
        CHECK(r->pr_weight >= last);
        last = r->pr_weight;
        if (r->pr_kind == PROF_KIND_CPU && r->pr_tick == 0) {
            CHECK_EQ(r->pr_frames[0], NEST_PC + samples);
            samples++;
        } else if (r->pr_kind == PROF_KIND_TRACE && r->pr_why == PROF_TRACE_IRQ &&
                   r->pr_cost == PROF_TRACE_IRQ_NMI) {
            CHECK(r->pr_frames[0] <= r->pr_weight);     /* entry before exit */
            CHECK_EQ(slices, samples - 1);              /* each NMI's after its sample */
            slices++;
        } else {
            CHECK_EQ(i, 0);     /* the outer's own record comes first */
            if (o == NEST_SWITCH)
                CHECK(r->pr_kind == PROF_KIND_TRACE && r->pr_why == PROF_TRACE_SWITCH);
            else if (o == NEST_SLICE)
                CHECK(r->pr_kind == PROF_KIND_TRACE && r->pr_cost == PROF_TRACE_IRQ_DEVICE);
            else
                CHECK(r->pr_kind == PROF_KIND_CPU && r->pr_tick == 1);
            outer++;
        }
    }
    CHECK_EQ(outer, 1);
    CHECK_EQ(samples, nmis);
    CHECK_EQ(slices, nmis);
}

TEST(ring_nested_at_every_step_of_the_outer_write)
{
    for (unsigned o = NEST_SWITCH; o <= NEST_TICK; o++) {
        for (unsigned step = 1; step <= 6; step++) {
            if (o == NEST_TICK && step == 2)
                continue;       /* the sampler's gate test is its own */
            unsigned at[1] = { step };
            nest_check((enum nest_outer)o, nest_run((enum nest_outer)o, at, 1, 0), 1);
        }
    }
}

/* A second NMI in the middle of the move of the first's records: after
 * the release and before its check (it finds the guard free and records
 * waiting: it moves them first), with the drain's guard taken, between
 * two records moved, at the drain's own release. */
TEST(ring_nested_during_the_move)
{
    static const unsigned second[] = { 6, 7, 8, 9 };
    for (unsigned o = NEST_SWITCH; o <= NEST_TICK; o++) {
        for (unsigned i = 0; i < sizeof second / sizeof second[0]; i++) {
            unsigned at[2] = { 4, second[i] };
            nest_check((enum nest_outer)o, nest_run((enum nest_outer)o, at, 2, 0), 2);
        }
        unsigned at2[2] = { 5, 8 };
        nest_check((enum nest_outer)o, nest_run((enum nest_outer)o, at2, 2, 0), 2);
    }
}

/* The gate closed between the outer's release and its check: the drain
 * moves nothing into a closed window, and the records left in the
 * deferral count as nested drops, exactly. */
TEST(ring_nested_gate_closed_before_the_move)
{
    unsigned at[1] = { 4 };
    uint32_t recs = nest_run(NEST_SWITCH, at, 1, 6);
    CHECK_EQ(recs, 1);
    CHECK_EQ(prof_ring_nested(NEST_CPU), 2);
    CHECK_EQ(prof_ring_drops(NEST_CPU), 2);
    prof_ring_open(PROF_ALL, PROF_GATE_TRACE, false);   /* a new window starts clean */
    CHECK_EQ(prof_ring_drops(NEST_CPU), 0);
    prof_ring_close();
}

/* Three NMIs inside one record: the deferral holds two NMIs' records;
 * the third NMI's sample and slice are nested drops, counted. */
TEST(ring_nested_deferral_full_counts)
{
    unsigned at[3] = { 4, 4, 4 };
    uint32_t recs = nest_run(NEST_SWITCH, at, 3, 0);
    CHECK_EQ(recs, 1 + PROF_DEFER);
    CHECK_EQ(prof_ring_drops(NEST_CPU), 2);
    CHECK_EQ(prof_cpus[NEST_CPU].pc_nested, 2);
    CHECK_EQ(prof_cpus[NEST_CPU].pc_din, prof_cpus[NEST_CPU].pc_dout);
}

/* An NMI that lands between the guard and the clock read of a trace's
 * record is older than it: moved in behind it, it takes its time. */
TEST(ring_nested_before_the_stamp_keeps_time_order)
{
    unsigned at[1] = { 3 };
    uint32_t recs = nest_run(NEST_SWITCH, at, 1, 0);
    CHECK_EQ(recs, 3);
    const struct prof_record *sw = prof_ring_at(NEST_CPU, 0), *s = prof_ring_at(NEST_CPU, 1);
    CHECK_EQ(sw->pr_why, PROF_TRACE_SWITCH);
    CHECK_EQ(s->pr_kind, PROF_KIND_CPU);
    CHECK_EQ(s->pr_weight, sw->pr_weight);      /* raised to the switch's time */
}
