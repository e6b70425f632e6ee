/* kernel/prof/session.h: the profiler's run control, for the commands
 * (kernel/cmd/profile.c), the stream (kernel/prof/stream.c) and the bench
 * (kernel/cmd/bench.c). Task context throughout.
 *
 * One holder at a time: a windowed run, a report of the last run, or a
 * stream. A second asker is refused, PROF_EBUSY with PROF_NOT_BUSY (and,
 * while a stream holds it, the stream's note). Nothing here prints but
 * the reports, to the printer they are handed: every refusal is a fact
 * (struct prof_err, kernel/prof/prof.h) that kernel/cmd/ puts in words.
 *
 * Profiler core: prefix prof_ and PROF_. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel/prof/prof.h"
#include "kernel/prof/report.h"

struct printer;

/* A heap run's source, as a raw profile's header says it
 * (uapi/profile_raw.h): "heap allocs rate R" for the allocator's samples
 * in a window or a stream, "heap inuse rate R" for the in-use table. */
void prof_heap_source(char *buf, size_t cap, bool inuse, uint32_t rate);

/* Whether ms is a window (PROF_WINDOW_MIN..PROF_WINDOW_MAX), and n a chain
 * count (1..PROF_CHAINS): the commands check their words with these. */
bool prof_window_ok(uint64_t ms);
bool prof_chains_ok(uint64_t n);

/* A window: what it records, for how long, of whom, and how it is
 * reported. */
struct prof_snapshot;
/* A trace's reader: the window's snapshot, frozen, the profiler still
 * held (kernel/prof/trace.h reads it). */
typedef void (*prof_window_read_fn)(const struct prof_snapshot *s, void *arg);

struct prof_window_spec {
    enum prof_kind ws_kind;     /* PROF_KIND_CPU, _OFFCPU, _HEAP or _TRACE */
    enum prof_view ws_view;     /* _OFFCPU: off, wall or latency */
    unsigned ws_ms;             /* PROF_WINDOW_MIN..PROF_WINDOW_MAX */
    int ws_pid;                 /* PROF_ALL or a pid */
    unsigned ws_chains;         /* 1..PROF_CHAINS; matters only to PROF_TEXT */
    enum prof_format ws_format;
    uint32_t ws_heap_rate;      /* _HEAP: the allocator's sampling rate in force,
                                   handed in by the caller (mm owns it): 0 is off */
    /* _TRACE: no report; the snapshot goes to ws_read instead (format
     * PROF_TEXT, ws_chains unused). */
    prof_window_read_fn ws_read;
    void *ws_arg;
};

/* One whole window: Start, sleep ws_ms, Stop, report to report. A trace
 * records every switch, wake and interrupt slice with the CPU's samples
 * (the probed source's), and hands its snapshot to ws_read. A trace is a
 * window like the others: while it runs a profile is refused as busy,
 * and it is refused while one runs. A CPU
 * window samples the CPU; an off-CPU one opens the gate to off-CPU
 * records (and CPU samples, for the wall view) and charges every task
 * still away up to the end (sched_off_sweep); a heap one (`profile
 * allocs`) records the allocator's samples (mm/heapprof.h, through
 * prof_emit): estimated bytes and objects allocated, by chain. PROF_OK,
 * or a negative PROF_E* with the refusal in *e and nothing started (a
 * report's own failure, PROF_ENOMEM of a fold, is said in the report). */
#define PROF_HEAP_WINDOW_RECS 8192u  /* records per CPU a heap window keeps */
int prof_window_run(const struct prof_window_spec *ws, struct printer *report,
                    struct prof_err *e);

/* Report the rings as they stand (the last run's records plus anything
 * injected since), under the last run's window and pid filter, showing
 * chains chains. As prof_window_run: PROF_NOT_NO_RUN before any run. */
int prof_report_again(unsigned chains, struct printer *report, struct prof_err *e);

/* `profile_cpus`: which source took each CPU's samples in the last run.
 * PROF_OK, PROF_EBUSY or PROF_EINVAL (PROF_NOT_NO_RUN). */
int prof_print_last_sources(struct printer *report, struct prof_err *e);

/* Bench: the permille-th quantile (nearest rank, 1..1000) of the sample
 * costs in the rings as they stand (the last run, plus anything injected
 * since), in cycles_now() units. PROF_OK, PROF_EINVAL (no run or no
 * samples yet, permille out of range), PROF_EBUSY or PROF_ENOMEM.
 * Allocates a copy of the costs. */
int prof_cost_permille(unsigned permille, uint32_t *cost);

/* Bench and tests: grow every online CPU's ring to hold at least records
 * (rounded up to a power of two), as a long window would; never shrinks.
 * PROF_OK, PROF_EINVAL (PROF_NOT_RESERVE), PROF_EBUSY or PROF_ENOMEM,
 * the refusal in *e. */
int prof_session_reserve(uint32_t records, struct prof_err *e);

/* Bench and tests, with no run in progress, after at least one run:
 * append one CPU record to cpu's ring as if that CPU had sampled it (a
 * full ring counts a drop, as the sampler does). depth 1..8; frames[0]
 * is the leaf. PROF_OK, PROF_EBUSY, or PROF_EINVAL (no ring for that
 * CPU, bad depth). */
int prof_inject(unsigned cpu, int pid, const uintptr_t *frames,
                unsigned depth, uint32_t cost);

/* ---- a stream's lifetime (kernel/prof/stream.c) -----------------------
 *
 * Take the profiler for a stream: a ring for every online CPU big enough
 * for 4 drain intervals of drain_ms at the source's rate and at least
 * PROF_STREAM_MIN_RECS, the gate opened for pid (PROF_ALL or a pid).
 * PROF_OK, PROF_EBUSY or PROF_ENOMEM, the refusal in *e. *pmu: the
 * counter samples, else the tick. */
#define PROF_STREAM_MIN_RECS 512u
int prof_session_stream_begin(int pid, unsigned drain_ms, bool *pmu, struct prof_err *e);
/* The same for what a stream records: PROF_STREAM_CPU (the samples, as
 * prof_session_stream_begin), PROF_STREAM_OFF (off-CPU time: an off-CPU
 * window with no end until the stream's, kernel/prof/offcpu.h), or both
 * (the wall-clock view's two halves), or PROF_STREAM_HEAP alone (the
 * allocator's samples, as a `profile allocs` window with no end: refused,
 * PROF_NOT_HEAP_OFF, while heap_rate, the rate in force that mm owns and
 * the caller hands in, is 0), or PROF_STREAM_LOCK alone (every wait for a
 * lock charged to its holder's release, as a `profile lock` window with
 * no end), or PROF_STREAM_TRACE alone (every switch, wake and interrupt
 * slice and the CPU samples, each with its time: a `trace` with no end).
 * *pmu: false without the CPU's. */
enum {
    PROF_STREAM_CPU = 1, PROF_STREAM_OFF = 2, PROF_STREAM_HEAP = 4, PROF_STREAM_LOCK = 8,
    PROF_STREAM_TRACE = 16,
};
int prof_session_stream_begin_what(int pid, unsigned drain_ms, unsigned what,
                                   uint32_t heap_rate, bool *pmu, struct prof_err *e);
/* Close the gate and wait out the samplers: after it no ring grows. An
 * off-CPU stream's tasks still away are charged up to now first. */
void prof_session_stream_stop(void);
/* Give the profiler back (after the final drain). The windowed run's
 * snapshot is gone: report again and profile_cpus say there is none. */
void prof_session_stream_end(void);
/* The stream (or nobody, NULL) that holds the profiler, for the busy
 * messages: "profile: busy (<note>)", the note printed by note(p). A
 * function, not a string: what the note says depends on who asks (a
 * stream's id goes only to its own destination). Set by the stream while
 * it holds the profiler. */
void prof_session_set_busy_note(prof_busy_note_fn note);

#ifdef SONDE_HOST_TEST
void prof_test_reset(void);       /* free every ring and forget the last run */
#endif
