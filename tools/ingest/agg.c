/* tools/ingest/agg.c: streamed records as a raw profile, in text or
 * straight into the model (tools/ingest/agg.h).
 * Host pipeline: prefix sp_. */
#define _GNU_SOURCE
#include "tools/ingest/agg.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/model/model.h"

void sp_agg_init(struct sp_agg *a)
{
    memset(a, 0, sizeof *a);
}

void sp_agg_free(struct sp_agg *a)
{
    free(a->tab);
    free(a->idx);
    memset(a, 0, sizeof *a);
}

static size_t chain_hash(uint32_t pid, uint16_t cpu, uint8_t kind, uint8_t depth,
                         const uint64_t *f)
{
    uint64_t h = (uint64_t)pid << 24 ^ (uint64_t)cpu << 8 ^ depth ^ (uint64_t)kind << 56;
    for (unsigned i = 0; i < depth; i++)
        h = (h ^ f[i]) * 0x9e3779b97f4a7c15ull;
    return (size_t)(h ^ h >> 31);
}

/* An off-CPU record's reason and waker, into the chain's hash. */
static size_t off_hash(size_t h, const struct pstr_record *r)
{
    if (!r->why)
        return h;
    uint64_t x = (uint64_t)r->why << 40 ^ (uint64_t)(uint32_t)r->waker << 8 ^ r->wdepth;
    for (const char *n = r->name; *n; n++)
        x = (x ^ (uint8_t)*n) * 0x100000001b3ull;
    for (unsigned i = 0; i < r->wdepth; i++)
        x = (x ^ r->wframes[i]) * 0x9e3779b97f4a7c15ull;
    return h ^ (size_t)(x ^ x >> 29);
}

static bool same(const struct sp_agg_chain *c, uint32_t pid, uint16_t cpu,
                 const struct pstr_record *r)
{
    return c->pid == pid && c->cpu == cpu && c->kind == r->kind && c->depth == r->depth &&
           memcmp(c->frames, r->frames, r->depth * sizeof *r->frames) == 0 &&
           c->why == r->why && c->waker == r->waker && c->wdepth == r->wdepth &&
           strcmp(c->name, r->name) == 0 &&
           memcmp(c->wframes, r->wframes, r->wdepth * sizeof *r->wframes) == 0;
}

/* The chain c as a record, for the hash a re-insertion needs. */
static void as_record(const struct sp_agg_chain *c, struct pstr_record *r)
{
    memset(r, 0, sizeof *r);
    r->why = c->why;
    r->waker = c->waker;
    r->wdepth = c->wdepth;
    memcpy(r->name, c->name, sizeof r->name);
    memcpy(r->wframes, c->wframes, sizeof r->wframes);
}

static size_t hash_of(const struct sp_agg_chain *c)
{
    struct pstr_record r;
    as_record(c, &r);
    return off_hash(chain_hash(c->pid, c->cpu, c->kind, c->depth, c->frames), &r);
}

/* The index twice as large, every chain in it again. The chains stay
 * where they are: a chain is ~200 bytes and a slot 4, so a thousand
 * kernels' tables cost their chains and little more. */
static void grow(struct sp_agg *a)
{
    size_t icap = a->icap ? a->icap * 2 : 64;
    uint32_t *idx = sp_xcalloc(icap, sizeof *idx);
    for (size_t n = 0; n < a->n; n++) {
        size_t i = hash_of(&a->tab[n]) & (icap - 1);
        while (idx[i])
            i = (i + 1) & (icap - 1);
        idx[i] = (uint32_t)n + 1;
    }
    free(a->idx);
    a->idx = idx;
    a->icap = icap;
}

uint64_t sp_agg_objects_q16(const struct pstr_record *r)
{
    if (r->kind == PSTR_KIND_LOCK)
        return (uint64_t)(r->waits ? r->waits : 1) << 16;
    if (r->kind != PSTR_KIND_HEAP || r->size == 0)
        return 1u << 16;
    return (uint64_t)((((unsigned __int128)r->weight << 16) + r->size / 2) / r->size);
}

/* count records of r's chain weighing weight in all: the objects they
 * stand for, in 1/65536ths (saturating). */
static uint64_t agg_objects_q16(const struct pstr_record *r, uint64_t count, uint64_t weight)
{
    unsigned __int128 o;
    if (r->kind == PSTR_KIND_LOCK)      /* the waits, each record's r->waits */
        o = (unsigned __int128)count * (r->waits ? r->waits : 1) << 16;
    else if (r->kind != PSTR_KIND_HEAP || r->size == 0)
        o = (unsigned __int128)count << 16;
    else
        o = (((unsigned __int128)weight << 16) + r->size / 2) / r->size;
    return o > UINT64_MAX ? UINT64_MAX : (uint64_t)o;
}

void sp_agg_add(struct sp_agg *a, uint16_t cpu, const struct pstr_record *r)
{
    sp_agg_add_n(a, cpu, r, 1, r->weight);
}

/* Saturating: a sum past 2^64 - 1 stays there, never wraps. */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

void sp_agg_add_n(struct sp_agg *a, uint16_t cpu, const struct pstr_record *r,
                  uint64_t count, uint64_t weight)
{
    if (!count || (r->kind == PSTR_KIND_OFFCPU && !r->why))
        return;
    /* A lock's chains are the lock's as well as the holder's: its type
     * kept as the raw profile's why (spin, mutex), its name in name. */
    struct pstr_record lr;
    if (r->kind == PSTR_KIND_LOCK) {
        if (r->lkind != PSTR_LOCK_SPIN && r->lkind != PSTR_LOCK_MUTEX)
            return;
        lr = *r;
        lr.why = r->lkind == PSTR_LOCK_SPIN ? PRAW_WHY_SPIN : PRAW_WHY_MUTEX;
        lr.waker = PSTR_WAKER_NONE;
        lr.wdepth = 0;
        r = &lr;
    }
    if ((a->n + 1) * 2 > a->icap)   /* keep the index half empty */
        grow(a);
    size_t i = off_hash(chain_hash(r->pid, cpu, r->kind, r->depth, r->frames), r) &
               (a->icap - 1);
    for (; a->idx[i]; i = (i + 1) & (a->icap - 1)) {
        struct sp_agg_chain *c = &a->tab[a->idx[i] - 1];
        if (same(c, r->pid, cpu, r)) {
            c->count = sat_add(c->count, count);
            c->weight = sat_add(c->weight, weight);
            c->objects_q16 = sat_add(c->objects_q16, agg_objects_q16(r, count, weight));
            return;
        }
    }
    a->tab = sp_grow(a->tab, &a->cap, a->n + 1, sizeof *a->tab);
    a->idx[i] = (uint32_t)a->n + 1;
    struct sp_agg_chain *c = &a->tab[a->n];
    memset(c, 0, sizeof *c);
    c->count = count;
    c->weight = weight;
    c->objects_q16 = agg_objects_q16(r, count, weight);
    c->kind = r->kind;
    c->pid = r->pid;
    c->cpu = cpu;
    c->depth = r->depth;
    memcpy(c->frames, r->frames, r->depth * sizeof *r->frames);
    c->why = r->why;
    c->waker = r->waker;
    c->wdepth = r->wdepth;
    memcpy(c->name, r->name, sizeof c->name);
    memcpy(c->wframes, r->wframes, r->wdepth * sizeof *r->wframes);
    a->n++;
}

/* " why=waitq:NAME waker=N:TASK": the off-CPU part before the chain,
 * the waker's name from the stream's META when it has one. */
static void put_why(FILE *f, const struct sp_agg_chain *c, const struct sp_stream *s)
{
    fprintf(f, " why=%s", praw_why_name(c->why));
    if (c->name[0])
        fprintf(f, ":%s", c->name);
    if (!praw_why_blocked(c->why))
        return;
    fprintf(f, " waker=%" PRId32, c->waker);
    const char *t = c->waker > 0 ? sp_stream_task(s, (uint32_t)c->waker) : NULL;
    if (t)
        fprintf(f, ":%s", t);
}

/* " | f f ...": the waker's chain after the task's. */
static void put_waker_chain(FILE *f, const struct sp_agg_chain *c)
{
    if (c->wdepth)
        fputs(" |", f);
    for (unsigned k = 0; k < c->wdepth; k++)
        fprintf(f, " %" PRIx64, c->wframes[k]);
}

static void task_name(const struct sp_stream *s, uint32_t pid, char *buf, size_t cap)
{
    const char *t = sp_stream_task(s, pid);
    if (t)
        snprintf(buf, cap, "%s", t);
    else if (pid == 0)
        snprintf(buf, cap, "-");
    else
        snprintf(buf, cap, "pid-%" PRIu32, pid);
}

/* A heap chain line's OBJECTS, as the kernel's (rounded, at least 1): a
 * chain split over several lines (more records than a line counts) gives
 * each line but the last 1, the last the rest. left: records after this
 * line; n: records on it. */
static uint64_t agg_objects_line(const struct sp_agg_chain *c, uint64_t left, uint64_t n)
{
    uint64_t all = (c->objects_q16 + (1u << 15)) >> 16;
    if (left)
        return 1;
    uint64_t lines_before = (c->count - n) / PRAW_COUNT_MAX;     /* each full */
    return all > lines_before ? all - lines_before : 1;
}

/* The records of kind and, as cpus= counts them, the CPUs with samples. */
static void count_kind(const struct sp_agg *a, unsigned kind, uint64_t *records,
                       unsigned *cpus)
{
    static bool has[SP_STREAM_CPUS];
    *cpus = 0;
    *records = 0;
    memset(has, 0, sizeof has);
    for (size_t i = 0; i < a->n; i++) {
        if (!a->tab[i].count || a->tab[i].kind != kind)
            continue;
        *records += a->tab[i].count;
        if (!has[a->tab[i].cpu]) {
            has[a->tab[i].cpu] = true;
            ++*cpus;
        }
    }
}

char *sp_agg_raw(const struct sp_agg *a, const struct sp_stream *s, unsigned kind,
                 uint32_t ms, size_t *len)
{
    return sp_agg_raw_drops(a, s, kind, ms, sp_stream_drops(s), len);
}

char *sp_agg_raw_drops(const struct sp_agg *a, const struct sp_stream *s, unsigned kind,
                       uint32_t ms, uint64_t drops, size_t *len)
{
    if (!s->have_meta)
        return NULL;
    char *text = NULL;
    FILE *f = open_memstream(&text, len);
    if (!f) {
        fprintf(stderr, "sonde-prof: out of memory\n");
        exit(2);
    }
    unsigned cpus;
    uint64_t records;
    count_kind(a, kind, &records, &cpus);
    fprintf(f, "%sbuild-id=%s source=%s samples=%" PRIu64 " dropped=%" PRIu64
            " cpus=%u ms=%" PRIu32, PRAW_MAGIC, s->meta.build_id, s->meta.source,
            records, drops, cpus, ms);
    if (kind != PRAW_KIND_CPU)
        fprintf(f, " kind=%s", praw_kind_name(kind));
    fputc('\n', f);
    for (size_t i = 0; i < a->n; i++) {
        const struct sp_agg_chain *c = &a->tab[i];
        if (!c->count || c->kind != kind)
            continue;
        char task[PSTR_TASK_MAX + 16];
        task_name(s, c->pid, task, sizeof task);
        /* A chain line counts at most PRAW_COUNT_MAX: more is several
         * lines, which a reader adds up. Every line but the last carries
         * a weight of 1 (the least a line may), the last the rest: a
         * chain of N records weighs at least N, so the rest is at least 1. */
        uint64_t wleft = c->weight;
        for (uint64_t left = c->count; left;) {
            uint64_t n = left > PRAW_COUNT_MAX ? PRAW_COUNT_MAX : left;
            left -= n;
            fprintf(f, "%" PRIu64, n);
            if (kind != PRAW_KIND_CPU) {
                uint64_t w = left ? 1 : wleft;
                wleft -= w;
                fprintf(f, ":%" PRIu64, w);
            }
            if (kind == PRAW_KIND_HEAP)
                fprintf(f, ":%" PRIu64, agg_objects_line(c, left, n));
            fprintf(f, " %" PRIu32 " %s %u", c->pid, task, c->cpu);
            if (kind == PRAW_KIND_OFFCPU)
                put_why(f, c, s);
            if (kind == PRAW_KIND_LOCK)
                fprintf(f, " lock=%s:%s waits=%" PRIu64,
                        c->why == PRAW_WHY_SPIN ? "spin" : "mutex", c->name[0] ? c->name : "?",
                        agg_objects_line(c, left, n));
            for (unsigned k = 0; k < c->depth; k++)
                fprintf(f, " %" PRIx64, c->frames[k]);
            if (kind == PRAW_KIND_OFFCPU)
                put_waker_chain(f, c);
            fputc('\n', f);
        }
    }
    fclose(f);
    return text;
}

/* Chain c as the one line of a raw profile that held all its records,
 * as praw_parse would give it (the counts beyond a line's are set on the
 * model's chain after). */
static void as_raw_chain(const struct sp_agg_chain *c, const struct sp_stream *s, unsigned kind,
                         struct praw_chain *rc)
{
    memset(rc, 0, sizeof *rc);
    rc->pc_count = c->count > PRAW_COUNT_MAX ? PRAW_COUNT_MAX : (uint32_t)c->count;
    rc->pc_weight = kind == PRAW_KIND_CPU ? c->count : c->weight;
    uint64_t objects = (c->objects_q16 + (1u << 15)) >> 16;
    rc->pc_objects = kind != PRAW_KIND_HEAP && kind != PRAW_KIND_LOCK ? c->count
                   : objects ? objects : 1;
    rc->pc_pid = c->pid;
    rc->pc_cpu = c->cpu;
    task_name(s, c->pid, rc->pc_task, sizeof rc->pc_task);
    rc->pc_depth = c->depth;
    memcpy(rc->pc_frames, c->frames, c->depth * sizeof *c->frames);
    rc->pc_waker = PRAW_WAKER_NONE;
    if (kind == PRAW_KIND_LOCK) {
        rc->pc_why = c->why;
        snprintf(rc->pc_name, sizeof rc->pc_name, "%s", c->name[0] ? c->name : "?");
        return;
    }
    if (kind != PRAW_KIND_OFFCPU)
        return;
    rc->pc_why = c->why;
    memcpy(rc->pc_name, c->name, sizeof rc->pc_name);
    if (praw_why_blocked(c->why)) {
        rc->pc_waker = c->waker;
        const char *t = c->waker > 0 ? sp_stream_task(s, (uint32_t)c->waker) : NULL;
        if (t)
            snprintf(rc->pc_wtask, sizeof rc->pc_wtask, "%s", t);
    }
    rc->pc_wdepth = c->wdepth;
    memcpy(rc->pc_wframes, c->wframes, c->wdepth * sizeof *c->wframes);
}

int sp_agg_profile(const struct sp_agg *a, const struct sp_stream *s, unsigned kind,
                   uint32_t ms, uint64_t drops, struct sp_profile *p, const char *kernel,
                   unsigned map)
{
    if (!s->have_meta)
        return -1;
    struct praw_header h;
    memset(&h, 0, sizeof h);
    snprintf(h.ph_build_id, sizeof h.ph_build_id, "%s", s->meta.build_id);
    snprintf(h.ph_source, sizeof h.ph_source, "%s", s->meta.source);
    count_kind(a, kind, &h.ph_samples, &h.ph_cpus);
    h.ph_dropped = drops;
    h.ph_ms = ms;
    h.ph_kind = (uint8_t)kind;
    unsigned in = sp_profile_add_input(p, &h, kernel, kernel, map);
    for (size_t i = 0; i < a->n; i++) {
        const struct sp_agg_chain *c = &a->tab[i];
        if (!c->count || c->kind != kind)
            continue;
        struct praw_chain rc;
        as_raw_chain(c, s, kind, &rc);
        struct sp_chain *pc = sp_profile_add_chain(p, in, &rc);
        pc->c_count = c->count;
        pc->c_weight = rc.pc_weight;
    }
    return 0;
}
