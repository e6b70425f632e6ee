/* arch/x86_64/smp.c: INIT-SIPI-SIPI for every CPU the MADT lists, one at
 * a time, each through the trampoline with a stack of its own. The loop,
 * the stacks and the wait are kernel/cpus.c's (cpus_start); here is how
 * one CPU is woken, and where it lands. */
#include "arch/x86_64/smp.h"
#include "arch/x86_64/acpi.h"
#include "arch/x86_64/lapic.h"
#include "arch/x86_64/layout.h"
#include "arch/x86_64/percpu_arch.h"
#include "arch/x86_64/trap.h"
#include "arch/x86_64/x86.h"
#include "kernel/cpus.h"
#include "kernel/percpu.h"
#include "kernel/sched.h"
#include "kernel/task.h"
#include "kernel/timer.h"
#include "lib/string.h"

extern char trampoline_start[], trampoline_end[];
extern char tramp_cr3[], tramp_stack[], tramp_entry[];

static volatile unsigned ap_index;
static uintptr_t ap_stack_lo;

static void delay_us(uint64_t us)
{
    uint64_t t0 = rdtsc(), n = us * cycles_per_us();
    while (rdtsc() - t0 < n)
        pause();
}

static void ap_entry(void)
{
    if (!cpus_start_claim())
        cpu_stop();                 /* too late: given up on (kernel/cpus.h) */
    unsigned idx = ap_index;
    cpu_arch_init(idx);
    trap_load();
    lapic_init();
    cpus[idx].hw_id = lapic_id();
    sched_init_cpu_stack(ap_stack_lo, ap_stack_lo + TASK_STACK_SIZE);
    lapic_timer_start(TIMER_HZ);
    cpus_start_report();
    sched_run();
}

static void tramp_set(char *field, uint64_t val)
{
    uint8_t *base = phys_to_virt(TRAMPOLINE_PA);
    memcpy(base + (field - trampoline_start), &val, sizeof val);
}

/* cpus_start's hook: the trampoline's stack and the index for ap_entry,
 * then INIT, a SIPI, and a second SIPI only if the first went unanswered
 * (Intel SDM Vol. 3A, 9.4.4.1). The IPIs cannot fail: a CPU that does not
 * answer is cpus_start's timeout. */
static const char *x86_wake(unsigned idx, uint64_t hw, void *stack)
{
    uint32_t id = (uint32_t)hw;
    ap_stack_lo = (uintptr_t)stack;
    tramp_set(tramp_stack, (uint64_t)stack + TASK_STACK_SIZE);
    ap_index = idx;
    lapic_send_init(id);
    delay_us(10000);
    lapic_send_sipi(id, TRAMPOLINE_PA >> 12);
    delay_us(200);
    if (!cpus_start_answered())
        lapic_send_sipi(id, TRAMPOLINE_PA >> 12);
    return NULL;
}

unsigned smp_start(unsigned max)
{
    static uint64_t ids[MAX_CPUS];
    unsigned n = madt.ncpus < MAX_CPUS ? madt.ncpus : MAX_CPUS;
    for (unsigned i = 0; i < n; i++)
        ids[i] = madt.lapic_ids[i];

    memcpy(phys_to_virt(TRAMPOLINE_PA), trampoline_start, trampoline_end - trampoline_start);
    tramp_set(tramp_cr3, read_cr3());
    tramp_set(tramp_entry, (uint64_t)ap_entry);
    struct cpus_boot b = { ids, n, lapic_id(), "apic id", x86_wake };
    return cpus_start(&b, max);
}

void cpu_kick(unsigned idx)
{
    if (idx < cpu_count() && cpus[idx].online)
        lapic_send_ipi(cpus[idx].hw_id, VEC_RESCHED);
}
