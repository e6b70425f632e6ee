/* kernel/spinlock.h: spinlocks that save and restore interrupts. */
#pragma once
#include "hal/cpu.h"

/* Every spinlock is named where it is defined, for what it guards, as
 * wait queues and mutexes are (kernel/sched.h): SPINLOCK_INIT("heap") for
 * a static one, spin_init(&l, "runqueue") for one inside an object made
 * at run time. A name is a string literal of 1-31 characters from
 * '!'..'~' except ';' and ':' (scripts/check_tree.sh checks the tree's).
 * A lock never initialised (all zeroes) works and is reported as "?". */
typedef struct {
    volatile unsigned locked;
    unsigned owner;                /* the holder's CPU, ~0u while free */
    const char *name;
} spinlock_t;
#define SPINLOCK_INIT(nm) { 0, ~0u, "" nm "" }

static inline void spin_init(spinlock_t *l, const char *name)
{
    l->locked = 0;
    l->owner = ~0u;
    l->name = name;
}

/* The name a report shows: "?" for a lock never named. */
static inline const char *spin_name(const spinlock_t *l)
{
    return l->name ? l->name : "?";
}

static inline unsigned long spin_lock(spinlock_t *l)
{
    unsigned long f = irq_save();
    while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
            cpu_relax();
    l->owner = cpu_index_inline();   /* every lock pays it: no call */
    return f;
}

static inline void spin_unlock(spinlock_t *l, unsigned long f)
{
    l->owner = ~0u;
    __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
    irq_restore(f);
}

/* Release the lock but leave interrupts off: for a sleeper that must not
 * take an interrupt between queueing itself and switching away. */
static inline void spin_unlock_irqs_off(spinlock_t *l)
{
    l->owner = ~0u;
    __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}
