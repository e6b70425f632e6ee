/* arch/arm64/smp.c: the other CPUs, started one at a time by PSCI CPU_ON
 * (the firmware interface QEMU implements; conduit hvc or smc, as the
 * device tree's /psci node says). Each enters secondary_entry (boot.S)
 * with the MMU off and its index as the context id, turns the MMU on with
 * the boot page tables, and continues in ap_entry on a stack of its own.
 * The loop, the stacks and the wait are kernel/cpus.c's (cpus_start);
 * here is how one CPU is woken, and where it lands. */
#include "arch/arm64/arm64.h"
#include "arch/arm64/gic.h"
#include "arch/arm64/gtimer.h"
#include "arch/arm64/percpu_arch.h"
#include "arch/arm64/smp.h"
#include "kernel/console.h"
#include "kernel/cpus.h"
#include "kernel/panic.h"
#include "kernel/percpu.h"
#include "kernel/sched.h"
#include "kernel/task.h"
#include "lib/printf.h"
#include "lib/string.h"

#define PSCI_CPU_ON_64 0xc4000003u

extern char secondary_entry[];
uint64_t ap_stack_tops[MAX_CPUS];       /* boot.S reads its own */
static bool use_smc;

/* SMC Calling Convention: function id and arguments in x0-x3, result in
 * x0; x4-x17 may be clobbered by the firmware. */
static int64_t psci_call(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3)
{
    register uint64_t x0 __asm__("x0") = fn;
    register uint64_t x1 __asm__("x1") = a1;
    register uint64_t x2 __asm__("x2") = a2;
    register uint64_t x3 __asm__("x3") = a3;
    if (use_smc)
        __asm__ volatile("smc #0" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3) ::
                         "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12",
                         "x13", "x14", "x15", "x16", "x17", "memory");
    else
        __asm__ volatile("hvc #0" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3) ::
                         "x4", "x5", "x6", "x7", "x8", "x9", "x10", "x11", "x12",
                         "x13", "x14", "x15", "x16", "x17", "memory");
    return (int64_t)x0;
}

void ap_entry(unsigned idx)
{
    if (!cpus_start_claim())
        cpu_stop();                 /* too late: given up on (kernel/cpus.h) */
    cpu_arch_init(idx, read_sysreg(mpidr_el1));
    const char *err = gic_init_cpu();
    if (err)
        panic("gic: cpu %u: %s", idx, err);
    struct cpu_arch *a = cpus[idx].arch;
    a->stack_hi = ap_stack_tops[idx];
    a->stack_lo = a->stack_hi - TASK_STACK_SIZE;
    sched_init_cpu_stack(a->stack_lo, a->stack_hi);
    gtimer_start();
    cpus_start_report();
    sched_run();
}

static const char *psci_error(int64_t r)
{
    switch (r) {
    case -1: return "not supported";
    case -2: return "invalid parameters";
    case -3: return "denied";
    case -4: return "already on";
    case -5: return "on pending";
    case -6: return "internal failure";
    case -9: return "invalid address";
    default: return "unknown error";
    }
}

/* cpus_start's hook: the stack top boot.S loads for index idx, then
 * CPU_ON. A PSCI error means the CPU was never started: said, and its
 * stack freed by cpus_start. */
static const char *a64_wake(unsigned idx, uint64_t mpidr, void *stack)
{
    static char why[48];
    ap_stack_tops[idx] = (uint64_t)stack + TASK_STACK_SIZE;
    __asm__ volatile("dsb ish" ::: "memory");   /* the stack top before the cpu runs */
    int64_t r = psci_call(PSCI_CPU_ON_64, mpidr, virt_to_phys(secondary_entry), idx);
    if (r == 0)
        return NULL;
    fmt_snprintf(why, sizeof why, "PSCI CPU_ON: %ld, %s", (long)r, psci_error(r));
    return why;
}

unsigned smp_start(const struct fdt_machine *m, unsigned max)
{
    uint64_t me = read_sysreg(mpidr_el1) & MPIDR_AFF_MASK;

    if (!m->psci_method[0]) {
        if (m->ncpus > 1)
            kprintf("smp: no /psci node in the device tree: other cpus not started\n");
        return 1;
    }
    use_smc = strcmp(m->psci_method, "smc") == 0;
    struct cpus_boot b = { m->cpu_mpidr, m->ncpus, me, "mpidr", a64_wake };
    return cpus_start(&b, max);
}
