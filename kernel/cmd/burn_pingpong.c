/* kernel/cmd/burn_pingpong.c: `burn pingpong`, a switch-heavy workload
 * with a known rate, so that an off-CPU profile (and its bench) has a
 * known number of switches to find.
 *
 * Two tasks, burn-ping and burn-pong, on one CPU, hand a turn to each
 * other through the wait queue "burn-pp": the one whose turn it is spins
 * on the clock until its slot (start + k / rate), passes the turn, wakes
 * the queue and waits for the turn to come back. Both on one CPU, each
 * hand-off is exactly one context switch, the CPU never idles, and the
 * waiting one's blocked time is the other's spin. Rate 0: no spin, as
 * fast as the switch path goes.
 *
 * Commands: prefix cmd_ and burn_. */
#include "hal/cpu.h"
#include "kernel/cmd/burn.h"
#include "kernel/sched.h"
#include "kernel/time.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/string.h"

#define BURN_PP_MAX_MS 600000
#define BURN_PP_MAX_RATE 1000000    /* switches a second; 0: unpaced */
#define BURN_PP_DEFAULT_RATE 10000

/* One run at a time. */
static struct {
    volatile bool running, quit;
    volatile unsigned turn;         /* 0: ping's, 1: pong's */
    volatile unsigned alive;        /* tasks not yet ended */
    volatile uint64_t handoffs;     /* turns passed, all run */
    uint64_t start, end;            /* time_ns of the run's span */
    uint64_t period_ns;             /* between hand-offs; 0 unpaced */
    uint32_t rate;
} bpp;

static struct waitq burn_pp_wq = WAITQ_INIT("burn-pp");

struct burn_pp_turn { unsigned me; };

static bool burn_pp_my_turn(void *arg)
{
    const struct burn_pp_turn *t = arg;
    return bpp.turn == t->me || bpp.quit;
}

/* Its own function: the off-CPU chains name it. */
__attribute__((noinline)) void burn_pingpong_wait(unsigned me)
{
    struct burn_pp_turn t = { me };
    waitq_wait(&burn_pp_wq, burn_pp_my_turn, &t);
}

/* Spin to the next slot on the grid start + k * period (an overshoot is
 * not carried), then pass the turn. */
__attribute__((noinline)) void burn_pingpong_pass(unsigned me)
{
    uint64_t k = bpp.handoffs + 1;
    if (bpp.period_ns) {
        uint64_t slot = bpp.start + k * bpp.period_ns;
        while (time_ns() < slot && !bpp.quit)
            cpu_relax();
    }
    __atomic_store_n(&bpp.handoffs, k, __ATOMIC_RELEASE);
    bpp.turn = me ^ 1;
    waitq_wake_all(&burn_pp_wq);
}

static void burn_pp_task(void *arg)
{
    unsigned me = (unsigned)(uintptr_t)arg;
    while (!bpp.quit) {
        burn_pingpong_wait(me);
        if (bpp.quit)
            break;
        if (time_ns() >= bpp.end || task_should_stop()) {
            bpp.quit = true;
            waitq_wake_all(&burn_pp_wq);
            break;
        }
        burn_pingpong_pass(me);
    }
    if (__atomic_sub_fetch(&bpp.alive, 1, __ATOMIC_ACQ_REL) == 0)
        bpp.running = false;
}

int burn_pingpong_start(uint64_t ms, uint32_t rate, int cpu, int pids[2])
{
    if (bpp.running)
        return -1;
    bpp.running = true;
    bpp.quit = false;
    bpp.turn = 0;
    bpp.alive = 2;
    bpp.handoffs = 0;
    bpp.rate = rate;
    bpp.period_ns = rate ? 1000000000ull / rate : 0;
    bpp.start = time_ns();
    bpp.end = bpp.start + ms * 1000000;
    struct task *a = task_spawn("burn-ping", burn_pp_task, (void *)0, cpu, TASK_KILLABLE);
    struct task *b = a ? task_spawn("burn-pong", burn_pp_task, (void *)1, cpu, TASK_KILLABLE) : 0;
    if (!b) {
        bpp.alive = a ? 1 : 0;
        bpp.quit = true;
        waitq_wake_all(&burn_pp_wq);
        if (!a)
            bpp.running = false;
        return -2;
    }
    pids[0] = task_pid(a);
    pids[1] = task_pid(b);
    return 0;
}

uint64_t burn_pingpong_handoffs(void)
{
    return __atomic_load_n(&bpp.handoffs, __ATOMIC_ACQUIRE);
}

bool burn_pingpong_running(void)
{
    return bpp.running;
}

/* The CPU the pair runs on: the last online one (CPU 0 takes the
 * shell and the network), unless asked. */
static int burn_pp_default_cpu(void)
{
    for (unsigned c = cpu_count(); c-- > 0;)
        if (cpu_online(c))
            return (int)c;
    return 0;
}

static int burn_pp_usage(struct printer *p)
{
    pr_printf(p, "burn: usage: burn pingpong <ms 1-%d> [rate 0-%d switches/s, 0 unpaced] "
              "[cpu] | burn pingpong stat\n", BURN_PP_MAX_MS, BURN_PP_MAX_RATE);
    return 1;
}

static int burn_pp_stat(struct printer *p)
{
    /* The clock with the count: a reader works out the rate over a span. */
    uint64_t n = burn_pingpong_handoffs(), t = time_ns();
    pr_printf(p, "burn pingpong: %s, rate %u, handoffs %lu at %lu ns\n",
              bpp.running ? "running" : "stopped", bpp.rate, (unsigned long)n, (unsigned long)t);
    return 0;
}

/* argv[0] is "pingpong". */
int burn_pingpong_cmd(int argc, char **argv, struct printer *p)
{
    if (argc == 2 && strcmp(argv[1], "stat") == 0)
        return burn_pp_stat(p);
    uint64_t ms, rate = BURN_PP_DEFAULT_RATE, cpu;
    if (argc < 2 || argc > 4)
        return burn_pp_usage(p);
    if (!parse_range(argv[1], 1, BURN_PP_MAX_MS, &ms)) {
        pr_printf(p, "burn: time '%s' out of range (1-%d ms)\n", argv[1], BURN_PP_MAX_MS);
        return 1;
    }
    if (argc >= 3 && !parse_range(argv[2], 0, BURN_PP_MAX_RATE, &rate)) {
        pr_printf(p, "burn: rate '%s' out of range (0-%d switches/s, 0 unpaced)\n", argv[2],
                  BURN_PP_MAX_RATE);
        return 1;
    }
    cpu = (uint64_t)burn_pp_default_cpu();
    if (argc == 4 && (!parse_range(argv[3], 0, cpu_count() - 1, &cpu) ||
                      !cpu_online((unsigned)cpu))) {
        pr_printf(p, "burn: cpu '%s' is not an online cpu (0-%u)\n", argv[3], cpu_count() - 1);
        return 1;
    }
    int pids[2];
    int rc = burn_pingpong_start(ms, (uint32_t)rate, (int)cpu, pids);
    if (rc == -1) {
        pr_puts(p, "burn: a burn pingpong is running already\n");
        return 1;
    }
    if (rc != 0) {
        pr_puts(p, "burn: out of memory for the burn pingpong tasks\n");
        return 1;
    }
    pr_printf(p, "burn pingpong: %lu ms, %lu switches/s, cpu %lu, pids %d %d\n",
              (unsigned long)ms, (unsigned long)rate, (unsigned long)cpu, pids[0], pids[1]);
    return 0;
}
