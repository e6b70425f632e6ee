/* kernel/prof/sample.c: the sample path: the tick and NMI entry, the
 * counter's claim, the capture and the record.
 *
 * Record raw, present later. A sample (tick or NMI, interrupts off)
 * copies the pid, the interrupted pc and at most 7 return addresses from
 * the frame-pointer walk into this CPU's own ring (kernel/prof/ring.h):
 * no lock, no allocation, no symbol lookup. Everything else happens in
 * task context, later, on what the rings hold.
 *
 * The capture (kernel/stacktrace_inline.h) and the counter's claim
 * (kernel/pmu_nmi.h) are inline: as calls they would save and restore
 * their registers on every sample. Host unit tests compile this same
 * code; only the register reads beneath it come from their twins
 * (arch/host/, hal/cpu.h).
 *
 * Sources: the timer tick (100 Hz per CPU) always; the performance
 * counter (hal/pmu.h, an NMI about every ms) where the probe says one
 * really counts. Each CPU arms and disarms its own counter from its own
 * tick, because the control registers are per CPU. Once armed, a CPU's
 * tick stops sampling, so nothing is counted twice.
 *
 * Profiler core: prefix prof_ and PROF_. */
#include "kernel/prof/sample.h"
#include "hal/cpu.h"
#include "hal/irq.h"
#include "hal/pmu.h"
#include "kernel/panic.h"
#include "kernel/pmu_nmi.h"
#include "kernel/prof/ring.h"
#include "kernel/sched.h"
#include "kernel/stacktrace_inline.h"
#include "kernel/task.h"

/* Takes one sample on this CPU. No lock, no allocation, no symbol lookup,
 * and nothing here dereferences interrupted state except through the walk,
 * which checks every frame against the registered stacks and never
 * faults: this runs in NMI context on whatever the CPU was doing.
 *
 * Barriers (ring.c names their partners):
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
 *      freeze's acquire): whoever reads the count reads whole records.
 *   I: the guard's release; pairs with C's scan: a closer that sees the
 *      guard clear sees every write of the sample before it.
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

/* The steps every producer takes, in this order, each inline where it is
 * used (the sampler's path must not grow a call):
 *   prof_guard_take     the CPU's guard (D), or a nested arrival counted;
 *   the gate's kind bit (D, B), then prof_pid_wanted;
 *   prof_slot           the next slot (H), or a full ring counted;
 *   fill the slot, then prof_publish (F);
 *   prof_guard_release  (I).
 * Only an NMI landing inside another producer on its CPU (the tick's
 * sample, prof_emit) can find the guard taken: interrupts are off in
 * those, and NMIs do not nest. So pc_nested has a single writer and needs
 * no atomic add. */
static inline __attribute__((always_inline)) bool prof_guard_take(struct prof_cpu *pc)
{
    if (__atomic_load_n(&pc->pc_inside, __ATOMIC_RELAXED)) {
        __atomic_store_n(&pc->pc_nested, pc->pc_nested + 1, __ATOMIC_RELAXED);
        return false;
    }
    __atomic_store_n(&pc->pc_inside, 1, __ATOMIC_SEQ_CST);                  /* D */
    return true;
}

static inline __attribute__((always_inline)) void prof_guard_release(struct prof_cpu *pc)
{
    __atomic_store_n(&pc->pc_inside, 0, __ATOMIC_RELEASE);                  /* I */
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

static inline __attribute__((always_inline))
void prof_sample(const struct trap_frame *tf, bool from_tick, unsigned cpu)
{
    uint64_t c0 = cycles_now_inline();
    struct prof_cpu *pc = &prof_cpus[cpu];
    if (!prof_guard_take(pc))
        return;
    int pid;
    struct prof_record *r;
    uint32_t n;
    if (prof_gate_open(PROF_GATE_CPU) && prof_pid_wanted(pid = task_current_pid_inline()) &&
        (r = prof_slot(pc, &n)) != NULL) {
        r->pr_pid = pid;
        r->pr_tag = PROF_TAG(from_tick, PROF_KIND_CPU);
        r->pr_depth = (uint8_t)st_capture_trap_inline(tf, r->pr_frames, PROF_FRAMES, cpu);
        uint64_t cost = cycles_now_inline() - c0;
        r->pr_cost = cost > UINT32_MAX ? UINT32_MAX : (uint32_t)cost;
        /* The report names the source of each CPU's samples: a CPU that
         * stayed on the tick during a counter run shows there. Only the
         * tick's samples are counted here (an add of 0 or 1, no branch);
         * the counter's are the rest. */
        pc->pc_from_tick += from_tick;
        prof_publish(pc, n);
    }
    prof_guard_release(pc);
}

bool prof_emit(const struct prof_record *rec)
{
    return prof_emit_n(rec, 1);
}

/* All n or none: the records of one off-CPU interval (the blocked time
 * and the waker's chain that names who ended it) must sit side by side
 * in one ring, so their reader can pair them with no id. The room for
 * all n is checked once, as prof_slot checks it for one. */
bool prof_emit_n(const struct prof_record *rec, unsigned n)
{
    /* A CPU sample comes from the sampler alone, and a weight of 0 is no
     * record of time or bytes. */
    if (n == 0 || rec->pr_kind == PROF_KIND_CPU || rec->pr_kind > PROF_KIND_MAX)
        return false;
    for (unsigned i = 0; i < n; i++)
        if (rec[i].pr_kind != rec->pr_kind || rec[i].pr_weight == 0)
            return false;
    /* Interrupts off for the guard's span: the tick's sampler on this CPU
     * cannot run in the middle, and an NMI that does finds the guard
     * taken and counts itself nested, as it does inside the tick's. */
    unsigned long f = irq_save();
    struct prof_cpu *pc = &prof_cpus[cpu_index_inline()];
    bool kept = false;
    if (prof_guard_take(pc)) {
        uint32_t head, tail;
        if (!prof_gate_open(PROF_GATE_KIND(rec->pr_kind)) || !prof_pid_wanted(rec->pr_pid)) {
            /* closed to this kind, or not this run's task */
        } else if (head = pc->pc_count,
                   tail = __atomic_load_n(&pc->pc_tail, __ATOMIC_ACQUIRE),      /* H */
                   head - tail + n > pc->pc_cap) {
            /* One drop per refused emit: the interval is what was lost. */
            __atomic_store_n(&pc->pc_full, pc->pc_full + (pc->pc_cap != 0), __ATOMIC_RELAXED);
        } else {
            for (unsigned i = 0; i < n; i++)
                pc->pc_buf[(head + i) & (pc->pc_cap - 1)] = rec[i];
            pc->pc_other += n;
            prof_publish(pc, head + n - 1);
            kept = true;
        }
        prof_guard_release(pc);
    }
    irq_restore(f);
    return kept;
}

/* The tick's sample, out of line, where the NMI's is inlined: inside
 * prof_tick, the registers the sample saves would be saved by every idle
 * tick too (x86 builds with -pg, which GCC does not shrink-wrap). */
static __attribute__((noinline)) void prof_sample_tick(const struct trap_frame *tf)
{
    /* cpu_index() < MAX_CPUS is hal/cpu.h's promise: not checked again
     * on the path of every sample. */
    prof_sample(tf, true, cpu_index_inline());
}

void prof_tick(const struct trap_frame *tf)
{
    /* The sampler's lock-free single-writer design rests on this. */
    BUG_ON(irqs_enabled_inline());
    /* Relaxed: only a hint of what to do with the counter; the sample
     * itself checks the gate again under its guard (D, B). */
    unsigned s = __atomic_load_n(&prof_gate.pg_state, __ATOMIC_RELAXED);
    if (!(s & PROF_GATE_CPU)) {
        /* Stop only closed the gate; each CPU disarms its own counter on
         * its next tick (pmu_disarm clears the armed flag after the
         * counter, so an overflow in flight is still claimed). */
        if ((s & PROF_GATE_PMU) && pmu_armed())
            pmu_disarm();
        return;
    }
    if (s & PROF_GATE_PMU) {
        if (!pmu_armed())
            pmu_arm();
        if (pmu_armed())
            return;             /* the counter samples this CPU now */
    }
    prof_sample_tick(tf);
}

bool prof_nmi(const struct trap_frame *tf)
{
    BUG_ON(irqs_enabled_inline());
    /* The claim checks the index against MAX_CPUS (pmu_nmi_claim_on). */
    unsigned cpu = cpu_index_inline();
    if (!pmu_nmi_claim_on(cpu))
        return false;           /* not ours: the caller panics */
    /* Ours even with the gate closed: an overflow in flight after Stop,
     * before this CPU's tick disarmed the counter, is dropped silently by
     * prof_sample's check under its guard. No check of the gate here:
     * that one is needed anyway, and such NMIs are rare. */
    prof_sample(tf, false, cpu);
    return true;
}
