/* kernel/prof/report.h: the readers of a frozen snapshot: the text report
 * (kernel/prof/report.c) and the exports (kernel/prof/export.c). Task
 * context: they allocate, look symbols and task names up, and print.
 *
 * Profiler core: prefix prof_ and PROF_. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "kernel/prof/snapshot.h"

struct printer;

/* What a report prints: the hottest chains with names and offsets; every
 * chain as folded stacks of names, root first; or every chain raw, as
 * addresses (uapi/profile_raw.h). */
enum prof_format { PROF_TEXT, PROF_FOLDED, PROF_RAW };

/* What a report of an off-CPU snapshot shows (kernel/prof/offreport.c):
 * the off-CPU chains, each task's wall-clock time, or the histogram of
 * scheduler latency. */
enum prof_view { PROF_VIEW_OFF = 1, PROF_VIEW_WALL, PROF_VIEW_LATENCY };

struct prof_report_opts {
    unsigned ro_chains;               /* text: chains to print, 1..PROF_CHAINS */
    enum prof_format ro_format;       /* text, folded or raw */
    enum prof_view ro_view;           /* off-CPU snapshots only */
};

/* The report of a snapshot, to p, in o's format. Text: header, cost,
 * chains, overflow line or an empty-report message; folded and raw go to
 * prof_export. PROF_OK or PROF_ENOMEM (message printed). */
int prof_report(const struct prof_snapshot *s, const struct prof_report_opts *o,
                struct printer *p);

/* The report of an off-CPU snapshot (kernel/prof/offreport.c), in o's
 * view and format. PROF_OK or PROF_ENOMEM (message printed). */
int prof_off_report(const struct prof_snapshot *s, const struct prof_report_opts *o,
                    struct printer *p);

/* Cycles (cycles_now) the last prof_report took, fold to last line
 * printed, printing through its printer included. */
uint64_t prof_report_cycles(void);

/* "cpus: 0 pmu 1001, 1 tick 98, 2 none": each CPU in the window and how
 * many of its samples came from the counter and from the tick (a CPU
 * that armed late has both). */
void prof_print_sources(const struct prof_snapshot *s, struct printer *p);
