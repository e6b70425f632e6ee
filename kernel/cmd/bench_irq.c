/* kernel/cmd/bench_irq.c: `bench_irq`, what the trace costs an interrupt
 * (bench/trace.py boots under -icount shift=0 at -smp 1, where the clock
 * counts guest instructions).
 *
 * A task on this CPU kicks itself (cpu_kick: the reschedule IPI) in a
 * loop and times each kick with the clock around it: a round is the
 * IPI's whole path, its sending, entry, handler and return, and no
 * sample (an IPI takes none, where the tick samples in a trace). Two
 * windows of BENCH_IRQ_MS each, every round filed under the gate's state
 * at both of its ends (one across a change is not counted):
 *
 * - closed: nothing open (the shell only sleeps);
 * - trace: a trace's window: the IPI is a slice (its entry's three
 *   stores, its exit's record).
 *
 * trace less closed is what the trace costs an interrupt. The fastest
 * round is the bare path (no tick in it); the mean, exact to a fraction
 * of the clock's unit where that unit is coarse (arm64's 8 ns).
 *
 * Commands: prefix cmd_ and bench_. */
#include "hal/cpu.h"
#include "kernel/cmd/profile.h"
#include "kernel/prof/ring.h"
#include "kernel/prof/session.h"
#include "kernel/sched.h"
#include "kernel/shell.h"
#include "lib/printf.h"
#include "lib/string.h"

/* Each window. A trace's must fit the reserved ring (PROF_RESERVE_MAX),
 * for a dropped record costs less than a written one: a slice a round,
 * ~35,000 in 10 ms of guest time. */
#define BENCH_IRQ_MS 10

enum { BENCH_IRQ_CLOSED, BENCH_IRQ_TRACE, BENCH_IRQ_STATES };

struct bench_irq_stat {
    uint64_t n, sum, min;
};

static struct {
    volatile bool stop;
    volatile unsigned running;
    struct bench_irq_stat st[BENCH_IRQ_STATES];
} bi;

static bool bench_irq_traced(void)
{
    return (prof_ring_gate() & PROF_GATE_TRACE) != 0;
}

static void bench_irq_kicker(void *arg)
{
    (void)arg;
    unsigned me = cpu_index();
    while (!bi.stop) {
        bool on = bench_irq_traced();
        uint64_t t0 = cycles_now();
        cpu_kick(me);
        uint64_t d = cycles_now() - t0;
        if (on != bench_irq_traced())
            continue;               /* the gate moved in the round */
        struct bench_irq_stat *s = &bi.st[on];
        s->n++;
        s->sum += d;
        if (d < s->min)
            s->min = d;
    }
    __atomic_fetch_sub(&bi.running, 1, __ATOMIC_RELEASE);
}

static void bench_irq_read(const struct prof_snapshot *s, void *arg)
{
    *(uint32_t *)arg = s->ps_dropped;
}

static int cmd_bench_irq(int argc, char **argv, struct printer *p)
{
    (void)argv;
    if (argc != 1) {
        pr_puts(p, "bench_irq: takes no arguments\n");
        return 1;
    }
    struct prof_err e;
    if (prof_session_reserve(PROF_RESERVE_MAX, &e) != PROF_OK) {
        cmd_profile_say("bench_irq", &e, p);
        return 1;
    }
    memset(&bi, 0, sizeof bi);
    for (unsigned s = 0; s < BENCH_IRQ_STATES; s++)
        bi.st[s].min = UINT64_MAX;
    bi.running = 1;
    if (!task_spawn("bench-irq", bench_irq_kicker, 0, (int)cpu_index(), 0)) {
        pr_puts(p, "bench_irq: no memory for its task\n");
        return 1;
    }
    sleep_ms(BENCH_IRQ_MS);
    char sink[256];
    struct buf_printer bp;
    buf_printer_init(&bp, sink, sizeof sink);
    uint32_t dropped = 0;
    struct prof_window_spec ws = { .ws_kind = PROF_KIND_TRACE, .ws_ms = BENCH_IRQ_MS,
                                   .ws_pid = PROF_ALL, .ws_chains = 1, .ws_format = PROF_TEXT,
                                   .ws_read = bench_irq_read, .ws_arg = &dropped };
    int rc = prof_window_run(&ws, &bp.pr, &e);
    bi.stop = true;
    while (__atomic_load_n(&bi.running, __ATOMIC_ACQUIRE))
        sleep_ms(1);
    if (rc != PROF_OK) {
        cmd_profile_say("bench_irq", &e, p);
        return 1;
    }
    static const char *const names[] = { "off", "on" };
    for (unsigned s = 0; s < BENCH_IRQ_STATES; s++)
        pr_printf(p, "ipi %s: rounds %lu min %lu mean %lu sum %lu %s per round (a self-IPI)\n",
                  names[s], (unsigned long)bi.st[s].n,
                  (unsigned long)(bi.st[s].n ? bi.st[s].min : 0),
                  (unsigned long)(bi.st[s].n ? bi.st[s].sum / bi.st[s].n : 0),
                  (unsigned long)bi.st[s].sum, cycles_unit());
    pr_printf(p, "ipi window: trace over %u ms, %u dropped\n", BENCH_IRQ_MS, (unsigned)dropped);
    pr_printf(p, "clock: %lu %s per us\n", (unsigned long)cycles_per_us(), cycles_unit());
    return 0;
}

SHELL_COMMAND(bench_irq, "bench_irq", "bench_irq  an interrupt's cost (a self-IPI) with the trace"
              " off and on", cmd_bench_irq);
