/* kernel/prof/trace_hooks.c: the trace's hooks that are out of line
 * (kernel/prof/trace_hooks.h): a switch, a wake, an interrupt's or an
 * NMI's slice, each one record into this CPU's ring. They run with
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

/* A slice from t0 (raw) to now, of vector and class, into this CPU's ring. */
static inline __attribute__((always_inline)) void prof_trace_slice(uint64_t t0, unsigned vector,
                                                                   unsigned class)
{
    struct prof_reserve k;
    struct prof_record *r = prof_trace_slot(&k, task_current_pid_inline(), PROF_TRACE_IRQ);
    if (!r)
        return;
    r->pr_waker = (int32_t)vector;
    r->pr_cost = class;
    r->pr_frames[0] = t0;
    prof_reserve_commit(&k);
}

void prof_trace_irq_exit(void)
{
    struct prof_trace_cpu *tc = &prof_trace_cpus[cpu_index_inline()];
    uint32_t vec = __atomic_load_n(&tc->tc_vec, __ATOMIC_RELAXED);
    if (!vec)
        return;                 /* entered before this window opened */
    /* An off-CPU window keeps the vector for its wakes but takes no
     * slice: not even the reservation's guard (an NMI's sample would
     * find it taken). */
    if (prof_trace_on())
        prof_trace_slice(tc->tc_t0, vec - 1, tc->tc_class);
    __atomic_store_n(&tc->tc_vec, 0, __ATOMIC_RELAXED);
}

void prof_trace_nmi(uint64_t t0)
{
    prof_trace_slice(t0, 0, PROF_TRACE_IRQ_NMI);   /* the class names it */
}

