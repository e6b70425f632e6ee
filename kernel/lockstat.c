/* kernel/lockstat.c: lock_stat's list of counted locks, and the table
 * summed by name (kernel/lockstat.h says why none of it takes a lock).
 *
 * A reset moves the generation; each lock zeroes its own counts the next
 * time its holder counts (lockstat_claim), and a reader skips a lock of
 * an older generation, so no one ever writes a lock's counts but its
 * holder. Times are kept in the clock's units (kernel/lockstat.h) and
 * made ns when read. */
#include "kernel/lockstat.h"
#include "lib/string.h"

unsigned lockstat_gate;
unsigned lockstat_gen = 1;          /* 0 is a lock never counted */
static struct lockstat_hold *lockstat_list;
static uint64_t lockstat_since;     /* cycles_now() at the last reset */

const char *lock_kind_name(enum lock_kind kind)
{
    return kind == LOCK_MUTEX ? "mutex" : "spin";
}

void lockstat_claim(struct lockstat_hold *h, const char *name, enum lock_kind kind)
{
    bool listed = h->lh_gen != 0;
    h->lh_acq = h->lh_cont = h->lh_wait = h->lh_wait_max = h->lh_hold = h->lh_hold_max = 0;
    h->lh_name = name ? name : "?";
    h->lh_kind = kind;
    /* A: pairs with B in lockstat_read: the zeroed counts before the
     * generation that says they are this reset's. */
    __atomic_store_n(&h->lh_gen, __atomic_load_n(&lockstat_gen, __ATOMIC_RELAXED),
                     __ATOMIC_RELEASE);
    if (listed)
        return;
    /* C: pairs with D in lockstat_read: the lock's fields before it is
     * on the list. */
    struct lockstat_hold *head = __atomic_load_n(&lockstat_list, __ATOMIC_RELAXED);
    do
        h->lh_next = head;
    while (!__atomic_compare_exchange_n(&lockstat_list, &head, h, true, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED));
}

void lockstat_waited(struct lockstat_hold *h, const char *name, enum lock_kind kind,
                     uint64_t cycles)
{
    if (!(__atomic_load_n(&lockstat_gate, __ATOMIC_RELAXED) & LOCKSTAT_GATE_STAT))
        return;
    if (h->lh_gen != __atomic_load_n(&lockstat_gen, __ATOMIC_RELAXED))
        lockstat_claim(h, name, kind);
    h->lh_cont++;
    h->lh_wait += cycles;
    if (cycles > h->lh_wait_max)
        h->lh_wait_max = cycles;
}

struct lockcharge_slot lockstat_slots[MAX_CPUS];
static lockstat_charge_fn lockstat_charge_hook;
static uint32_t lockstat_window_id;

void lockstat_charge_bind(lockstat_charge_fn fn)
{
    __atomic_store_n(&lockstat_charge_hook, fn, __ATOMIC_RELEASE);
}

/* A new window's id before its gate opens: a hold stamped under it
 * belongs to it. */
void lockstat_charge_gate(bool open)
{
    if (open) {
        uint32_t w = __atomic_load_n(&lockstat_window_id, __ATOMIC_RELAXED) + 1;
        __atomic_store_n(&lockstat_window_id, w ? w : 1, __ATOMIC_RELEASE);
        __atomic_fetch_or(&lockstat_gate, LOCKSTAT_GATE_CHARGE, __ATOMIC_SEQ_CST);
    } else {
        __atomic_fetch_and(&lockstat_gate, ~LOCKSTAT_GATE_CHARGE, __ATOMIC_SEQ_CST);
    }
}

uint32_t lockstat_charge_window(void)
{
    return __atomic_load_n(&lockstat_window_id, __ATOMIC_ACQUIRE);
}

void lockstat_acquired_charged(struct lockstat_hold *h, const char *name, enum lock_kind kind,
                               unsigned gate)
{
    lockstat_acquired(h, name, kind, gate & ~LOCKSTAT_GATE_CHARGE);
    h->lh_charge_from = cycles_now_inline();
    h->lh_charge_name = name ? name : "?";
    h->lh_timed |= LOCKSTAT_HOLD_CHARGE;
}

/* Only a hold a spinner waited on owes a charge: a release nobody waited
 * for reads no slot. */
void lockstat_charge_released(struct lockstat_hold *h)
{
    lockstat_charge_fn fn = __atomic_load_n(&lockstat_charge_hook, __ATOMIC_ACQUIRE);
    if (fn && h->lh_waited)
        fn(h, cycles_now_inline());
    h->lh_timed &= (uint8_t)~LOCKSTAT_HOLD_CHARGE;
}

static lockstat_spun_fn lockstat_spun_hook;

void lockstat_spun_bind(lockstat_spun_fn fn)
{
    __atomic_store_n(&lockstat_spun_hook, fn, __ATOMIC_RELEASE);
}

void lockstat_spun_gate(bool open)
{
    if (open)
        __atomic_fetch_or(&lockstat_gate, LOCKSTAT_GATE_SPUN, __ATOMIC_SEQ_CST);
    else
        __atomic_fetch_and(&lockstat_gate, ~LOCKSTAT_GATE_SPUN, __ATOMIC_SEQ_CST);
}

void lockstat_spun(const char *name, uint64_t t0, uint64_t t1)
{
    lockstat_spun_fn fn = __atomic_load_n(&lockstat_spun_hook, __ATOMIC_ACQUIRE);
    if (fn)
        fn(name, t0, t1);
}

bool lockstat_on(void)
{
    return __atomic_load_n(&lockstat_gate, __ATOMIC_RELAXED) & LOCKSTAT_GATE_STAT;
}

void lockstat_set(bool on)
{
    if (on)
        __atomic_fetch_or(&lockstat_gate, LOCKSTAT_GATE_STAT, __ATOMIC_SEQ_CST);
    else
        __atomic_fetch_and(&lockstat_gate, ~LOCKSTAT_GATE_STAT, __ATOMIC_SEQ_CST);
}

void lockstat_reset(void)
{
    lockstat_since = cycles_now();
    unsigned g = __atomic_load_n(&lockstat_gen, __ATOMIC_RELAXED) + 1;
    __atomic_store_n(&lockstat_gen, g ? g : 1, __ATOMIC_RELEASE);   /* never 0 */
}

uint64_t lockstat_ns(uint64_t cycles)
{
    uint64_t per_us = cycles_per_us();
    return cycles / per_us * 1000 + cycles % per_us * 1000 / per_us;
}

/* Adds one lock's counts into out (n rows so far, room for max): locks
 * of one name are one row, and the same name from two files may be two
 * strings, so names are compared. */
static unsigned lockstat_merge(struct lockstat_row *out, unsigned n, unsigned max,
                               const struct lockstat_hold *h, struct lockstat_info *info)
{
    unsigned i = 0;
    while (i < n && (out[i].plr_kind != h->lh_kind || strcmp(out[i].plr_name, h->lh_name)))
        i++;
    if (i == n) {
        if (n == max) {
            info->pli_lost += h->lh_acq;
            return n;
        }
        out[n++] = (struct lockstat_row){ .plr_name = h->lh_name, .plr_kind = h->lh_kind };
    }
    struct lockstat_row *r = &out[i];
    uint64_t wmax = lockstat_ns(h->lh_wait_max);
    uint64_t hmax = lockstat_ns(h->lh_hold_max << cycles_ticks_shift());
    r->plr_locks++;
    r->plr_acquisitions += h->lh_acq;
    r->plr_contentions += h->lh_cont;
    r->plr_wait_ns += lockstat_ns(h->lh_wait);
    r->plr_hold_ns += lockstat_ns(h->lh_hold << cycles_ticks_shift());
    if (wmax > r->plr_wait_max_ns)
        r->plr_wait_max_ns = wmax;
    if (hmax > r->plr_hold_max_ns)
        r->plr_hold_max_ns = hmax;
    return n;
}

static bool lockstat_before(const struct lockstat_row *a, const struct lockstat_row *b)
{
    if (a->plr_wait_ns != b->plr_wait_ns)
        return a->plr_wait_ns > b->plr_wait_ns;
    return a->plr_acquisitions > b->plr_acquisitions;
}

unsigned lockstat_read(struct lockstat_row *out, unsigned max, struct lockstat_info *info)
{
    unsigned gen = __atomic_load_n(&lockstat_gen, __ATOMIC_ACQUIRE), n = 0;
    *info = (struct lockstat_info){ .pli_on = lockstat_on() };
    uint64_t per_us = cycles_per_us();
    info->pli_ms = (cycles_now() - lockstat_since) / per_us / 1000;
    info->pli_resolution_ns = (unsigned)((1000 + per_us - 1) / per_us);
    /* D: pairs with C in lockstat_claim. */
    for (struct lockstat_hold *h = __atomic_load_n(&lockstat_list, __ATOMIC_ACQUIRE); h;
         h = h->lh_next) {
        /* B: pairs with A in lockstat_claim. A copy: its holder may be
         * counting while we read, and one lock's row should add up. */
        if (__atomic_load_n(&h->lh_gen, __ATOMIC_ACQUIRE) != gen)
            continue;
        struct lockstat_hold c = *h;
        n = lockstat_merge(out, n, max, &c, info);
    }
    for (unsigned i = 1; i < n; i++)        /* insertion sort: a few dozen rows */
        for (unsigned j = i; j > 0 && lockstat_before(&out[j], &out[j - 1]); j--) {
            struct lockstat_row t = out[j];
            out[j] = out[j - 1];
            out[j - 1] = t;
        }
    return n;
}
