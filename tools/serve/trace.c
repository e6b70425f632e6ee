/* tools/serve/trace.c: each kernel's last minute of trace (trace.h). */
#include "tools/serve/trace.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/ingest/trace_stream.h"

/* One event, compact: its record's trace part, the name interned. */
struct tev {
    uint64_t ns;
    uint32_t pid, other;
    uint32_t dur;
    uint16_t cpu, vec, wcpu, name;
    uint8_t ev, arg;
    uint8_t pad[2];
};
_Static_assert(sizeof(struct tev) == 32, "an event is 32 bytes");

struct tsample {
    uint64_t ns;
    uint32_t pid;
    uint16_t cpu;
    uint8_t depth, tick;
    uint64_t frames[PSTR_FRAMES];
};

/* A ring of fixed-size items, grown by doubling up to max, then the
 * oldest overwritten. */
struct ring {
    uint8_t *buf;
    size_t size, cap, max, head, n;
};

static void *ring_at(const struct ring *r, size_t i)
{
    return r->buf + ((r->head + i) & (r->cap - 1)) * r->size;
}

/* Room for one more at the end: its place. *evicted counts an overwrite. */
static void *ring_push(struct ring *r, uint64_t *evicted)
{
    if (r->n == r->cap && r->cap < r->max) {
        size_t cap = r->cap ? r->cap * 2 : r->max < 1024 ? r->max : 1024;
        uint8_t *b = sp_xcalloc(cap, r->size);
        for (size_t i = 0; i < r->n; i++)
            memcpy(b + i * r->size, ring_at(r, i), r->size);
        free(r->buf);
        r->buf = b;
        r->cap = cap;
        r->head = 0;
    }
    if (r->n == r->cap) {
        r->head = (r->head + 1) & (r->cap - 1);
        r->n--;
        (*evicted)++;
    }
    return ring_at(r, r->n++);
}

static void ring_pop(struct ring *r)
{
    r->head = (r->head + 1) & (r->cap - 1);
    r->n--;
}

struct kernel {
    bool anchored;
    uint64_t anchor_ns;         /* Unix ns at the stream's time 0 */
    struct ring ev, smp;
    uint64_t evicted;
};

struct sv_trace {
    size_t events_max, samples_max;
    struct kernel *k[SV_TRACE_KERNELS];
    char names[SV_TRACE_NAMES][PSTR_NAME_MAX + 1];  /* [0] "" */
    unsigned nnames;
};

struct sv_trace *sv_trace_new(size_t events_max, size_t samples_max)
{
    struct sv_trace *t = sp_xcalloc(1, sizeof *t);
    t->events_max = events_max;
    t->samples_max = samples_max;
    t->nnames = 1;
    return t;
}

void sv_trace_free(struct sv_trace *t)
{
    if (!t)
        return;
    for (unsigned i = 0; i < SV_TRACE_KERNELS; i++)
        if (t->k[i]) {
            free(t->k[i]->ev.buf);
            free(t->k[i]->smp.buf);
            free(t->k[i]);
        }
    free(t);
}

/* name's id; with the table full, 0 (no name) rather than a wrong one. */
static uint16_t name_id(struct sv_trace *t, const char *name)
{
    if (!name[0])
        return 0;
    for (unsigned i = 1; i < t->nnames; i++)
        if (strcmp(t->names[i], name) == 0)
            return (uint16_t)i;
    if (t->nnames == SV_TRACE_NAMES)
        return 0;
    snprintf(t->names[t->nnames], sizeof t->names[0], "%s", name);
    return (uint16_t)t->nnames++;
}

static void kernel_clear(struct kernel *k)
{
    k->ev.head = k->ev.n = 0;
    k->smp.head = k->smp.n = 0;
    k->anchored = false;
}

void sv_trace_add(struct sv_trace *t, unsigned kernel, uint16_t cpu, const struct pstr_record *r,
                  uint64_t now_ms)
{
    if (kernel >= SV_TRACE_KERNELS || r->kind != PSTR_KIND_TRACE)
        return;
    struct kernel *k = t->k[kernel];
    if (!k) {
        k = t->k[kernel] = sp_xcalloc(1, sizeof *k);
        k->ev = (struct ring){ .size = sizeof(struct tev), .max = t->events_max };
        k->smp = (struct ring){ .size = sizeof(struct tsample), .max = t->samples_max };
    }
    uint64_t now_ns = now_ms * 1000000ull;
    uint64_t anchor = now_ns > r->weight ? now_ns - r->weight : 0;
    if (k->anchored && (anchor + SV_TRACE_RESTART_NS < k->anchor_ns ||
                        anchor > k->anchor_ns + SV_TRACE_RESTART_NS))
        kernel_clear(k);            /* another stream: its clock starts again */
    if (!k->anchored || anchor < k->anchor_ns)
        k->anchor_ns = anchor;
    k->anchored = true;
    if (r->tev == PSTR_TEV_SAMPLE) {
        struct tsample *s = ring_push(&k->smp, &k->evicted);
        *s = (struct tsample){ .ns = r->weight, .pid = r->pid, .cpu = cpu, .depth = r->depth,
                               .tick = r->flags & PSTR_REC_TICK };
        memcpy(s->frames, r->frames, sizeof s->frames);
        return;
    }
    struct tev *e = ring_push(&k->ev, &k->evicted);
    *e = (struct tev){ .ns = r->weight, .pid = r->pid, .other = r->tother, .dur = r->tdur,
                       .cpu = cpu, .vec = r->tvec, .wcpu = r->twcpu,
                       .name = name_id(t, r->name), .ev = r->tev, .arg = r->targ };
}

/* The Unix ms of a kernel's event time ns. */
static uint64_t unix_ms(const struct kernel *k, uint64_t ns)
{
    return (k->anchor_ns + ns) / 1000000ull;
}

void sv_trace_advance(struct sv_trace *t, uint64_t now_ms)
{
    uint64_t keep = now_ms > SV_TRACE_KEEP_MS ? now_ms - SV_TRACE_KEEP_MS : 0;
    for (unsigned i = 0; i < SV_TRACE_KERNELS; i++) {
        struct kernel *k = t->k[i];
        if (!k)
            continue;
        /* Each ring is in arrival order, each CPU's in time order: the
         * front goes while it is old (a CPU's late batch behind it waits
         * for the next pass). */
        while (k->ev.n && unix_ms(k, ((struct tev *)ring_at(&k->ev, 0))->ns) < keep)
            ring_pop(&k->ev);
        while (k->smp.n && unix_ms(k, ((struct tsample *)ring_at(&k->smp, 0))->ns) < keep)
            ring_pop(&k->smp);
    }
}

void sv_trace_span(const struct sv_trace *t, unsigned kernel, struct sv_trace_span *sp)
{
    memset(sp, 0, sizeof *sp);
    const struct kernel *k = kernel < SV_TRACE_KERNELS ? t->k[kernel] : NULL;
    if (!k)
        return;
    sp->events = k->ev.n;
    sp->samples = k->smp.n;
    sp->evicted = k->evicted;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < k->ev.n; i++) {
        uint64_t ns = ((const struct tev *)ring_at(&k->ev, i))->ns;
        lo = ns < lo ? ns : lo;
        hi = ns > hi ? ns : hi;
    }
    for (size_t i = 0; i < k->smp.n; i++) {
        uint64_t ns = ((const struct tsample *)ring_at(&k->smp, i))->ns;
        lo = ns < lo ? ns : lo;
        hi = ns > hi ? ns : hi;
    }
    if (hi) {
        sp->from_ms = unix_ms(k, lo);
        sp->to_ms = unix_ms(k, hi);
    }
}

/* [from_ms, to_ms] (Unix ms) on k's stream clock, [*lo, *hi] ns. */
static void range_ns(const struct kernel *k, uint64_t from_ms, uint64_t to_ms, uint64_t *lo,
                     uint64_t *hi)
{
    *lo = from_ms * 1000000ull;
    *hi = to_ms * 1000000ull + 999999ull;
    *lo = *lo > k->anchor_ns ? *lo - k->anchor_ns : 0;
    *hi = *hi > k->anchor_ns ? *hi - k->anchor_ns : 0;
}

size_t sv_trace_count(const struct sv_trace *t, unsigned kernel, uint64_t from_ms, uint64_t to_ms)
{
    const struct kernel *k = kernel < SV_TRACE_KERNELS ? t->k[kernel] : NULL;
    if (!k)
        return 0;
    uint64_t lo, hi;
    range_ns(k, from_ms, to_ms, &lo, &hi);
    size_t n = 0;
    for (size_t i = 0; i < k->ev.n; i++) {
        uint64_t ns = ((const struct tev *)ring_at(&k->ev, i))->ns;
        n += ns >= lo && ns <= hi;
    }
    for (size_t i = 0; i < k->smp.n; i++) {
        uint64_t ns = ((const struct tsample *)ring_at(&k->smp, i))->ns;
        n += ns >= lo && ns <= hi;
    }
    return n;
}

int sv_trace_select(const struct sv_trace *t, unsigned kernel, uint64_t from_ms, uint64_t to_ms,
                    const struct sp_stream *s, unsigned map, const char *name,
                    struct sp_trace *tr)
{
    if (!s->have_meta)
        return -1;
    const struct kernel *k = kernel < SV_TRACE_KERNELS ? t->k[kernel] : NULL;
    struct sp_trace_gather g;
    sp_trace_gather_init(&g);
    uint64_t base = 0;
    if (k) {
        /* The range on the stream's clock; its events re-timed from its
         * start, as a window's are. */
        uint64_t lo, hi;
        range_ns(k, from_ms, to_ms, &lo, &hi);
        base = lo;
        for (size_t i = 0; i < k->ev.n; i++) {
            const struct tev *e = ring_at(&k->ev, i);
            if (e->ns < lo || e->ns > hi)
                continue;
            struct pstr_record r = { .pid = e->pid, .kind = PSTR_KIND_TRACE,
                                     .weight = e->ns - base, .tev = e->ev, .targ = e->arg,
                                     .tother = e->other, .tvec = e->vec, .twcpu = e->wcpu,
                                     .tdur = e->dur };
            snprintf(r.name, sizeof r.name, "%s", t->names[e->name]);
            sp_trace_gather_add(&g, s, e->cpu, &r);
        }
        for (size_t i = 0; i < k->smp.n; i++) {
            const struct tsample *m = ring_at(&k->smp, i);
            if (m->ns < lo || m->ns > hi)
                continue;
            struct pstr_record r = { .pid = m->pid, .kind = PSTR_KIND_TRACE, .depth = m->depth,
                                     .flags = m->tick, .weight = m->ns - base,
                                     .tev = PSTR_TEV_SAMPLE };
            memcpy(r.frames, m->frames, sizeof r.frames);
            sp_trace_gather_add(&g, s, m->cpu, &r);
        }
    }
    uint64_t ms = to_ms >= from_ms ? to_ms - from_ms + 1 : 1;
    struct traw_header h;
    sp_trace_gather_finish(&g, s, ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms, &h);
    sp_trace_begin_map(tr, &h, name, name, map);
    for (size_t i = 0; i < g.n; i++)
        sp_trace_add_event(tr, &g.ev[i]);
    sp_trace_gather_free(&g);
    return 0;
}
