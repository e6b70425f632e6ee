/* arch/arm64/cpu.c: per-CPU setup (TPIDR_EL1, the vector base, the GIC's
 * priority mask) and the hal/cpu.h primitives: interrupt masking is by
 * priority (pseudo-NMI, below).
 *
 * cycles_now() is the generic timer's virtual count (CNTVCT_EL0), shifted
 * left so that a microsecond is a whole number of units: QEMU's counter
 * runs at 62.5 MHz, and 62 per us would skew time_ns by 0.8%. The shift is
 * the smallest that makes the rate an integer per us (up to 8), else the
 * smallest that makes it at least 1000 per us (rounding error <= 0.1%). */
#include "arch/arm64/arm64.h"
#include "arch/arm64/percpu_arch.h"
#include "hal/cpu.h"
#include "kernel/cpus.h"
#include "kernel/percpu.h"

static struct cpu_arch cpu_archs[MAX_CPUS];
unsigned cycles_shift;             /* read inline: arch/arm64/cpu_inline.h */
static uint64_t per_us;

extern char vectors[];
static void pmr_init(unsigned idx);

/* CPACR_EL1.FPEN (bits 21:20) = 0b11: EL1 (and EL0) may execute FP and
 * SIMD instructions; any other value traps them to EL1 (EC 0x07), and
 * the reset value is UNKNOWN. The one user is the SHA-256 block function
 * (arch/arm64/sha256.c, which says why the vector registers need no
 * saving); every CPU sets it, since a task may hash on any of them. */
#define CPACR_EL1_FPEN (3ul << 20)

static void simd_enable(void)
{
    uint64_t v = read_sysreg(cpacr_el1);
    if ((v & CPACR_EL1_FPEN) != CPACR_EL1_FPEN) {
        write_sysreg(cpacr_el1, v | CPACR_EL1_FPEN);
        isb();
    }
}

void cpu_arch_init(unsigned idx, uint64_t mpidr)
{
    struct cpu_arch *a = &cpu_archs[idx];

    write_sysreg(vbar_el1, (uint64_t)vectors);   /* before anything can fault */
    isb();
    pmr_init(idx);                               /* before the first irq_save */
    simd_enable();                               /* SHA-256's instructions (sha256.c) */
    struct cpu *c = cpu_setup(idx, a);
    a->mpidr = mpidr & MPIDR_AFF_MASK;
    c->hw_id = (uint32_t)(a->mpidr & 0xffffff);  /* Aff2.Aff1.Aff0, for `cpus` */
    write_sysreg(tpidr_el1, (uint64_t)c);        /* this_cpu() works from here on */
}

struct cpu *this_cpu(void)
{
    return (struct cpu *)read_sysreg(tpidr_el1);
}

_Static_assert(__builtin_offsetof(struct cpu, index) == CPU_OFF_INDEX, "cpu_inline.h reads index there");

#define DAIF_I (1ul << 7)

/* Interrupt masking: pseudo-NMI (arm64.h, docs/arm64.md).
 *
 * "Interrupts off" is ICC_PMR_EL1 = PMR_IRQ_OFF: the GIC then signals
 * nothing but the PMU's PPI (GIC_PRIO_NMI), so the profiler samples code
 * that runs with interrupts masked, as an NMI does on x86. irq_save
 * returns the old PMR and irq_restore writes it back; PSTATE.I is not
 * touched by either. PSTATE.I is set by the hardware on every exception
 * entry and stays set while the frame is saved and while the pseudo-NMI
 * itself runs; an ordinary IRQ handler clears it once PMR masks ordinary
 * IRQs again (irq_handler_unmask_nmi), and the exit path sets it before
 * restoring PMR, ELR and SPSR (irq_exit_restore, vectors.S). So the
 * kernel counts as "interrupts off" when PMR is PMR_IRQ_OFF or PSTATE.I
 * is set: during boot until sched_run's irq_enable, I is set too.
 *
 * cpu_pmr_masking is false only on a CPU without the GIC system registers
 * (ID_AA64PFR0_EL1.GIC == 0): then ICC_PMR_EL1 would be an undefined
 * instruction, so masking falls back to PSTATE.I, just long enough for
 * kmain to report that it needs a GICv3. */
bool cpu_pmr_masking;              /* arm64.h: the IRQ entry and exit read it */

static inline uint64_t pmr_read(void) { return read_sysreg(icc_pmr_el1); }
/* A write to ICC_PMR_EL1 is self-synchronising for masking: no interrupt
 * at or below the new mask is taken after it executes. */
static inline void pmr_write(uint64_t v) { write_sysreg(icc_pmr_el1, v); }

/* Each CPU, first thing (cpu_arch_init): the system-register interface
 * on, and PMR open. PSTATE.I is still set (boot, or PSCI CPU_ON entry). */
static void pmr_init(unsigned idx)
{
    if (idx == 0)
        cpu_pmr_masking = ((read_sysreg(id_aa64pfr0_el1) >> 24) & 0xf) != 0;
    if (!cpu_pmr_masking)
        return;
    write_sysreg(icc_sre_el1, read_sysreg(icc_sre_el1) | 1);
    isb();
    pmr_write(PMR_IRQ_ON);
}

unsigned long irq_save(void)
{
    if (!cpu_pmr_masking) {
        unsigned long f = read_sysreg(daif);
        __asm__ volatile("msr daifset, #2" ::: "memory");
        return f;
    }
    unsigned long f = pmr_read();
    pmr_write(PMR_IRQ_OFF);
    return f;
}

void irq_restore(unsigned long flags)
{
    if (!cpu_pmr_masking) {
        if (!(flags & DAIF_I))
            __asm__ volatile("msr daifclr, #2" ::: "memory");
        return;
    }
    pmr_write(flags);
}

bool irqs_enabled(void) { return irqs_enabled_inline(); }

/* task_start and sched_run: the only places a context starts with
 * interrupts on, so both the mask and PSTATE.I are opened. */
void irq_enable(void)
{
    if (cpu_pmr_masking)
        pmr_write(PMR_IRQ_ON);
    __asm__ volatile("msr daifclr, #2" ::: "memory");
}

void cpu_relax(void) { __asm__ volatile("yield" ::: "memory"); }

/* WFI wakes on an interrupt the GIC signals even while PSTATE.I masks it,
 * but not on one PMR masks (the GIC then signals nothing). So: I set, PMR
 * open, WFI, I clear; an interrupt that became pending between the
 * caller's last check and the WFI still wakes it. Interrupts are on when
 * this returns. */
void cpu_idle(void)
{
    __asm__ volatile("msr daifset, #2" ::: "memory");
    if (cpu_pmr_masking)
        pmr_write(PMR_IRQ_ON);
    __asm__ volatile("dsb sy\n\twfi\n\tmsr daifclr, #2" ::: "memory");
}

/* ---- the IRQ entry and exit (trap.c) ---- */

/* An ordinary IRQ, acknowledged: mask ordinary IRQs by PMR (the handler
 * is interrupts-off code, as everywhere), then let the pseudo-NMI in, so
 * the profiler also samples interrupt handlers. The GIC would not let a
 * second ordinary IRQ preempt this one anyway (running priority), but
 * after its EOI it would, and handlers are not written for that. */
void irq_handler_unmask_nmi(void)
{
    if (!cpu_pmr_masking)
        return;
    pmr_write(PMR_IRQ_OFF);
    __asm__ volatile("msr daifclr, #2" ::: "memory");
}

void cycles_init(uint64_t cntfrq)
{
    unsigned s;
    for (s = 0; s <= 8; s++)
        if (((cntfrq << s) % 1000000) == 0 && (cntfrq << s) >= 1000000)
            break;
    if (s > 8)
        for (s = 0; s < 16 && (cntfrq << s) / 1000000 < 1000; s++)
            ;
    cycles_shift = s;
    per_us = (cntfrq << s) / 1000000;
}

uint64_t cycles_now(void) { return cycles_now_inline(); }

uint64_t cycles_per_us(void) { return per_us ? per_us : 1; }

/* Not CPU cycles: units of the generic timer (scaled as above). */
const char *cycles_unit(void) { return "timer units"; }
