/* kernel/prof/lockprof.c: `profile lock`'s arithmetic (kernel/prof/lockprof.h
 * says what is charged to whom, and why the spinlock's side takes no
 * lock). */
#include "kernel/prof/lockprof.h"

struct prof_lock_charge prof_lock_spin_charge(const struct prof_lock_slot *slots, unsigned n,
                                              unsigned self, const void *lock, uint64_t from,
                                              uint64_t now)
{
    struct prof_lock_charge c = { 0, 0 };
    for (unsigned i = 0; i < n; i++) {
        /* B: pairs with A in prof_lock_spin_begin. */
        if (i == self || __atomic_load_n(&slots[i].pls_lock, __ATOMIC_ACQUIRE) != lock)
            continue;
        c.plc_delay += prof_lock_share(from, __atomic_load_n(&slots[i].pls_since,
                                                             __ATOMIC_RELAXED), now);
        c.plc_waits++;
    }
    return c;
}

/* An account of another window is empty: its waiters left unseen. */
static void prof_lock_window(struct prof_lock_acct *a, uint32_t w)
{
    if (a->pla_window != w)
        *a = (struct prof_lock_acct){ .pla_window = w, .pla_hold = a->pla_hold };
}

struct prof_lock_ticket prof_lock_arrive(struct prof_lock_acct *a, uint32_t w, uint64_t t)
{
    prof_lock_window(a, w);
    a->pla_new++;
    a->pla_new_sum += t;
    return (struct prof_lock_ticket){ .plt_window = w, .plt_hold = a->pla_hold, .plt_arrive = t };
}

void prof_lock_leave(struct prof_lock_acct *a, const struct prof_lock_ticket *k)
{
    if (k->plt_window != a->pla_window)
        return;
    if (k->plt_hold == a->pla_hold) {
        if (a->pla_new) {
            a->pla_new--;
            a->pla_new_sum -= k->plt_arrive;
        }
    } else if (a->pla_old) {
        a->pla_old--;
    }
}

void prof_lock_hold(struct prof_lock_acct *a, uint32_t w, uint64_t t)
{
    prof_lock_window(a, w);
    a->pla_old += a->pla_new;
    a->pla_new = 0;
    a->pla_new_sum = 0;
    a->pla_from = t;
    a->pla_hold++;
}

struct prof_lock_charge prof_lock_release(struct prof_lock_acct *a, uint32_t w, uint64_t t)
{
    struct prof_lock_charge c = { 0, 0 };
    /* A hold that began before this window (or never seen) is charged
     * from nothing: its start is not this window's. */
    if (a->pla_window != w || !a->pla_from)
        return c;
    uint64_t old = t > a->pla_from ? (uint64_t)a->pla_old * (t - a->pla_from) : 0;
    uint64_t new = (uint64_t)a->pla_new * t;
    c.plc_delay = old + (new > a->pla_new_sum ? new - a->pla_new_sum : 0);
    c.plc_waits = a->pla_old + a->pla_new;
    return c;
}
