/* kernel/lockcharge.h: `profile lock`'s arithmetic, contention charged
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
 *     while it spins), so each CPU has one slot (struct lockcharge_slot:
 *     which lock, since when), written only by that CPU. The holder's
 *     release reads every CPU's slot (lockcharge_spin_charge): no lock,
 *     no allocation, no write but its own, as the release may run in an
 *     interrupt that came while this CPU held another lock.
 *   mutex: its waiters arrive, leave and are charged under its wait
 *     queue's lock, which the release takes anyway to wake them; an
 *     account (struct lockcharge_acct) keeps how many wait since before
 *     this hold began and the sum of the later arrivals' times, so a
 *     release costs the same for one waiter as for a hundred.
 *
 * Times are the caller's clock (cycles_now_inline() in the kernel); the
 * caller makes them ns. Prefix lockcharge_, lcs_/lca_/lct_/lcc_
 * for the fields. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What one release charges its holder: the waiters' time under this
 * hold, and how many waited under it. */
struct lockcharge_charge {
    uint64_t lcc_delay;
    uint32_t lcc_waits;
};

/* The time a waiter that arrived at arrive waited under a hold that
 * began at from, when it is released at now. */
static inline uint64_t lockcharge_share(uint64_t from, uint64_t arrive, uint64_t now)
{
    uint64_t start = arrive > from ? arrive : from;
    return now > start ? now - start : 0;
}

/* ---- spinlocks: a slot per CPU ---- */

struct lockcharge_slot {
    const void *lcs_lock;       /* the lock this CPU spins on, or NULL */
    uint64_t lcs_since;         /* when it began to spin */
};

/* This CPU begins to spin on lock at t, and stops (it took the lock).
 * The time before the lock: A, pairs with B in lockcharge_spin_charge. */
static inline void lockcharge_spin_begin(struct lockcharge_slot *s, const void *lock, uint64_t t)
{
    __atomic_store_n(&s->lcs_since, t, __ATOMIC_RELAXED);
    __atomic_store_n(&s->lcs_lock, lock, __ATOMIC_RELEASE);
}
static inline void lockcharge_spin_end(struct lockcharge_slot *s)
{
    __atomic_store_n(&s->lcs_lock, NULL, __ATOMIC_RELAXED);
}

/* The charge of lock's release at now, of a hold that began at from,
 * over the n CPUs' slots; self, this CPU's, is skipped (a holder never
 * spins on its own lock). Reads only: a slot that changes under the read
 * is a waiter that arrived or left as the lock was released, charged
 * for what its slot said. */
struct lockcharge_charge lockcharge_spin_charge(const struct lockcharge_slot *slots, unsigned n,
                                              unsigned self, const void *lock, uint64_t from,
                                              uint64_t now);

/* ---- mutexes: an account under the wait queue's lock ---- */

/* Every field is written under the mutex's wait-queue lock. A waiter
 * that arrived before this hold began is "old" and is charged from
 * lca_from; a later one is "new" and charged from its arrival, which
 * lca_new_sum adds up. lca_window says which profiling window the
 * account is of: an account of an older one is empty (its waiters'
 * departures were never seen). */
struct lockcharge_acct {
    uint32_t lca_window;
    uint32_t lca_hold;          /* moved by each hold's start */
    uint32_t lca_old, lca_new;
    uint64_t lca_new_sum;
    uint64_t lca_from;          /* this hold's start */
};

/* A waiter's ticket: the account's window and hold when it arrived. */
struct lockcharge_ticket {
    uint32_t lct_window, lct_hold;
    uint64_t lct_arrive;
};

/* A waiter arrives at t in window w (nonzero); its ticket. */
struct lockcharge_ticket lockcharge_arrive(struct lockcharge_acct *a, uint32_t w, uint64_t t);
/* That waiter leaves: it took the mutex (before lockcharge_hold). A
 * ticket of another window leaves nothing to undo. */
void lockcharge_leave(struct lockcharge_acct *a, const struct lockcharge_ticket *k);
/* A hold begins at t in window w: every waiter now is old. */
void lockcharge_hold(struct lockcharge_acct *a, uint32_t w, uint64_t t);
/* The holder releases at t in window w: what it is charged. */
struct lockcharge_charge lockcharge_release(struct lockcharge_acct *a, uint32_t w, uint64_t t);
