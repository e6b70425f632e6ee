/* kernel/time.h: the monotonic clock (kernel/time.c).
 *
 * It depends on nothing but the cycle counter, so the tick, the scheduler
 * and the profiler can all read it without depending on one another. */
#pragma once
#include <stdint.h>

void time_init(uint64_t cycles_per_us);   /* boot CPU, after calibration */
uint64_t time_ns(void);                   /* monotonic, from cycles_now() */
static inline uint64_t time_ms(void) { return time_ns() / 1000000; }
