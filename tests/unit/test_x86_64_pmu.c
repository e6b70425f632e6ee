// LINK: kernel/pmu.c arch/x86_64/pmu.c arch/x86_64/cpuinfo.c tests/unit/sim_pmu.c lib/printf.c
/* tests/unit/test_x86_64_pmu.c: the x86 backends (arch/x86_64/pmu.c) through the PMU core
 * (kernel/pmu.c), against the simulated CPU. */
#include "test.h"
#include "fake_hal.h"
#include "sim_pmu.h"
#include "arch/x86_64/x86.h"
#include "hal/cpu.h"
#include "hal/pmu.h"
#include "lib/printf.h"

#define DEBUGCTL      0x1D9
#define FIXED_CTR1    0x30A
#define FIXED_CTRL    0x38D
#define GLOBAL_STATUS 0x38E
#define GLOBAL_CTRL   0x38F
#define GLOBAL_OVF    0x390
#define CTR1_BIT      (1ull << 33)
#define AMD_CTL0      0xC0010200
#define AMD_CTR0      0xC0010201
#define AMD_GSTATUS   0xC0000300
#define AMD_GCTL      0xC0000301
#define AMD_GCLR      0xC0000302
#define MASK48        ((1ull << 48) - 1)
#define LVT_NMI       (4u << 8)

/* fake_cycles_per_us = 1000: period 1 000 000 cycles, probe budget 10 000. */
#define PERIOD        1000000ull
#define BUDGET        10000ull

static void boot(struct sim_config c, enum pmu_mode mode)
{
    pmu_test_reset();
    sim_init(&c);
    fake_cpu = 0;
    fake_ncpus = 4;
    fake_cycles_per_us = 1000;
    fake_irq_depth = 0;
    pmu_set_mode(mode);
}

static struct sim_config intel(void) { return (struct sim_config){.vendor = SIM_INTEL, .offer = true}; }
static struct sim_config amd(void) { return (struct sim_config){.vendor = SIM_AMD, .offer = true}; }
static struct sim_config amd_v2(void) { return (struct sim_config){.vendor = SIM_AMD, .offer = true, .v2 = true}; }

/* The core's arm and disarm run from the tick, interrupts off. */
static void arm(void) { fake_irqs_off(pmu_arm); }
static void disarm(void) { fake_irqs_off(pmu_disarm); }

static void describe(char *buf, size_t cap)
{
    struct buf_printer bp;
    buf_printer_init(&bp, buf, cap);
    cpu_describe(&bp.pr);                       /* lscpu's order */
    pmu_describe(&bp.pr);
}

/* ---- Intel ---- */

TEST(intel_probe_passes)
{
    boot(intel(), PMU_MODE_AUTO);
    uint64_t t0 = sim_tsc;
    CHECK(pmu_probe());
    CHECK_STR(pmu_source_name(), "pmu/nmi intel fixed-ctr1");
    CHECK(pmu_probe_note() == NULL);
    CHECK_EQ(sim_bad_access, 0);
    CHECK(sim_tsc - t0 < BUDGET / 10);          /* a live counter moves at once */
    CHECK(sim_nlog > 0);
    for (unsigned i = 0; i < sim_nlog; i++)
        CHECK(sim_log[i].irq_depth > 0);        /* interrupts off throughout */
    CHECK_EQ(fake_irq_depth, 0);                /* and restored */
    CHECK_EQ(sim_cpus[0].global_ctrl & CTR1_BIT, 0);   /* stopped afterwards */
    CHECK_EQ(sim_cpus[0].fixed_ctrl & 0xF0, 0);
    CHECK_EQ(sim_cpus[0].pmis, 0);              /* probed without PMI */
    CHECK(!pmu_armed());
}

TEST(intel_probe_clears_freeze_before_counting)
{
    struct sim_config c = intel();
    c.freeze_set = true;
    boot(c, PMU_MODE_AUTO);
    CHECK(pmu_probe());
    int clr = -1;
    for (unsigned i = 0; i < sim_nlog; i++)
        if (sim_log[i].msr == DEBUGCTL && !(sim_log[i].val & (1ull << 12))) {
            clr = (int)i;
            break;
        }
    int en = -1;
    for (unsigned i = 0; i < sim_nlog; i++)
        if (sim_log[i].msr == GLOBAL_CTRL && (sim_log[i].val & CTR1_BIT)) {
            en = (int)i;
            break;
        }
    CHECK(clr >= 0);
    CHECK(en >= 0);
    CHECK(clr < en);
    CHECK_EQ(sim_cpus[0].debugctl & (1ull << 12), 0);
}

TEST(intel_arm_order_and_values)
{
    boot(intel(), PMU_MODE_AUTO);
    CHECK(pmu_probe());
    sim_log_clear();
    arm();
    CHECK(pmu_armed());
    CHECK(sim_nlog > 0);
    for (unsigned i = 0; i < sim_nlog; i++)
        CHECK(sim_log[i].armed);                /* flag set before the first write */
    int en = -1;
    for (unsigned i = 0; i < sim_nlog; i++)
        if (sim_log[i].msr == GLOBAL_CTRL && (sim_log[i].val & CTR1_BIT))
            en = (int)i;
    CHECK_EQ(en, (int)sim_nlog - 1);            /* enabled last */
    int lvt = sim_log_find(SIM_LOG_LVT, 0);
    int ovf = sim_log_find(GLOBAL_OVF, 0);
    int ctr = sim_log_find(FIXED_CTR1, 0);
    CHECK(lvt >= 0 && lvt < en);
    CHECK(ovf >= 0 && ovf < en);
    CHECK(ctr >= 0 && ctr < en);
    CHECK_EQ(sim_log[lvt].val, LVT_NMI);
    CHECK_EQ(sim_log[ovf].val, CTR1_BIT);
    CHECK_EQ(sim_log[ctr].val & 0xffffffffull, (0 - PERIOD) & 0xffffffffull);
    CHECK_EQ(sim_cpus[0].fixed_ctrl & 0xF0, 0xB0);      /* OS|USR|PMI, no AnyThread */
    CHECK(sim_cpus[0].global_ctrl & CTR1_BIT);
    CHECK_EQ(sim_cpus[0].lvt, LVT_NMI);
    /* About 1 ms from overflow: the counter sits just above -period. */
    CHECK(sim_cpus[0].fixed_ctr1 >= ((0 - PERIOD) & MASK48));
    CHECK(sim_cpus[0].fixed_ctr1 < ((0 - PERIOD / 2) & MASK48));
}

TEST(intel_arm_keeps_other_fixed_fields)
{
    boot(intel(), PMU_MODE_AUTO);
    CHECK(pmu_probe());
    sim_cpus[0].fixed_ctrl = 0x303;             /* ctr0 and ctr2 owned elsewhere */
    arm();
    CHECK_EQ(sim_cpus[0].fixed_ctrl, 0x3B3);
    disarm();
    CHECK_EQ(sim_cpus[0].fixed_ctrl, 0x303);
}

TEST(intel_overflow_claimed_and_rearmed)
{
    boot(intel(), PMU_MODE_AUTO);
    CHECK(pmu_probe());
    arm();
    sim_count(PERIOD);
    CHECK(sim_cpus[0].global_status & CTR1_BIT);
    CHECK_EQ(sim_cpus[0].pmis, 1);
    CHECK(sim_cpus[0].lvt & (1u << 16));        /* delivery masked it */
    CHECK(pmu_nmi_claim());
    CHECK_EQ(sim_cpus[0].fixed_ctr1, (0 - PERIOD) & MASK48);
    CHECK_EQ(sim_cpus[0].global_status & CTR1_BIT, 0);
    CHECK_EQ(sim_cpus[0].lvt, LVT_NMI);
    /* and it keeps going: the next period overflows again */
    sim_count(PERIOD);
    CHECK_EQ(sim_cpus[0].pmis, 2);
    CHECK(pmu_nmi_claim());
    CHECK_EQ(sim_bad_access, 0);
}

TEST(intel_genuine_nmi_not_claimed)
{
    boot(intel(), PMU_MODE_AUTO);
    CHECK(pmu_probe());
    arm();
    sim_log_clear();
    CHECK(!pmu_nmi_claim());
    CHECK_EQ(sim_nlog, 0);                      /* nothing acknowledged or rewritten */
}

TEST(not_claimed_when_not_armed)
{
    boot(intel(), PMU_MODE_AUTO);
    CHECK(pmu_probe());
    sim_cpus[0].global_status = CTR1_BIT;
    CHECK(!pmu_nmi_claim());
    CHECK(sim_cpus[0].global_status & CTR1_BIT);
    /* armed on CPU 1 says nothing about CPU 0 */
    fake_cpu = 1;
    arm();
    CHECK(pmu_armed());
    fake_cpu = 0;
    CHECK(!pmu_armed());
    CHECK(!pmu_nmi_claim());
    fake_cpu = 1;
    sim_count(PERIOD);
    CHECK(pmu_nmi_claim());
    fake_cpu = 0;
}

/* An NMI taken in the middle of pmu_disarm, right after the write that
 * stops the counter: armed is still set, so the overflow is claimed. */
static int stale_claims, stale_hook_calls;
static void claim_on_first_write(uint32_t msr, uint64_t val)
{
    if (stale_hook_calls++ == 0)
        stale_claims += pmu_nmi_claim();
}

TEST(intel_stale_overflow_at_disarm)
{
    boot(intel(), PMU_MODE_AUTO);
    CHECK(pmu_probe());
    arm();
    sim_count(PERIOD);                          /* overflow raised, NMI not yet taken */
    stale_claims = stale_hook_calls = 0;
    sim_write_hook = claim_on_first_write;
    disarm();
    sim_write_hook = NULL;
    CHECK_EQ(stale_claims, 1);
    CHECK(!pmu_armed());
    CHECK_EQ(sim_cpus[0].global_ctrl & CTR1_BIT, 0);
    /* after disarm nothing is claimed, even a status bit left behind */
    sim_cpus[0].global_status = CTR1_BIT;
    CHECK(!pmu_nmi_claim());
}

TEST(intel_freeze_on_pmi_modelled)
{
    /* The sim itself: with FREEZE left set the counter stops at overflow. */
    boot(intel(), PMU_MODE_AUTO);
    wrmsr(DEBUGCTL, 1ull << 12);
    wrmsr(FIXED_CTRL, 0xB0);
    wrmsr(FIXED_CTR1, (uint64_t)-10);
    wrmsr(GLOBAL_CTRL, CTR1_BIT);
    sim_count(20);
    CHECK(sim_cpus[0].frozen);
    uint64_t v = sim_cpus[0].fixed_ctr1;
    sim_count(1000);
    CHECK_EQ(sim_cpus[0].fixed_ctr1, v);

    /* The backend: firmware left FREEZE set; arming clears it, so the
     * counter still runs after the first PMI. */
    struct sim_config c = intel();
    c.freeze_set = true;
    boot(c, PMU_MODE_AUTO);
    CHECK(pmu_probe());
    sim_cpus[0].debugctl |= 1ull << 12;         /* set again after the probe */
    arm();
    sim_count(PERIOD);
    CHECK(!sim_cpus[0].frozen);
    CHECK(pmu_nmi_claim());
    sim_count(PERIOD);
    CHECK_EQ(sim_cpus[0].pmis, 2);
}

TEST(intel_needs_v2_and_fixed_ctr1)
{
    struct sim_config c = intel();
    c.intel_version = 1;
    boot(c, PMU_MODE_AUTO);
    CHECK(!pmu_probe());
    CHECK_STR(pmu_source_name(), "tick 100Hz");
    CHECK_EQ(sim_wrmsr_calls, 0);
    c = intel();
    c.intel_fixed = 1;
    boot(c, PMU_MODE_AUTO);
    CHECK(!pmu_probe());
    CHECK_EQ(sim_wrmsr_calls, 0);
}

TEST(intel_width_and_period_clamp)
{
    struct sim_config c = intel();
    c.intel_width = 40;
    boot(c, PMU_MODE_AUTO);
    fake_cycles_per_us = 5000000;               /* absurd clock: period clamps below 2^31 */
    CHECK(pmu_probe());
    sim_log_clear();
    arm();
    int ctr = sim_log_find(FIXED_CTR1, 0);
    CHECK(ctr >= 0);
    uint64_t p = ((1ull << 31) - 1) / 5 * 4;      /* room for the jitter's +1/4 */
    CHECK_EQ(sim_log[ctr].val, (0 - p) & ((1ull << 40) - 1));
    /* and the counter took it exactly despite the 32-bit sign-extended write */
    sim_count_step = 0;                         /* hold the counter still */
    sim_cpus[0].fixed_ctr1 = 0;
    pmu_nmi_claim();                            /* not overflowed: no rewrite */
    CHECK_EQ(sim_cpus[0].fixed_ctr1, 0);
    sim_cpus[0].global_status = CTR1_BIT;
    CHECK(pmu_nmi_claim());
    CHECK_EQ(sim_cpus[0].fixed_ctr1, (0 - p) & ((1ull << 40) - 1));
}

/* ---- AMD ---- */

static unsigned log_count_global(void)
{
    return sim_log_count(AMD_GSTATUS) + sim_log_count(AMD_GCTL) + sim_log_count(AMD_GCLR);
}

TEST(amd_perfctr0_probe_arm_claim)
{
    boot(amd(), PMU_MODE_AUTO);
    CHECK(pmu_probe());
    CHECK_STR(pmu_source_name(), "pmu/nmi amd perfctr0");
    sim_log_clear();
    arm();
    CHECK(sim_log[0].armed);
    CHECK_EQ(sim_cpus[0].amd_ctl0, 0x76 | 1ull << 16 | 1ull << 17 | 1ull << 20 | 1ull << 22);
    CHECK_EQ(sim_cpus[0].lvt, LVT_NMI);
    int ctl = -1;
    for (unsigned i = 0; i < sim_nlog; i++)
        if (sim_log[i].msr == AMD_CTL0 && (sim_log[i].val & (1ull << 22)))
            ctl = (int)i;
    int ctr = sim_log_find(AMD_CTR0, 0);
    CHECK(ctr >= 0 && ctr < ctl);               /* counter loaded before enabling */
    CHECK_EQ(sim_log[ctr].val, (0 - PERIOD) & MASK48);
    CHECK(!pmu_nmi_claim());                    /* still below zero: not ours */
    sim_count(PERIOD);
    CHECK(!(sim_cpus[0].amd_ctr0 >> 47 & 1));   /* wrapped to small positive */
    CHECK(pmu_nmi_claim());
    CHECK_EQ(sim_cpus[0].amd_ctr0, (0 - PERIOD) & MASK48);
    CHECK(!pmu_nmi_claim());
    disarm();
    CHECK_EQ(sim_legacy_access, 0);
    CHECK_EQ(sim_bad_access, 0);                /* no global MSRs without PerfMonV2 */
    CHECK_EQ(log_count_global(), 0);
}

TEST(amd_stale_sign_bit_after_disarm)
{
    boot(amd(), PMU_MODE_AUTO);
    CHECK(pmu_probe());
    arm();
    sim_count(PERIOD);                          /* overflow in flight */
    stale_claims = stale_hook_calls = 0;
    sim_write_hook = claim_on_first_write;      /* NMI right after the counter stops */
    disarm();
    sim_write_hook = NULL;
    CHECK_EQ(stale_claims, 1);
    /* The stopped counter keeps a clear sign bit for ever; minutes later a
     * genuine NMI must not be taken for a sample. */
    sim_cpus[0].amd_ctr0 = 5;
    sim_count(PERIOD);
    CHECK_EQ(sim_cpus[0].amd_ctr0, 5);          /* really stopped */
    CHECK(!pmu_nmi_claim());
    CHECK_EQ(sim_legacy_access, 0);
}

TEST(hygon_is_amd)
{
    struct sim_config c = amd();
    c.vendor = SIM_HYGON;
    boot(c, PMU_MODE_AUTO);
    CHECK(pmu_probe());
    CHECK_STR(pmu_source_name(), "pmu/nmi amd perfctr0");
}

TEST(amd_perfmonv2_uses_global_status)
{
    boot(amd_v2(), PMU_MODE_AUTO);
    CHECK(pmu_probe());
    CHECK_STR(pmu_source_name(), "pmu/nmi amd perfmonv2");
    CHECK_EQ(sim_cpus[0].amd_gctl, 0x3f);       /* probe restored it */
    CHECK_EQ(sim_cpus[0].amd_ctl0 & (1ull << 22), 0);
    sim_cpus[0].amd_gctl = 0;                   /* arming must not rely on reset */
    arm();
    CHECK(sim_cpus[0].amd_gctl & 1);
    sim_count(PERIOD);
    CHECK(sim_cpus[0].amd_gstatus & 1);
    sim_log_clear();
    CHECK(pmu_nmi_claim());
    CHECK(sim_log_find(AMD_GCLR, 0) >= 0);
    CHECK_EQ(sim_cpus[0].amd_gstatus & 1, 0);
    CHECK_EQ(sim_cpus[0].amd_ctr0, (0 - PERIOD) & MASK48);
    /* a clear sign bit alone is not an overflow under PerfMonV2 */
    sim_cpus[0].amd_ctr0 = 5;
    CHECK(!pmu_nmi_claim());
    disarm();
    CHECK_EQ(sim_cpus[0].amd_gctl & 1, 0);
    CHECK_EQ(sim_legacy_access, 0);
    CHECK_EQ(sim_bad_access, 0);
}

TEST(amd_perfmonv2_needs_extended_leaf)
{
    struct sim_config c = amd_v2();
    c.ext_max = 0x80000008;                     /* 8000_0022h not there to ask */
    boot(c, PMU_MODE_AUTO);
    CHECK(pmu_probe());
    CHECK_STR(pmu_source_name(), "pmu/nmi amd perfctr0");
}

/* ---- the probe: swallowed writes, caching, modes ---- */

static void check_swallowed(struct sim_config c, const char *what)
{
    boot(c, PMU_MODE_AUTO);
    uint64_t t0 = sim_tsc;
    CHECK(!pmu_probe());
    uint64_t spent = sim_tsc - t0;
    CHECK(spent >= BUDGET);                     /* waited the whole 10 us */
    CHECK(spent <= BUDGET + 3 * sim_tsc_step);  /* and not much more */
    CHECK(sim_rdmsr_calls <= BUDGET / sim_tsc_step + 10);
    CHECK_STR(pmu_source_name(), "tick 100Hz");
    const char *n = pmu_probe_note();
    CHECK(n && strstr(n, what) && strstr(n, "claimed by cpuid"));
    CHECK(n && strstr(n, "did not count in 10 us"));
    CHECK_EQ(fake_irq_depth, 0);
    CHECK_EQ(sim_legacy_access, 0);
    sim_log_clear();
    arm();                                  /* nothing to arm */
    CHECK(!pmu_armed());
    CHECK_EQ(sim_nlog, 0);
}

TEST(swallowing_hypervisor_rejected_in_bound)
{
    struct sim_config c = intel();
    c.swallow = true;
    check_swallowed(c, "intel fixed-ctr1");
    c = amd();
    c.swallow = true;
    check_swallowed(c, "amd perfctr0");
    c = amd_v2();
    c.swallow = true;
    check_swallowed(c, "amd perfmonv2");
}

TEST(probe_bound_is_time_not_iterations)
{
    struct sim_config c = intel();
    c.swallow = true;
    boot(c, PMU_MODE_AUTO);
    sim_tsc_step = 10;                          /* faster loop: more reads, same time */
    uint64_t t0 = sim_tsc;
    CHECK(!pmu_probe());
    CHECK(sim_tsc - t0 >= BUDGET);
    CHECK(sim_tsc - t0 <= BUDGET + 30);
    CHECK(sim_rdmsr_calls >= BUDGET / 10 / 2);
}

TEST(probe_answer_cached)
{
    boot(intel(), PMU_MODE_AUTO);
    CHECK(pmu_probe());
    unsigned r = sim_rdmsr_calls, w = sim_wrmsr_calls;
    uint64_t t = sim_tsc;
    CHECK(pmu_probe());
    CHECK_EQ(sim_rdmsr_calls, r);
    CHECK_EQ(sim_wrmsr_calls, w);
    CHECK_EQ(sim_tsc, t);

    struct sim_config c = intel();
    c.swallow = true;
    boot(c, PMU_MODE_AUTO);
    CHECK(!pmu_probe());
    r = sim_rdmsr_calls;
    CHECK(!pmu_probe());
    CHECK_EQ(sim_rdmsr_calls, r);
}

TEST(pmu_off_never_probes)
{
    boot(intel(), PMU_MODE_OFF);
    CHECK(!pmu_probe());
    CHECK_EQ(sim_rdmsr_calls, 0);
    CHECK_EQ(sim_wrmsr_calls, 0);
    CHECK_STR(pmu_source_name(), "tick 100Hz");
    CHECK(pmu_probe_note() && strstr(pmu_probe_note(), "pmu=off"));
    arm();
    CHECK(!pmu_armed());
    CHECK_EQ(sim_wrmsr_calls, 0);
    char out[2048];
    describe(out, sizeof out);
    CHECK(strstr(out, "pmu=off") != NULL);
    CHECK(strstr(out, "profile source: tick 100Hz\n") != NULL);
    CHECK_EQ(sim_wrmsr_calls, 0);
}

TEST(no_pmu_claimed_is_tick_without_msrs)
{
    boot((struct sim_config){.vendor = SIM_INTEL}, PMU_MODE_AUTO);
    CHECK(!pmu_probe());
    CHECK(pmu_probe_note() == NULL);
    CHECK_EQ(sim_rdmsr_calls + sim_wrmsr_calls, 0);
    boot((struct sim_config){.vendor = SIM_AMD}, PMU_MODE_AUTO);
    CHECK(!pmu_probe());
    CHECK_EQ(sim_rdmsr_calls + sim_wrmsr_calls, 0);
    /* unknown vendor: tick, even when told to assume */
    boot((struct sim_config){.vendor = SIM_OTHER, .offer = true, .swallow = true}, PMU_MODE_ASSUME);
    CHECK(!pmu_probe());
    CHECK_EQ(sim_rdmsr_calls + sim_wrmsr_calls, 0);
    CHECK_STR(pmu_source_name(), "tick 100Hz");
}

TEST(assume_on_no_pmu_runs_probe_and_rejects)
{
    /* QEMU TCG: leaf 0xA reads 0, PMU MSR writes are swallowed. */
    boot((struct sim_config){.vendor = SIM_INTEL, .swallow = true}, PMU_MODE_ASSUME);
    uint64_t t0 = sim_tsc;
    CHECK(!pmu_probe());
    CHECK(sim_wrmsr_calls > 0);                 /* it really tried */
    CHECK(sim_tsc - t0 >= BUDGET);
    CHECK_EQ(sim_bad_access, 0);
    const char *n = pmu_probe_note();
    CHECK(n && strstr(n, "(pmu=assume)") && strstr(n, "did not count in 10 us"));
    char out[2048];
    describe(out, sizeof out);
    CHECK(strstr(out, "no performance counter claimed") != NULL);
    CHECK(strstr(out, "acting as if perfmon v2, 3 fixed counters x 48 bits") != NULL);
    CHECK(strstr(out, "probe:        did not count in 10 us\n") != NULL);

    /* QEMU's default CPU model says AuthenticAMD */
    boot((struct sim_config){.vendor = SIM_AMD, .swallow = true}, PMU_MODE_ASSUME);
    CHECK(!pmu_probe());
    CHECK(sim_log_count(AMD_CTL0) > 0);
    CHECK_EQ(log_count_global(), 0);            /* assume means no PerfMonV2 */
    CHECK_EQ(sim_legacy_access, 0);
    CHECK(pmu_probe_note() && strstr(pmu_probe_note(), "amd perfctr0"));
}

TEST(assume_on_real_counter_still_works)
{
    boot(intel(), PMU_MODE_ASSUME);
    CHECK(pmu_probe());
    CHECK(pmu_probe_note() == NULL);
    CHECK_STR(pmu_source_name(), "pmu/nmi intel fixed-ctr1");
}

/* ---- lscpu ---- */

TEST(describe_intel_runs_probe)
{
    struct sim_config c = intel();
    c.hypervisor = true;
    boot(c, PMU_MODE_AUTO);
    char out[2048];
    describe(out, sizeof out);                  /* no pmu_probe() before */
    CHECK(strstr(out, "vendor:       GenuineIntel\n") != NULL);
    CHECK(strstr(out, "family:       6 (0x6) model 158 (0x9e) stepping 10\n") != NULL);
    CHECK(strstr(out, "model name:   Sim CPU Model 42 @ 3.00GHz\n") != NULL);
    CHECK(strstr(out, "cpus:         4\n") != NULL);
    CHECK(strstr(out, "hypervisor:   KVMKVMKVM\n") != NULL);
    CHECK(strstr(out, "perfmon v2, 3 fixed counters x 48 bits\n") != NULL);
    CHECK(strstr(out, "probe:        counter moved by ") != NULL);
    CHECK(strstr(out, "profile source: pmu/nmi intel fixed-ctr1\n") != NULL);
    CHECK(strstr(out, "pmu=") == NULL);
    CHECK(sim_wrmsr_calls > 0);                 /* the probe ran */
}

TEST(describe_amd)
{
    boot(amd(), PMU_MODE_AUTO);
    fake_ncpus = 2;
    CHECK(pmu_probe());
    char out[2048];
    describe(out, sizeof out);
    CHECK(strstr(out, "vendor:       AuthenticAMD\n") != NULL);
    CHECK(strstr(out, "family:       25 (0x19) model 33 (0x21) stepping 2\n") != NULL);
    CHECK(strstr(out, "cpus:         2\n") != NULL);
    CHECK(strstr(out, "hypervisor:   none\n") != NULL);
    CHECK(strstr(out, "PerfCtrExtCore yes, PerfMonV2 no\n") != NULL);
    CHECK(strstr(out, "profile source: pmu/nmi amd perfctr0\n") != NULL);
}
