/* kernel/timer.h: the per-CPU tick (kernel/timer.c). The clock is
 * kernel/time.h. */
#pragma once

#define TIMER_HZ 100

struct trap_frame;
void timer_tick(struct trap_frame *tf);    /* every CPU, TIMER_HZ, irqs off */
