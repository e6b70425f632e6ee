/* tools/serve/trace.h: `serve --kind trace`: each kernel's last
 * SV_TRACE_KEEP_MS of its trace stream (`trace stream`), kept compact,
 * and a range of one kernel's as a trace (tools/model/trace.h) for the
 * page's timeline (/api/trace).
 *
 * An event is 32 bytes; a sample's frames are kept beside it, 80 bytes a
 * sample. A kernel switching 10,000 times a second on each of 2 CPUs sends
 * ~40,000 events a second: 2.4 million in 60 s, 77 MB. Each kernel keeps
 * at most SV_TRACE_KERNEL_EVENTS events and SV_TRACE_KERNEL_SAMPLES
 * samples (past them the oldest go first, counted), so serve's trace
 * memory is at most N x (SV_TRACE_KERNEL_EVENTS x 32 + SV_TRACE_KERNEL_
 * SAMPLES x 80) bytes for N kernels, and names (wait queues, mutexes,
 * interrupts) SV_TRACE_NAMES x 32.
 *
 * Times: an event's is ns since its stream's start; each kernel's stream
 * is anchored on the host's clock by its records' arrival (the earliest
 * arrival less the event's time, which transit only makes later), so a
 * range asked in Unix ms is a range of events. A record whose anchor is
 * 5 s off is a new stream (the kernel restarted, or its stream did): the
 * kernel's buffer starts again.
 *
 * Serve: prefix sv_trace_ and SV_TRACE_. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "tools/ingest/stream.h"
#include "tools/model/trace.h"

#define SV_TRACE_KEEP_MS          60000u
#define SV_TRACE_KERNEL_EVENTS    (1u << 22)
#define SV_TRACE_KERNEL_SAMPLES   (1u << 18)
#define SV_TRACE_NAMES            4096u
#define SV_TRACE_KERNELS          4096u
#define SV_TRACE_RESTART_NS       5000000000ull

struct sv_trace;

/* A kernel's bounds: events and samples (powers of two; serve's are
 * SV_TRACE_KERNEL_EVENTS and SV_TRACE_KERNEL_SAMPLES). */
struct sv_trace *sv_trace_new(size_t events_max, size_t samples_max);
void sv_trace_free(struct sv_trace *t);
/* One trace record (PSTR_KIND_TRACE; any other is ignored) of kernel's
 * cpu, come at now_ms (Unix ms). */
void sv_trace_add(struct sv_trace *t, unsigned kernel, uint16_t cpu, const struct pstr_record *r,
                  uint64_t now_ms);
/* What is older than now_ms - SV_TRACE_KEEP_MS goes. */
void sv_trace_advance(struct sv_trace *t, uint64_t now_ms);

/* What a kernel holds: events and samples, and the Unix ms of its oldest
 * and newest (0, 0: none); the events and samples that the bounds pushed
 * out early. */
struct sv_trace_span {
    uint64_t events, samples;
    uint64_t from_ms, to_ms;
    uint64_t evicted;
};
void sv_trace_span(const struct sv_trace *t, unsigned kernel, struct sv_trace_span *sp);

/* How many events and samples kernel holds in [from_ms, to_ms] (Unix
 * ms): what sv_trace_select would take, counted without taking them. */
size_t sv_trace_count(const struct sv_trace *t, unsigned kernel, uint64_t from_ms, uint64_t to_ms);

/* kernel's events in [from_ms, to_ms] (Unix ms) into tr (just init'd,
 * whose st_prof has the ELFs' maps: the samples' addresses go in map),
 * named from s (a stream's META: its tasks, its build id), labelled
 * name. The trace's ms is the range's. -1 when s has no META yet. */
int sv_trace_select(const struct sv_trace *t, unsigned kernel, uint64_t from_ms, uint64_t to_ms,
                    const struct sp_stream *s, unsigned map, const char *name,
                    struct sp_trace *tr);
