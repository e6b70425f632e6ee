/* kernel/task.h: tasks (the parts other subsystems use). The profiler
 * core reaches tasks through this header only, never kernel/sched.h,
 * whose struct task embeds the core's per-task state: so no include
 * circle passes through kernel/prof/. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "kernel/percpu.h"

#define TASK_NAME_MAX 16
#define TASK_STACK_SIZE (16 * 1024)

enum task_state { TASK_RUNNABLE, TASK_RUNNING, TASK_SLEEPING, TASK_DEAD };

struct task;
typedef void (*task_fn)(void *arg);

#define TASK_ANY_CPU (-1)
#define TASK_KILLABLE 1u

/* Create and start; NULL on exhaustion. cpu = TASK_ANY_CPU for least loaded. */
struct task *task_spawn(const char *name, task_fn fn, void *arg, int cpu, unsigned flags);
int task_pid(const struct task *t);
/* Pid of the task running on this CPU; NMI-safe (one per-CPU load). */
int task_current_pid(void);
struct task *task_current(void);
bool task_exists(int pid);
/* Whether pid is a CPU's idle task (false for none): task-list lock. */
bool task_is_idle(int pid);
/* Copy the name of a live task (not dead) into name; false if there is
 * none. Takes the task-list lock: task context only, never from NMI. */
bool task_name(int pid, char name[TASK_NAME_MAX]);
void task_exit(void) __attribute__((noreturn));
void yield(void);
void sleep_ms(uint64_t ms);          /* until the first tick >= ms from now */
void sleep_ticks(unsigned n);        /* until this CPU's n-th tick from now (0: 1) */
void sleep_to_tick(void);            /* until this CPU's next tick */
/* Set by kill: a killable task polls it and exits. */
bool task_should_stop(void);
/* Every task's pid and name, under the task-list lock: fn only copies. */
void task_for_each_id(void (*fn)(int pid, const char *name, void *arg), void *arg);
/* The end of an off-CPU window (after prof_off_end): charge every task
 * still off its CPU up to the end, its records into this CPU's ring. */
void sched_off_sweep(void);

/* Where struct task (kernel/sched.h) keeps its pid, checked there. */
#define TASK_OFF_PID 8

/* task_current_pid() for the sample path (kernel/prof/sample.c): one
 * per-CPU load and one of the task, inline (hal/cpu.h's
 * this_cpu_inline, which host tests answer from their own struct cpu
 * array). As a call (and this_cpu's call inside it) it cost each x86-64
 * sample about a dozen guest instructions, counted from the disassembly.
 * By offset, so that the core need not see struct task. */
static inline int task_current_pid_inline(void)
{
    const struct task *t = this_cpu_inline()->current;
    return t ? *(const int *)((const char *)t + TASK_OFF_PID) : 0;
}
