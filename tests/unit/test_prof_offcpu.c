// LINK: kernel/prof/sample.c kernel/prof/trace.c kernel/prof/trace_hooks.c kernel/prof/ring.c kernel/prof/session.c kernel/prof/offcpu.c kernel/prof/offcpu_hooks.c kernel/prof/offreport.c kernel/prof/wall.c kernel/prof/stream.c kernel/prof/stream_encode.c kernel/prof/report.c kernel/prof/lockreport.c kernel/prof/export.c kernel/prof/fold.c kernel/prof/fold_order.c kernel/prof/quantile.c kernel/prof/fold_index.c kernel/cmd/profile.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c lib/sha256.c kernel/symtab.c tests/unit/fake_profiler.c kernel/stacks.c kernel/stacktrace.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c lib/printf.c lib/parse.c uapi/profile_raw.c kernel/cmd/profile_heap.c kernel/prof/heapview.c mm/heapprof.c tests/unit/fake_heap_table.c kernel/cmd/profile_stream.c uapi/stream_ctl.c kernel/cmd/profile_say.c kernel/irqname.c
/* tests/unit/test_prof_offcpu.c: the off-CPU accounting's state machine
 * (kernel/prof/offcpu.c) against a fake clock: the times are the
 * arguments, so every figure below is exact. Sleep, wait queue, mutex,
 * preemption, a wake before the switch-out completes, a task killed (left
 * blocked) at the window's end, clipping at both ends, and the records'
 * way into a ring that wraps. */
#include "test.h"
#include "kernel/irqname.h"
#include "fake_hal.h"
#include "fake_profiler.h"
#include "kernel/prof/offcpu.h"
#include "kernel/prof/ring_produce.h"
#include "kernel/prof/sample.h"
#include "kernel/prof/session.h"
#include "kernel/prof/trace_hooks.h"

static const uintptr_t chain[3] = { 0xa100, 0xa200, 0xa300 };
static const uintptr_t wchain[2] = { 0xb100, 0xb200 };
static struct prof_record recs[PROF_OFF_RECS];

/* The fake clock's unit is one ns (32.32: 1.0). */
#define NS_1 (1ull << 32)

/* The state machine's steps as its contract (kernel/prof/offcpu.h) has
 * them: the switch clips its clock once, to the window's end
 * (prof_off_clip_end); a wake that names its waker gets the waker's
 * chain written into the task; the switch-in and the window's end put
 * their records into slots whose first holds the task's chain. The
 * scheduler's own hooks over it, which write this CPU's ring, are
 * tested in test_prof_offcpu_hooks.c, and drive the reports below. */
static void switch_out(struct prof_off *o, bool running, uint64_t now)
{
    prof_off_out(o, running, prof_off_clip_end(now));
}

static void wake(struct prof_off *o, bool on_cpu, uint64_t now, int waker,
                 const uintptr_t *frames, unsigned depth)
{
    if (!prof_off_wake(o, on_cpu, now, waker))
        return;
    for (unsigned i = 0; i < depth; i++)
        o->of_wframes[i] = frames[i];
    o->of_wdepth = (uint8_t)depth;
}

/* A ring of four slots whose reservation starts at the last: the records of
 * one interval wrap round its end, as they may in a CPU's ring. Frames
 * past a record's depth hold garbage, as a reused slot does. */
static struct prof_record slots[4];

static unsigned put(struct prof_off *o, const struct prof_off_owed *d, unsigned n, int pid,
                    const uintptr_t *ch, unsigned depth)
{
    memset(slots, 0xa5, sizeof slots);
    memset(recs, 0, sizeof recs);
    CHECK(n <= PROF_OFF_RECS);
    struct prof_record *copy = prof_off_put(o, d, pid, slots, 3, 3);
    for (unsigned i = 0; i < depth; i++)
        slots[3].pr_frames[i] = ch[i];
    prof_off_put_chain(&slots[3], copy, depth);
    for (unsigned i = 0; i < n; i++)
        recs[i] = slots[(3 + i) & 3];
    if (n < PROF_OFF_RECS)      /* nothing written past the n reserved */
        CHECK_EQ(slots[(3 + n) & 3].pr_pid, (int32_t)0xa5a5a5a5);
    return n;
}

static unsigned switch_in(struct prof_off *o, int pid, uint64_t now, const uintptr_t *ch,
                   unsigned depth)
{
    struct prof_off_owed d;
    unsigned n = prof_off_in(o, prof_off_clip_end(now), &d);
    return n ? put(o, &d, n, pid, ch, depth) : 0;
}

static unsigned finish(struct prof_off *o, int pid, bool blocked, const uintptr_t *ch,
                       unsigned depth)
{
    struct prof_off_owed d;
    unsigned n = prof_off_finish(o, blocked, &d);
    return n ? put(o, &d, n, pid, ch, depth) : 0;
}

/* A task that has never been seen by any window. */
static struct prof_off fresh(void)
{
    struct prof_off o;
    memset(&o, 0, sizeof o);
    return o;
}

static void check_rec(const struct prof_record *r, unsigned why, uint64_t w, int waker)
{
    CHECK_EQ(r->pr_kind, PROF_KIND_OFFCPU);
    CHECK_EQ(r->pr_pid, 7);
    CHECK_EQ(r->pr_why, why);
    CHECK_EQ(r->pr_weight, w);
    CHECK_EQ(r->pr_waker, waker);
}

static void check_chain(const struct prof_record *r)
{
    CHECK_EQ(r->pr_depth, 3);
    CHECK_EQ(r->pr_frames[0], 0xa100);
    CHECK_EQ(r->pr_frames[1], 0xa200);
    CHECK_EQ(r->pr_frames[2], 0xa300);
}

TEST(off_sleep_blocked_then_runnable)
{
    struct prof_off o = fresh();
    prof_off_begin(1000, NS_1);
    prof_off_wait(&o, PROF_WHY_SLEEP, NULL);
    switch_out(&o, false, 2000);
    wake(&o, false, 22000, 0, NULL, 0);        /* the tick */
    unsigned n = switch_in(&o, 7, 23000, chain, 3);
    CHECK_EQ(n, 2);
    check_rec(&recs[0], PROF_WHY_SLEEP, 20000, 0);
    check_chain(&recs[0]);
    CHECK(recs[0].pr_name == NULL);
    check_rec(&recs[1], PROF_WHY_RUNNABLE, 1000, -1);
    check_chain(&recs[1]);
    /* Back on the CPU: nothing more is owed, not even at the end. */
    prof_off_end(50000);
    CHECK_EQ(switch_in(&o, 7, 50000, chain, 3), 0);
}

static void waited(unsigned why, const char *name)
{
    struct prof_off o = fresh();
    prof_off_begin(1000, NS_1);
    prof_off_wait(&o, why, name);
    switch_out(&o, false, 2000);
    wake(&o, false, 32000, 9, wchain, 2);
    unsigned n = switch_in(&o, 7, 32500, chain, 3);
    CHECK_EQ(n, 3);
    check_rec(&recs[0], why, 30000, 9);
    CHECK_STR(recs[0].pr_name, name);
    check_rec(&recs[1], PROF_WHY_WAKER, 30000, 9);
    CHECK_EQ(recs[1].pr_depth, 2);
    CHECK_EQ(recs[1].pr_frames[0], 0xb100);
    CHECK_EQ(recs[1].pr_frames[1], 0xb200);
    check_rec(&recs[2], PROF_WHY_RUNNABLE, 500, -1);
}

TEST(off_waitq_names_queue_and_waker)
{
    waited(PROF_WHY_WAITQ, "virtio-rx");
}

TEST(off_mutex_names_mutex_and_waker)
{
    waited(PROF_WHY_MUTEX, "entropy");
}

TEST(off_preempted_is_runnable_all_along)
{
    struct prof_off o = fresh();
    prof_off_begin(1000, NS_1);
    prof_off_wait(&o, PROF_WHY_SLEEP, NULL);    /* an old wait: not this one */
    switch_out(&o, true, 5000);
    CHECK_EQ(switch_in(&o, 7, 7000, chain, 3), 1);
    check_rec(&recs[0], PROF_WHY_PREEMPTED, 2000, -1);
    check_chain(&recs[0]);
}

/* The switch path's inline case (prof_off_in_preempted) takes only a
 * task preempted in this window, with prof_off_in's weight, and leaves
 * every other state untouched for prof_off_in. */
TEST(off_preempted_fast_case_agrees)
{
    struct prof_off o = fresh();
    uint64_t w = 1;
    prof_off_begin(1000, NS_1);
    CHECK(!prof_off_in_preempted(&o, 2000, &w));        /* stale: not this window's */
    CHECK_EQ(w, 1);
    CHECK_EQ(o.of_gen, 0);
    switch_out(&o, true, 5000);
    CHECK(prof_off_in_preempted(&o, prof_off_clip_end(7000), &w));
    CHECK_EQ(w, 2000);
    CHECK_EQ(o.of_phase, PROF_OFF_ON);
    CHECK(!prof_off_in_preempted(&o, 7500, &w));        /* on its CPU: nothing */
    /* Blocked, then woken: not the inline case, and still owed. */
    prof_off_wait(&o, PROF_WHY_SLEEP, NULL);
    switch_out(&o, false, 8000);
    wake(&o, false, 9000, 0, NULL, 0);
    CHECK(!prof_off_in_preempted(&o, 9500, &w));
    CHECK_EQ(switch_in(&o, 7, 9500, chain, 3), 2);
    check_rec(&recs[0], PROF_WHY_SLEEP, 1000, 0);
    /* Preempted, but clipped at the window's end: nothing past it. */
    switch_out(&o, true, 10000);
    prof_off_end(10400);
    CHECK(prof_off_in_preempted(&o, prof_off_clip_end(12000), &w));
    CHECK_EQ(w, 400);
}

/* The waker runs on another CPU between the sleeper's "I sleep" and its
 * switch-out: the task was never blocked, only runnable from the
 * switch-out, and the wake still names its waker for nothing. */
TEST(off_wake_before_switch_out_completes)
{
    struct prof_off o = fresh();
    prof_off_begin(1000, NS_1);
    prof_off_wait(&o, PROF_WHY_WAITQ, "udpshell");
    wake(&o, true, 3000, 4, wchain, 2);
    switch_out(&o, true, 3500);               /* state RUNNABLE by then */
    CHECK_EQ(switch_in(&o, 7, 4000, chain, 3), 1);
    check_rec(&recs[0], PROF_WHY_RUNNABLE, 500, -1);
    /* The same across the window's start: woken before it, gone after. */
    o = fresh();
    prof_off_wait(&o, PROF_WHY_WAITQ, "udpshell");
    prof_off_begin(10000, NS_1);
    wake(&o, true, 12000, 4, wchain, 2);
    switch_out(&o, true, 13000);
    CHECK_EQ(switch_in(&o, 7, 13250, chain, 3), 1);
    check_rec(&recs[0], PROF_WHY_RUNNABLE, 250, -1);
}

/* kill only asks a task to stop: one killed while blocked stays blocked
 * until the window's end, which charges it up to there with no waker,
 * and nothing after (its exit never switches it in again). */
TEST(off_killed_while_blocked_is_charged_to_the_end)
{
    struct prof_off o = fresh();
    prof_off_begin(1000, NS_1);
    prof_off_wait(&o, PROF_WHY_MUTEX, "bench");
    switch_out(&o, false, 4000);
    CHECK_EQ(finish(&o, 7, true, chain, 3), 0);  /* not ended yet */
    prof_off_end(9000);
    CHECK_EQ(finish(&o, 7, true, chain, 3), 1);
    check_rec(&recs[0], PROF_WHY_MUTEX, 5000, -1);
    check_chain(&recs[0]);
    /* Done for this window: its wake and switch-in owe nothing more. */
    wake(&o, false, 9500, 3, wchain, 2);
    CHECK_EQ(switch_in(&o, 7, 9600, chain, 3), 0);
    CHECK_EQ(finish(&o, 7, true, chain, 3), 0);
}

TEST(off_clipped_to_the_window_start)
{
    /* Asleep before the window, woken in it: blocked from its start. */
    struct prof_off o = fresh();
    prof_off_wait(&o, PROF_WHY_SLEEP, NULL);
    prof_off_begin(1000, NS_1);
    wake(&o, false, 3000, 0, NULL, 0);
    CHECK_EQ(switch_in(&o, 7, 3500, chain, 3), 2);
    check_rec(&recs[0], PROF_WHY_SLEEP, 2000, 0);
    check_rec(&recs[1], PROF_WHY_RUNNABLE, 500, -1);
    /* Runnable before the window, run in it: runnable from its start. */
    prof_off_begin(10000, NS_1);
    CHECK_EQ(switch_in(&o, 7, 14000, chain, 3), 1);
    check_rec(&recs[0], PROF_WHY_RUNNABLE, 4000, -1);
    /* A new window forgets the last one's state: a task left runnable at
     * the last window's end and run in this one counts from its start. */
    switch_out(&o, true, 15000);
    prof_off_begin(20000, NS_1);
    CHECK_EQ(switch_in(&o, 7, 20100, chain, 3), 1);
    check_rec(&recs[0], PROF_WHY_RUNNABLE, 100, -1);
}

TEST(off_clipped_to_the_window_end)
{
    /* Woken and run after the end: blocked up to the end, no more. */
    struct prof_off o = fresh();
    prof_off_begin(1000, NS_1);
    prof_off_wait(&o, PROF_WHY_SLEEP, NULL);
    switch_out(&o, false, 2000);
    prof_off_end(5000);
    wake(&o, false, 6000, 0, NULL, 0);
    CHECK_EQ(switch_in(&o, 7, 7000, chain, 3), 1);
    check_rec(&recs[0], PROF_WHY_SLEEP, 3000, 0);
    /* Woken in the window, still runnable at its end: both parts. */
    o = fresh();
    prof_off_begin(10000, NS_1);
    prof_off_wait(&o, PROF_WHY_WAITQ, "console-rx");
    switch_out(&o, false, 11000);
    wake(&o, false, 12000, 3, wchain, 2);
    prof_off_end(12600);
    CHECK_EQ(finish(&o, 7, false, chain, 3), 3);
    check_rec(&recs[0], PROF_WHY_WAITQ, 1000, 3);
    check_rec(&recs[1], PROF_WHY_WAKER, 1000, 3);
    check_rec(&recs[2], PROF_WHY_RUNNABLE, 600, -1);
    /* Away the whole window: all of it, blocked or runnable. */
    o = fresh();
    prof_off_wait(&o, PROF_WHY_SLEEP, NULL);
    prof_off_begin(20000, NS_1);
    prof_off_end(30000);
    CHECK_EQ(finish(&o, 7, true, chain, 3), 1);
    check_rec(&recs[0], PROF_WHY_SLEEP, 10000, -1);
    o = fresh();
    prof_off_begin(40000, NS_1);
    prof_off_end(45000);
    CHECK_EQ(finish(&o, 7, false, chain, 3), 1);
    check_rec(&recs[0], PROF_WHY_RUNNABLE, 5000, -1);
    /* Switched out after the end: nothing owed. */
    o = fresh();
    prof_off_begin(50000, NS_1);
    switch_in(&o, 7, 50000, chain, 3);
    prof_off_end(51000);
    switch_out(&o, true, 52000);
    CHECK_EQ(switch_in(&o, 7, 53000, chain, 3), 0);
}

/* The clock is kept raw and only a record's weight becomes ns, by one
 * 32.32 multiply: exact for a unit of 1.5 ns, without overflow over
 * minutes of a GHz clock, and a part that rounds to 0 ns is no record. */
TEST(off_weights_converted_from_the_clock)
{
    struct prof_off o = fresh();
    prof_off_begin(1000, 3ull << 31);                    /* 1.5 ns a unit */
    prof_off_wait(&o, PROF_WHY_SLEEP, NULL);
    switch_out(&o, false, 2000);
    wake(&o, false, 22000, 0, NULL, 0);
    CHECK_EQ(switch_in(&o, 7, 23000, chain, 3), 2);
    check_rec(&recs[0], PROF_WHY_SLEEP, 30000, 0);
    check_rec(&recs[1], PROF_WHY_RUNNABLE, 1500, -1);
    /* 3 GHz for 200 s: 6e11 units, 2e11 ns. */
    o = fresh();
    prof_off_begin(1000, (1000ull << 32) / 3000);
    switch_out(&o, true, 1000);
    CHECK_EQ(switch_in(&o, 7, 1000 + 600000000000ull, chain, 3), 1);
    uint64_t ns = recs[0].pr_weight;
    CHECK(ns >= 199999999000ull && ns <= 200000000000ull);
    /* A unit of 1/3 ns: two units are no whole ns, so no record. */
    o = fresh();
    prof_off_begin(1000, (1000ull << 32) / 3000);
    switch_out(&o, true, 5000);
    CHECK_EQ(switch_in(&o, 7, 5002, chain, 3), 0);
}

TEST(off_why_names)
{
    CHECK_STR(prof_why_name(PROF_WHY_SLEEP), "sleep");
    CHECK_STR(prof_why_name(PROF_WHY_PREEMPTED), "preempted");
    CHECK(prof_why_name(PROF_WHY_NONE) == NULL);
    CHECK(prof_why_name(PROF_WHY_MAX + 1) == NULL);
}

/* An interval's records go into a ring together or not at all, side by
 * side across the slots' end and the indices' wrap at 2^32. */
TEST(off_records_wrap_the_ring_together)
{
    reset();
    room(256);
    struct prof_off o = fresh();
    struct prof_off_owed d;
    prof_off_begin(1000, NS_1);
    prof_off_wait(&o, PROF_WHY_WAITQ, "virtio-rx");
    switch_out(&o, false, 2000);
    wake(&o, false, 3000, 9, wchain, 2);
    /* The state before the switch-in, put back before each: every
     * switch-in below owes the same three records. */
    static struct fake_task ft;
    struct prof_task v = fake_task_view(&ft, 7, chain, 3);
    ft.ft_off = o;
    unsigned n = prof_off_in(&o, prof_off_clip_end(3100), &d);
    CHECK_EQ(n, 3);
    fake_cpu = 2;
    prof_ring_open(PROF_ALL, PROF_GATE_KIND(PROF_KIND_OFFCPU), false);
    uint32_t cap = prof_ring_cap(2);
    prof_ring_test_at(2, UINT32_MAX - 1);        /* two slots before 2^32 */
    struct prof_off before = ft.ft_off;
    for (uint32_t i = 0; i + n <= cap; i += n) {
        ft.ft_off = before;
        prof_sched_in(v.pt_off, v.pt_pid, v.pt_stack, v.pt_saved_sp, prof_off_clip_end(3100));
    }
    uint32_t first, avail = prof_ring_avail(2, &first);
    CHECK_EQ(avail, cap / n * n);
    static const uint8_t why[3] = { PROF_WHY_WAITQ, PROF_WHY_WAKER, PROF_WHY_RUNNABLE };
    static const uint64_t w[3] = { 1000, 1000, 100 };
    for (uint32_t i = 0; i < avail; i++) {
        const struct prof_record *r = prof_ring_at(2, first + i);
        CHECK_EQ(r->pr_why, why[i % n]);
        CHECK_EQ(r->pr_weight, w[i % n]);
        CHECK_EQ(r->pr_frames[0], i % n == 1 ? 0xb100 : 0xa100);
        CHECK_EQ(r->pr_depth, i % n == 1 ? 2 : 3);
    }
    /* No room for the whole interval: none of it, one drop. */
    uint32_t drops = prof_ring_drops(2);
    ft.ft_off = before;
    prof_sched_in(v.pt_off, v.pt_pid, v.pt_stack, v.pt_saved_sp, prof_off_clip_end(3100));
    CHECK_EQ(prof_ring_drops(2), drops + 1);
    CHECK_EQ(prof_ring_avail(2, &first), avail);
    /* prof_emit_n, on the same reservation, likewise. */
    CHECK_EQ(put(&o, &d, n, 7, chain, 3), n);
    CHECK(!prof_emit_n(recs, n));
    CHECK_EQ(prof_ring_drops(2), drops + 2);
    prof_ring_close();
    fake_cpu = 0;
}

/* ---- the reports, through `profile off|wall|latency` ------------------ */

static struct fake_task task5, idle5;
static const uintptr_t chain5[3] = { 0x3010, 0x2044, 0x1100 };   /* burn_inner, mid, outer */
static const uintptr_t wake7[1] = { 0x2010 };

/* The window as the scheduler drives it, through its hooks
 * (kernel/prof/offcpu_hooks.h), for pid 5 on cpu 0: waits on virtio-rx
 * from +100 ms, woken by pid 7 at +400, runs at +401, then sleeps from
 * +500 to past the end, which the scheduler's clock (one unit a ns)
 * reads at +1000 ms. The waker's chain is written as the wake's
 * contract says (prof_off_wake): the host's stack is no kernel stack to
 * walk. */
static bool wake_in_irq;        /* win_off's wake: inside a device's interrupt */

static void win_off(void)
{
    uint64_t t0 = prof_off_win.ow_t0;
    struct prof_task v, iv;
    memset(&task5, 0, sizeof task5);
    memset(&idle5, 0, sizeof idle5);
    v = fake_task_view(&task5, 5, chain5, 3);
    iv = fake_task_view(&idle5, 2, NULL, 0);
    uint64_t step = fake_cycles_step;
    fake_cycles_step = 0;
    prof_off_wait(&task5.ft_off, PROF_WHY_WAITQ, "virtio-rx");
    fake_cycles = t0 + 100000000;
    CHECK(prof_sched_on());
    prof_sched_switch(&task5.ft_off, false, false, &iv, true, true);
    if (wake_in_irq) {
        /* As task_wake inside virtio-net's handler, interrupting pid 7
         * on cpu 0 (the entry's hook kept its vector). */
        fake_cycles = t0 + 400000000;
        CHECK(prof_trace_irq_on());
        prof_trace_irq_enter(41, PROF_TRACE_IRQ_DEVICE);
        CHECK(prof_sched_on());
        prof_sched_wake(&task5.ft_off, false, 7, false);
        prof_trace_irq_exit();
    } else {
        wake(&task5.ft_off, false, t0 + 400000000, 7, wake7, 1);
    }
    fake_cycles = t0 + 401000000;
    CHECK(prof_sched_on());
    prof_sched_switch(&idle5.ft_off, true, false, &v, false, true);
    prof_off_wait(&task5.ft_off, PROF_WHY_SLEEP, NULL);
    fake_cycles = t0 + 500000000;
    CHECK(prof_sched_on());
    prof_sched_switch(&task5.ft_off, false, false, &iv, true, true);
    fake_cycles = t0 + 1000000000ull;
    fake_cycles_step = step;
}

/* The window's sweep, as sched_off_sweep takes it for pid 5. */
static void sweep_off(void)
{
    struct prof_task v = fake_task_view(&task5, 5, chain5, 3);
    prof_sched_sweep_task(&v, true, true);
}

static int run_off(const char *cmd)
{
    reset();
    wake_in_irq = false;
    window_fn = win_off;
    off_sweep_hook = sweep_off;
    return run_cmd(cmd);
}

TEST(off_report_text)
{
    CHECK_EQ(run_off("profile off 1000 all 8"), 0);
    CHECK_EQ(off_sweeps, 1);
    CHECK(strstr(out, "off-cpu profiled 1000 ms, clock ") == out);
    CHECK(strstr(out, "\nblocked 800.000 ms, runnable 1.000 ms, 1 tasks, 0 dropped\n"
                      "62.4% 500.000 ms [sleep] task 5 burn\n"
                      "        <- burn_inner+0x10\n") != NULL);
    CHECK(strstr(out, "        still waiting at the window's end\n"
                      "37.5% 300.000 ms [waitq virtio-rx] task 5 burn\n") != NULL);
    CHECK(strstr(out, "        woken by 7 burn\n            <- burn_mid+0x10\n"
                      "0.1% 1.000 ms [runnable] task 5 burn\n") != NULL);
    /* Nobody else's time: the empty report for a pid that never left. */
    reset();
    CHECK_EQ(run_cmd("profile off 10 12"), 0);
    CHECK(strstr(out, "\nblocked 0.000 ms, runnable 0.000 ms, 0 tasks, 0 dropped\n"
                      "no off-CPU time for pid 12: it stayed on its CPU the whole window, "
                      "or did not exist\n") != NULL);
}

/* A wake inside an interrupt names the interrupt, and the task it
 * interrupted only as such: the task running there did not wake it. */
TEST(off_report_wake_in_an_interrupt)
{
    irqname_reset();
    reset();
    wake_in_irq = true;
    window_fn = win_off;
    off_sweep_hook = sweep_off;
    CHECK_EQ(run_cmd("profile off 1000 all 8"), 0);
    CHECK(strstr(out, "        woken by irq device 41 on CPU 0, during 7 burn\n"
                      "0.1% 1.000 ms [runnable] task 5 burn\n") != NULL);
    CHECK(strstr(out, "woken by 7 burn") == NULL);
    /* Its device named: the name instead of the number. */
    CHECK_EQ(irqname_set(41, "virtio-net"), 0);
    reset();
    wake_in_irq = true;
    window_fn = win_off;
    off_sweep_hook = sweep_off;
    CHECK_EQ(run_cmd("profile off 1000 all 8"), 0);
    CHECK(strstr(out, "        woken by irq virtio-net on CPU 0, during 7 burn\n"
                      "0.1% 1.000 ms [runnable] task 5 burn\n") != NULL);
    CHECK(strstr(out, "irq device") == NULL);
    irqname_reset();
    wake_in_irq = false;
}

TEST(off_report_folded_and_raw)
{
    CHECK_EQ(run_off("profile off 1000 folded"), 0);
    CHECK(strstr(out, "# sonde folded build-id=0123456789abcdef0123456789abcdef01234567 "
                      "source=sched samples=3 dropped=0 cpus=1 ms=1000 kind=offcpu\n"
                      "burn;burn_outer;burn_mid;burn_inner;[sleep] 500000\n"
                      "burn;burn_outer;burn_mid;burn_inner;[waitq virtio-rx] 300000\n"
                      "burn;burn_outer;burn_mid;burn_inner;[runnable] 1000\n") == out);
    CHECK_EQ(run_off("profile off 1000 raw"), 0);
    CHECK(strstr(out, "# sonde raw build-id=0123456789abcdef0123456789abcdef01234567 "
                      "source=sched samples=3 dropped=0 cpus=1 ms=1000 kind=offcpu\n"
                      "1:500000000 5 burn 0 why=sleep waker=-1 3010 2044 1100\n"
                      "1:300000000 5 burn 0 why=waitq:virtio-rx waker=7:burn 3010 2044 1100 | 2010\n"
                      "1:1000000 5 burn 0 why=runnable 3010 2044 1100\n") == out);
}

TEST(off_report_wall_and_latency)
{
    CHECK_EQ(run_off("profile wall 1000 5"), 0);
    CHECK(strstr(out, "wall profiled 1000 ms\n1 tasks, 0 dropped, source tick 100Hz\n"
                      "task 5 burn: on-cpu 19.9%, blocked 80.0%, runnable 0.1%\n"
                      "50.0% 500.000 ms [sleep]\n") == out);
    CHECK(strstr(out, "\n        (on its CPU between samples: no chain)\n") != NULL);
    CHECK_EQ(run_off("profile wall 1000 5 raw"), 1);
    CHECK(strstr(out, "profile: wall has no raw form") == out);
    CHECK_EQ(run_off("profile latency 1000"), 0);
    CHECK(strstr(out, "scheduler latency (wake to run) over 1000 ms, 1 wakes, 0 dropped\n"
                      "cpu 0: 1 wakes, max 1.000 ms\n          usecs : count\n") == out);
    CHECK(strstr(out, "\n    512 -> 1023    : 1       |****************************************|\n")
          != NULL);
}

TEST(off_commands_bad_input)
{
    reset();
    CHECK_EQ(run_cmd("profile off 0"), 1);
    CHECK(strcmp(out, "profile: window 0 out of range (1-2000 ms)\n") == 0);
    CHECK_EQ(run_cmd("profile wall 10 99"), 1);
    CHECK(strcmp(out, "profile: pid 99: no such task\n") == 0);
    CHECK_EQ(run_cmd("profile latency folded"), 1);
    CHECK(strcmp(out, "profile: 'folded' is not a window (1-2000 ms)\n") == 0);
    CHECK_EQ(run_cmd("profile latency 10 all"), 1);
    CHECK(strcmp(out, "profile: too many arguments (usage: profile latency [ms])\n") == 0);
    CHECK_EQ(run_cmd("profile off raw 10"), 1);
    CHECK(strcmp(out, "profile: 'raw' must be the last argument "
                   "(usage: profile off|wall [ms] [pid|all] [chains|folded|raw])\n") == 0);
    CHECK_EQ(off_sweeps, 0);                /* nothing started */
}
