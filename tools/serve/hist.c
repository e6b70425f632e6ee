/* tools/serve/hist.c: the bucketed history behind `sonde-prof serve`
 * (tools/serve/hist.h).
 * Serve layer: prefix sv_. */
#include "tools/serve/hist.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/model/model.h"

/* One stack's counts within one bucket. */
struct entry {
    uint32_t stack;
    uint32_t count;
    uint64_t weight;
};

struct bucket {
    bool used;
    uint64_t index;                     /* t_ms / SV_HIST_BUCKET_MS */
    struct entry *e;
    size_t n, cap;
    uint32_t *hash;                     /* entry index + 1; 0: free */
    size_t hcap;
    uint64_t over[SV_HIST_KERNELS][SV_HIST_KINDS];
};

struct second {
    uint64_t tag;                       /* the second held + 1; 0: none */
    uint32_t n[SV_HIST_KERNELS][SV_HIST_KINDS];
};

struct sv_hist {
    unsigned max;
    struct sv_hist_stack *stacks;       /* max of them */
    uint32_t *free_ids;                 /* a stack of unused ids */
    unsigned nfree, live;
    uint32_t *shash;                    /* id + 1 by key; 0: free */
    size_t shcap;
    struct bucket b[SV_HIST_BUCKETS];   /* by index % SV_HIST_BUCKETS */
    struct second *secs;                /* SV_HIST_SECONDS, by second % that */
    bool started;
    uint64_t now;
    uint64_t over;
    unsigned kinds;
    struct { uint8_t why; char name[PSTR_NAME_MAX + 1]; } reasons[SV_HIST_REASONS];
    unsigned nreasons;                  /* ids 1 .. nreasons */
    sv_hist_close_fn on_close;          /* a bucket closed: told once */
    void *close_ctx;
};

static uint64_t mix(uint64_t h)
{
    h ^= h >> 31;
    h *= 0x9e3779b97f4a7c15ull;
    return h ^ h >> 29;
}

static uint64_t key_hash(const struct sv_hist_key *k)
{
    uint64_t h = mix(((uint64_t)k->kernel << 48 | (uint64_t)k->kind << 40 |
                      (uint64_t)k->depth << 32 | k->pid) ^ (uint64_t)k->cpu << 20);
    for (unsigned i = 0; i < k->depth; i++)
        h = mix(h + k->frames[i]);
    h = k->reason ? mix(h + k->reason) : h;
    return k->size ? mix(h + k->size) : h;
}

static bool key_eq(const struct sv_hist_key *a, const struct sv_hist_key *b)
{
    return a->kernel == b->kernel && a->kind == b->kind && a->depth == b->depth &&
           a->pid == b->pid && a->cpu == b->cpu && a->size == b->size &&
           a->reason == b->reason &&
           memcmp(a->frames, b->frames, a->depth * sizeof *a->frames) == 0;
}

struct sv_hist *sv_hist_new(unsigned max_stacks)
{
    struct sv_hist *h = sp_xcalloc(1, sizeof *h);
    h->max = max_stacks;
    h->stacks = sp_xcalloc(max_stacks, sizeof *h->stacks);
    h->free_ids = sp_xcalloc(max_stacks, sizeof *h->free_ids);
    for (unsigned i = 0; i < max_stacks; i++)      /* id 0 handed out first */
        h->free_ids[i] = max_stacks - 1 - i;
    h->nfree = max_stacks;
    h->shcap = 1;
    while (h->shcap < 2 * (size_t)max_stacks)      /* at most half full */
        h->shcap *= 2;
    h->shash = sp_xcalloc(h->shcap, sizeof *h->shash);
    h->secs = sp_xcalloc(SV_HIST_SECONDS, sizeof *h->secs);
    for (unsigned why = 1; why <= PSTR_WHY_MAX; why++)
        h->reasons[why - 1].why = (uint8_t)why;     /* name "" */
    h->nreasons = PSTR_WHY_MAX;
    return h;
}

void sv_hist_free(struct sv_hist *h)
{
    if (!h)
        return;
    for (unsigned i = 0; i < SV_HIST_BUCKETS; i++) {
        free(h->b[i].e);
        free(h->b[i].hash);
    }
    free(h->stacks);
    free(h->free_ids);
    free(h->shash);
    free(h->secs);
    free(h);
}

/* ---- the stack table ----------------------------------------------------- */

/* The id of key, made if new and there is room; -1 when the table is full. */
static int64_t stack_id(struct sv_hist *h, const struct sv_hist_key *key)
{
    size_t i = key_hash(key) & (h->shcap - 1);
    for (; h->shash[i]; i = (i + 1) & (h->shcap - 1))
        if (key_eq(&h->stacks[h->shash[i] - 1].key, key))
            return h->shash[i] - 1;
    if (!h->nfree)
        return -1;
    uint32_t id = h->free_ids[--h->nfree];
    h->stacks[id].key = *key;
    h->stacks[id].refs = 0;
    h->shash[i] = id + 1;
    h->live++;
    return id;
}

/* After stacks died: open addressing cannot just clear their slots (a
 * later key's probe would stop there), so the index is made again from
 * the live stacks, once per eviction pass. */
static void stacks_reindex(struct sv_hist *h)
{
    memset(h->shash, 0, h->shcap * sizeof *h->shash);
    for (unsigned id = 0; id < h->max; id++) {
        if (!h->stacks[id].refs)
            continue;
        size_t i = key_hash(&h->stacks[id].key) & (h->shcap - 1);
        while (h->shash[i])
            i = (i + 1) & (h->shcap - 1);
        h->shash[i] = id + 1;
    }
}

/* ---- buckets ------------------------------------------------------------- */

/* Returns how many stacks died with it. */
static unsigned bucket_evict(struct sv_hist *h, struct bucket *b)
{
    unsigned died = 0;
    for (size_t i = 0; i < b->n; i++) {
        struct sv_hist_stack *s = &h->stacks[b->e[i].stack];
        if (--s->refs == 0) {
            h->free_ids[h->nfree++] = b->e[i].stack;
            h->live--;
            died++;
        }
    }
    free(b->e);
    free(b->hash);
    memset(b, 0, sizeof *b);
    return died;
}

static void bucket_rehash(struct bucket *b)
{
    size_t cap = b->hcap ? b->hcap * 2 : 64;
    free(b->hash);
    b->hash = sp_xcalloc(cap, sizeof *b->hash);
    b->hcap = cap;
    for (size_t n = 0; n < b->n; n++) {
        size_t i = mix(b->e[n].stack) & (cap - 1);
        while (b->hash[i])
            i = (i + 1) & (cap - 1);
        b->hash[i] = (uint32_t)n + 1;
    }
}

static void bucket_count(struct sv_hist *h, struct bucket *b, uint32_t id, uint64_t weight)
{
    if ((b->n + 1) * 2 > b->hcap)
        bucket_rehash(b);
    size_t i = mix(id) & (b->hcap - 1);
    for (; b->hash[i]; i = (i + 1) & (b->hcap - 1)) {
        struct entry *e = &b->e[b->hash[i] - 1];
        if (e->stack == id) {
            if (e->count < UINT32_MAX)
                e->count++;
            e->weight = e->weight + weight < e->weight ? UINT64_MAX : e->weight + weight;
            return;
        }
    }
    b->e = sp_grow(b->e, &b->cap, b->n + 1, sizeof *b->e);
    b->e[b->n] = (struct entry){ id, 1, weight };
    b->hash[i] = (uint32_t)++b->n;
    h->stacks[id].refs++;
}

/* The oldest bucket index held when the newest is cur. */
static uint64_t oldest_index(uint64_t cur)
{
    return cur + 1 >= SV_HIST_BUCKETS ? cur + 1 - SV_HIST_BUCKETS : 0;
}

void sv_hist_advance(struct sv_hist *h, uint64_t now_ms)
{
    if (h->started && now_ms <= h->now)
        return;
    bool first = !h->started;
    h->started = true;
    uint64_t before = h->now / SV_HIST_BUCKET_MS;
    h->now = now_ms;
    uint64_t cur = now_ms / SV_HIST_BUCKET_MS;
    if (!first && cur == before)
        return;
    for (uint64_t idx = before; !first && h->on_close && idx < cur; idx++) {
        const struct bucket *b = &h->b[idx % SV_HIST_BUCKETS];
        if (b->used && b->index == idx)
            h->on_close(h->close_ctx, h, idx);
        if (idx - before >= SV_HIST_BUCKETS)
            break;                      /* the rest were never held */
    }
    unsigned died = 0;
    for (unsigned i = 0; i < SV_HIST_BUCKETS; i++)
        if (h->b[i].used && h->b[i].index < oldest_index(cur))
            died += bucket_evict(h, &h->b[i]);
    if (died)
        stacks_reindex(h);
}

static void second_count(struct sv_hist *h, unsigned kernel, unsigned kind, uint64_t t_ms)
{
    uint64_t sec = t_ms / 1000;
    struct second *s = &h->secs[sec % SV_HIST_SECONDS];
    if (s->tag != sec + 1) {
        memset(s, 0, sizeof *s);
        s->tag = sec + 1;
    }
    if (s->n[kernel][kind] < UINT32_MAX)
        s->n[kernel][kind]++;
}

/* The id of an off-CPU record's reason, interned. Ids 1 .. PSTR_WHY_MAX
 * are the reasons without a name, id == why; a named one takes the next
 * free id, and with the table full it is kept under its why alone. */
static uint16_t reason_id(struct sv_hist *h, uint8_t why, const char *name)
{
    if (why == 0 || why > PSTR_WHY_MAX)
        return 0;
    if (!*name)
        return why;
    for (unsigned i = PSTR_WHY_MAX; i < h->nreasons; i++)
        if (h->reasons[i].why == why && strcmp(h->reasons[i].name, name) == 0)
            return (uint16_t)(i + 1);
    if (h->nreasons == SV_HIST_REASONS)
        return why;
    h->reasons[h->nreasons].why = why;
    snprintf(h->reasons[h->nreasons].name, sizeof h->reasons[0].name, "%s", name);
    return (uint16_t)++h->nreasons;
}

bool sv_hist_reason(const struct sv_hist *h, unsigned id, uint8_t *why, const char **name)
{
    if (id == 0 || id > h->nreasons)
        return false;
    *why = h->reasons[id - 1].why;
    *name = h->reasons[id - 1].name;
    return true;
}

bool sv_hist_add(struct sv_hist *h, unsigned kernel, uint16_t cpu,
                 const struct pstr_record *r, uint64_t t_ms)
{
    if (kernel >= SV_HIST_KERNELS || r->kind >= SV_HIST_KINDS || r->depth == 0 ||
        r->depth > PSTR_FRAMES)
        return false;
    sv_hist_advance(h, t_ms);
    uint64_t idx = t_ms / SV_HIST_BUCKET_MS;
    if (idx < oldest_index(h->now / SV_HIST_BUCKET_MS))
        return false;
    struct bucket *b = &h->b[idx % SV_HIST_BUCKETS];
    if (b->used && b->index != idx)
        return false;           /* cannot be: advance evicted every older one */
    b->used = true;
    b->index = idx;
    h->kinds |= 1u << r->kind;
    second_count(h, kernel, r->kind, t_ms);
    struct sv_hist_key k;
    memset(&k, 0, sizeof k);    /* the padding too: keys are compared whole */
    k.kernel = (uint8_t)kernel;
    k.kind = r->kind;
    k.depth = r->depth;
    k.pid = r->pid;
    k.cpu = cpu;
    k.size = r->kind == PSTR_KIND_HEAP ? r->size : 0;
    k.reason = r->kind == PSTR_KIND_OFFCPU && r->why ? reason_id(h, r->why, r->name) : 0;
    memcpy(k.frames, r->frames, r->depth * sizeof *r->frames);
    int64_t id = stack_id(h, &k);
    if (id < 0) {
        b->over[kernel][r->kind]++;
        h->over++;
        return true;
    }
    bucket_count(h, b, (uint32_t)id, r->weight);
    return true;
}

void sv_hist_on_close(struct sv_hist *h, sv_hist_close_fn fn, void *ctx)
{
    h->on_close = fn;
    h->close_ctx = ctx;
}

void sv_hist_bucket_each(const struct sv_hist *h, uint64_t index, sv_hist_entry_fn fn,
                         void *ctx)
{
    const struct bucket *b = &h->b[index % SV_HIST_BUCKETS];
    if (!b->used || b->index != index)
        return;
    for (size_t i = 0; i < b->n; i++) {
        const struct sv_hist_key *k = &h->stacks[b->e[i].stack].key;
        fn(ctx, k, k->kernel, k->kind, b->e[i].count, b->e[i].weight);
    }
    for (unsigned k = 0; k < SV_HIST_KERNELS; k++)
        for (unsigned kind = 0; kind < SV_HIST_KINDS; kind++)
            if (b->over[k][kind])
                fn(ctx, NULL, k, kind, b->over[k][kind], 0);
}

/* ---- reading ------------------------------------------------------------- */

uint64_t sv_hist_now(const struct sv_hist *h) { return h->now; }
unsigned sv_hist_live_stacks(const struct sv_hist *h) { return h->live; }
unsigned sv_hist_max_stacks(const struct sv_hist *h) { return h->max; }
uint64_t sv_hist_over(const struct sv_hist *h) { return h->over; }
unsigned sv_hist_kinds(const struct sv_hist *h) { return h->kinds; }

uint64_t sv_hist_oldest(const struct sv_hist *h)
{
    return oldest_index(h->now / SV_HIST_BUCKET_MS) * SV_HIST_BUCKET_MS;
}

size_t sv_hist_entries(const struct sv_hist *h)
{
    size_t n = 0;
    for (unsigned i = 0; i < SV_HIST_BUCKETS; i++)
        n += h->b[i].n;
    return n;
}

static bool takes(const struct sv_hist_filter *f, const struct sv_hist_key *k)
{
    return k->kind == f->kind && (f->kernel < 0 || k->kernel == f->kernel) &&
           (f->pid < 0 || k->pid == f->pid) && (f->cpu < 0 || k->cpu == f->cpu);
}

int sv_hist_select(const struct sv_hist *h, uint64_t from_ms, uint64_t to_ms,
                   const struct sv_hist_filter *f, struct sv_hist_sel *out)
{
    memset(out, 0, sizeof *out);
    if (to_ms <= from_ms)
        return -1;
    uint64_t cur = h->now / SV_HIST_BUCKET_MS;
    uint64_t lo = from_ms / SV_HIST_BUCKET_MS;
    uint64_t hi = (to_ms + SV_HIST_BUCKET_MS - 1) / SV_HIST_BUCKET_MS;   /* exclusive */
    if (lo < oldest_index(cur))
        lo = oldest_index(cur);
    if (hi > cur + 1)
        hi = cur + 1;
    if (hi < lo)
        hi = lo;
    out->from_ms = lo * SV_HIST_BUCKET_MS;
    out->to_ms = hi * SV_HIST_BUCKET_MS;
    if (out->to_ms > h->now)
        out->to_ms = h->now > out->from_ms ? h->now : out->from_ms;
    uint64_t *counts = sp_xcalloc(h->max, sizeof *counts);
    uint64_t *weights = sp_xcalloc(h->max, sizeof *weights);
    size_t distinct = 0;
    for (uint64_t idx = lo; idx < hi; idx++) {
        const struct bucket *b = &h->b[idx % SV_HIST_BUCKETS];
        if (!b->used || b->index != idx)
            continue;
        for (unsigned k = 0; k < SV_HIST_KERNELS; k++)
            if (f->kernel < 0 || (int)k == f->kernel)
                out->over += b->over[k][f->kind];
        for (size_t i = 0; i < b->n; i++) {
            const struct entry *e = &b->e[i];
            if (!takes(f, &h->stacks[e->stack].key))
                continue;
            distinct += counts[e->stack] == 0;
            counts[e->stack] += e->count;
            weights[e->stack] = weights[e->stack] + e->weight < weights[e->stack]
                                    ? UINT64_MAX : weights[e->stack] + e->weight;
        }
    }
    out->keys = sp_xcalloc(distinct, sizeof *out->keys);
    out->counts = sp_xcalloc(distinct, sizeof *out->counts);
    out->weights = sp_xcalloc(distinct, sizeof *out->weights);
    for (unsigned id = 0; id < h->max; id++) {
        if (!counts[id])
            continue;
        out->keys[out->n] = &h->stacks[id].key;
        out->counts[out->n] = counts[id];
        out->weights[out->n] = weights[id];
        out->samples += counts[id];
        out->weight = out->weight + weights[id] < out->weight ? UINT64_MAX
                                                              : out->weight + weights[id];
        out->n++;
    }
    free(counts);
    free(weights);
    return 0;
}

void sv_hist_sel_free(struct sv_hist_sel *s)
{
    free(s->keys);
    free(s->counts);
    free(s->weights);
    memset(s, 0, sizeof *s);
}

uint32_t sv_hist_rate(const struct sv_hist *h, unsigned kernel, unsigned kind, uint64_t sec)
{
    if (kernel >= SV_HIST_KERNELS || kind >= SV_HIST_KINDS)
        return 0;
    const struct second *s = &h->secs[sec % SV_HIST_SECONDS];
    if (s->tag != sec + 1 || sec * 1000 < sv_hist_oldest(h))
        return 0;
    return s->n[kernel][kind];
}
