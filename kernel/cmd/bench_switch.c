/* kernel/cmd/bench_switch.c: `bench_switch [trace]`, what off-CPU
 * profiling (or, with trace, the scheduling trace) costs the scheduler
 * (bench/offcpu.py and bench/trace.py boot under -icount shift=0, where
 * the clock counts guest instructions).
 *
 * Three workloads, each of two tasks on this CPU, each run first with the
 * gate closed (off-CPU profiling off) and then under an off-CPU window
 * (`profile latency`, its report kept only for its drop count), or with
 * trace under a trace's window (its records kept only for their count):
 *
 * - yield: the tasks yield to each other, one switch per yield and no
 *   wake: a round (a yield of the first task until it runs again) is two
 *   switches and the other task's loop body.
 * - wake: they hand a turn to each other through the wait queue
 *   "bench-pp" with no work between: a hand-off is a wake and a switch.
 * - pingpong: the same, with a fixed quantum of work before each hand-off,
 *   sized at start so that with profiling off the pair switches 10,000
 *   times a second: its slowdown is what profiling costs such a workload.
 *
 * The first task times every round with cycles_now() and files it under
 * the gate's state at its start and end (a round across the gate's move
 * is not counted). The minimum round is the bare path (no tick in it);
 * the mean, the workload's pace with everything.
 *
 * Commands: prefix cmd_ and bench_. */
#include "hal/cpu.h"
#include "kernel/prof/offcpu.h"
#include "kernel/prof/ring.h"
#include "kernel/cmd/profile.h"
#include "kernel/prof/session.h"
#include "kernel/sched.h"
#include "kernel/shell.h"
#include "lib/printf.h"
#include "lib/string.h"

/* Each phase, closed and then open. An open window's records must fit
 * the reserved ring (PROF_RESERVE_MAX), for a dropped record costs less
 * than a written one: the yield loop writes one a switch, ~55,000 in
 * 20 ms of guest time, the wake phase three a hand-off, ~35,000 in 10 ms.
 * The report's drop count is printed to show none were dropped. */
static const unsigned bench_sw_ms[] = { 20, 10, 20 };
#define BENCH_SW_RATE 10000         /* the pingpong's switches a second, off */

struct bench_sw_stat {
    uint64_t n, sum, min;
};

enum bench_sw_kind { BENCH_SW_YIELD, BENCH_SW_WAKE, BENCH_SW_PINGPONG };

static struct {
    volatile bool stop;
    volatile unsigned running;
    volatile unsigned turn;         /* wake, pingpong: 0 the timer's, 1 the partner's */
    enum bench_sw_kind kind;
    bool trace;                     /* the window a trace's, not an off-CPU one */
    uint64_t work;                  /* pingpong: iterations of bench_sw_work a hand-off */
    struct bench_sw_stat st[2];     /* [0] gate closed, [1] open */
} bsw;

static struct waitq bench_sw_wq = WAITQ_INIT("bench-pp");

/* The pingpong's work: n iterations the compiler cannot drop. */
static __attribute__((noinline)) void bench_sw_work(uint64_t n)
{
    for (volatile uint64_t i = 0; i < n; i++)
        ;
}

static bool bench_sw_my_turn(void *arg)
{
    return bsw.turn == (unsigned)(uintptr_t)arg || bsw.stop;
}

/* One hand-off of me's: its work, the turn passed (a wake), then the wait
 * for it to come back (a switch). */
static void bench_sw_handoff(unsigned me)
{
    bench_sw_work(bsw.work);
    bsw.turn = me ^ 1;
    waitq_wake_all(&bench_sw_wq);
    waitq_wait(&bench_sw_wq, bench_sw_my_turn, (void *)(uintptr_t)me);
}

static void bench_sw_partner(void *arg)
{
    (void)arg;
    if (bsw.kind != BENCH_SW_YIELD)     /* the timer's turn first */
        waitq_wait(&bench_sw_wq, bench_sw_my_turn, (void *)1);
    while (!bsw.stop) {
        if (bsw.kind == BENCH_SW_YIELD)
            yield();
        else
            bench_sw_handoff(1);
    }
    __atomic_fetch_sub(&bsw.running, 1, __ATOMIC_RELEASE);
}

/* Whether the phase's window is open: read outside the timed round. */
static bool bench_sw_open(void)
{
    return bsw.trace ? (prof_ring_gate() & PROF_GATE_TRACE) != 0 : prof_off_on();
}

static void bench_sw_timer(void *arg)
{
    (void)arg;
    while (!bsw.stop) {
        bool on = bench_sw_open();
        uint64_t t0 = cycles_now();
        if (bsw.kind == BENCH_SW_YIELD)
            yield();
        else
            bench_sw_handoff(0);
        uint64_t d = cycles_now() - t0;
        if (on != bench_sw_open())
            continue;               /* the gate moved in the round */
        struct bench_sw_stat *s = &bsw.st[on];
        s->n++;
        s->sum += d;
        if (d < s->min)
            s->min = d;
    }
    __atomic_fetch_sub(&bsw.running, 1, __ATOMIC_RELEASE);
}

/* Iterations of bench_sw_work that, with a hand-off's own cost (a round
 * of the wake phase, off), make one hand-off last 1/BENCH_SW_RATE s. */
static uint64_t bench_sw_quantum(uint64_t handoff)
{
    const uint64_t k = 100000;
    uint64_t t0 = cycles_now();
    bench_sw_work(k);
    uint64_t per_k = cycles_now() - t0;
    uint64_t want = cycles_per_us() * 1000000 / BENCH_SW_RATE;
    if (per_k == 0 || want <= handoff)
        return 0;
    return (want - handoff) * k / per_k;
}

/* A trace's window, read: its records and drops, as a line for the
 * window's line. */
static void bench_sw_read(const struct prof_snapshot *s, void *arg)
{
    uint64_t recs = 0;
    for (unsigned i = 0; i < MAX_CPUS; i++)
        recs += s->ps_count[i];
    struct printer *p = arg;
    pr_printf(p, "trace over %u ms, %lu records, %u dropped\n", s->ps_ms, (unsigned long)recs,
              (unsigned)s->ps_dropped);
}

/* One phase: kind's two tasks, bench_sw_ms[kind] with the gate closed,
 * then as long under an off-CPU window (or a trace's), whose report's
 * first line goes to line. */
static bool bench_sw_phase(enum bench_sw_kind kind, char *line, unsigned n, struct printer *p)
{
    char sink[256];
    struct buf_printer bp;
    buf_printer_init(&bp, sink, sizeof sink);
    bsw.stop = false;
    bsw.running = 2;
    bsw.turn = 0;
    bsw.kind = kind;
    for (int i = 0; i < 2; i++)
        bsw.st[i] = (struct bench_sw_stat){ 0, 0, UINT64_MAX };
    int cpu = (int)cpu_index();
    if (!task_spawn("bench-sw", bench_sw_timer, 0, cpu, 0) ||
        !task_spawn("bench-sw2", bench_sw_partner, 0, cpu, 0)) {
        bsw.stop = true;
        pr_puts(p, "bench_switch: no memory for its tasks\n");
        return false;
    }
    unsigned ms = bench_sw_ms[kind];
    sleep_ms(ms);
    struct prof_window_spec ws = { .ws_kind = PROF_KIND_OFFCPU, .ws_view = PROF_VIEW_LATENCY,
                                   .ws_ms = ms, .ws_pid = PROF_ALL, .ws_chains = 1,
                                   .ws_format = PROF_TEXT };
    if (bsw.trace) {
        ws.ws_kind = PROF_KIND_TRACE;
        ws.ws_read = bench_sw_read;
        ws.ws_arg = &bp.pr;
    }
    struct prof_err e;
    int rc = prof_window_run(&ws, &bp.pr, &e);
    if (rc != PROF_OK && rc != PROF_ENOMEM)
        cmd_profile_say("bench_switch", &e, &bp.pr);
    bsw.stop = true;
    waitq_wake_all(&bench_sw_wq);
    while (__atomic_load_n(&bsw.running, __ATOMIC_ACQUIRE))
        sleep_ms(1);
    if (rc != PROF_OK) {
        pr_printf(p, "bench_switch: the %s window failed: %s\n", bsw.trace ? "trace's" : "off-CPU",
                  sink);
        return false;
    }
    char *nl = strchr(sink, '\n');
    if (nl)
        *nl = 0;
    strlcpy(line, sink, n);
    return true;
}

static void bench_sw_print(const char *what, const char *state, const struct bench_sw_stat *s,
                           const char *per, struct printer *p)
{
    /* sum: the mean to a fraction of a unit, for a clock whose unit is
     * coarse (arm64's 8 ns), where the minimum is a multiple of it. */
    pr_printf(p, "%s %s: rounds %lu min %lu mean %lu sum %lu %s per round (%s)\n", what,
              state, (unsigned long)s->n, (unsigned long)(s->n ? s->min : 0),
              (unsigned long)(s->n ? s->sum / s->n : 0), (unsigned long)s->sum, cycles_unit(),
              per);
}

static int cmd_bench_switch(int argc, char **argv, struct printer *p)
{
    if (argc > 2) {
        pr_puts(p, "bench_switch: too many arguments (bench_switch [trace])\n");
        return 1;
    }
    if (argc == 2 && strcmp(argv[1], "trace") != 0) {
        pr_printf(p, "bench_switch: '%s' is not a window (trace, or none for off-CPU)\n",
                  argv[1]);
        return 1;
    }
    bsw.trace = argc == 2;
    /* The open window's rings big enough for every switch of it. */
    struct prof_err e;
    if (prof_session_reserve(PROF_RESERVE_MAX, &e) != PROF_OK) {
        cmd_profile_say("bench_switch", &e, p);
        return 1;
    }
    static const struct {
        enum bench_sw_kind kind;
        const char *name, *per;
    } phases[] = {
        { BENCH_SW_YIELD, "switch", "2 switches" },
        { BENCH_SW_WAKE, "wake", "2 hand-offs, each a wake and a switch" },
        { BENCH_SW_PINGPONG, "pingpong", "2 hand-offs, each work, a wake and a switch" },
    };
    bsw.work = 0;
    for (unsigned i = 0; i < sizeof phases / sizeof phases[0]; i++) {
        char line[128];
        if (!bench_sw_phase(phases[i].kind, line, sizeof line, p))
            return 1;
        bench_sw_print(phases[i].name, "off", &bsw.st[0], phases[i].per, p);
        bench_sw_print(phases[i].name, "on", &bsw.st[1], phases[i].per, p);
        pr_printf(p, "%s window: %s\n", phases[i].name, line);
        if (phases[i].kind == BENCH_SW_WAKE) {
            bsw.work = bench_sw_quantum(bsw.st[0].n ? bsw.st[0].min / 2 : 0);
            pr_printf(p, "pingpong work: %lu iterations a hand-off, for %u switches/s off\n",
                      (unsigned long)bsw.work, BENCH_SW_RATE);
        }
    }
    pr_printf(p, "clock: %lu %s per us\n", (unsigned long)cycles_per_us(), cycles_unit());
    return 0;
}

SHELL_COMMAND(bench_switch, "bench_switch", "bench_switch [trace]  a context switch's cost with off-CPU"
              " profiling (or the trace) off and on",
              cmd_bench_switch);
