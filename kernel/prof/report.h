/* kernel/prof/report.h: the report of a frozen snapshot
 * (kernel/prof/report.c): the text report itself, and the entry point
 * that hands other formats and kinds to their readers (the exports,
 * kernel/prof/export.h; off-CPU, kernel/prof/offreport.h). Task context:
 * they allocate, look symbols and task names up, and print.
 *
 * Profiler core: prefix prof_ and PROF_. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "kernel/prof/snapshot.h"

struct printer;

/* The report of a snapshot, to p, in o's format (kernel/prof/snapshot.h).
 * Text: header, cost, chains, overflow line or an empty-report message;
 * folded and raw go to prof_export, off-CPU snapshots to their view's
 * reader. PROF_OK, PROF_ENOMEM or PROF_EINVAL (message printed). */
int prof_report(const struct prof_snapshot *s, const struct prof_report_opts *o,
                struct printer *p);

/* Cycles (cycles_now) the last prof_report took, fold to last line
 * printed, printing through its printer included. */
uint64_t prof_report_cycles(void);

/* "cpus: 0 pmu 1001, 1 tick 98, 2 none": each CPU in the window and how
 * many of its samples came from the counter and from the tick (a CPU
 * that armed late has both). */
void prof_print_sources(const struct prof_snapshot *s, struct printer *p);
