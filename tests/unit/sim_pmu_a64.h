/* tests/unit/sim_pmu_a64.h: a simulated PMUv3 for host tests of
 * arch/arm64/pmu.c.
 *
 * Implements pmu_reg_read/pmu_reg_write (arch/arm64/arm64.h under
 * SONDE_HOST_TEST) for SIM_A64_CPUS CPUs, and the two GIC calls pmu.c
 * makes (gic_set_nmi_ppi, gic_enable_ppi); fake_cpu (fake_hal.h) selects
 * the CPU. Models the cycle counter only: PMCR_EL0 (E, D, LC, N),
 * PMCNTEN/PMINTEN/PMOVS set and clear pairs, PMCCNTR_EL0, PMCCFILTR_EL0
 * (P: EL1 not counted), ID_AA64DFR0_EL1.PMUVer and MIDR_EL1. A part may
 * claim PMUv3 and have a counter that never moves (counts = false).
 *
 * Time: the counter follows fake_cycles (the generic timer, cycles_now):
 * on every register access the current CPU's counter advances by the
 * fake time since its last access, times num/den. sim_a64_count pushes
 * it by hand. An overflow sets PMOVS.C and, with PMINTEN.C and PMCR.E,
 * raises the interrupt request (a level: sim_a64_irq_level). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "arch/arm64/arm64.h"

#define SIM_A64_CPUS 4
#define SIM_A64_LOG_MAX 512
#define SIM_LOG_GIC_ENABLE 100         /* "register" of a gic_enable_ppi in the log */

struct sim_a64_config {
    unsigned pmuver;        /* ID_AA64DFR0_EL1.PMUVer: 0 none, 1 PMUv3, 0xf IMPDEF */
    bool counts;            /* the cycle counter really counts */
    uint64_t num, den;      /* counter increments per fake time unit (0/0: 8/1) */
    unsigned pmcr_n;        /* PMCR_EL0.N; 0: 6 */
};

struct sim_a64_cpu {
    uint64_t pmcr, cnten, inten, ovs, ccnt, ccfiltr;
    uint64_t last;          /* fake_cycles at the last advance */
    uint64_t frac;          /* remainder of num/den scaling */
    unsigned irqs;          /* interrupt requests raised (rising edges of the level) */
    bool level;             /* the request as it stands */
    bool ppi_enabled;       /* gic_enable_ppi on this cpu */
};

struct sim_a64_log {
    unsigned cpu;
    enum pmu_reg reg;       /* or SIM_LOG_GIC_ENABLE */
    uint64_t val;
    bool armed;             /* pmu_armed() of that CPU at the write */
    int irq_depth;          /* fake_irq_depth: > 0 means interrupts off */
};

extern struct sim_a64_cpu sim_a64[SIM_A64_CPUS];
extern struct sim_a64_log sim_a64_log[SIM_A64_LOG_MAX];
extern unsigned sim_a64_nlog;
extern unsigned sim_a64_reads, sim_a64_writes;     /* PMU registers (not ID ones) */
extern unsigned sim_a64_id_reads;
extern unsigned sim_a64_nmi_ppi;                   /* what gic_set_nmi_ppi was told */
/* Called after each write is applied: a test can take the interrupt
 * "in the middle" of an arm or disarm from here. */
extern void (*sim_a64_write_hook)(enum pmu_reg r, uint64_t v);
/* Called after each PMU register read (the value already taken): a test
 * can let time jump there, as a host that deschedules the vCPU does. */
extern void (*sim_a64_read_hook)(enum pmu_reg r);

void sim_a64_init(const struct sim_a64_config *c);
void sim_a64_count(uint64_t n);           /* n increments on the current cpu */
bool sim_a64_irq_level(void);             /* the current cpu's request */
int sim_a64_log_find(int reg, unsigned from);
int sim_a64_log_last(int reg);
unsigned sim_a64_log_count(int reg);
void sim_a64_log_clear(void);
