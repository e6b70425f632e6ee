/* tests/unit/sim_pmu.c: the simulated x86 CPU of sim_pmu.h.
 *
 * Only what arch/x86_64/pmu.c and cpuinfo.c touch is modelled, and any MSR the modelled
 * part does not have counts as a #GP (sim_bad_access) so a test can assert
 * the backend never went there. */
#include "sim_pmu.h"
#include "fake_hal.h"
#include "arch/x86_64/x86.h"
#include "hal/cpu.h"
#include "hal/pmu.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sim_cpu sim_cpus[SIM_CPUS];
struct sim_log sim_log[SIM_LOG_MAX];
unsigned sim_nlog;
uint64_t sim_count_step;
unsigned sim_rdmsr_calls, sim_wrmsr_calls;
unsigned sim_legacy_access, sim_bad_access;
void (*sim_write_hook)(uint32_t msr, uint64_t val);

static struct sim_config cfg;

#define INTEL_CTR1_BIT   (1ull << 33)
#define INTEL_FREEZE     (1ull << 12)
#define AMD_EN           (1ull << 22)
#define AMD_OS           (1ull << 17)
#define AMD_INT          (1ull << 20)
#define AMD_MASK         ((1ull << 48) - 1)

static struct sim_cpu *cur(void)
{
    if (fake_cpu >= SIM_CPUS) {
        fprintf(stderr, "sim_pmu: fake_cpu %u out of range (0-%d)\n", fake_cpu, SIM_CPUS - 1);
        abort();
    }
    return &sim_cpus[fake_cpu];
}

static bool is_amd(void)
{
    return cfg.vendor == SIM_AMD || cfg.vendor == SIM_HYGON;
}

static uint64_t intel_mask(void)
{
    return cfg.intel_width >= 64 ? ~0ull : (1ull << cfg.intel_width) - 1;
}

/* The counter is really there: CPUID claims it and writes are not swallowed. */
static bool counting_hw(void)
{
    return cfg.offer && !cfg.swallow;
}

void sim_init(const struct sim_config *c)
{
    cfg = *c;
    if (!cfg.intel_version) cfg.intel_version = 2;
    if (!cfg.intel_fixed) cfg.intel_fixed = 3;
    if (!cfg.intel_width) cfg.intel_width = 48;
    if (!cfg.ext_max) cfg.ext_max = is_amd() ? 0x80000022 : 0x80000008;
    if (!cfg.signature) cfg.signature = is_amd() ? 0x00A20F12 : 0x000906EA;
    memset(sim_cpus, 0, sizeof sim_cpus);
    for (int i = 0; i < SIM_CPUS; i++) {
        sim_cpus[i].lvt = 1u << 16;                  /* masked at reset */
        if (cfg.freeze_set)
            sim_cpus[i].debugctl = INTEL_FREEZE;
        /* Assumed PerfMonV2 reset value: every counter's global enable set,
         * so software that knows nothing of V2 still counts. */
        if (cfg.v2)
            sim_cpus[i].amd_gctl = 0x3f;
    }
    sim_nlog = 0;
    sim_tsc = 1000000;
    sim_tsc_step = 100;
    sim_count_step = 37;
    sim_rdmsr_calls = sim_wrmsr_calls = 0;
    sim_legacy_access = sim_bad_access = 0;
    sim_write_hook = NULL;
}

void sim_log_clear(void) { sim_nlog = 0; }

int sim_log_find(uint32_t msr, unsigned from)
{
    for (unsigned i = from; i < sim_nlog; i++)
        if (sim_log[i].msr == msr)
            return (int)i;
    return -1;
}

unsigned sim_log_count(uint32_t msr)
{
    unsigned n = 0;
    for (unsigned i = 0; i < sim_nlog; i++)
        n += sim_log[i].msr == msr;
    return n;
}

static void log_write(uint32_t msr, uint64_t val)
{
    if (sim_nlog < SIM_LOG_MAX)
        sim_log[sim_nlog++] = (struct sim_log){fake_cpu, msr, val, pmu_armed(), fake_irq_depth};
}

/* An overflow with its interrupt enabled: the LAPIC delivers a PMI. Intel
 * masks the LVT entry on delivery; with FREEZE_PERFMON_ON_PMI set (v2/v3
 * legacy freeze) the global enable bits are cleared: the counter stops. */
static void raise_pmi(struct sim_cpu *s)
{
    s->pmis++;
    if (is_amd())
        return;
    s->lvt |= 1u << 16;
    if (s->debugctl & INTEL_FREEZE) {
        s->global_ctrl &= ~(INTEL_CTR1_BIT | 0x7ull << 32 | 0xffull);
        s->frozen = true;
    }
}

static void intel_count(struct sim_cpu *s, uint64_t n)
{
    if (!(s->fixed_ctrl & (1ull << 4)) || !(s->global_ctrl & INTEL_CTR1_BIT))
        return;
    uint64_t m = intel_mask();
    uint64_t sum = s->fixed_ctr1 + n;
    bool wrapped = sum > m || sum < s->fixed_ctr1;
    s->fixed_ctr1 = sum & m;
    if (wrapped) {
        s->global_status |= INTEL_CTR1_BIT;
        if (s->fixed_ctrl & (1ull << 7))
            raise_pmi(s);
    }
}

static void amd_count(struct sim_cpu *s, uint64_t n)
{
    uint64_t ev = (s->amd_ctl0 & 0xff) | ((s->amd_ctl0 >> 32) & 0xf) << 8;
    if (!(s->amd_ctl0 & AMD_EN) || !(s->amd_ctl0 & AMD_OS) || ev != 0x76)
        return;
    if (cfg.v2 && !(s->amd_gctl & 1))
        return;
    uint64_t sum = s->amd_ctr0 + n;
    s->amd_ctr0 = sum & AMD_MASK;
    if (sum > AMD_MASK) {
        if (cfg.v2)
            s->amd_gstatus |= 1;
        if (s->amd_ctl0 & AMD_INT)
            raise_pmi(s);
    }
}

void sim_count(uint64_t n)
{
    if (!counting_hw())
        return;
    if (is_amd())
        amd_count(cur(), n);
    else if (cfg.vendor == SIM_INTEL)
        intel_count(cur(), n);
}

/* The register behind msr on this model, or NULL for a #GP. */
static uint64_t *reg(uint32_t msr, bool write)
{
    struct sim_cpu *s = cur();
    if (msr >= 0xC0010000 && msr <= 0xC0010007) {
        sim_legacy_access++;
        return NULL;
    }
    if (cfg.vendor == SIM_INTEL) {
        bool pmu = cfg.offer || cfg.swallow;
        switch (msr) {
        case 0x1D9: return &s->debugctl;
        case 0x30A: return pmu ? &s->fixed_ctr1 : NULL;
        case 0x38D: return pmu ? &s->fixed_ctrl : NULL;
        case 0x38E: return pmu && !write ? &s->global_status : NULL;
        case 0x38F: return pmu ? &s->global_ctrl : NULL;
        case 0x390: return pmu ? &s->global_status : NULL;   /* handled in wrmsr */
        }
    } else if (is_amd()) {
        bool pmu = cfg.offer || cfg.swallow;
        bool v2 = cfg.v2 && cfg.offer;
        switch (msr) {
        case 0xC0010200: return pmu ? &s->amd_ctl0 : NULL;
        case 0xC0010201: return pmu ? &s->amd_ctr0 : NULL;
        case 0xC0000300: return v2 && !write ? &s->amd_gstatus : NULL;
        case 0xC0000301: return v2 ? &s->amd_gctl : NULL;
        case 0xC0000302: return v2 ? &s->amd_gstatus : NULL; /* handled in wrmsr */
        }
    }
    return NULL;
}

uint64_t rdmsr(uint32_t msr)
{
    sim_rdmsr_calls++;
    sim_count(sim_count_step);
    uint64_t *r = reg(msr, false);
    if (!r) {
        sim_bad_access++;
        return 0;
    }
    if (cfg.swallow && msr != 0x1D9)
        return 0;
    if (msr == 0x390 || msr == 0xC0000302)
        return 0;
    return *r;
}

void wrmsr(uint32_t msr, uint64_t val)
{
    sim_wrmsr_calls++;
    log_write(msr, val);
    struct sim_cpu *s = cur();
    uint64_t *r = reg(msr, true);
    if (!r) {
        sim_bad_access++;
    } else if (cfg.swallow && msr != 0x1D9) {
        /* the hypervisor drops it */
    } else if (msr == 0x390 || msr == 0xC0000302) {
        *r &= ~val;                                      /* write 1 to clear */
    } else if (msr == 0x30A) {
        /* A plain write takes 32 bits, sign-extended (SDM 18.2.2). */
        *r = (uint64_t)(int64_t)(int32_t)(uint32_t)val & intel_mask();
    } else if (msr == 0xC0010201) {
        *r = val & AMD_MASK;
    } else {
        *r = val;
        if (msr == 0x38F && (val & INTEL_CTR1_BIT))
            s->frozen = false;
    }
    if (sim_write_hook)
        sim_write_hook(msr, val);
}

uint64_t rdtsc(void)
{
    sim_count(sim_count_step);
    return cycles_now();
}

void lapic_write_lvt_pmc(uint32_t val)
{
    log_write(SIM_LOG_LVT, val);
    cur()->lvt = val;
    if (sim_write_hook)
        sim_write_hook(SIM_LOG_LVT, val);
}

static uint32_t str4(const char *s)
{
    return (uint32_t)(uint8_t)s[0] | (uint32_t)(uint8_t)s[1] << 8 |
           (uint32_t)(uint8_t)s[2] << 16 | (uint32_t)(uint8_t)s[3] << 24;
}

static const char *vendor_string(void)
{
    switch (cfg.vendor) {
    case SIM_INTEL: return "GenuineIntel";
    case SIM_AMD: return "AuthenticAMD";
    case SIM_HYGON: return "HygonGenuine";
    default: return "SondeSimCPU!";
    }
}

void cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    static const char brand[49] = "     Sim CPU Model 42 @ 3.00GHz                 ";
    const char *v = vendor_string();
    r[0] = r[1] = r[2] = r[3] = 0;
    if (leaf == 0) {
        r[0] = 0xD;
        r[1] = str4(v);
        r[3] = str4(v + 4);
        r[2] = str4(v + 8);
    } else if (leaf == 1) {
        r[0] = cfg.signature;
        r[2] = cfg.hypervisor ? 1u << 31 : 0;
    } else if (leaf == 0xA && cfg.vendor == SIM_INTEL && cfg.offer) {
        r[0] = cfg.intel_version | 8u << 8 | 48u << 16;
        r[3] = cfg.intel_fixed | cfg.intel_width << 5;
    } else if (leaf == 0x40000000 && cfg.hypervisor) {
        r[0] = 0x40000001;
        r[1] = str4("KVMK");
        r[2] = str4("VMKV");
        r[3] = str4("M\0\0\0");
    } else if (leaf == 0x80000000) {
        r[0] = cfg.ext_max;
    } else if (leaf == 0x80000001) {
        r[2] = is_amd() && cfg.offer ? 1u << 23 : 0;
    } else if (leaf >= 0x80000002 && leaf <= 0x80000004) {
        const char *b = brand + 16 * (leaf - 0x80000002);
        for (int i = 0; i < 4; i++)
            r[i] = str4(b + 4 * i);
    } else if (leaf == 0x80000022) {
        /* Answered whatever ext_max says, so a test can check the backend
         * looks at ext_max first. */
        r[0] = is_amd() && cfg.v2 ? 1 : 0;
    }
}
