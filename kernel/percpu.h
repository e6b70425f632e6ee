/* kernel/percpu.h: what each CPU keeps for itself. Reached through
 * this_cpu() (GS base on x86-64, TPIDR_EL1 on arm64), so no CPU ever
 * takes a lock to read its own state. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "hal/cpu.h"
#include "kernel/spinlock.h"

struct task;

struct cpu {
    struct cpu *self;              /* first: the arch reads it at offset 0 */
    uintptr_t irq_sp;              /* second (offset 8, read by entry code):
                                      top of this CPU's interrupt stack, or 0
                                      where interrupts run on the task's */
    unsigned index;
    uint32_t hw_id;                /* interrupt controller's id: LAPIC id
                                      (x86), MPIDR affinity (arm64) */
    /* Heap profiling's countdown (mm/heapprof.h): bytes this CPU may
     * still allocate before the next sample, INT64_MAX while sampling is
     * off. Here, at a fixed offset, so kmalloc reaches it through the
     * per-CPU register (hal/cpu.h, cpu_heap_countdown). Touched under the
     * heap's lock only. Unused on arm64, which keeps it in x18
     * (arch/arm64/cpu_inline.h). */
    int64_t heap_left;
    struct task *current;
    struct task *idle;
    volatile uint64_t ticks;       /* timer ticks taken on this CPU */
    volatile uint64_t busy_ticks;  /* ticks that found a task other than idle */
    volatile bool online;          /* running and taking its tick */

    /* Scheduler: this CPU's run queue and sleepers; the lock also guards
     * the state of every task that lives on this CPU. */
    spinlock_t rq_lock;
    struct task *rq_head, *rq_tail;
    unsigned rq_len;
    struct task *sleepers;
    struct task *reap;             /* exited task to free once off its stack */
    struct task *prev;             /* the task switched away from, until done */

    void *arch;                    /* struct cpu_arch (TSS, IST stacks, GDT) */
};

_Static_assert(__builtin_offsetof(struct cpu, irq_sp) == 8, "entry code reads irq_sp at 8");
_Static_assert(__builtin_offsetof(struct cpu, heap_left) == CPU_OFF_HEAP_LEFT,
               "cpu_heap_countdown (arch/<arch>/cpu_inline.h) counts down there");

extern struct cpu cpus[MAX_CPUS];
struct cpu *this_cpu(void);
