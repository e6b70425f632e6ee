/* kernel/prof/ring_produce.h: the producers' side of the ring: the steps
 * every producer of records takes into its CPU's ring (kernel/prof/ring.h),
 * inline: the sampler
 * (kernel/prof/sample.c), prof_emit, and the scheduler's off-CPU records
 * (kernel/sched.c), which reserve their slots first and fill them in place
 * (a walk straight into the slot, no copy through a buffer).
 *
 * All of them run with interrupts off on the CPU whose ring they write:
 * no lock, no allocation.
 *
 * Profiler core: prefix prof_ and PROF_.
 *
 * Barriers, each named by the one it pairs with (the partners are in
 * kernel/prof/ring.c, but for the freeze's):
 *   D: the guard's seq_cst store, then the seq_cst load of the gate;
 *      pairs with C in prof_ring_close / prof_ring_quiesce (Dekker's
 *      pattern: either the closer sees our guard and waits for us, or we
 *      see the gate closed and touch nothing). On x86 the store is one
 *      xchg, the full barrier itself, and the load a plain mov; on arm64
 *      an stlr and an ldar, which the architecture keeps in that order.
 *   B: that same load of the gate acquires; pairs with A in
 *      prof_ring_open, so the ring, its capacity, the zeroed counts and
 *      the filter read after it are this run's (the filter is read only
 *      under the guard for that reason, never before the check).
 *   H: the acquire of pc_tail; pairs with G in prof_ring_release: the
 *      drainer's copy of a slot is complete before we reuse it. The ring
 *      is full when count - tail reaches the capacity: the sample is
 *      dropped and counted, never written over a record not yet drained.
 *   F: pc_count's release; pairs with E in prof_ring_avail (and the
 *      freeze's acquire, prof_freeze in kernel/prof/session.c): whoever
 *      reads the count reads whole records.
 *   I: the guard's release; pairs with C's scan in prof_ring_quiesce: a
 *      closer that sees the guard clear sees every write of the record
 *      before it (and every write an NMI made into the deferral while
 *      the guard was held: they came before it on this CPU).
 *   J, K: this CPU against its own NMI, which lands between two
 *      instructions and runs whole: only the compiler could reorder
 *      what each side sees of the other, and a signal fence stops it.
 *      J: the guard's release (I), then the check of the deferral. K:
 *      a deferred record is written before pc_din counts it (and
 *      pc_dwait says so), and moved out before pc_dout gives its slot
 *      back; the mover clears pc_dwait before it reads pc_din.
 *
 * Nested producers, the deferral (prof_defer_recs, ring.h). Only an
 * NMI can find the guard held (every other producer runs with
 * interrupts off, and NMIs do not nest). It then writes no slot of the
 * ring, where the holder's record is half written: it writes its
 * records (the sample, its slice of a trace) into the deferral, counts
 * them in pc_din and sets pc_dwait (K). The holder, after its release
 * (I), checks pc_dwait (J); if set, it takes the guard again and moves
 * them into the ring behind its own (prof_defer_drain, sample.c), the
 * gate checked again under the guard (D, B). The check comes after the release, never before: an
 * NMI landing between a check and the release would leave its records
 * with nobody to move them. After it, the NMI either landed before the
 * release (it deferred, and the check sees it) or after (it found the
 * guard free and wrote the ring itself). An NMI that finds the guard
 * free but records deferred (it landed between another producer's
 * release and that check) moves those first: they are older, and each
 * ring stays in time order. A deferred record whose NMI landed between
 * the holder's guard and the holder's clock read is older than the
 * holder's record by a few instructions; moved behind it, it takes that
 * record's time. A gate closed before the move leaves them in the
 * deferral, and the freeze counts them as nested (prof_ring_nested):
 * the drain took the guard as every producer does (D against C), so
 * either the closer waited for the move or the drain moved nothing.
 * The deferral holds PROF_DEFER records; an NMI's record that finds it
 * full is dropped and counted as nested, as every nested one was before.
 * The guard is tested before it is taken by a plain load, not an atomic
 * exchange: only this CPU writes it, and an NMI that lands between the
 * tick's test and its store runs whole (takes, samples, releases) before
 * the tick goes on, so the two samples follow each other and neither
 * sees the other's half-done. The counters (pc_nested, pc_full, pc_other,
 * pc_from_tick) have one writer, this CPU under its guard or the nested
 * NMI that found the guard taken. The drainer also reads the drop
 * counters while the stream runs, so they are stored with relaxed
 * atomics (the same plain add and store on x86 and arm64; the drainer
 * only needs a whole value). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hal/cpu.h"
#include "hal/irq.h"
#include "kernel/prof/ring.h"


/* The steps every producer takes, in this order, each inline where it is
 * used (the sampler's path must not grow a call):
 *   prof_guard_take     the CPU's guard (D), or a nested arrival counted;
 *   the gate's kind bit (D, B), then prof_pid_wanted;
 *   prof_slot           the next slot (H), or a full ring counted;
 *   fill the slot, then prof_publish (F);
 *   prof_guard_release  (I).
 * Only an NMI landing inside another producer on its CPU (the tick's
 * sample, prof_emit, the scheduler's records) can find the guard taken:
 * interrupts are off in those, and NMIs do not nest. It defers its
 * records (above), or counts them nested when the deferral is full. So
 * pc_nested has a single writer and needs no atomic add. */

/* The steps of a producer where this CPU's NMI may land, numbered for
 * the host tests, whose twin of nmi_window_inline (hal/irq.h) runs an
 * NMI at the one asked for (tests/unit/test_prof_ring.c); in the kernel
 * it is nothing.
 *   1 the guard taken          2 the gate loaded      3 the slots reserved
 *   4 the slots filled         5 published            6 released, unchecked
 *   7 a drain's guard taken    8 a record moved       9 a drain's release */
#define PROF_STEP(n) nmi_window_inline(n)

/* After a release that found records deferred: the guard taken again,
 * the records moved into the ring (sample.c). Out of line: rare. */
void prof_defer_drain(struct prof_cpu *pc);
/* The guard held: the deferred records moved into the ring behind what
 * is there, while the gate is open to their kinds (sample.c). */
void prof_defer_move(struct prof_cpu *pc);

/* Whether another producer of this CPU holds the guard: only an NMI
 * can see it held. */
static inline __attribute__((always_inline)) bool prof_guard_held(const struct prof_cpu *pc)
{
    return __atomic_load_n(&pc->pc_inside, __ATOMIC_RELAXED) != 0;
}

static inline __attribute__((always_inline)) bool prof_guard_take(struct prof_cpu *pc)
{
    if (prof_guard_held(pc)) {
        __atomic_store_n(&pc->pc_nested, pc->pc_nested + 1, __ATOMIC_RELAXED);
        return false;
    }
    __atomic_store_n(&pc->pc_inside, 1, __ATOMIC_SEQ_CST);                  /* D */
    PROF_STEP(1);
    return true;
}

/* Whether an NMI deferred records since the last move looked. */
static inline __attribute__((always_inline)) bool prof_defer_waiting(const struct prof_cpu *pc)
{
    return __atomic_load_n(&pc->pc_dwait, __ATOMIC_RELAXED) != 0;
}

/* The release, then the check of the deferral (J): a load and a branch
 * not taken, unless an NMI landed while we held the guard. */
static inline __attribute__((always_inline)) void prof_guard_release(struct prof_cpu *pc)
{
    __atomic_store_n(&pc->pc_inside, 0, __ATOMIC_RELEASE);                  /* I */
    PROF_STEP(6);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);                                /* J */
    if (__builtin_expect(prof_defer_waiting(pc), 0))
        prof_defer_drain(pc);
}

/* Whether the gate, loaded under the guard, is open to kind_bit. */
static inline __attribute__((always_inline)) bool prof_gate_open(unsigned kind_bit)
{
    return __atomic_load_n(&prof_gate.pg_state, __ATOMIC_SEQ_CST) & kind_bit;  /* D, B */
}

/* The filter is applied here, not in the report: a filtered-out record
 * takes no slot and is not a drop. Relaxed: B ordered it after the gate's
 * opening. */
static inline __attribute__((always_inline)) bool prof_pid_wanted(int pid)
{
    int want = __atomic_load_n(&prof_gate.pg_pid, __ATOMIC_RELAXED);
    return want == PROF_ALL || pid == want;
}

/* The next slot (its index in *n), or NULL when the ring is full: counted,
 * never written over a record not yet drained (unsigned: right across the
 * indices' wrap). pc_cap is 0 for a CPU that had no ring when the gate
 * opened (it came online since): the capacity check covers it, so the
 * common path needs no check of pc_buf; it is a power of two, so the
 * slot is a mask away. */
static inline __attribute__((always_inline))
struct prof_record *prof_slot(struct prof_cpu *pc, uint32_t *n)
{
    uint32_t head = pc->pc_count;
    uint32_t tail = __atomic_load_n(&pc->pc_tail, __ATOMIC_ACQUIRE);       /* H */
    if (head - tail >= pc->pc_cap) {
        __atomic_store_n(&pc->pc_full, pc->pc_full + (pc->pc_cap != 0), __ATOMIC_RELAXED);
        return NULL;
    }
    *n = head;
    return &pc->pc_buf[head & (pc->pc_cap - 1)];
}

static inline __attribute__((always_inline)) void prof_publish(struct prof_cpu *pc, uint32_t n)
{
    __atomic_store_n(&pc->pc_count, n + 1, __ATOMIC_RELEASE);              /* F */
}

/* NMI context, the guard found held (prof_guard_held): a slot of the
 * deferral for a record of the gate's kind_bit for pid, or NULL (the
 * gate closed to it or pid filtered out: nothing counted; the deferral
 * full: nested). The seq_cst load of the gate comes after the holder's
 * guard on this CPU (D), and acquires (B) as the holder's own does. */
static inline __attribute__((always_inline))
struct prof_record *prof_defer_slot(struct prof_cpu *pc, unsigned kind_bit, int pid)
{
    if (!prof_gate_open(kind_bit) || !prof_pid_wanted(pid))
        return NULL;
    uint32_t in = __atomic_load_n(&pc->pc_din, __ATOMIC_RELAXED);
    if (in - __atomic_load_n(&pc->pc_dout, __ATOMIC_RELAXED) >= PROF_DEFER) {
        __atomic_store_n(&pc->pc_nested, pc->pc_nested + 1, __ATOMIC_RELAXED);
        return NULL;
    }
    return &prof_defer_recs[pc - prof_cpus][in & (PROF_DEFER - 1)];
}

/* The record prof_defer_slot gave, filled: counted, for the holder. */
static inline __attribute__((always_inline)) void prof_defer_commit(struct prof_cpu *pc)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);                                /* K */
    __atomic_store_n(&pc->pc_din, __atomic_load_n(&pc->pc_din, __ATOMIC_RELAXED) + 1,
                     __ATOMIC_RELAXED);
    __atomic_store_n(&pc->pc_dwait, 1, __ATOMIC_RELAXED);
}

/* ---- n slots reserved at once, filled in place, published together ---- */

/* A reservation of k_n side-by-side slots in one CPU's ring, under its guard. */
struct prof_reserve {
    struct prof_cpu *k_pc;
    uint32_t k_head;            /* the first slot's index */
    uint32_t k_n;
};

/* n (>= 1) slots for records of kind for pid, on the calling CPU
 * (interrupts off): the first, with its guard taken, or NULL with
 * nothing held (the gate closed to kind, pid filtered out: nothing
 * counted; a producer already inside: nested; no room for all n: one
 * drop, for the n records are one thing lost). The caller fills every
 * slot (prof_reserve_at) and then calls prof_reserve_commit, at once: an
 * NMI's sample meanwhile is dropped as nested.
 *
 * It is on every switch of an off-CPU window, so it is written for few
 * instructions: the gate's kind bit and "no pid filter"
 * (PROF_GATE_PID clear) tested in the word D loads, the filter itself
 * read only when that bit is set; the CPU's struct reached once;
 * a successful reservation's slot known not to be NULL (the caller's test of
 * it folds away). */
/* The same on pc, the calling CPU's struct, where the caller has it. A
 * trace is never filtered by pid (prof_window_check): its records skip
 * the filter's test. */
static inline __attribute__((always_inline))
struct prof_record *prof_reserve_on(struct prof_cpu *pc, struct prof_reserve *k, unsigned kind,
                                    int pid, unsigned n)
{
    if (!prof_guard_take(pc))
        return NULL;
    unsigned g = __atomic_load_n(&prof_gate.pg_state, __ATOMIC_SEQ_CST);      /* D, B */
    PROF_STEP(2);
    /* Two bit tests (arm64: tbz, tbnz; a mask of both is no immediate
     * there). */
    if ((g & PROF_GATE_KIND(kind)) &&
        (kind == PROF_KIND_TRACE || __builtin_expect(!(g & PROF_GATE_PID), 1) ||
         prof_pid_wanted(pid))) {
        uint32_t head = pc->pc_count, cap = pc->pc_cap;
        uint32_t tail = __atomic_load_n(&pc->pc_tail, __ATOMIC_ACQUIRE);      /* H */
        /* One record: room is head - tail < cap (a sub and a compare;
         * cap 0, a CPU with no ring, has none). More: the sum. */
        bool room = __builtin_constant_p(n) && n == 1 ? head - tail < cap : head - tail + n <= cap;
        if (__builtin_expect(room, 1)) {
            struct prof_record *r = &pc->pc_buf[head & (cap - 1)];
            if (r == NULL)
                __builtin_unreachable();    /* a ring with room has a buffer */
            k->k_pc = pc;
            k->k_head = head;
            k->k_n = n;
            PROF_STEP(3);
            return r;
        }
        __atomic_store_n(&pc->pc_full, pc->pc_full + (cap != 0), __ATOMIC_RELAXED);
    }
    prof_guard_release(pc);
    return NULL;
}

static inline __attribute__((always_inline))
struct prof_record *prof_reserve_n(struct prof_reserve *k, unsigned kind, int pid, unsigned n)
{
    struct prof_cpu *pc = &prof_cpus[cpu_index_inline()];
    /* One pointer in one register from here on: left to itself, GCC kept
     * the index and rebuilt each field's address from it, spilling it
     * inside the scheduler. */
    __asm__("" : "+r"(pc));
    return prof_reserve_on(pc, k, kind, pid, n);
}

/* The ring's slots, for the reservation's i-th (i < k_n): &buf[(head + i)
 * & mask] (the reservation may cross the slots' end). */
static inline struct prof_record *prof_reserve_at(const struct prof_reserve *k, unsigned i)
{
    return &k->k_pc->pc_buf[(k->k_head + i) & (k->k_pc->pc_cap - 1)];
}

/* Every slot of k filled: published (F), counted, the guard released. */
static inline __attribute__((always_inline)) void prof_reserve_commit(const struct prof_reserve *k)
{
    struct prof_cpu *pc = k->k_pc;
    PROF_STEP(4);
    pc->pc_other += k->k_n;
    prof_publish(pc, k->k_head + k->k_n - 1);
    PROF_STEP(5);
    prof_guard_release(pc);
}
