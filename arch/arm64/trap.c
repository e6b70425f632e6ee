/* arch/arm64/trap.c: where each exception goes. A synchronous exception
 * from the kernel is always fatal (panic names its exception class from
 * ESR_EL1, and FAR_EL1 for aborts); an IRQ is acknowledged at the GIC and
 * handed to the handler registered for its INTID, the tick first.
 *
 * The PMU's PPI is the pseudo-NMI (gic.c, cpu.c): it is taken even while
 * the kernel has interrupts masked (ICC_PMR_EL1), and on top of an
 * ordinary handler. It is handled with PSTATE.I still set, so it never
 * nests in itself, and like an NMI on x86 it takes no lock, allocates
 * nothing and never schedules: prof_nmi samples and says whether the
 * counter had overflowed; if not, nothing else raises that PPI, and the
 * machine stops with a report rather than swallowing it. vectors.S
 * acknowledges every IRQ and sends that PPI down a short path of its own
 * (prof_nmi), the rest here with the INTID in the frame. */
#include "arch/arm64/trap.h"
#include "arch/arm64/arm64.h"
#include "arch/arm64/gic.h"
#include "arch/arm64/gtimer.h"
#include "hal/irq.h"
#include "hal/pmu.h"
#include "kernel/console.h"
#include "kernel/panic.h"
#include "kernel/percpu.h"
#include "kernel/prof/sample.h"
#include "kernel/prof/trace_hooks.h"
#include "kernel/sched.h"
#include "kernel/timer.h"

uintptr_t trap_pc(const struct trap_frame *tf) { return tf->pc; }
uintptr_t trap_sp(const struct trap_frame *tf) { return tf->sp; }
uintptr_t trap_fp(const struct trap_frame *tf) { return tf->x[29]; }

void trap_regs(const struct trap_frame *tf, struct trap_regs *r)
{
    trap_regs_inline(tf, r);
}

/* ESR_EL1.EC, bits 31:26 (Arm ARM D17.2.37). */
static const char *ec_name(unsigned ec)
{
    switch (ec) {
    case 0x00: return "unknown reason (undefined instruction)";
    case 0x01: return "trapped WFI/WFE";
    case 0x07: return "SIMD/FP access trapped";
    case 0x0e: return "illegal execution state";
    case 0x15: return "SVC instruction";
    case 0x18: return "trapped MSR/MRS/system instruction";
    case 0x20: return "instruction abort from EL0";
    case 0x21: return "instruction abort";
    case 0x22: return "PC alignment fault";
    case 0x24: return "data abort from EL0";
    case 0x25: return "data abort";
    case 0x26: return "SP alignment fault";
    case 0x2c: return "floating-point exception";
    case 0x2f: return "SError interrupt";
    case 0x30: case 0x31: return "breakpoint";
    case 0x32: case 0x33: return "software step";
    case 0x34: case 0x35: return "watchpoint";
    case 0x3c: return "BRK instruction";
    default:   return "reserved exception class";
    }
}

/* The fault status code of an abort (ISS bits 5:0). */
static const char *fsc_name(unsigned fsc)
{
    switch (fsc & 0x3c) {
    case 0x04: return "translation fault";
    case 0x08: return "access flag fault";
    case 0x0c: return "permission fault";
    }
    if (fsc == 0x00 || fsc == 0x01 || fsc == 0x02 || fsc == 0x03)
        return "address size fault";
    if (fsc == 0x10)
        return "synchronous external abort";
    if (fsc == 0x21)
        return "alignment fault";
    return "other fault";
}

void trap_print_regs(const struct trap_frame *tf)
{
    kprintf("  pc  %016lx  sp  %016lx  fp  %016lx  lr  %016lx\n",
            tf->pc, tf->sp, tf->x[29], tf->x[30]);
    kprintf("  pstate %016lx  esr %016lx  far %016lx\n", tf->pstate, tf->esr, tf->far);
    for (int i = 0; i < 29; i += 4) {
        kprintf(" ");
        for (int j = i; j < i + 4 && j < 29; j++)
            kprintf(" x%-2d %016lx", j, tf->x[j]);
        kprintf("\n");
    }
}

void cpu_print_regs_here(void)
{
    uint64_t sp, fp;
    __asm__ volatile("mov %0, sp; mov %1, x29" : "=r"(sp), "=r"(fp));
    kprintf("  sp  %016lx  fp  %016lx  daif %016lx  pmr %016lx\n", sp, fp,
            read_sysreg(daif), read_sysreg(icc_pmr_el1));
    kprintf("  sctlr %016lx  ttbr0 %016lx  ttbr1 %016lx\n", read_sysreg(sctlr_el1),
            read_sysreg(ttbr0_el1), read_sysreg(ttbr1_el1));
}

static void exception(struct trap_frame *tf)
{
    unsigned ec = (unsigned)(tf->esr >> 26) & 0x3f;
    unsigned iss = (unsigned)tf->esr & 0x1ffffff;
    const char *name = ec_name(ec);
    if (ec == 0x21 || ec == 0x25 || ec == 0x20 || ec == 0x24) {
        unsigned fsc = iss & 0x3f;
        bool data = ec == 0x25 || ec == 0x24;
        panic_trap(tf, "%s (EC 0x%x, ESR 0x%lx): %s level %u, %s at FAR 0x%lx",
                   name, ec, tf->esr, fsc_name(fsc), fsc & 3,
                   !data ? "fetch" : (iss & (1u << 6)) ? "write" : "read", tf->far);
    }
    if (ec == 0x22 || ec == 0x34 || ec == 0x35)
        panic_trap(tf, "%s (EC 0x%x, ESR 0x%lx) at FAR 0x%lx", name, ec, tf->esr, tf->far);
    if (ec == 0x3c)
        panic_trap(tf, "%s (EC 0x%x, ESR 0x%lx, immediate 0x%x)", name, ec, tf->esr, iss & 0xffff);
    panic_trap(tf, "%s (EC 0x%x, ESR 0x%lx)", name, ec, tf->esr);
}

/* Pseudo-NMI context: see the top of this file. A backtrace request, or
 * `panic nmi`'s SGI, which nobody expects. The PMU's PPI takes vectors.S's
 * short path; should it ever come this way, it is handled the same. */
static void nmi_irq(struct trap_frame *tf, unsigned id)
{
    if (id == SGI_BACKTRACE) {
        ipi_backtrace_answer(tf);
    } else if (id == SGI_NMI_TEST) {
        panic_trap(tf, "unexpected NMI on cpu %u (SGI %u at pseudo-NMI priority, no request)",
                   cpu_index(), id);
    } else if (!prof_nmi(tf)) {
        trap_pmu_unclaimed(tf);
    }
    gic_eoi(id);
}

/* vectors.S's short path, the PMU's PPI, calls prof_nmi directly
 * (pseudo-NMI context, PSTATE.I set throughout, the PMR never touched)
 * and ends the interrupt itself; when prof_nmi finds no overflow to
 * claim it fills in the rest of the frame and comes here. */
void trap_pmu_unclaimed(struct trap_frame *tf)
{
    panic_trap(tf, "unexpected PMU interrupt on cpu %u (INTID %u): the cycle counter "
               "has no overflow recorded in PMOVSSET_EL0 (counter %s)",
               cpu_index(), (unsigned)tf->intid, pmu_armed() ? "armed" : "not armed");
}

static void irq(struct trap_frame *tf)
{
    unsigned id = gic_acked(tf->intid);
    if (id >= GIC_MAX_INTID)
        return;                          /* spurious: nothing to end */
    if (gic_is_nmi(id)) {
        nmi_irq(tf, id);
        return;
    }
    /* Interrupts "off" by PMR from here; the pseudo-NMI may now nest. */
    irq_handler_unmask_nmi();
    /* Each interrupt is a slice of the trace (kernel/prof/trace_hooks.h),
     * ended before the switch sched_preempt may make: the tick, the SGIs
     * (IPIs) and the devices' SPIs. */
    bool traced = prof_trace_irq_on();
    if (id == gtimer_intid()) {
        if (traced)
            prof_trace_irq_enter(id, PROF_TRACE_IRQ_TICK);
        gtimer_rearm();
        gic_eoi(id);
        timer_tick(tf);
    } else {
        if (traced)
            prof_trace_irq_enter(id, id < 16 ? PROF_TRACE_IRQ_IPI : PROF_TRACE_IRQ_DEVICE);
        void *arg;
        irq_handler_fn fn = gic_handler(id, &arg);
        if (!fn) {
            panic_trap(tf, "unexpected interrupt on cpu %u: INTID %u has no handler",
                       cpu_index(), id);
        }
        fn(tf, arg);
        /* End it before a switch: an unended interrupt keeps this cpu's
         * running priority up and blocks the next one until we return. */
        gic_eoi(id);
    }
    if (traced)
        prof_trace_irq_exit();
    sched_preempt();     /* the handler may have woken a task (or SGI_RESCHED) */
}

void trap_dispatch(struct trap_frame *tf)
{
    switch (tf->kind) {
    case TF_IRQ:
        tf->pmr = irq_entry_save();
        irq(tf);
        /* Possibly much later, on this task's next turn (irq may have
         * switched tasks): PSTATE.I on, then its own PMR back. */
        irq_exit_restore(tf->pmr);
        return;
    case TF_SYNC:
        exception(tf);
        return;
    case TF_FIQ:
        panic_trap(tf, "unexpected FIQ on cpu %u (nothing is routed to FIQ)", cpu_index());
    case TF_SERROR:
        panic_trap(tf, "SError interrupt on cpu %u (ESR 0x%lx): asynchronous abort",
                   cpu_index(), tf->esr);
    default:
        panic_trap(tf, "exception from vector slot %lu on cpu %u (EL0 or SP_EL0: never used)",
                   tf->kind, cpu_index());
    }
}
