/* arch/arm64/arm64.h: the address space, system registers and MMIO, for
 * arm64 arch code only (shared by C and asm).
 *
 *   0x40000000 ..                     identity map of RAM (TTBR0; boot and
 *                                     PSCI CPU_ON entry, MMU off -> on)
 *   0xffff000000000000 .. + 4 GiB     direct map of the low 4 GiB of
 *                                     physical space (TTBR1): devices below
 *                                     1 GiB, RAM above; the kernel image is
 *                                     linked inside it (PA 0x40200000)
 */
#pragma once

#define DIRECT_MAP      0xffff000000000000
#define KERNEL_PHYS     0x40200000
#define BOOT_STACK_SIZE 16384

/* SGIs (software-generated interrupts, INTID 0-15) this kernel uses. */
#define SGI_RESCHED     1
#define SGI_BACKTRACE   2
#define SGI_NMI_TEST    3          /* `panic nmi`: nobody claims it */
#define SGI_HEAPPROF    4          /* a heap-profiling rate change (ipi.c) */

/* Trap frame kinds: the vector-table slot that was taken (vectors.S),
 * 0-3 from EL1 on SP_EL0 (never used), 4-7 from EL1 on SP_EL1 (the
 * kernel), 8-15 from EL0 (there is none). */
#define TF_SYNC         4
#define TF_IRQ          5
#define TF_FIQ          6
#define TF_SERROR       7

#ifndef __ASSEMBLY__
#include <stdbool.h>
#include <stdint.h>

static inline void *phys_to_virt(uint64_t pa) { return (void *)(uintptr_t)(pa + DIRECT_MAP); }
static inline uint64_t virt_to_phys(const void *va) { return (uint64_t)(uintptr_t)va - DIRECT_MAP; }

#define read_sysreg(r) ({ uint64_t __v; __asm__ volatile("mrs %0, " #r : "=r"(__v)); __v; })
#define write_sysreg(r, v) __asm__ volatile("msr " #r ", %0" :: "r"((uint64_t)(v)) : "memory")
#ifdef SONDE_HOST_TEST
static inline void isb(void) {}
static inline void dsb_sy(void) {}
#else
static inline void isb(void) { __asm__ volatile("isb" ::: "memory"); }
static inline void dsb_sy(void) { __asm__ volatile("dsb sy" ::: "memory"); }
#endif

static inline uint32_t mmio_read32(uint64_t pa) { return *(volatile uint32_t *)phys_to_virt(pa); }
static inline void mmio_write32(uint64_t pa, uint32_t v) { *(volatile uint32_t *)phys_to_virt(pa) = v; }
static inline uint64_t mmio_read64(uint64_t pa) { return *(volatile uint64_t *)phys_to_virt(pa); }
static inline void mmio_write64(uint64_t pa, uint64_t v) { *(volatile uint64_t *)phys_to_virt(pa) = v; }

/* MPIDR_EL1 affinity fields as one number: Aff3 in bits 32-39, Aff2.Aff1.Aff0
 * in bits 0-23, the same packing the device tree's cpu reg uses. */
#define MPIDR_AFF_MASK 0xff00ffffffull

/* Interrupt masking (cpu.c): the kernel masks through the GIC's priority
 * mask, ICC_PMR_EL1, not PSTATE.I, so that the PMU's interrupt, one
 * priority level above everything else (gic.c), still arrives while the
 * kernel "has interrupts off": a pseudo-NMI. An interrupt is signalled
 * only if its priority value is below PMR. PSTATE.I is set only by the
 * hardware on exception entry, kept set through the entry and exit
 * paths and the pseudo-NMI handler, and during boot until sched_run. */
#define GIC_PRIO_NMI    0x20u          /* the PMU's PPI */
#define GIC_PRIO_IRQ    0xa0u          /* everything else */
#define PMR_IRQ_ON      0xf0u          /* both pass */
#define PMR_IRQ_OFF     0x60u          /* only GIC_PRIO_NMI passes */

/* Arch functions called from other arch files (or from assembly), by the
 * file that defines them. */
void kmain(uint64_t x0, uint64_t entry_el);  /* main.c, from boot.S */
void ap_entry(unsigned idx);                 /* smp.c, from boot.S: a secondary CPU */
void arch_task_first(void);                  /* vectors.S: x30 = 0, then branch to x19 */
void pl011_set(uint64_t pa, unsigned irq);   /* uart.c: the UART the device tree names */
uint64_t pl011_base(void);                   /* uart.c */
void ipi_init(void);                         /* ipi.c: the SGIs' handlers */

void irq_handler_unmask_nmi(void);     /* PMR off, then PSTATE.I clear: NMIs may preempt */

/* The IRQ entry and exit (trap.c), inline: every interrupt, the
 * pseudo-NMI included, passes both, and as calls they cost it ~12 guest
 * instructions. cpu_pmr_masking (cpu.c) is false only on a CPU without
 * the GIC system registers, where ICC_PMR_EL1 would be undefined. */
extern bool cpu_pmr_masking;

/* On entry PSTATE.I is set (hardware) and PMR is whatever the interrupted
 * code had: that is what the exit puts back. */
static inline uint64_t irq_entry_save(void)
{
    return cpu_pmr_masking ? read_sysreg(icc_pmr_el1) : 0;
}

/* PSTATE.I first: from here to the eret nothing may be taken, because
 * vectors.S is about to reload ELR_EL1 and SPSR_EL1, which any exception
 * would overwrite. Then the interrupted code's mask (a PMR write is
 * self-synchronising for masking: no isb). */
static inline void irq_exit_restore(uint64_t pmr)
{
    __asm__ volatile("msr daifset, #2" ::: "memory");
    if (cpu_pmr_masking)
        write_sysreg(icc_pmr_el1, pmr);
}

/* The PMUv3 and ID registers pmu.c and cpuinfo.c touch, by name, behind
 * one pair of functions, as x86.h does with rdmsr/wrmsr: host unit tests
 * (SONDE_HOST_TEST) link a simulated PMU (tests/unit/sim_pmu_a64.c) that
 * implements them; in the kernel the switch folds to one mrs/msr. */
enum pmu_reg {
    PMREG_PMCR,            /* PMCR_EL0 */
    PMREG_PMCNTENSET,      /* PMCNTENSET_EL0 */
    PMREG_PMCNTENCLR,      /* PMCNTENCLR_EL0 */
    PMREG_PMINTENSET,      /* PMINTENSET_EL1 */
    PMREG_PMINTENCLR,      /* PMINTENCLR_EL1 */
    PMREG_PMOVSSET,        /* PMOVSSET_EL0 */
    PMREG_PMOVSCLR,        /* PMOVSCLR_EL0 */
    PMREG_PMCCNTR,         /* PMCCNTR_EL0 */
    PMREG_PMCCFILTR,       /* PMCCFILTR_EL0 */
    PMREG_ID_AA64DFR0,     /* ID_AA64DFR0_EL1 (read only) */
    PMREG_MIDR,            /* MIDR_EL1 (read only) */
};

/* The PMU's PPI from the device tree (0: none). main.c calls it before
 * the GIC's per-CPU setup; pmu.c keeps it and makes it the GIC's
 * pseudo-NMI (gic_set_nmi_ppi). */
void pmu_set_ppi(unsigned intid);

#ifdef SONDE_HOST_TEST
uint64_t pmu_reg_read(enum pmu_reg r);
void pmu_reg_write(enum pmu_reg r, uint64_t v);
#else
static inline uint64_t pmu_reg_read(enum pmu_reg r)
{
    switch (r) {
    case PMREG_PMCR:        return read_sysreg(pmcr_el0);
    case PMREG_PMCNTENSET:  return read_sysreg(pmcntenset_el0);
    case PMREG_PMCNTENCLR:  return read_sysreg(pmcntenclr_el0);
    case PMREG_PMINTENSET:  return read_sysreg(pmintenset_el1);
    case PMREG_PMINTENCLR:  return read_sysreg(pmintenclr_el1);
    case PMREG_PMOVSSET:    return read_sysreg(pmovsset_el0);
    case PMREG_PMOVSCLR:    return read_sysreg(pmovsclr_el0);
    case PMREG_PMCCNTR:     return read_sysreg(pmccntr_el0);
    case PMREG_PMCCFILTR:   return read_sysreg(pmccfiltr_el0);
    case PMREG_ID_AA64DFR0: return read_sysreg(id_aa64dfr0_el1);
    case PMREG_MIDR:        return read_sysreg(midr_el1);
    }
    return 0;
}

static inline void pmu_reg_write(enum pmu_reg r, uint64_t v)
{
    switch (r) {
    case PMREG_PMCR:        write_sysreg(pmcr_el0, v); break;
    case PMREG_PMCNTENSET:  write_sysreg(pmcntenset_el0, v); break;
    case PMREG_PMCNTENCLR:  write_sysreg(pmcntenclr_el0, v); break;
    case PMREG_PMINTENSET:  write_sysreg(pmintenset_el1, v); break;
    case PMREG_PMINTENCLR:  write_sysreg(pmintenclr_el1, v); break;
    case PMREG_PMOVSSET:    write_sysreg(pmovsset_el0, v); break;
    case PMREG_PMOVSCLR:    write_sysreg(pmovsclr_el0, v); break;
    case PMREG_PMCCNTR:     write_sysreg(pmccntr_el0, v); break;
    case PMREG_PMCCFILTR:   write_sysreg(pmccfiltr_el0, v); break;
    case PMREG_ID_AA64DFR0: case PMREG_MIDR: break;     /* read only */
    }
}
#endif
#endif
