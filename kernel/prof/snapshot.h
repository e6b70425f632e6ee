/* kernel/prof/snapshot.h: one run as Stop left it, what the session
 * hands the readers (kernel/prof/report.h dispatches to each), and what
 * they are asked for.
 *
 * Record raw, present later: the sampler never formats, the readers never
 * look at per-CPU sampling state. Stop freezes the run into a snapshot and
 * the readers read only that, so a new output format is a new reader of
 * the same snapshot.
 *
 * Profiler core: prefix prof_ and PROF_. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "hal/cpu.h"
#include "kernel/prof/record.h"

/* The record arrays are the per-CPU rings themselves, not copies: no
 * sampler writes them again until the gate opens again, and it cannot
 * while the session is held, which it is for as long as a snapshot is
 * being read. */
struct prof_snapshot {
    const struct prof_record *ps_recs[MAX_CPUS];  /* NULL: no ring */
    uint32_t ps_count[MAX_CPUS];      /* records, at most the ring's size */
    uint32_t ps_from_pmu[MAX_CPUS];   /* of those, CPU samples the counter's NMI took */
    uint32_t ps_from_tick[MAX_CPUS];  /* and the tick took (the rest: other kinds) */
    bool ps_in_window[MAX_CPUS];      /* online with a ring at Start */
    uint32_t ps_dropped;              /* ring full or nested, all CPUs */
    uint32_t ps_drops[MAX_CPUS];      /* the same, each CPU's */
    uint32_t ps_nested[MAX_CPUS];     /* of those, each CPU's counter NMIs
                                         that landed inside another record's
                                         writing (kernel/prof/ring_produce.h) */
    uint8_t ps_kind;                  /* what the run measured (enum prof_kind):
                                         the readers take records of it only */
    unsigned ps_ms;                   /* the window asked for */
    uint64_t ps_t0, ps_ns;            /* off-CPU: the window as charged: its
                                         start on time_ns() and its length */
    int ps_pid;                       /* PROF_ALL or the filter */
    uint64_t ps_cycles;               /* cycles_now across the window */
    unsigned ps_ncpus;                /* CPUs online with a ring at Start */
    bool ps_counter;                  /* the probe found a usable counter */
    const char *ps_source;            /* pmu_source_name() */
    const char *ps_note;              /* pmu_probe_note(), or NULL */
    /* Heap snapshots only (kernel/prof/heapview.c): */
    bool ps_inuse;                    /* the in-use table, not a window */
    uint32_t ps_rate;                 /* the sampling rate, bytes */
};

/* What the readers are asked for; prof_report (kernel/prof/report.h)
 * hands each snapshot to its reader. What a report prints: the hottest
 * chains with names and offsets; every chain as folded stacks of names,
 * root first; or every chain raw, as addresses (uapi/profile_raw.h). */
enum prof_format { PROF_TEXT, PROF_FOLDED, PROF_RAW };

/* What a report of an off-CPU snapshot shows: the off-CPU chains
 * (kernel/prof/offreport.h), each task's wall-clock time, or the
 * histogram of scheduler latency (kernel/prof/wall.h). */
enum prof_view { PROF_VIEW_OFF = 1, PROF_VIEW_WALL, PROF_VIEW_LATENCY };

struct prof_report_opts {
    unsigned ro_chains;               /* text: chains to print, 1..PROF_CHAINS */
    enum prof_format ro_format;       /* text, folded or raw */
    enum prof_view ro_view;           /* off-CPU snapshots only */
};
