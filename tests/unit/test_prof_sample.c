// LINK: kernel/prof/sample.c kernel/prof/trace.c kernel/prof/trace_hooks.c kernel/prof/ring.c kernel/prof/session.c kernel/prof/offcpu.c kernel/prof/offreport.c kernel/prof/wall.c kernel/prof/stream.c kernel/prof/stream_encode.c kernel/prof/report.c kernel/prof/lockreport.c kernel/prof/export.c kernel/prof/fold.c kernel/prof/fold_order.c kernel/prof/quantile.c kernel/prof/fold_index.c kernel/cmd/profile.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c lib/sha256.c kernel/symtab.c tests/unit/fake_profiler.c kernel/stacks.c kernel/stacktrace.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c lib/printf.c lib/parse.c uapi/profile_raw.c kernel/cmd/profile_heap.c kernel/prof/heapview.c mm/heapprof.c tests/unit/fake_heap_table.c kernel/cmd/profile_stream.c uapi/stream_ctl.c kernel/cmd/profile_say.c kernel/irqname.c
/* tests/unit/test_prof_sample.c: the sample path (kernel/prof/sample.c)
 * driven through prof_tick and prof_nmi with fake trap frames during a
 * fake window (sleep_ms runs a callback): re-entry, the counter's arming
 * from the tick, the idle tick, entry with interrupts on; prof_emit; and
 * the kernel's inline capture and walk as every sample takes them, on
 * registered stacks holding good and corrupt frame chains. */
#include "test.h"
#include "fake_hal.h"
#include "fake_profiler.h"
#include <stdio.h>
#include <stdlib.h>

#include "hal/cpu.h"
#include "hal/irq.h"
#include "hal/pmu.h"
#include "kernel/prof/ring.h"
#include "kernel/prof/sample.h"
#include "kernel/prof/session.h"
#include "kernel/stacks.h"
#include "kernel/symtab.h"
#include "lib/printf.h"

/* A windowed run through the session, its report unread: the facts are
 * in the rings. */
static int run(unsigned ms)
{
    buf_printer_init(&bp, out, sizeof out);
    struct prof_window_spec ws = { .ws_kind = PROF_KIND_CPU, .ws_ms = ms, .ws_pid = PROF_ALL,
                                   .ws_chains = 8, .ws_format = PROF_TEXT };
    return prof_window_run(&ws, &bp.pr, NULL);
}

static uint32_t recs(unsigned c)
{
    uint32_t first;
    return prof_ring_avail(c, &first);
}

TEST(sample_reentry_is_deferred_not_nested)
{
    reset();
    pmu_claim = true;
    nested_ret = false;
    window_fn = win_nested;
    CHECK_EQ(run(10), PROF_OK);
    CHECK(nested_ret);                  /* the NMIs were ours, and claimed */
    /* cpu 2 kept the tick's sample, whole, then the NMIs' the deferral
     * held, in the order they came, and counted the one it could not. */
    CHECK_EQ(recs(2), 1 + PROF_DEFER);
    const struct prof_record *r = prof_ring_at(2, 0);
    CHECK_EQ(r->pr_frames[0], 0x2000);
    CHECK_EQ(r->pr_depth, 1);
    CHECK_EQ(r->pr_tick, 1);
    CHECK_EQ(r->pr_pid, 5);
    for (unsigned i = 0; i < PROF_DEFER; i++) {
        r = prof_ring_at(2, 1 + i);
        CHECK_EQ(r->pr_frames[0], 0x3000 + i);
        CHECK_EQ(r->pr_tick, 0);
        CHECK_EQ(r->pr_kind, PROF_KIND_CPU);
        CHECK(r->pr_weight >= prof_ring_at(2, i)->pr_weight);   /* in time order */
    }
    CHECK_EQ(prof_ring_drops(2), 1);
    CHECK_EQ(prof_cpus[2].pc_nested, 1);
    CHECK_EQ(prof_cpus[2].pc_inside, 0);        /* the guard let go */
    CHECK_EQ(prof_cpus[2].pc_din, prof_cpus[2].pc_dout);     /* nothing left behind */
    CHECK_EQ(recs(0) + recs(1) + recs(3), 0);
}

TEST(sample_counter_arms_on_tick_and_tick_stops_sampling)
{
    reset();
    pmu_usable = true;
    pmu_name = "pmu/nmi intel fixed-ctr1";
    window_fn = win_counter;
    CHECK_EQ(run(10), PROF_OK);
    CHECK_EQ(arms_after_first_tick, 1);
    CHECK_EQ(arms, 1);
    CHECK(!nmi_ret_foreign);
    CHECK(nmi_ret_ours);
    /* Neither of cpu 0's ticks sampled (the first armed, the second
     * found the counter armed), nor did the foreign NMI: the one record
     * is the counter's, and cpu 1's claimed overflow left one too. */
    for (unsigned c = 0; c < 2; c++) {
        CHECK_EQ(recs(c), 1);
        CHECK_EQ(prof_ring_at(c, 0)->pr_frames[0], 0x2004);
        CHECK_EQ(prof_ring_at(c, 0)->pr_tick, 0);
        CHECK_EQ(prof_cpus[c].pc_from_tick, 0);
        CHECK_EQ(prof_ring_drops(c), 0);
    }

    /* After Stop: the next tick disarms, once; an overflow still in
     * flight is claimed but not recorded. */
    CHECK(pmu_cpus[0].pc_armed);
    tick(0, 5, 0x3000, NULL);
    CHECK(!pmu_cpus[0].pc_armed);
    CHECK_EQ(disarms, 1);
    tick(0, 5, 0x3000, NULL);
    CHECK_EQ(disarms, 1);
    CHECK(nmi(1, 5, 0x3000, NULL));
    pmu_claim = false;
    CHECK(!nmi(1, 5, 0x3000, NULL));
    CHECK_EQ(recs(0), 1);
    CHECK_EQ(recs(1), 1);
    CHECK_EQ(prof_ring_drops(1), 0);            /* nor counted a drop */
}

TEST(sample_idle_tick_touches_nothing)
{
    reset();
    tick(0, 5, 0x3000, NULL);
    tick(1, 5, 0x3000, NULL);
    CHECK_EQ(arms + disarms, 0);
    /* Not active: an NMI is claimed or not by the counter alone. */
    CHECK(!nmi(0, 5, 0x3000, NULL));
}

/* Called with interrupts on, either entry point could race the sampler on
 * its own CPU: the precondition is checked, not assumed. */
TEST(sample_entry_with_interrupts_on_panics)
{
    reset();
    struct trap_frame tf = frame(0x3000, NULL);
    CHECK(irqs_enabled());
    EXPECT_PANIC(prof_tick(&tf), "irqs_enabled_inline()");
    EXPECT_PANIC(prof_nmi(&tf), "irqs_enabled_inline()");
    CHECK_EQ(arms + disarms, 0);
}

/* prof_emit, the door of the producers other than the sampler: only while
 * the gate is open to the record's kind, through the pid filter, never
 * for the CPU's own kind, a drop when the ring is full or the guard is
 * taken; and the counter's share of a CPU's records leaves them out. */
TEST(emit_other_kinds_through_the_gate)
{
    reset();
    room(256);
    struct prof_record r = { .pr_pid = 5, .pr_depth = 1, .pr_kind = PROF_KIND_MAX,
                             .pr_weight = 4096, .pr_frames = { 0x301a } };
    fake_cpu = 1;
    CHECK(!prof_emit(&r));                          /* gate closed */
    prof_ring_open(PROF_ALL, PROF_GATE_CPU, false);
    CHECK(!prof_emit(&r));                          /* open, not to this kind */
    prof_ring_close();
    prof_ring_open(PROF_ALL, PROF_GATE_CPU | PROF_GATE_KIND(PROF_KIND_MAX), false);
    CHECK(prof_emit(&r));
    struct prof_record cpu = r;
    cpu.pr_kind = PROF_KIND_CPU;
    CHECK(!prof_emit(&cpu));                        /* the sampler's kind: not here */
    CHECK_EQ(fake_irq_depth, 0);                    /* interrupts restored */
    tick(1, 5, 0x3010, NULL);                       /* a CPU sample beside it */
    uint32_t first;
    CHECK_EQ(prof_ring_avail(1, &first), 2);
    CHECK_EQ(prof_ring_at(1, first)->pr_weight, 4096);
    CHECK_EQ(prof_cpus[1].pc_other, 1);
    CHECK_EQ(prof_cpus[1].pc_from_tick, 1);
    prof_ring_test_set_inside(1, true);             /* a producer inside: nested */
    uint32_t drops = prof_ring_drops(1);
    CHECK(!prof_emit(&r));
    CHECK_EQ(prof_ring_drops(1), drops + 1);
    prof_ring_test_set_inside(1, false);
    prof_ring_close();
    prof_ring_open(7, PROF_GATE_KIND(PROF_KIND_MAX), false);
    CHECK(!prof_emit(&r));                          /* pid 5 filtered out */
    r.pr_pid = 7;
    for (unsigned i = 0; i < prof_ring_cap(1); i++)
        CHECK(prof_emit(&r));
    drops = prof_ring_drops(1);
    CHECK(!prof_emit(&r));                          /* full: a drop */
    CHECK_EQ(prof_ring_drops(1), drops + 1);
    prof_ring_close();
    /* The filter's gate bit: a wanted pid of a kind not open is still
     * refused, and the next run without a filter takes every pid. */
    prof_ring_open(7, PROF_GATE_CPU, false);
    CHECK(!prof_emit(&r));
    prof_ring_close();
    prof_ring_open(PROF_ALL, PROF_GATE_KIND(PROF_KIND_MAX), false);
    r.pr_pid = 5;
    CHECK(prof_emit(&r));
    prof_ring_close();
    CHECK(!prof_emit(&r));                          /* closed again */
    fake_cpu = 0;
}

/* ---- the capture and the walk, as every sample takes them -----------
 *
 * prof_tick and prof_nmi run the kernel's inline capture
 * (kernel/stacktrace_inline.h) on stacks registered as kernel/stacks.c
 * keeps them: cpu 1's task stack (its task slot) and its IRQ stack (its
 * own fixed set). Each scene takes one sample and the record it left in
 * cpu 1's ring must hold exactly the interrupted pc and the valid
 * frames, whatever the chain does after them. The two words above each
 * region hold bait, a return address inside text that only a walk
 * reading past the region's top would record; `nowhere` is in no stack
 * and holds a record a walk must never follow. */
#define SW   64
#define SREG (SW - 2)                  /* the registered words */
#define R(k) (0x1000u + 0x10u * (k))   /* return addresses in the fake text */
#define BAIT 0x1ff0u
#define PC   0x3010u                   /* burn_inner+0x10 */
#define NOT_TEXT 0xdead0000u

struct wstack {
    int id;
    uint64_t w[SW];
};
static struct wstack tsk, irqstk;
static uint64_t nowhere[4];

static uintptr_t W(struct wstack *s, unsigned i) { return (uintptr_t)&s->w[i]; }

/* The frame record at word i of s: the caller's fp, the return address. */
static void rec(struct wstack *s, unsigned i, uintptr_t next, uintptr_t ret)
{
    s->w[i] = next;
    s->w[i + 1] = ret;
}

static void wstack_open(struct wstack *s, enum stack_kind kind)
{
    memset(s->w, 0, sizeof s->w);
    s->w[SREG] = BAIT;
    s->w[SREG + 1] = BAIT;
    s->id = stack_register(W(s, 0), W(s, SREG), kind, 1, "walk", false);
    CHECK(s->id >= 0);
}

/* The context at fp, sp on cpu 1: fp == sp unless a scene says, so the
 * leaf's bytes are not looked at (st_leaf_is_moot). */
static struct trap_frame ctx(uintptr_t pc, uintptr_t sp, uintptr_t fp)
{
    return (struct trap_frame){ pc, sp, fp };
}

/* The newest record in cpu 1's ring is exactly want[0..n), from pid 9,
 * taken by the tick (or the counter). */
static bool newest_is(const uintptr_t *want, unsigned n, bool from_tick)
{
    uint32_t first, avail = prof_ring_avail(1, &first);
    if (avail == 0)
        return false;
    const struct prof_record *r = prof_ring_at(1, first + avail - 1);
    bool ok = r->pr_depth == n && r->pr_pid == 9 && r->pr_tick == from_tick &&
              r->pr_kind == PROF_KIND_CPU && prof_record_weight(r) == 1;
    for (unsigned k = 0; ok && k < n; k++)
        ok = r->pr_frames[k] == want[k];
    if (!ok) {
        fprintf(stderr, "  record: depth %u pid %d tick %u:", r->pr_depth, r->pr_pid, r->pr_tick);
        for (unsigned k = 0; k < r->pr_depth && k < PROF_FRAMES; k++)
            fprintf(stderr, " %#lx", (unsigned long)r->pr_frames[k]);
        fprintf(stderr, "\n");
    }
    return ok;
}

#define SAMPLE_IS(tf, ...)                                                \
    do {                                                                  \
        static const uintptr_t want_[] = { __VA_ARGS__ };                 \
        struct trap_frame tf_ = (tf);                                     \
        uint32_t f_, before_ = prof_ring_avail(1, &f_);                   \
        tick_at(1, 9, &tf_);                                              \
        CHECK_EQ(prof_ring_avail(1, &f_), before_ + 1);                   \
        CHECK(newest_is(want_, sizeof want_ / sizeof want_[0], true));    \
    } while (0)

static void walk_scenes_open(void)
{
    reset();
    wstack_open(&tsk, STACK_TASK);
    wstack_open(&irqstk, STACK_IRQ);       /* owner 1: cpu 1's own */
    fake_cpu = 1;
    stack_cpu_switch(tsk.id);
    nowhere[0] = 0;
    nowhere[1] = R(9);
    struct buf_printer b;
    char o[128];
    buf_printer_init(&b, o, sizeof o);
    CHECK_EQ(prof_ring_grow(PROF_RING_MIN, NULL), PROF_OK);
    CHECK(prof_ring_open(PROF_ALL, PROF_GATE_CPU, false) > 0);
}

static void walk_scenes_close(void)
{
    prof_ring_close();
    stack_unregister(tsk.id);
    stack_unregister(irqstk.id);
}

TEST(sample_walk_keeps_exactly_the_valid_frames)
{
    walk_scenes_open();
    uintptr_t t20 = W(&tsk, 20);

    /* A whole chain, to its null fp. */
    rec(&tsk, 20, W(&tsk, 26), R(1));
    rec(&tsk, 26, W(&tsk, 32), R(2));
    rec(&tsk, 32, 0, R(3));
    SAMPLE_IS(ctx(PC, t20, t20), PC, R(1), R(2), R(3));

    /* A fp outside any stack: its record is never read. */
    rec(&tsk, 20, (uintptr_t)nowhere, R(1));
    SAMPLE_IS(ctx(PC, t20, t20), PC, R(1));
    rec(&tsk, 20, 0xdead0000beef0000ull, R(1));
    SAMPLE_IS(ctx(PC, t20, t20), PC, R(1));

    /* Loops: a record pointing at itself, two pointing at each other. */
    rec(&tsk, 20, t20, R(1));
    SAMPLE_IS(ctx(PC, t20, t20), PC, R(1));
    rec(&tsk, 20, W(&tsk, 26), R(1));
    rec(&tsk, 26, t20, R(2));
    SAMPLE_IS(ctx(PC, t20, t20), PC, R(1), R(2));

    /* Misaligned, next or first. (A first fp that is not sp has the
     * leaf decoder look at the bytes at pc: a pc outside text has none.) */
    rec(&tsk, 20, W(&tsk, 26) + 4, R(1));
    rec(&tsk, 26, 0, R(2));
    SAMPLE_IS(ctx(PC, t20, t20), PC, R(1));
    SAMPLE_IS(ctx(0x20000, t20, t20 + 4), 0x20000);

    /* Backwards: the caller's record below the callee's. */
    rec(&tsk, 32, W(&tsk, 26), R(3));
    rec(&tsk, 26, 0, R(2));
    SAMPLE_IS(ctx(PC, W(&tsk, 32), W(&tsk, 32)), PC, R(3));
    /* A first fp below sp: a record of no live frame. */
    rec(&tsk, 20, 0, R(1));
    SAMPLE_IS(ctx(0x20000, W(&tsk, 26), t20), 0x20000);

    /* A record straddling the top: its return address would be bait. */
    rec(&tsk, 20, W(&tsk, SREG - 1), R(1));
    tsk.w[SREG - 1] = 0;
    SAMPLE_IS(ctx(PC, t20, t20), PC, R(1));
    /* The last whole record below the top is fine. */
    rec(&tsk, 20, W(&tsk, SREG - 2), R(1));
    rec(&tsk, SREG - 2, 0, R(2));
    SAMPLE_IS(ctx(PC, t20, t20), PC, R(1), R(2));

    /* A return address outside text ends the chain before it. */
    rec(&tsk, 20, W(&tsk, 26), R(1));
    rec(&tsk, 26, W(&tsk, 32), NOT_TEXT);
    rec(&tsk, 32, 0, R(3));
    SAMPLE_IS(ctx(PC, t20, t20), PC, R(1));

    /* Deeper than a record holds: pc and the first 7. */
    for (unsigned k = 0; k < 10; k++)
        rec(&tsk, 10 + 4 * k, k < 9 ? W(&tsk, 14 + 4 * k) : 0, R(k + 1));
    SAMPLE_IS(ctx(PC, W(&tsk, 10), W(&tsk, 10)),
              PC, R(1), R(2), R(3), R(4), R(5), R(6), R(7));

    /* sp on no registered stack: the pc alone, nothing read. */
    SAMPLE_IS(ctx(PC, (uintptr_t)nowhere, (uintptr_t)nowhere), PC);
    walk_scenes_close();
}

TEST(sample_walk_crosses_only_out_of_an_interrupt_stack)
{
    walk_scenes_open();
    uintptr_t i10 = W(&irqstk, 10);

    /* An interrupt handler's chain, then the task it interrupted. */
    rec(&irqstk, 10, W(&irqstk, 16), R(4));
    rec(&irqstk, 16, W(&tsk, 20), R(5));
    rec(&tsk, 20, W(&tsk, 26), R(6));
    rec(&tsk, 26, 0, R(7));
    SAMPLE_IS(ctx(PC, i10, i10), PC, R(4), R(5), R(6), R(7));
    /* Once on the task stack its rules hold: no way back up. */
    rec(&tsk, 26, W(&irqstk, 30), R(7));
    rec(&irqstk, 30, 0, R(8));
    SAMPLE_IS(ctx(PC, i10, i10), PC, R(4), R(5), R(6), R(7));
    /* Out of the interrupt stack into no stack: the walk ends. */
    rec(&irqstk, 16, (uintptr_t)nowhere, R(5));
    SAMPLE_IS(ctx(PC, i10, i10), PC, R(4), R(5));
    /* Into the other stack's straddling top: refused as in its own. */
    rec(&irqstk, 16, W(&tsk, SREG - 1), R(5));
    tsk.w[SREG - 1] = 0;
    SAMPLE_IS(ctx(PC, i10, i10), PC, R(4), R(5));
    /* A task stack never crosses, not even into an interrupt stack. */
    uintptr_t t20 = W(&tsk, 20);
    rec(&tsk, 20, W(&irqstk, 30), R(1));
    SAMPLE_IS(ctx(PC, t20, t20), PC, R(1));
    walk_scenes_close();
}

/* The counter's NMI takes the same capture once the inline claim said
 * the overflow is ours; a foreign NMI records nothing. */
TEST(sample_nmi_claims_then_captures)
{
    walk_scenes_open();
    uintptr_t t20 = W(&tsk, 20);
    rec(&tsk, 20, W(&tsk, 26), R(1));
    rec(&tsk, 26, t20, R(2));                /* a loop back */
    fake_cpu = 1;
    fake_irqs_off(pmu_arm);
    struct trap_frame tf = ctx(PC, t20, t20);
    uint32_t first;
    pmu_claim = false;
    CHECK(!nmi_at(1, 9, &tf));
    CHECK_EQ(prof_ring_avail(1, &first), 0);
    CHECK_EQ(pmu_cpus[1].pc_claims, 0);
    pmu_claim = true;
    CHECK(nmi_at(1, 9, &tf));
    CHECK_EQ(prof_ring_avail(1, &first), 1);
    CHECK_EQ(pmu_cpus[1].pc_claims, 1);
    static const uintptr_t want[] = { PC, R(1), R(2) };
    CHECK(newest_is(want, 3, false));
    walk_scenes_close();
}

/* A sample on a function's first instruction (x86-64: push %rbp not yet
 * run): fp is still the caller's, so the caller itself comes from the
 * return address at sp, found by the leaf decoder over the bytes at pc
 * (kernel/stacktrace.c, arch/x86_64/unwind.c), then the walk goes on. */
TEST(sample_leaf_entry_takes_the_caller_from_the_stack)
{
    static uint8_t text[0x100];
    walk_scenes_open();
    memset(text, 0x90, sizeof text);            /* nop */
    static const uint8_t prologue[] = { 0x55, 0x48, 0x89, 0xe5 };  /* push %rbp; mov %rsp,%rbp */
    memcpy(&text[0x40], prologue, sizeof prologue);
    uintptr_t t = (uintptr_t)text;
    symtab_test_text_lo = t;
    symtab_test_text_hi = t + sizeof text;
    tsk.w[18] = t + 0x80;                       /* the call's return, at sp */
    rec(&tsk, 20, W(&tsk, 26), t + 0x90);       /* the caller's own frame */
    rec(&tsk, 26, 0, t + 0xa0);
    struct trap_frame tf = ctx(t + 0x40, W(&tsk, 18), W(&tsk, 20));
    tick_at(1, 9, &tf);
    const uintptr_t want[] = { t + 0x40, t + 0x80, t + 0x90, t + 0xa0 };
    CHECK(newest_is(want, 4, true));
    /* After push %rbp; mov %rsp,%rbp the frame is the function's own:
     * the same chain from the walk alone. */
    rec(&tsk, 18, W(&tsk, 20), t + 0x80);
    tf = ctx(t + 0x44, W(&tsk, 18), W(&tsk, 18));
    tick_at(1, 9, &tf);
    const uintptr_t framed[] = { t + 0x44, t + 0x80, t + 0x90, t + 0xa0 };
    CHECK(newest_is(framed, 4, true));
    walk_scenes_close();
}
