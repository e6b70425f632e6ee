/* kernel/prof/offcpu.c: the off-CPU accounting's state machine
 * (kernel/prof/offcpu.h).
 *
 * Each task's struct prof_off moves through the phases of
 * enum prof_off_phase, one window at a time. A task whose generation is
 * not the window's did nothing in it yet, so what it is owed starts at
 * the window's start: that is how a wait that began before the window is
 * clipped to it, with no sweep at the window's opening and nothing on
 * the switch path while no window is open. The switch path itself is
 * inline, in kernel/prof/offcpu.h; the window and its end are here. Every time is clipped to
 * [t0, t1]: after prof_off_end nothing is charged past t1, and the
 * session's sweep (prof_off_finish, one task at a time) charges what is
 * still owed up to it.
 *
 * Profiler core: prefix prof_ and PROF_. */
#include "kernel/prof/offcpu.h"
#include <stddef.h>

struct prof_off_window prof_off_win = { 0, 0, UINT64_MAX, 1ull << 32 };

static const char *const prof_why_names[PROF_WHY_MAX + 1] = {
    [PROF_WHY_SLEEP] = "sleep", [PROF_WHY_WAITQ] = "waitq",
    [PROF_WHY_MUTEX] = "mutex", [PROF_WHY_PREEMPTED] = "preempted",
    [PROF_WHY_RUNNABLE] = "runnable", [PROF_WHY_WAKER] = "waker", [PROF_WHY_SPIN] = "spin",
};

const char *prof_why_name(unsigned why)
{
    return why <= PROF_WHY_MAX ? prof_why_names[why] : NULL;
}

bool prof_why_blocked(unsigned why)
{
    return why == PROF_WHY_SLEEP || why == PROF_WHY_WAITQ || why == PROF_WHY_MUTEX;
}

/* The records d makes: the blocked one and its waker's chain (where it
 * has one), then the runnable one. */
static unsigned prof_off_count(const struct prof_off *o, const struct prof_off_owed *d)
{
    return (d->od_blocked != 0) * (1u + (o->of_wdepth != 0)) + (d->od_runnable != 0);
}

/* Blocked to the wake, then runnable (or preempted) to upto. */
static unsigned prof_off_charge(const struct prof_off *o, uint64_t upto,
                                       struct prof_off_owed *d)
{
    d->od_blocked = d->od_runnable = 0;
    d->od_rwhy = o->of_why == PROF_WHY_PREEMPTED ? PROF_WHY_PREEMPTED : PROF_WHY_RUNNABLE;
    if (o->of_phase == PROF_OFF_BLOCKED) {
        d->od_blocked = prof_off_ns(o->of_out, upto);
    } else if (o->of_phase == PROF_OFF_RUNNABLE) {
        d->od_blocked = prof_off_ns(o->of_out, o->of_wake);
        d->od_runnable = prof_off_ns(o->of_wake, upto);
    }
    return prof_off_count(o, d);
}

unsigned prof_off_in(struct prof_off *o, uint64_t t, struct prof_off_owed *d)
{
    unsigned n;
    if (prof_off_stale(o)) {
        /* Away since before the window and never woken in it: runnable
         * (woken or preempted before the window, which one is unknown). */
        d->od_blocked = 0;
        d->od_runnable = prof_off_ns(prof_off_win.ow_t0, t);
        d->od_rwhy = PROF_WHY_RUNNABLE;
        n = d->od_runnable != 0;
        o->of_gen = prof_off_win.ow_gen;
    } else {
        n = prof_off_charge(o, t, d);
    }
    o->of_phase = PROF_OFF_ON;
    return n;
}

void prof_off_begin(uint64_t now, uint64_t mult)
{
    prof_off_win.ow_gen++;
    prof_off_win.ow_t0 = now;
    prof_off_win.ow_mult = mult;
    __atomic_store_n(&prof_off_win.ow_t1, UINT64_MAX, __ATOMIC_RELAXED);
}

/* Relaxed, whole: a CPU that reads the old end charges a switch-in up to
 * its own now, microseconds past t1, and the sweep then owes it nothing. */
void prof_off_end(uint64_t now)
{
    __atomic_store_n(&prof_off_win.ow_t1, now, __ATOMIC_RELAXED);
}

unsigned prof_off_finish(struct prof_off *o, bool blocked, struct prof_off_owed *d)
{
    uint64_t t1 = __atomic_load_n(&prof_off_win.ow_t1, __ATOMIC_RELAXED);
    unsigned n = 0;
    if (t1 == UINT64_MAX)
        return 0;               /* the window has not ended */
    if (prof_off_stale(o)) {
        /* Away the whole window. */
        prof_off_start(o, blocked ? PROF_OFF_BLOCKED : PROF_OFF_RUNNABLE,
                       prof_off_win.ow_t0);
        if (!blocked || o->of_why == PROF_WHY_NONE)
            o->of_why = PROF_WHY_RUNNABLE;
    }
    if (o->of_phase == PROF_OFF_BLOCKED || o->of_phase == PROF_OFF_RUNNABLE)
        n = prof_off_charge(o, t1, d);
    o->of_phase = PROF_OFF_DONE;
    return n;
}
