/* kernel/prof/offcpu.c: the off-CPU accounting's state machine
 * (kernel/prof/offcpu.h).
 *
 * Each task's struct prof_off moves through the phases of
 * enum prof_off_phase, one window at a time. A task whose generation is
 * not the window's did nothing in it yet, so what it is owed starts at
 * the window's start: that is how a wait that began before the window is
 * clipped to it, with no sweep at the window's opening and nothing on
 * the switch path while no window is open. Every time is clipped to
 * [t0, t1]: after prof_off_end nothing is charged past t1, and the
 * session's sweep (prof_off_finish, one task at a time) charges what is
 * still owed up to it.
 *
 * Profiler core: prefix prof_ and PROF_. */
#include "kernel/prof/offcpu.h"
#include <stddef.h>

struct prof_off_window prof_off_win = { 0, 0, UINT64_MAX };

static const char *const prof_why_names[PROF_WHY_MAX + 1] = {
    [PROF_WHY_SLEEP] = "sleep", [PROF_WHY_WAITQ] = "waitq",
    [PROF_WHY_MUTEX] = "mutex", [PROF_WHY_PREEMPTED] = "preempted",
    [PROF_WHY_RUNNABLE] = "runnable", [PROF_WHY_WAKER] = "waker",
};

const char *prof_why_name(unsigned why)
{
    return why <= PROF_WHY_MAX ? prof_why_names[why] : NULL;
}

void prof_off_begin(uint64_t now)
{
    prof_off_win.ow_gen++;
    prof_off_win.ow_t0 = now;
    __atomic_store_n(&prof_off_win.ow_t1, UINT64_MAX, __ATOMIC_RELAXED);
}

/* Relaxed, whole: a CPU that reads the old end charges a switch-in up to
 * its own now, microseconds past t1, and the sweep then owes it nothing. */
void prof_off_end(uint64_t now)
{
    __atomic_store_n(&prof_off_win.ow_t1, now, __ATOMIC_RELAXED);
}

static uint64_t prof_off_clip(uint64_t t)
{
    uint64_t t1 = __atomic_load_n(&prof_off_win.ow_t1, __ATOMIC_RELAXED);
    if (t < prof_off_win.ow_t0)
        t = prof_off_win.ow_t0;
    return t > t1 ? t1 : t;
}

static bool prof_off_stale(const struct prof_off *o)
{
    return o->of_gen != prof_off_win.ow_gen;
}

/* One record of weight w (0: none written) at out[n]; the new count. */
static unsigned prof_off_rec(struct prof_record *out, unsigned n, int pid,
                             unsigned why, const char *name, int waker, uint64_t w,
                             const uintptr_t *frames, unsigned depth)
{
    if (w == 0)
        return n;               /* a record weighs at least 1 */
    struct prof_record *r = &out[n];
    if (depth > PROF_FRAMES)
        depth = PROF_FRAMES;
    r->pr_pid = pid;
    r->pr_cost = 0;
    r->pr_depth = (uint8_t)depth;
    r->pr_why = (uint8_t)why;
    r->pr_tag = PROF_TAG(0, PROF_KIND_OFFCPU);
    r->pr_waker = waker;
    r->pr_weight = w;
    for (unsigned i = 0; i < PROF_FRAMES; i++)
        r->pr_frames[i] = i < depth ? frames[i] : 0;
    r->pr_name = name;
    return n + 1;
}

/* The blocked time [of_out, upto], its waker's chain right behind it. */
static unsigned prof_off_blocked(const struct prof_off *o, int pid, uint64_t upto,
                                 const uintptr_t *chain, unsigned depth,
                                 struct prof_record *out, unsigned n)
{
    uint64_t w = upto > o->of_out ? upto - o->of_out : 0;
    unsigned m = prof_off_rec(out, n, pid, o->of_why, o->of_name, o->of_waker, w,
                              chain, depth);
    if (m > n && o->of_wdepth)
        m = prof_off_rec(out, m, pid, PROF_WHY_WAKER, NULL, o->of_waker, w,
                         o->of_wframes, o->of_wdepth);
    return m;
}

/* Blocked to the wake, then runnable (or preempted) to upto. */
static unsigned prof_off_charge(const struct prof_off *o, int pid, uint64_t upto,
                                const uintptr_t *chain, unsigned depth,
                                struct prof_record *out)
{
    unsigned n = 0;
    if (o->of_phase == PROF_OFF_BLOCKED)
        return prof_off_blocked(o, pid, upto, chain, depth, out, 0);
    if (o->of_phase != PROF_OFF_RUNNABLE)
        return 0;
    n = prof_off_blocked(o, pid, o->of_wake, chain, depth, out, 0);
    unsigned why = o->of_why == PROF_WHY_PREEMPTED ? PROF_WHY_PREEMPTED : PROF_WHY_RUNNABLE;
    uint64_t w = upto > o->of_wake ? upto - o->of_wake : 0;
    return prof_off_rec(out, n, pid, why, NULL, -1, w, chain, depth);
}

/* Begin this window's state: away since t, for the reason of the wait
 * under way. */
static void prof_off_start(struct prof_off *o, uint8_t phase, uint64_t t)
{
    o->of_gen = prof_off_win.ow_gen;
    o->of_phase = phase;
    o->of_out = o->of_wake = t;
    o->of_why = o->of_wait_why;
    o->of_name = o->of_wait_name;
    o->of_waker = -1;
    o->of_wdepth = 0;
}

void prof_off_out(struct prof_off *o, bool running, uint64_t now)
{
    uint64_t t = prof_off_clip(now);
    if (!prof_off_stale(o) && o->of_phase == PROF_OFF_WOKEN_EARLY) {
        /* Woken before it was gone: never blocked, runnable from here,
         * and the waker it already has. */
        o->of_phase = PROF_OFF_RUNNABLE;
        o->of_out = o->of_wake = t;
        return;
    }
    prof_off_start(o, running ? PROF_OFF_RUNNABLE : PROF_OFF_BLOCKED, t);
    if (running) {
        o->of_why = PROF_WHY_PREEMPTED;
        o->of_name = NULL;
    }
}

void prof_off_wake(struct prof_off *o, bool on_cpu, uint64_t now, int waker,
                   const uintptr_t *frames, unsigned depth)
{
    uint64_t t = prof_off_clip(now);
    if (prof_off_stale(o) || o->of_phase == PROF_OFF_ON) {
        /* Still on its CPU: the wake came before the switch-out did.
         * Else it left before the window began: blocked since its start. */
        if (!on_cpu && !prof_off_stale(o))
            return;             /* on no list a wake can reach: nothing owed */
        prof_off_start(o, on_cpu ? PROF_OFF_WOKEN_EARLY : PROF_OFF_BLOCKED,
                       prof_off_win.ow_t0);
    }
    if (o->of_phase == PROF_OFF_BLOCKED)
        o->of_phase = PROF_OFF_RUNNABLE;
    else if (o->of_phase != PROF_OFF_WOKEN_EARLY)
        return;                 /* runnable already, or done */
    o->of_wake = t;
    o->of_waker = waker;
    if (depth > PROF_FRAMES)
        depth = PROF_FRAMES;
    for (unsigned i = 0; i < depth; i++)
        o->of_wframes[i] = frames[i];
    o->of_wdepth = (uint8_t)depth;
}

unsigned prof_off_in(struct prof_off *o, int pid, uint64_t now,
                     const uintptr_t *chain, unsigned depth,
                     struct prof_record *out)
{
    uint64_t t = prof_off_clip(now);
    unsigned n;
    if (prof_off_stale(o)) {
        /* Away since before the window and never woken in it: runnable
         * (woken or preempted before the window, which one is unknown). */
        n = prof_off_rec(out, 0, pid, PROF_WHY_RUNNABLE, NULL, -1,
                         t - prof_off_win.ow_t0, chain, depth);
        o->of_gen = prof_off_win.ow_gen;
    } else {
        n = prof_off_charge(o, pid, t, chain, depth, out);
    }
    o->of_phase = PROF_OFF_ON;
    return n;
}

unsigned prof_off_finish(struct prof_off *o, int pid, bool blocked,
                         const uintptr_t *chain, unsigned depth,
                         struct prof_record *out)
{
    uint64_t t1 = __atomic_load_n(&prof_off_win.ow_t1, __ATOMIC_RELAXED);
    if (t1 == UINT64_MAX)
        return 0;               /* the window has not ended */
    unsigned n = 0;
    if (prof_off_stale(o)) {
        /* Away the whole window. */
        prof_off_start(o, blocked ? PROF_OFF_BLOCKED : PROF_OFF_RUNNABLE,
                       prof_off_win.ow_t0);
        if (!blocked || o->of_why == PROF_WHY_NONE)
            o->of_why = PROF_WHY_RUNNABLE;
    }
    if (o->of_phase == PROF_OFF_BLOCKED || o->of_phase == PROF_OFF_RUNNABLE)
        n = prof_off_charge(o, pid, t1, chain, depth, out);
    o->of_phase = PROF_OFF_DONE;
    return n;
}
