/* tests/unit/sim_pmu.h: a simulated x86 CPU for host tests of arch/x86_64/pmu.c
 * (and cpuinfo.c) under the PMU core, kernel/pmu.c.
 *
 * Implements rdmsr, wrmsr, cpuid, rdtsc and lapic_write_lvt_pmc (x86.h under
 * SONDE_HOST_TEST) for SIM_CPUS CPUs; fake_cpu (fake_hal.h) selects which.
 * Models Intel arch perfmon v2+ fixed counter 1, AMD's core-extension
 * counter 0 with and without PerfMonV2, a hypervisor that claims a counter
 * in CPUID and swallows every write to it, and a CPU that claims none.
 *
 * The TSC is the fake clock (cycles_now(), which the PMU core reads, as
 * the kernel's reads RDTSC): sim_tsc and sim_tsc_step name fake_cycles and
 * fake_cycles_step. Every rdmsr first lets each enabled counter advance by
 * sim_count_step. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "fake_hal.h"

#define SIM_CPUS 4
#define SIM_LOG_MAX 512
#define SIM_LOG_LVT 0xFEE00340u     /* log entries for LVT writes use this "msr" */

enum sim_vendor { SIM_INTEL, SIM_AMD, SIM_HYGON, SIM_OTHER };

struct sim_config {
    enum sim_vendor vendor;
    bool offer;            /* CPUID claims the counter (leaf 0xA / PerfCtrExtCore) */
    bool v2;               /* AMD: PerfMonV2 in 8000_0022h */
    uint32_t ext_max;      /* max extended leaf; 0: 0x80000022 for AMD, 0x80000008 for Intel */
    bool swallow;          /* writes ignored, reads 0 (the counter is not there) */
    bool hypervisor;       /* CPUID.1:ECX[31] and a "KVMKVMKVM" signature */
    bool freeze_set;       /* firmware left DEBUGCTL.FREEZE_PERFMON_ON_PMI set */
    unsigned intel_version, intel_fixed, intel_width;   /* 0: 2, 3, 48 */
    uint32_t signature;    /* CPUID.1 EAX; 0: a made-up one */
};

struct sim_cpu {
    /* Intel */
    uint64_t debugctl, fixed_ctrl, global_ctrl, global_status, fixed_ctr1;
    /* AMD */
    uint64_t amd_ctl0, amd_ctr0, amd_gctl, amd_gstatus;
    uint32_t lvt;
    unsigned pmis;         /* overflow interrupts raised */
    bool frozen;           /* FREEZE_PERFMON_ON_PMI cleared the enables */
};

struct sim_log {
    unsigned cpu;
    uint32_t msr;
    uint64_t val;
    bool armed;            /* pmu_armed() of that CPU when the write happened */
    int irq_depth;         /* fake_irq_depth then: > 0 means interrupts were off */
};

extern struct sim_cpu sim_cpus[SIM_CPUS];
extern struct sim_log sim_log[SIM_LOG_MAX];
extern unsigned sim_nlog;
#define sim_tsc      fake_cycles
#define sim_tsc_step fake_cycles_step
extern uint64_t sim_count_step;
extern unsigned sim_rdmsr_calls, sim_wrmsr_calls;
extern unsigned sim_legacy_access;   /* 0xC0010000-7 touched: #GP on a real guest */
extern unsigned sim_bad_access;      /* an MSR this model does not have: #GP */

/* Called after each wrmsr (and LVT write) is applied; a test can take an
 * NMI "in the middle" of an arm or disarm from here. */
extern void (*sim_write_hook)(uint32_t msr, uint64_t val);

void sim_init(const struct sim_config *c);
/* Let n events pass on the current CPU's enabled counters. */
void sim_count(uint64_t n);
/* Index of the first log entry at or after `from` writing msr, or -1. */
int sim_log_find(uint32_t msr, unsigned from);
/* Writes to msr in the log. */
unsigned sim_log_count(uint32_t msr);
void sim_log_clear(void);
