/* tools/ingest/trace_stream.c: a trace stream gathered and made a trace
 * (trace_stream.h). */
#include "tools/ingest/trace_stream.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert((int)PSTR_TEV_SWITCH == (int)TRAW_SWITCH && (int)PSTR_TEV_WAKE == (int)TRAW_WAKE &&
               (int)PSTR_TEV_IRQ == (int)TRAW_IRQ && (int)PSTR_TEV_SAMPLE == (int)TRAW_SAMPLE &&
               PSTR_LEFT_MAX == TRAW_LEFT_MAX && PSTR_IRQ_CLASS_MAX == TRAW_CLASS_MAX &&
               PSTR_VEC_MAX == TRAW_VEC_MAX && PSTR_FRAMES == TRAW_FRAMES &&
               PSTR_NAME_MAX == TRAW_NAME_MAX && PSTR_TASK_MAX == TRAW_TASK_MAX,
               "a trace record's fields are the raw trace's");

void sp_trace_gather_init(struct sp_trace_gather *g)
{
    memset(g, 0, sizeof *g);
}

void sp_trace_gather_free(struct sp_trace_gather *g)
{
    free(g->ev);
    memset(g, 0, sizeof *g);
}

/* pid's name as the raw trace writes it: "<idle>" for 0, the META's, "-". */
static void task_of(const struct sp_stream *s, uint32_t pid, char *out)
{
    const char *n = pid == 0 ? TRAW_IDLE_TASK : sp_stream_task(s, pid);
    snprintf(out, TRAW_TASK_MAX + 1, "%s", n ? n : "-");
}

void sp_trace_gather_add(struct sp_trace_gather *g, const struct sp_stream *s, uint16_t cpu,
                         const struct pstr_record *r)
{
    if (r->kind != PSTR_KIND_TRACE || cpu >= TRAW_CPUS) {
        g->skipped++;
        return;
    }
    g->ev = sp_grow(g->ev, &g->cap, g->n + 1, sizeof *g->ev);
    struct traw_event *e = &g->ev[g->n++];
    memset(e, 0, sizeof *e);
    e->te_type = r->tev;
    e->te_cpu = cpu;
    e->te_ns = r->weight;
    e->te_pid = r->pid;
    task_of(s, r->pid, e->te_task);
    switch (r->tev) {
    case PSTR_TEV_SWITCH:
        e->te_pid2 = r->tother;
        task_of(s, r->tother, e->te_task2);
        e->te_left = r->targ;
        memcpy(e->te_name, r->name, sizeof e->te_name);
        break;
    case PSTR_TEV_WAKE:
        e->te_pid2 = r->tother;
        task_of(s, r->tother, e->te_task2);
        e->te_wcpu = r->twcpu;
        e->te_in_irq = r->targ != 0;
        e->te_class = r->targ;
        e->te_vec = r->tvec;
        memcpy(e->te_irq, r->name, sizeof e->te_irq);
        break;
    case PSTR_TEV_IRQ:
        /* A forged weight near 2^64 must not wrap the exit before the entry. */
        e->te_end = r->weight + r->tdur < r->weight ? UINT64_MAX : r->weight + r->tdur;
        e->te_class = r->targ;
        e->te_vec = r->tvec;
        memcpy(e->te_irq, r->name, sizeof e->te_irq);
        break;
    default:
        e->te_depth = r->depth;
        memcpy(e->te_frames, r->frames, sizeof e->te_frames);
        break;
    }
}

/* By time, ties in the order they came: a merge sort, which is stable
 * (qsort is not), in O(n log n) over a stream's millions of events. */
static void merge_sort(struct traw_event *a, struct traw_event *tmp, size_t n)
{
    if (n < 2)
        return;
    size_t h = n / 2;
    merge_sort(a, tmp, h);
    merge_sort(a + h, tmp, n - h);
    size_t i = 0, j = h, k = 0;
    while (i < h && j < n)
        tmp[k++] = a[j].te_ns < a[i].te_ns ? a[j++] : a[i++];
    while (i < h)
        tmp[k++] = a[i++];
    while (j < n)
        tmp[k++] = a[j++];
    memcpy(a, tmp, n * sizeof *a);
}

void sp_trace_gather_finish(struct sp_trace_gather *g, const struct sp_stream *s, uint32_t ms,
                            struct traw_header *h)
{
    memset(h, 0, sizeof *h);
    h->th_ms = ms;
    h->th_events = g->n;
    snprintf(h->th_build_id, sizeof h->th_build_id, "%s", s->meta.build_id);
    unsigned cpus = s->ncpus < TRAW_CPUS ? s->ncpus : TRAW_CPUS;
    for (size_t i = 0; i < g->n; i++)
        if (g->ev[i].te_cpu + 1 > cpus)
            cpus = g->ev[i].te_cpu + 1;
    h->th_cpus = cpus ? cpus : 1;
    /* A copy of a stream's META (serve's view) has no CPUs' counts. */
    for (unsigned c = 0; s->cpus && c < cpus && c < s->ncpus; c++)
        h->th_dropped[c] = s->cpus[c].drops_total;
    struct traw_event *tmp = sp_xcalloc(g->n ? g->n : 1, sizeof *tmp);
    merge_sort(g->ev, tmp, g->n);
    free(tmp);
}

int sp_trace_gather_build(struct sp_trace_gather *g, const struct sp_stream *s, uint32_t ms,
                          const char *origin, const char *kernel, const char *path,
                          struct sp_trace *t, char *err, size_t errcap)
{
    if (!s->have_meta) {
        snprintf(err, errcap, "%s: no META came (no build id to check)", origin);
        return -1;
    }
    struct traw_header h;
    sp_trace_gather_finish(g, s, ms, &h);
    sp_trace_begin(t, &h, origin, kernel, path);
    for (size_t i = 0; i < g->n; i++)
        sp_trace_add_event(t, &g->ev[i]);
    return 0;
}
