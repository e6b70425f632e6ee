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
#include "kernel/prof/ring_produce.h"
#include "kernel/prof/ring.h"
#include "kernel/prof/trace_hooks.h"
#include "kernel/stacktrace_inline.h"
#include "kernel/task.h"

/* ---- the deferral's mover (kernel/prof/ring_produce.h) --------------
 * Here, beside the NMI's side of it, and not in ring.c: ring_produce.h
 * is the producers' half, which ring.c does not include. */

/* A moved record follows the one last written; if its NMI landed between
 * that record's guard and its clock read (a trace's record, stamped
 * under the guard), it is older by those few instructions: it takes
 * that record's time, so that the ring stays in time order. Both kinds
 * keep their time in pr_weight (kernel/prof/trace.h). */
static void prof_defer_in_order(const struct prof_cpu *pc, uint32_t n, struct prof_record *r)
{
    if (n == 0)
        return;                 /* the first of this window */
    const struct prof_record *p = &pc->pc_buf[(n - 1) & (pc->pc_cap - 1)];
    if ((p->pr_kind == PROF_KIND_TRACE || p->pr_kind == PROF_KIND_CPU) &&
        r->pr_weight < p->pr_weight)
        r->pr_weight = p->pr_weight;
}

/* The guard held. Bounded: an NMI landing meanwhile defers more, at most
 * PROF_DEFER waiting at a time; what a second round would have moved
 * stays, flagged, for the next check. */
void prof_defer_move(struct prof_cpu *pc)
{
    /* Cleared before we look (K): an NMI that defers after our last
     * look sets it again, and the release's check sees it. */
    __atomic_store_n(&pc->pc_dwait, 0, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);                                /* K */
    unsigned g = __atomic_load_n(&prof_gate.pg_state, __ATOMIC_SEQ_CST);      /* D, B */
    for (unsigned i = 0;; i++) {
        if (i == 2 * PROF_DEFER) {
            __atomic_store_n(&pc->pc_dwait, 1, __ATOMIC_RELAXED);
            return;
        }
        uint32_t out = __atomic_load_n(&pc->pc_dout, __ATOMIC_RELAXED);
        if (__atomic_load_n(&pc->pc_din, __ATOMIC_RELAXED) == out)
            return;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);                            /* K */
        const struct prof_record *d = &prof_defer_recs[pc - prof_cpus][out & (PROF_DEFER - 1)];
        if (!(g & PROF_GATE_KIND(d->pr_kind)))
            return;             /* closed since: prof_ring_nested counts it */
        uint32_t n;
        struct prof_record *r = prof_slot(pc, &n);      /* full: counted */
        if (r) {
            *r = *d;
            prof_defer_in_order(pc, n, r);
            if (r->pr_kind == PROF_KIND_CPU)
                pc->pc_from_tick += r->pr_tick;
            else
                pc->pc_other++;
            prof_publish(pc, n);                                            /* F */
        }
        PROF_STEP(8);
        __atomic_signal_fence(__ATOMIC_SEQ_CST);                            /* K */
        __atomic_store_n(&pc->pc_dout, out + 1, __ATOMIC_RELAXED);
    }
}

/* A release found records deferred (J). The guard is free: only an NMI
 * could hold it, and an NMI runs whole. Take it as every producer does
 * (D), move, release (I) and check again (J): an NMI landing between
 * the move and the release deferred more. Bounded like the move. */
void prof_defer_drain(struct prof_cpu *pc)
{
    for (unsigned i = 0; i < PROF_DEFER && prof_defer_waiting(pc); i++) {
        __atomic_store_n(&pc->pc_inside, 1, __ATOMIC_SEQ_CST);              /* D */
        PROF_STEP(7);
        prof_defer_move(pc);
        __atomic_store_n(&pc->pc_inside, 0, __ATOMIC_RELEASE);              /* I */
        PROF_STEP(9);
        __atomic_signal_fence(__ATOMIC_SEQ_CST);                            /* J */
    }
}

/* Takes one sample on this CPU. No lock, no allocation, no symbol lookup,
 * and nothing here dereferences interrupted state except through the walk,
 * which checks every frame against the registered stacks and never
 * faults: this runs in NMI context on whatever the CPU was doing.
 * The producers' steps and their barriers: kernel/prof/ring_produce.h. */
static inline __attribute__((always_inline))
void prof_sample_fill(struct prof_record *r, const struct trap_frame *tf, int pid,
                      bool from_tick, unsigned cpu, uint64_t c0)
{
    r->pr_pid = pid;
    r->pr_tag = PROF_TAG(from_tick, PROF_KIND_CPU);
    /* Its time, for a trace (kernel/prof/trace.h): one store; no
     * reader of a CPU sample reads its weight otherwise. */
    r->pr_weight = c0;
    r->pr_depth = (uint8_t)st_capture_trap_inline(tf, r->pr_frames, PROF_FRAMES, cpu);
    uint64_t cost = cycles_now_inline() - c0;
    r->pr_cost = cost > UINT32_MAX ? UINT32_MAX : (uint32_t)cost;
}

/* The counter's NMI landed inside another producer of this CPU (a
 * switch's record, a tick's sample): the sample goes into the deferral,
 * which that producer moves into the ring when it lets its guard go
 * (kernel/prof/ring_produce.h). Out of line: rare. */
static __attribute__((noinline)) void prof_sample_defer(const struct trap_frame *tf,
                                                        struct prof_cpu *pc, unsigned cpu,
                                                        uint64_t c0)
{
    int pid = task_current_pid_inline();
    struct prof_record *r = prof_defer_slot(pc, PROF_GATE_CPU, pid);
    if (!r)
        return;
    prof_sample_fill(r, tf, pid, false, cpu, c0);
    prof_defer_commit(pc);
}

static inline __attribute__((always_inline))
uint64_t prof_sample(const struct trap_frame *tf, bool from_tick, unsigned cpu)
{
    uint64_t c0 = cycles_now_inline();
    struct prof_cpu *pc = &prof_cpus[cpu];
    /* Only the NMI can land inside another producer (the tick's sample
     * runs with interrupts off). */
    if (!from_tick && prof_guard_held(pc)) {
        prof_sample_defer(tf, pc, cpu, c0);
        return c0;
    }
    if (!prof_guard_take(pc))
        return c0;
    /* Records an NMI deferred, left by a producer that let its guard go
     * just now and has not yet moved them: older than ours, so first. */
    if (!from_tick && __builtin_expect(prof_defer_waiting(pc), 0))
        prof_defer_move(pc);
    int pid;
    struct prof_record *r;
    uint32_t n;
    if (prof_gate_open(PROF_GATE_CPU) && prof_pid_wanted(pid = task_current_pid_inline()) &&
        (r = prof_slot(pc, &n)) != NULL) {
        PROF_STEP(3);
        prof_sample_fill(r, tf, pid, from_tick, cpu, c0);
        PROF_STEP(4);
        /* The report names the source of each CPU's samples: a CPU that
         * stayed on the tick during a counter run shows there. Only the
         * tick's samples are counted here (an add of 0 or 1, no branch);
         * the counter's are the rest. */
        pc->pc_from_tick += from_tick;
        prof_publish(pc, n);
        PROF_STEP(5);
    }
    prof_guard_release(pc);
    return c0;
}

bool prof_emit(const struct prof_record *rec)
{
    return prof_emit_n(rec, 1);
}

/* All n or none: the records of one off-CPU interval (the blocked time
 * and the waker's chain that names who ended it) must sit side by side
 * in one ring, so their reader can pair them with no id. */
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
    struct prof_reserve k;
    bool kept = prof_reserve_n(&k, rec->pr_kind, rec->pr_pid, n) != NULL;
    if (kept) {
        for (unsigned i = 0; i < n; i++)
            *prof_reserve_at(&k, i) = rec[i];
        prof_reserve_commit(&k);
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
    uint64_t t0 = prof_sample(tf, false, cpu);
    /* The NMI as a slice of a trace, from the sample's start. */
    if (prof_trace_on())
        prof_trace_nmi(t0);
    return true;
}
