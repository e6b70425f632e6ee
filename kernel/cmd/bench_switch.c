/* kernel/cmd/bench_switch.c: `bench_switch`, what off-CPU profiling costs
 * the scheduler (bench/run.py boots under -icount shift=0, where the
 * clock counts guest instructions).
 *
 * Two tasks on this CPU yield to each other: each yield is one context
 * switch, and one round (a yield of the first task until it runs again)
 * is two switches and the other task's loop body. The first task times
 * every round with cycles_now() and files it under the gate's state at
 * its start: closed (off-CPU profiling off) or open (an off-CPU window,
 * which this command runs over them, its report thrown away). The
 * minimum round is the bare path (no tick in it); the mean, the
 * ping-pong's pace with the ticks.
 *
 * Commands: prefix cmd_ and bench_. */
#include "hal/cpu.h"
#include "kernel/prof/offcpu.h"
#include "kernel/prof/session.h"
#include "kernel/sched.h"
#include "kernel/shell.h"
#include "lib/printf.h"

#define BENCH_SW_MS 40              /* each phase; an open window's records fit */

struct bench_sw_stat {
    uint64_t n, sum, min;
};

static struct {
    volatile bool stop;
    volatile unsigned running;
    struct bench_sw_stat st[2];     /* [0] gate closed, [1] open */
} bsw;

static void bench_sw_partner(void *arg)
{
    (void)arg;
    while (!bsw.stop)
        yield();
    __atomic_fetch_sub(&bsw.running, 1, __ATOMIC_RELEASE);
}

static void bench_sw_timer(void *arg)
{
    (void)arg;
    while (!bsw.stop) {
        bool on = prof_off_on();
        uint64_t t0 = cycles_now();
        yield();
        uint64_t d = cycles_now() - t0;
        if (on != prof_off_on())
            continue;               /* the gate moved in the round */
        struct bench_sw_stat *s = &bsw.st[on];
        s->n++;
        s->sum += d;
        if (d < s->min)
            s->min = d;
    }
    __atomic_fetch_sub(&bsw.running, 1, __ATOMIC_RELEASE);
}

static void bench_sw_print(const char *what, const struct bench_sw_stat *s, struct printer *p)
{
    pr_printf(p, "switch %s: rounds %lu min %lu mean %lu %s per round (2 switches)\n", what,
              (unsigned long)s->n, (unsigned long)(s->n ? s->min : 0),
              (unsigned long)(s->n ? s->sum / s->n : 0), cycles_unit());
}

static int cmd_bench_switch(int argc, char **argv, struct printer *p)
{
    (void)argv;
    if (argc != 1) {
        pr_puts(p, "bench_switch: takes no arguments\n");
        return 1;
    }
    char sink[256];
    struct buf_printer bp;
    buf_printer_init(&bp, sink, sizeof sink);
    /* The open window's rings big enough for every switch of it. */
    if (prof_reserve(PROF_RESERVE_MAX, p) != PROF_OK)
        return 1;
    bsw.stop = false;
    bsw.running = 2;
    for (int i = 0; i < 2; i++)
        bsw.st[i] = (struct bench_sw_stat){ 0, 0, UINT64_MAX };
    int cpu = (int)cpu_index();
    if (!task_spawn("bench-sw", bench_sw_timer, 0, cpu, 0) ||
        !task_spawn("bench-sw2", bench_sw_partner, 0, cpu, 0)) {
        bsw.stop = true;
        pr_puts(p, "bench_switch: no memory for its tasks\n");
        return 1;
    }
    sleep_ms(BENCH_SW_MS);
    int rc = prof_run_off(BENCH_SW_MS, PROF_ALL, 1, PROF_TEXT, PROF_VIEW_LATENCY, &bp.pr);
    bsw.stop = true;
    while (__atomic_load_n(&bsw.running, __ATOMIC_ACQUIRE))
        sleep_ms(1);
    if (rc != PROF_OK) {
        pr_printf(p, "bench_switch: the off-CPU window failed: %s\n", sink);
        return 1;
    }
    bench_sw_print("off", &bsw.st[0], p);
    bench_sw_print("on", &bsw.st[1], p);
    return 0;
}

SHELL_COMMAND(bench_switch, "bench_switch", "bench_switch  a context switch's cost with off-CPU profiling off and on",
              cmd_bench_switch);
