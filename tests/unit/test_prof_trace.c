// LINK: kernel/prof/sample.c kernel/prof/trace.c kernel/prof/trace_hooks.c kernel/prof/ring.c kernel/prof/session.c kernel/prof/offcpu.c kernel/prof/offcpu_hooks.c kernel/prof/offreport.c kernel/prof/wall.c kernel/prof/stream.c kernel/prof/stream_encode.c kernel/prof/report.c kernel/prof/lockreport.c kernel/prof/export.c kernel/prof/fold.c kernel/prof/fold_order.c kernel/prof/quantile.c kernel/prof/fold_index.c kernel/cmd/profile.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c lib/sha256.c kernel/symtab.c tests/unit/fake_profiler.c kernel/stacks.c kernel/stacktrace.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c lib/printf.c lib/parse.c uapi/profile_raw.c kernel/cmd/profile_heap.c kernel/prof/heapview.c mm/heapprof.c tests/unit/fake_heap_table.c kernel/cmd/profile_say.c kernel/cmd/profile_stream.c uapi/stream_ctl.c kernel/irqname.c
/* tests/unit/test_prof_trace.c: the scheduling trace (kernel/prof/trace.c
 * and trace_hooks.h): the hooks the scheduler and the interrupt entry
 * call, compiled as the kernel compiles them and writing this CPU's real
 * ring under a fake clock (one unit a ns), and the fold that reads a
 * window back, driven with hand-made rings on several CPUs: the rows in
 * time order, each run's wait, delay and length, and every CPU's runs
 * plus idle adding up to the window. */
#include "test.h"
#include "fake_hal.h"
#include "fake_profiler.h"
#include "kernel/prof/offcpu_hooks.h"
#include "kernel/prof/ring.h"
#include "kernel/prof/trace_hooks.h"

#define NS_1 (1ull << 32)

static uint32_t seen;

static void open_trace(uint64_t t0)
{
    reset();
    room(64);
    fake_cycles_step = 0;
    fake_run(1, 7);
    prof_trace_begin(t0, NS_1);
    prof_ring_open(PROF_ALL, PROF_GATE_TRACE | PROF_GATE_CPU, false);
    seen = 0;
}

static void at(uint64_t t) { fake_cycles = t; }

static const struct prof_record *next_rec(void)
{
    uint32_t first, n = prof_ring_avail(1, &first);
    CHECK(seen < n);
    return prof_ring_at(1, first + seen++);
}

static uint32_t left(void)
{
    uint32_t first;
    return prof_ring_avail(1, &first) - seen;
}

/* The gate: the scheduler's one test is true for a trace alone, which
 * then says it is a trace and not an off-CPU window; closed, nothing. */
TEST(trace_gate_opens_the_schedulers_test)
{
    reset();
    room(16);
    CHECK(!prof_sched_on());
    CHECK(!prof_trace_on());
    prof_ring_open(PROF_ALL, PROF_GATE_CPU, false);
    CHECK(!prof_sched_on());
    CHECK(!prof_trace_on());
    prof_ring_close();
    prof_ring_open(PROF_ALL, PROF_GATE_TRACE | PROF_GATE_CPU, false);
    CHECK(prof_sched_on());
    CHECK(prof_trace_on());
    CHECK(prof_sched_trace());
    CHECK(!prof_sched_off());
    prof_ring_close();
    CHECK(!prof_sched_on());
    CHECK(!prof_trace_on());
    prof_ring_open(PROF_ALL, PROF_GATE_KIND(PROF_KIND_OFFCPU), false);
    CHECK(prof_sched_on());
    CHECK(prof_sched_off());
    CHECK(!prof_sched_trace());
    prof_ring_close();
}

/* A switch names both tasks, the reason and the queue; a task that was
 * preempted, one that exited, idle and one that yielded leave for their
 * own reasons. */
TEST(trace_switch_records_who_and_why)
{
    open_trace(1000);
    struct prof_off o = { 0 };
    prof_off_wait(&o, PROF_WHY_WAITQ, "burn-pp");
    at(2500);
    prof_trace_sched_switch(7, &o, false, false, false, false, 9);
    at(2600);
    prof_trace_sched_switch(9, &o, false, true, true, false, 7);
    at(2700);
    prof_trace_sched_switch(7, &o, false, false, false, true, 2);
    at(2800);
    prof_trace_sched_switch(2, &o, true, false, false, false, 9);
    prof_off_wait(&o, PROF_WHY_SLEEP, NULL);
    at(2900);
    prof_trace_sched_switch(9, &o, false, false, false, false, 2);
    at(2950);
    prof_trace_sched_switch(2, &o, false, true, false, false, 9);
    CHECK_EQ(left(), 6);
    const struct prof_record *r = next_rec();
    CHECK_EQ(r->pr_kind, PROF_KIND_TRACE);
    CHECK_EQ(r->pr_why, PROF_TRACE_SWITCH);
    CHECK_EQ(r->pr_weight, 2500);
    CHECK_EQ(r->pr_pid, 7);
    CHECK_EQ(r->pr_waker, 9);
    CHECK_EQ(r->pr_cost, PROF_TRACE_LEFT_WAITQ);
    CHECK_STR(r->pr_name, "burn-pp");
    r = next_rec();
    CHECK_EQ(r->pr_cost, PROF_TRACE_LEFT_PREEMPTED);
    CHECK(r->pr_name == NULL);
    CHECK_EQ(next_rec()->pr_cost, PROF_TRACE_LEFT_EXIT);
    CHECK_EQ(next_rec()->pr_cost, PROF_TRACE_LEFT_NONE);
    r = next_rec();
    CHECK_EQ(r->pr_cost, PROF_TRACE_LEFT_SLEEP);
    CHECK(r->pr_name == NULL);
    /* Runnable and not from the interrupt's return: it yielded. */
    r = next_rec();
    CHECK_EQ(r->pr_cost, PROF_TRACE_LEFT_YIELD);
    CHECK(r->pr_name == NULL);
    prof_ring_close();
    /* Closed: the hooks write nothing. */
    at(3000);
    prof_trace_sched_switch(9, &o, false, true, true, false, 7);
    CHECK_EQ(left(), 0);
}

/* A wake from task context names the task running here; one inside an
 * interrupt names the interrupt too; the interrupt's slice runs from its
 * entry to its exit, of the task it interrupted. */
TEST(trace_wake_in_an_interrupt_names_it)
{
    open_trace(1000);
    at(2000);
    prof_trace_wake(9, 3);
    at(3000);
    prof_trace_irq_enter(33, PROF_TRACE_IRQ_DEVICE);
    at(3400);
    prof_trace_wake(12, 1);
    at(3900);
    prof_trace_irq_exit();
    /* An exit with no entry of this trace (entered before it opened)
     * writes no slice. */
    at(4000);
    prof_trace_irq_exit();
    CHECK_EQ(left(), 3);
    const struct prof_record *r = next_rec();
    CHECK_EQ(r->pr_why, PROF_TRACE_WAKE);
    CHECK_EQ(r->pr_pid, 9);
    CHECK_EQ(r->pr_waker, 7);
    CHECK_EQ(r->pr_cost, 3);
    CHECK_EQ(r->pr_frames[0], 0);
    r = next_rec();
    CHECK_EQ(r->pr_pid, 12);
    CHECK_EQ(r->pr_waker, 7);
    CHECK_EQ(r->pr_frames[0], 34);
    CHECK_EQ(r->pr_frames[1], PROF_TRACE_IRQ_DEVICE);
    r = next_rec();
    CHECK_EQ(r->pr_why, PROF_TRACE_IRQ);
    CHECK_EQ(r->pr_pid, 7);
    CHECK_EQ(r->pr_waker, 33);
    CHECK_EQ(r->pr_cost, PROF_TRACE_IRQ_DEVICE);
    CHECK_EQ(r->pr_frames[0], 3000);
    CHECK_EQ(r->pr_weight, 3900);
    /* A new trace forgets an interrupt the last one left open. */
    prof_trace_irq_enter(40, PROF_TRACE_IRQ_IPI);
    prof_ring_close();
    open_trace(5000);
    at(6000);
    prof_trace_irq_exit();
    prof_trace_wake(9, 1);
    CHECK_EQ(left(), 1);
    CHECK_EQ(next_rec()->pr_frames[0], 0);
    prof_ring_close();
}

/* A full ring drops a record and counts it, never overwrites. */
TEST(trace_full_ring_counts_the_drop)
{
    open_trace(1000);
    uint32_t cap = prof_ring_cap(1);
    for (uint32_t i = 0; i <= cap; i++) {
        at(2000 + i);
        prof_trace_wake(9, 1);
    }
    CHECK_EQ(left(), cap);
    CHECK_EQ(prof_ring_drops(1), 1);
    prof_ring_close();
}

/* ---- the fold, on hand-made rings ---------------------------------- */

static struct prof_record ring[3][32];
static struct prof_snapshot snap;

static void sw(unsigned cpu, uint64_t t, int pid, int next, unsigned left, const char *name)
{
    struct prof_record *r = &ring[cpu][snap.ps_count[cpu]++];
    *r = (struct prof_record){ .pr_kind = PROF_KIND_TRACE, .pr_why = PROF_TRACE_SWITCH,
                               .pr_weight = t, .pr_pid = pid, .pr_waker = next,
                               .pr_cost = left, .pr_name = name };
}

static void wk(unsigned cpu, uint64_t t, int pid, int waker, unsigned to)
{
    struct prof_record *r = &ring[cpu][snap.ps_count[cpu]++];
    *r = (struct prof_record){ .pr_kind = PROF_KIND_TRACE, .pr_why = PROF_TRACE_WAKE,
                               .pr_weight = t, .pr_pid = pid, .pr_waker = waker, .pr_cost = to };
}

static void irq(unsigned cpu, uint64_t t0, uint64_t t1, int pid, unsigned class)
{
    struct prof_record *r = &ring[cpu][snap.ps_count[cpu]++];
    *r = (struct prof_record){ .pr_kind = PROF_KIND_TRACE, .pr_why = PROF_TRACE_IRQ,
                               .pr_weight = t1, .pr_pid = pid, .pr_waker = 240,
                               .pr_cost = class, .pr_frames = { t0 } };
}

static void sample(unsigned cpu, uint64_t t, int pid)
{
    struct prof_record *r = &ring[cpu][snap.ps_count[cpu]++];
    *r = (struct prof_record){ .pr_kind = PROF_KIND_CPU, .pr_weight = t, .pr_pid = pid,
                               .pr_depth = 1 };
}

static void new_snap(void)
{
    memset(&snap, 0, sizeof snap);
    memset(ring, 0, sizeof ring);
    for (unsigned i = 0; i < 3; i++) {
        snap.ps_recs[i] = ring[i];
        snap.ps_in_window[i] = true;
    }
    prof_trace_begin(1000, NS_1);       /* times below are ns + 1000 */
}

static struct prof_trace_row rows[16];
static unsigned nrows;

static void keep(const struct prof_trace_row *r, void *arg)
{
    (void)arg;
    CHECK(nrows < 16);
    rows[nrows++] = *r;
}

static bool idle_is_2_or_3(int pid) { return pid == 2 || pid == 3; }

static struct prof_trace_fold fold;

static void run_fold(uint64_t ns, unsigned cpus)
{
    memset(&fold, 0, sizeof fold);
    fold.tf_ns = ns;
    fold.tf_cpus = cpus;
    nrows = 0;
    prof_trace_fold(&snap, &fold, idle_is_2_or_3, keep, NULL);
}

static const struct prof_trace_task *task_of(int pid)
{
    for (unsigned i = 0; i < PROF_TRACE_TASKS; i++)
        if (fold.tf_task[i].tt_pid == pid)
            return &fold.tf_task[i];
    return NULL;
}

/* Two tasks hand a CPU to each other through a queue; the CPU idles in
 * between. Each row says how long the task leaving ran, how long it
 * waited to be woken before that run and how long for its CPU; the
 * task running at the start is charged from 0, the one at the end up to
 * the window's end; runs and idle add up to the window. */
TEST(fold_rows_wait_delay_run)
{
    new_snap();
    /* cpu 0: 7 runs from the start, leaves for idle (2) at 100; 7 is
     * woken at 300 by 9 on cpu 1, and runs at 350; 7 sleeps at 500. */
    sample(0, 1050, 7);
    sw(0, 1100, 7, 2, PROF_TRACE_LEFT_WAITQ, "q");
    wk(1, 1300, 7, 9, 0);
    sw(0, 1350, 2, 7, PROF_TRACE_LEFT_NONE, NULL);
    irq(0, 1400, 1410, 7, PROF_TRACE_IRQ_TICK);
    irq(0, 1420, 1450, 7, PROF_TRACE_IRQ_DEVICE);
    sw(0, 1500, 7, 2, PROF_TRACE_LEFT_SLEEP, NULL);
    /* cpu 1: 9 runs all along (known from its wake). */
    irq(1, 1200, 1205, 9, PROF_TRACE_IRQ_TICK);
    run_fold(1000, 0);
    CHECK_EQ(nrows, 3);
    /* The rows in time order across the CPUs. */
    CHECK_EQ(rows[0].tr_ns, 100);
    CHECK_EQ(rows[0].tr_pid, 7);
    CHECK_EQ(rows[0].tr_next, 2);
    CHECK(rows[0].tr_next_idle);
    CHECK_EQ(rows[0].tr_run, 100);
    CHECK(rows[0].tr_partial);
    CHECK_EQ(rows[0].tr_left, PROF_TRACE_LEFT_WAITQ);
    CHECK_STR(rows[0].tr_name, "q");
    CHECK_EQ(rows[1].tr_ns, 350);
    CHECK(rows[1].tr_idle);
    CHECK_EQ(rows[1].tr_run, 250);
    CHECK_EQ(rows[2].tr_ns, 500);
    CHECK_EQ(rows[2].tr_pid, 7);
    CHECK_EQ(rows[2].tr_wait, 200);     /* out at 100, woken at 300 */
    CHECK_EQ(rows[2].tr_delay, 50);     /* woken at 300, in at 350 */
    CHECK_EQ(rows[2].tr_run, 150);
    CHECK(!rows[2].tr_partial);
    CHECK_EQ(rows[2].tr_waker, 9);      /* from task context: 9 woke it */
    CHECK_EQ(rows[2].tr_wirq, 0);
    CHECK_EQ(rows[0].tr_waker, -1);     /* its run began before the window */
    const struct prof_trace_task *t7 = task_of(7), *t9 = task_of(9);
    CHECK(t7 && t9);
    CHECK_EQ(t7->tt_run, 250);
    CHECK_EQ(t7->tt_max_delay, 50);
    CHECK_EQ(t9->tt_run, 1000);         /* cpu 1: ran the whole window */
    CHECK_EQ(t9->tt_cpu, 1);
    /* cpu 0: 7's 250 and idle's 250 + 500 to the end. */
    CHECK_EQ(fold.tf_cpu[0].cs_idle, 750);
    CHECK_EQ(t7->tt_run + fold.tf_cpu[0].cs_idle, 1000);
    CHECK_EQ(fold.tf_cpu[0].cs_switches, 3);
    CHECK_EQ(fold.tf_cpu[0].cs_samples, 1);
    CHECK_EQ(fold.tf_cpu[0].cs_irq, 40);
    CHECK_EQ(fold.tf_cpu[0].cs_irqs[PROF_TRACE_IRQ_TICK], 1);
    CHECK_EQ(fold.tf_cpu[0].cs_irq_max[PROF_TRACE_IRQ_DEVICE], 30);
    CHECK_EQ(fold.tf_cpu[1].cs_wakes, 1);
    CHECK_EQ(fold.tf_cpu[1].cs_idle, 0);
    CHECK_EQ(fold.tf_cpu[0].cs_cur, 2);
}

/* A preempted task is runnable from its switch-out: no wait, its delay
 * the time until it runs again. Times past the window's end are clipped
 * to it, and a CPU filter hands over only its rows while every CPU is
 * still folded. */
TEST(fold_preempted_clip_and_filter)
{
    new_snap();
    sw(2, 1100, 5, 6, PROF_TRACE_LEFT_PREEMPTED, NULL);
    sw(2, 1400, 6, 5, PROF_TRACE_LEFT_PREEMPTED, NULL);
    sw(2, 1900, 5, 6, PROF_TRACE_LEFT_PREEMPTED, NULL);   /* past the end (800) */
    sw(0, 1200, 7, 2, PROF_TRACE_LEFT_SLEEP, NULL);
    run_fold(800, 1u << 2);
    CHECK_EQ(nrows, 3);
    CHECK_EQ(rows[1].tr_pid, 6);
    CHECK_EQ(rows[1].tr_wait, 0);
    CHECK_EQ(rows[2].tr_pid, 5);
    CHECK_EQ(rows[2].tr_delay, 300);    /* out at 100, in at 400 */
    CHECK_EQ(rows[2].tr_ns, 800);
    CHECK_EQ(rows[2].tr_run, 400);
    CHECK_EQ(task_of(5)->tt_run + task_of(6)->tt_run, 800);
    CHECK_EQ(fold.tf_cpu[0].cs_switches, 1);  /* folded, not handed over */
    CHECK_EQ(fold.tf_cpu[0].cs_idle, 600);
}

/* A wake inside an interrupt: the row of the run it began names that
 * interrupt, its CPU and the task it interrupted. */
TEST(fold_wake_in_an_interrupt)
{
    new_snap();
    sw(1, 1100, 7, 3, PROF_TRACE_LEFT_WAITQ, "virtio-rx");
    wk(0, 1200, 7, 12, 1);
    ring[0][0].pr_frames[0] = 34;       /* vector 33, + 1 */
    ring[0][0].pr_frames[1] = PROF_TRACE_IRQ_DEVICE;
    sw(1, 1250, 3, 7, PROF_TRACE_LEFT_NONE, NULL);
    sw(1, 1400, 7, 3, PROF_TRACE_LEFT_WAITQ, "virtio-rx");
    run_fold(1000, 0);
    CHECK_EQ(nrows, 3);
    CHECK_EQ(rows[2].tr_pid, 7);
    CHECK_EQ(rows[2].tr_waker, 12);
    CHECK_EQ(rows[2].tr_wirq, PROF_IRQ_WORD(34, PROF_TRACE_IRQ_DEVICE, 0));
    CHECK_EQ(rows[2].tr_wait, 100);
    CHECK_EQ(rows[2].tr_delay, 50);
    CHECK_EQ(fold.tf_cpu[0].cs_wakes, 1);
}

/* More tasks than the fold follows: the rest are counted, never written
 * past the table. */
TEST(fold_counts_tasks_past_its_table)
{
    static struct prof_record many[PROF_TRACE_TASKS + 40];
    new_snap();
    for (unsigned i = 0; i < PROF_TRACE_TASKS + 40; i++)
        many[i] = (struct prof_record){ .pr_kind = PROF_KIND_TRACE, .pr_why = PROF_TRACE_WAKE,
                                        .pr_weight = 1000 + i, .pr_pid = (int)(100 + i),
                                        .pr_waker = 7, .pr_cost = 1 };
    snap.ps_recs[1] = many;
    snap.ps_count[1] = PROF_TRACE_TASKS + 40;
    snap.ps_drops[1] = 3;
    snap.ps_nested[1] = 2;
    run_fold(1000, 0);
    CHECK(fold.tf_untracked >= 40);
    CHECK_EQ(fold.tf_cpu[1].cs_wakes, PROF_TRACE_TASKS + 40);
    CHECK_EQ(fold.tf_cpu[1].cs_dropped, 3);
    CHECK_EQ(fold.tf_cpu[1].cs_nested, 2);
}
