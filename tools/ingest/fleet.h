/* tools/ingest/fleet.h: a fleet's record in rounds, and its accounting
 * summed over them (`sonde-prof record --sample K --period P`, --stats;
 * docs/continuous.md, "A fleet under a budget").
 *
 * Sampled K kernels at a time, round r streams kernels r*K .. r*K+K-1
 * (mod N) for one period each: over R rounds every kernel is streamed
 * floor(R*K/N) or that plus one periods, never more than one period from
 * its fair share R*K*P/N, and a kernel outside the round has no stream
 * at all (its kernel pays nothing).
 *
 * Host pipeline: prefix sp_. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "tools/ingest/collect.h"

/* One kernel's streams, summed: what the record covered of it and what
 * was lost, refused and counted twice. */
struct sp_fleet_total {
    unsigned streams;               /* streams taken (rounds it was in) */
    uint64_t covered_ms;            /* its streams' windows, summed */
    uint64_t records;               /* received, bad ones included */
    uint64_t lost_records, lost_dgrams;   /* on the wire */
    uint64_t dups;                  /* copies, the END's second and third aside
                                       (the collector may be done before they come) */
    uint64_t drops;                 /* in the kernel */
    uint64_t refused;               /* datagrams refused, records with a bad field */
    bool end_missing;               /* some stream's END never came: a lower bound */
};

/* The kernels of round r: which[i] for the K (at most N) kernels it
 * streams. */
void sp_fleet_pick(unsigned round, unsigned k, unsigned n, bool *which);

/* Kernel k's stream, over and covering covered_ms, added to t. */
void sp_fleet_add(struct sp_fleet_total *t, const struct sp_collect_kernel *k,
                  uint64_t covered_ms);

/* One line per kernel and a total (docs/continuous.md, "A fleet under a
 * budget"):
 *   KERNEL streams S covered_ms M records R lost_records L lost_dgrams D
 *          dups U drops K refused X [end_missing]
 * 0, or -1 on a write error. */
int sp_fleet_write_stats(FILE *f, const struct sp_collect *c, const struct sp_fleet_total *t);

/* A stream record: the window, the kernels' filter, K and P (sample 0:
 * every kernel for the whole window), and what is said on a terminal. */
struct sp_fleet_run {
    const char *prog;               /* every message's prefix */
    unsigned ms;                    /* the window (-d) */
    const char *who;                /* a pid or "all" */
    unsigned sample, period_ms;     /* --sample K --period P, or 0 */
    bool tty;                       /* a progress line, each stream's id */
    uint64_t end_wait_ms;           /* past a window: the wait for the ENDs */
};

/* Records r's window from every kernel at once, or in rounds of
 * r->period_ms on r->sample kernels each (then a line on stderr sums the
 * coverage); every kernel's streams added to t[kernel]. A USHC_EXIT_*
 * status: a kernel that refused fails it (the streams started are
 * stopped), as USHC_EXIT_PROTO a socket error. */
int sp_fleet_record(struct sp_collect *c, const struct sp_fleet_run *r, struct sp_fleet_total *t);

/* "covered 2.5 kernel-s in 5 streams of 0.5 s" for the report's note. */
void sp_fleet_coverage(char *buf, size_t cap, const struct sp_fleet_total *t, unsigned period_ms);
