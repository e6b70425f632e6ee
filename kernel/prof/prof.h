/* kernel/prof/prof.h: what every layer of the profiler core shares: its
 * limits, its error codes and the pid filter (docs/profiling.md).
 *
 * The core (kernel/prof/, prefix prof_ and PROF_) is one layer per file:
 *   sample.c   the tick and NMI entry, the counter's claim, the capture,
 *              the record
 *   ring.c     each CPU's single-producer, single-consumer ring, its gate
 *              (ring_produce.h: the producers' side, inline)
 *   session.c  who holds the profiler, start, stop, freeze; windows and
 *              streams' lifetimes
 *   fold.c     the one fold engine every report prints from (fold_index.c:
 *              its entries, resolved addresses and hash index)
 *   report.c   the text report of a frozen snapshot, and prof_report,
 *              which hands each snapshot to its reader
 *   export.c   folded stacks and raw chains of a snapshot
 *   stream.c   drain the rings, batch, encode, hand datagrams to a sink
 *   offcpu.c   off-CPU time from the scheduler's switches and wakes
 *   offreport.c, wall.c   the off-CPU, wall-clock and latency reports
 *   heapview.c the allocator's in-use table as a snapshot
 * Dependencies run one way: commands -> session/stream -> ring <- sample.
 * The core knows no shell, no command and no network: commands live in
 * kernel/cmd/, and a stream sends through the sink its caller gives. */
#pragma once

#define PROF_FRAMES       8     /* frame 0 is the interrupted pc */
#define PROF_CHAINS       128   /* the text report's chain table */
#define PROF_RESERVE_MAX  65536 /* records per CPU prof_reserve grants */
#define PROF_WINDOW_MIN   1     /* ms */
#define PROF_WINDOW_MAX   2000
#define PROF_WINDOW_DEF   1000
#define PROF_CHAINS_DEF   8
#define PROF_ALL          (-1)  /* pid filter: every task */

enum {
    PROF_OK = 0,
    PROF_EINVAL = -1,    /* an argument out of range (message printed) */
    PROF_EBUSY = -2,     /* a run, report or stream holds the profiler */
    PROF_ENOMEM = -3,    /* a buffer or a fold table (message printed) */
};
