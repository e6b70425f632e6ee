/* kernel/prof/trace_hooks.c: the trace's hooks that are out of line
 * (kernel/prof/trace_hooks.h): a switch, a wake and an NMI's slice,
 * each one record into this CPU's ring. They run with
 * interrupts off on the CPU whose ring they write, in interrupt (or NMI)
 * context or under a run-queue lock: no lock is taken and nothing is
 * allocated here (the ring's slots were allocated before the gate
 * opened), so an NMI landing in one cannot deadlock on it.
 *
 * Profiler core: prefix prof_trace_. */
#include "kernel/prof/trace_hooks.h"

void prof_trace_switch(int pid, unsigned left, const char *name, int next)
{
    struct prof_reserve k;
    struct prof_record *r = prof_trace_slot(&k, pid, PROF_TRACE_SWITCH);
    if (!r)
        return;
    r->pr_waker = next;
    r->pr_cost = left;
    r->pr_name = name;
    prof_reserve_commit(&k);
}

void prof_trace_wake(int pid, unsigned cpu)
{
    struct prof_trace_cpu *tc = &prof_trace_cpus[cpu_index_inline()];
    struct prof_reserve k;
    struct prof_record *r = prof_trace_slot(&k, pid, PROF_TRACE_WAKE);
    if (!r)
        return;
    r->pr_waker = task_current_pid_inline();
    r->pr_cost = cpu;
    /* Only this CPU writes tc: an interrupt under way is the one we are
     * in (the wake is inside its handler), or none. */
    uint32_t vec = __atomic_load_n(&tc->tc_vec, __ATOMIC_RELAXED);
    r->pr_frames[0] = vec;
    r->pr_frames[1] = vec ? tc->tc_class : 0;
    prof_reserve_commit(&k);
}

/* A slice from t0 (raw) to now, of vector and class, into pc's ring
 * (this CPU's). */
static inline __attribute__((always_inline)) void prof_trace_slice(struct prof_cpu *pc,
                                                                   uint64_t t0, unsigned vector,
                                                                   unsigned class)
{
    struct prof_reserve k;
    struct prof_record *r = prof_trace_slot_on(pc, &k, task_current_pid_inline(),
                                               PROF_TRACE_IRQ);
    if (!r)
        return;
    r->pr_waker = (int32_t)vector;
    r->pr_cost = class;
    r->pr_frames[0] = t0;
    prof_reserve_commit(&k);
}

/* The CPU's index is read once, for both of its structs.
 *
 * What a traced interrupt pays, entry and exit, x86-64 (bench_irq: ~83
 * guest instructions, over the 40 of the target; docs/bench.md), as the
 * disassembly of trap_irq and this function reads:
 *   entry: the class from the vector 3-6, the clock 4 (rdtsc, shift, or,
 *     zero-extend), the index 3, three stores, the jumps 2;
 *   exit: the call and its frame 6; the index and this vector's load and
 *     test 6; the end's store 1; the gate's trace bit 2; the guard's test
 *     3, its address 3 and exchange 2 (D); the gate's reload and kind bit
 *     3 (D, B); the head, capacity, tail and room test 6; the slot's
 *     address 5 (mask, x3, <<5, base); the interrupted pid 6 (current,
 *     its pid, the no-task test); the record's head 2, the clock 4 and
 *     its store; vector, class and entry 5; the count and publication 2
 *     (F); the release 1 (I) and the deferral's check 3 (J).
 * Each is what a record needs against the NMI (the guard, the deferral's
 * check) and the closer (the gate's reload under the guard): taking it
 * to 40 wants a slice recorded without a reservation of its own, which
 * is not done. */
void prof_trace_irq_exit(void)
{
    unsigned cpu = cpu_index_inline();
    struct prof_trace_cpu *tc = &prof_trace_cpus[cpu];
    uint32_t vec = __atomic_load_n(&tc->tc_vec, __ATOMIC_RELAXED);
    if (!vec)
        return;                 /* entered before this window opened */
    /* Ended first: the handler is done, nothing but this CPU reads tc,
     * and then nothing of it is live across the record (GCC kept it in
     * a callee-saved register and saved five of them). */
    __atomic_store_n(&tc->tc_vec, 0, __ATOMIC_RELAXED);
    /* An off-CPU window keeps the vector for its wakes but takes no
     * slice: not even the reservation's guard (an NMI's sample would
     * find it taken). */
    if (!prof_trace_on())
        return;
    /* The slice's facts read once the slot is ours, not before: live
     * across the reservation, they cost saved registers. */
    struct prof_cpu *pc = &prof_cpus[cpu];
    __asm__("" : "+r"(pc));     /* one base register, as prof_reserve_n */
    struct prof_reserve k;
    struct prof_record *r = prof_reserve_on(pc, &k, PROF_KIND_TRACE, 0, 1);
    if (!r)
        return;
    prof_trace_stamp(r, task_current_pid_inline(), PROF_TRACE_IRQ);
    r->pr_waker = (int32_t)(vec - 1);
    r->pr_cost = tc->tc_class;
    r->pr_frames[0] = tc->tc_t0;
    prof_reserve_commit(&k);
}

/* The NMI's slice; vector 0, the class names it. An NMI that landed
 * inside another producer of this CPU deferred its sample: its slice
 * follows it into the deferral (kernel/prof/ring_produce.h). */
void prof_trace_nmi(uint64_t t0)
{
    struct prof_cpu *pc = &prof_cpus[cpu_index_inline()];
    if (!prof_guard_held(pc)) {
        prof_trace_slice(pc, t0, 0, PROF_TRACE_IRQ_NMI);
        return;
    }
    int pid = task_current_pid_inline();
    struct prof_record *r = prof_defer_slot(pc, PROF_GATE_TRACE, pid);
    if (!r)
        return;
    prof_trace_stamp(r, pid, PROF_TRACE_IRQ);
    r->pr_waker = 0;
    r->pr_cost = PROF_TRACE_IRQ_NMI;
    r->pr_frames[0] = t0;
    prof_defer_commit(pc);
}

