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
 *   quantile.c the k-th smallest sample cost (the median, the bench's p99)
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
    PROF_EINVAL = -1,    /* an argument out of range, or nothing to report */
    PROF_EBUSY = -2,     /* a run, report or stream holds the profiler */
    PROF_ENOMEM = -3,    /* a buffer or a fold table */
};

struct printer;

/* Who holds the profiler while a stream does, for a refusal's words: the
 * note is printed by the stream's own function (what it says depends on
 * who asks: a stream's id goes only to its own destination). */
typedef void (*prof_busy_note_fn)(struct printer *p);

/* Why the core refused, as a fact: the command layer (kernel/cmd/) says
 * it in words. Every refusal is one of these, with the value it refused
 * and, where one applies, the range it allows. */
enum prof_why_not {
    PROF_NOT_NONE = 0,
    PROF_NOT_WINDOW,     /* pe_value ms, outside PROF_WINDOW_MIN..MAX */
    PROF_NOT_CHAINS,     /* pe_value, outside 1..PROF_CHAINS */
    PROF_NOT_FORMAT,     /* pe_value, no enum prof_format */
    PROF_NOT_WALL_RAW,   /* a wall-clock view in the raw format: none */
    PROF_NOT_PID,        /* pe_value: no such task */
    PROF_NOT_BUSY,       /* held: pe_note, the stream's note, or NULL */
    PROF_NOT_LATE,       /* pe_cpu is still finishing a sample of the last run */
    PROF_NOT_MEMORY,     /* pe_cpu's ring of pe_bytes */
    PROF_NOT_NO_RUN,     /* no run to report yet */
    PROF_NOT_RESERVE,    /* pe_value records, outside 1..PROF_RESERVE_MAX */
    PROF_NOT_HEAP_OFF,   /* heap sampling is off (the rate handed in is 0) */
    PROF_NOT_HEAP_ALONE, /* a heap stream with another kind */
};

struct prof_err {
    enum prof_why_not pe_why;
    long long pe_value;
    int pe_cpu;
    unsigned long pe_bytes;
    prof_busy_note_fn pe_note;
};

/* Set *e (when e is not NULL) and return rc: a refusal in one line. */
static inline int prof_refuse(struct prof_err *e, int rc, enum prof_why_not why,
                              long long value)
{
    if (e)
        *e = (struct prof_err){ .pe_why = why, .pe_value = value, .pe_cpu = -1 };
    return rc;
}
