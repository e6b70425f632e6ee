/* kernel/time.h: the tick and the monotonic clock. */
#pragma once
#include <stdint.h>

#define TIMER_HZ 100

uint64_t time_ns(void);           /* monotonic, from the calibrated TSC */
static inline uint64_t time_ms(void) { return time_ns() / 1000000; }
