/* kernel/prof/offfold.h: the fold of an off-CPU snapshot's records, which
 * the off-CPU report (kernel/prof/offreport.c) and the wall-clock and
 * latency views (kernel/prof/wall.c) share. Task context.
 *
 * An entry is one distinct (task, CPU, reason, wait queue, chain, waker,
 * waker's chain), addresses exact, its weights added: the text report's
 * callers are return addresses, exact by nature, and the reason is the
 * leaf, so no symbol is looked up to fold.
 *
 * Profiler core: prefix prof_ and PROF_. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "kernel/prof/fold.h"
#include "kernel/prof/report.h"
#include "kernel/prof/snapshot.h"

struct printer;

struct prof_off_ent {
    uint64_t oe_hash;
    uint64_t oe_weight;         /* ns */
    uint32_t oe_count;          /* intervals */
    int32_t oe_pid;
    int32_t oe_waker;           /* pid; 0: the tick; -1: none */
    uint16_t oe_cpu;
    uint8_t oe_why;             /* enum prof_why */
    uint8_t oe_depth, oe_wdepth;
    const char *oe_name;
    uintptr_t oe_frames[PROF_FRAMES];
    uintptr_t oe_wframes[PROF_FRAMES];
};

struct prof_off_fold {
    const struct prof_snapshot *of_snap;
    struct prof_off_ent *of_ents;
    uint32_t of_n;
    struct prof_index of_ix;
    uint64_t of_blocked, of_runnable;   /* ns, every task */
    uint32_t of_tasks;                  /* distinct pids with off-CPU time */
    uint32_t of_cpus;                   /* CPUs with off-CPU records */
};

/* Fold every off-CPU record of s (a waker's chain joins the blocked
 * record it follows). False: no memory, "profile: ..." said to p, f
 * freed. */
bool prof_off_fold(const struct prof_snapshot *s, struct prof_off_fold *f,
                   struct printer *p);
void prof_off_fold_free(struct prof_off_fold *f);
/* An empty fold with room for n entries. False: no memory (said to p). */
bool prof_off_fold_init(const struct prof_snapshot *s, struct prof_off_fold *f,
                        uint32_t n, struct printer *p);
/* Add weight w to k's entry (k->oe_hash set), a new one if unseen. */
void prof_off_fold_add(struct prof_off_fold *f, const struct prof_off_ent *k, uint64_t w);
/* The entries' indices, heaviest first (ties by what is printed); into
 * the index's slots, whose job ended with the fold. */
uint32_t *prof_off_sort(struct prof_off_fold *f);

/* "12.345": ns as milliseconds, 3 decimals, rounded half up. */
void prof_off_ms(uint64_t ns, char *buf, unsigned n);
/* "42.1": w of total in percent, one decimal, rounded half up. */
void prof_off_pct(uint64_t w, uint64_t total, char *buf, unsigned n);
/* "[waitq virtio-rx]": an entry's reason as its leaf. */
void prof_off_leaf(const struct prof_off_ent *e, char *buf, unsigned n);
/* An entry's lines after its leaf: its callers, then who woke it and
 * the waker's chain. */
void prof_off_print_tail(const struct prof_off_ent *e, struct printer *p);
/* "task;outermost;...;innermost;[reason] us" for ns of e's time. */
void prof_off_print_folded(const struct prof_off_ent *e, uint64_t ns, struct printer *p);
/* Whether why is blocked time (sleep, waitq, mutex), not runnable. */
bool prof_off_is_blocked(unsigned why);

/* The wall-clock view and the latency histogram (kernel/prof/wall.c). */
int prof_wall_report(const struct prof_snapshot *s, const struct prof_report_opts *o,
                     struct printer *p);
void prof_latency_print(const struct prof_snapshot *s, struct printer *p);

/* The name of a task, for a field: sanitized, "-" when gone. */
void prof_off_task_name(int pid, char *name);
