/* kernel/timer.c: the per-CPU tick: count it, let the profiler sample,
 * let the scheduler preempt. */
#include "kernel/timer.h"
#include "kernel/percpu.h"
#include "kernel/prof/sample.h"
#include "kernel/sched.h"

void timer_tick(struct trap_frame *tf)
{
    this_cpu()->ticks++;
    prof_tick(tf);
    sched_tick();
}
