/* kernel/prof/offcpu_hooks.h: the hooks the scheduler calls for off-CPU
 * profiling (Linux's perf_event_task_sched_in/out pattern), so that
 * kernel/sched.c never names a ring field and the profiler never sees
 * struct task.
 *
 * The scheduler hands each hook a view of a task (struct prof_task:
 * pid, stack, where its registers are saved, its struct prof_off),
 * built inline at the call, so that GCC keeps only the loads a hook
 * makes. Every hook runs under the run-queue lock of the task's CPU,
 * interrupts off, and only after the caller saw prof_sched_on() true:
 *
 *   schedule:        if (prof_sched_on() && prof_sched_off()) prof_sched_switch(...)
 *   task_wake:       if (prof_sched_on() && prof_sched_off()) prof_sched_wake(...)
 *   the sweep:       prof_sched_sweep_task(...) for each task
 *
 * The switch is inline (it is on every switch of a window: each call
 * there cost ~10 guest instructions of a budget of 150); the rest is out
 * of line in kernel/prof/offcpu_hooks.c. The accounting itself is
 * kernel/prof/offcpu.h's state machine.
 *
 * Profiler core: prefix prof_sched_ for the hooks, pt_ for the view. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "hal/cpu.h"
#include "hal/task.h"
#include "kernel/prof/offcpu.h"
#include "kernel/prof/ring_produce.h"
#include "kernel/stacktrace_inline.h"
#include "kernel/task.h"

/* The scheduler's test before every hook but the sweep's: one load, one
 * branch not taken while neither an off-CPU window nor a trace
 * (kernel/prof/trace_hooks.h) is open (PROF_GATE_SCHED, the one bit
 * both set: a trace costs the switch nothing while it is off) and, when
 * it is true, the acquire that makes the window's fields this window's
 * (prof_off_acquire). The caller then asks which of the two is open
 * (prof_sched_off, prof_sched_trace) and builds its views after that:
 * loads written before the fence could not be moved past it, and GCC
 * would make every one of them ahead of it, on every switch
 * (bench_switch: +4 guest instructions a switch on arm64, measured). */
PROF_OFF_INLINE bool prof_sched_on(void)
{
    if (__builtin_expect(!(cpu_load_near_u32(prof_gate) & PROF_GATE_SCHED), 1))
        return false;
    prof_off_acquire();
    return true;
}

/* After prof_sched_on(): whether an off-CPU window is open (a hint, as
 * prof_off_on: the reservation's load under the guard decides). */
PROF_OFF_INLINE bool prof_sched_off(void)
{
    return __atomic_load_n(&prof_gate.pg_state, __ATOMIC_RELAXED) &
           PROF_GATE_KIND(PROF_KIND_OFFCPU);
}

/* After prof_sched_on(): whether a trace is open. */
PROF_OFF_INLINE bool prof_sched_trace(void)
{
    return __atomic_load_n(&prof_gate.pg_state, __ATOMIC_RELAXED) & PROF_GATE_TRACE;
}

/* A task as the hooks see it. pt_stack is the lowest address of its
 * TASK_STACK_SIZE stack; pt_saved_sp is where its switched-out
 * registers are (arch_switch's save), meaningful only while it is off
 * every CPU. */
struct prof_task {
    int pt_pid;
    uintptr_t pt_stack;
    uint64_t pt_saved_sp;
    struct prof_off *pt_off;
};

/* The chain of a task switched out, from its saved context, as bt reads
 * it (kernel/backtrace.c). The caller knows the task is off every CPU
 * with its registers saved. The walk is bounded by the task's own
 * stack, known here, rather than found in the stacks' registry: the
 * lookup was a third of a switch-in's cost (bench_switch). A task's
 * frames never leave its stack, so a record that fails the walk's test
 * ends the chain (st_walk_within). The first record is arch_switch's
 * own, pushed by the scheduler's switch: its return address is into
 * schedule. */
PROF_OFF_INLINE unsigned prof_sched_chain(const struct prof_task *t, uintptr_t *out)
{
    return st_walk_within(t->pt_stack, t->pt_stack + TASK_STACK_SIZE - FRAME_RECORD,
                          t->pt_saved_sp + arch_saved_fp_off, out, PROF_FRAMES, st_text_now());
}

/* The common switch-in, of a task preempted in this window: one record
 * of weight w (ns), its chain walked straight into its slot. */
PROF_OFF_INLINE void prof_sched_preempted(const struct prof_task *t, uint64_t w)
{
    struct prof_reserve k;
    struct prof_record *r = prof_reserve_n(&k, PROF_KIND_OFFCPU, t->pt_pid, 1);
    if (!r)
        return;
    /* Filled before the walk, its depth after: nothing but the walk's own
     * values is live across its loop. */
    prof_off_fill(r, t->pt_pid, PROF_WHY_PREEMPTED, NULL, -1, w, 0);
    r->pr_depth = (uint8_t)prof_sched_chain(t, r->pr_frames);
    prof_reserve_commit(&k);
}

/* next's switch-in at t (the raw counter), any case but the common one:
 * what it is owed, into this CPU's ring. Out of line, and given the
 * view's fields, not the view: its address would keep the view in
 * memory, four stores on every switch of a window (bench_switch: +10
 * guest instructions a switch, measured). */
void prof_sched_in(struct prof_off *o, int pid, uintptr_t stack, uint64_t saved_sp, uint64_t t);

/* Switch-out of cur and switch-in of next. cur_idle: cur is its CPU's
 * idle task; cur_running: cur was running, not waiting (preempted or it
 * yielded); next_idle, next_ran: next is the idle task, next has run
 * before (else it has no saved frames to walk). next's saved context is
 * whole: it was switched out on this CPU (tasks never migrate), and that
 * switch finished before this one began. The clock is the raw counter:
 * what a record weighs is converted when it is written, by one
 * multiply. Inline into schedule, out of the way of its common path:
 * as a call, the call and the registers it saved cost every switch of a
 * window ~14 guest instructions, and schedule has saved them already. */
PROF_OFF_INLINE void prof_sched_switch(struct prof_off *cur, bool cur_idle, bool cur_running,
                                       const struct prof_task *next, bool next_idle,
                                       bool next_ran)
{
    uint64_t t = prof_off_clip_end(cycles_now_inline()), w;
    /* A task that exited is switched out as blocked, for nothing: it is
     * never switched in again and the window's sweep skips it (cheaper
     * than a test on every switch). */
    if (__builtin_expect(!cur_idle, 1))
        prof_off_out(cur, cur_running, t);
    /* The common case is tested first: a task preempted in this window
     * is neither idle (idle is never switched out: its generation stays
     * 0, no window's) nor new (a task that never ran was never switched
     * out as preempted), so those two tests belong to the rest. */
    if (prof_off_in_preempted(next->pt_off, t, &w)) {
        if (w)
            prof_sched_preempted(next, w);
    } else if (!next_idle && next_ran) {
        prof_sched_in(next->pt_off, next->pt_pid, next->pt_stack, next->pt_saved_sp, t);
    }
}

/* o's task is woken by waker (pid; 0: the tick) on this CPU, whose chain
 * (walk: from the hook's own frame, out[0] the return into the caller)
 * goes straight into its state: its stack found as the sampler finds it.
 * on_cpu: the task is still its CPU's current (the wake came before its
 * switch-out finished). */
void prof_sched_wake(struct prof_off *o, bool on_cpu, int waker, bool walk);

/* The window's end (after prof_off_end), for a task that is not its
 * CPU's current: what it is owed up to the end. sleeping: it waits
 * (else it is runnable); walkable: its registers are all saved (it is
 * on no CPU, has run, has a stack), else its records have no chain. */
void prof_sched_sweep_task(const struct prof_task *t, bool sleeping, bool walkable);

/* The spinlock's hook (kernel/spinlock.c's contended path): this CPU
 * spun on the lock name from t0 to t1 (cycles_now_inline(), the window's
 * clock), and an off-CPU window may be open. The time inside the window
 * becomes a record [spin NAME] of the current task's chain, walked from
 * here: time on the CPU that `profile off` shows beside the waits.
 * Interrupts off (any context but NMI): no lock, nothing allocated. */
void prof_lock_spun(const char *name, uint64_t t0, uint64_t t1);
