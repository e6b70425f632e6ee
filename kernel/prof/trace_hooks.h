/* kernel/prof/trace_hooks.h: the hooks the scheduler and the interrupt
 * entry call for the scheduling trace (kernel/prof/trace.h), beside the
 * off-CPU ones (kernel/prof/offcpu_hooks.h): the callers never name a
 * ring field, and the profiler never sees struct task.
 *
 *   schedule:      if (prof_sched_on()) { ... if (prof_sched_trace())
 *                      prof_trace_sched_switch(...); }
 *   task_wake, the tick's wakes: the same test, prof_trace_wake(...)
 *   an interrupt:  if (prof_trace_irq_on()) prof_trace_irq_enter(vec, class)
 *                  at its entry, and prof_trace_irq_exit() at its end
 *
 * With no trace open the switch pays nothing new: prof_sched_on() is one
 * test of one gate bit (PROF_GATE_SCHED) that an off-CPU window and a
 * trace both set. An interrupt pays one test of the gate word at its
 * entry and one at its exit.
 *
 * Every hook runs with interrupts off on the CPU whose ring it writes
 * (the switch and wakes under a run-queue lock, the interrupt's in its
 * handler): the ring's producer steps (kernel/prof/ring_produce.h) need
 * no lock and nothing here allocates. An NMI that lands inside a hook
 * finds the ring's guard taken and leaves its sample and slice in the
 * CPU's deferral, which the hook moves into the ring as it lets go.
 *
 * Profiler core: prefix prof_trace_. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "hal/cpu.h"
#include "kernel/prof/offcpu.h"
#include "kernel/prof/ring_produce.h"
#include "kernel/prof/trace.h"
#include "kernel/task.h"

#define PROF_TRACE_INLINE static inline __attribute__((always_inline))

/* Whether a trace is open: a hint (the reservation's own load under the
 * guard decides), read plainly for the interrupt entry's one test. */
PROF_TRACE_INLINE bool prof_trace_on(void)
{
    return __builtin_expect((cpu_load_near_u32(prof_gate) & PROF_GATE_KIND(PROF_KIND_TRACE)) != 0,
                            0);
}

/* A trace record's head, stamped now. */
PROF_TRACE_INLINE void prof_trace_stamp(struct prof_record *r, int pid, unsigned ev)
{
    r->pr_tag = PROF_TAG(0, PROF_KIND_TRACE);
    r->pr_why = (uint8_t)ev;
    r->pr_depth = 0;
    r->pr_pid = pid;
    /* Never 0, which would be no record (prof_emit's rule): the counter
     * has counted the whole boot before any trace opens. */
    r->pr_weight = cycles_now_inline();
}

/* A slot for one trace record on pc (this CPU's), stamped now: the time
 * is read under the guard, so that no record of this CPU (an NMI's
 * sample waits in the deferral meanwhile, and is moved in behind this
 * one) comes after it with an earlier time, and each CPU's ring is in
 * time order. NULL: the gate is closed to traces or the ring is full
 * (counted). */
PROF_TRACE_INLINE struct prof_record *prof_trace_slot_on(struct prof_cpu *pc,
                                                         struct prof_reserve *k, int pid,
                                                         unsigned ev)
{
    struct prof_record *r = prof_reserve_on(pc, k, PROF_KIND_TRACE, pid, 1);
    if (r)
        prof_trace_stamp(r, pid, ev);
    return r;
}

PROF_TRACE_INLINE struct prof_record *prof_trace_slot(struct prof_reserve *k, int pid,
                                                      unsigned ev)
{
    struct prof_cpu *pc = &prof_cpus[cpu_index_inline()];
    __asm__("" : "+r"(pc));     /* as prof_reserve_n */
    return prof_trace_slot_on(pc, k, pid, ev);
}

/* Why a task leaves: running (preempted, or it yielded: preempted
 * says which), dead, or waiting for the reason of the wait under way
 * (the wait's why, as prof_off_wait keeps it in every task). */
PROF_TRACE_INLINE unsigned prof_trace_left(bool idle, bool running, bool preempted, bool dead,
                                           unsigned wait_why)
{
    if (idle)
        return PROF_TRACE_LEFT_NONE;
    if (running)
        return preempted ? PROF_TRACE_LEFT_PREEMPTED : PROF_TRACE_LEFT_YIELD;
    if (dead)
        return PROF_TRACE_LEFT_EXIT;
    return wait_why >= PROF_TRACE_LEFT_SLEEP && wait_why <= PROF_TRACE_LEFT_MUTEX
               ? wait_why : PROF_TRACE_LEFT_SLEEP;
}

/* The switch from pid to next on this CPU; left: prof_trace_left's
 * answer, name the wait's name (or NULL). Out of line: only a trace
 * pays for it. */
void prof_trace_switch(int pid, unsigned left, const char *name, int next);

/* schedule's call: pid (its off-CPU state o, which keeps the wait under
 * way) leaves, idle, running (preempted by the interrupt's return, or
 * yielding) or dead, for next. */
PROF_TRACE_INLINE void prof_trace_sched_switch(int pid, const struct prof_off *o, bool idle,
                                               bool running, bool preempted, bool dead,
                                               int next)
{
    unsigned left = prof_trace_left(idle, running, preempted, dead, o->of_wait_why);
    prof_trace_switch(pid, left,
                      left == PROF_TRACE_LEFT_WAITQ || left == PROF_TRACE_LEFT_MUTEX
                          ? o->of_wait_name : NULL, next);
}

/* pid, on CPU cpu, is woken by the task running here, or by the
 * interrupt under way on this CPU (which the record then names). */
void prof_trace_wake(int pid, unsigned cpu);

/* The interrupt entry's test: whether a trace or an off-CPU window is
 * open (PROF_GATE_SCHED), either of which wants to know the interrupt
 * under way (a trace for its slice, both for the wakes inside it). One
 * load, one branch not taken while neither is. */
PROF_TRACE_INLINE bool prof_trace_irq_on(void)
{
    return __builtin_expect((cpu_load_near_u32(prof_gate) & PROF_GATE_SCHED) != 0, 0);
}

/* An interrupt's entry on this CPU: vector and class (enum
 * prof_trace_irq). A trace opened while one was under way finds none
 * here and records no slice for it. */
PROF_TRACE_INLINE void prof_trace_irq_enter(unsigned vector, unsigned class)
{
    struct prof_trace_cpu *tc = &prof_trace_cpus[cpu_index_inline()];
    tc->tc_t0 = cycles_now_inline();
    tc->tc_class = class;
    /* Last: a wake inside the handler reads the vector and class with it. */
    __atomic_store_n(&tc->tc_vec, vector + 1, __ATOMIC_RELAXED);
}

/* Its end: the slice into this CPU's ring (a trace's; an off-CPU
 * window's gate takes none). Out of line, where the entry is inline:
 * the entry is three stores, the slice a reservation, and inline in the
 * interrupt's path the reservation's registers would be saved and
 * restored on every interrupt, traced or not (+6 instructions on
 * x86-64, measured). */
void prof_trace_irq_exit(void);

/* The counter's NMI, from its entry (t0, raw) to now, as a slice: the
 * sampler calls it after its sample (kernel/prof/sample.c). */
void prof_trace_nmi(uint64_t t0);
