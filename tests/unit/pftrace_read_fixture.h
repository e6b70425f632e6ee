/* tests/unit/pftrace_read_fixture.h: a .pftrace read back as Perfetto's
 * importer reads it, through the generated protobuf-c code of
 * tools/output/perfetto.proto, for the tests of what writes one
 * (test_output_trace_pftrace.c; a test of record --trace may use it too).
 *
 * rd_load unpacks the whole file as one Trace and collects: the
 * sequence's checks (every packet on SP_PFTRACE_SEQ, its incremental
 * state cleared before a packet needs it), the interned tables, the
 * task and thread names of the track descriptors, each CPU bundle's
 * switches and wakes (whether every bundle is in time order, and each
 * switch's entering task the next one's leaving task on its CPU), the
 * interrupt slices (each SLICE_END closing the last open begin of its
 * track, as Perfetto pairs them), the samples and each CPU's drops.
 * Static helpers: include it in one test file each; link
 * build/host/proto/perfetto.pb-c.c with -Ibuild/host/proto -lprotobuf-c. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "perfetto.pb-c.h"
#include "trace_fixture.h"
#include "tools/output/trace_pftrace.h"

typedef Perfetto__TracePacket Packet;

#define RD_MAX 4096

struct rd_slice {
    uint32_t cpu;
    uint64_t begin, end;
    const char *name;
    unsigned depth;                 /* 0: outermost on its track */
};

struct rd {
    Perfetto__Trace *tr;
    Perfetto__InternedData *in;     /* the sequence's tables */
    struct { int32_t pid; const char *name; } process[RD_MAX], thread[RD_MAX];
    unsigned nprocess, nthread;     /* track descriptors: tasks, their threads */
    unsigned nswitch, nwake, nbundles, nsamples;
    bool ordered;                   /* every bundle's events in time order */
    bool chained;                   /* per CPU: each next_pid the next prev_pid */
    bool seq_ok;                    /* one sequence, state cleared before use */
    Perfetto__FtraceEvent *sw[RD_MAX], *wk[RD_MAX];
    uint32_t sw_cpu[RD_MAX], wk_cpu[RD_MAX];
    Perfetto__PerfSample *sample[RD_MAX];
    uint64_t sample_ns[RD_MAX];
    uint64_t lost[TRAW_CPUS];
    struct rd_slice slice[RD_MAX];
    unsigned nslices;
    bool slices_ok;                 /* every end closed a begin on its track */
};

/* An interned string (bytes, not NUL-terminated on the wire), or NULL. */
static const Perfetto__InternedString *istr(Perfetto__InternedString *const *v, size_t n,
                                            uint64_t iid)
{
    for (size_t i = 0; i < n; i++)
        if (v[i]->iid == iid)
            return v[i];
    return NULL;
}

static void rd_bundle(struct rd *r, const Perfetto__FtraceEventBundle *b, int64_t *last_next)
{
    r->nbundles++;
    uint64_t prev = 0;
    for (size_t i = 0; i < b->n_event; i++) {
        Perfetto__FtraceEvent *e = b->event[i];
        if (e->timestamp < prev)
            r->ordered = false;
        prev = e->timestamp;
        if (e->event_case == PERFETTO__FTRACE_EVENT__EVENT_SCHED_SWITCH) {
            if (last_next[b->cpu] >= 0 && last_next[b->cpu] != e->sched_switch->prev_pid)
                r->chained = false;
            last_next[b->cpu] = e->sched_switch->next_pid;
            if (r->nswitch < RD_MAX) {
                r->sw_cpu[r->nswitch] = b->cpu;
                r->sw[r->nswitch] = e;
            }
            r->nswitch++;
        } else if (e->event_case == PERFETTO__FTRACE_EVENT__EVENT_SCHED_WAKING) {
            if (r->nwake < RD_MAX) {
                r->wk_cpu[r->nwake] = b->cpu;
                r->wk[r->nwake] = e;
            }
            r->nwake++;
        }
    }
}

/* Pairs each SLICE_END with the last open SLICE_BEGIN of its track. */
static void rd_track_event(struct rd *r, const Perfetto__TrackEvent *te, uint64_t ns,
                           unsigned *open, unsigned (*stack)[64])
{
    uint64_t cpu = te->track_uuid - SP_PFTRACE_UUID_IRQ(0);
    if (cpu >= TRAW_CPUS) {
        r->slices_ok = false;
        return;
    }
    if (te->type == PERFETTO__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN && r->nslices < RD_MAX &&
        open[cpu] < 64) {
        r->slice[r->nslices] = (struct rd_slice){ .cpu = (uint32_t)cpu, .begin = ns,
                                                  .name = te->name, .depth = open[cpu] };
        stack[cpu][open[cpu]++] = r->nslices++;
    } else if (te->type == PERFETTO__TRACK_EVENT__TYPE__TYPE_SLICE_END && open[cpu]) {
        r->slice[stack[cpu][--open[cpu]]].end = ns;
    } else {
        r->slices_ok = false;
    }
}

static int rd_load(struct rd *r, const uint8_t *buf, size_t len)
{
    memset(r, 0, sizeof *r);
    r->ordered = r->chained = r->seq_ok = r->slices_ok = true;
    r->tr = perfetto__trace__unpack(NULL, len, buf);
    if (!r->tr)
        return -1;
    int64_t last_next[TRAW_CPUS];
    unsigned open[TRAW_CPUS] = { 0 }, stack[TRAW_CPUS][64];
    for (unsigned c = 0; c < TRAW_CPUS; c++)
        last_next[c] = -1;
    bool cleared = false;
    for (size_t i = 0; i < r->tr->n_packet; i++) {
        Packet *p = r->tr->packet[i];
        if (!p->has_trusted_packet_sequence_id || p->trusted_packet_sequence_id != SP_PFTRACE_SEQ)
            r->seq_ok = false;
        if (p->sequence_flags & PERFETTO__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED)
            cleared = true;
        if ((p->sequence_flags & PERFETTO__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE) &&
            !cleared)
            r->seq_ok = false;
        if (p->interned_data)
            r->in = p->interned_data;
        switch (p->data_case) {
        case PERFETTO__TRACE_PACKET__DATA_TRACK_DESCRIPTOR: {
            Perfetto__TrackDescriptor *td = p->track_descriptor;
            if (td->process && r->nprocess < RD_MAX) {
                r->process[r->nprocess].pid = td->process->pid;
                r->process[r->nprocess++].name = td->process->process_name;
            }
            if (td->thread && r->nthread < RD_MAX &&
                td->parent_uuid == SP_PFTRACE_UUID_PROCESS(td->thread->pid)) {
                r->thread[r->nthread].pid = td->thread->tid;
                r->thread[r->nthread++].name = td->thread->thread_name;
            }
            break;
        }
        case PERFETTO__TRACE_PACKET__DATA_FTRACE_EVENTS:
            rd_bundle(r, p->ftrace_events, last_next);
            break;
        case PERFETTO__TRACE_PACKET__DATA_TRACK_EVENT:
            rd_track_event(r, p->track_event, p->timestamp, open, stack);
            break;
        case PERFETTO__TRACE_PACKET__DATA_PERF_SAMPLE:
            if (p->perf_sample->has_kernel_records_lost && p->perf_sample->cpu < TRAW_CPUS)
                r->lost[p->perf_sample->cpu] += p->perf_sample->kernel_records_lost;
            else if (r->nsamples < RD_MAX) {
                r->sample_ns[r->nsamples] = p->timestamp;
                r->sample[r->nsamples++] = p->perf_sample;
            }
            break;
        default:
            break;
        }
    }
    for (unsigned c = 0; c < TRAW_CPUS; c++)
        if (open[c])
            r->slices_ok = false;
    return 0;
}

/* A sample's stack, root first, "func@file:line" joined by ' '. */
static void rd_stack(const struct rd *r, const Perfetto__PerfSample *s, char *buf, size_t cap)
{
    buf[0] = 0;
    const Perfetto__InternedData *in = r->in;
    for (size_t i = 0; in && i < in->n_callstacks; i++) {
        const Perfetto__Callstack *cs = in->callstacks[i];
        if (cs->iid != s->callstack_iid)
            continue;
        for (size_t k = 0; k < cs->n_frame_ids; k++)
            for (size_t j = 0; j < in->n_frames; j++) {
                const Perfetto__Frame *f = in->frames[j];
                if (f->iid != cs->frame_ids[k])
                    continue;
                size_t l = strlen(buf);
                const Perfetto__InternedString *fn =
                    istr(in->function_names, in->n_function_names, f->function_name_id);
                const Perfetto__InternedString *file =
                    istr(in->source_paths, in->n_source_paths, f->source_path_iid);
                snprintf(buf + l, cap - l, "%s%.*s@%.*s:%u", l ? " " : "",
                         fn ? (int)fn->str.len : 1, fn ? (const char *)fn->str.data : "?",
                         file ? (int)file->str.len : 1, file ? (const char *)file->str.data : "?",
                         f->line_number);
            }
    }
}

/* The name a task's process (thread: its thread) descriptor gives pid,
 * or NULL. */
static const char *rd_process(const struct rd *r, int32_t pid)
{
    for (unsigned i = 0; i < r->nprocess; i++)
        if (r->process[i].pid == pid)
            return r->process[i].name;
    return NULL;
}

static const char *rd_thread(const struct rd *r, int32_t pid)
{
    for (unsigned i = 0; i < r->nthread; i++)
        if (r->thread[i].pid == pid)
            return r->thread[i].name;
    return NULL;
}

static void rd_free(struct rd *r)
{
    if (r->tr)
        perfetto__trace__free_unpacked(r->tr, NULL);
}

/* t written by sp_trace_pftrace_write and read back into r. */
static int rd_write_load(struct rd *r, const struct sp_trace *t)
{
    size_t len;
    char *buf = tfix_capture(t, sp_trace_pftrace_write, &len);
    int rc = rd_load(r, (const uint8_t *)buf, len);
    free(buf);
    return rc;
}

