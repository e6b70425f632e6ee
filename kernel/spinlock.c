/* kernel/spinlock.c: the spinlock's contended path (the uncontended one
 * is inline, kernel/spinlock.h). Out of line so that the uncontended
 * pair pays nothing for what only a wait needs: the clock reads,
 * lockstat's count of the wait, and the time spun for an off-CPU window
 * (`profile off`'s [spin NAME]: lockstat_spun). */
#include "kernel/spinlock.h"

void spin_lock_contended(spinlock_t *l)
{
    bool timed = lock_hooks_on();
    uint64_t t0 = timed ? cycles_now_inline() : 0;
    do {
        while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED)) {
            /* Tell the holder someone waits, again after each release
             * (the new holder's release cleared it). */
            if (timed && !__atomic_load_n(&l->stat.lh_waited, __ATOMIC_RELAXED))
                __atomic_store_n(&l->stat.lh_waited, 1, __ATOMIC_RELAXED);
            cpu_relax();
        }
    } while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE));
    unsigned gate = lock_hooks();
    if (!gate)
        return;
    if (timed && (gate & LOCKSTAT_GATE_SPUN))
        lockstat_spun(l->name, t0, cycles_now_inline());
    if (timed)
        lockstat_waited(&l->stat, l->name, LOCK_SPIN, cycles_now_inline() - t0);
    lockstat_acquired(&l->stat, l->name, LOCK_SPIN, gate);
}
