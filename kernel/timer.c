/* kernel/timer.c: the tick and the monotonic clock. */
#include "kernel/timer.h"
#include "hal/cpu.h"
#include "kernel/percpu.h"
#include "kernel/profiler.h"
#include "kernel/sched.h"

static uint64_t tsc_boot, tsc_per_us;

void time_init(uint64_t per_us)
{
    tsc_boot = cycles_now();
    tsc_per_us = per_us;
}

uint64_t time_ns(void)
{
    if (!tsc_per_us)
        return 0;
    uint64_t d = cycles_now() - tsc_boot;
    /* d * 1000 / per_us without overflow for centuries of uptime */
    return d / tsc_per_us * 1000 + (d % tsc_per_us) * 1000 / tsc_per_us;
}

void timer_tick(struct trap_frame *tf)
{
    this_cpu()->ticks++;
    profiler_tick(tf);
    sched_tick();
}
