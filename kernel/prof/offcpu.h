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
 * The switch path is inline here, and cheap: the clock it is given is the
 * raw counter (cycles_now), kept as it is in the task, and only what a
 * record weighs is converted to ns, by one multiply (ow_mult). The
 * switch-out stores when and why; the switch-in works out what is owed
 * (prof_off_in) and writes it straight into the ring's slots
 * (prof_off_put) over the chain the caller walked into the first.
 *
 * Profiler core: prefix prof_ and PROF_. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "kernel/prof/record.h"
#include "hal/cpu.h"
#include "kernel/prof/ring.h"
#include <stddef.h>

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
    PROF_WHY_SPIN = 7,          /* spun on a spinlock (pr_name), on the CPU
                                   (prof_lock_spun): neither blocked nor
                                   runnable time */
    PROF_WHY_MAX = PROF_WHY_SPIN,
};

/* "sleep", "waitq", "mutex", "preempted", "runnable", "waker", "spin"; NULL for
 * none or above PROF_WHY_MAX. */
const char *prof_why_name(unsigned why);
/* Whether why is blocked time (sleep, waitq, mutex), not runnable. */
bool prof_why_blocked(unsigned why);

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
 * The rest only while an off-CPU window is open. Times are the clock's
 * raw units (prof_off_begin). Guarded by the run-queue lock of the
 * task's CPU. */
struct prof_off {
    uint64_t of_out;            /* switched out (not before the window) */
    uint64_t of_wake;           /* woken */
    uint32_t of_gen;            /* the window the fields below belong to */
    uint8_t of_phase;           /* enum prof_off_phase */
    uint8_t of_why;             /* at switch-out */
    uint8_t of_wait_why;        /* of the wait under way (always written) */
    uint8_t of_wdepth;          /* frames of the waker's chain */
    const char *of_name;        /* at switch-out */
    const char *of_wait_name;   /* always written, with of_wait_why */
    int32_t of_waker;           /* pid; 0: the tick; -1: not woken */
    uint32_t of_wirq;           /* the interrupt the wake came in
                                   (PROF_IRQ_WORD), or 0 */
    uintptr_t of_wframes[PROF_FRAMES];
};

/* The open window: its generation, its ends in the clock's units, and
 * what one unit is in ns. */
struct prof_off_window {
    uint32_t ow_gen;
    uint64_t ow_t0;
    uint64_t ow_t1;             /* UINT64_MAX while open */
    uint64_t ow_mult;           /* ns per unit, 32.32 fixed point */
};
extern struct prof_off_window prof_off_win;

/* The switch path's whole cost with off-CPU profiling off: this one test
 * of memory and its branch, predicted not taken: x86-64 `testb $4,
 * prof_gate; jne`, arm64 `ldr; tbnz` (a literal load: cpu_load_near_u32,
 * hal/cpu.h's inline half; pg_state is the gate's first word). A plain
 * read, because GCC folds neither an atomic nor a volatile load into the
 * test (it cost a third instruction on every switch). It is only a hint: one aligned word
 * that cannot tear, read once per call; what is recorded is decided by
 * the reservation's own load of the gate, under the producers' guard (D, B in
 * kernel/prof/ring_produce.h). A caller that sees true acquires
 * (prof_off_acquire) before it reads the window. */
static inline bool prof_off_on(void)
{
    return __builtin_expect((cpu_load_near_u32(prof_gate) & PROF_GATE_KIND(PROF_KIND_OFFCPU)) != 0,
                            0);
}
/* Pairs with the gate's release in prof_ring_open (A, kernel/prof/ring.c):
 * the window's fields read after it are this window's. */
static inline void prof_off_acquire(void)
{
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
}

/* The session, before it opens the gate: a new window from now, in a
 * clock whose unit is mult / 2^32 ns (time_ns_mult, kernel/time.h). */
void prof_off_begin(uint64_t now, uint64_t mult);
/* The session, before its sweep: nothing is charged past now. */
void prof_off_end(uint64_t now);

/* A wait is about to begin (sleep_ms, waitq_wait): always called. A
 * queue or mutex without a name (never initialised) keeps NULL here and
 * is "?" in its record (prof_off_put): its wait is still a wait, and
 * every reader can print the name it is given. */
static inline void prof_off_wait(struct prof_off *o, unsigned why, const char *name)
{
    o->of_wait_why = (uint8_t)why;
    o->of_wait_name = name;
}

/* Records one interval can produce: blocked, the waker's chain, runnable. */
#define PROF_OFF_RECS 3

/* What a task is owed for one interval, in ns (0: that part is not
 * owed): blocked (its reason, name and waker are the task's of_why,
 * of_name, of_waker), then runnable, under od_rwhy. */
struct prof_off_owed {
    uint64_t od_blocked;
    uint64_t od_runnable;
    unsigned od_rwhy;           /* PROF_WHY_RUNNABLE or PROF_WHY_PREEMPTED */
};

/* ---- the switch path, inline: the scheduler calls it on every switch
 * of an off-CPU window, under the run-queue lock, interrupts off ---- */

/* Inline all through: as calls, each step cost the switch ~10 guest
 * instructions of a budget of 150. */
#define PROF_OFF_INLINE static inline __attribute__((always_inline))

/* now, clipped to the window at both ends: the wake's time. */
PROF_OFF_INLINE uint64_t prof_off_clip(uint64_t t)
{
    uint64_t t1 = __atomic_load_n(&prof_off_win.ow_t1, __ATOMIC_RELAXED);
    if (t < prof_off_win.ow_t0)
        t = prof_off_win.ow_t0;
    return t > t1 ? t1 : t;
}

/* now, clipped to the window's end only: the switch's clock, for its two
 * halves. Its lower clip is moot there, so it is left out (a load, a
 * compare and a select on every switch): the switch reads the counter
 * after the gate's acquire (prof_off_acquire), so after prof_off_begin
 * took t0 from the same machine-wide counter (the TSC, arm64's system
 * counter); a time it stamps is not before t0 but by what a counter
 * read ahead of the gate's load or skew between CPUs' counters may
 * make it: nanoseconds, added to one record's weight. What began before
 * the window is a stale task's (prof_off_stale), counted from t0. */
PROF_OFF_INLINE uint64_t prof_off_clip_end(uint64_t t)
{
    uint64_t t1 = __atomic_load_n(&prof_off_win.ow_t1, __ATOMIC_RELAXED);
    return t > t1 ? t1 : t;
}

PROF_OFF_INLINE bool prof_off_stale(const struct prof_off *o)
{
    return o->of_gen != prof_off_win.ow_gen;
}

/* [from, to] in ns (none when to is not after from). 128 bits: the
 * product overflows 64 past a few ms of a GHz clock. */
PROF_OFF_INLINE uint64_t prof_off_ns(uint64_t from, uint64_t to)
{
    if (to <= from)
        return 0;
    return (uint64_t)((unsigned __int128)(to - from) * prof_off_win.ow_mult >> 32);
}

/* Begin this window's state: away since t, for the reason of the wait
 * under way. */
PROF_OFF_INLINE void prof_off_start(struct prof_off *o, uint8_t phase, uint64_t t)
{
    o->of_gen = prof_off_win.ow_gen;
    o->of_phase = phase;
    o->of_out = o->of_wake = t;
    o->of_why = o->of_wait_why;
    o->of_name = o->of_wait_name;
    o->of_waker = -1;
    o->of_wirq = 0;
    o->of_wdepth = 0;
}

/* Switch-out of a task that was running (true: preempted or yielded) or
 * waiting (its of_wait_why), at t (prof_off_clip_end's: the switch clips
 * its clock once for its two halves). Only what its switch-in reads is
 * stored: a preempted task is never charged as blocked (its switch-out
 * is its wake), so its name, waker and the waker's chain are not read. */
PROF_OFF_INLINE void prof_off_out(struct prof_off *o, bool running, uint64_t t)
{
    uint32_t gen = prof_off_win.ow_gen;
    o->of_out = o->of_wake = t;
    /* Laid out for the common switch-out, of a task preempted (or that
     * yielded) after it ran in this window: its generation is already
     * the window's. Each jump out of line and back costs an instruction. */
    if (__builtin_expect(o->of_gen == gen, 1)) {
        if (__builtin_expect(o->of_phase == PROF_OFF_WOKEN_EARLY, 0)) {
            /* Woken before it was gone: never blocked, runnable from
             * here, and the waker it already has. */
            o->of_phase = PROF_OFF_RUNNABLE;
            return;
        }
    } else {
        o->of_gen = gen;
    }
    if (__builtin_expect(running, 1)) {
        o->of_phase = PROF_OFF_RUNNABLE;
        o->of_why = PROF_WHY_PREEMPTED;
        return;
    }
    o->of_phase = PROF_OFF_BLOCKED;
    o->of_why = o->of_wait_why;
    o->of_name = o->of_wait_name;
    o->of_waker = -1;
    o->of_wirq = 0;
    o->of_wdepth = 0;
}

/* Switch-in at t (prof_off_clip_end's): what is owed into d, and how many
 * records it makes (0..PROF_OFF_RECS). Out of line: the switch path
 * takes prof_off_in_preempted first. */
unsigned prof_off_in(struct prof_off *o, uint64_t t, struct prof_off_owed *d);

/* prof_off_in for the common switch-in, inline: a task preempted in this
 * window (a yield, the tick: most switches of a busy CPU), owed one
 * record, PROF_WHY_PREEMPTED, runnable from its switch-out. True, with
 * its weight in *w (0: no record), for such a task; false, with nothing
 * changed, for every other: prof_off_in's. */
PROF_OFF_INLINE bool prof_off_in_preempted(struct prof_off *o, uint64_t t, uint64_t *w)
{
    /* Phase and reason side by side, tested as one half-word (GCC
     * merges the two byte loads; as two tests, arm64 took five
     * instructions). */
    if (__builtin_expect(o->of_gen != prof_off_win.ow_gen ||
                         (o->of_phase | o->of_why << 8) != (PROF_OFF_RUNNABLE |
                                                            PROF_WHY_PREEMPTED << 8), 0))
        return false;
    o->of_phase = PROF_OFF_ON;
    *w = prof_off_ns(o->of_out, t);
    return true;
}

PROF_OFF_INLINE void prof_off_fill(struct prof_record *r, int pid, unsigned why,
                                 const char *name, int waker, uint64_t w, unsigned depth)
{
    r->pr_pid = pid;
    r->pr_cost = 0;
    r->pr_depth = (uint8_t)depth;
    r->pr_why = (uint8_t)why;
    r->pr_tag = PROF_TAG(0, PROF_KIND_OFFCPU);
    r->pr_waker = waker;
    r->pr_weight = w;
    r->pr_name = name;
}

/* The records of d for task pid (prof_off_count of them) into the slots
 * buf[(head + i) & mask], all but the task's chain: the caller walks that
 * into the first slot's frames afterwards, straight from the stack (no
 * copy for the common record), and then calls prof_off_put_chain with
 * what this returns: the slot that takes a copy of the chain too (the
 * runnable record after a blocked one), or NULL. Frames past a record's
 * depth are left as they were: every reader stops at pr_depth. */
PROF_OFF_INLINE struct prof_record *prof_off_put(const struct prof_off *o,
                                                 const struct prof_off_owed *d, int pid,
                                                 struct prof_record *buf, uint32_t head,
                                                 uint32_t mask)
{
    struct prof_record *r = &buf[head & mask];
    if (!d->od_blocked) {
        prof_off_fill(r, pid, d->od_rwhy, NULL, -1, d->od_runnable, 0);
        return NULL;
    }
    /* A queue's or mutex's wait with no name is "?" from here on: here,
     * in a window, rather than at every wait (bench_switch's wake, off). */
    const char *name = o->of_name;
    if (!name && o->of_why != PROF_WHY_SLEEP)
        name = "?";
    prof_off_fill(r, pid, o->of_why, name, o->of_waker, d->od_blocked, 0);
    r->pr_cost = o->of_wirq;
    if (o->of_wdepth) {
        struct prof_record *w = &buf[++head & mask];
        unsigned wd = o->of_wdepth > PROF_FRAMES ? PROF_FRAMES : o->of_wdepth;
        prof_off_fill(w, pid, PROF_WHY_WAKER, NULL, o->of_waker, d->od_blocked, wd);
        w->pr_cost = o->of_wirq;
        for (unsigned i = 0; i < wd; i++)
            w->pr_frames[i] = o->of_wframes[i];
    }
    if (!d->od_runnable)
        return NULL;
    r = &buf[++head & mask];
    prof_off_fill(r, pid, d->od_rwhy, NULL, -1, d->od_runnable, 0);
    return r;
}

/* The chain's depth (the caller's walk into first) in first, and in copy
 * (prof_off_put's answer) with the chain itself. */
PROF_OFF_INLINE void prof_off_put_chain(struct prof_record *first, struct prof_record *copy,
                                        unsigned depth)
{
    if (depth > PROF_FRAMES)
        depth = PROF_FRAMES;
    first->pr_depth = (uint8_t)depth;
    if (!copy)
        return;
    copy->pr_depth = (uint8_t)depth;
    for (unsigned i = 0; i < depth; i++)
        copy->pr_frames[i] = first->pr_frames[i];
}

/* A wake at now by waker (pid; 0: the tick). on_cpu: the task has not
 * been switched out yet (it is still its CPU's current). True: the
 * caller now writes the waker's chain into of_wframes (at most
 * PROF_FRAMES, straight from its walk) and its depth into of_wdepth;
 * false: this wake names nobody (nothing is owed, or the task is
 * runnable already). */
PROF_OFF_INLINE bool prof_off_wake(struct prof_off *o, bool on_cpu, uint64_t now, int waker)
{
    uint64_t t = prof_off_clip(now);
    if (prof_off_stale(o) || o->of_phase == PROF_OFF_ON) {
        /* Still on its CPU: the wake came before the switch-out did.
         * Else it left before the window began: blocked since its start. */
        if (!on_cpu && !prof_off_stale(o))
            return false;       /* on no list a wake can reach: nothing owed */
        prof_off_start(o, on_cpu ? PROF_OFF_WOKEN_EARLY : PROF_OFF_BLOCKED,
                       prof_off_win.ow_t0);
    }
    if (o->of_phase == PROF_OFF_BLOCKED)
        o->of_phase = PROF_OFF_RUNNABLE;
    else if (o->of_phase != PROF_OFF_WOKEN_EARLY)
        return false;           /* runnable already, or done */
    o->of_wake = t;
    o->of_waker = waker;
    o->of_wirq = 0;
    o->of_wdepth = 0;
    return true;
}

/* The window's end, for a task off its CPU (blocked: it waits, else it is
 * runnable): what it is owed up to the end, into d, and how many records
 * that makes (as prof_off_in); then it is done for this window. */
unsigned prof_off_finish(struct prof_off *o, bool blocked, struct prof_off_owed *d);
