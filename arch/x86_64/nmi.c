/* arch/x86_64/nmi.c: who an NMI is for.
 *
 * In this order: a backtrace request from `bt` or panic; a panicking CPU
 * asking everyone else to stop (answer, then halt); the performance
 * counter's overflow. Two NMIs sent close together can arrive as one, so
 * every source is checked each time. An NMI none of them claims panics: it
 * is never swallowed.
 *
 * kernel/backtrace.c has the backtrace request protocol.
 * NMI context: no locks, no allocation; the walk is bounded and checked. */
#include "arch/x86_64/lapic.h"
#include "arch/x86_64/layout.h"
#include "arch/x86_64/trap.h"
#include "arch/x86_64/x86.h"
#include "hal/cpu.h"
#include "hal/mem.h"
#include "kernel/backtrace.h"
#include "kernel/panic.h"
#include "kernel/percpu.h"
#include "kernel/prof/sample.h"
#include "kernel/stacktrace.h"

void nmi_handler(struct trap_frame *tf)
{
    bool claimed = bt_answer(tf);   /* halts here if another cpu panics */
    if (prof_nmi(tf))
        claimed = true;
    if (!claimed)
        panic_trap(tf, "unexpected NMI on cpu %u (not the counter's, no request)", cpu_index());
}

void cpu_ask_backtrace(unsigned cpu)
{
    lapic_send_nmi(cpus[cpu].hw_id);
}

void cpu_send_nmi_self(void)
{
    lapic_send_nmi(lapic_id());
}

void cpu_stop(void)
{
    for (;;)
        __asm__ volatile("cli; hlt" ::: "memory");
}

void *pa_to_va(uint64_t pa) { return phys_to_virt(pa); }
uint64_t va_to_pa(const void *va) { return virt_to_phys(va); }
