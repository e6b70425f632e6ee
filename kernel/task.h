/* kernel/task.h: tasks (the parts other subsystems use). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

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
