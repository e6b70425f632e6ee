/* kernel/cmd/bench_lock.c: `bench_lock`, what an uncontended lock costs
 * (bench/lock.py boots under -icount shift=0, where the clock counts
 * guest instructions).
 *
 * Two pairs, each timed in batches of BENCH_LOCK_PAIRS on this CPU with
 * nothing else wanting the lock: spin_lock + spin_unlock of a spinlock,
 * and mutex_lock + mutex_unlock of a mutex. The same loop with an empty
 * body is timed alongside, so that a pair's figure is the batch less the
 * loop. The fastest batch of BENCH_LOCK_BATCHES is the bare path (no
 * tick in it). Each pair is timed with lockstat off, then on.
 *
 * Commands: prefix cmd_ and bench_. */
#include "hal/cpu.h"
#include "kernel/lockstat.h"
#include "kernel/sched.h"
#include "kernel/shell.h"
#include "lib/printf.h"

#define BENCH_LOCK_PAIRS 1000
#define BENCH_LOCK_BATCHES 200

enum bench_lock_kind { BENCH_LOCK_EMPTY, BENCH_LOCK_SPIN, BENCH_LOCK_MUTEX, BENCH_LOCK_KINDS };

static spinlock_t bench_lock_spin = SPINLOCK_INIT("bench-spin");
static struct mutex bench_lock_mutex = MUTEX_INIT("bench-mutex");

/* One batch of kind's pairs: its time in cycles_now() units. */
static __attribute__((noinline)) uint64_t bench_lock_batch(enum bench_lock_kind kind)
{
    uint64_t t0 = cycles_now();
    for (unsigned i = 0; i < BENCH_LOCK_PAIRS; i++) {
        if (kind == BENCH_LOCK_SPIN) {
            unsigned long f = spin_lock(&bench_lock_spin);
            spin_unlock(&bench_lock_spin, f);
        } else if (kind == BENCH_LOCK_MUTEX) {
            mutex_lock(&bench_lock_mutex);
            mutex_unlock(&bench_lock_mutex);
        } else {
            __asm__ volatile("" ::: "memory");
        }
    }
    return cycles_now() - t0;
}

/* The fastest of BENCH_LOCK_BATCHES batches of each kind, interleaved so
 * that a slow stretch of the host hits every kind alike. */
static void bench_lock_run(uint64_t min[BENCH_LOCK_KINDS])
{
    for (int k = 0; k < BENCH_LOCK_KINDS; k++)
        min[k] = UINT64_MAX;
    for (unsigned b = 0; b < BENCH_LOCK_BATCHES; b++)
        for (int k = 0; k < BENCH_LOCK_KINDS; k++) {
            uint64_t d = bench_lock_batch((enum bench_lock_kind)k);
            if (d < min[k])
                min[k] = d;
        }
}

static void bench_lock_print(const char *state, const uint64_t min[BENCH_LOCK_KINDS],
                             struct printer *p)
{
    static const char *const what[BENCH_LOCK_KINDS] = { "empty", "spin", "mutex" };
    for (int k = BENCH_LOCK_SPIN; k < BENCH_LOCK_KINDS; k++)
        pr_printf(p, "lock %s %s: batch min %lu empty %lu %s per %u pairs\n", what[k], state,
                  (unsigned long)min[k], (unsigned long)min[BENCH_LOCK_EMPTY], cycles_unit(),
                  BENCH_LOCK_PAIRS);
}

static int cmd_bench_lock(int argc, char **argv, struct printer *p)
{
    (void)argv;
    if (argc != 1) {
        pr_puts(p, "bench_lock: takes no arguments\n");
        return 1;
    }
    if (lockstat_on()) {
        pr_puts(p, "bench_lock: lockstat is on; lockstat off first (the off figures need it off)\n");
        return 1;
    }
    uint64_t min[BENCH_LOCK_KINDS];
    bench_lock_run(min);
    bench_lock_print("off", min, p);
    lockstat_set(true);
    bench_lock_run(min);
    lockstat_set(false);
    bench_lock_print("on", min, p);
    pr_printf(p, "clock: %lu %s per us\n", (unsigned long)cycles_per_us(), cycles_unit());
    return 0;
}

SHELL_COMMAND(bench_lock, "bench_lock", "bench_lock  an uncontended spinlock and mutex pair's cost",
              cmd_bench_lock);
