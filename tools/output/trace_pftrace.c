/* tools/output/trace_pftrace.c: a trace as Perfetto's trace format
 * (trace_pftrace.h), built with protobuf-c from tools/output/
 * perfetto.proto.
 *
 * A Trace is its packets as repeated field 1, so the file is written one
 * packet at a time (tag, length, packet) and a long trace is never one
 * message in memory; a reader unpacking the whole file as a Trace sees
 * the same bytes. */
#include "tools/output/trace_pftrace.h"
#include "perfetto.pb-c.h"
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "tools/output/trace_names.h"

typedef Perfetto__TracePacket Packet;
typedef Perfetto__InternedString IString;

#define PRIO_NORMAL 120             /* Linux's nice 0: Sonde's scheduler has no priorities */
#define STATE_R     0               /* Linux's task state bits, as Perfetto reads them */
#define STATE_S     1
#define STATE_X     16
#define FLAG_IRQS_OFF 0x01          /* Linux's trace flags (FtraceEvent.common_flags) */
#define FLAG_HARDIRQ  0x08
#define FLAG_NMI      0x40

/* ---- interning: strings, frames, callstacks --------------------------- */

/* Strings by content, iid = index + 1. */
struct strtab {
    IString **v;
    size_t n, cap;
    size_t *slot;                   /* iid, 0 free */
    size_t nslots;
};

static uint64_t str_hash(const char *s)
{
    uint64_t h = 14695981039346656037ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static size_t *str_slot(const struct strtab *s, const char *str)
{
    size_t mask = s->nslots - 1;
    for (size_t h = str_hash(str) & mask;; h = (h + 1) & mask) {
        size_t c = s->slot[h];
        if (!c || strcmp((const char *)s->v[c - 1]->str.data, str) == 0)
            return &s->slot[h];
    }
}

/* str's iid, interned on first use (the text is copied, NUL kept after
 * the bytes so that the table can compare it). */
static uint64_t str_iid(struct strtab *s, const char *str)
{
    if (2 * (s->n + 1) > s->nslots) {
        free(s->slot);
        s->nslots = s->nslots ? 2 * s->nslots : 256;
        s->slot = sp_xcalloc(s->nslots, sizeof *s->slot);
        for (size_t i = 0; i < s->n; i++)
            *str_slot(s, (const char *)s->v[i]->str.data) = i + 1;
    }
    size_t *slot = str_slot(s, str);
    if (!*slot) {
        size_t len = strlen(str);
        IString *x = sp_xcalloc(1, sizeof *x);
        perfetto__interned_string__init(x);
        x->has_iid = x->has_str = true;
        x->iid = s->n + 1;
        x->str.data = sp_xcalloc(len + 1, 1);
        memcpy(x->str.data, str, len);
        x->str.len = len;
        s->v = sp_grow(s->v, &s->cap, s->n + 1, sizeof *s->v);
        s->v[s->n] = x;
        *slot = ++s->n;
    }
    return *slot;
}

static void strtab_free(struct strtab *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i]->str.data);
        free(s->v[i]);
    }
    free(s->v);
    free(s->slot);
}

struct intern {
    struct strtab funcs, files, paths;
    IString bid, *bidp;             /* the build id, raw bytes: iid 1 */
    char bid_bytes[TRAW_BUILD_ID_HEX / 2];
    Perfetto__Frame *frames;        /* one per (location, inlined frame) */
    Perfetto__Frame **framep;
    size_t nframes;
    size_t *loc_frame;              /* a location's first frame's iid - 1 */
    Perfetto__Callstack *stacks;    /* one per distinct chain */
    Perfetto__Callstack **stackp;
    size_t nstacks, capstacks;
    size_t *stack_slot;             /* iid, 0 free */
    size_t nslots;
    uint64_t *stack_of;             /* a sample chain's callstack iid */
    Perfetto__Mapping map;
    Perfetto__Mapping *mapp;
    uint64_t map_path;
};

static void intern_frames(struct intern *in, const struct sp_trace *t)
{
    const struct sp_profile *p = &t->st_prof;
    const struct sp_map *m = &p->maps[t->st_map];
    in->loc_frame = sp_xcalloc(p->nlocs + 1, sizeof *in->loc_frame);
    for (size_t i = 0; i < p->nlocs; i++) {
        in->loc_frame[i] = in->nframes;
        in->nframes += p->locs[i]->pl_nframes;
    }
    in->frames = sp_xcalloc(in->nframes + 1, sizeof *in->frames);
    in->framep = sp_xcalloc(in->nframes + 1, sizeof *in->framep);
    for (size_t i = 0; i < p->nlocs; i++) {
        const struct sp_loc *l = p->locs[i];
        /* A return address is named from the call before it (addr - 1),
         * as pprof's; rel_pc is where the frame is, from the image's start. */
        uint64_t at = l->pl_ret && l->pl_addr ? l->pl_addr - 1 : l->pl_addr;
        for (unsigned k = 0; k < l->pl_nframes; k++) {
            const struct sp_frame *fr = &l->pl_frames[k];
            Perfetto__Frame *f = &in->frames[in->loc_frame[i] + k];
            perfetto__frame__init(f);
            f->has_iid = f->has_function_name_id = f->has_mapping_id = f->has_rel_pc = true;
            f->iid = in->loc_frame[i] + k + 1;
            f->function_name_id = str_iid(&in->funcs, fr->pf_func);
            f->mapping_id = 1;
            f->rel_pc = at >= m->pm_start ? at - m->pm_start : at;
            if (fr->pf_file) {
                f->has_source_path_iid = f->has_line_number = true;
                f->source_path_iid = str_iid(&in->files, fr->pf_file);
                f->line_number = fr->pf_line;
            }
            in->framep[in->loc_frame[i] + k] = f;
        }
    }
}

static uint64_t chain_hash(const struct sp_chain *c)
{
    uint64_t h = c->c_depth;
    for (unsigned d = 0; d < c->c_depth; d++)
        h = (h ^ c->c_locs[d]->pl_id) * 0x9e3779b97f4a7c15ull;
    return h ^ h >> 31;
}

/* Whether two chains walk the same locations. */
static bool same_chain(const struct sp_chain *a, const struct sp_chain *b)
{
    if (a->c_depth != b->c_depth)
        return false;
    for (unsigned d = 0; d < a->c_depth; d++)
        if (a->c_locs[d] != b->c_locs[d])
            return false;
    return true;
}

static size_t *stack_slot(const struct intern *in, const struct sp_profile *p,
                          const size_t *first, const struct sp_chain *c)
{
    size_t mask = in->nslots - 1;
    for (size_t h = chain_hash(c) & mask;; h = (h + 1) & mask) {
        size_t s = in->stack_slot[h];
        if (!s || same_chain(&p->chains[first[s - 1]], c))
            return &in->stack_slot[h];
    }
}

/* A callstack per distinct chain: its frames outermost first, each
 * location's inlined frames outside in. */
static void intern_stacks(struct intern *in, const struct sp_trace *t)
{
    const struct sp_profile *p = &t->st_prof;
    size_t *first = sp_xcalloc(p->nchains + 1, sizeof *first);
    in->stack_of = sp_xcalloc(p->nchains + 1, sizeof *in->stack_of);
    in->nslots = 64;
    while (in->nslots < 2 * p->nchains)
        in->nslots *= 2;
    in->stack_slot = sp_xcalloc(in->nslots, sizeof *in->stack_slot);
    in->stacks = sp_xcalloc(p->nchains + 1, sizeof *in->stacks);
    in->stackp = sp_xcalloc(p->nchains + 1, sizeof *in->stackp);
    for (size_t i = 0; i < p->nchains; i++) {
        const struct sp_chain *c = &p->chains[i];
        size_t *slot = stack_slot(in, p, first, c);
        if (!*slot) {
            Perfetto__Callstack *s = &in->stacks[in->nstacks];
            perfetto__callstack__init(s);
            s->has_iid = true;
            s->iid = in->nstacks + 1;
            for (unsigned d = 0; d < c->c_depth; d++)
                s->n_frame_ids += c->c_locs[d]->pl_nframes;
            s->frame_ids = sp_xcalloc(s->n_frame_ids + 1, sizeof *s->frame_ids);
            size_t n = 0;
            for (unsigned d = c->c_depth; d-- > 0;) {
                const struct sp_loc *l = c->c_locs[d];
                for (unsigned k = l->pl_nframes; k-- > 0;)
                    s->frame_ids[n++] = in->loc_frame[l->pl_id - 1] + k + 1;
            }
            in->stackp[in->nstacks] = s;
            first[in->nstacks] = i;
            *slot = ++in->nstacks;
        }
        in->stack_of[i] = *slot;
    }
    free(first);
}

/* The build id's raw bytes, as Perfetto keeps them (hex in the trace). */
static void build_id_bytes(const char *hex, char *out, size_t *len)
{
    *len = 0;
    for (size_t i = 0; hex[i] && hex[i + 1] && *len < TRAW_BUILD_ID_HEX / 2; i += 2) {
        unsigned v;
        if (sscanf(hex + i, "%2x", &v) != 1)
            break;
        out[(*len)++] = (char)v;
    }
}

static void intern_build(struct intern *in, const struct sp_trace *t)
{
    memset(in, 0, sizeof *in);
    intern_frames(in, t);
    intern_stacks(in, t);
    const struct sp_map *m = &t->st_prof.maps[t->st_map];
    perfetto__mapping__init(&in->map);
    in->map.has_iid = in->map.has_start = in->map.has_end = true;
    in->map.iid = 1;
    in->map.start = m->pm_start;
    in->map.end = m->pm_limit;
    size_t blen;
    build_id_bytes(t->st_hdr.th_build_id, in->bid_bytes, &blen);
    if (blen) {
        perfetto__interned_string__init(&in->bid);
        in->bid.has_iid = in->bid.has_str = true;
        in->bid.str.len = blen;
        in->bid.iid = 1;
        in->bid.str.data = (uint8_t *)in->bid_bytes;
        in->bidp = &in->bid;
        in->map.has_build_id = true;
        in->map.build_id = 1;
    }
    in->map_path = str_iid(&in->paths, m->pm_path ? m->pm_path : "kernel.elf");
    in->map.n_path_string_ids = 1;
    in->map.path_string_ids = &in->map_path;
    in->mapp = &in->map;
}

static void intern_free(struct intern *in)
{
    strtab_free(&in->funcs);
    strtab_free(&in->files);
    strtab_free(&in->paths);
    for (size_t i = 0; i < in->nstacks; i++)
        free(in->stacks[i].frame_ids);
    free(in->stacks);
    free(in->stackp);
    free(in->stack_slot);
    free(in->stack_of);
    free(in->frames);
    free(in->framep);
    free(in->loc_frame);
}

/* ---- packets ----------------------------------------------------------- */

struct writer {
    FILE *f;
    const struct sp_trace *t;
    uint8_t *buf;
    size_t cap;
    char swapper[TRAW_CPUS][16];
};

static void packet_init(Packet *p, uint64_t ns, bool ts, uint32_t flags)
{
    perfetto__trace_packet__init(p);
    p->has_trusted_packet_sequence_id = true;
    p->trusted_packet_sequence_id = SP_PFTRACE_SEQ;
    p->has_timestamp = ts;
    p->timestamp = ns;
    p->has_sequence_flags = flags != 0;
    p->sequence_flags = flags;
}

/* One packet as Trace field 1: tag 0x0a, its length as a varint, its bytes. */
static void emit(struct writer *w, const Packet *p)
{
    size_t n = perfetto__trace_packet__get_packed_size(p);
    w->buf = sp_grow(w->buf, &w->cap, n + 1, 1);
    perfetto__trace_packet__pack(p, w->buf);
    uint8_t head[11] = { 0x0a };
    size_t h = 1;
    for (uint64_t v = n; ; v >>= 7) {
        head[h++] = (uint8_t)(v & 0x7f) | (v >= 0x80 ? 0x80 : 0);
        if (v < 0x80)
            break;
    }
    fwrite(head, 1, h, w->f);
    fwrite(w->buf, 1, n, w->f);
}

static void write_interned(struct writer *w, struct intern *in)
{
    Perfetto__InternedData d = PERFETTO__INTERNED_DATA__INIT;
    d.n_function_names = in->funcs.n;
    d.function_names = in->funcs.v;
    d.n_source_paths = in->files.n;
    d.source_paths = in->files.v;
    d.n_mapping_paths = in->paths.n;
    d.mapping_paths = in->paths.v;
    d.n_build_ids = in->bidp ? 1 : 0;
    d.build_ids = &in->bidp;
    d.n_mappings = 1;
    d.mappings = &in->mapp;
    d.n_frames = in->nframes;
    d.frames = in->framep;
    d.n_callstacks = in->nstacks;
    d.callstacks = in->stackp;
    Packet p;
    packet_init(&p, 0, false, PERFETTO__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_INCREMENTAL_STATE_CLEARED);
    p.has_first_packet_on_sequence = p.first_packet_on_sequence = true;
    p.interned_data = &d;
    emit(w, &p);
}

static void write_track(struct writer *w, Perfetto__TrackDescriptor *td)
{
    Packet p;
    packet_init(&p, 0, false, 0);
    p.data_case = PERFETTO__TRACE_PACKET__DATA_TRACK_DESCRIPTOR;
    p.track_descriptor = td;
    emit(w, &p);
}

static void write_tracks(struct writer *w, const struct sp_trace_tasks *ts)
{
    for (size_t i = 0; i < ts->n; i++) {
        const struct sp_trace_task *k = &ts->v[i];
        if (k->tt_pid == 0)
            continue;
        Perfetto__ProcessDescriptor pd = PERFETTO__PROCESS_DESCRIPTOR__INIT;
        pd.has_pid = true;
        pd.pid = (int32_t)k->tt_pid;
        pd.process_name = (char *)k->tt_name;
        Perfetto__TrackDescriptor td = PERFETTO__TRACK_DESCRIPTOR__INIT;
        td.has_uuid = true;
        td.uuid = SP_PFTRACE_UUID_PROCESS(k->tt_pid);
        td.process = &pd;
        write_track(w, &td);
        Perfetto__ThreadDescriptor thd = PERFETTO__THREAD_DESCRIPTOR__INIT;
        thd.has_pid = thd.has_tid = true;
        thd.pid = thd.tid = (int32_t)k->tt_pid;
        thd.thread_name = (char *)k->tt_name;
        Perfetto__TrackDescriptor tt = PERFETTO__TRACK_DESCRIPTOR__INIT;
        tt.has_uuid = tt.has_parent_uuid = true;
        tt.uuid = SP_PFTRACE_UUID_THREAD(k->tt_pid);
        tt.parent_uuid = td.uuid;
        tt.thread = &thd;
        write_track(w, &tt);
    }
    for (uint32_t c = 0; c < w->t->st_hdr.th_cpus && c < TRAW_CPUS; c++) {
        char name[32];
        snprintf(name, sizeof name, "irq CPU %u", (unsigned)c);
        Perfetto__TrackDescriptor td = PERFETTO__TRACK_DESCRIPTOR__INIT;
        td.has_uuid = true;
        td.uuid = SP_PFTRACE_UUID_IRQ(c);
        td.name = name;
        write_track(w, &td);
    }
}

static int64_t prev_state(unsigned left)
{
    switch (left) {
    case TRAW_LEFT_SLEEP: case TRAW_LEFT_WAITQ: case TRAW_LEFT_MUTEX:
        return STATE_S;
    case TRAW_LEFT_EXIT:
        return STATE_X;
    default:                        /* preempted, yield, idle left: runnable */
        return STATE_R;
    }
}

static char *comm(struct writer *w, uint32_t cpu, uint32_t pid, const char *task)
{
    return pid == 0 ? w->swapper[cpu] : (char *)task;
}

/* One bundle of events: what each FtraceEvent points to lives here. */
struct bundle {
    Perfetto__FtraceEvent ev[SP_PFTRACE_BUNDLE];
    Perfetto__FtraceEvent *evp[SP_PFTRACE_BUNDLE];
    Perfetto__SchedSwitchFtraceEvent sw[SP_PFTRACE_BUNDLE];
    Perfetto__SchedWakingFtraceEvent wk[SP_PFTRACE_BUNDLE];
    size_t n;
};

static void bundle_flush(struct writer *w, struct bundle *b, uint32_t cpu)
{
    if (!b->n)
        return;
    Perfetto__FtraceEventBundle fb = PERFETTO__FTRACE_EVENT_BUNDLE__INIT;
    fb.has_cpu = true;
    fb.cpu = cpu;
    fb.n_event = b->n;
    fb.event = b->evp;
    Packet p;
    packet_init(&p, 0, false, 0);
    p.data_case = PERFETTO__TRACE_PACKET__DATA_FTRACE_EVENTS;
    p.ftrace_events = &fb;
    emit(w, &p);
    b->n = 0;
}

static void bundle_add(struct writer *w, struct bundle *b, const struct traw_event *e)
{
    Perfetto__FtraceEvent *fe = &b->ev[b->n];
    perfetto__ftrace_event__init(fe);
    fe->has_timestamp = fe->has_pid = true;
    fe->timestamp = e->te_ns;
    fe->pid = e->te_pid;
    if (e->te_type == TRAW_SWITCH) {
        Perfetto__SchedSwitchFtraceEvent *s = &b->sw[b->n];
        perfetto__sched_switch_ftrace_event__init(s);
        s->has_prev_pid = s->has_prev_prio = s->has_prev_state = true;
        s->has_next_pid = s->has_next_prio = true;
        s->prev_comm = comm(w, e->te_cpu, e->te_pid, e->te_task);
        s->prev_pid = (int32_t)e->te_pid;
        s->prev_prio = s->next_prio = PRIO_NORMAL;
        s->prev_state = prev_state(e->te_left);
        s->next_comm = comm(w, e->te_cpu, e->te_pid2, e->te_task2);
        s->next_pid = (int32_t)e->te_pid2;
        fe->event_case = PERFETTO__FTRACE_EVENT__EVENT_SCHED_SWITCH;
        fe->sched_switch = s;
    } else {
        Perfetto__SchedWakingFtraceEvent *s = &b->wk[b->n];
        perfetto__sched_waking_ftrace_event__init(s);
        s->has_pid = s->has_prio = s->has_success = s->has_target_cpu = true;
        s->comm = comm(w, e->te_wcpu < TRAW_CPUS ? e->te_wcpu : 0, e->te_pid2, e->te_task2);
        s->pid = (int32_t)e->te_pid2;
        s->prio = PRIO_NORMAL;
        s->success = 1;
        s->target_cpu = (int32_t)e->te_wcpu;
        if (e->te_in_irq) {
            fe->has_common_flags = true;
            fe->common_flags = FLAG_IRQS_OFF | FLAG_HARDIRQ |
                               (e->te_class == TRAW_IRQ_NMI ? FLAG_NMI : 0);
        }
        fe->event_case = PERFETTO__FTRACE_EVENT__EVENT_SCHED_WAKING;
        fe->sched_waking = s;
    }
    b->evp[b->n] = fe;
    b->n++;
}

static void write_sched(struct writer *w)
{
    struct bundle *b = sp_xcalloc(1, sizeof *b);
    const struct sp_trace *t = w->t;
    for (uint32_t c = 0; c < t->st_hdr.th_cpus && c < TRAW_CPUS; c++) {
        for (size_t i = 0; i < t->st_nev; i++) {
            const struct traw_event *e = &t->st_ev[i];
            if (e->te_cpu != c || (e->te_type != TRAW_SWITCH && e->te_type != TRAW_WAKE))
                continue;
            bundle_add(w, b, e);
            if (b->n == SP_PFTRACE_BUNDLE)
                bundle_flush(w, b, c);
        }
        bundle_flush(w, b, c);
    }
    free(b);
}

/* An interrupt's edge: the slices' begins and ends in the order that
 * nests them, so a reader that pairs each end with the last open begin
 * on its track pairs them right. */
struct edge {
    uint64_t ns;
    size_t ev;
    bool end;
    uint64_t entry, exit;           /* the slice's */
};

static uint64_t irq_end(const struct traw_event *e)
{
    return e->te_end > e->te_ns ? e->te_end : e->te_ns;
}

/* By time; at one time the ends first (a slice that ends where the next
 * begins), and among those the inner first (begun later); among begins
 * the outer first (ends later), a zero-length slice last, its end right
 * after its begin. */
static int edge_cmp(const void *pa, const void *pb)
{
    const struct edge *a = pa, *b = pb;
    if (a->ns != b->ns)
        return a->ns < b->ns ? -1 : 1;
    bool az = a->exit == a->entry, bz = b->exit == b->entry;
    int ka = a->end && !az ? 0 : 1, kb = b->end && !bz ? 0 : 1;
    if (ka != kb)
        return ka - kb;
    if (ka == 0)                    /* two ends: the later begun first */
        return a->entry != b->entry ? (a->entry > b->entry ? -1 : 1)
                                    : (a->ev == b->ev ? 0 : a->ev > b->ev ? -1 : 1);
    if (az != bz)
        return az ? 1 : -1;
    if (a->exit != b->exit)
        return a->exit > b->exit ? -1 : 1;
    if (a->ev != b->ev)
        return a->ev < b->ev ? -1 : 1;
    return (int)a->end - (int)b->end;
}

static void write_irq_edge(struct writer *w, const struct edge *g)
{
    const struct traw_event *e = &w->t->st_ev[g->ev];
    Perfetto__TrackEvent te = PERFETTO__TRACK_EVENT__INIT;
    te.has_type = te.has_track_uuid = true;
    te.track_uuid = SP_PFTRACE_UUID_IRQ(e->te_cpu);
    te.type = g->end ? PERFETTO__TRACK_EVENT__TYPE__TYPE_SLICE_END
                     : PERFETTO__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
    char name[TRAW_NAME_MAX + 32];
    char *cat = "irq";
    Perfetto__DebugAnnotation an[3], *anp[3];
    if (!g->end) {
        sp_trace_irq_label(e, name, sizeof name);
        te.name = name;
        te.n_categories = 1;
        te.categories = &cat;
        for (int i = 0; i < 3; i++) {
            perfetto__debug_annotation__init(&an[i]);
            anp[i] = &an[i];
        }
        an[0].name = "vector";
        an[0].value_case = PERFETTO__DEBUG_ANNOTATION__VALUE_UINT_VALUE;
        an[0].uint_value = e->te_vec;
        an[1].name = "class";
        an[1].value_case = PERFETTO__DEBUG_ANNOTATION__VALUE_STRING_VALUE;
        an[1].string_value = (char *)sp_trace_class_word(e->te_class);
        an[2].name = "task";
        an[2].value_case = PERFETTO__DEBUG_ANNOTATION__VALUE_STRING_VALUE;
        an[2].string_value = (char *)e->te_task;
        te.n_debug_annotations = 3;
        te.debug_annotations = anp;
    }
    Packet p;
    packet_init(&p, g->ns, true, PERFETTO__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE);
    p.data_case = PERFETTO__TRACE_PACKET__DATA_TRACK_EVENT;
    p.track_event = &te;
    emit(w, &p);
}

static void write_irqs(struct writer *w)
{
    const struct sp_trace *t = w->t;
    struct edge *g = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < t->st_nev; i++) {
        const struct traw_event *e = &t->st_ev[i];
        if (e->te_type != TRAW_IRQ || e->te_cpu >= TRAW_CPUS)
            continue;
        g = sp_grow(g, &cap, n + 2, sizeof *g);
        g[n++] = (struct edge){ .ns = e->te_ns, .ev = i, .end = false,
                                .entry = e->te_ns, .exit = irq_end(e) };
        g[n++] = (struct edge){ .ns = irq_end(e), .ev = i, .end = true,
                                .entry = e->te_ns, .exit = irq_end(e) };
    }
    if (n)
        qsort(g, n, sizeof *g, edge_cmp);
    for (size_t i = 0; i < n; i++)
        write_irq_edge(w, &g[i]);
    free(g);
}

static void write_perf(struct writer *w, uint64_t ns, Perfetto__PerfSample *s)
{
    Packet p;
    packet_init(&p, ns, true, PERFETTO__TRACE_PACKET__SEQUENCE_FLAGS__SEQ_NEEDS_INCREMENTAL_STATE);
    p.data_case = PERFETTO__TRACE_PACKET__DATA_PERF_SAMPLE;
    p.perf_sample = s;
    emit(w, &p);
}

static void write_samples(struct writer *w, const struct intern *in)
{
    const struct sp_trace *t = w->t;
    uint64_t end = (uint64_t)t->st_hdr.th_ms * 1000000u;
    for (size_t i = 0; i < t->st_nev; i++) {
        const struct traw_event *e = &t->st_ev[i];
        uint64_t last = e->te_type == TRAW_IRQ ? irq_end(e) : e->te_ns;
        if (last > end)
            end = last;
        if (e->te_type != TRAW_SAMPLE || t->st_chain[i] == (size_t)-1)
            continue;
        Perfetto__PerfSample s = PERFETTO__PERF_SAMPLE__INIT;
        s.has_cpu = s.has_pid = s.has_tid = s.has_callstack_iid = s.has_cpu_mode = true;
        s.cpu = e->te_cpu;
        s.pid = s.tid = e->te_pid;
        s.callstack_iid = in->stack_of[t->st_chain[i]];
        s.cpu_mode = PERFETTO__PROFILING__CPU_MODE__MODE_KERNEL;
        write_perf(w, e->te_ns, &s);
    }
    for (uint32_t c = 0; c < t->st_hdr.th_cpus && c < TRAW_CPUS; c++) {
        if (!t->st_hdr.th_dropped[c])
            continue;
        Perfetto__PerfSample s = PERFETTO__PERF_SAMPLE__INIT;
        s.has_cpu = s.has_kernel_records_lost = true;
        s.cpu = c;
        s.kernel_records_lost = t->st_hdr.th_dropped[c];
        write_perf(w, end, &s);
    }
}

int sp_trace_pftrace_write(const struct sp_trace *t, FILE *f)
{
    struct writer w = { .f = f, .t = t };
    for (unsigned c = 0; c < TRAW_CPUS; c++)
        snprintf(w.swapper[c], sizeof w.swapper[c], "swapper/%u", c);
    struct intern in;
    intern_build(&in, t);
    struct sp_trace_tasks ts;
    sp_trace_tasks_build(&ts, t);
    write_interned(&w, &in);
    write_tracks(&w, &ts);
    write_sched(&w);
    write_irqs(&w);
    write_samples(&w, &in);
    sp_trace_tasks_free(&ts);
    intern_free(&in);
    free(w.buf);
    return ferror(f) ? -1 : 0;
}
