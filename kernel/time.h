/* kernel/time.h: the monotonic clock (kernel/time.c).
 *
 * It depends on nothing but the cycle counter, so the tick, the scheduler
 * and the profiler can all read it without depending on one another. */
#pragma once
#include <stdint.h>

void time_init(uint64_t cycles_per_us);   /* boot CPU, after calibration */
uint64_t time_ns(void);                   /* monotonic, from cycles_now() */
/* What one unit of cycles_now() is in ns, 32.32 fixed point: for a
 * caller that keeps raw counter reads and converts only their
 * differences (the scheduler's off-CPU records), by one multiply. */
uint64_t time_ns_mult(void);
static inline uint64_t time_ms(void) { return time_ns() / 1000000; }
