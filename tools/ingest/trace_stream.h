/* tools/ingest/trace_stream.h: a trace stream's records (`trace stream`,
 * PSTR_KIND_TRACE, uapi/profile_stream.h) gathered as they come, and made
 * one trace in time order at the end (tools/model/trace.h), as the raw
 * trace of a window would have given it: sonde-prof record --trace past
 * 2 s.
 *
 * Each CPU's records come in its own time order; the CPUs' arrive
 * interleaved by datagram, so the trace is sorted by time at the end
 * (ties kept in arrival order). Task names are the stream's latest META's
 * when the record came ("-" for a pid it did not list), a CPU's idle task
 * "<idle>" (pid 0 on the wire).
 *
 * Host pipeline: prefix sp_trace_. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tools/ingest/stream.h"
#include "tools/model/trace.h"

struct sp_trace_gather {
    struct traw_event *ev;
    size_t n, cap;
    uint64_t skipped;           /* records of another kind, or a CPU past TRAW_CPUS */
};

void sp_trace_gather_init(struct sp_trace_gather *g);
void sp_trace_gather_free(struct sp_trace_gather *g);
/* One record of cpu from stream s (its META names the tasks). */
void sp_trace_gather_add(struct sp_trace_gather *g, const struct sp_stream *s, uint16_t cpu,
                         const struct pstr_record *r);

/* What g gathered, sorted by time, and the header of its trace: s's
 * META's build id (check have_meta first), its CPUs' drops, ms long. */
void sp_trace_gather_finish(struct sp_trace_gather *g, const struct sp_stream *s, uint32_t ms,
                            struct traw_header *h);
/* The trace of what g gathered from s, ms long, into t (just init'd):
 * the header from s's META (build id) and per-CPU drops, the events in
 * time order, samples' addresses in a map of path. -1 with err when s
 * sent no META (no build id to name the samples with). */
int sp_trace_gather_build(struct sp_trace_gather *g, const struct sp_stream *s, uint32_t ms,
                          const char *origin, const char *kernel, const char *path,
                          struct sp_trace *t, char *err, size_t errcap);
