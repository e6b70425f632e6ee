// LINK: kernel/pmu.c lib/printf.c
/* tests/unit/test_pmu.c: the portable PMU core (kernel/pmu.c) against
 * a fake backend: one table of operations over a counter that is a
 * variable, so the core's own logic (mode, run-once probe, notes, period,
 * armed-flag ordering, per-CPU checks, lscpu lines) is tested once, with
 * no hardware model in the way. test_x86_64_pmu.c and test_arm64_pmu.c drive the
 * real backends through the same core. */
#include "test.h"
#include "fake_hal.h"
#include "hal/cpu.h"
#include "hal/pmu.h"
#include "lib/printf.h"

/* fake_cycles_per_us 1000, 100 per cycles_now(): a probe reading (two
 * clock reads) is 0.2 us, the 10 us budget 50 readings after the first. */
#define PER_US   1000ull
#define STEP     100ull
#define BUDGET   (10 * PER_US)

/* ---- the fake backend ---- */

static enum pmu_offer fake_offer_as;      /* what po_offer answers */
static bool fake_counts;                  /* the counter moves when read */
static uint64_t fake_per_read;            /* and by this much a read */
static bool fake_stall;                   /* moves on the first read only */
static const char *fake_refusal;          /* po_refuse's answer */
static bool fake_overflow;                /* whether po_nmi_ack finds an overflow */

static uint64_t fake_count;
static bool fake_running;
static unsigned n_offer, n_start, n_read, n_stop, n_arm, n_disarm, n_ack;
static int last_assume;                   /* po_offer's argument, -1: not called */
static uint64_t armed_period, acked_period;
static bool acked_reload;
static int reads_irqs_on;                 /* probe reads with interrupts on */
static void (*during_arm)(void), (*during_disarm)(void);

static enum pmu_offer fake_offer(bool assume)
{
    n_offer++;
    last_assume = assume;
    return fake_offer_as;
}

static const char *fake_refuse(void) { return fake_refusal; }

static uint64_t fake_probe_start(void)
{
    n_start++;
    fake_count = 0;
    fake_running = true;
    return 0x5a;
}

static uint64_t fake_probe_read(void)
{
    n_read++;
    reads_irqs_on += irqs_enabled();
    if (fake_running && fake_counts && !(fake_stall && n_read > 1))
        fake_count += fake_per_read;
    return fake_count;
}

static void fake_probe_stop(uint64_t saved)
{
    n_stop++;
    fake_running = saved != 0x5a;           /* saved comes back as given */
}

/* The interrupt may arrive between any two writes of a real po_arm:
 * during_arm runs where the last write, the enable, would be. */
static void fake_arm(uint64_t period)
{
    n_arm++;
    armed_period = period;
    if (during_arm)
        during_arm();
    fake_running = true;
}

/* during_disarm runs right after the counter is stopped. */
static void fake_disarm(void)
{
    n_disarm++;
    fake_running = false;
    if (during_disarm)
        during_disarm();
}

/* Acknowledged only when it overflowed; 0 means no reload. */
static bool fake_nmi_ack(uint64_t period)
{
    if (!fake_overflow)
        return false;
    n_ack++;
    acked_period = period;
    acked_reload = period != 0;
    fake_overflow = false;
    return true;
}

static struct pmu_ops fake_ops = {
    .po_name = "pmu/fake",
    .po_what = "fake ctr",
    .po_counter = "fake counter",
    .po_offered_by = "fakeid",
    .po_offer = fake_offer,
    .po_refuse = fake_refuse,
    .po_probe_start = fake_probe_start,
    .po_probe_read = fake_probe_read,
    .po_probe_stop = fake_probe_stop,
    .po_arm = fake_arm,
    .po_disarm = fake_disarm,
    .po_nmi_ack = fake_nmi_ack,
};

static void fake_describe(struct printer *p, enum pmu_describe_at at)
{
    static const char *const line[] = {
        [PMU_AT_OFFER] = "fake claims\n",
        [PMU_AT_ASSUMED] = "fake assumed\n",
        [PMU_AT_WIRING] = "wiring:       fake\n",
        [PMU_AT_COUNTS] = "counts:       fake\n",
    };
    pr_puts(p, line[at]);
}

static const struct pmu_ops *const fake_tables[] = { &fake_ops, NULL };

const struct pmu_backends pmu_backends = {
    .pb_ops = fake_tables,
    .pb_family = "fake",
    .pb_describe = fake_describe,
};

/* ---- helpers ---- */

/* A fresh boot: a counter the hardware claims and that counts, found by
 * the first move (as x86's). */
static void boot(enum pmu_mode mode)
{
    pmu_test_reset();
    pmu_set_mode(mode);
    fake_cpu = 0;
    fake_cycles = 1000;
    fake_cycles_step = STEP;
    fake_cycles_per_us = PER_US;
    fake_irq_depth = 0;
    fake_offer_as = PMU_OFFER_HW;
    fake_counts = true;
    fake_per_read = 200;
    fake_stall = false;
    fake_refusal = NULL;
    fake_overflow = false;
    fake_count = 0;
    fake_running = false;
    n_offer = n_start = n_read = n_stop = n_arm = n_disarm = n_ack = 0;
    last_assume = -1;
    armed_period = acked_period = 0;
    acked_reload = false;
    reads_irqs_on = 0;
    during_arm = during_disarm = NULL;
    fake_ops.po_measure_rate = false;
    fake_ops.po_claims_when_disarmed = false;
    fake_ops.po_max_period = UINT64_MAX;
}

static void arm(void) { fake_irqs_off(pmu_arm); }
static void disarm(void) { fake_irqs_off(pmu_disarm); }

static void describe(char *buf, size_t cap)
{
    struct buf_printer bp;
    buf_printer_init(&bp, buf, cap);
    pmu_describe(&bp.pr);
}

/* ---- mode and the probe ---- */

TEST(auto_probes_and_uses_a_counter_that_moves)
{
    boot(PMU_MODE_AUTO);
    uint64_t t0 = fake_cycles;
    CHECK(pmu_probe());
    CHECK_EQ(last_assume, 0);
    CHECK_EQ(n_start, 1);
    CHECK_EQ(n_read, 1);                          /* stopped at the first move */
    CHECK_EQ(n_stop, 1);
    CHECK(!fake_running);                         /* po_probe_stop got what start returned */
    CHECK(fake_cycles - t0 < BUDGET / 10);
    CHECK_EQ(reads_irqs_on, 0);                   /* interrupts off while probing */
    CHECK_EQ(fake_irq_depth, 0);                  /* and back on after */
    CHECK_STR(pmu_source_name(), "pmu/fake");
    CHECK(pmu_probe_note() == NULL);
}

TEST(probe_runs_once_however_often_asked)
{
    boot(PMU_MODE_AUTO);
    CHECK(pmu_probe());
    CHECK(pmu_probe());
    char out[512];
    describe(out, sizeof out);
    CHECK(pmu_probe());
    CHECK_EQ(n_offer, 1);
    CHECK_EQ(n_start, 1);

    boot(PMU_MODE_AUTO);                          /* and a "no" is cached too */
    fake_counts = false;
    CHECK(!pmu_probe());
    unsigned reads = n_read;
    uint64_t t = fake_cycles;
    CHECK(!pmu_probe());
    describe(out, sizeof out);
    CHECK_EQ(n_offer, 1);
    CHECK_EQ(n_start, 1);
    CHECK_EQ(n_read, reads);
    CHECK_EQ(fake_cycles, t);
}

TEST(before_the_probe_nothing_is_believed)
{
    boot(PMU_MODE_AUTO);
    CHECK_STR(pmu_source_name(), "tick 100Hz");
    CHECK(pmu_probe_note() == NULL);
    fake_overflow = true;
    CHECK(!pmu_nmi_claim());
    arm();
    CHECK(!pmu_armed());
    CHECK_EQ(n_offer + n_arm + n_ack, 0);
}

TEST(a_counter_that_never_moves_costs_the_budget_and_a_note)
{
    boot(PMU_MODE_AUTO);
    fake_counts = false;
    uint64_t t0 = fake_cycles;
    CHECK(!pmu_probe());
    uint64_t spent = fake_cycles - t0;
    CHECK(spent >= BUDGET);
    CHECK(spent <= BUDGET + 3 * STEP);
    CHECK_EQ(n_stop, 1);
    CHECK_EQ(fake_irq_depth, 0);
    CHECK_STR(pmu_source_name(), "tick 100Hz");
    CHECK_STR(pmu_probe_note(), "pmu: fake ctr claimed by fakeid but did not count in 10 us: tick only");
    arm();
    CHECK(!pmu_armed());
    CHECK_EQ(n_arm, 0);
    char out[512];
    describe(out, sizeof out);
    CHECK(strstr(out, "probe:        did not count in 10 us\n") != NULL);
}

TEST(off_claims_but_never_probes)
{
    boot(PMU_MODE_OFF);
    CHECK(!pmu_probe());
    CHECK_EQ(n_offer, 1);                         /* lscpu still says what is claimed */
    CHECK_EQ(last_assume, 0);
    CHECK_EQ(n_start + n_read, 0);
    CHECK_STR(pmu_source_name(), "tick 100Hz");
    CHECK_STR(pmu_probe_note(), "pmu: fake ctr not used (pmu=off): tick only");
    char out[512];
    describe(out, sizeof out);
    static const char want1[] = "pmu claims:   fake claims\n"
        "pmu=off:     counter never used\n"
        "wiring:       fake\n"
        "probe:        not run (pmu=off)\n"
        "profile source: tick 100Hz\n";
    CHECK_STR(out, want1);
}

TEST(assume_asks_the_backend_to_assume_and_says_so)
{
    boot(PMU_MODE_ASSUME);
    fake_offer_as = PMU_OFFER_ASSUMED;
    fake_counts = false;
    CHECK(!pmu_probe());
    CHECK_EQ(last_assume, 1);
    CHECK_EQ(n_start, 1);                         /* it really tried */
    CHECK_STR(pmu_probe_note(), "pmu: fake ctr assumed (pmu=assume) but did not count in 10 us: tick only");
    char out[512];
    describe(out, sizeof out);
    static const char want2[] = "pmu claims:   fake claims\n"
        "pmu=assume:  acting as if fake assumed\n"
        "wiring:       fake\n"
        "probe:        did not count in 10 us\n"
        "profile source: tick 100Hz\n";
    CHECK_STR(out, want2);

    boot(PMU_MODE_ASSUME);                        /* a counter that counts: used */
    fake_offer_as = PMU_OFFER_ASSUMED;
    CHECK(pmu_probe());
    CHECK(pmu_probe_note() == NULL);
}

TEST(nothing_claimed_is_the_tick)
{
    boot(PMU_MODE_AUTO);
    fake_offer_as = PMU_OFFER_NONE;
    CHECK(!pmu_probe());
    CHECK_EQ(n_start, 0);
    CHECK(pmu_probe_note() == NULL);
    CHECK_STR(pmu_source_name(), "tick 100Hz");
    char out[512];
    describe(out, sizeof out);
    static const char want3[] = "pmu claims:   fake claims\n"
        "wiring:       fake\n"
        "probe:        not run (no fake claimed)\n"
        "profile source: tick 100Hz\n";
    CHECK_STR(out, want3);
}

TEST(a_bad_mode_is_ignored)
{
    boot(PMU_MODE_OFF);
    pmu_set_mode((enum pmu_mode)7);
    CHECK(!pmu_probe());
    CHECK_EQ(n_start, 0);                         /* still off */
}

/* ---- rate, period, refusal ---- */

TEST(first_move_period_comes_from_the_clock_and_is_bounded)
{
    boot(PMU_MODE_AUTO);
    fake_cycles_per_us = 500;
    CHECK(pmu_probe());
    arm();
    CHECK_EQ(armed_period, 500 * 1000);

    boot(PMU_MODE_AUTO);
    fake_ops.po_max_period = 300000;
    CHECK(pmu_probe());
    arm();
    CHECK_EQ(armed_period, 300000 / 5 * 4);      /* room for the jitter's +1/4 */
    pmu_test_jitter(true);
    for (int i = 0; i < 1000; i++) {
        fake_overflow = true;
        CHECK(pmu_nmi_claim());
        CHECK(acked_period <= 300000);
    }
}

/* ---- the period's jitter ---- */

/* Every load within +-1/4 of the nominal period, the mean within 0.1%
 * of it over 100000 draws (its standard error is ~0.046%), both edges of
 * the band reached, and no two CPUs drawing the same sequence. */
TEST(jitter_band_and_mean)
{
    boot(PMU_MODE_AUTO);
    fake_cycles_per_us = 1000;                    /* nominal period 1 000 000 */
    CHECK(pmu_probe());
    pmu_test_jitter(true);
    const uint64_t nom = 1000000, lo = nom - nom / 4, hi = nom + nom / 4;
    uint64_t first[2];
    for (unsigned cpu = 0; cpu < 2; cpu++) {
        fake_cpu = cpu;
        arm();
        first[cpu] = armed_period;
        CHECK(armed_period >= lo && armed_period <= hi);
        uint64_t sum = 0, min = UINT64_MAX, max = 0;
        const unsigned n = 100000;
        for (unsigned i = 0; i < n; i++) {
            fake_overflow = true;
            CHECK(pmu_nmi_claim());
            CHECK(acked_reload);
            sum += acked_period;
            if (acked_period < min)
                min = acked_period;
            if (acked_period > max)
                max = acked_period;
        }
        CHECK(min >= lo && max <= hi);
        CHECK(min < lo + nom / 1000 && max > hi - nom / 1000);
        uint64_t mean = sum / n;
        CHECK(mean > nom - nom / 1000 && mean < nom + nom / 1000);
    }
    CHECK(first[0] != first[1]);
    fake_cpu = 0;
}

/* The loads add up to within half a period of the grid of nominal
 * periods from arm, so a window of n periods holds n samples within one,
 * and the drift still wanders the whole period (both edges within 5%
 * of half a period), so every phase of a periodic work is sampled. An
 * unbounded walk strays ~45 periods over these 100000 draws. */
TEST(jitter_drift_stays_within_half_a_period)
{
    boot(PMU_MODE_AUTO);
    fake_cycles_per_us = 1000;                    /* nominal period 1 000 000 */
    CHECK(pmu_probe());
    pmu_test_jitter(true);
    const int64_t nom = 1000000;
    arm();
    int64_t drift = (int64_t)armed_period - nom, lo = drift, hi = drift;
    CHECK(drift >= -nom / 2 && drift <= nom / 2);
    for (unsigned i = 0; i < 100000; i++) {
        fake_overflow = true;
        CHECK(pmu_nmi_claim());
        drift += (int64_t)acked_period - nom;
        CHECK(drift >= -nom / 2 && drift <= nom / 2);
        lo = drift < lo ? drift : lo;
        hi = drift > hi ? drift : hi;
    }
    CHECK(lo < -nom / 2 + nom / 20 && hi > nom / 2 - nom / 20);
    /* A second arm starts a new grid: the first load alone within +-1/4. */
    disarm();
    arm();
    CHECK(armed_period >= (uint64_t)(nom - nom / 4) && armed_period <= (uint64_t)(nom + nom / 4));
}

/* A stale overflow (claimed after disarm) is not reloaded and takes no
 * draw; the test reset's exact period is what the backends' tests see. */
TEST(jitter_off_in_test_reset_and_no_draw_when_disarmed)
{
    boot(PMU_MODE_AUTO);
    fake_ops.po_claims_when_disarmed = true;
    CHECK(pmu_probe());
    arm();
    CHECK_EQ(armed_period, 1000 * PER_US);
    pmu_test_jitter(true);
    disarm();
    fake_overflow = true;
    CHECK(pmu_nmi_claim());
    CHECK(!acked_reload);
    CHECK_EQ(acked_period, 0);                  /* 0: acknowledge only */
}

/* A counter whose rate is wanted but that never moves is given up after
 * the 10 us of the plain probe, not the rate's 200. */
TEST(measured_rate_of_a_dead_counter_costs_only_the_probe_budget)
{
    boot(PMU_MODE_AUTO);
    fake_ops.po_measure_rate = true;
    fake_counts = false;
    uint64_t t0 = fake_cycles;
    CHECK(!pmu_probe());
    CHECK(fake_cycles - t0 >= BUDGET);
    CHECK(fake_cycles - t0 <= BUDGET + 3 * STEP);
    CHECK_STR(pmu_probe_note(), "pmu: fake ctr claimed by fakeid but did not count in 10 us: tick only");
}

TEST(measured_rate_runs_the_budget_and_sets_the_period)
{
    boot(PMU_MODE_AUTO);
    fake_ops.po_measure_rate = true;
    uint64_t t0 = fake_cycles;
    CHECK(pmu_probe());
    /* The whole rate budget, 200 us, though it moved at once. */
    CHECK(fake_cycles - t0 >= BUDGET * PMU_RATE_BUDGET_US / PMU_PROBE_BUDGET_US);
    CHECK(fake_cycles - t0 <= BUDGET * PMU_RATE_BUDGET_US / PMU_PROBE_BUDGET_US + 3 * STEP);
    CHECK(n_read > 800);
    arm();
    CHECK_EQ(armed_period, 1000 * 1000);          /* 200 a reading of 0.2 us: 1000 per us */
    char out[512];
    describe(out, sizeof out);
    static const char want4[] = "pmu claims:   fake claims\n"
        "wiring:       fake\n"
        "probe:        fake counter moved by 200000 in 200 us "
        "(1000 per us: period 1000000 for 1 kHz)\n"
        "counts:       fake\n"
        "profile source: pmu/fake\n";
    CHECK_STR(out, want4);
}

TEST(a_counter_that_moves_once_is_too_slow)
{
    boot(PMU_MODE_AUTO);
    fake_ops.po_measure_rate = true;
    fake_stall = true;
    CHECK(!pmu_probe());
    CHECK_STR(pmu_probe_note(), "pmu: fake ctr claimed by fakeid counted only 0 in 10 us: too slow, tick only");
    CHECK_STR(pmu_source_name(), "tick 100Hz");
}

TEST(a_refused_counter_is_the_tick_with_the_reason)
{
    boot(PMU_MODE_AUTO);
    fake_refusal = "counts, but has no wire";
    CHECK(!pmu_probe());
    CHECK_STR(pmu_probe_note(), "pmu: fake ctr counts, but has no wire: tick only");
    CHECK_STR(pmu_source_name(), "tick 100Hz");
    char out[512];
    describe(out, sizeof out);
    CHECK(strstr(out, "probe:        fake counter moved by 200 in 0 us\n") != NULL);
    CHECK(strstr(out, "counts:") == NULL);        /* only while a counter is the source */
}

/* ---- arming and the armed flag ---- */

static int claimed_inside;
static void nmi_now(void)
{
    fake_overflow = true;
    claimed_inside += pmu_nmi_claim();
}

TEST(overflow_during_arm_is_claimed)
{
    boot(PMU_MODE_AUTO);
    CHECK(pmu_probe());
    claimed_inside = 0;
    during_arm = nmi_now;                         /* after the flag, before the enable */
    arm();
    CHECK_EQ(claimed_inside, 1);
    CHECK_EQ(n_ack, 1);
    CHECK(acked_reload);
    CHECK_EQ(acked_period, armed_period);
    CHECK(pmu_armed());
}

TEST(overflow_during_disarm_is_claimed_and_none_after)
{
    boot(PMU_MODE_AUTO);
    CHECK(pmu_probe());
    arm();
    claimed_inside = 0;
    during_disarm = nmi_now;                      /* stopped, flag not yet clear */
    disarm();
    CHECK_EQ(claimed_inside, 1);
    CHECK(!pmu_armed());
    fake_overflow = true;                         /* the stopped counter still says so */
    CHECK(!pmu_nmi_claim());
    CHECK_EQ(n_ack, 1);
    uint64_t claimed, stale;
    pmu_overflow_counts(&claimed, &stale);
    CHECK_EQ(claimed, 1);
    CHECK_EQ(stale, 0);
}

TEST(stale_overflow_claimed_where_the_backend_owns_it)
{
    boot(PMU_MODE_AUTO);
    fake_ops.po_claims_when_disarmed = true;
    CHECK(pmu_probe());
    arm();
    disarm();
    fake_overflow = true;
    CHECK(pmu_nmi_claim());
    CHECK(!acked_reload);                         /* acknowledged, not reloaded */
    CHECK(!pmu_nmi_claim());                      /* and only once */
    fake_overflow = false;
    arm();
    CHECK(!pmu_nmi_claim());                      /* armed, no overflow: not ours */
    uint64_t claimed, stale;
    pmu_overflow_counts(&claimed, &stale);
    CHECK_EQ(claimed, 1);
    CHECK_EQ(stale, 1);
}

TEST(armed_is_per_cpu)
{
    boot(PMU_MODE_AUTO);
    CHECK(pmu_probe());
    fake_cpu = 2;
    arm();
    CHECK(pmu_armed());
    fake_cpu = 0;
    CHECK(!pmu_armed());
    fake_overflow = true;
    CHECK(!pmu_nmi_claim());
    fake_cpu = 2;
    CHECK(pmu_nmi_claim());
    fake_cpu = 0;
}

TEST(arm_and_disarm_need_interrupts_off)
{
    boot(PMU_MODE_AUTO);
    CHECK(pmu_probe());
    EXPECT_PANIC(pmu_arm(), "irqs_enabled");
    CHECK(!pmu_armed());
    CHECK_EQ(n_arm, 0);
    EXPECT_PANIC(pmu_disarm(), "irqs_enabled");
    CHECK_EQ(n_disarm, 0);
}

TEST(a_cpu_index_past_max_cpus_panics)
{
    boot(PMU_MODE_AUTO);
    CHECK(pmu_probe());
    fake_cpu = MAX_CPUS;
    EXPECT_PANIC(pmu_armed(), "MAX_CPUS");
    unsigned long f = irq_save();
    EXPECT_PANIC(pmu_arm(), "MAX_CPUS");
    irq_restore(f);
    fake_overflow = true;
    EXPECT_PANIC(pmu_nmi_claim(), "MAX_CPUS");
    fake_cpu = 0;
    CHECK(!pmu_armed());                          /* CPU 0's flag untouched */
}

TEST(test_reset_is_a_fresh_boot)
{
    boot(PMU_MODE_ASSUME);
    fake_refusal = "counts, but has no wire";
    CHECK(!pmu_probe());
    CHECK(pmu_probe_note() != NULL);
    pmu_test_reset();
    CHECK(pmu_probe_note() == NULL);
    fake_refusal = NULL;
    CHECK(pmu_probe());                           /* the probe runs again */
    CHECK_EQ(n_offer, 2);
    CHECK_EQ(last_assume, 0);                     /* and the mode is auto again */
    arm();
    fake_overflow = true;
    CHECK(pmu_nmi_claim());
    pmu_test_reset();
    CHECK(!pmu_armed());
    CHECK_STR(pmu_source_name(), "tick 100Hz");
    uint64_t claimed, stale;
    pmu_overflow_counts(&claimed, &stale);
    CHECK_EQ(claimed, 0);
}
