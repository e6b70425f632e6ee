/* kernel/prof/heapview.h: `profile heap`, the in-use view of heap
 * profiling (kernel/prof/heapview.c): the allocator's table of live
 * sampled blocks (mm/heapprof.h) read as a snapshot of the heap kind,
 * for the same readers as a window (kernel/prof/report.h). Not a window:
 * it takes no rings and does not hold the profiler. Task context.
 *
 * Profiler core: prefix prof_ and PROF_. */
#pragma once
#include <stdint.h>
#include "kernel/prof/prof.h"
#include "kernel/prof/report.h"

struct printer;

/* A copy of the allocator's in-use table (mm/heapprof.h's heapprof_copy_table,
 * taken by the caller): ht_n records of the heap kind, the sampling rate
 * they were taken at, and the blocks the table had no room for. */
struct prof_heap_table {
    const struct prof_record *ht_recs;
    uint32_t ht_n;
    uint32_t ht_rate;
    uint64_t ht_overflow;
};

/* The estimated bytes and objects in use, by allocation chain, in fmt
 * (chains: how many the text shows, 1..PROF_CHAINS). PROF_OK,
 * PROF_EINVAL (PROF_NOT_CHAINS in *e) or the report's PROF_ENOMEM (said
 * to p). */
int prof_heap_report(const struct prof_heap_table *t, unsigned chains, enum prof_format fmt,
                     struct printer *p, struct prof_err *e);
