/* kernel/prof/lockreport.h: `profile lock`, the report of a lock
 * snapshot (kernel/prof/lockreport.c): the waiters' time charged to the
 * holders that released the locks, by lock and holder's chain. Task
 * context.
 *
 * An entry is one distinct (holder, CPU, lock's kind and name, chain at
 * release), folded as the off-CPU records are (kernel/prof/fold.h,
 * PROF_FOLD_OFFCPU): its weight the delay in ns, its objects the waits.
 *
 * Profiler core: prefix prof_lock_. */
#pragma once
#include "kernel/prof/snapshot.h"

struct printer;

/* The lock view of a lock snapshot, in o's format. PROF_OK or
 * PROF_ENOMEM (message printed). */
int prof_lock_report(const struct prof_snapshot *s, const struct prof_report_opts *o,
                     struct printer *p);
