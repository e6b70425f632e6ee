/* kernel/prof/stream_encode.h: a ring's records as the profile stream's
 * BATCH records (kernel/prof/stream_encode.c), for the stream's drains
 * (kernel/prof/stream.c). Both read the ring in place: ring is its first
 * slot, mask its capacity less one (a power of two), at the index of the
 * first record to take (any index: taken modulo the capacity) and left
 * how many are there from it.
 *
 * Profiler core: prefix prof_ and PROF_. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pstr_writer;
struct prof_record;

/* One record (two for an off-CPU interval and its waker's chain) into
 * w's BATCH: how many of the ring's it took, 0 when the next does not fit
 * (it starts the next batch). A CPU sample takes pstr_add_frames' short
 * path, its kind and weight implied; other kinds carry theirs, heap
 * records their requested size too. An off-CPU interval's blocked time
 * and its waker's chain, side by side in the ring (prof_emit_n puts them
 * there together), go as one record, so two are taken; a waker's chain
 * whose interval is not before it (never written so) is taken and sent
 * as nothing. */
uint32_t prof_stream_add(struct pstr_writer *w, const struct prof_record *ring,
                         uint32_t mask, uint32_t at, uint32_t left);

/* A run of CPU samples into w: how many it took, stopping at a record of
 * another kind or when w is full (0: the first is not a CPU sample, or
 * does not fit). The stream's hot loop, ~1000 records a second a CPU at
 * the counter's rate: each record that starts a chain goes through
 * pstr_run_add, and those after it with the same chain but the pc
 * through the steady loop of its depth. */
uint32_t prof_stream_add_cpu_run(struct pstr_writer *w, const struct prof_record *ring,
                                 uint32_t mask, uint32_t at, uint32_t left);

/* A trace stream's record pr into w as a trace event (PSTR_KIND_TRACE):
 * a CPU sample of the trace, or a switch, wake or interrupt slice
 * (kernel/prof/trace.h says what each one's fields hold), its raw times
 * made ns since the trace's start (prof_trace_ns). A CPU's idle task goes
 * as pid 0 (idle says which pids are), an interrupt with the name
 * vec_name gives its vector (false: none). 1 when taken (sent, or a
 * record of no other kind, skipped), 0 when it does not fit. */
struct prof_stream_trace_names {
    bool (*idle)(int pid);
    bool (*vec_name)(unsigned vec, char *buf, size_t cap);
};
uint32_t prof_stream_add_trace(struct pstr_writer *w, const struct prof_record *pr,
                               const struct prof_stream_trace_names *n);
