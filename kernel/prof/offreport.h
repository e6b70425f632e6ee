/* kernel/prof/offreport.h: `profile off`, the report of an off-CPU
 * snapshot (kernel/prof/offreport.c), and its printing pieces, which the
 * wall-clock view (kernel/prof/wall.h) prints its off-CPU lines with.
 * Task context.
 *
 * An entry is one distinct (task, CPU, reason, wait queue, chain, waker,
 * waker's chain), addresses exact, its weights added (kernel/prof/fold.h,
 * PROF_FOLD_OFFCPU): the text report's callers are return addresses,
 * exact by nature, and the reason is the leaf, so no symbol is looked up
 * to fold.
 *
 * Profiler core: prefix prof_ and PROF_. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "kernel/prof/fold.h"
#include "kernel/prof/snapshot.h"

struct printer;

/* The off-CPU view of an off-CPU snapshot, in o's format (the wall and
 * latency views are kernel/prof/wall.h's). PROF_OK or PROF_ENOMEM
 * (message printed). */
int prof_off_report(const struct prof_snapshot *s, const struct prof_report_opts *o,
                    struct printer *p);

/* Fold every off-CPU record of s (PROF_FOLD_OFFCPU). False: no memory,
 * "profile: ..." said to p, nothing to free. */
bool prof_off_fold(const struct prof_snapshot *s, struct prof_fold *f, struct printer *p);

/* "12.345": ns as milliseconds, 3 decimals, rounded half up. */
void prof_off_ms(uint64_t ns, char *buf, unsigned n);
/* "42.1": w of total in percent, one decimal, rounded half up. */
void prof_off_pct(uint64_t w, uint64_t total, char *buf, unsigned n);
/* "[waitq virtio-rx]": an entry's reason as its leaf. */
void prof_off_leaf(const struct prof_fold_ent *e, char *buf, unsigned n);
/* An entry's lines after its leaf: its callers, then who woke it and
 * the waker's chain. */
void prof_off_print_tail(const struct prof_fold_ent *e, struct printer *p);
/* "task;outermost;...;innermost;[reason] us" for ns of e's time. */
void prof_off_print_folded(const struct prof_fold_ent *e, uint64_t ns, struct printer *p);
/* "<- fn+0x12/0x40" a line for each of d return addresses. */
void prof_off_print_callers(const uintptr_t *frames, unsigned d, const char *indent,
                            struct printer *p);
/* A folded stack's frame: the function ret returns into, or the address. */
void prof_off_frame_name(uintptr_t ret, char *buf, unsigned n);
/* The name of a task, for a field: sanitized, "-" when gone. */
void prof_off_task_name(int pid, char *name);
