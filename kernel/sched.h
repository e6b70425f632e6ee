/* kernel/sched.h: tasks, per-CPU round-robin run queues, sleeping, wait
 * queues and the sleeping mutex. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "kernel/percpu.h"
#include "kernel/prof/offcpu.h"
#include "kernel/spinlock.h"
#include "kernel/task.h"

struct task {
    uint64_t saved_rsp;            /* first: swtch saves here */
    int pid;
    char name[TASK_NAME_MAX];
    volatile enum task_state state;
    unsigned cpu;                  /* tasks never migrate: placed at spawn */
    unsigned flags;                /* TASK_KILLABLE */
    volatile bool stop;            /* kill asked this task to end */
    bool is_idle;
    bool ran;                      /* has started running (task_start) */
    volatile bool on_cpu;          /* picked to run, until switched away from */
    void *stack;                   /* TASK_STACK_SIZE bytes */
    int stack_id;                  /* in the stacks registry */
    uint64_t wake_at_ns;           /* while on the sleepers list */
    uint64_t wake_at_tick;         /* nonzero: wake at this CPU tick count, if sooner */
    volatile uint64_t ticks;       /* ticks it was running for */
    struct prof_off off;           /* off-CPU accounting (kernel/prof/offcpu.h) */
    task_fn fn;
    void *arg;
    struct task *next;             /* run queue, sleepers or a wait queue */
    struct task *all_next;         /* every task, for ps/bt */
};

_Static_assert(__builtin_offsetof(struct task, pid) == TASK_OFF_PID,
               "task_current_pid_inline (kernel/task.h) reads the pid there");

/* Every wait queue and mutex is named where it is defined, so that an
 * off-CPU profile says what a task waited for: `[waitq virtio-rx]`,
 * `[mutex entropy]`. A name is a string literal: 1-31 characters from
 * '!'..'~' except ';' and ':' (it is one field of a raw profile). One
 * that was never initialised (all zeroes) works, and is reported as
 * `[waitq ?]` or `[mutex ?]`: which of the two is the call's
 * (waitq_wait or mutex_lock), not the struct's, so zeroes cannot make
 * a wait look like a sleep. */
struct waitq {
    spinlock_t lock;
    struct task *head;
    const char *name;
};
#define WAITQ_INIT(nm) { SPINLOCK_INIT(nm), 0, nm }

/* locked: 0 while free, 1 while held; stat: lockstat's counts of it
 * (kernel/lockstat.h), written by the holder. */
struct mutex {
    volatile unsigned locked;
    struct lockstat_hold stat;
    struct waitq wq;
    struct lockcharge_acct acct;     /* a lock window's waiters, under wq.lock */
};
#define MUTEX_INIT(nm) { .locked = 0, .wq = WAITQ_INIT(nm) }

/* For a queue or mutex inside an object made at run time (a kzalloc'd
 * struct): name is a string literal, as for WAITQ_INIT. */
static inline void waitq_init(struct waitq *wq, const char *name)
{
    spin_init(&wq->lock, name);
    wq->head = 0;
    wq->name = name;
}

static inline void mutex_init(struct mutex *m, const char *name)
{
    m->locked = 0;
    m->stat = (struct lockstat_hold){ .lh_gen = 0 };
    m->acct = (struct lockcharge_acct){ .lca_window = 0 };
    waitq_init(&m->wq, name);
}

/* This CPU: its idle task, running on the stack we are on, [lo, hi). */
void sched_init_cpu_stack(uintptr_t lo, uintptr_t hi);
void sched_run(void) __attribute__((noreturn));   /* become this CPU's idle loop */
void sched_tick(void);             /* from the tick: account, wake sleepers, ask to preempt */
void sched_preempt(void);          /* end of an interrupt: switch if asked to */
void schedule(void);               /* irqs off: pick the next task on this CPU */

/* Sleep until cond(arg) is true; cond is evaluated under the queue lock, so
 * a wake between the check and the sleep is never lost. */
void waitq_wait(struct waitq *wq, bool (*cond)(void *), void *arg);
void waitq_wake_all(struct waitq *wq);
void task_wake(struct task *t);

void mutex_lock(struct mutex *m);
void mutex_unlock(struct mutex *m);

/* Every task, under the task-list lock: fn must not sleep. */
void task_for_each(void (*fn)(struct task *t, void *arg), void *arg);
/* Look up by pid and run fn on it under the task-list lock (false if none). */
bool task_with_pid(int pid, void (*fn)(struct task *t, void *arg), void *arg);
int task_kill(int pid);            /* 0, -1 no such task, -2 not killable */
unsigned sched_cpu_load(unsigned cpu);
/* The task running on a CPU, copied out under its run-queue lock. */
void cpu_current_task(unsigned cpu, int *pid, char name[TASK_NAME_MAX]);
