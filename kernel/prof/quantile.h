/* kernel/prof/quantile.h: the k-th smallest of an array
 * (kernel/prof/quantile.c).
 *
 * Profiler core: prefix prof_ and PROF_. */
#pragma once
#include <stdint.h>

/* The k-th smallest of a[0..n) (0-based; n >= 1, k < n), exactly, in
 * expected linear time; reorders a. */
uint32_t prof_select(uint32_t *a, uint32_t n, uint32_t k);
