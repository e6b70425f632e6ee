/* kernel/cmd/burn_wait.c: `burn wait`, a workload with known waits, so
 * that off-CPU and wall-clock profiles have something known to find.
 *
 * Three tasks. burn-wait loops over four phases, timing each with the
 * clock: 10 ms on its CPU (burn_wait_cpu), a 20 ms sleep
 * (burn_wait_sleep), a wait on the wait queue "burn-q" (burn_wait_queue)
 * that burn-waker ends after sleeping 30 ms, and a wait for the mutex
 * "burn-m" (burn_wait_mutex) that burn-holder took just before that wake
 * and holds for 15 ms. `burn wait log` prints the last phases with their
 * start and end on the clock, to compare with a profile's window.
 * `burn wait <ms> unnamed` waits on a queue and a mutex that were never
 * named instead, zero-filled statics as C spells them without an
 * initialiser: a profile must still call those waits what they are
 * (`[waitq ?]`, `[mutex ?]`), not sleep or time on a CPU.
 *
 * Commands: prefix cmd_ and burn_. */
#include "kernel/cmd/burn.h"
#include "kernel/sched.h"
#include "kernel/time.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/string.h"

#define BURN_WAIT_LOG 256       /* phases kept: a 2 s window has ~90 */

static const char *const burn_wait_phase_names[] = { "cpu", "sleep", "waitq", "mutex" };

struct burn_wait_phase {
    uint8_t bp_phase;           /* index into burn_wait_phase_names */
    uint64_t bp_start, bp_end;  /* time_ns */
};

/* One run at a time: the flags below are its, and its log. */
static struct {
    volatile bool running, quit;
    volatile bool req, hold_req, held, done;
    uint32_t nlog;              /* phases logged, all time */
    struct burn_wait_phase log[BURN_WAIT_LOG];
    uint64_t deadline;
    struct waitq *q;            /* burn_q, or burn_unnamed_q */
    struct mutex *m;            /* burn_m, or burn_unnamed_m */
} bw;

static struct waitq burn_req_wq = WAITQ_INIT("burn-req");
static struct waitq burn_hold_wq = WAITQ_INIT("burn-hold");
static struct waitq burn_held_wq = WAITQ_INIT("burn-held");
static struct waitq burn_q = WAITQ_INIT("burn-q");
static struct mutex burn_m = MUTEX_INIT("burn-m");
/* No initialiser on purpose: what `unnamed` measures. */
static struct waitq burn_unnamed_q;
static struct mutex burn_unnamed_m;

static bool burn_flag(void *arg)
{
    return *(volatile bool *)arg || bw.quit;
}

static void burn_wait_log(unsigned phase, uint64_t start)
{
    struct burn_wait_phase *l = &bw.log[bw.nlog % BURN_WAIT_LOG];
    l->bp_phase = (uint8_t)phase;
    l->bp_start = start;
    l->bp_end = time_ns();
    __atomic_store_n(&bw.nlog, bw.nlog + 1, __ATOMIC_RELEASE);
}

/* Each phase its own function: the profile's chains name them. */
__attribute__((noinline)) void burn_wait_cpu(uint64_t ms)
{
    uint64_t end = time_ns() + ms * 1000000;
    while (time_ns() < end)
        burn_spin(1000);
}

__attribute__((noinline)) void burn_wait_sleep(uint64_t ms)
{
    sleep_ms(ms);
}

__attribute__((noinline)) void burn_wait_queue(void)
{
    bw.req = true;
    waitq_wake_all(&burn_req_wq);
    waitq_wait(bw.q, burn_flag, (void *)&bw.done);
    bw.done = false;
}

__attribute__((noinline)) void burn_wait_mutex(void)
{
    mutex_lock(bw.m);
    mutex_unlock(bw.m);
}

static void burn_wait_task(void *arg)
{
    (void)arg;
    while (time_ns() < bw.deadline && !task_should_stop()) {
        uint64_t t = time_ns();
        burn_wait_cpu(10);
        burn_wait_log(0, t);
        t = time_ns();
        burn_wait_sleep(20);
        burn_wait_log(1, t);
        t = time_ns();
        burn_wait_queue();
        burn_wait_log(2, t);
        t = time_ns();
        burn_wait_mutex();
        burn_wait_log(3, t);
    }
    bw.quit = true;
    waitq_wake_all(&burn_req_wq);
    waitq_wake_all(&burn_hold_wq);
    waitq_wake_all(&burn_held_wq);
    bw.running = false;
}

/* Asked, sleeps 30 ms, has the holder take the mutex, then wakes. */
static void burn_waker_task(void *arg)
{
    (void)arg;
    while (!bw.quit) {
        waitq_wait(&burn_req_wq, burn_flag, (void *)&bw.req);
        bw.req = false;
        if (bw.quit)
            break;
        sleep_ms(30);
        bw.hold_req = true;
        waitq_wake_all(&burn_hold_wq);
        waitq_wait(&burn_held_wq, burn_flag, (void *)&bw.held);
        bw.held = false;
        bw.done = true;
        waitq_wake_all(bw.q);
    }
}

/* Asked, takes the mutex, says so, holds it 15 ms. */
static void burn_holder_task(void *arg)
{
    (void)arg;
    while (!bw.quit) {
        waitq_wait(&burn_hold_wq, burn_flag, (void *)&bw.hold_req);
        bw.hold_req = false;
        if (bw.quit)
            break;
        mutex_lock(bw.m);
        bw.held = true;
        waitq_wake_all(&burn_held_wq);
        sleep_ms(15);
        mutex_unlock(bw.m);
    }
}

static int burn_wait_print_log(struct printer *p)
{
    uint32_t n = __atomic_load_n(&bw.nlog, __ATOMIC_ACQUIRE);
    uint32_t from = n > BURN_WAIT_LOG ? n - BURN_WAIT_LOG : 0;
    pr_printf(p, "burn wait: %u phases logged\n", n);
    for (uint32_t i = from; i < n; i++) {
        const struct burn_wait_phase *l = &bw.log[i % BURN_WAIT_LOG];
        pr_printf(p, "%s %lu %lu\n", burn_wait_phase_names[l->bp_phase],
                  (unsigned long)l->bp_start, (unsigned long)l->bp_end);
    }
    return 0;
}

int burn_wait_cmd(int argc, char **argv, struct printer *p)
{
    if (argc == 2 && strcmp(argv[1], "log") == 0)
        return burn_wait_print_log(p);
    uint64_t ms;
    bool unnamed = argc == 3 && strcmp(argv[2], "unnamed") == 0;
    if ((argc != 2 && !unnamed) || !parse_range(argv[1], 1, 600000, &ms)) {
        pr_puts(p, "burn: usage: burn wait <ms 1-600000> [unnamed] | burn wait log\n");
        return 1;
    }
    if (bw.running) {
        pr_puts(p, "burn: a burn wait is running already\n");
        return 1;
    }
    bw.running = true;
    bw.quit = bw.req = bw.hold_req = bw.held = bw.done = false;
    bw.nlog = 0;
    bw.q = unnamed ? &burn_unnamed_q : &burn_q;
    bw.m = unnamed ? &burn_unnamed_m : &burn_m;
    bw.deadline = time_ns() + ms * 1000000;
    struct task *w = task_spawn("burn-wait", burn_wait_task, 0, TASK_ANY_CPU, TASK_KILLABLE);
    struct task *k = w ? task_spawn("burn-waker", burn_waker_task, 0, TASK_ANY_CPU, 0) : 0;
    struct task *h = k ? task_spawn("burn-holder", burn_holder_task, 0, TASK_ANY_CPU, 0) : 0;
    if (!h) {
        /* The ones that started end with the deadline's quit. */
        bw.deadline = 0;
        pr_puts(p, "burn: out of memory for the burn wait tasks\n");
        return 1;
    }
    pr_printf(p, "burn wait: %lu ms, pids %d %d %d\n", (unsigned long)ms, task_pid(w),
              task_pid(k), task_pid(h));
    return 0;
}
