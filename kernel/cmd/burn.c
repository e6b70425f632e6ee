/* kernel/cmd/burn.c: `burn`, a CPU-bound workload with a known, deep call
 * chain (burn_task -> burn_outer -> burn_middle -> burn_inner -> burn_spin,
 * the hot loop), so profiles and backtraces have something known to find. */
#include "hal/cpu.h"
#include "kernel/cmd/burn.h"
#include "kernel/sched.h"
#include "kernel/shell.h"
#include "kernel/time.h"
#include "lib/parse.h"
#include "lib/string.h"

#define BURN_MAX_MS 600000
#define BURN_MAX_TASKS 64

static volatile uint64_t burn_sink;

__attribute__((noinline)) uint64_t burn_spin(uint64_t n)
{
    uint64_t x = n;
    for (uint64_t i = 0; i < n; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}
__attribute__((noinline)) uint64_t burn_inner(uint64_t n) { return burn_spin(n) + 1; }
__attribute__((noinline)) uint64_t burn_middle(uint64_t n) { return burn_inner(n) + 1; }
__attribute__((noinline)) uint64_t burn_outer(uint64_t n) { return burn_middle(n) + 1; }

/* `burn tiny`: a leaf so short that samples keep landing on its first
 * instruction, inside its prologue or on its ret, where the frame pointer
 * is still (or again) the caller's: every chain must still name
 * burn_tiny_loop (the walk's leaf handling, kernel/stacktrace.c). noipa:
 * a real call each time, never folded into the loop. */
__attribute__((noipa)) uint64_t burn_tiny(uint64_t x)
{
    return x * 6364136223846793005ull + 1;
}

__attribute__((noinline)) uint64_t burn_tiny_loop(uint64_t n)
{
    uint64_t x = n;
    for (uint64_t i = 0; i < n; i++)
        x = burn_tiny(x);
    return x;
}

/* `burn phase`: two phases of half a millisecond each, switched on a grid
 * of the clock, so the workload's cycle is exactly 1 ms: the counter's
 * period. A counter whose period were fixed would sample the same point
 * of that cycle every time and put nearly all samples in one phase; the
 * jittered period (kernel/pmu.c) spreads them over both. Each phase is
 * its own function, so the profile tells them apart. */
#define BURN_PHASE_US 500

__attribute__((noinline)) void burn_phase_a(uint64_t until)
{
    while (cycles_now() < until)
        burn_sink++;
}

__attribute__((noinline)) void burn_phase_b(uint64_t until)
{
    while (cycles_now() < until)
        burn_sink += 3;
}

static void burn_phase_task(void *arg)
{
    uint64_t half = cycles_per_us() * BURN_PHASE_US;
    uint64_t t = cycles_now();
    uint64_t end = t + (uint64_t)(uintptr_t)arg * 1000 * cycles_per_us();
    while (t < end && !task_should_stop()) {
        t += half;                  /* a grid: an overshoot is not carried */
        burn_phase_a(t);
        t += half;
        burn_phase_b(t);
    }
}

static void burn_tiny_task(void *arg)
{
    uint64_t deadline = time_ns() + (uint64_t)(uintptr_t)arg * 1000000;
    while (time_ns() < deadline && !task_should_stop())
        burn_sink += burn_tiny_loop(20000);
}

static void burn_task(void *arg)
{
    uint64_t deadline = time_ns() + (uint64_t)(uintptr_t)arg * 1000000;
    while (time_ns() < deadline && !task_should_stop())
        burn_sink += burn_outer(20000);
}

struct burn_stop { int n; };

static void stop_one(struct task *t, void *arg)
{
    struct burn_stop *s = arg;
    if (strcmp(t->name, "burn") == 0 && t->state != TASK_DEAD) {
        t->stop = true;
        s->n++;
    }
}

/* "1,1,3": CPU indexes, repeats allowed (two tasks pinned to one CPU). */
static int parse_cpus(const char *s, int *out, int max, struct printer *p)
{
    char buf[128];
    if (strlen(s) >= sizeof buf) {
        pr_printf(p, "burn: cpu list too long (at most %zu bytes)\n", sizeof buf - 1);
        return -1;
    }
    strlcpy(buf, s, sizeof buf);
    int n = 0;
    for (char *w = buf, *comma; w; w = comma ? comma + 1 : 0) {
        comma = strchr(w, ',');
        if (comma)
            *comma = 0;
        uint64_t c;
        if (!parse_range(w, 0, cpu_count() - 1, &c) || !cpu_online((unsigned)c)) {
            pr_printf(p, "burn: cpu '%s' is not an online cpu (0-%u)\n", w, cpu_count() - 1);
            return -1;
        }
        if (n == max) {
            pr_printf(p, "burn: too many tasks (at most %d)\n", max);
            return -1;
        }
        out[n++] = (int)c;
    }
    return n;
}

static int cmd_burn(int argc, char **argv, struct printer *p)
{
    if (argc == 2 && strcmp(argv[1], "stop") == 0) {
        struct burn_stop s = { 0 };
        task_for_each(stop_one, &s);
        pr_printf(p, "burn: stopping %d tasks\n", s.n);
        return 0;
    }
    void (*fn)(void *) = burn_task;
    if (argc >= 2 && strcmp(argv[1], "wait") == 0)
        return burn_wait_cmd(argc - 1, argv + 1, p);
    if (argc >= 2 && strcmp(argv[1], "lock") == 0)
        return burn_lock_cmd(argc - 1, argv + 1, p);
    if (argc >= 2 && strcmp(argv[1], "pingpong") == 0)
        return burn_pingpong_cmd(argc - 1, argv + 1, p);
    if (argc >= 2 && strcmp(argv[1], "tiny") == 0) {
        fn = burn_tiny_task;
        argc--;
        argv++;
    } else if (argc >= 2 && strcmp(argv[1], "phase") == 0) {
        fn = burn_phase_task;
        argc--;
        argv++;
    }
    if (argc < 2 || argc > 3) {
        pr_printf(p, "burn: usage: burn <ms> [cpu,cpu,...] | burn tiny <ms> [cpu,...] | "
                  "burn phase <ms> [cpu,...] | burn wait <ms> [unnamed] | burn pingpong <ms> [rate] [cpu] | "
                  "burn lock [start] <rounds> [hold_us] | "
                  "burn stop\n");
        return 1;
    }
    uint64_t ms;
    if (!parse_range(argv[1], 1, BURN_MAX_MS, &ms)) {
        pr_printf(p, "burn: time '%s' out of range (1-%d ms)\n", argv[1], BURN_MAX_MS);
        return 1;
    }
    int cpu_list[BURN_MAX_TASKS], n = 0;
    if (argc == 3) {
        n = parse_cpus(argv[2], cpu_list, BURN_MAX_TASKS, p);
        if (n < 0)
            return 1;
    } else {
        for (unsigned c = 0; c < cpu_count(); c++)
            if (cpu_online(c))
                cpu_list[n++] = (int)c;
    }
    pr_printf(p, "burn: %lu ms, pids", ms);
    for (int i = 0; i < n; i++) {
        struct task *t = task_spawn("burn", fn, (void *)(uintptr_t)ms,
                                    cpu_list[i], TASK_KILLABLE);
        if (!t) {
            pr_printf(p, " (out of memory after %d)", i);
            break;
        }
        pr_printf(p, " %d", task_pid(t));
    }
    pr_puts(p, "\n");
    return 0;
}
SHELL_COMMAND(burn, "burn", "burn [tiny|phase] <ms> [cpu,...] | burn wait <ms> [unnamed] | burn pingpong <ms> [rate] [cpu] | burn lock [start] <rounds> [hold_us] | burn stop  CPU-bound load, one task per cpu; or known waits; or switches at a rate", cmd_burn);
