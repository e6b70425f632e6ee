/* kernel/prof/session.h: the profiler's run control, for the commands
 * (kernel/cmd/profile.c), the stream (kernel/prof/stream.c) and the bench
 * (kernel/cmd/bench.c). Task context throughout.
 *
 * One holder at a time: a windowed run, a report of the last run, or a
 * stream. A second asker is told "profile: busy" (and, while a stream
 * holds it, which stream).
 *
 * Profiler core: prefix prof_ and PROF_. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "kernel/prof/prof.h"
#include "kernel/prof/report.h"

struct printer;

/* Whether ms is a window (PROF_WINDOW_MIN..PROF_WINDOW_MAX), and n a chain
 * count (1..PROF_CHAINS); false after a "profile: ... out of range" line
 * naming the range to p. The commands check their words with these, so
 * the messages are the run's own. */
bool prof_window_ok(uint64_t ms, struct printer *p);
bool prof_chains_ok(uint64_t n, struct printer *p);

/* One whole run: Start, sleep ms, Stop, report to p in fmt (chains
 * matters only to PROF_TEXT). ms 1..2000, pid PROF_ALL or a pid, chains
 * 1..128. PROF_OK or a negative PROF_E*; every error has printed a
 * "profile: ..." line to p and started nothing. */
int prof_run(unsigned ms, int pid, unsigned chains, enum prof_format fmt,
             struct printer *p);

/* One off-CPU window (kernel/prof/offcpu.h): Start with the gate open to
 * off-CPU records (and CPU samples, for the wall view), sleep ms, charge
 * every task still away up to the end (sched_off_sweep), Stop, report to
 * p in view and fmt. Same arguments and returns as prof_run. */
int prof_run_off(unsigned ms, int pid, unsigned chains, enum prof_format fmt,
                 enum prof_view view, struct printer *p);

/* `profile allocs`: a window of ms recording the allocator's heap
 * samples (mm/heapprof.h, through prof_emit) instead of the CPU's, then
 * their report: estimated bytes and objects allocated, by chain. rate:
 * the sampling rate in force, for the header (the caller checks that
 * sampling is on). Same arguments and returns as prof_run. */
#define PROF_ALLOCS_RECS 8192u  /* records per CPU a window keeps */
int prof_run_allocs(unsigned ms, int pid, unsigned chains, enum prof_format fmt,
                    uint32_t rate, struct printer *p);

/* Report the rings as they stand (the last run's records plus anything
 * injected since), under the last run's window and pid filter, showing
 * chains chains. Same returns as prof_run. */
int prof_report_again(unsigned chains, struct printer *p);

/* `profile_cpus`: which source took each CPU's samples in the last run.
 * PROF_OK, PROF_EBUSY or PROF_EINVAL (no run yet), each said to p. */
int prof_print_last_sources(struct printer *p);

/* Bench: the permille-th quantile (nearest rank, 1..1000) of the sample
 * costs in the rings as they stand (the last run, plus anything injected
 * since), in cycles_now() units. PROF_OK, PROF_EINVAL (no run or no
 * samples yet, permille out of range), PROF_EBUSY or PROF_ENOMEM.
 * Allocates a copy of the costs. */
int prof_cost_permille(unsigned permille, uint32_t *cost);

/* Bench and tests: grow every online CPU's ring to hold at least records
 * (rounded up to a power of two), as a long window would; never shrinks.
 * PROF_OK, PROF_EINVAL (records out of 1..PROF_RESERVE_MAX), PROF_EBUSY
 * or PROF_ENOMEM (each with a "profile: ..." line to p). */
int prof_reserve(uint32_t records, struct printer *p);

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
 * PROF_OK, PROF_EBUSY ("profile: busy..." printed) or PROF_ENOMEM
 * (printed). *pmu: the counter samples, else the tick. */
#define PROF_STREAM_MIN_RECS 512u
int prof_session_stream_begin(int pid, unsigned drain_ms, bool *pmu, struct printer *p);
/* The same for what a stream records: PROF_STREAM_CPU (the samples, as
 * prof_session_stream_begin), PROF_STREAM_OFF (off-CPU time: an off-CPU
 * window with no end until the stream's, kernel/prof/offcpu.h), or both
 * (the wall-clock view's two halves), or PROF_STREAM_HEAP alone (the
 * allocator's samples, as a `profile allocs` window with no end: refused,
 * said, while heap profiling is off). *pmu: false without the CPU's. */
enum { PROF_STREAM_CPU = 1, PROF_STREAM_OFF = 2, PROF_STREAM_HEAP = 4 };
int prof_session_stream_begin_what(int pid, unsigned drain_ms, unsigned what, bool *pmu,
                                   struct printer *p);
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
typedef void (*prof_busy_note_fn)(struct printer *p);
void prof_session_set_busy_note(prof_busy_note_fn note);

#ifdef SONDE_HOST_TEST
void prof_test_reset(void);       /* free every ring and forget the last run */
#endif
