/* kernel/cmd/burn.h: the `burn` workload's call chain (kernel/cmd/burn.c), which
 * the bench also runs: burn_outer -> burn_middle -> burn_inner ->
 * burn_spin, the hot loop. Each is a real call (noinline) so that a
 * profile or a backtrace has a known chain to find. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

uint64_t burn_spin(uint64_t n);
uint64_t burn_inner(uint64_t n);
uint64_t burn_middle(uint64_t n);
uint64_t burn_outer(uint64_t n);
/* `burn tiny`: burn_tiny_loop calls burn_tiny, a leaf of a few
 * instructions, in a tight loop: most samples land in its prologue or on
 * its ret. */
uint64_t burn_tiny(uint64_t x);
uint64_t burn_tiny_loop(uint64_t n);
/* `burn phase`: burn_phase_a for 0.5 ms, burn_phase_b for 0.5 ms, on a
 * grid of the clock: a cycle of exactly 1 ms, the counter's period. Each
 * spins until cycles_now() reaches until. */
void burn_phase_a(uint64_t until);
void burn_phase_b(uint64_t until);

struct printer;
/* `burn wait <ms>` and `burn wait log` (kernel/cmd/burn_wait.c): argv[0]
 * is "wait". The exit status. */
int burn_wait_cmd(int argc, char **argv, struct printer *p);
void burn_wait_cpu(uint64_t ms);
void burn_wait_sleep(uint64_t ms);
void burn_wait_queue(void);
void burn_wait_mutex(void);

/* `burn lock <rounds> [hold_us]` (kernel/cmd/burn_lock.c): a holder and
 * a waiter of the mutex probe-m and the spinlock probe-s, with known
 * holds. argv[0] is "lock"; the exit status. */
int burn_lock_cmd(int argc, char **argv, struct printer *p);

/* `burn pingpong <ms> [rate] [cpu]` (kernel/cmd/burn_pingpong.c): two
 * tasks on one CPU handing a turn to each other through the wait queue
 * "burn-pp", rate hand-offs (= context switches) a second, 0 unpaced.
 * argv[0] is "pingpong"; the exit status. */
int burn_pingpong_cmd(int argc, char **argv, struct printer *p);
/* Start a run for ms on cpu: 0 and the two pids, -1 one is running
 * already, -2 out of memory. For benches as for the shell. */
int burn_pingpong_start(uint64_t ms, uint32_t rate, int cpu, int pids[2]);
uint64_t burn_pingpong_handoffs(void);   /* this run's, so far */
bool burn_pingpong_running(void);
void burn_pingpong_wait(unsigned me);
void burn_pingpong_pass(unsigned me);
