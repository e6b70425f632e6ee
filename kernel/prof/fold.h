/* kernel/prof/fold.h: the one fold engine (kernel/prof/fold.c). Every
 * reader of a frozen snapshot folds through it: the text report
 * (kernel/prof/report.c), the exports (kernel/prof/export.c), the off-CPU
 * report (kernel/prof/offreport.c) and the wall view (kernel/prof/wall.c).
 * They only print what it leaves. Task context.
 *
 * A fold takes the records of one kind, keys each by its whole chain plus
 * what its mode names (enum prof_fold_by), and adds up each key's records
 * (count, weight, heap objects) in an entry; then it sorts the entries,
 * heaviest first, ties by what the mode prints.
 *
 * Profiler core: prefix prof_ and PROF_; the fold's fields fo_, its
 * entries' fe_. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel/prof/fold_index.h"
#include "kernel/prof/snapshot.h"
#include "kernel/task.h"

/* What a fold keys a record by, besides its chain, and how it walks. */
enum prof_fold_by {
    /* The text report: the leaf by symbol (its start, or the exact
     * address when nothing resolves), the callers by exact return
     * address. Records are walked round-robin across CPUs (record i of
     * every CPU, then i + 1), so that the report's table, the first
     * PROF_CHAINS entries, holds chains from the start of the window on
     * every CPU; each record's cost is kept (fo_costs). */
    PROF_FOLD_SYMBOL,
    /* The wall view's on-CPU half: the pid, then as PROF_FOLD_SYMBOL. */
    PROF_FOLD_TASK_SYMBOL,
    /* Raw chains: pid, CPU, every frame exact. */
    PROF_FOLD_EXACT,
    /* Folded stacks: the task's name, every frame by the name of its
     * symbol (the pc's own, a return address's call: ret - 1), compared
     * by content, since two static functions may share a name. */
    PROF_FOLD_NAMES,
    /* Off-CPU: pid, CPU, reason, wait queue, waker, the chain exact and
     * the waker's chain (the record right behind, PROF_WHY_WAKER). */
    PROF_FOLD_OFFCPU,
};

/* One distinct key and what its records add up to. Fields the mode does
 * not key on are 0. */
struct prof_fold_ent {
    uint64_t fe_hash;
    uint64_t fe_weight;         /* the records' weights (a CPU sample weighs 1) */
    uint64_t fe_objects;        /* heap: the objects they stand for, Q16 */
    uint32_t fe_count;          /* records */
    int32_t fe_pid;
    int32_t fe_waker;           /* off-CPU: pid; 0: the tick; -1: none */
    uint32_t fe_wirq;           /* off-CPU: the interrupt the wake came in
                                   (PROF_IRQ_WORD, record.h), or 0 */
    uint32_t fe_task;           /* names: the first task of this name (fo_tasks) */
    uint16_t fe_cpu;
    uint8_t fe_why;             /* off-CPU: enum prof_why */
    uint8_t fe_depth;           /* frames in fe_frames */
    uint8_t fe_wdepth;          /* off-CPU: frames in fe_wframes */
    uint8_t fe_named;           /* bit i: frame i resolved (symbol modes: the
                                   leaf only, fe_frames[0] its start; names:
                                   fe_frames[i] is the name) */
    uint32_t fe_off_min, fe_off_max;    /* symbol modes: the leaf's offsets */
    const char *fe_name;        /* symbol modes: the leaf's symbol (NULL: none);
                                   off-CPU: the wait queue's or mutex's name */
    uintptr_t fe_frames[PROF_FRAMES];   /* innermost first; off-CPU: 0 past depth */
    /* Off-CPU entries only: the others end here (fo_ents' item size). */
    uintptr_t fe_wframes[PROF_FRAMES];
};

/* A pid seen in the run and the name it had at fold time as one field
 * (uapi/profile_raw.h): '_' for what would split a line, "-" for none. */
struct prof_fold_task {
    int32_t fk_pid;
    uint32_t fk_first;          /* the first task with the same name */
    char fk_name[TASK_NAME_MAX];
};

struct prof_fold {
    const struct prof_snapshot *fo_snap;
    uint8_t fo_by;              /* enum prof_fold_by */
    uint8_t fo_kind;            /* the records it took (enum prof_kind) */
    bool fo_nomem;              /* an allocation failed: nothing else valid */
    struct prof_items fo_ents;     /* struct prof_fold_ent, first seen first */
    struct prof_index fo_ix;
    struct prof_items fo_syms;     /* resolved addresses (symbol, names) */
    struct prof_index fo_sym_ix;
    struct prof_fold_task *fo_tasks;    /* exact, names: one a pid */
    uint32_t fo_ntasks, fo_last_task;
    uint32_t *fo_costs;         /* symbol: every record's cost, in fold order */
    uint32_t fo_total;          /* records in the snapshot, every kind */
    uint32_t fo_records;        /* of them folded */
    unsigned fo_cpus;           /* CPUs with a record folded */
    uint64_t fo_weight;         /* the folded records' weights */
    uint64_t fo_objects;        /* heap: the objects they stand for, Q16 */
    uint64_t fo_blocked, fo_runnable;   /* off-CPU: ns, every task */
    uint64_t fo_spun;                   /* off-CPU: ns spun on spinlocks (on the CPU) */
    uint32_t fo_pids;           /* off-CPU: distinct pids among the entries */
};

/* Fold s's records of kind by by into f. False: no memory; f holds no
 * memory then, and only fo_total (the records) and fo_ents.fi_n (the
 * entries so far) are valid. Otherwise free with prof_fold_free. */
bool prof_fold_run(struct prof_fold *f, const struct prof_snapshot *s,
                   enum prof_fold_by by, unsigned kind);
void prof_fold_free(struct prof_fold *f);
/* The weights of entries from.. added (the text report's overflow line). */
uint64_t prof_fold_weight_from(const struct prof_fold *f, uint32_t from);
/* The most a fold of n records by by asks for, in bytes. */
size_t prof_fold_most(enum prof_fold_by by, uint32_t n);

static inline uint32_t prof_fold_n(const struct prof_fold *f)
{
    return f->fo_ents.fi_n;
}

static inline const struct prof_fold_ent *prof_fold_at(const struct prof_fold *f, uint32_t i)
{
    return (const struct prof_fold_ent *)prof_item(&f->fo_ents, i);
}

/* The first n entries, heaviest first, ties by what the mode prints (the
 * order never depends on which CPU or which record came first). Into the
 * index's slots: the fold finds no key after this. */
const struct prof_fold_ent *const *prof_fold_sort(struct prof_fold *f, uint32_t n);

/* Exact and names: pid's task entry (its name looked up the first time). */
const struct prof_fold_task *prof_fold_task(struct prof_fold *f, int pid);
/* Names: frame i as printed: its symbol's name, or the address in hex. */
const char *prof_fold_frame_name(const struct prof_fold_ent *e, unsigned i,
                                 char *buf, size_t n);

