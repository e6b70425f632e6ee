/* tools/output/trace_pftrace.h: a trace as Perfetto's trace format
 * (record --trace -o FILE.pftrace), which Perfetto's UI and
 * trace_processor open.
 *
 * The file is a Trace (tools/output/perfetto.proto): TracePackets one
 * after another, all on one packet sequence (trusted_packet_sequence_id
 * 1), times in ns since the window's start. In order:
 *   - one packet that clears the sequence's incremental state and holds
 *     every interned table: the kernel image as mapping 1 (its build id
 *     and path), a frame per function of each sampled address (inlined
 *     functions each a frame of their own, with its file and line), and
 *     a callstack per distinct sampled chain, outermost frame first;
 *   - a track descriptor per task but idle, a process of its own (pid =
 *     the task's, process_name its name; uuid 2^32 + pid) with one thread
 *     (tid = pid, thread_name; uuid 2^33 + pid), so Perfetto names the
 *     threads its scheduling tracks draw;
 *   - a track descriptor per CPU for its interrupts, "irq CPU n" (uuid
 *     3 * 2^32 + n);
 *   - per CPU, FtraceEventBundles (at most SP_PFTRACE_BUNDLE events
 *     each, in time order): each switch a sched_switch (idle is pid 0,
 *     "swapper/N", as Linux's; prev_state 0 (R) for preempted, yield and
 *     idle, 1 (S) for sleep, waitq and mutex, 16 (X) for exit), each wake
 *     a sched_waking in the waker's CPU's bundle (FtraceEvent.pid the
 *     task running there; common_flags 0x09, hard interrupt with
 *     interrupts off, for a wake made inside an interrupt, 0x49 inside an
 *     NMI), so Perfetto's importer builds its CPU tracks and thread
 *     states from them;
 *   - each interrupt as a slice on its CPU's track: a TrackEvent
 *     SLICE_BEGIN ("irq NAME" or "irq CLASS VEC", category "irq",
 *     annotations vector, class, task) and a SLICE_END, in time order;
 *   - each CPU sample as a PerfSample (cpu, pid, tid = pid, its
 *     callstack, kernel mode);
 *   - for each CPU whose ring dropped records, a PerfSample with only
 *     cpu and kernel_records_lost, at the window's end.
 *
 * Host pipeline: prefix sp_trace_pftrace_. */
#pragma once
#include <stdio.h>
#include "tools/model/trace.h"

#define SP_PFTRACE_SEQ     1u
#define SP_PFTRACE_BUNDLE  1024u
#define SP_PFTRACE_UUID_PROCESS(pid) ((1ull << 32) + (pid))
#define SP_PFTRACE_UUID_THREAD(pid)  ((2ull << 32) + (pid))
#define SP_PFTRACE_UUID_IRQ(cpu)     ((3ull << 32) + (cpu))

/* Writes t (its samples named) as above; -1 on a write error. */
int sp_trace_pftrace_write(const struct sp_trace *t, FILE *f);
