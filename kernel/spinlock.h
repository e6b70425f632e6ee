/* kernel/spinlock.h: spinlocks that save and restore interrupts. */
#pragma once
#include "hal/cpu.h"

typedef struct { volatile unsigned locked; unsigned owner; } spinlock_t;
#define SPINLOCK_INIT { 0, ~0u }

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
