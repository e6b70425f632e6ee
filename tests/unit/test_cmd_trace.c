// LINK: kernel/prof/sample.c kernel/prof/trace.c kernel/prof/trace_hooks.c kernel/prof/ring.c kernel/prof/session.c kernel/prof/offcpu.c kernel/prof/offreport.c kernel/prof/wall.c kernel/prof/stream.c kernel/prof/stream_encode.c kernel/prof/report.c kernel/prof/lockreport.c kernel/prof/export.c kernel/prof/fold.c kernel/prof/fold_order.c kernel/prof/quantile.c kernel/prof/fold_index.c kernel/cmd/profile.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c lib/sha256.c kernel/symtab.c tests/unit/fake_profiler.c kernel/stacks.c kernel/stacktrace.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c lib/printf.c lib/parse.c uapi/profile_raw.c kernel/cmd/profile_heap.c kernel/prof/heapview.c mm/heapprof.c tests/unit/fake_heap_table.c kernel/cmd/profile_stream.c uapi/stream_ctl.c kernel/cmd/profile_say.c kernel/cmd/trace.c kernel/irqname.c uapi/trace_raw.c
/* tests/unit/test_cmd_trace.c: `trace` (kernel/cmd/trace.c), the words
 * over the profiler core's trace: a fake window in which the real hooks
 * (kernel/prof/trace_hooks.h) record switches, a wake inside a device's
 * interrupt and a tick's slice on two CPUs under a fake clock (one unit
 * a ns), then the command's timehist rows, map and summary as printed,
 * and its refusals. */
#include "test.h"
#include "kernel/irqname.h"
#include "fake_hal.h"
#include "fake_profiler.h"
#include "kernel/prof/session.h"
#include "kernel/prof/trace_hooks.h"
#include "uapi/trace_raw.h"

/* cpu 0: burn (5) runs from the start, waits on q at +1 us for burn
 * (7); 5 is woken at +2 us inside interrupt 33 on cpu 1, where netload
 * (12) runs; 7 is preempted at +2.5 us for 5; a tick's slice of 0.8 us
 * at +3 us; 5 sleeps at +4 us, for 7. The window ends at +10 ms; cpus 2
 * and 3 record nothing. */
static void win_trace(void)
{
    uint64_t t0 = prof_trace_win.tw_t0;
    struct prof_off o = { 0 };
    fake_cycles_step = 0;
    fake_run(0, 5);
    prof_off_wait(&o, PROF_WHY_WAITQ, "q");
    fake_cycles = t0 + 1000;
    prof_trace_sched_switch(5, &o, false, false, false, false, 7);
    fake_run(1, 12);
    fake_cycles = t0 + 2000;
    prof_trace_irq_enter(33, PROF_TRACE_IRQ_DEVICE);
    prof_trace_wake(5, 0);
    prof_trace_irq_exit();
    fake_run(0, 7);
    fake_cycles = t0 + 2500;
    prof_trace_sched_switch(7, &o, false, true, true, false, 5);
    fake_cycles = t0 + 3000;
    prof_trace_irq_enter(240, PROF_TRACE_IRQ_TICK);
    fake_cycles = t0 + 3800;
    prof_trace_irq_exit();
    fake_run(0, 5);
    prof_off_wait(&o, PROF_WHY_SLEEP, NULL);
    fake_cycles = t0 + 4000;
    prof_trace_sched_switch(5, &o, false, false, false, false, 7);
    fake_cycles = t0 + 10000000;
}

static int run_trace(const char *cmd)
{
    reset();
    irqname_reset();
    room(64);
    window_fn = win_trace;
    return run_cmd(cmd);
}

TEST(trace_prints_the_timehist_and_summary)
{
    CHECK_EQ(run_trace("trace 10"), 0);
    CHECK(strstr(out, "trace: 10.000 ms from ") == out);
    /* 7 was runnable from before the window: its delay counts from the
     * start. 5's second run was woken by interrupt 33, not by netload;
     * no device named 33, so its number stands. */
    CHECK(strstr(out, "\n       0.001 [0000]  burn[5]                     0.000      0.000"
                      "      0.001+  waitq q => burn[7]\n"
                      "       0.002 [0000]  burn[7]                     0.000      0.001"
                      "      0.001   preempted => burn[5]\n"
                      "       0.004 [0000]  burn[5]                     0.001      0.000"
                      "      0.001   sleep => burn[7] (woken by irq device 33 on CPU 1, "
                      "during netload[12])\n"
                      "3 switches shown; per cpu (+: ran from the window's start):\n"
                      "cpu 0: busy 100.0% (10.000 ms), idle 0.000 ms, interrupts 0.0% "
                      "(0.000 ms), switches 3, wakes 0, samples 0, dropped 0 (0 nested)\n"
                      "  slices: tick 1 (0.800-0.800 us)\n"
                      "  longest: burn[7] 9.997 ms (2 runs, max delay 0.001 ms); "
                      "burn[5] 0.002 ms (2 runs, max delay 0.000 ms)\n"
                      "cpu 1: busy 100.0% (10.000 ms), idle 0.000 ms, interrupts 0.0% "
                      "(0.000 ms), switches 0, wakes 1, samples 0, dropped 0 (0 nested)\n"
                      "  slices: device 1 (0.000-0.000 us)\n"
                      "  longest: netload[12] 10.000 ms (1 runs, max delay 0.000 ms)\n"
                      "cpu 2: nothing recorded in the window, dropped 0 (0 nested)\n"
                      "cpu 3: nothing recorded in the window, dropped 0 (0 nested)\n") != NULL);
}

/* Where the vector's device registered a name, the row says it. */
TEST(trace_names_the_interrupts_device)
{
    reset();
    irqname_reset();
    CHECK_EQ(irqname_set(33, "virtio-net"), 0);
    room(64);
    window_fn = win_trace;
    CHECK_EQ(run_cmd("trace 10"), 0);
    CHECK(strstr(out, "      0.001   sleep => burn[7] (woken by irq virtio-net on CPU 1, "
                      "during netload[12])\n") != NULL);
    CHECK(strstr(out, "irq device") == NULL);
    /* The slices are still summed by class. */
    CHECK(strstr(out, "\n  slices: device 1 (0.000-0.000 us)\n") != NULL);
    irqname_reset();
}

/* A CPU list keeps only its rows, while every CPU is still summed. */
TEST(trace_cpu_list_keeps_its_rows)
{
    CHECK_EQ(run_trace("trace 10 1,2"), 0);
    CHECK(strstr(out, "[0000]") == NULL);
    CHECK(strstr(out, "\n0 switches shown; per cpu") != NULL);
    CHECK(strstr(out, "\ncpu 0:") == NULL);
    CHECK(strstr(out, "\ncpu 1: busy 100.0% (10.000 ms)") != NULL);
}

TEST(trace_map_marks_the_cpu_that_switched)
{
    CHECK_EQ(run_trace("trace 10 map"), 0);
    CHECK(strstr(out, "\nmap: a column per cpu, * the cpu that switched, . idle\n"
                      " *A0                     0.001 ms  A0 => burn[7]\n"
                      " *B0                     0.002 ms  B0 => burn[5]\n"
                      " *A0                     0.004 ms\n") != NULL);
}

/* raw: every event in uapi/trace_raw.h's grammar, in time order across
 * the CPUs, each slice at its entry, the wake made inside interrupt 33
 * naming it by its device, as the parser reads it back. */
TEST(trace_raw_prints_the_grammar)
{
    reset();
    irqname_reset();
    CHECK_EQ(irqname_set(33, "virtio-net"), 0);
    room(64);
    window_fn = win_trace;
    CHECK_EQ(run_cmd("trace 10 raw"), 0);
    const char *want = "# sonde trace build-id=0123456789abcdef0123456789abcdef01234567 cpus=4 "
                   "ms=10 events=6 dropped=0,0,0,0\n"
                   "S 1000 0 5 burn waitq:q 7 burn\n"
                   "W 2000 1 12 netload 5 burn 0 irq=33:device:virtio-net\n"
                   "I 2000 1 2000 33 device virtio-net 12\n"
                   "S 2500 0 7 burn preempted 5 burn\n"
                   "I 3000 0 3800 240 tick 7\n"
                   "S 4000 0 5 burn sleep 7 burn\n";
    if (strcmp(out, want) != 0)
        printf("  printed:\n%s", out);
    CHECK(strcmp(out, want) == 0);
    struct traw_header h;
    char err[TRAW_ERR_MAX] = "";
    CHECK_EQ(traw_parse(out, strlen(out), &h, NULL, NULL, err, sizeof err), 0);
    CHECK_STR(err, "");
    /* A CPU list keeps its events; the header still has every CPU. */
    reset();
    room(64);
    window_fn = win_trace;
    CHECK_EQ(run_cmd("trace 10 1 raw"), 0);
    CHECK(strstr(out, " events=2 dropped=0,0,0,0\nW 2000 1 ") != NULL);
    CHECK_EQ(traw_parse(out, strlen(out), &h, NULL, NULL, err, sizeof err), 0);
    irqname_reset();
}

/* A profile asked for while a trace runs is refused as busy, as any
 * second window is: the two never share the rings. */
static int nested_rc;
static struct prof_err nested_err;

static void win_trace_then_profile(void)
{
    win_trace();
    char buf[256];
    struct buf_printer np;
    buf_printer_init(&np, buf, sizeof buf);
    struct prof_window_spec ws = { .ws_kind = PROF_KIND_CPU, .ws_ms = 10, .ws_pid = PROF_ALL,
                                   .ws_chains = 8, .ws_format = PROF_TEXT };
    nested_rc = prof_window_run(&ws, &np.pr, &nested_err);
}

TEST(trace_and_profile_exclude_each_other)
{
    reset();
    room(64);
    window_fn = win_trace_then_profile;
    CHECK_EQ(run_cmd("trace 10"), 0);
    CHECK_EQ(nested_rc, PROF_EBUSY);
    CHECK_EQ(nested_err.pe_why, PROF_NOT_BUSY);
    CHECK(strstr(out, "3 switches shown") != NULL);
}

TEST(trace_refuses_bad_input)
{
    static const struct { const char *cmd, *said; } bad[] = {
        { "trace 0", "trace: window 0 out of range (1-2000 ms)\n" },
        { "trace 2001", "trace: window 2001 out of range (1-2000 ms)\n" },
        { "trace soon", "trace: 'soon' is not a window (1-2000 ms)\n" },
        { "trace 10 7", "trace: cpu '7' is not an online cpu (0-3)\n" },
        { "trace 10 0,", "trace: a cpu list ends with a cpu, not ','\n" },
        { "trace 10 0,,1", "trace: cpu '' is not an online cpu (0-3)\n" },
        { "trace map 10", "trace: 'map' must be the last argument" },
        { "trace 10 0 1 map", "trace: too many arguments" },
        { "trace raw 10", "trace: 'raw' must be the last argument, and only one of map and raw" },
        { "trace 10 map raw", "trace: 'map' must be the last argument, and only one of map and raw" },
    };
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        reset();
        unsigned before = sleeps;
        CHECK_EQ(run_cmd(bad[i].cmd), 1);
        CHECK(strstr(out, bad[i].said) == out);
        CHECK_EQ(sleeps, before);       /* refused before anything started */
    }
}
