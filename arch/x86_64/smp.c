/* arch/x86_64/smp.c: INIT-SIPI-SIPI for every CPU the MADT lists, one at
 * a time, each through the trampoline with a stack of its own. A CPU that
 * does not report within 200 ms is named and skipped, never waited on. */
#include "arch/x86_64/smp.h"
#include "arch/x86_64/acpi.h"
#include "arch/x86_64/lapic.h"
#include "arch/x86_64/layout.h"
#include "arch/x86_64/percpu_arch.h"
#include "arch/x86_64/trap.h"
#include "arch/x86_64/x86.h"
#include "kernel/console.h"
#include "kernel/percpu.h"
#include "kernel/sched.h"
#include "kernel/task.h"
#include "kernel/time.h"
#include "kernel/timer.h"
#include "lib/string.h"
#include "mm/heap.h"

extern char trampoline_start[], trampoline_end[];
extern char tramp_cr3[], tramp_stack[], tramp_entry[];

static volatile unsigned ap_index;
static volatile int ap_ready;
static uintptr_t ap_stack_lo;

static void delay_us(uint64_t us)
{
    uint64_t t0 = rdtsc(), n = us * cycles_per_us();
    while (rdtsc() - t0 < n)
        pause();
}

static void ap_entry(void)
{
    unsigned idx = ap_index;
    cpu_arch_init(idx);
    trap_load();
    lapic_init();
    cpus[idx].hw_id = lapic_id();
    sched_init_cpu_stack(ap_stack_lo, ap_stack_lo + TASK_STACK_SIZE);
    lapic_timer_start(TIMER_HZ);
    __atomic_store_n(&ap_ready, 1, __ATOMIC_RELEASE);
    sched_run();
}

static void tramp_set(char *field, uint64_t val)
{
    uint8_t *base = phys_to_virt(TRAMPOLINE_PA);
    memcpy(base + (field - trampoline_start), &val, sizeof val);
}

unsigned smp_start(unsigned max)
{
    unsigned n = 1;
    uint32_t me = lapic_id();

    memcpy(phys_to_virt(TRAMPOLINE_PA), trampoline_start, trampoline_end - trampoline_start);
    tramp_set(tramp_cr3, read_cr3());
    tramp_set(tramp_entry, (uint64_t)ap_entry);

    for (unsigned i = 0; i < madt.ncpus && n < max; i++) {
        uint32_t id = madt.lapic_ids[i];
        if (id == me)
            continue;
        void *stack = kmalloc(TASK_STACK_SIZE);
        if (!stack) {
            kprintf("smp: no memory for a stack: cpu with apic id %u skipped\n", id);
            continue;
        }
        ap_stack_lo = (uintptr_t)stack;
        tramp_set(tramp_stack, (uint64_t)stack + TASK_STACK_SIZE);
        ap_index = n;
        ap_ready = 0;
        cpu_set_count(n + 1);
        lapic_send_init(id);
        delay_us(10000);
        lapic_send_sipi(id, TRAMPOLINE_PA >> 12);
        delay_us(200);
        if (!__atomic_load_n(&ap_ready, __ATOMIC_ACQUIRE))
            lapic_send_sipi(id, TRAMPOLINE_PA >> 12);
        uint64_t t0 = time_ns();
        while (!__atomic_load_n(&ap_ready, __ATOMIC_ACQUIRE) && time_ns() - t0 < 200000000)
            pause();
        if (!ap_ready) {
            kprintf("smp: cpu with apic id %u did not start: skipped\n", id);
            cpu_set_count(n);
            kfree(stack);               /* it never ran: nobody can be on it */
            continue;
        }
        n++;
    }
    return n;
}

void cpu_kick(unsigned idx)
{
    if (idx < cpu_count() && cpus[idx].online)
        lapic_send_ipi(cpus[idx].hw_id, VEC_RESCHED);
}
