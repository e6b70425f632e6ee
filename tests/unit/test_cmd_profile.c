// LINK: kernel/prof/sample.c kernel/prof/trace.c kernel/prof/trace_hooks.c kernel/prof/ring.c kernel/prof/session.c kernel/prof/offcpu.c kernel/prof/offreport.c kernel/prof/wall.c kernel/prof/stream.c kernel/prof/stream_encode.c kernel/prof/report.c kernel/prof/lockreport.c kernel/prof/export.c kernel/prof/fold.c kernel/prof/fold_order.c kernel/prof/quantile.c kernel/prof/fold_index.c kernel/cmd/profile.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c lib/sha256.c kernel/symtab.c tests/unit/fake_profiler.c kernel/stacks.c kernel/stacktrace.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c lib/printf.c lib/parse.c uapi/profile_raw.c kernel/cmd/profile_heap.c kernel/prof/heapview.c mm/heapprof.c tests/unit/fake_heap_table.c kernel/cmd/profile_stream.c uapi/stream_ctl.c kernel/cmd/profile_say.c kernel/irqname.c
/* tests/unit/test_cmd_profile.c: the `profile` command
 * (kernel/cmd/profile.c): its arguments, defaults and errors, each bad
 * one named before anything starts, and the words of the core's refusals
 * it passes on (busy, no memory, the bench's reserve). */
#include "test.h"
#include "fake_hal.h"
#include "fake_profiler.h"
#include <stdlib.h>

#include "hal/cpu.h"
#include "hal/irq.h"
#include "kernel/prof/ring.h"
#include "kernel/prof/sample.h"
#include "kernel/cmd/profile.h"
#include "kernel/prof/session.h"
#include "kernel/shell.h"
#include "lib/printf.h"

/* ---- the command's arguments ---------------------------------------- */

struct bad { const char *line, *msg; };

TEST(command_errors_start_nothing)
{
    static const struct bad bad[] = {
        { "profile 0", "profile: window 0 out of range (1-2000 ms)\n" },
        { "profile 2001", "profile: window 2001 out of range (1-2000 ms)\n" },
        { "profile abc", "profile: 'abc' is not a window (1-2000 ms), folded or raw\n" },
        { "profile -5", "profile: '-5' is not a window (1-2000 ms), folded or raw\n" },
        { "profile 500 all 0", "profile: chains 0 out of range (1-128)\n" },
        { "profile 500 all 129", "profile: chains 129 out of range (1-128)\n" },
        { "profile 500 all x", "profile: 'x' is not a chain count (1-128), folded or raw\n" },
        { "profile 500 all xyz", "profile: 'xyz' is not a chain count (1-128), folded or raw\n" },
        { "profile 500 all Raw", "profile: 'Raw' is not a chain count (1-128), folded or raw\n" },
        { "profile 500 raw 3", "profile: 'raw' must be the last argument (usage: profile "
                               "[ms] [pid|all] [chains|folded|raw])\n" },
        { "profile folded 500", "profile: 'folded' must be the last argument (usage: profile "
                                "[ms] [pid|all] [chains|folded|raw])\n" },
        { "profile 0 raw", "profile: window 0 out of range (1-2000 ms)\n" },
        { "profile 500 99999 folded", "profile: pid 99999: no such task\n" },
        { "profile 500 all raw x", "profile: too many arguments (usage: profile "
                                   "[ms] [pid|all] [chains|folded|raw])\n" },
        { "profile 500 99999", "profile: pid 99999: no such task\n" },
        { "profile 500 4294967301", "profile: pid 4294967301: no such task\n" },
        { "profile 500 xyz", "profile: 'xyz' is not a pid, all, folded or raw\n" },
        { "profile 500 all 3 4", "profile: too many arguments (usage: profile "
                                 "[ms] [pid|all] [chains|folded|raw])\n" },
    };
    reset();
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        unsigned s0 = sleeps, p0 = probes;
        CHECK(run_cmd(bad[i].line) != 0);
        CHECK_STR(got(), bad[i].msg);
        CHECK_EQ(sleeps, s0);
        CHECK_EQ(probes, p0);
    }
}

static void win_ten_chains(void)
{
    static struct fstack s[10];
    for (unsigned i = 0; i < 10; i++) {
        s[i].n = 1;
        s[i].ret[0] = 0x1000 + i;
        for (unsigned k = 0; k <= i; k++)
            tick(k % 4, 5, 0x3000, &s[i]);
    }
}


/* A window sleeps a whole number of ticks (10 ms), the nearest to what
 * was asked and at least one: timed in ns from anywhere in a tick, it
 * ended up to a tick late. */
TEST(window_is_the_nearest_whole_number_of_ticks)
{
    static const struct { const char *cmd; uint64_t ms; } w[] = {
        { "profile 1", 10 }, { "profile 4", 10 }, { "profile 15", 20 },
        { "profile 1004", 1000 }, { "profile 1005", 1010 }, { "profile 2000", 2000 },
    };
    for (unsigned i = 0; i < sizeof w / sizeof w[0]; i++) {
        reset();
        window_fn = win_ten_chains;
        CHECK_EQ(run_cmd(w[i].cmd), 0);
        CHECK_EQ(last_sleep_ms, w[i].ms);
    }
}

TEST(command_defaults_and_spec_examples)
{
    reset();
    window_fn = win_ten_chains;
    CHECK_EQ(run_cmd("profile"), 0);
    CHECK_EQ(last_sleep_ms, 1000);
    CHECK_EQ(count_leaves(), 8);
    CHECK(strstr(out, "\n18.2% 10 burn_inner+0x0\n        <- burn_outer+0x9\n") != NULL);

    reset();
    window_fn = win_ten_chains;
    CHECK_EQ(run_cmd("profile 2000 all 3"), 0);
    CHECK_EQ(last_sleep_ms, 2000);
    CHECK_EQ(count_leaves(), 3);
    static const char head[] =
        "profiled 2000 ms\n55 samples on 4 cpus, 0 dropped, source tick 100Hz\n";
    CHECK(strncmp(out, head, strlen(head)) == 0);

    reset();
    window_fn = win_ten_chains;
    CHECK_EQ(run_cmd("profile 500 12"), 0);
    CHECK_EQ(last_sleep_ms, 500);
    CHECK(strstr(out, "no samples for pid 12") != NULL);

    reset();
    window_fn = win_ten_chains;
    CHECK_EQ(run_cmd("profile 1 all 128"), 0);
    CHECK_EQ(count_leaves(), 10);
}

/* ---- the core's messages, as the command passes them on -------------- */

static char busy_out[256];
static void win_busy(void)
{
    tick(0, 5, 0x3000, NULL);
    struct buf_printer b2;
    buf_printer_init(&b2, busy_out, sizeof busy_out);
    char a0[] = "profile", a1[] = "1";
    char *argv[] = { a0, a1 };
    CHECK(cmd_fn("profile")(2, argv, &b2.pr) != 0);
}

TEST(command_busy_says_why)
{
    reset();
    window_fn = win_busy;
    CHECK_EQ(run_cmd("profile 100"), 0);
    CHECK_STR(busy_out, "profile: busy\n");
    /* A sampler of the last run still inside its sample. */
    prof_ring_test_set_inside(2, true);
    CHECK(run_cmd("profile 10") != 0);
    CHECK_STR(got(), "profile: busy (cpu 2 is still finishing a sample of the last run)\n");
    prof_ring_test_set_inside(2, false);
    CHECK_EQ(run_cmd("profile 10"), 0);
    CHECK(strncmp(got(), "profiled 10 ms\n", 15) == 0);
}

TEST(command_no_memory_names_the_cpu)
{
    reset();
    CHECK_EQ(run_cmd("profile 10"), 0);  /* cpus 0-3 have buffers */
    fake_ncpus = 6;
    fake_online = 0x2f;                  /* cpu 5 came online */
    kmalloc_fail = 1;
    CHECK_EQ(run_cmd("profile 10"), 1);
    CHECK(strncmp(out, "profile: no memory for cpu 5's sample buffer (", 46) == 0);
}

/* prof_reserve is the bench's (kernel/cmd/bench.c), its words the same. */
TEST(command_reserve_range_message)
{
    reset();
    buf_printer_init(&bp, out, sizeof out);
    struct prof_err e;
    CHECK_EQ(prof_session_reserve(0, &e), PROF_EINVAL);
    cmd_profile_say("profile", &e, &bp.pr);
    CHECK_STR(got(), "profile: reserve 0 out of range (1-65536 records)\n");
}
