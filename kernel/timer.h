/* kernel/timer.h: the per-CPU tick (kernel/timer.c). The clock is
 * kernel/time.h. */
#pragma once

#define TIMER_HZ 100

#include <stdbool.h>
#include <stdint.h>

/* Whether a tick is being handled promptly: less than an eighth of the
 * period after it fell due (since_due and period in the same unit). A
 * vCPU that handles its tick promptly has been running; one that handles
 * it late was kept waiting by the host, and gives nothing up
 * (docs/qemu-icount.md: ending a prompt tick's vCPU turn). */
static inline bool timer_tick_prompt(uint64_t since_due, uint64_t period)
{
    return period != 0 && since_due < period / 8;
}

struct trap_frame;
void timer_tick(struct trap_frame *tf);    /* every CPU, TIMER_HZ, irqs off */
