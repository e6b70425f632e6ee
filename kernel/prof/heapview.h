/* kernel/prof/heapview.h: `profile heap`, the in-use view of heap
 * profiling (kernel/prof/heapview.c): the allocator's table of live
 * sampled blocks (mm/heapprof.h) read as a snapshot of the heap kind,
 * for the same readers as a window (kernel/prof/report.h). Not a window:
 * it takes no rings and does not hold the profiler. Task context.
 *
 * Profiler core: prefix prof_ and PROF_. */
#pragma once
#include "kernel/prof/report.h"

struct printer;

/* The estimated bytes and objects in use now, by allocation chain, in
 * fmt (chains: how many the text shows, 1..PROF_CHAINS). PROF_OK,
 * PROF_EINVAL or PROF_ENOMEM, each error said to p. */
int prof_heap_report(unsigned chains, enum prof_format fmt, struct printer *p);
