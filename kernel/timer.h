/* kernel/timer.h: the per-CPU tick. */
#pragma once
#include "kernel/time.h"

struct trap_frame;
void timer_tick(struct trap_frame *tf);    /* every CPU, TIMER_HZ, irqs off */
void time_init(uint64_t tsc_per_us);       /* after TSC calibration */
