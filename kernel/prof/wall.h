/* kernel/prof/wall.h: `profile wall`, each task's whole window, and
 * `profile latency`, the histogram of scheduler latency, both read from
 * an off-CPU snapshot (kernel/prof/wall.c). Task context.
 *
 * Profiler core: prefix prof_ and PROF_. */
#pragma once
#include "kernel/prof/snapshot.h"

struct printer;

/* The wall-clock view of s, text or folded; raw is refused (PROF_EINVAL,
 * said to p). PROF_OK or PROF_ENOMEM (message printed). */
int prof_wall_report(const struct prof_snapshot *s, const struct prof_report_opts *o,
                     struct printer *p);
/* Each CPU's histogram of wake-to-run times, in microseconds. */
void prof_latency_print(const struct prof_snapshot *s, struct printer *p);
