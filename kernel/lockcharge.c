/* kernel/lockcharge.c: `profile lock`'s arithmetic (kernel/lockcharge.h
 * says what is charged to whom, and why the spinlock's side takes no
 * lock). */
#include "kernel/lockcharge.h"

struct lockcharge_charge lockcharge_spin_charge(const struct lockcharge_slot *slots, unsigned n,
                                              unsigned self, const void *lock, uint64_t from,
                                              uint64_t now)
{
    struct lockcharge_charge c = { 0, 0 };
    for (unsigned i = 0; i < n; i++) {
        /* B: pairs with A in lockcharge_spin_begin. */
        if (i == self || __atomic_load_n(&slots[i].lcs_lock, __ATOMIC_ACQUIRE) != lock)
            continue;
        c.lcc_delay += lockcharge_share(from, __atomic_load_n(&slots[i].lcs_since,
                                                             __ATOMIC_RELAXED), now);
        c.lcc_waits++;
    }
    return c;
}

/* An account of another window is empty: its waiters left unseen. */
static void lockcharge_window(struct lockcharge_acct *a, uint32_t w)
{
    if (a->lca_window != w)
        *a = (struct lockcharge_acct){ .lca_window = w, .lca_hold = a->lca_hold };
}

struct lockcharge_ticket lockcharge_arrive(struct lockcharge_acct *a, uint32_t w, uint64_t t)
{
    lockcharge_window(a, w);
    a->lca_new++;
    a->lca_new_sum += t;
    return (struct lockcharge_ticket){ .lct_window = w, .lct_hold = a->lca_hold, .lct_arrive = t };
}

void lockcharge_leave(struct lockcharge_acct *a, const struct lockcharge_ticket *k)
{
    if (k->lct_window != a->lca_window)
        return;
    if (k->lct_hold == a->lca_hold) {
        if (a->lca_new) {
            a->lca_new--;
            a->lca_new_sum -= k->lct_arrive;
        }
    } else if (a->lca_old) {
        a->lca_old--;
    }
}

void lockcharge_hold(struct lockcharge_acct *a, uint32_t w, uint64_t t)
{
    lockcharge_window(a, w);
    a->lca_old += a->lca_new;
    a->lca_new = 0;
    a->lca_new_sum = 0;
    a->lca_from = t;
    a->lca_hold++;
}

struct lockcharge_charge lockcharge_release(struct lockcharge_acct *a, uint32_t w, uint64_t t)
{
    struct lockcharge_charge c = { 0, 0 };
    /* A hold that began before this window (or never seen) is charged
     * from nothing: its start is not this window's. */
    if (a->lca_window != w || !a->lca_from)
        return c;
    uint64_t old = t > a->lca_from ? (uint64_t)a->lca_old * (t - a->lca_from) : 0;
    uint64_t new = (uint64_t)a->lca_new * t;
    c.lcc_delay = old + (new > a->lca_new_sum ? new - a->lca_new_sum : 0);
    c.lcc_waits = a->lca_old + a->lca_new;
    return c;
}
