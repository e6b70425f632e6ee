/* kernel/sched.c: tasks and the scheduler.
 *
 * Each CPU runs its own tasks round-robin from its own run queue; a task is
 * placed on a CPU when it is spawned and never migrates. Only that CPU ever
 * switches to it, so a task that is queued (by a waker on another CPU)
 * while its own CPU is still switching away from it is never run twice.
 * The run-queue lock of a CPU guards the state of every task on it. */
#include "kernel/sched.h"
#include "hal/task.h"
#include "kernel/percpu.h"
#include "kernel/prof/lockprof_hooks.h"
#include "kernel/prof/offcpu_hooks.h"
#include "kernel/prof/trace_hooks.h"
#include "kernel/stacks.h"
#include "kernel/time.h"
#include "kernel/timer.h"
#include "kernel/panic.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "mm/heap.h"


static spinlock_t tasks_lock = SPINLOCK_INIT("tasks");
static struct task *all_tasks;
static int next_pid = 1;

/* ---- run queue (caller holds c->rq_lock) ---- */

static void rq_push(struct cpu *c, struct task *t)
{
    t->next = 0;
    if (c->rq_tail)
        c->rq_tail->next = t;
    else
        c->rq_head = t;
    c->rq_tail = t;
    c->rq_len++;
}

static struct task *rq_pop(struct cpu *c)
{
    struct task *t = c->rq_head;
    if (t) {
        c->rq_head = t->next;
        if (!c->rq_head)
            c->rq_tail = 0;
        c->rq_len--;
        t->next = 0;
    }
    return t;
}

static void list_add_task(struct task *t)
{
    unsigned long f = spin_lock(&tasks_lock);
    t->all_next = all_tasks;
    all_tasks = t;
    spin_unlock(&tasks_lock, f);
}

/* Free a task that exited, now that no CPU runs on its stack. */
static void reap(struct task *t)
{
    unsigned long f = spin_lock(&tasks_lock);
    for (struct task **pp = &all_tasks; *pp; pp = &(*pp)->all_next) {
        if (*pp == t) {
            *pp = t->all_next;
            break;
        }
    }
    spin_unlock(&tasks_lock, f);
    stack_unregister(t->stack_id);
    kfree(t->stack);
    kfree(t);
}

/* On the new task's stack, right after a switch: the previous task's
 * registers are all saved now, so it is off this CPU (bt may read its saved
 * context), and if it exited, its stack can go. */
static void finish_switch(struct cpu *c)
{
    if (c->prev) {
        __atomic_store_n(&c->prev->on_cpu, false, __ATOMIC_RELEASE);
        c->prev = 0;
    }
    struct task *dead = c->reap;
    if (dead) {
        c->reap = 0;
        reap(dead);
    }
}

/* ---- off-CPU profiling: the profiler's hooks (kernel/prof/offcpu_hooks.h) ---- */

/* The trace's switch (kernel/prof/trace_hooks.h): cur leaves for next,
 * and why (preempted: from sched_preempt, else a runnable cur yielded). */
static inline __attribute__((always_inline)) void sched_trace_switch(struct task *cur,
                                                                     struct task *next,
                                                                     bool preempted)
{
    prof_trace_sched_switch(cur->pid, &cur->off, cur->is_idle, cur->state == TASK_RUNNABLE,
                            preempted, cur->state == TASK_DEAD, next->pid);
}

/* t as the hooks see it. Inline: GCC keeps only the loads a hook makes. */
static inline __attribute__((always_inline)) struct prof_task sched_prof_view(struct task *t)
{
    return (struct prof_task){ t->pid, (uintptr_t)t->stack, t->saved_rsp, &t->off };
}

static void sched_off_sweep_one(struct task *t, void *arg)
{
    (void)arg;
    if (t->is_idle || t->state == TASK_DEAD || !t->ran)
        return;
    struct cpu *c = &cpus[t->cpu];
    unsigned long f = spin_lock(&c->rq_lock);
    if (c->current != t) {
        /* It may still be on its way off another CPU: no frames until its
         * registers are all saved. */
        bool walkable = !__atomic_load_n(&t->on_cpu, __ATOMIC_ACQUIRE) && t->stack;
        struct prof_task v = sched_prof_view(t);
        prof_sched_sweep_task(&v, t->state == TASK_SLEEPING, walkable);
    }
    spin_unlock(&c->rq_lock, f);
}

void sched_off_sweep(void)
{
    task_for_each(sched_off_sweep_one, 0);
}

/* schedule, and sched_preempt's: one body, the constant preempted
 * telling the trace a preemption from a yield at no cost to either (it
 * folds away; no flag is stored on the switch path). */
static inline __attribute__((always_inline)) void schedule_as(bool preempted)
{
    struct cpu *c = this_cpu();
    struct task *cur = c->current, *next;
    unsigned long f = spin_lock(&c->rq_lock);

    if (cur->state == TASK_RUNNING && !cur->is_idle) {
        cur->state = TASK_RUNNABLE;
        rq_push(c, cur);
    }
    next = rq_pop(c);
    if (!next)
        next = c->idle;
    else if (cur->is_idle)
        cur->state = TASK_RUNNABLE;     /* idle waits off the queue */
    if (cur->state == TASK_DEAD)
        c->reap = cur;
    next->state = TASK_RUNNING;
    c->current = next;
    /* A sample taken before arch_switch below is still on cur's stack:
     * it misses this CPU's slot and finds it in the registry instead. */
    stack_cpu_switch(next->stack_id);
    if (next != cur) {
        /* With no off-CPU profile or trace: one load, one branch not taken. */
        if (prof_sched_on()) {
            if (prof_sched_off()) {
                struct prof_task v = sched_prof_view(next);
                prof_sched_switch(&cur->off, cur->is_idle, cur->state == TASK_RUNNABLE, &v,
                                  next->is_idle, next->ran);
            }
            if (prof_sched_trace())
                sched_trace_switch(cur, next, preempted);
        }
        next->on_cpu = true;
        c->prev = cur;
    }
    spin_unlock(&c->rq_lock, f);
    if (next != cur) {
        arch_switch(&cur->saved_rsp, next->saved_rsp);
        finish_switch(this_cpu());
    }
}

void schedule(void)
{
    schedule_as(false);
}

static __attribute__((noinline)) void schedule_preempted(void)
{
    schedule_as(true);
}

static void task_start(void)
{
    finish_switch(this_cpu());
    irq_enable();
    struct task *t = this_cpu()->current;
    t->ran = true;
    t->fn(t->arg);
    task_exit();
}

static unsigned least_loaded_cpu(void)
{
    unsigned best = cpu_index(), best_load = ~0u;
    for (unsigned i = 0; i < cpu_count(); i++) {
        if (!cpu_online(i))
            continue;
        unsigned load = sched_cpu_load(i);
        if (load < best_load) {
            best = i;
            best_load = load;
        }
    }
    return best;
}

unsigned sched_cpu_load(unsigned i)
{
    struct cpu *c = &cpus[i];
    /* Compared, never dereferenced: current may exit meanwhile. */
    struct task *cur = __atomic_load_n(&c->current, __ATOMIC_RELAXED);
    return c->rq_len + (cur && cur != c->idle);
}

struct task *task_spawn(const char *name, task_fn fn, void *arg, int cpu, unsigned flags)
{
    if (cpu >= 0 && !cpu_online((unsigned)cpu))
        return 0;
    struct task *t = kzalloc(sizeof *t);
    void *stack = kmalloc(TASK_STACK_SIZE);
    if (!t || !stack) {
        kfree(t);
        kfree(stack);
        return 0;
    }
    t->pid = __atomic_fetch_add(&next_pid, 1, __ATOMIC_RELAXED);
    strlcpy(t->name, name, sizeof t->name);
    t->fn = fn;
    t->arg = arg;
    t->flags = flags;
    t->stack = stack;
    t->cpu = cpu >= 0 ? (unsigned)cpu : least_loaded_cpu();
    uintptr_t lo = (uintptr_t)stack, top = lo + TASK_STACK_SIZE;
    t->stack_id = stack_register(lo, top, STACK_TASK, t->pid, t->name, true);

    t->saved_rsp = arch_stack_init(top, task_start);

    list_add_task(t);
    struct cpu *c = &cpus[t->cpu];
    unsigned long f = spin_lock(&c->rq_lock);
    t->state = TASK_RUNNABLE;
    rq_push(c, t);
    spin_unlock(&c->rq_lock, f);
    if (t->cpu != cpu_index())
        cpu_kick(t->cpu);
    return t;
}

void task_exit(void)
{
    irq_save();
    struct cpu *c = this_cpu();
    unsigned long f = spin_lock(&c->rq_lock);
    c->current->state = TASK_DEAD;
    spin_unlock(&c->rq_lock, f);
    schedule();
    panic("task_exit: a dead task was scheduled again");
}

void task_wake(struct task *t)
{
    struct cpu *c = &cpus[t->cpu];
    unsigned long f = spin_lock(&c->rq_lock);
    bool woke = false;
    if (t->state == TASK_SLEEPING) {
        if (prof_sched_on()) {
            if (prof_sched_off())
                prof_sched_wake(&t->off, c->current == t, task_current_pid(), true);
            if (prof_sched_trace())
                prof_trace_wake(t->pid, t->cpu);
        }
        t->state = TASK_RUNNABLE;
        rq_push(c, t);
        woke = true;
    }
    spin_unlock(&c->rq_lock, f);
    if (woke && t->cpu != cpu_index())
        cpu_kick(t->cpu);
}

void yield(void)
{
    unsigned long f = irq_save();
    schedule();
    irq_restore(f);
}

/* On this CPU's sleepers list until the tick that finds wake_at_ns
 * passed or, if wake_tick is nonzero, the tick that brings this CPU's
 * count up by wake_tick, whichever comes first (sched_tick). */
static void sleep_until(uint64_t wake_ns, uint64_t wake_tick)
{
    unsigned long f = irq_save();
    struct cpu *c = this_cpu();
    struct task *cur = c->current;
    unsigned long g = spin_lock(&c->rq_lock);
    cur->wake_at_ns = wake_ns;
    cur->wake_at_tick = wake_tick ? c->ticks + wake_tick : 0;
    prof_off_wait(&cur->off, PROF_WHY_SLEEP, 0);
    cur->state = TASK_SLEEPING;
    cur->next = c->sleepers;
    c->sleepers = cur;
    spin_unlock(&c->rq_lock, g);
    schedule();
    irq_restore(f);
}

void sleep_ms(uint64_t ms)
{
    sleep_until(time_ns() + ms * 1000000, 0);
}

/* Counted in ticks, not time: a sleep that starts just after a tick and
 * asks for n periods in ns ends one tick late, since the n-th tick falls
 * a hair before now + n periods. The count is read and set under the
 * run-queue lock with interrupts off, so no tick comes in between. Half
 * a period past the n-th tick's time it ends anyway: where the host
 * keeps a vCPU from running, its missed ticks collapse into one, and a
 * count alone would stretch the sleep by every tick lost. */
void sleep_ticks(unsigned n)
{
    n = n ? n : 1;
    uint64_t period = 1000000000ull / TIMER_HZ;
    sleep_until(time_ns() + n * period + period / 2, n);
}

void sleep_to_tick(void)
{
    sleep_ticks(1);
}

/* From the tick, interrupts off. Returns nothing: asks for a switch by
 * leaving work in the run queue; sched_preempt does the switch. */
void sched_tick(void)
{
    struct cpu *c = this_cpu();
    struct task *cur = c->current;
    if (!cur)
        return;
    cur->ticks++;
    if (!cur->is_idle)
        c->busy_ticks++;
    if (!c->sleepers)
        return;
    uint64_t now = time_ns();
    unsigned long f = spin_lock(&c->rq_lock);
    for (struct task **pp = &c->sleepers; *pp;) {
        struct task *t = *pp;
        if ((t->wake_at_tick && c->ticks >= t->wake_at_tick) || t->wake_at_ns <= now) {
            *pp = t->next;
            if (prof_sched_on()) {
                if (prof_sched_off())   /* the tick ends a sleep */
                    prof_sched_wake(&t->off, c->current == t, 0, false);
                if (prof_sched_trace())
                    prof_trace_wake(t->pid, t->cpu);
            }
            t->state = TASK_RUNNABLE;
            rq_push(c, t);
        } else {
            pp = &t->next;
        }
    }
    spin_unlock(&c->rq_lock, f);
}

/* At the end of every interrupt on the task's own stack: round-robin. */
void sched_preempt(void)
{
    struct cpu *c = this_cpu();
    if (c->current && __atomic_load_n(&c->rq_len, __ATOMIC_RELAXED))
        schedule_preempted();
}

/* An idle CPU's profile names this loop, and it must have one call site
 * so its samples fold into one chain: aarch64 GCC's block reordering
 * otherwise copies the call (two `bl cpu_idle`, two chains at ~50%). */
__attribute__((noinline, optimize("no-reorder-blocks"))) static void idle_loop(void)
{
    for (;;)
        cpu_idle();
}

void sched_init_cpu_stack(uintptr_t lo, uintptr_t hi)
{
    struct cpu *c = this_cpu();
    lockstat_spun_bind(prof_lock_spun);   /* a contended spin's time, for profile off */
    lockstat_charge_bind(prof_lock_spin_released);   /* a spin's waits, for profile lock */
    struct task *t = kzalloc(sizeof *t);
    if (!t)
        panic("sched: no memory for the idle task of cpu %u", c->index);
    t->pid = __atomic_fetch_add(&next_pid, 1, __ATOMIC_RELAXED);
    fmt_snprintf(t->name, sizeof t->name, "idle%u", c->index);
    t->cpu = c->index;
    t->is_idle = true;
    t->ran = true;
    t->on_cpu = true;
    t->state = TASK_RUNNING;
    /* Paint the part of this stack below us, so `stacks` can measure it;
     * the part in use stays as it is. */
    uintptr_t here = (uintptr_t)__builtin_frame_address(0) - 512;
    for (uint64_t *w = (uint64_t *)lo; (uintptr_t)w < here; w++)
        *w = STACK_PAINT;
    t->stack_id = stack_register(lo, hi, STACK_TASK, t->pid, t->name, false);
    stack_cpu_switch(t->stack_id);
    c->idle = t;
    c->current = t;
    list_add_task(t);
    /* Online from here: tasks may be placed on it, the profiler gives it a
     * buffer. Its tick starts before it enables interrupts. */
    __atomic_store_n(&c->online, true, __ATOMIC_RELEASE);
}

void sched_run(void)
{
    irq_enable();
    idle_loop();
    __builtin_unreachable();
}

/* ---- wait queues and the mutex ---- */

static bool mutex_try(void *arg);
_Static_assert(PROF_WHY_MUTEX == PROF_WHY_WAITQ + 1, "waitq_wait adds its wait's kind");

/* Whether a wait is a queue's or a mutex's is the call's, not the
 * struct's: a queue or mutex that was never initialised (a zero-filled
 * static, a kzalloc'd struct) still waits as what it is, under the name
 * "?" (prof_off_wait). mutex_lock waits here with mutex_try as its
 * condition, and nothing else does: so the condition says which, and a
 * mutex's chain stays schedule <- waitq_wait <- mutex_lock, no frame
 * deeper than a queue's. */
void waitq_wait(struct waitq *wq, bool (*cond)(void *), void *arg)
{
    for (;;) {
        unsigned long f = spin_lock(&wq->lock);
        if (cond(arg)) {
            spin_unlock(&wq->lock, f);
            return;
        }
        struct cpu *c = this_cpu();
        struct task *cur = c->current;
        unsigned long g = spin_lock(&c->rq_lock);
        /* Computed here, not before the loop: nothing of it is live
         * across the locks (bench_switch's wake, off). */
        prof_off_wait(&cur->off, PROF_WHY_WAITQ + (cond == mutex_try), wq->name);
        cur->state = TASK_SLEEPING;
        spin_unlock(&c->rq_lock, g);
        cur->next = wq->head;
        wq->head = cur;
        spin_unlock_irqs_off(&wq->lock);
        schedule();
        irq_restore(f);
    }
}

void waitq_wake_all(struct waitq *wq)
{
    unsigned long f = spin_lock(&wq->lock);
    struct task *t = wq->head;
    wq->head = 0;
    while (t) {
        struct task *n = t->next;
        task_wake(t);
        t = n;
    }
    spin_unlock(&wq->lock, f);
}

static bool mutex_try(void *arg)
{
    struct mutex *m = arg;
    return !__atomic_exchange_n(&m->locked, 1, __ATOMIC_ACQUIRE);
}

/* A lock window's account of m's waiters (kernel/lockcharge.h), each
 * step under the queue's lock that the waits and the wake take anyway.
 * Only while the window's gate is open; out of the mutex's common paths. */
static __attribute__((noinline, cold)) struct lockcharge_ticket mutex_charge_arrive(struct mutex *m,
                                                                                  uint64_t t)
{
    unsigned long f = spin_lock(&m->wq.lock);
    struct lockcharge_ticket k = lockcharge_arrive(&m->acct, lockstat_charge_window(), t);
    m->stat.lh_waited = 1;
    spin_unlock(&m->wq.lock, f);
    return k;
}

/* m was taken (by a waiter that held ticket k, or NULL): a hold begins. */
static __attribute__((noinline, cold)) void mutex_charge_hold(struct mutex *m,
                                                              const struct lockcharge_ticket *k)
{
    unsigned long f = spin_lock(&m->wq.lock);
    if (k)
        lockcharge_leave(&m->acct, k);
    lockcharge_hold(&m->acct, lockstat_charge_window(), cycles_now_inline());
    spin_unlock(&m->wq.lock, f);
}

static __attribute__((noinline, cold)) void mutex_charge_hold_fast(struct mutex *m)
{
    mutex_charge_hold(m, NULL);
}

/* mutex_lock's wait in a lock window: its arrival counted, and the hold
 * it begins. Out of line, so that the ticket kept across the wait costs
 * the common paths nothing (x86-64's uncontended pair saved two more
 * registers for it); a lock window's chains of the wait have this frame
 * between waitq_wait and mutex_lock, an off-CPU window's never do (the
 * gate's bit is a lock window's only). */
static __attribute__((noinline, cold)) void mutex_wait_charged(struct mutex *m)
{
    uint64_t t0 = cycles_now();
    struct lockcharge_ticket k = mutex_charge_arrive(m, cycles_now_inline());
    waitq_wait(&m->wq, mutex_try, m);
    unsigned gate = lock_hooks();
    if (!gate)
        return;
    lockstat_waited(&m->stat, m->wq.name, LOCK_MUTEX, cycles_now() - t0);
    lockstat_acquired(&m->stat, m->wq.name, LOCK_MUTEX, gate);
    if (gate & LOCKSTAT_GATE_CHARGE)
        mutex_charge_hold(m, &k);
}

/* The holder releases m: its waiters' time under this hold, charged to
 * its chain (prof_lock_charged walks it from here). */
static __attribute__((noinline, cold)) void mutex_charge_release(struct mutex *m)
{
    unsigned long f = spin_lock(&m->wq.lock);
    struct lockcharge_charge c = lockcharge_release(&m->acct, lockstat_charge_window(),
                                                  cycles_now_inline());
    spin_unlock(&m->wq.lock, f);
    m->stat.lh_timed &= (uint8_t)~LOCKSTAT_HOLD_CHARGE;
    if (c.lcc_waits)
        prof_lock_charged(m->stat.lh_charge_name, LOCK_MUTEX, c);
}

/* The uncontended mutex takes no queue lock: a try, and lockstat's
 * gate. Only a mutex that is held waits on its queue, where every try is
 * made under the queue's lock, so a wake between a try and the sleep is
 * never lost (mutex_unlock frees the word before it takes that lock).
 * The wait stays a frame of mutex_lock (schedule <- waitq_wait <-
 * mutex_lock), and only it reads the clock. */
void mutex_lock(struct mutex *m)
{
    if (__builtin_expect(mutex_try(m), 1)) {
        unsigned gate = lock_hooks();
        if (__builtin_expect(gate != 0, 0)) {
            lockstat_acquired(&m->stat, m->wq.name, LOCK_MUTEX, gate);
            /* A lock window's hold, out of line: inline, its call made
             * x86-64's uncontended pair save registers it never needed
             * (bench_lock: 81 guest instructions a pair, not 77). */
            if (__builtin_expect(gate & LOCKSTAT_GATE_CHARGE, 0))
                mutex_charge_hold_fast(m);
        }
        return;
    }
    unsigned g0 = lock_hooks();
    bool timed = __builtin_expect(g0 != 0, 0);
    if (__builtin_expect(g0 & LOCKSTAT_GATE_CHARGE, 0)) {
        mutex_wait_charged(m);
        return;
    }
    uint64_t t0 = timed ? cycles_now() : 0;
    waitq_wait(&m->wq, mutex_try, m);
    unsigned gate = lock_hooks();
    if (!gate)
        return;
    if (timed)
        lockstat_waited(&m->stat, m->wq.name, LOCK_MUTEX, cycles_now() - t0);
    lockstat_acquired(&m->stat, m->wq.name, LOCK_MUTEX, gate);
}

void mutex_unlock(struct mutex *m)
{
    if (__builtin_expect(m->stat.lh_hooks != 0, 0)) {
        /* A mutex's charge is its account's (mutex_charge_release clears
         * LOCKSTAT_HOLD_CHARGE), never the spinlocks' slots. */
        if (__builtin_expect(m->stat.lh_timed & LOCKSTAT_HOLD_CHARGE, 0))
            mutex_charge_release(m);
        lockstat_released(&m->stat);
    }
    __atomic_store_n(&m->locked, 0, __ATOMIC_RELEASE);
    waitq_wake_all(&m->wq);
}

/* ---- lookups ---- */

int task_pid(const struct task *t) { return t->pid; }
struct task *task_current(void) { return this_cpu()->current; }

int task_current_pid(void) { return task_current_pid_inline(); }

bool task_should_stop(void) { return this_cpu()->current->stop; }

void task_for_each_id(void (*fn)(int pid, const char *name, void *arg), void *arg)
{
    unsigned long f = spin_lock(&tasks_lock);
    for (struct task *t = all_tasks; t; t = t->all_next)
        fn(t->pid, t->name, arg);
    spin_unlock(&tasks_lock, f);
}

void task_for_each(void (*fn)(struct task *t, void *arg), void *arg)
{
    unsigned long f = spin_lock(&tasks_lock);
    for (struct task *t = all_tasks; t; t = t->all_next)
        fn(t, arg);
    spin_unlock(&tasks_lock, f);
}

bool task_with_pid(int pid, void (*fn)(struct task *t, void *arg), void *arg)
{
    bool found = false;
    unsigned long f = spin_lock(&tasks_lock);
    for (struct task *t = all_tasks; t; t = t->all_next) {
        if (t->pid == pid && t->state != TASK_DEAD) {
            if (fn)
                fn(t, arg);
            found = true;
            break;
        }
    }
    spin_unlock(&tasks_lock, f);
    return found;
}

bool task_exists(int pid) { return task_with_pid(pid, 0, 0); }

static void copy_idle(struct task *t, void *arg)
{
    *(bool *)arg = t->is_idle;
}

bool task_is_idle(int pid)
{
    bool idle = false;
    task_with_pid(pid, copy_idle, &idle);
    return idle;
}

static void copy_name(struct task *t, void *arg)
{
    strlcpy(arg, t->name, TASK_NAME_MAX);
}

bool task_name(int pid, char name[TASK_NAME_MAX])
{
    return task_with_pid(pid, copy_name, name);
}

void cpu_current_task(unsigned i, int *pid, char name[TASK_NAME_MAX])
{
    struct cpu *c = &cpus[i];
    unsigned long f = spin_lock(&c->rq_lock);   /* current cannot be reaped under it */
    struct task *t = c->current;
    *pid = t ? t->pid : 0;
    strlcpy(name, t ? t->name : "-", TASK_NAME_MAX);
    spin_unlock(&c->rq_lock, f);
}

static void kill_one(struct task *t, void *arg)
{
    int *rc = arg;
    if (!(t->flags & TASK_KILLABLE)) {
        *rc = -2;
        return;
    }
    t->stop = true;
    *rc = 0;
}

int task_kill(int pid)
{
    int rc = -1;
    task_with_pid(pid, kill_one, &rc);
    return rc;
}
