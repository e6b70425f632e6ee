// LINK: kernel/pmu.c arch/arm64/pmu.c arch/arm64/cpuinfo.c tests/unit/sim_pmu_a64.c lib/printf.c
// CFLAGS: -DSONDE_HOST_PMUV3
/* tests/unit/test_arm64_pmu.c: the arm64 backend (arch/arm64/pmu.c) through the PMU
 * core (kernel/pmu.c), against the simulated PMUv3. Built as the arm64
 * kernel is (SONDE_HOST_PMUV3, arch/host/pmu_inline.h): the core's claim,
 * pmu_nmi_claim, acknowledges through arm64's inline
 * pmu_nmi_ack_inline, not the table. */
#include "test.h"
#include "fake_hal.h"
#include "sim_pmu_a64.h"
#include "hal/cpu.h"
#include "hal/pmu.h"
#include "lib/printf.h"

#ifndef PMU_NMI_ACK_INLINE
#error "the arm64 backend's test must build the claim with the inline acknowledgement"
#endif

#define CCNT       (1ull << 31)
#define PMCR_E     (1ull << 0)
#define PMCR_D     (1ull << 3)
#define PMCR_LC    (1ull << 6)
#define PPI        23

/* fake time: 125 units per us (QEMU's 62.5 MHz << 1), 25 per cycles_now
 * call (0.2 us); the counter at 8 per unit = 1000 per us: period 1e6. */
#define PER_US     125ull
#define STEP       25ull
#define BUDGET     (10 * PER_US)
#define PERIOD     1000000ull

static void boot(struct sim_a64_config c, enum pmu_mode mode)
{
    pmu_test_reset();
    fake_cpu = 0;
    fake_ncpus = 4;
    fake_cycles = 1000;
    fake_cycles_step = STEP;
    fake_cycles_per_us = PER_US;
    fake_irq_depth = 0;
    sim_a64_init(&c);
    pmu_set_ppi(PPI);
    pmu_set_mode(mode);
}

static struct sim_a64_config pmuv3(void) { return (struct sim_a64_config){.pmuver = 1, .counts = true}; }

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

/* The value the last arm (or claim) loaded into PMCCNTR. */
static uint64_t last_load(void)
{
    int i = sim_a64_log_last(PMREG_PMCCNTR);
    return i >= 0 ? sim_a64_log[i].val : 0;
}

/* ---- the probe ---- */

TEST(probe_passes_in_bound_interrupts_off)
{
    boot(pmuv3(), PMU_MODE_AUTO);
    uint64_t t0 = fake_cycles;
    CHECK(pmu_probe());
    CHECK_STR(pmu_source_name(), "pmu/pseudo-nmi arm64 pmuv3 cycles");
    CHECK(pmu_probe_note() == NULL);
    uint64_t spent = fake_cycles - t0;
    /* The rate needs the whole 200 us (hal/pmu.h, PMU_RATE_BUDGET_US). */
    CHECK(spent >= BUDGET * PMU_RATE_BUDGET_US / PMU_PROBE_BUDGET_US);
    CHECK(spent <= BUDGET * PMU_RATE_BUDGET_US / PMU_PROBE_BUDGET_US + 4 * STEP);
    CHECK(sim_a64_nlog > 0);
    for (unsigned i = 0; i < sim_a64_nlog; i++)
        CHECK(sim_a64_log[i].irq_depth > 0);      /* interrupts off throughout */
    CHECK_EQ(fake_irq_depth, 0);                  /* and restored */
    CHECK_EQ(sim_a64[0].cnten & CCNT, 0);         /* stopped afterwards */
    CHECK_EQ(sim_a64[0].inten & CCNT, 0);         /* never with its interrupt */
    CHECK_EQ(sim_a64[0].irqs, 0);
    CHECK_EQ(sim_a64_nmi_ppi, PPI);               /* the GIC was told */
    CHECK(!pmu_armed());
}

TEST(probe_measures_the_rate_and_sets_the_period)
{
    boot(pmuv3(), PMU_MODE_AUTO);
    CHECK(pmu_probe());
    arm();
    CHECK_EQ(last_load(), 0 - PERIOD);            /* 1000 per us: 1 ms = 1e6 */

    struct sim_a64_config c = pmuv3();
    c.num = 24;                                   /* a 3 GHz part */
    c.den = 1;
    boot(c, PMU_MODE_AUTO);
    CHECK(pmu_probe());
    arm();
    CHECK_EQ(last_load(), 0 - 3 * PERIOD);
    char out[2048];
    describe(out, sizeof out);
    CHECK(strstr(out, "(3000 per us: period 3000000 for 1 kHz)") != NULL);
}

/* The host deschedules the vCPU for 1 ms right after the probe's first
 * counter read: the counter runs on (virtual time), the rate must not. */
static unsigned ccnt_reads;
static void pause_after_first_ccnt_read(enum pmu_reg r)
{
    if (r == PMREG_PMCCNTR && ccnt_reads++ == 0)
        fake_cycles += 1000 * PER_US;
}

TEST(probe_rate_survives_a_pause_between_reads)
{
    boot(pmuv3(), PMU_MODE_AUTO);
    ccnt_reads = 0;
    sim_a64_read_hook = pause_after_first_ccnt_read;
    CHECK(pmu_probe());
    sim_a64_read_hook = NULL;
    CHECK(ccnt_reads > 1);
    arm();
    CHECK_EQ(last_load(), 0 - PERIOD);            /* not 100x: the reading was taken again */
}

TEST(probe_resets_a_filter_that_hides_el1)
{
    /* Firmware left PMCCFILTR.P set (EL1 not counted) and PMCR.D (every
     * 64th cycle): the probe and arm must not depend on either. */
    boot(pmuv3(), PMU_MODE_AUTO);
    sim_a64[0].ccfiltr = 1ull << 31;
    sim_a64[0].pmcr = PMCR_D;
    CHECK(pmu_probe());
    arm();
    CHECK_EQ(sim_a64[0].ccfiltr, 0);              /* EL1 and EL0 counted */
    CHECK_EQ(sim_a64[0].pmcr & PMCR_D, 0);
    CHECK_EQ(last_load(), 0 - PERIOD);            /* the rate was not a 64th */
}

TEST(claim_that_never_counts_rejected_in_bound)
{
    struct sim_a64_config c = pmuv3();
    c.counts = false;
    boot(c, PMU_MODE_AUTO);
    uint64_t t0 = fake_cycles;
    CHECK(!pmu_probe());
    uint64_t spent = fake_cycles - t0;
    CHECK(spent >= BUDGET);
    CHECK(spent <= BUDGET + 4 * STEP);
    CHECK_STR(pmu_source_name(), "tick 100Hz");
    const char *n = pmu_probe_note();
    CHECK(n && strstr(n, "claimed by ID_AA64DFR0_EL1") && strstr(n, "did not count in 10 us: tick only"));
    CHECK_EQ(fake_irq_depth, 0);
    sim_a64_log_clear();
    arm();                                    /* nothing to arm */
    CHECK(!pmu_armed());
    CHECK_EQ(sim_a64_nlog, 0);
    char out[2048];
    describe(out, sizeof out);
    CHECK(strstr(out, "probe:        did not count in 10 us\n") != NULL);
    CHECK(strstr(out, "profile source: tick 100Hz\n") != NULL);
}

TEST(probe_bound_is_time_not_iterations)
{
    struct sim_a64_config c = pmuv3();
    c.counts = false;
    boot(c, PMU_MODE_AUTO);
    fake_cycles_step = 5;                         /* a faster loop: more reads, same time */
    uint64_t t0 = fake_cycles;
    CHECK(!pmu_probe());
    CHECK(fake_cycles - t0 >= BUDGET);
    CHECK(fake_cycles - t0 <= BUDGET + 20);
    CHECK(sim_a64_reads >= BUDGET / 5 / 2);
}

TEST(too_slow_a_counter_is_not_a_source)
{
    struct sim_a64_config c = pmuv3();
    c.num = 1;
    c.den = 200;                                  /* 0.6 per us */
    boot(c, PMU_MODE_AUTO);
    CHECK(!pmu_probe());
    const char *n = pmu_probe_note();
    CHECK(n && strstr(n, "too slow"));
}

TEST(probe_answer_cached)
{
    boot(pmuv3(), PMU_MODE_AUTO);
    CHECK(pmu_probe());
    unsigned r = sim_a64_reads, w = sim_a64_writes, id = sim_a64_id_reads;
    uint64_t t = fake_cycles;
    CHECK(pmu_probe());
    CHECK_EQ(sim_a64_reads, r);
    CHECK_EQ(sim_a64_writes, w);
    CHECK_EQ(sim_a64_id_reads, id);
    CHECK_EQ(fake_cycles, t);

    struct sim_a64_config c = pmuv3();
    c.counts = false;
    boot(c, PMU_MODE_AUTO);
    CHECK(!pmu_probe());
    r = sim_a64_reads;
    t = fake_cycles;
    CHECK(!pmu_probe());
    CHECK_EQ(sim_a64_reads, r);
    CHECK_EQ(fake_cycles, t);
}

TEST(no_pmuv3_claimed_touches_no_pmu_register)
{
    unsigned vers[2] = { 0, 0xf };                /* none; IMPLEMENTATION DEFINED */
    for (int i = 0; i < 2; i++) {
        boot((struct sim_a64_config){.pmuver = vers[i], .counts = true}, PMU_MODE_AUTO);
        CHECK(!pmu_probe());
        CHECK(pmu_probe_note() == NULL);
        CHECK_EQ(sim_a64_reads + sim_a64_writes, 0);
        CHECK(!pmu_nmi_claim());
        arm();
        disarm();
        char out[2048];
        describe(out, sizeof out);
        CHECK(strstr(out, "probe:        not run (no PMUv3 claimed)\n") != NULL);
        CHECK_EQ(sim_a64_reads + sim_a64_writes, 0);
    }
}

TEST(pmu_off_never_probes)
{
    boot(pmuv3(), PMU_MODE_OFF);
    CHECK(!pmu_probe());
    CHECK_EQ(sim_a64_writes, 0);
    CHECK_STR(pmu_source_name(), "tick 100Hz");
    CHECK(pmu_probe_note() && strstr(pmu_probe_note(), "pmu=off"));
    arm();
    CHECK(!pmu_armed());
    char out[2048];
    describe(out, sizeof out);
    CHECK(strstr(out, "pmu=off:     counter never used\n") != NULL);
    CHECK(strstr(out, "probe:        not run (pmu=off)\n") != NULL);
    CHECK(strstr(out, "profile source: tick 100Hz\n") != NULL);
    CHECK_EQ(sim_a64_writes, 0);
}

TEST(assume_runs_the_probe_and_it_decides)
{
    /* QEMU -cpu cortex-a72,pmu=off: PMUVer 0, the registers there, nothing counts. */
    boot((struct sim_a64_config){.pmuver = 0, .counts = false}, PMU_MODE_ASSUME);
    CHECK(!pmu_probe());
    CHECK(sim_a64_writes > 0);                    /* it really tried */
    const char *n = pmu_probe_note();
    CHECK(n && strstr(n, "assumed (pmu=assume)") && strstr(n, "did not count in 10 us"));
    char out[2048];
    describe(out, sizeof out);
    CHECK(strstr(out, "pmu claims:   none (ID_AA64DFR0_EL1.PMUVer 0x0)\n") != NULL);
    CHECK(strstr(out, "pmu=assume:  acting as if PMUv3 were claimed\n") != NULL);

    /* and on a counter that does count, assume changes nothing */
    boot(pmuv3(), PMU_MODE_ASSUME);
    CHECK(pmu_probe());
    CHECK(pmu_probe_note() == NULL);
}

TEST(no_interrupt_in_the_tree_is_tick_only)
{
    boot(pmuv3(), PMU_MODE_AUTO);
    pmu_set_ppi(0);
    CHECK_EQ(sim_a64_nmi_ppi, 0);
    CHECK(!pmu_probe());
    CHECK(pmu_probe_note() && strstr(pmu_probe_note(), "names no PMU interrupt"));
    pmu_set_ppi(40);                              /* an SPI cannot be a cpu's own */
    CHECK_EQ(sim_a64_nmi_ppi, 0);
}

/* ---- arming, overflow, claim ---- */

TEST(arm_order_and_values)
{
    boot(pmuv3(), PMU_MODE_AUTO);
    CHECK(pmu_probe());
    sim_a64_log_clear();
    fake_irq_depth = 1;                           /* from the tick */
    arm();
    CHECK(pmu_armed());
    CHECK(sim_a64_nlog > 0);
    for (unsigned i = 0; i < sim_a64_nlog; i++)
        CHECK(sim_a64_log[i].armed);              /* flag set before the first write */
    int en = sim_a64_log_last(PMREG_PMCNTENSET);
    CHECK_EQ(en, (int)sim_a64_nlog - 1);          /* enabled last */
    CHECK_EQ(sim_a64_log[en].val, CCNT);
    int clr = sim_a64_log_find(PMREG_PMOVSCLR, 0);
    int ctr = sim_a64_log_find(PMREG_PMCCNTR, 0);
    int inten = sim_a64_log_find(PMREG_PMINTENSET, 0);
    int gic = sim_a64_log_find(SIM_LOG_GIC_ENABLE, 0);
    CHECK(clr >= 0 && clr < inten);               /* stale status cleared before the request is enabled */
    CHECK(ctr >= 0 && ctr < en);
    CHECK(inten >= 0 && inten < en);
    CHECK(gic >= 0 && gic < en);
    CHECK_EQ(sim_a64_log[gic].val, PPI);
    CHECK(sim_a64[0].ppi_enabled);
    CHECK_EQ(sim_a64_log[ctr].val, 0 - PERIOD);
    CHECK_EQ(sim_a64[0].pmcr & (PMCR_E | PMCR_LC | PMCR_D), PMCR_E | PMCR_LC);
    CHECK_EQ(sim_a64[0].ccfiltr, 0);
    CHECK(sim_a64[0].inten & CCNT);
    CHECK(sim_a64[0].cnten & CCNT);
    /* About 1 ms from overflow: just above -period. */
    CHECK(sim_a64[0].ccnt >= 0 - PERIOD);
    CHECK(sim_a64[0].ccnt < 0 - PERIOD / 2);
    CHECK_EQ(sim_a64[0].irqs, 0);
}

TEST(overflow_claimed_cleared_and_rearmed)
{
    boot(pmuv3(), PMU_MODE_AUTO);
    CHECK(pmu_probe());
    arm();
    sim_a64_count(PERIOD);
    CHECK(sim_a64[0].ovs & CCNT);                 /* status set */
    CHECK_EQ(sim_a64[0].irqs, 1);
    CHECK(sim_a64_irq_level());
    sim_a64_log_clear();
    CHECK(pmu_nmi_claim());
    CHECK_EQ(sim_a64[0].ovs & CCNT, 0);           /* and cleared */
    CHECK_EQ(sim_a64_log[sim_a64_log_find(PMREG_PMOVSCLR, 0)].val, CCNT);
    CHECK(!sim_a64_irq_level());                  /* the request dropped before the EOI */
    int ctr = sim_a64_log_find(PMREG_PMCCNTR, 0);
    CHECK(ctr >= 0 && ctr < sim_a64_log_find(PMREG_PMOVSCLR, 0));   /* reloaded first */
    CHECK_EQ(sim_a64_log[ctr].val, 0 - PERIOD);
    /* and it keeps going: the next period overflows again */
    sim_a64_count(PERIOD);
    CHECK_EQ(sim_a64[0].irqs, 2);
    CHECK(pmu_nmi_claim());
    CHECK(!pmu_nmi_claim());                      /* one claim per overflow */
    char out[2048];
    describe(out, sizeof out);
    CHECK(strstr(out, "overflows:    2 claimed since boot, 0 of them after disarm\n") != NULL);
}

TEST(reload_keeps_the_period_from_the_wrap)
{
    boot(pmuv3(), PMU_MODE_AUTO);
    CHECK(pmu_probe());
    arm();
    sim_a64_count(PERIOD + 1234);                 /* the interrupt came 1234 late */
    CHECK(pmu_nmi_claim());
    CHECK_EQ(last_load(), 1234 - PERIOD);         /* next wrap one period after the last */
    sim_a64_count(PERIOD - 1234);
    CHECK_EQ(sim_a64[0].irqs, 2);                 /* on time */
    /* More than half a period late: a full period from now, no storm. */
    sim_a64_count(PERIOD * 6 / 10);
    CHECK(pmu_nmi_claim());
    CHECK_EQ(last_load(), 0 - PERIOD);
}

TEST(genuine_interrupt_not_claimed)
{
    boot(pmuv3(), PMU_MODE_AUTO);
    CHECK(pmu_probe());
    arm();
    sim_a64_count(PERIOD / 2);                    /* counting, not wrapped */
    sim_a64_log_clear();
    CHECK(!pmu_nmi_claim());                      /* armed, no PMOVSSET.C: not the counter's */
    CHECK_EQ(sim_a64_nlog, 0);                    /* nothing acknowledged or rewritten */
    disarm();
    CHECK(!pmu_nmi_claim());                      /* nor when not armed */
}

TEST(claim_before_probe_touches_nothing)
{
    boot(pmuv3(), PMU_MODE_AUTO);
    sim_a64[0].ovs = CCNT;
    CHECK(!pmu_nmi_claim());
    CHECK_EQ(sim_a64_reads + sim_a64_writes, 0);
}

TEST(armed_is_per_cpu)
{
    boot(pmuv3(), PMU_MODE_AUTO);
    CHECK(pmu_probe());
    fake_cpu = 1;
    arm();
    CHECK(pmu_armed());
    CHECK(sim_a64[1].cnten & CCNT);
    fake_cpu = 0;
    CHECK(!pmu_armed());
    CHECK_EQ(sim_a64[0].cnten & CCNT, 0);
    CHECK(!pmu_nmi_claim());
    fake_cpu = 1;
    sim_a64_count(PERIOD);
    CHECK(pmu_nmi_claim());
    CHECK_EQ(sim_a64[1].ovs, 0);
    fake_cpu = 0;
}

/* The interrupt taken in the middle of pmu_disarm, right after the write
 * that stops the counter: the flag is still set, so it is claimed. */
static int stale_claims, stale_hook_calls;
static void claim_on_first_write(enum pmu_reg r, uint64_t v)
{
    if (stale_hook_calls++ == 0)
        stale_claims += pmu_nmi_claim();
}

TEST(stale_overflow_at_disarm_claimed)
{
    boot(pmuv3(), PMU_MODE_AUTO);
    CHECK(pmu_probe());
    arm();
    sim_a64_count(PERIOD);                        /* overflow raised, not yet taken */
    stale_claims = stale_hook_calls = 0;
    sim_a64_write_hook = claim_on_first_write;
    disarm();
    sim_a64_write_hook = NULL;
    CHECK_EQ(stale_claims, 1);
    CHECK(!pmu_armed());
    CHECK_EQ(sim_a64[0].cnten & CCNT, 0);         /* stopped */
    CHECK_EQ(sim_a64[0].inten & CCNT, 0);         /* and its request off */
    uint64_t v = sim_a64[0].ccnt;
    sim_a64_count(5 * PERIOD);
    CHECK_EQ(sim_a64[0].ccnt, v);                 /* really stopped */
}

TEST(overflow_delivered_after_disarm_claimed_not_rearmed)
{
    /* The overflow wrapped just before disarm stopped the counter, and its
     * interrupt lands only after the flag is clear: nothing else raises
     * the PMU's PPI, so PMOVSSET.C makes it the counter's. It is
     * acknowledged and counted as stale, and the counter is not reloaded. */
    boot(pmuv3(), PMU_MODE_AUTO);
    CHECK(pmu_probe());
    arm();
    sim_a64_count(PERIOD);
    disarm();
    CHECK(sim_a64[0].ovs & CCNT);                 /* status left for the late interrupt */
    CHECK(!sim_a64_irq_level());                  /* but no request any more */
    sim_a64_log_clear();
    CHECK(pmu_nmi_claim());
    CHECK_EQ(sim_a64_log_count(PMREG_PMCCNTR), 0);
    CHECK_EQ(sim_a64[0].ovs & CCNT, 0);
    CHECK(!pmu_nmi_claim());                      /* and only once */
    char out[2048];
    describe(out, sizeof out);
    CHECK(strstr(out, "1 of them after disarm") != NULL);
}

TEST(rearm_after_stale_status_raises_nothing_at_once)
{
    boot(pmuv3(), PMU_MODE_AUTO);
    CHECK(pmu_probe());
    arm();
    sim_a64_count(PERIOD);
    disarm();                                 /* status left set, never claimed */
    unsigned before = sim_a64[0].irqs;
    arm();
    CHECK_EQ(sim_a64[0].irqs, before);            /* no interrupt for the old overflow */
    CHECK_EQ(sim_a64[0].ovs & CCNT, 0);
    sim_a64_count(PERIOD);
    CHECK_EQ(sim_a64[0].irqs, before + 1);
    CHECK(pmu_nmi_claim());
}

/* ---- lscpu ---- */

TEST(describe_names_the_source_and_the_probe)
{
    boot(pmuv3(), PMU_MODE_AUTO);
    char out[2048];
    describe(out, sizeof out);                    /* no pmu_probe() before: it runs it */
    CHECK(strstr(out, "vendor:       ARM (implementer 0x41)\n") != NULL);
    CHECK(strstr(out, "part:         Cortex-A72 (0xd08) variant 0 revision 3\n") != NULL);
    CHECK(strstr(out, "cpus:         4\n") != NULL);
    CHECK(strstr(out, "pmu claims:   PMUv3 (ID_AA64DFR0_EL1.PMUVer 0x1), 6 event counters + cycle counter (PMCR_EL0.N)\n") != NULL);
    CHECK(strstr(out, "interrupt:    PPI 23 (device tree /pmu), pseudo-NMI") != NULL);
    CHECK(strstr(out, "probe:        cycle counter moved by ") != NULL);
    CHECK(strstr(out, " in 200 us (1000 per us: period 1000000 for 1 kHz)\n") != NULL);
    CHECK(strstr(out, "profile source: pmu/pseudo-nmi arm64 pmuv3 cycles\n") != NULL);
    CHECK(strstr(out, "pmu=") == NULL);
    CHECK(sim_a64_writes > 0);
}
