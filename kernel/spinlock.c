/* kernel/spinlock.c: the spinlock's contended path (the uncontended one
 * is inline, kernel/spinlock.h). Out of line so that the uncontended
 * pair pays nothing for what only a wait needs: the clock reads,
 * lockstat's count of the wait, and the time spun for an off-CPU window
 * (`profile off`'s [spin NAME]: lockstat_spun), and the spinner's slot
 * for a lock window (`profile lock`: kernel/lockstat.h). */
#include "kernel/spinlock.h"

void spin_lock_contended(spinlock_t *l)
{
    unsigned g0 = lock_hooks();
    bool timed = __builtin_expect(g0 != 0, 0);
    uint64_t t0 = timed ? cycles_now_inline() : 0;
    /* A lock window: this CPU's slot says whom it waits for, from when,
     * for the holder's release to read (interrupts are off: one lock a
     * CPU at a time). */
    struct lockcharge_slot *slot = NULL;
    if (timed && (g0 & LOCKSTAT_GATE_CHARGE)) {
        slot = &lockstat_slots[cpu_index_inline()];
        lockcharge_spin_begin(slot, &l->stat, t0);
    }
    do {
        while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED)) {
            /* Tell the holder someone waits, again after each release
             * (the new holder's release cleared it). */
            if (timed && !__atomic_load_n(&l->stat.lh_waited, __ATOMIC_RELAXED))
                __atomic_store_n(&l->stat.lh_waited, 1, __ATOMIC_RELAXED);
            cpu_relax();
        }
    } while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE));
    if (slot)
        lockcharge_spin_end(slot);
    unsigned gate = lock_hooks();
    if (!gate)
        return;
    if (timed && (gate & LOCKSTAT_GATE_SPUN))
        lockstat_spun(l->name, t0, cycles_now_inline());
    if (timed)
        lockstat_waited(&l->stat, l->name, LOCK_SPIN, cycles_now_inline() - t0);
    lockstat_acquired(&l->stat, l->name, LOCK_SPIN, gate);
}

void spin_release_charged(spinlock_t *l)
{
    lockstat_charge_released(&l->stat);
    lockstat_released(&l->stat);
    __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}
