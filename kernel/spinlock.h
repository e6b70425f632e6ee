/* kernel/spinlock.h: spinlocks that save and restore interrupts. */
#pragma once
#include "hal/cpu.h"
#include "kernel/lockstat.h"

/* Every spinlock is named where it is defined, for what it guards, as
 * wait queues and mutexes are (kernel/sched.h): SPINLOCK_INIT("heap") for
 * a static one, spin_init(&l, "runqueue") for one inside an object made
 * at run time. A name is a string literal of 1-31 characters from
 * '!'..'~' except ';' and ':' (scripts/check_tree.sh checks the tree's).
 * A lock never initialised (all zeroes) works and is reported as "?".
 *
 * locked is 0 while free and 1 while held. What lockstat counts of a
 * lock is in stat (kernel/lockstat.h), written by the holder. */
typedef struct spinlock {
    volatile unsigned locked;
    const char *name;
    struct lockstat_hold stat;
} spinlock_t;
#define SPINLOCK_INIT(nm) { .locked = 0, .name = "" nm "" }

/* Once, before the lock is used (kernel/lockstat.h: a counted lock stays
 * on lockstat's list). */
static inline void spin_init(spinlock_t *l, const char *name)
{
    l->locked = 0;
    l->name = name;
    l->stat = (struct lockstat_hold){ .lh_gen = 0 };
}

/* The name a report shows: "?" for a lock never named. */
static inline const char *spin_name(const spinlock_t *l)
{
    return l->name ? l->name : "?";
}

/* The contended path, out of line (kernel/spinlock.c): spins until the
 * lock is free and takes it, and accounts the wait when lockstat wants
 * it. Interrupts are off. */
void spin_lock_contended(spinlock_t *l);

static inline unsigned long spin_lock(spinlock_t *l)
{
    unsigned long f = irq_save();
    if (__builtin_expect(__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE), 0)) {
        spin_lock_contended(l);
    } else {
        unsigned gate = lock_hooks();
        if (__builtin_expect(gate != 0, 0))
            lockstat_acquired(&l->stat, l->name, LOCK_SPIN, gate);
    }
    return f;
}

/* The release of a hold a lock window stamped (kernel/lockstat.h), out
 * of line (kernel/spinlock.c): the hooks and the word freed, so nothing
 * of the lock is live after the call. With the word freed here instead,
 * the caller kept the lock in a register across it, and x86-64's
 * uncontended mutex pair (waitq_wake_all's lock, inline in mutex_unlock)
 * saved two more registers on every call. */
void spin_release_charged(spinlock_t *l);

static inline void spin_release_inline(spinlock_t *l)
{
    if (__builtin_expect(l->stat.lh_hooks != 0, 0)) {
        if (__builtin_expect(l->stat.lh_timed & LOCKSTAT_HOLD_CHARGE, 0)) {
            spin_release_charged(l);
            return;
        }
        lockstat_released(&l->stat);
    }
    __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

static inline void spin_unlock(spinlock_t *l, unsigned long f)
{
    spin_release_inline(l);
    irq_restore(f);
}

/* Release the lock but leave interrupts off: for a sleeper that must not
 * take an interrupt between queueing itself and switching away. */
static inline void spin_unlock_irqs_off(spinlock_t *l)
{
    spin_release_inline(l);
}
