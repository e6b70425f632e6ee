// LINK: kernel/prof/sample.c kernel/prof/trace.c kernel/prof/trace_hooks.c kernel/prof/ring.c kernel/prof/session.c kernel/prof/offcpu.c kernel/prof/offcpu_hooks.c kernel/prof/offreport.c kernel/prof/wall.c kernel/prof/stream.c kernel/prof/stream_encode.c kernel/prof/report.c kernel/prof/lockreport.c kernel/prof/export.c kernel/prof/fold.c kernel/prof/fold_order.c kernel/prof/quantile.c kernel/prof/fold_index.c kernel/cmd/profile.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c lib/sha256.c kernel/symtab.c tests/unit/fake_profiler.c kernel/stacks.c kernel/stacktrace.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c lib/printf.c lib/parse.c uapi/profile_raw.c kernel/cmd/profile_heap.c kernel/prof/heapview.c mm/heapprof.c tests/unit/fake_heap_table.c kernel/cmd/profile_say.c kernel/cmd/profile_stream.c uapi/stream_ctl.c kernel/prof/lockprof_hooks.c kernel/lockcharge.c kernel/irqname.c
/* tests/unit/test_prof_offcpu_hooks.c: the scheduler's off-CPU hooks
 * (kernel/prof/offcpu_hooks.h and .c), the code the kernel runs at every
 * switch, wake and sweep of an off-CPU window, compiled as the kernel
 * compiles it and driven as kernel/sched.c drives it: fake tasks whose
 * stacks hold a known chain, a fake clock (one unit a ns), this CPU's
 * real ring. Every record is read back out of the ring. */
#include "test.h"
#include "fake_hal.h"
#include "fake_profiler.h"
#include "kernel/prof/offcpu_hooks.h"
#include "kernel/prof/ring.h"
#include "kernel/prof/session.h"

#define NS_1 (1ull << 32)

static const uintptr_t chain[3] = { 0x3010, 0x2044, 0x1100 };
static struct fake_task task, idle;
static struct prof_task tv, iv;
static uint32_t seen;           /* records of this CPU's ring read so far */

/* A window from t0 on CPU 1, the task (pid 7) and idle set up. */
static void open_window(uint64_t t0)
{
    reset();
    room(64);
    fake_cycles_step = 0;
    fake_cpu = 1;
    memset(&task, 0, sizeof task);
    memset(&idle, 0, sizeof idle);
    tv = fake_task_view(&task, 7, chain, 3);
    iv = fake_task_view(&idle, 2, NULL, 0);
    prof_off_begin(t0, NS_1);
    prof_ring_open(PROF_ALL, PROF_GATE_KIND(PROF_KIND_OFFCPU), false);
    seen = 0;
}

static void at(uint64_t t) { fake_cycles = t; }

/* schedule's two calls, as kernel/sched.c makes them. */
static void task_leaves(bool running)
{
    CHECK(prof_sched_on());
    prof_sched_switch(&task.ft_off, false, running, &iv, true, true);
}

static void task_enters(void)
{
    CHECK(prof_sched_on());
    prof_sched_switch(&idle.ft_off, true, false, &tv, false, true);
}

/* The next record in CPU 1's ring. */
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

static void check_rec(const struct prof_record *r, unsigned why, uint64_t w, int waker,
                      unsigned depth)
{
    CHECK_EQ(r->pr_kind, PROF_KIND_OFFCPU);
    CHECK_EQ(r->pr_pid, 7);
    CHECK_EQ(r->pr_why, why);
    CHECK_EQ(r->pr_weight, w);
    CHECK_EQ(r->pr_waker, waker);
    CHECK_EQ(r->pr_depth, depth);
    for (unsigned i = 0; i < depth && i < 3; i++)
        CHECK_EQ(r->pr_frames[i], chain[i]);
}

/* A sleep: blocked from the switch-out to the tick's wake, runnable to
 * the switch-in; both records carry the chain walked from the task's
 * saved context. The tick's wake walks nothing: no waker record. */
TEST(hooks_sleep_then_runnable_with_the_saved_chain)
{
    open_window(1000);
    prof_off_wait(&task.ft_off, PROF_WHY_SLEEP, NULL);
    at(2000);
    task_leaves(false);
    CHECK_EQ(left(), 0);
    at(22000);
    CHECK(prof_sched_on());
    prof_sched_wake(&task.ft_off, false, 0, false);
    at(23500);
    task_enters();
    CHECK_EQ(left(), 2);
    check_rec(next_rec(), PROF_WHY_SLEEP, 20000, 0, 3);
    check_rec(next_rec(), PROF_WHY_RUNNABLE, 1500, -1, 3);
    /* Switched in again with nothing owed: no record. */
    at(30000);
    task_leaves(true);
    at(30000);
    task_enters();
    CHECK_EQ(left(), 0);
    prof_ring_close();
}

/* The common switch, a task preempted in the window: one record through
 * the inline path (prof_sched_preempted), its chain walked into its slot. */
TEST(hooks_preempted_takes_the_inline_path)
{
    open_window(1000);
    at(5000);
    task_leaves(true);
    at(7250);
    task_enters();
    CHECK_EQ(left(), 1);
    check_rec(next_rec(), PROF_WHY_PREEMPTED, 2250, -1, 3);
    prof_ring_close();
}

/* A wait queue's wait, a name that was never given (a zero-filled
 * queue), woken by pid 9 with the walk asked for: the host's own stack
 * is no registered stack, so the walk finds none and the waker record is
 * left out, never garbage. */
TEST(hooks_unnamed_waitq_is_a_wait)
{
    open_window(1000);
    prof_off_wait(&task.ft_off, PROF_WHY_WAITQ, NULL);
    at(2000);
    task_leaves(false);
    at(5000);
    CHECK(prof_sched_on());
    prof_sched_wake(&task.ft_off, false, 9, true);
    at(5000);
    task_enters();
    CHECK_EQ(left(), 1);
    const struct prof_record *r = next_rec();
    check_rec(r, PROF_WHY_WAITQ, 3000, 9, 3);
    CHECK_STR(r->pr_name, "?");
    prof_ring_close();
}

/* A task that never ran has no saved frames: its switch-in writes
 * nothing; the idle task is never charged. */
TEST(hooks_new_and_idle_tasks_write_nothing)
{
    open_window(1000);
    at(4000);
    CHECK(prof_sched_on());
    prof_sched_switch(&idle.ft_off, true, false, &tv, false, false);
    CHECK(prof_sched_on());
    prof_sched_switch(&task.ft_off, false, true, &iv, true, true);
    CHECK_EQ(left(), 0);
    prof_ring_close();
}

/* The window's sweep: a task still blocked at the end is charged up to
 * it, with its chain where its registers are saved, without one where
 * it may still be leaving another CPU. */
TEST(hooks_sweep_charges_to_the_end)
{
    open_window(1000);
    prof_off_wait(&task.ft_off, PROF_WHY_MUTEX, "burn-m");
    at(3000);
    task_leaves(false);
    prof_off_end(10000);
    prof_sched_sweep_task(&tv, true, true);
    CHECK_EQ(left(), 1);
    const struct prof_record *r = next_rec();
    check_rec(r, PROF_WHY_MUTEX, 7000, -1, 3);
    CHECK_STR(r->pr_name, "burn-m");
    /* Done for this window: a second sweep owes nothing. */
    prof_sched_sweep_task(&tv, true, true);
    CHECK_EQ(left(), 0);
    prof_ring_close();

    open_window(20000);
    prof_off_wait(&task.ft_off, PROF_WHY_SLEEP, NULL);
    at(21000);
    task_leaves(false);
    prof_off_end(26000);
    prof_sched_sweep_task(&tv, true, false);
    CHECK_EQ(left(), 1);
    check_rec(next_rec(), PROF_WHY_SLEEP, 5000, -1, 0);
    prof_ring_close();
}

/* The gate: with no off-CPU window open, prof_sched_on is false and the
 * scheduler calls no hook. */
TEST(hooks_gate_closed_without_a_window)
{
    reset();
    CHECK(!prof_sched_on());
    room(16);
    prof_ring_open(PROF_ALL, PROF_GATE_KIND(PROF_KIND_CPU), false);
    CHECK(!prof_sched_on());
    prof_ring_close();
}
