/* arch/x86_64/pmu.c: the x86-64 backends of the PMU core (kernel/pmu.c,
 * hal/pmu.h): one counter per CPU counting unhalted core cycles, armed
 * about 1 ms below overflow; the overflow arrives through the LAPIC's LVT
 * PMC entry as an NMI. Three tables count that quantity:
 *
 *   Intel: architectural perfmon v2+, fixed counter 1 (unhalted core cycles).
 *          Overflow is reported by IA32_PERF_GLOBAL_STATUS bit 33.
 *   AMD:   core-extension counter 0 (0xC0010200/1) with event 0x76, "CPU
 *          Clocks not Halted". Before PerfMonV2 there is no status register:
 *          the counter is armed below zero and an overflow is recognised by
 *          its bit 47 going clear. With PerfMonV2 the global status is used.
 *
 * CPUID says which of them the part offers; the core's probe then makes
 * the counter prove that it counts (spec: "CPUID is not trusted on its
 * own"), and everything after goes through the table it picked. */
#include "arch/x86_64/x86.h"
#include "hal/cpu.h"
#include "hal/pmu.h"
#include "lib/printf.h"
#include "lib/string.h"

/* Intel (SDM Vol. 3B ch. 18, Vol. 4 MSR list). */
#define MSR_IA32_DEBUGCTL            0x1D9
#define  DEBUGCTL_FREEZE_PERFMON_ON_PMI (1ull << 12)
#define MSR_IA32_FIXED_CTR1          0x30A
#define MSR_IA32_FIXED_CTR_CTRL      0x38D
#define  FIXED_CTR1_FIELD            (0xFull << 4)   /* ctr1's 4-bit control */
#define  FIXED_CTR1_OS               (1ull << 4)
#define  FIXED_CTR1_USR              (1ull << 5)
#define  FIXED_CTR1_PMI              (1ull << 7)
#define MSR_IA32_PERF_GLOBAL_STATUS  0x38E
#define MSR_IA32_PERF_GLOBAL_CTRL    0x38F
#define MSR_IA32_PERF_GLOBAL_OVF_CTRL 0x390
#define  GLOBAL_FIXED_CTR1           (1ull << 33)    /* enable / status / clear */

/* AMD (APM Vol. 2 ch. 13.2). Only the core extension at 0xC0010200: the
 * legacy counters at 0xC0010000-0xC0010007 have no CPUID bit, and a guest
 * whose host turned the virtual PMU off takes a #GP on the first access. */
#define MSR_AMD64_PERF_CTL0          0xC0010200
#define MSR_AMD64_PERF_CTR0          0xC0010201
#define  AMD_EVENT_CYCLES_NOT_HALTED 0x76ull
#define  AMD_CTL_USR                 (1ull << 16)
#define  AMD_CTL_OS                  (1ull << 17)
#define  AMD_CTL_INT                 (1ull << 20)
#define  AMD_CTL_EN                  (1ull << 22)
#define  AMD_CTR_WIDTH               48
#define MSR_AMD64_PERF_CNTR_GLOBAL_STATUS     0xC0000300
#define MSR_AMD64_PERF_CNTR_GLOBAL_CTL        0xC0000301
#define MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR 0xC0000302
#define  AMD_GLOBAL_CTR0             (1ull << 0)

#define CPUID_AMD_PERFCTR_CORE       (1u << 23)    /* 8000_0001h ECX */
#define CPUID_AMD_PERFMON_V2         (1u << 0)     /* 8000_0022h EAX */

enum vendor { VENDOR_OTHER, VENDOR_INTEL, VENDOR_AMD };

/* What CPUID says (filled by pmu_detect at each offer, in the probe). */
struct cpuid_offer {
    enum vendor vendor;
    char vendor_id[13];
    unsigned intel_version, intel_fixed, intel_width;
    bool amd_perfctr_core, amd_v2;
};

static struct cpuid_offer hw;         /* what CPUID says, as it is */
static struct cpuid_offer eff;        /* what the probe acted on (pmu=assume) */
static uint64_t ctr_mask;             /* the offered counter's width */

static const struct pmu_ops intel_ops, amd_ops, amd_v2_ops;

/* ---- detection ---- */

static void pmu_detect(struct cpuid_offer *c)
{
    uint32_t r[4];

    *c = (struct cpuid_offer){0};
    cpuid(0, 0, r);
    uint32_t max_basic = r[0];
    cpuid_vendor(c->vendor_id);
    if (strcmp(c->vendor_id, "GenuineIntel") == 0)
        c->vendor = VENDOR_INTEL;
    else if (strcmp(c->vendor_id, "AuthenticAMD") == 0 || strcmp(c->vendor_id, "HygonGenuine") == 0)
        c->vendor = VENDOR_AMD;

    if (c->vendor == VENDOR_INTEL && max_basic >= 0xA) {
        cpuid(0xA, 0, r);
        c->intel_version = r[0] & 0xff;
        c->intel_fixed = r[3] & 0x1f;
        c->intel_width = (r[3] >> 5) & 0xff;
    }
    if (c->vendor == VENDOR_AMD) {
        cpuid(0x80000000, 0, r);
        uint32_t max_ext = r[0];
        if (max_ext >= 0x80000001) {
            cpuid(0x80000001, 0, r);
            c->amd_perfctr_core = (r[2] & CPUID_AMD_PERFCTR_CORE) != 0;
        }
        if (max_ext >= 0x80000022) {
            cpuid(0x80000022, 0, r);
            c->amd_v2 = (r[0] & CPUID_AMD_PERFMON_V2) != 0;
        }
    }
}

/* pmu=assume: what CPUID would have said if this vendor's counter existed. */
static void pmu_assume(struct cpuid_offer *c)
{
    if (c->vendor == VENDOR_INTEL) {
        c->intel_version = 2;
        c->intel_fixed = 3;
        c->intel_width = 48;
    } else if (c->vendor == VENDOR_AMD) {
        c->amd_perfctr_core = true;
        c->amd_v2 = false;
    }
}

/* Fixed counter 1 needs version 2 and at least 2 fixed counters; a width
 * below 32 bits could not hold -period, so it is not a usable offer. */
static bool intel_offered(const struct cpuid_offer *c)
{
    return c->vendor == VENDOR_INTEL && c->intel_version >= 2 &&
           c->intel_fixed >= 2 && c->intel_width >= 32;
}

/* CPUID afresh at each offer: the core asks the tables once each, in the
 * probe, which runs once per boot. */
static const struct pmu_ops *pmu_choose(bool assume)
{
    pmu_detect(&hw);
    eff = hw;
    if (assume)
        pmu_assume(&eff);
    if (intel_offered(&eff))
        return &intel_ops;
    if (eff.vendor == VENDOR_AMD && eff.amd_perfctr_core)
        return eff.amd_v2 ? &amd_v2_ops : &amd_ops;
    return NULL;
}

/* Under pmu=assume the offer is the assumption even where CPUID agrees:
 * eff, not hw, is what the probe acts on, and the note names it. */
static enum pmu_offer x86_offer(const struct pmu_ops *self, bool assume)
{
    if (pmu_choose(assume) != self)
        return PMU_OFFER_NONE;
    if (self != &intel_ops)
        ctr_mask = (1ull << AMD_CTR_WIDTH) - 1;
    else if (eff.intel_width < 64)
        ctr_mask = (1ull << eff.intel_width) - 1;
    else
        ctr_mask = ~0ull;
    return assume ? PMU_OFFER_ASSUMED : PMU_OFFER_HW;
}

/* ---- Intel: fixed counter 1 ---- */

static enum pmu_offer intel_offer(bool assume)
{
    return x86_offer(&intel_ops, assume);
}

static uint64_t intel_probe_start(void)
{
    /* Set, it stops the counters dead at the first overflow; firmware and
     * hypervisors do set it. Left clear afterwards on purpose. */
    wrmsr(MSR_IA32_DEBUGCTL, rdmsr(MSR_IA32_DEBUGCTL) & ~DEBUGCTL_FREEZE_PERFMON_ON_PMI);
    uint64_t global = rdmsr(MSR_IA32_PERF_GLOBAL_CTRL);
    wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, global & ~GLOBAL_FIXED_CTR1);
    uint64_t ctrl = rdmsr(MSR_IA32_FIXED_CTR_CTRL) & ~FIXED_CTR1_FIELD;
    wrmsr(MSR_IA32_FIXED_CTR_CTRL, ctrl | FIXED_CTR1_OS | FIXED_CTR1_USR);   /* no PMI */
    wrmsr(MSR_IA32_FIXED_CTR1, 0);
    wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, global | GLOBAL_FIXED_CTR1);
    return 0;
}

static uint64_t intel_probe_read(void)
{
    return rdmsr(MSR_IA32_FIXED_CTR1) & ctr_mask;
}

/* Only ctr1's bits were ever changed: clearing them restores everything
 * else. The overflow status is deliberately left alone: a PMI already
 * raised must still find its status bit when the NMI is taken. */
static void intel_disarm(void)
{
    wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, rdmsr(MSR_IA32_PERF_GLOBAL_CTRL) & ~GLOBAL_FIXED_CTR1);
    wrmsr(MSR_IA32_FIXED_CTR_CTRL, rdmsr(MSR_IA32_FIXED_CTR_CTRL) & ~FIXED_CTR1_FIELD);
}

static void intel_probe_stop(uint64_t unused)
{
    intel_disarm();
}

/* Intel may take only 32 bits, sign-extended, on a plain counter write;
 * -period with period < 2^31 (po_max_period) is the same value either way. */
static void intel_reload(uint64_t period)
{
    wrmsr(MSR_IA32_FIXED_CTR1, (0 - period) & ctr_mask);
}

static void intel_arm(uint64_t period)
{
    wrmsr(MSR_IA32_DEBUGCTL, rdmsr(MSR_IA32_DEBUGCTL) & ~DEBUGCTL_FREEZE_PERFMON_ON_PMI);
    uint64_t global = rdmsr(MSR_IA32_PERF_GLOBAL_CTRL);
    wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, global & ~GLOBAL_FIXED_CTR1);
    intel_reload(period);
    uint64_t ctrl = rdmsr(MSR_IA32_FIXED_CTR_CTRL) & ~FIXED_CTR1_FIELD;
    wrmsr(MSR_IA32_FIXED_CTR_CTRL, ctrl | FIXED_CTR1_OS | FIXED_CTR1_USR | FIXED_CTR1_PMI);
    wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, GLOBAL_FIXED_CTR1);
    lapic_write_lvt_pmc(LVT_DELIVERY_NMI);
    /* Enabled last: everything it triggers is set up by now. */
    wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, global | GLOBAL_FIXED_CTR1);
}

static bool intel_nmi_ack(uint64_t period)
{
    if (!(rdmsr(MSR_IA32_PERF_GLOBAL_STATUS) & GLOBAL_FIXED_CTR1))
        return false;
    if (period)
        intel_reload(period);
    wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, GLOBAL_FIXED_CTR1);
    /* The LAPIC masks the LVT PMC entry when it delivers a PMI. */
    lapic_write_lvt_pmc(LVT_DELIVERY_NMI);
    return true;
}

/* ---- AMD: core-extension counter 0, event 0x76 ---- */

static enum pmu_offer amd_offer(bool assume)
{
    return x86_offer(&amd_ops, assume);
}

static enum pmu_offer amd_v2_offer(bool assume)
{
    return x86_offer(&amd_v2_ops, assume);
}

static uint64_t amd_probe_start(void)
{
    wrmsr(MSR_AMD64_PERF_CTL0, 0);
    wrmsr(MSR_AMD64_PERF_CTR0, 0);
    wrmsr(MSR_AMD64_PERF_CTL0, AMD_EVENT_CYCLES_NOT_HALTED | AMD_CTL_USR | AMD_CTL_OS | AMD_CTL_EN);
    return 0;
}

/* Under PerfMonV2 a counter counts only while its GlobalCtl bit is set too. */
static uint64_t amd_v2_probe_start(void)
{
    uint64_t gctl = rdmsr(MSR_AMD64_PERF_CNTR_GLOBAL_CTL);
    amd_probe_start();
    wrmsr(MSR_AMD64_PERF_CNTR_GLOBAL_CTL, gctl | AMD_GLOBAL_CTR0);
    return gctl;
}

static uint64_t amd_probe_read(void)
{
    return rdmsr(MSR_AMD64_PERF_CTR0) & ctr_mask;
}

/* Nothing else in Sonde owns counter 0: stopped is how it was found. The
 * counter keeps whatever value it stopped at; that is why the core
 * clears the armed flag only after this. */
static void amd_disarm(void)
{
    wrmsr(MSR_AMD64_PERF_CTL0, 0);
}

static void amd_probe_stop(uint64_t unused)
{
    amd_disarm();
}

static void amd_v2_probe_stop(uint64_t gctl)
{
    amd_disarm();
    wrmsr(MSR_AMD64_PERF_CNTR_GLOBAL_CTL, gctl);
}

static void amd_reload(uint64_t period)
{
    wrmsr(MSR_AMD64_PERF_CTR0, (0 - period) & ctr_mask);
}

static void amd_arm(uint64_t period)
{
    lapic_write_lvt_pmc(LVT_DELIVERY_NMI);
    wrmsr(MSR_AMD64_PERF_CTL0, 0);
    amd_reload(period);
    wrmsr(MSR_AMD64_PERF_CTL0, AMD_EVENT_CYCLES_NOT_HALTED | AMD_CTL_USR | AMD_CTL_OS |
                                   AMD_CTL_INT | AMD_CTL_EN);
}

static void amd_v2_arm(uint64_t period)
{
    amd_arm(period);
    wrmsr(MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR, AMD_GLOBAL_CTR0);
    wrmsr(MSR_AMD64_PERF_CNTR_GLOBAL_CTL,
          rdmsr(MSR_AMD64_PERF_CNTR_GLOBAL_CTL) | AMD_GLOBAL_CTR0);
}

static void amd_v2_disarm(void)
{
    wrmsr(MSR_AMD64_PERF_CNTR_GLOBAL_CTL,
          rdmsr(MSR_AMD64_PERF_CNTR_GLOBAL_CTL) & ~AMD_GLOBAL_CTR0);
    amd_disarm();
}

/* Armed at -period, the counter wraps past zero to a small positive value:
 * bit 47 clear means it overflowed. */
static bool amd_nmi_ack(uint64_t period)
{
    if (rdmsr(MSR_AMD64_PERF_CTR0) & (1ull << (AMD_CTR_WIDTH - 1)))
        return false;
    if (period)
        amd_reload(period);
    lapic_write_lvt_pmc(LVT_DELIVERY_NMI);
    return true;
}

static bool amd_v2_nmi_ack(uint64_t period)
{
    if (!(rdmsr(MSR_AMD64_PERF_CNTR_GLOBAL_STATUS) & AMD_GLOBAL_CTR0))
        return false;
    if (period)
        amd_reload(period);
    wrmsr(MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR, AMD_GLOBAL_CTR0);
    lapic_write_lvt_pmc(LVT_DELIVERY_NMI);
    return true;
}

/* The TSC rate stands in for the core clock (po_measure_rate false); the
 * period stays below 2^31 so -period survives Intel's 32-bit
 * sign-extended counter write, and AMD's 48-bit counter holds it too.
 * An x86 counter's NMI is shared with every other NMI source: once
 * disarmed, nothing it still says is believed. */
#define X86_PMU_COMMON                                                      \
    .po_counter = "counter",                                                \
    .po_offered_by = "cpuid",                                               \
    .po_measure_rate = false,                                               \
    .po_claims_when_disarmed = false,                                       \
    .po_max_period = (1ull << 31) - 1

static const struct pmu_ops intel_ops = {
    .po_name = "pmu/nmi intel fixed-ctr1", .po_what = "intel fixed-ctr1", X86_PMU_COMMON,
    .po_offer = intel_offer, .po_probe_start = intel_probe_start,
    .po_probe_read = intel_probe_read, .po_probe_stop = intel_probe_stop,
    .po_arm = intel_arm, .po_disarm = intel_disarm,
    .po_nmi_ack = intel_nmi_ack,
};
static const struct pmu_ops amd_ops = {
    .po_name = "pmu/nmi amd perfctr0", .po_what = "amd perfctr0", X86_PMU_COMMON,
    .po_offer = amd_offer, .po_probe_start = amd_probe_start,
    .po_probe_read = amd_probe_read, .po_probe_stop = amd_probe_stop,
    .po_arm = amd_arm, .po_disarm = amd_disarm,
    .po_nmi_ack = amd_nmi_ack,
};
static const struct pmu_ops amd_v2_ops = {
    .po_name = "pmu/nmi amd perfmonv2", .po_what = "amd perfmonv2", X86_PMU_COMMON,
    .po_offer = amd_v2_offer, .po_probe_start = amd_v2_probe_start,
    .po_probe_read = amd_probe_read, .po_probe_stop = amd_v2_probe_stop,
    .po_arm = amd_v2_arm, .po_disarm = amd_v2_disarm,
    .po_nmi_ack = amd_v2_nmi_ack,
};

/* ---- lscpu ---- */

static void describe_offer(struct printer *p, const struct cpuid_offer *c)
{
    if (intel_offered(c))
        pr_printf(p, "perfmon v%u, %u fixed counters x %u bits\n",
                  c->intel_version, c->intel_fixed, c->intel_width);
    else if (c->vendor == VENDOR_AMD && c->amd_perfctr_core)
        pr_printf(p, "PerfCtrExtCore yes, PerfMonV2 %s\n", c->amd_v2 ? "yes" : "no");
    else if (c->vendor == VENDOR_INTEL && c->intel_version)
        pr_printf(p, "perfmon v%u, %u fixed counters x %u bits (not usable: needs v2 and fixed counter 1)\n",
                  c->intel_version, c->intel_fixed, c->intel_width);
    else
        pr_puts(p, "no performance counter claimed\n");
}

/* hw and eff were filled by the probe's offers, which the core runs
 * before it describes. */
static void x86_pmu_describe(struct printer *p, enum pmu_describe_at at)
{
    if (at == PMU_AT_OFFER)
        describe_offer(p, &hw);
    else if (at == PMU_AT_ASSUMED)
        describe_offer(p, &eff);
}

/* pmu_choose names at most one of these; each offer asks whether it is
 * the one. */
static const struct pmu_ops *const x86_pmu_tables[] = { &intel_ops, &amd_v2_ops, &amd_ops, NULL };

const struct pmu_backends pmu_backends = {
    .pb_ops = x86_pmu_tables,
    .pb_family = "counter",
    .pb_describe = x86_pmu_describe,
};
