/* kernel/timer.c: the per-CPU tick: count it, let the profiler sample,
 * let the scheduler preempt. */
#include "kernel/timer.h"
#include "hal/cpu.h"
#include "kernel/panic.h"
#include "kernel/percpu.h"
#include "kernel/profiler.h"
#include "kernel/sched.h"

void timer_tick(struct trap_frame *tf)
{
    BUG_ON(irqs_enabled());       /* the sampler's per-CPU buffer relies on it */
    this_cpu()->ticks++;
    profiler_tick(tf);
    sched_tick();
}
