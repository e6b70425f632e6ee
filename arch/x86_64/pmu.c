/* arch/x86_64/pmu.c: the performance-counter sample source on x86-64.
 *
 * One counter per CPU, counting unhalted core cycles, armed about 1 ms below
 * overflow; the overflow arrives through the LAPIC's LVT PMC entry as an NMI.
 * Two interfaces count that quantity:
 *
 *   Intel: architectural perfmon v2+, fixed counter 1 (unhalted core cycles).
 *          Overflow is reported by IA32_PERF_GLOBAL_STATUS bit 33.
 *   AMD:   core-extension counter 0 (0xC0010200/1) with event 0x76, "CPU
 *          Clocks not Halted". Before PerfMonV2 there is no status register:
 *          the counter is armed below zero and an overflow is recognised by
 *          its bit 47 going clear. With PerfMonV2 the global status is used.
 *
 * CPUID is not trusted on its own (spec: "CPUID is not trusted on its own"):
 * a hypervisor may claim a counter and swallow every write to it. The probe
 * enables the counter without its interrupt and waits, bounded by about
 * 10 us of TSC, for it to move. The vendor is picked once, by the probe, as
 * one table of operations; everything after it goes through that table. */
#include "arch/x86_64/x86.h"
#include "hal/cpu.h"
#include "hal/pmu.h"
#include "kernel/once.h"
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

#define PROBE_BUDGET_US  10
#define PERIOD_US        1000

enum vendor { VENDOR_OTHER, VENDOR_INTEL, VENDOR_AMD };

/* What CPUID says (filled by pmu_detect, before the probe publishes). */
struct pmu_claim {
    enum vendor vendor;
    char vendor_id[13];
    unsigned intel_version, intel_fixed, intel_width;
    bool amd_perfctr_core, amd_v2;
};

/* One vendor's counter, chosen once by the probe. */
struct pmu_ops {
    const char *name;                 /* source name for the report */
    const char *what;                 /* "intel fixed-ctr1", for notes */
    uint64_t (*probe_start)(void);    /* count without INT; returns what stop restores */
    uint64_t (*probe_read)(void);
    void (*probe_stop)(uint64_t saved);
    void (*arm)(void);
    void (*disarm)(void);
    bool (*claim)(void);              /* NMI context */
};


static enum pmu_mode pmu_mode = PMU_MODE_AUTO;
static struct pmu_claim hw;           /* what CPUID says, as it is */
static struct pmu_claim eff;          /* what the probe acted on (pmu=assume) */
static const struct pmu_ops *cand;    /* counter the probe tried, or NULL */
static const struct pmu_ops *ops;     /* counter in use, or NULL: tick */
static bool probe_ran;                /* the counter was actually tried */
static uint64_t probe_delta, probe_us;
static uint64_t period;               /* cycles between overflows */
static uint64_t ctr_mask;             /* the counter's width */
static char note[128];
static int probe_state;               /* kernel/once.h: published after the probe */
static bool cpu_armed[MAX_CPUS];

static const struct pmu_ops intel_ops, amd_ops, amd_v2_ops;

/* ---- small helpers ---- */

/* Stop the compiler moving memory accesses across this point. The NMI that
 * reads cpu_armed runs on this same CPU, so program order is all it needs. */
static inline void barrier(void)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static unsigned this_cpu(void)
{
    unsigned c = cpu_index();
    return c < MAX_CPUS ? c : 0;
}

/* ---- detection ---- */

static void pmu_detect(struct pmu_claim *c)
{
    uint32_t r[4];

    *c = (struct pmu_claim){0};
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
static void pmu_assume(struct pmu_claim *c)
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
 * below 32 bits could not hold -period, so it is not a usable claim. */
static bool intel_claimed(const struct pmu_claim *c)
{
    return c->vendor == VENDOR_INTEL && c->intel_version >= 2 &&
           c->intel_fixed >= 2 && c->intel_width >= 32;
}

static const struct pmu_ops *pmu_choose(const struct pmu_claim *c)
{
    if (intel_claimed(c))
        return &intel_ops;
    if (c->vendor == VENDOR_AMD && c->amd_perfctr_core)
        return c->amd_v2 ? &amd_v2_ops : &amd_ops;
    return NULL;
}

/* ---- Intel: fixed counter 1 ---- */

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
    return rdmsr(MSR_IA32_FIXED_CTR1);
}

/* Only ctr1's bits were changed: clearing them restores everything else. */
static void intel_probe_stop(uint64_t unused)
{
    wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, rdmsr(MSR_IA32_PERF_GLOBAL_CTRL) & ~GLOBAL_FIXED_CTR1);
    wrmsr(MSR_IA32_FIXED_CTR_CTRL, rdmsr(MSR_IA32_FIXED_CTR_CTRL) & ~FIXED_CTR1_FIELD);
}

/* Intel may take only 32 bits, sign-extended, on a plain counter write;
 * -period with period < 2^31 is the same value either way. */
static void intel_reload(void)
{
    wrmsr(MSR_IA32_FIXED_CTR1, (0 - period) & ctr_mask);
}

static void intel_arm(void)
{
    wrmsr(MSR_IA32_DEBUGCTL, rdmsr(MSR_IA32_DEBUGCTL) & ~DEBUGCTL_FREEZE_PERFMON_ON_PMI);
    uint64_t global = rdmsr(MSR_IA32_PERF_GLOBAL_CTRL);
    wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, global & ~GLOBAL_FIXED_CTR1);
    intel_reload();
    uint64_t ctrl = rdmsr(MSR_IA32_FIXED_CTR_CTRL) & ~FIXED_CTR1_FIELD;
    wrmsr(MSR_IA32_FIXED_CTR_CTRL, ctrl | FIXED_CTR1_OS | FIXED_CTR1_USR | FIXED_CTR1_PMI);
    wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, GLOBAL_FIXED_CTR1);
    lapic_write_lvt_pmc(LVT_DELIVERY_NMI);
    /* Enabled last: everything it triggers is set up by now. */
    wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, global | GLOBAL_FIXED_CTR1);
}

/* The overflow status is deliberately left alone: a PMI already raised
 * must still find its status bit when the NMI is taken. */
static void intel_disarm(void)
{
    wrmsr(MSR_IA32_PERF_GLOBAL_CTRL, rdmsr(MSR_IA32_PERF_GLOBAL_CTRL) & ~GLOBAL_FIXED_CTR1);
    wrmsr(MSR_IA32_FIXED_CTR_CTRL, rdmsr(MSR_IA32_FIXED_CTR_CTRL) & ~FIXED_CTR1_FIELD);
}

static bool intel_claim(void)
{
    if (!(rdmsr(MSR_IA32_PERF_GLOBAL_STATUS) & GLOBAL_FIXED_CTR1))
        return false;
    intel_reload();
    wrmsr(MSR_IA32_PERF_GLOBAL_OVF_CTRL, GLOBAL_FIXED_CTR1);
    /* The LAPIC masks the LVT PMC entry when it delivers a PMI. */
    lapic_write_lvt_pmc(LVT_DELIVERY_NMI);
    return true;
}

/* ---- AMD: core-extension counter 0, event 0x76 ---- */

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
    return rdmsr(MSR_AMD64_PERF_CTR0);
}

/* Nothing else in Sonde owns counter 0: stopped is how it was found. */
static void amd_probe_stop(uint64_t unused)
{
    wrmsr(MSR_AMD64_PERF_CTL0, 0);
}

static void amd_v2_probe_stop(uint64_t gctl)
{
    amd_probe_stop(0);
    wrmsr(MSR_AMD64_PERF_CNTR_GLOBAL_CTL, gctl);
}

static void amd_reload(void)
{
    wrmsr(MSR_AMD64_PERF_CTR0, (0 - period) & ctr_mask);
}

static void amd_arm(void)
{
    lapic_write_lvt_pmc(LVT_DELIVERY_NMI);
    wrmsr(MSR_AMD64_PERF_CTL0, 0);
    amd_reload();
    wrmsr(MSR_AMD64_PERF_CTL0, AMD_EVENT_CYCLES_NOT_HALTED | AMD_CTL_USR | AMD_CTL_OS |
                                   AMD_CTL_INT | AMD_CTL_EN);
}

static void amd_v2_arm(void)
{
    amd_arm();
    wrmsr(MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR, AMD_GLOBAL_CTR0);
    wrmsr(MSR_AMD64_PERF_CNTR_GLOBAL_CTL,
          rdmsr(MSR_AMD64_PERF_CNTR_GLOBAL_CTL) | AMD_GLOBAL_CTR0);
}

/* The counter keeps whatever value it stopped at; that is why pmu_disarm
 * clears the armed flag only after this. */
static void amd_disarm(void)
{
    wrmsr(MSR_AMD64_PERF_CTL0, 0);
}

static void amd_v2_disarm(void)
{
    wrmsr(MSR_AMD64_PERF_CNTR_GLOBAL_CTL,
          rdmsr(MSR_AMD64_PERF_CNTR_GLOBAL_CTL) & ~AMD_GLOBAL_CTR0);
    amd_disarm();
}

/* Armed at -period, the counter wraps past zero to a small positive value:
 * bit 47 clear means it overflowed. */
static bool amd_claim(void)
{
    if (rdmsr(MSR_AMD64_PERF_CTR0) & (1ull << (AMD_CTR_WIDTH - 1)))
        return false;
    amd_reload();
    lapic_write_lvt_pmc(LVT_DELIVERY_NMI);
    return true;
}

static bool amd_v2_claim(void)
{
    if (!(rdmsr(MSR_AMD64_PERF_CNTR_GLOBAL_STATUS) & AMD_GLOBAL_CTR0))
        return false;
    amd_reload();
    wrmsr(MSR_AMD64_PERF_CNTR_GLOBAL_STATUS_CLR, AMD_GLOBAL_CTR0);
    lapic_write_lvt_pmc(LVT_DELIVERY_NMI);
    return true;
}

static const struct pmu_ops intel_ops = {
    "pmu/nmi intel fixed-ctr1", "intel fixed-ctr1",
    intel_probe_start, intel_probe_read, intel_probe_stop,
    intel_arm, intel_disarm, intel_claim,
};
static const struct pmu_ops amd_ops = {
    "pmu/nmi amd perfctr0", "amd perfctr0",
    amd_probe_start, amd_probe_read, amd_probe_stop,
    amd_arm, amd_disarm, amd_claim,
};
static const struct pmu_ops amd_v2_ops = {
    "pmu/nmi amd perfmonv2", "amd perfmonv2",
    amd_v2_probe_start, amd_probe_read, amd_v2_probe_stop,
    amd_v2_arm, amd_v2_disarm, amd_v2_claim,
};

/* ---- the probe ---- */

/* About 1 ms of core cycles; the TSC rate stands in for the core clock.
 * Kept below 2^31 so -period survives Intel's 32-bit sign-extended write. */
static uint64_t pmu_period(uint64_t per_us)
{
    uint64_t p = per_us * PERIOD_US;
    if (p >= (1ull << 31))
        p = (1ull << 31) - 1;
    return p;
}

/* Enable without the interrupt and wait, bounded by TSC time rather than a
 * count of PAUSEs (ten cycles on one part, 140 on the next). A live counter
 * has moved by the first read; only a swallowed one spends the budget.
 * Interrupts are off so both TSC reads and the counter are this CPU's. */
static bool pmu_try(const struct pmu_ops *o, uint64_t per_us)
{
    uint64_t budget = per_us * PROBE_BUDGET_US;
    unsigned long flags = irq_save();
    uint64_t saved = o->probe_start();
    uint64_t start = rdtsc();
    uint64_t v, now;
    bool moved;
    for (;;) {
        v = o->probe_read() & ctr_mask;
        now = rdtsc();
        moved = v != 0;
        if (moved || now - start >= budget)
            break;
        pause();
    }
    o->probe_stop(saved);
    irq_restore(flags);
    probe_delta = v;
    probe_us = (now - start) / per_us;
    return moved;
}

static void pmu_note_failure(void)
{
    const char *how = pmu_mode == PMU_MODE_ASSUME ? "assumed (pmu=assume)" : "claimed by cpuid";
    fmt_snprintf(note, sizeof note, "pmu: %s %s but did not count in %d us: tick only",
                 cand->what, how, PROBE_BUDGET_US);
}

static void pmu_probe_run(void)
{
    uint64_t per_us = cycles_per_us();
    if (per_us == 0)          /* not calibrated yet: assume 1 GHz */
        per_us = 1000;

    pmu_detect(&hw);
    eff = hw;
    if (pmu_mode == PMU_MODE_ASSUME)
        pmu_assume(&eff);
    cand = pmu_choose(&eff);
    period = pmu_period(per_us);
    ctr_mask = ~0ull;
    if (cand == &intel_ops && eff.intel_width < 64)
        ctr_mask = (1ull << eff.intel_width) - 1;
    else if (cand)
        ctr_mask = (1ull << AMD_CTR_WIDTH) - 1;

    if (!cand)
        return;
    if (pmu_mode == PMU_MODE_OFF) {
        fmt_snprintf(note, sizeof note, "pmu: %s not used (pmu=off): tick only", cand->what);
        return;
    }
    probe_ran = true;
    if (pmu_try(cand, per_us))
        ops = cand;
    else
        pmu_note_failure();
}

static bool pmu_probe_done(void)
{
    return once_done(&probe_state);
}

bool pmu_probe(void)
{
    /* Every CPU arms on the strength of this answer: once() publishes it
     * only after everything it depends on is written; a CPU that asks
     * while another probes waits the ~10 us out. */
    once(&probe_state, pmu_probe_run);
    return ops != NULL;
}

void pmu_set_mode(enum pmu_mode mode)
{
    if (mode == PMU_MODE_AUTO || mode == PMU_MODE_OFF || mode == PMU_MODE_ASSUME)
        pmu_mode = mode;
}

const char *pmu_source_name(void)
{
    if (!pmu_probe_done() || !ops)
        return "tick 100Hz";
    return ops->name;
}

const char *pmu_probe_note(void)
{
    if (!pmu_probe_done() || note[0] == 0)
        return NULL;
    return note;
}

/* ---- arming, per CPU ---- */

static const struct pmu_ops *pmu_ops_ready(void)
{
    return pmu_probe_done() ? ops : NULL;
}

void pmu_arm(void)
{
    const struct pmu_ops *o = pmu_ops_ready();
    if (!o)
        return;
    /* Flag first: the first overflow may come before the last wrmsr below
     * returns, and an NMI that finds the flag clear is not claimed. */
    __atomic_store_n(&cpu_armed[this_cpu()], true, __ATOMIC_RELEASE);
    barrier();
    o->arm();
}

void pmu_disarm(void)
{
    const struct pmu_ops *o = pmu_ops_ready();
    if (o)
        o->disarm();
    barrier();
    /* Flag last: an overflow in flight when the counter stops is still this
     * profiler's and must be claimed. Cleared earlier, that NMI would look
     * like a genuine one. And once cleared, nothing of the stopped counter
     * is believed: on AMD without PerfMonV2 the counter keeps the value it
     * stopped at, and its clear sign bit would turn a real NMI minutes
     * later into a "sample", swallowing it instead of panicking. */
    __atomic_store_n(&cpu_armed[this_cpu()], false, __ATOMIC_RELEASE);
}

bool pmu_armed(void)
{
    return __atomic_load_n(&cpu_armed[this_cpu()], __ATOMIC_ACQUIRE);
}

/* NMI context: no lock, no allocation, a bounded number of MSR accesses,
 * and only MSRs the probe has shown to exist. */
bool pmu_nmi_claim(void)
{
    if (!pmu_armed())
        return false;
    const struct pmu_ops *o = pmu_ops_ready();
    return o ? o->claim() : false;
}

/* ---- lscpu ---- */

static void describe_claim(struct printer *p, const char *label, const struct pmu_claim *c)
{
    if (intel_claimed(c))
        pr_printf(p, "%s perfmon v%u, %u fixed counters x %u bits\n", label,
                  c->intel_version, c->intel_fixed, c->intel_width);
    else if (c->vendor == VENDOR_AMD && c->amd_perfctr_core)
        pr_printf(p, "%s PerfCtrExtCore yes, PerfMonV2 %s\n", label, c->amd_v2 ? "yes" : "no");
    else if (c->vendor == VENDOR_INTEL && c->intel_version)
        pr_printf(p, "%s perfmon v%u, %u fixed counters x %u bits (not usable: needs v2 and fixed counter 1)\n",
                  label, c->intel_version, c->intel_fixed, c->intel_width);
    else
        pr_printf(p, "%s no performance counter claimed\n", label);
}

void pmu_describe(struct printer *p)
{
    pmu_probe();              /* cached: lscpu always shows the outcome */
    describe_claim(p, "pmu claims:  ", &hw);
    if (pmu_mode == PMU_MODE_ASSUME)
        describe_claim(p, "pmu=assume:  acting as if", &eff);
    else if (pmu_mode == PMU_MODE_OFF)
        pr_puts(p, "pmu=off:     counter never used\n");
    if (probe_ran && ops)
        pr_printf(p, "probe:        counter moved by %llu in %llu us\n",
                  (unsigned long long)probe_delta, (unsigned long long)probe_us);
    else if (probe_ran)
        pr_printf(p, "probe:        did not count in %d us\n", PROBE_BUDGET_US);
    else if (cand)
        pr_puts(p, "probe:        not run (pmu=off)\n");
    else
        pr_puts(p, "probe:        not run (no counter claimed)\n");
    pr_printf(p, "profile source: %s\n", pmu_source_name());
}

#ifdef SONDE_HOST_TEST
/* Each host test starts from a fresh boot. */
void pmu_test_reset(void)
{
    pmu_mode = PMU_MODE_AUTO;
    hw = eff = (struct pmu_claim){0};
    cand = ops = NULL;
    probe_ran = false;
    probe_delta = probe_us = period = ctr_mask = 0;
    note[0] = 0;
    probe_state = ONCE_NOT_RUN;
    for (unsigned i = 0; i < MAX_CPUS; i++)
        cpu_armed[i] = false;
}
#endif
