/* kernel/cmd/burn_lock.c: `burn lock <rounds> [hold_us]`, a probe of
 * known shape for lockstat and lock profiles.
 *
 * Two tasks on two CPUs and rounds rounds. In each, burn-holder takes the
 * mutex "probe-m" in burn_lock_hold_mutex and keeps it hold_us (default
 * 2000) on its CPU, then the spinlock "probe-s" in burn_lock_hold_spin
 * for a tenth of that; burn-waiter asks for each lock once the holder
 * has it, timing its own wait on the clock, and the holder keeps each
 * lock until the waiter waits for it. So each lock is taken exactly
 * 2 x rounds times, rounds of them contended, and the waits add up to
 * a little less than the holds. The command waits for the run and
 * prints what the tasks measured (`burn lock start` returns at once, and
 * `burn lock wait` prints it when the run is over):
 *
 *   burn lock: rounds R mutex waited W ns held H ns spin waited W ns held H ns
 *
 * `burn lock start <rounds> <hold_us> profiled` has both tasks wait for
 * a lock window (`profile lock`'s gate, kernel/lockstat.h) to open before
 * their first round, so that the window sees the whole run. `split` in
 * its place does the same with a third task, burn-second, on the
 * waiter's CPU: each time the holder frees the mutex, burn-second takes
 * it before the waiter it woke can run (burn-second has that CPU, busy),
 * and keeps it half of hold_us in burn_lock_hold_second; so each mutex
 * wait is waited under two holders, the holder and then burn-second.
 *
 * Commands: prefix cmd_ and burn_. */
#include "hal/cpu.h"
#include "kernel/cmd/burn.h"
#include "kernel/sched.h"
#include "kernel/time.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/string.h"

#define BURN_LOCK_ROUNDS_MAX 10000
#define BURN_LOCK_HOLD_MAX 100000   /* us */

static struct mutex burn_lock_m = MUTEX_INIT("probe-m");
static spinlock_t burn_lock_s = SPINLOCK_INIT("probe-s");

static struct {
    volatile unsigned running;      /* tasks not yet done */
    volatile bool quit;             /* a task could not start: end the other */
    bool profiled;                  /* the rounds wait for a lock window */
    bool split;                     /* burn-second takes each mutex in between */
    volatile unsigned held;         /* the round and lock the holder has: 2r+1 m, 2r+2 s */
    volatile unsigned trying;       /* the last the waiter is about to ask for */
    volatile unsigned asked;        /* the last the waiter has asked for and got */
    unsigned rounds;
    uint64_t hold_ns;
    uint64_t waited[2], held_ns[2]; /* [0] mutex, [1] spinlock */
} bl;

/* Spins on this CPU until ns of the clock have passed. */
static void burn_lock_busy(uint64_t ns)
{
    uint64_t end = time_ns() + ns;
    while (time_ns() < end)
        cpu_relax();
}

/* The holder's steps hand over through bl.held and bl.asked: the waiter
 * asks for lock k only once bl.held says the holder has it, and the
 * holder starts step k+1 only after the waiter got step k. */
static void burn_lock_until_asked(unsigned step)
{
    while (__atomic_load_n(&bl.asked, __ATOMIC_ACQUIRE) < step && !bl.quit)
        cpu_relax();
}

static __attribute__((noinline)) void burn_lock_hold_mutex(unsigned step)
{
    uint64_t t0 = time_ns();
    mutex_lock(&burn_lock_m);
    __atomic_store_n(&bl.held, step, __ATOMIC_RELEASE);
    burn_lock_busy(bl.hold_ns);
    /* Until the waiter is asleep on the mutex: every round contended. */
    while (!__atomic_load_n(&burn_lock_m.wq.head, __ATOMIC_ACQUIRE) && !bl.quit)
        cpu_relax();
    bl.held_ns[0] += time_ns() - t0;
    mutex_unlock(&burn_lock_m);
}

static __attribute__((noinline)) void burn_lock_hold_spin(unsigned step)
{
    uint64_t t0 = time_ns();
    unsigned long f = spin_lock(&burn_lock_s);
    __atomic_store_n(&bl.held, step, __ATOMIC_RELEASE);
    burn_lock_busy(bl.hold_ns / 10);
    /* Until the waiter spins on it, which it says only while lockstat or
     * a lock profile is on (kernel/spinlock.c); else until it is about
     * to ask, and a little longer. */
    if (lock_hooks_on()) {
        while (!__atomic_load_n(&burn_lock_s.stat.lh_waited, __ATOMIC_RELAXED) && !bl.quit)
            cpu_relax();
    } else {
        while (__atomic_load_n(&bl.trying, __ATOMIC_ACQUIRE) < step && !bl.quit)
            cpu_relax();
        burn_lock_busy(20000);
    }
    bl.held_ns[1] += time_ns() - t0;
    spin_unlock(&burn_lock_s, f);
}

/* Until a lock window is open, when the run asked for one. */
static void burn_lock_until_profiled(void)
{
    while (bl.profiled && !(lock_hooks() & LOCKSTAT_GATE_CHARGE) && !bl.quit)
        sleep_ms(1);
}

static void burn_lock_holder(void *arg)
{
    (void)arg;
    burn_lock_until_profiled();
    for (unsigned r = 0; r < bl.rounds && !bl.quit; r++) {
        burn_lock_hold_mutex(2 * r + 1);
        burn_lock_until_asked(2 * r + 1);
        burn_lock_hold_spin(2 * r + 2);
        burn_lock_until_asked(2 * r + 2);
    }
    __atomic_fetch_sub(&bl.running, 1, __ATOMIC_RELEASE);
}

/* Takes the mutex, free, with interrupts off (f: as they were before),
 * and keeps it half a hold with them on again. */
static __attribute__((noinline)) void burn_lock_hold_second(unsigned long f)
{
    mutex_lock(&burn_lock_m);
    irq_restore(f);
    burn_lock_busy(bl.hold_ns / 2);
    mutex_unlock(&burn_lock_m);
}

/* burn-second, on the waiter's CPU: once the waiter sleeps on the mutex
 * the holder has, it waits for the release with interrupts off, so that
 * the waiter the release wakes cannot run there first (a wake's interrupt
 * switches to the woken task at its end), and takes the mutex; the
 * waiter, woken, finds it held and sleeps again. */
static void burn_lock_second(void *arg)
{
    (void)arg;
    burn_lock_until_profiled();
    for (unsigned r = 0; r < bl.rounds && !bl.quit; r++) {
        unsigned step = 2 * r + 1;
        while ((__atomic_load_n(&bl.held, __ATOMIC_ACQUIRE) < step ||
                !__atomic_load_n(&burn_lock_m.wq.head, __ATOMIC_ACQUIRE)) && !bl.quit)
            yield();
        unsigned long f = irq_save();
        while (__atomic_load_n(&burn_lock_m.locked, __ATOMIC_ACQUIRE) && !bl.quit)
            cpu_relax();
        if (bl.quit) {
            irq_restore(f);
            break;
        }
        burn_lock_hold_second(f);
        /* The waiter's turn on this CPU, which it needs to run. */
        while (__atomic_load_n(&bl.asked, __ATOMIC_ACQUIRE) < step && !bl.quit)
            yield();
    }
    __atomic_fetch_sub(&bl.running, 1, __ATOMIC_RELEASE);
}

static void burn_lock_waiter(void *arg)
{
    (void)arg;
    burn_lock_until_profiled();
    for (unsigned step = 1; step <= 2 * bl.rounds; step++) {
        while (__atomic_load_n(&bl.held, __ATOMIC_ACQUIRE) < step && !bl.quit)
            cpu_relax();
        if (bl.quit)
            break;
        __atomic_store_n(&bl.trying, step, __ATOMIC_RELEASE);
        uint64_t t0 = time_ns();
        if (step & 1) {
            mutex_lock(&burn_lock_m);
            bl.waited[0] += time_ns() - t0;
            mutex_unlock(&burn_lock_m);
        } else {
            unsigned long f = spin_lock(&burn_lock_s);
            bl.waited[1] += time_ns() - t0;
            spin_unlock(&burn_lock_s, f);
        }
        __atomic_store_n(&bl.asked, step, __ATOMIC_RELEASE);
    }
    __atomic_fetch_sub(&bl.running, 1, __ATOMIC_RELEASE);
}

/* The last run's line, once it is over. */
static void burn_lock_report(struct printer *p)
{
    while (__atomic_load_n(&bl.running, __ATOMIC_ACQUIRE))
        sleep_ms(1);
    pr_printf(p, "burn lock: rounds %u mutex waited %lu ns held %lu ns spin waited %lu ns "
                 "held %lu ns\n", bl.rounds, (unsigned long)bl.waited[0],
              (unsigned long)bl.held_ns[0], (unsigned long)bl.waited[1],
              (unsigned long)bl.held_ns[1]);
}

/* `burn lock [start] <rounds> [hold_us]`: the run, waited for (and its
 * line printed) unless started; `burn lock wait`: the last run's line,
 * once it is over. */
int burn_lock_cmd(int argc, char **argv, struct printer *p)
{
    if (argc == 2 && strcmp(argv[1], "wait") == 0) {
        burn_lock_report(p);
        return 0;
    }
    bool start = argc >= 2 && strcmp(argv[1], "start") == 0;
    if (start) {
        argc--;
        argv++;
    }
    uint64_t rounds, hold = 2000;
    bool split = start && argc == 4 && strcmp(argv[3], "split") == 0;
    bool profiled = split || (start && argc == 4 && strcmp(argv[3], "profiled") == 0);
    if (profiled)
        argc--;
    if (argc < 2 || argc > 3 || !parse_range(argv[1], 1, BURN_LOCK_ROUNDS_MAX, &rounds) ||
        (argc == 3 && !parse_range(argv[2], 1, BURN_LOCK_HOLD_MAX, &hold))) {
        pr_printf(p, "burn: usage: burn lock [start] <rounds 1-%u> [hold_us 1-%u] | "
                  "burn lock start <rounds> <hold_us> profiled|split | burn lock wait\n",
                  BURN_LOCK_ROUNDS_MAX, BURN_LOCK_HOLD_MAX);
        return 1;
    }
    if (cpu_count() < 2) {
        pr_puts(p, "burn: lock needs 2 CPUs (its waiter spins on one while the holder runs)\n");
        return 1;
    }
    if (__atomic_load_n(&bl.running, __ATOMIC_ACQUIRE)) {
        pr_puts(p, "burn: a lock run is under way\n");
        return 1;
    }
    bl.rounds = (unsigned)rounds;
    bl.hold_ns = hold * 1000;
    bl.held = bl.trying = bl.asked = 0;
    bl.quit = false;
    bl.profiled = profiled;
    bl.split = split;
    bl.waited[0] = bl.waited[1] = bl.held_ns[0] = bl.held_ns[1] = 0;
    bl.running = split ? 3 : 2;
    unsigned me = cpu_index();
    int a = (int)((me + 1) % cpu_count()), b = (int)((me + 2) % cpu_count());
    struct task *h = task_spawn("burn-holder", burn_lock_holder, 0, a, 0);
    struct task *w = h ? task_spawn("burn-waiter", burn_lock_waiter, 0, b, 0) : NULL;
    struct task *s2 = w && split ? task_spawn("burn-second", burn_lock_second, 0, b, 0) : w;
    if (!w || !s2) {
        pr_puts(p, "burn: no memory for the lock run's tasks\n");
        bl.quit = true;             /* the holder cannot finish without its waiter */
        __atomic_fetch_sub(&bl.running, (h ? 0 : 1) + (w ? 0 : 1) + (split ? 1 : 0),
                           __ATOMIC_RELEASE);
        return 1;
    }
    if (start && split)
        pr_printf(p, "burn lock: started, pids %d %d %d\n", task_pid(h), task_pid(w),
                  task_pid(s2));
    else if (start)
        pr_printf(p, "burn lock: started, pids %d %d\n", task_pid(h), task_pid(w));
    else
        burn_lock_report(p);
    return 0;
}
