/* kernel/prof/lockprof.h: `profile lock`'s arithmetic, contention charged
 * to the holder. Every nanosecond a task waits for a lock is charged to
 * the task that held the lock during that nanosecond, when it releases
 * it: a waiter that waited under two holders is charged to each for its
 * part under that one (Go's mutex profile charges it all to the last
 * releaser). A holder's charge runs from the later of its hold's start
 * and the waiter's arrival to the release.
 *
 * Two ways to know the waiters, one per kind of lock:
 *
 *   spinlock: each CPU spins on at most one lock (interrupts are off
 *     while it spins), so each CPU has one slot (struct prof_lock_slot:
 *     which lock, since when), written only by that CPU. The holder's
 *     release reads every CPU's slot (prof_lock_spin_charge): no lock,
 *     no allocation, no write but its own, as the release may run in an
 *     interrupt that came while this CPU held another lock.
 *   mutex: its waiters arrive, leave and are charged under its wait
 *     queue's lock, which the release takes anyway to wake them; an
 *     account (struct prof_lock_acct) keeps how many wait since before
 *     this hold began and the sum of the later arrivals' times, so a
 *     release costs the same for one waiter as for a hundred.
 *
 * Times are the caller's clock (cycles_now_inline() in the kernel); the
 * caller makes them ns. Profiler core: prefix prof_lock_, pls_/pla_/plc_
 * for the fields. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What one release charges its holder: the waiters' time under this
 * hold, and how many waited under it. */
struct prof_lock_charge {
    uint64_t plc_delay;
    uint32_t plc_waits;
};

/* The time a waiter that arrived at arrive waited under a hold that
 * began at from, when it is released at now. */
static inline uint64_t prof_lock_share(uint64_t from, uint64_t arrive, uint64_t now)
{
    uint64_t start = arrive > from ? arrive : from;
    return now > start ? now - start : 0;
}

/* ---- spinlocks: a slot per CPU ---- */

struct prof_lock_slot {
    const void *pls_lock;       /* the lock this CPU spins on, or NULL */
    uint64_t pls_since;         /* when it began to spin */
};

/* This CPU begins to spin on lock at t, and stops (it took the lock).
 * The time before the lock: A, pairs with B in prof_lock_spin_charge. */
static inline void prof_lock_spin_begin(struct prof_lock_slot *s, const void *lock, uint64_t t)
{
    __atomic_store_n(&s->pls_since, t, __ATOMIC_RELAXED);
    __atomic_store_n(&s->pls_lock, lock, __ATOMIC_RELEASE);
}
static inline void prof_lock_spin_end(struct prof_lock_slot *s)
{
    __atomic_store_n(&s->pls_lock, NULL, __ATOMIC_RELAXED);
}

/* The charge of lock's release at now, of a hold that began at from,
 * over the n CPUs' slots; self, this CPU's, is skipped (a holder never
 * spins on its own lock). Reads only: a slot that changes under the read
 * is a waiter that arrived or left as the lock was released, charged
 * for what its slot said. */
struct prof_lock_charge prof_lock_spin_charge(const struct prof_lock_slot *slots, unsigned n,
                                              unsigned self, const void *lock, uint64_t from,
                                              uint64_t now);

/* ---- mutexes: an account under the wait queue's lock ---- */

/* Every field is written under the mutex's wait-queue lock. A waiter
 * that arrived before this hold began is "old" and is charged from
 * pla_from; a later one is "new" and charged from its arrival, which
 * pla_new_sum adds up. pla_window says which profiling window the
 * account is of: an account of an older one is empty (its waiters'
 * departures were never seen). */
struct prof_lock_acct {
    uint32_t pla_window;
    uint32_t pla_hold;          /* moved by each hold's start */
    uint32_t pla_old, pla_new;
    uint64_t pla_new_sum;
    uint64_t pla_from;          /* this hold's start */
};

/* A waiter's ticket: the account's window and hold when it arrived. */
struct prof_lock_ticket {
    uint32_t plt_window, plt_hold;
    uint64_t plt_arrive;
};

/* A waiter arrives at t in window w (nonzero); its ticket. */
struct prof_lock_ticket prof_lock_arrive(struct prof_lock_acct *a, uint32_t w, uint64_t t);
/* That waiter leaves: it took the mutex (before prof_lock_hold). A
 * ticket of another window leaves nothing to undo. */
void prof_lock_leave(struct prof_lock_acct *a, const struct prof_lock_ticket *k);
/* A hold begins at t in window w: every waiter now is old. */
void prof_lock_hold(struct prof_lock_acct *a, uint32_t w, uint64_t t);
/* The holder releases at t in window w: what it is charged. */
struct prof_lock_charge prof_lock_release(struct prof_lock_acct *a, uint32_t w, uint64_t t);
