/* kernel/prof/offcpu.h: the off-CPU accounting (kernel/prof/offcpu.c), a
 * portable state machine the scheduler drives, under the run-queue lock
 * of the task's CPU, at switch-out, wake and switch-in, and the session at
 * the window's end. It reads no clock and takes no lock itself: the
 * caller passes the time, and gets back the records to emit, so the host
 * tests drive it with a fake clock.
 *
 * A task that leaves its CPU is charged, when it comes back, for the time
 * it was away, split in two: blocked (from the switch-out to the wake)
 * and runnable (from the wake to the switch-in: scheduler latency). The
 * blocked record names why (sleep, a wait queue, a mutex) and who woke
 * it; a task preempted while running is runnable from its switch-out,
 * under the reason `preempted`. Everything is clipped to the window: a
 * wait that began before it counts from its start, and a task still away
 * at its end is charged up to the end by the session's sweep.
 *
 * Profiler core: prefix prof_ and PROF_. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "kernel/prof/record.h"
#include "kernel/prof/ring.h"

/* Why a task was off its CPU: a record's pr_why. */
enum prof_why {
    PROF_WHY_NONE = 0,          /* not an off-CPU record */
    PROF_WHY_SLEEP = 1,         /* sleep_ms */
    PROF_WHY_WAITQ = 2,         /* a wait queue (pr_name) */
    PROF_WHY_MUTEX = 3,         /* a mutex (pr_name) */
    PROF_WHY_PREEMPTED = 4,     /* left running: runnable all along */
    PROF_WHY_RUNNABLE = 5,      /* woken, waiting for its CPU */
    PROF_WHY_WAKER = 6,         /* the waker's chain, right after the
                                   blocked record it belongs to (same CPU's
                                   ring, same pid, the same weight: the time
                                   it ended), never counted on its own */
    PROF_WHY_MAX = PROF_WHY_WAKER,
};

/* "sleep", "waitq", "mutex", "preempted", "runnable", "waker"; NULL for
 * none or above PROF_WHY_MAX. */
const char *prof_why_name(unsigned why);

/* Where a task is in the machine, for the window of generation of_gen;
 * a task whose of_gen is not the window's has done nothing in it yet. */
enum prof_off_phase {
    PROF_OFF_ON = 0,            /* on its CPU (or nothing to charge) */
    PROF_OFF_BLOCKED,           /* switched out waiting, not woken */
    PROF_OFF_RUNNABLE,          /* switched out, woken (or preempted) */
    PROF_OFF_WOKEN_EARLY,       /* woken before its switch-out finished */
    PROF_OFF_DONE,              /* charged by the window's end */
};

/* One task's state, inside struct task. of_wait_why/of_wait_name are
 * written at every wait whether a profile runs or not (a store each, off
 * the switch path): the reason of a wait that began before the window.
 * The rest only while an off-CPU window is open. Guarded by the run-queue
 * lock of the task's CPU. */
struct prof_off {
    uint64_t of_out;            /* ns: switched out (not before the window) */
    uint64_t of_wake;           /* ns: woken */
    uint32_t of_gen;            /* the window the fields below belong to */
    uint8_t of_phase;           /* enum prof_off_phase */
    uint8_t of_why;             /* at switch-out */
    uint8_t of_wait_why;        /* of the wait under way (always written) */
    uint8_t of_wdepth;          /* frames of the waker's chain */
    const char *of_name;        /* at switch-out */
    const char *of_wait_name;   /* always written, with of_wait_why */
    int32_t of_waker;           /* pid; 0: the tick; -1: not woken */
    uintptr_t of_wframes[PROF_FRAMES];
};

/* The open window: its generation and its ends, in the clock's ns. */
struct prof_off_window {
    uint32_t ow_gen;
    uint64_t ow_t0;
    uint64_t ow_t1;             /* UINT64_MAX while open */
};
extern struct prof_off_window prof_off_win;

/* The switch path's whole cost with off-CPU profiling off: this one load
 * and its branch, predicted not taken. A caller that sees true acquires
 * (prof_off_acquire) before it reads the window. */
static inline bool prof_off_on(void)
{
    return __builtin_expect((__atomic_load_n(&prof_gate.pg_state, __ATOMIC_RELAXED) &
                             PROF_GATE_KIND(PROF_KIND_OFFCPU)) != 0, 0);
}
/* Pairs with the gate's release in prof_ring_open (A, kernel/prof/ring.c):
 * the window's fields read after it are this window's. */
static inline void prof_off_acquire(void)
{
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
}

/* The session, before it opens the gate: a new window from now. */
void prof_off_begin(uint64_t now);
/* The session, before its sweep: nothing is charged past now. */
void prof_off_end(uint64_t now);

/* A wait is about to begin (sleep_ms, waitq_wait): always called. */
static inline void prof_off_wait(struct prof_off *o, unsigned why, const char *name)
{
    o->of_wait_why = (uint8_t)why;
    o->of_wait_name = name;
}

/* Records one interval can produce: blocked, the waker's chain, runnable. */
#define PROF_OFF_RECS 3

/* Switch-out of a task that was running (true: preempted or yielded) or
 * waiting (its of_wait_why), at now. */
void prof_off_out(struct prof_off *o, bool running, uint64_t now);
/* A wake at now by waker (pid; 0: the tick) with its chain. on_cpu: the
 * task has not been switched out yet (it is still its CPU's current). */
void prof_off_wake(struct prof_off *o, bool on_cpu, uint64_t now, int waker,
                   const uintptr_t *frames, unsigned depth);
/* Switch-in at now of task pid, whose chain at switch-out is chain: the
 * records to emit (0..PROF_OFF_RECS) into out. */
unsigned prof_off_in(struct prof_off *o, int pid, uint64_t now,
                     const uintptr_t *chain, unsigned depth,
                     struct prof_record *out);
/* The window's end, for a task off its CPU (blocked: it waits, else it is
 * runnable): what it is owed up to the end, into out; then it is done
 * for this window. */
unsigned prof_off_finish(struct prof_off *o, int pid, bool blocked,
                         const uintptr_t *chain, unsigned depth,
                         struct prof_record *out);
