/* kernel/lockstat.h: Linux lock_stat's counts for every spinlock and
 * mutex (kernel/spinlock.h, kernel/sched.c's mutex), kept in the lock
 * itself and summed by name when read (kernel/cmd/lockstat.c).
 *
 * Each lock carries a struct lockstat_hold. Its counts are written only
 * by the lock's holder, and so are serialised by the lock itself: a
 * waiter adds its wait after it has taken the lock. Why no lock and no
 * per-CPU table here: spin_lock runs in interrupt context and the
 * accounting runs inside spin_lock, so a lock taken here would be taken
 * inside every lock, by an interrupt that came while this CPU held it;
 * the lock being accounted already gives the one writer the counts need.
 * The only shared write is a lock's first count (or its first after a
 * reset), which pushes it on a list with a compare-exchange
 * (lockstat_claim): readers walk that list without a lock.
 *
 * The locks' paths, with the gate closed one load and one branch each:
 *
 *   lock:    take the word; if (lock_hooks_on()) lockstat_acquired(...)
 *   unlock:  if (hold's lh_hooks) lockstat_released(...); free the word
 *
 * A lock that lockstat has counted stays on the list: it must not be in
 * memory that is freed (none in the tree is), nor be initialised again.
 *
 * Prefix lockstat_ for the hooks and the table, lh_ for a lock's own
 * state, plr_/pli_ for what a reader gets. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "hal/cpu.h"
#include "kernel/lockcharge.h"

/* lockstat_gate's bits: who wants the hooks. */
#define LOCKSTAT_GATE_STAT    1u    /* lockstat on, or a lockstat window */
#define LOCKSTAT_GATE_CHARGE  2u    /* a lock window: waits charged to holders
                                       (lockstat_acquired_charged, kernel/lockcharge.h) */
#define LOCKSTAT_GATE_SPUN    4u    /* an off-CPU window: the time a contended
                                       spin_lock spun (lockstat_spun) */

/* lh_timed's bits: what the hold's release owes. */
#define LOCKSTAT_HOLD_TIMED   1u    /* lockstat's hold time */
#define LOCKSTAT_HOLD_CHARGE  2u    /* a lock window's charge (lh_charge_*) */

enum lock_kind { LOCK_SPIN = 0, LOCK_MUTEX = 1, LOCK_KINDS };

/* A lock's counts, written by its holder: holds in the clock's ticks
 * (cycles_ticks_inline), waits in cycles_now() units. */
struct lockstat_hold {
    union {
        uint16_t lh_hooks;          /* nonzero: the release calls the hook */
        struct {
            uint8_t lh_timed;       /* the holder's: LOCKSTAT_HOLD_* */
            uint8_t lh_waited;      /* a waiter's: someone waits on it */
        };
    };
    enum lock_kind lh_kind;
    unsigned lh_gen;                /* the reset its counts are of; 0: never counted */
    const char *lh_name;
    uint64_t lh_held_at;
    uint64_t lh_acq, lh_cont, lh_wait, lh_wait_max, lh_hold, lh_hold_max;
    struct lockstat_hold *lh_next;  /* the list of counted locks */
    /* A lock window's hold (LOCKSTAT_HOLD_CHARGE): since when (the
     * clock of cycles_now_inline()) and the lock's name. */
    uint64_t lh_charge_from;
    const char *lh_charge_name;
};

extern unsigned lockstat_gate;
extern unsigned lockstat_gen;       /* moved by every reset */

/* The gate's bits: one load (arm64: a literal load), nonzero while
 * someone wants the hooks; the lock's path branches on it once and hands
 * it to the hook, which need not load it again. */
static inline unsigned lock_hooks(void)
{
    return cpu_load_near_u32(lockstat_gate);
}
static inline bool lock_hooks_on(void) { return __builtin_expect(lock_hooks() != 0, 0); }

/* A lock's first count since a reset: its counts zeroed, and itself on
 * the list if it is not yet. The holder's, out of line. */
void lockstat_claim(struct lockstat_hold *h, const char *name, enum lock_kind kind);

/* The acquired hook: the lock was just taken by this CPU, and gate (the
 * value of lock_hooks() the lock's path read) is nonzero. Counts the
 * acquisition and times the hold. */
/* lockstat_acquired in a lock window (gate has LOCKSTAT_GATE_CHARGE),
 * out of line: the hold stamped for its charge, and counted as below.
 * Its call the inline path's last step, so that nothing is live across
 * it: as a step before the count, x86-64's uncontended mutex pair (whose
 * waitq_wake_all takes a spinlock inline) saved two more registers. */
void lockstat_acquired_charged(struct lockstat_hold *h, const char *name, enum lock_kind kind,
                               unsigned gate);

static inline void lockstat_acquired(struct lockstat_hold *h, const char *name,
                                     enum lock_kind kind, unsigned gate)
{
    if (__builtin_expect(gate & LOCKSTAT_GATE_CHARGE, 0)) {
        lockstat_acquired_charged(h, name, kind, gate);
        return;
    }
    if (!(gate & LOCKSTAT_GATE_STAT))
        return;
    if (__builtin_expect(h->lh_gen != cpu_load_near_u32(lockstat_gen), 0))
        lockstat_claim(h, name, kind);
    h->lh_acq++;
    h->lh_held_at = cycles_ticks_inline();
    h->lh_timed = LOCKSTAT_HOLD_TIMED;
}

/* A waiter that waited (cycles_now() units) and now holds the lock,
 * before its acquired hook. */
void lockstat_waited(struct lockstat_hold *h, const char *name, enum lock_kind kind,
                     uint64_t cycles);

/* The released hook, still holding: lh_hooks was nonzero. A spinning
 * waiter sets lh_waited again after each release. */
static inline void lockstat_released(struct lockstat_hold *h)
{
    h->lh_waited = 0;
    if (h->lh_timed & LOCKSTAT_HOLD_TIMED) {
        uint64_t hold = cycles_ticks_inline() - h->lh_held_at;
        h->lh_hold += hold;
        if (hold > h->lh_hold_max)
            h->lh_hold_max = hold;
        h->lh_timed = 0;
    }
}

/* The time spun by a contended spin_lock, [t0, t1] in cycles_now_inline()
 * units, for whoever gave lockstat_spun_bind its hook (the profiler's
 * off-CPU records, bound by the scheduler); lockstat_spun_gate opens and
 * closes LOCKSTAT_GATE_SPUN around an off-CPU window. */
typedef void (*lockstat_spun_fn)(const char *name, uint64_t t0, uint64_t t1);
void lockstat_spun_bind(lockstat_spun_fn fn);
void lockstat_spun_gate(bool open);
void lockstat_spun(const char *name, uint64_t t0, uint64_t t1);

/* ---- a lock window: waits charged to holders (`profile lock`) ----
 *
 * While LOCKSTAT_GATE_CHARGE is open, every hold is stamped at its start
 * (lockstat_acquired_charged: LOCKSTAT_HOLD_CHARGE, lh_charge_from), each
 * contended spin_lock puts itself in its CPU's slot of lockstat_slots
 * while it spins, and a release of a stamped hold that a spinner waited
 * on calls the bound hook, which charges the holder what the slots say
 * (kernel/lockcharge.h). A mutex's waiters are counted in its own
 * account by kernel/sched.c under its queue's lock; its release clears
 * LOCKSTAT_HOLD_CHARGE itself before lockstat_released. The window's id
 * (lockstat_charge_window(), never 0 while open) tells a mutex's account which
 * window its counts are of. */
extern struct lockcharge_slot lockstat_slots[MAX_CPUS];
/* A spinlock's hold stamped LOCKSTAT_HOLD_CHARGE, at its release, before
 * lockstat_released: the bound hook charges it if a spinner waited. */
void lockstat_charge_released(struct lockstat_hold *h);
typedef void (*lockstat_charge_fn)(struct lockstat_hold *h, uint64_t now);
void lockstat_charge_bind(lockstat_charge_fn fn);
void lockstat_charge_gate(bool open);
uint32_t lockstat_charge_window(void);

/* ---- the table (kernel/cmd/lockstat.c) ---- */

/* One lock name's counts, summed over its locks; times in ns. */
struct lockstat_row {
    const char *plr_name;           /* "?" for locks never named */
    enum lock_kind plr_kind;
    unsigned plr_locks;             /* locks of that name counted */
    uint64_t plr_acquisitions, plr_contentions;
    uint64_t plr_wait_ns, plr_wait_max_ns;
    uint64_t plr_hold_ns, plr_hold_max_ns;
};

struct lockstat_info {
    bool pli_on;                    /* counting now */
    uint64_t pli_ms;                /* since the counts began (the last reset) */
    uint64_t pli_lost;              /* acquisitions of names past the reader's room */
    unsigned pli_resolution_ns;     /* the clock's unit: a shorter hold reads 0 or this */
};

bool lockstat_on(void);             /* counting now */
uint64_t lockstat_ns(uint64_t cycles);   /* cycles_now() units as ns */
void lockstat_set(bool on);         /* counting on or off; the counts are kept */
void lockstat_reset(void);          /* every count to zero, from now */
/* Up to max rows, by total wait (then acquisitions) descending; the
 * number written. */
unsigned lockstat_read(struct lockstat_row *out, unsigned max, struct lockstat_info *info);
const char *lock_kind_name(enum lock_kind kind);   /* "spin", "mutex" */
