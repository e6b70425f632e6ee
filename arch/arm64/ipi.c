/* arch/arm64/ipi.c: other CPUs' backtraces and heap-profiling rate
 * changes by SGI, and the address helpers of hal/mem.h.
 *
 * cpu_backtrace sends SGI_BACKTRACE, which the GIC delivers at the
 * pseudo-NMI priority (gic.c, trap.c): the target answers with the context
 * it interrupted even while it runs with interrupts masked (they are masked
 * by priority, ICC_PMR_EL1). Only a cpu with PSTATE.I set (exception entry,
 * cpu_stop) cannot answer; the asker gives up after 250 ms. A panicking
 * CPU's request also stops the target: it answers, then halts.
 * Interrupt context: no locks, no allocation; the walk is bounded. */
#include "arch/arm64/arm64.h"
#include "arch/arm64/gic.h"
#include "arch/arm64/percpu_arch.h"
#include "arch/arm64/trap.h"
#include "hal/cpu.h"
#include "hal/mem.h"
#include "kernel/backtrace.h"
#include "kernel/panic.h"
#include "kernel/percpu.h"
#include "kernel/stacktrace.h"

/* Pseudo-NMI context (trap.c): no lock, no allocation, a bounded walk. */
void ipi_backtrace_answer(struct trap_frame *tf)
{
    bt_answer(tf);
}

static void resched_sgi(struct trap_frame *tf, void *arg)
{
    /* Nothing to do here: trap.c calls sched_preempt after every handler. */
}

/* A heap-profiling rate change (cpu_heap_countdown_all): an ordinary
 * interrupt, so never inside this CPU's heap critical section, which
 * masks it; the PMU's pseudo-NMI, which can come in there, never
 * touches x18. heap_refresh is written before the SGIs are sent (the dsb
 * in gic_send_sgi orders it before the interrupt) and only ever to the
 * one function mm gives. */
static void (*heap_refresh)(void);

static void heapprof_sgi(struct trap_frame *tf, void *arg)
{
    void (*refresh)(void) = __atomic_load_n(&heap_refresh, __ATOMIC_ACQUIRE);
    if (refresh)
        refresh();
}

void ipi_init(void)
{
    gic_set_handler(SGI_RESCHED, resched_sgi, 0);
    gic_set_handler(SGI_HEAPPROF, heapprof_sgi, 0);
}

static uint64_t mpidr_of(unsigned cpu)
{
    return ((struct cpu_arch *)cpus[cpu].arch)->mpidr;
}

void cpu_ask_backtrace(unsigned cpu)
{
    gic_send_sgi(SGI_BACKTRACE, mpidr_of(cpu));
}

/* Interrupts masked (all of DAIF), then wait for nothing, for good. */
void cpu_stop(void)
{
    for (;;)
        __asm__ volatile("msr daifset, #0xf\n\twfi" ::: "memory");
}

/* `panic nmi`: an SGI at the pseudo-NMI priority that no request
 * explains; trap.c panics on it as an unexpected NMI. */
void cpu_send_nmi_self(void)
{
    gic_send_sgi(SGI_NMI_TEST, mpidr_of(cpu_index()));
}

void cpu_kick(unsigned idx)
{
    if (idx < cpu_count() && cpus[idx].online)
        gic_send_sgi(SGI_RESCHED, mpidr_of(idx));
}

/* The countdown is each CPU's x18 (cpu_inline.h), which only that CPU
 * can write: this one's now, the others' in their SGI handler, which
 * reads the rate and generation heapprof_set_rate has just stored (the
 * dsb in gic_send_sgi orders them before the interrupt). A CPU not online
 * yet is not sent one. It started with x18 = 0 (boot.S), so its first
 * allocation draws at the rate of that moment; a rate change between
 * that allocation (kzalloc in sched_init_cpu_stack) and its going online
 * would be missed until its countdown next runs out, or, if the old rate
 * was off, until the next change. Rates change at boot before the other
 * CPUs start, or from the shell once they are all up, so today no change
 * falls in that window. */
void cpu_heap_countdown_all(int64_t v, void (*refresh)(void))
{
    unsigned me = cpu_index();
    __atomic_store_n(&heap_refresh, refresh, __ATOMIC_RELEASE);
    cpu_heap_left_set(v);
    for (unsigned i = 0; i < cpu_count(); i++)
        if (i != me && __atomic_load_n(&cpus[i].online, __ATOMIC_ACQUIRE))
            gic_send_sgi(SGI_HEAPPROF, mpidr_of(i));
}

void *pa_to_va(uint64_t pa) { return phys_to_virt(pa); }
uint64_t va_to_pa(const void *va) { return virt_to_phys(va); }
