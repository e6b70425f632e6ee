// LINK: kernel/prof/sample.c kernel/prof/ring.c kernel/prof/session.c kernel/prof/offcpu.c kernel/prof/offreport.c kernel/prof/wall.c kernel/prof/stream.c kernel/prof/report.c kernel/prof/export.c kernel/prof/fold.c kernel/cmd/profile.c uapi/profile_stream.c kernel/symtab.c tests/unit/fake_profiler.c lib/printf.c lib/parse.c uapi/profile_raw.c
/* tests/unit/test_prof_sample.c: the sample path (kernel/prof/sample.c)
 * driven through prof_tick and prof_nmi with fake trap frames during a
 * fake window (sleep_ms runs a callback): re-entry, the counter's arming
 * from the tick, the idle tick, entry with interrupts on. */
#include "test.h"
#include "fake_hal.h"
#include "fake_profiler.h"
#include <stdlib.h>

#include "hal/cpu.h"
#include "hal/irq.h"
#include "kernel/prof/ring.h"
#include "kernel/prof/sample.h"
#include "kernel/prof/session.h"
#include "kernel/shell.h"
#include "lib/printf.h"

TEST(sample_reentry_is_dropped_not_nested)
{
    reset();
    pmu_claim = true;
    nested_ret = false;
    window_fn = win_nested;
    CHECK_EQ(run_cmd("profile 10"), 0);
    CHECK(nested_ret);
    CHECK(strstr(out, "\n1 samples on 1 cpus, 1 dropped, source tick 100Hz\n") != NULL);
    CHECK(strstr(out, "\n100.0% 1 burn_mid+0x0\n") != NULL);
}

TEST(sample_counter_arms_on_tick_and_tick_stops_sampling)
{
    reset();
    pmu_usable = true;
    pmu_name = "pmu/nmi intel fixed-ctr1";
    window_fn = win_counter;
    CHECK_EQ(run_cmd("profile 10"), 0);
    CHECK_EQ(arms_after_first_tick, 1);
    CHECK_EQ(arms, 1);
    CHECK(!nmi_ret_foreign);
    CHECK(nmi_ret_ours);
    CHECK(strstr(out, "\n2 samples on 2 cpus, 0 dropped, source pmu/nmi intel fixed-ctr1\n"
                      "sample cost") != NULL);
    CHECK(strstr(out, "\n100.0% 2 burn_mid+0x4\n") != NULL);

    /* After Stop: the next tick disarms, once; an overflow still in
     * flight is claimed but not recorded. */
    CHECK(armed[0]);
    tick(0, 5, 0x3000, NULL);
    CHECK(!armed[0]);
    CHECK_EQ(disarms, 1);
    tick(0, 5, 0x3000, NULL);
    CHECK_EQ(disarms, 1);
    CHECK(nmi(1, 5, 0x3000, NULL));
    pmu_claim = false;
    CHECK(!nmi(1, 5, 0x3000, NULL));
    buf_printer_init(&bp, out, sizeof out);
    CHECK_EQ(prof_report_again(8, &bp.pr), 0);
    CHECK(strstr(out, "\n2 samples on 2 cpus,") != NULL);
}

TEST(sample_idle_tick_touches_nothing)
{
    reset();
    tick(0, 5, 0x3000, NULL);
    tick(1, 5, 0x3000, NULL);
    CHECK_EQ(arms + disarms, 0);
    /* Not active: an NMI is claimed or not by the counter alone. */
    CHECK(!nmi(0, 5, 0x3000, NULL));
}

/* Called with interrupts on, either entry point could race the sampler on
 * its own CPU: the precondition is checked, not assumed. */
TEST(sample_entry_with_interrupts_on_panics)
{
    reset();
    struct trap_frame tf = frame(0x3000, NULL);
    CHECK(irqs_enabled());
    EXPECT_PANIC(prof_tick(&tf), "irqs_enabled_inline()");
    EXPECT_PANIC(prof_nmi(&tf), "irqs_enabled_inline()");
    CHECK_EQ(arms + disarms, 0);
}

/* prof_emit, the door of the producers other than the sampler: only while
 * the gate is open to the record's kind, through the pid filter, never
 * for the CPU's own kind, a drop when the ring is full or the guard is
 * taken; and the counter's share of a CPU's records leaves them out. */
TEST(emit_other_kinds_through_the_gate)
{
    reset();
    room(256);
    struct prof_record r = { .pr_pid = 5, .pr_depth = 1, .pr_kind = PROF_KIND_MAX,
                             .pr_weight = 4096, .pr_frames = { 0x301a } };
    fake_cpu = 1;
    CHECK(!prof_emit(&r));                          /* gate closed */
    prof_ring_open(PROF_ALL, PROF_GATE_CPU, false);
    CHECK(!prof_emit(&r));                          /* open, not to this kind */
    prof_ring_close();
    prof_ring_open(PROF_ALL, PROF_GATE_CPU | PROF_GATE_KIND(PROF_KIND_MAX), false);
    CHECK(prof_emit(&r));
    struct prof_record cpu = r;
    cpu.pr_kind = PROF_KIND_CPU;
    CHECK(!prof_emit(&cpu));                        /* the sampler's kind: not here */
    CHECK_EQ(fake_irq_depth, 0);                    /* interrupts restored */
    tick(1, 5, 0x3010, NULL);                       /* a CPU sample beside it */
    uint32_t first;
    CHECK_EQ(prof_ring_avail(1, &first), 2);
    CHECK_EQ(prof_ring_at(1, first)->pr_weight, 4096);
    CHECK_EQ(prof_cpus[1].pc_other, 1);
    CHECK_EQ(prof_cpus[1].pc_from_tick, 1);
    prof_ring_test_set_inside(1, true);             /* a producer inside: nested */
    uint32_t drops = prof_ring_drops(1);
    CHECK(!prof_emit(&r));
    CHECK_EQ(prof_ring_drops(1), drops + 1);
    prof_ring_test_set_inside(1, false);
    prof_ring_close();
    prof_ring_open(7, PROF_GATE_KIND(PROF_KIND_MAX), false);
    CHECK(!prof_emit(&r));                          /* pid 5 filtered out */
    r.pr_pid = 7;
    for (unsigned i = 0; i < prof_ring_cap(1); i++)
        CHECK(prof_emit(&r));
    drops = prof_ring_drops(1);
    CHECK(!prof_emit(&r));                          /* full: a drop */
    CHECK_EQ(prof_ring_drops(1), drops + 1);
    prof_ring_close();
    fake_cpu = 0;
}
