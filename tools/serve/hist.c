/* tools/serve/hist.c: the bucketed history behind `sonde-prof serve`
 * (tools/serve/hist.h).
 * Serve layer: prefix sv_. */
#include "tools/serve/hist.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/model/model.h"

/* A bucket's arrays are found by their first field, a 32-bit key,
 * through an index of open addressing: a slot holds the position + 1
 * (0: free), and the index is kept at most half full. */
struct index {
    uint32_t *slot;
    size_t cap;
};

/* One stack's counts within one bucket. */
struct entry {
    uint32_t stack;
    uint32_t count;
    uint64_t weight;
};

/* One kernel's records of one kind within one bucket: the timeline's
 * per-kernel line, and what went over the bound. */
struct kcount {
    uint32_t key;                       /* kernel * SV_HIST_KINDS + kind */
    uint32_t records;                   /* kept or not */
    uint64_t over;
};

/* A bucket's entries of one sort: every kernel's own stacks, or the
 * fleet's (sv_hist_key_fleet). */
struct elist {
    struct entry *e;
    size_t n, cap;
    struct index x;
};

struct bucket {
    bool used;
    uint64_t index;                     /* t_ms / SV_HIST_BUCKET_MS */
    struct elist own, fleet;
    struct kcount *kc;
    size_t nk, capk;
    struct index ki;
};

struct second {
    uint64_t tag;                       /* the second held + 1; 0: none */
    uint32_t n[SV_HIST_KINDS];          /* every kernel's records */
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
    uint8_t kmap[SV_HIST_KERNELS];      /* each kernel's ELF: its fleet's stacks */
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
    /* The off-CPU reasons and the spinlock (a lock record's type, kept as
     * a reason is: tools/serve/hist.h), each without a name. */
    for (unsigned why = 1; why <= PRAW_WHY_MAX; why++)
        h->reasons[why - 1].why = (uint8_t)why;     /* name "" */
    h->nreasons = PRAW_WHY_MAX;
    return h;
}

static void bucket_free(struct bucket *b)
{
    free(b->own.e);
    free(b->own.x.slot);
    free(b->fleet.e);
    free(b->fleet.x.slot);
    free(b->kc);
    free(b->ki.slot);
    memset(b, 0, sizeof *b);
}

void sv_hist_set_map(struct sv_hist *h, unsigned kernel, unsigned map)
{
    if (kernel < SV_HIST_KERNELS && map < SV_HIST_MAPS)
        h->kmap[kernel] = (uint8_t)map;
}

void sv_hist_free(struct sv_hist *h)
{
    if (!h)
        return;
    for (unsigned i = 0; i < SV_HIST_BUCKETS; i++)
        bucket_free(&h->b[i]);
    free(h->stacks);
    free(h->free_ids);
    free(h->shash);
    free(h->secs);
    free(h);
}

/* ---- the stack table ----------------------------------------------------- */

/* The id of key, made if new and make (there is room: the caller
 * counted); -1 when it is new and not made. */
static int64_t stack_id(struct sv_hist *h, const struct sv_hist_key *key, bool make)
{
    size_t i = key_hash(key) & (h->shcap - 1);
    for (; h->shash[i]; i = (i + 1) & (h->shcap - 1))
        if (key_eq(&h->stacks[h->shash[i] - 1].key, key))
            return h->shash[i] - 1;
    if (!make || !h->nfree)
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

/* ---- a bucket's indexes --------------------------------------------------- */

static uint32_t key_at(const void *arr, size_t stride, size_t pos)
{
    uint32_t k;
    memcpy(&k, (const char *)arr + pos * stride, sizeof k);
    return k;
}

/* The slot of key in x: its element's, or the free one where it goes. */
static size_t index_slot(const struct index *x, const void *arr, size_t stride, uint32_t key)
{
    size_t i = mix(key) & (x->cap - 1);
    while (x->slot[i] && key_at(arr, stride, x->slot[i] - 1) != key)
        i = (i + 1) & (x->cap - 1);
    return i;
}

/* An empty index with room for n elements. */
static void index_init(struct index *x, size_t n)
{
    size_t cap = 64;
    while ((n + 1) * 2 > cap)
        cap *= 2;
    free(x->slot);
    x->slot = sp_xcalloc(cap, sizeof *x->slot);
    x->cap = cap;
}

/* Room in x for one more of arr's n elements: past half full, the index
 * is made again at twice the size. */
static void index_room(struct index *x, const void *arr, size_t stride, size_t n)
{
    if ((n + 1) * 2 <= x->cap)
        return;
    index_init(x, x->cap ? x->cap : 31);
    for (size_t p = 0; p < n; p++)
        x->slot[index_slot(x, arr, stride, key_at(arr, stride, p))] = (uint32_t)p + 1;
}

/* The element of arr whose key is key, through x, or NULL. */
static const void *index_find(const struct index *x, const void *arr, size_t stride,
                              uint32_t key)
{
    if (!x->cap)
        return NULL;
    size_t i = index_slot(x, arr, stride, key);
    return x->slot[i] ? (const char *)arr + (x->slot[i] - 1) * stride : NULL;
}

/* ---- buckets ------------------------------------------------------------- */

/* Returns how many stacks died with l's entries. */
static unsigned elist_evict(struct sv_hist *h, const struct elist *l)
{
    unsigned died = 0;
    for (size_t i = 0; i < l->n; i++) {
        struct sv_hist_stack *s = &h->stacks[l->e[i].stack];
        if (--s->refs == 0) {
            h->free_ids[h->nfree++] = l->e[i].stack;
            h->live--;
            died++;
        }
    }
    return died;
}

static unsigned bucket_evict(struct sv_hist *h, struct bucket *b)
{
    unsigned died = elist_evict(h, &b->own) + elist_evict(h, &b->fleet);
    bucket_free(b);
    return died;
}

/* n more of stack id weighing weight in all (n: 1 a record; a lock
 * record's waits). */
static void bucket_count(struct sv_hist *h, struct elist *l, uint32_t id, uint32_t n,
                         uint64_t weight)
{
    index_room(&l->x, l->e, sizeof *l->e, l->n);
    size_t i = index_slot(&l->x, l->e, sizeof *l->e, id);
    if (l->x.slot[i]) {
        struct entry *e = &l->e[l->x.slot[i] - 1];
        e->count = e->count + n < e->count ? UINT32_MAX : e->count + n;
        e->weight = e->weight + weight < e->weight ? UINT64_MAX : e->weight + weight;
        return;
    }
    l->e = sp_grow(l->e, &l->cap, l->n + 1, sizeof *l->e);
    l->e[l->n] = (struct entry){ id, n, weight };
    l->x.slot[i] = (uint32_t)++l->n;
    h->stacks[id].refs++;
}

/* Kernel's count of kind in b, made if new. */
static struct kcount *bucket_kcount(struct bucket *b, unsigned kernel, unsigned kind)
{
    uint32_t key = kernel * SV_HIST_KINDS + kind;
    index_room(&b->ki, b->kc, sizeof *b->kc, b->nk);
    size_t i = index_slot(&b->ki, b->kc, sizeof *b->kc, key);
    if (!b->ki.slot[i]) {
        b->kc = sp_grow(b->kc, &b->capk, b->nk + 1, sizeof *b->kc);
        b->kc[b->nk] = (struct kcount){ key, 0, 0 };
        b->ki.slot[i] = (uint32_t)++b->nk;
    }
    return &b->kc[b->ki.slot[i] - 1];
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

static void second_count(struct sv_hist *h, unsigned kind, uint64_t t_ms)
{
    uint64_t sec = t_ms / 1000;
    struct second *s = &h->secs[sec % SV_HIST_SECONDS];
    if (s->tag != sec + 1) {
        memset(s, 0, sizeof *s);
        s->tag = sec + 1;
    }
    if (s->n[kind] < UINT32_MAX)
        s->n[kind]++;
}

/* The id of an off-CPU record's reason, or a lock record's lock (its
 * type as the raw profile's why, spin or mutex, and its name), interned.
 * Ids 1 .. PRAW_WHY_MAX are the reasons and lock types without a name,
 * id == why; a named one takes the next free id, and with the table full
 * it is kept under its why alone. */
static uint16_t reason_id(struct sv_hist *h, uint8_t why, const char *name)
{
    if (why == 0 || why > PRAW_WHY_MAX)
        return 0;
    if (!*name)
        return why;
    for (unsigned i = PRAW_WHY_MAX; i < h->nreasons; i++)
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
    second_count(h, r->kind, t_ms);
    struct kcount *kc = bucket_kcount(b, kernel, r->kind);
    if (kc->records < UINT32_MAX)
        kc->records++;
    struct sv_hist_key k;
    memset(&k, 0, sizeof k);    /* the padding too: keys are compared whole */
    k.kernel = (uint16_t)kernel;
    k.kind = r->kind;
    k.depth = r->depth;
    k.pid = r->pid;
    k.cpu = cpu;
    k.size = r->kind == PSTR_KIND_HEAP ? r->size : 0;
    k.reason = r->kind == PSTR_KIND_OFFCPU && r->why ? reason_id(h, r->why, r->name) : 0;
    /* A lock's chains are its own: the lock, by type and name, kept as a
     * reason is; its count the waits (Go's contentions), not releases. */
    uint32_t n = 1;
    if (r->kind == PSTR_KIND_LOCK) {
        k.reason = reason_id(h, r->lkind == PSTR_LOCK_SPIN ? PRAW_WHY_SPIN : PRAW_WHY_MUTEX,
                             r->name[0] ? r->name : "?");
        n = r->waits ? r->waits : 1;
    }
    memcpy(k.frames, r->frames, r->depth * sizeof *r->frames);
    /* The fleet's stack beside the kernel's own: its frames, kernel, pid
     * and CPU merged (the ELF kept), found through the own one when that
     * is known. Both are kept or neither, so that the fleet's view and the
     * kernels' agree. */
    int64_t id = stack_id(h, &k, false), fid;
    if (id >= 0) {
        fid = h->stacks[id].fleet;
    } else {
        struct sv_hist_key fk = k;
        fk.kernel = (uint16_t)SV_HIST_FLEET_KEY(h->kmap[kernel]);
        fk.pid = 0;
        fk.cpu = 0;
        fid = stack_id(h, &fk, false);
        if (1u + (unsigned)(fid < 0) > h->nfree) {
            kc->over++;
            h->over++;
            return true;
        }
        fid = fid < 0 ? stack_id(h, &fk, true) : fid;
        id = stack_id(h, &k, true);
        h->stacks[id].fleet = (uint32_t)fid;
    }
    bucket_count(h, &b->own, (uint32_t)id, n, r->weight);
    bucket_count(h, &b->fleet, (uint32_t)fid, n, r->weight);
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
    /* The kernels' own stacks alone: the fleet's count the same records
     * again (a store given both would count them twice). */
    for (size_t i = 0; i < b->own.n; i++) {
        const struct sv_hist_key *k = &h->stacks[b->own.e[i].stack].key;
        if (!sv_hist_key_fleet(k))
            fn(ctx, k, k->kernel, k->kind, b->own.e[i].count, b->own.e[i].weight);
    }
    for (size_t i = 0; i < b->nk; i++)
        if (b->kc[i].over)
            fn(ctx, NULL, b->kc[i].key / SV_HIST_KINDS, b->kc[i].key % SV_HIST_KINDS,
               b->kc[i].over, 0);
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
        n += h->b[i].own.n + h->b[i].fleet.n;
    return n;
}

static bool takes(const struct sv_hist_filter *f, const struct sv_hist_key *k)
{
    return k->kind == f->kind && (f->kernel < 0 || k->kernel == f->kernel) &&
           (f->pid < 0 || k->pid == f->pid) && (f->cpu < 0 || k->cpu == f->cpu);
}

/* The buckets of [from_ms, to_ms) held, as indexes [*lo, *hi). */
static void held_range(const struct sv_hist *h, uint64_t from_ms, uint64_t to_ms,
                       uint64_t *lo, uint64_t *hi)
{
    uint64_t cur = h->now / SV_HIST_BUCKET_MS;
    *lo = from_ms / SV_HIST_BUCKET_MS;
    *hi = (to_ms + SV_HIST_BUCKET_MS - 1) / SV_HIST_BUCKET_MS;   /* exclusive */
    if (*lo < oldest_index(cur))
        *lo = oldest_index(cur);
    if (*hi > cur + 1)
        *hi = cur + 1;
    if (*hi < *lo)
        *hi = *lo;
}

static const struct bucket *bucket_at(const struct sv_hist *h, uint64_t idx)
{
    const struct bucket *b = &h->b[idx % SV_HIST_BUCKETS];
    return b->used && b->index == idx ? b : NULL;
}

/* The selection's sums, one per distinct stack, made in the order the
 * stacks are first met: found through an index on the stacks' ids sized
 * by the range's entries, so that a selection costs its range's entries
 * and never the table's size. */
int sv_hist_select(const struct sv_hist *h, uint64_t from_ms, uint64_t to_ms,
                   const struct sv_hist_filter *f, struct sv_hist_sel *out)
{
    memset(out, 0, sizeof *out);
    if (to_ms <= from_ms)
        return -1;
    uint64_t lo, hi;
    held_range(h, from_ms, to_ms, &lo, &hi);
    out->from_ms = lo * SV_HIST_BUCKET_MS;
    out->to_ms = hi * SV_HIST_BUCKET_MS;
    if (out->to_ms > h->now)
        out->to_ms = h->now > out->from_ms ? h->now : out->from_ms;
    /* The fleet's stacks when nothing narrows it to a kernel, task or
     * CPU: a few hundred entries a bucket, where the kernels' own are
     * hundreds of thousands. */
    bool fleet = f->merged && f->kernel < 0 && f->pid < 0 && f->cpu < 0;
    size_t most = 0;
    for (uint64_t idx = lo; idx < hi; idx++)
        if (bucket_at(h, idx))
            most += fleet ? bucket_at(h, idx)->fleet.n : bucket_at(h, idx)->own.n;
    uint32_t *ids = sp_xcalloc(most + 1, sizeof *ids);
    out->counts = sp_xcalloc(most + 1, sizeof *out->counts);
    out->weights = sp_xcalloc(most + 1, sizeof *out->weights);
    struct index pos = { NULL, 0 };
    index_init(&pos, most);
    for (uint64_t idx = lo; idx < hi; idx++) {
        const struct bucket *b = bucket_at(h, idx);
        if (!b)
            continue;
        for (size_t i = 0; i < b->nk; i++)
            if (b->kc[i].key % SV_HIST_KINDS == f->kind &&
                (f->kernel < 0 || b->kc[i].key / SV_HIST_KINDS == (unsigned)f->kernel))
                out->over += b->kc[i].over;
        const struct elist *l = fleet ? &b->fleet : &b->own;
        for (size_t i = 0; i < l->n; i++) {
            const struct entry *e = &l->e[i];
            if (!fleet && !takes(f, &h->stacks[e->stack].key))
                continue;
            if (fleet && h->stacks[e->stack].key.kind != f->kind)
                continue;
            size_t slot = index_slot(&pos, ids, sizeof *ids, e->stack);
            if (!pos.slot[slot]) {
                ids[out->n] = e->stack;
                pos.slot[slot] = (uint32_t)++out->n;
            }
            size_t at = pos.slot[slot] - 1;
            out->counts[at] += e->count;
            out->weights[at] = out->weights[at] + e->weight < out->weights[at]
                                   ? UINT64_MAX : out->weights[at] + e->weight;
        }
    }
    free(pos.slot);
    out->keys = sp_xcalloc(out->n + 1, sizeof *out->keys);
    for (size_t i = 0; i < out->n; i++) {
        out->keys[i] = &h->stacks[ids[i]].key;
        out->samples += out->counts[i];
        out->weight = out->weight + out->weights[i] < out->weight ? UINT64_MAX
                                                                  : out->weight + out->weights[i];
    }
    free(ids);
    return 0;
}

void sv_hist_sel_free(struct sv_hist_sel *s)
{
    free(s->keys);
    free(s->counts);
    free(s->weights);
    memset(s, 0, sizeof *s);
}

uint32_t sv_hist_rate(const struct sv_hist *h, unsigned kind, uint64_t sec)
{
    if (kind >= SV_HIST_KINDS)
        return 0;
    const struct second *s = &h->secs[sec % SV_HIST_SECONDS];
    if (s->tag != sec + 1 || sec * 1000 < sv_hist_oldest(h))
        return 0;
    return s->n[kind];
}

uint64_t sv_hist_kernel_records(const struct sv_hist *h, unsigned kernel, unsigned kind,
                                uint64_t idx)
{
    const struct bucket *b = bucket_at(h, idx);
    if (!b || kernel >= SV_HIST_KERNELS || kind >= SV_HIST_KINDS)
        return 0;
    const struct kcount *kc = index_find(&b->ki, b->kc, sizeof *b->kc,
                                         kernel * SV_HIST_KINDS + kind);
    return kc ? kc->records : 0;
}

void sv_hist_kernel_sums(const struct sv_hist *h, unsigned kind, uint64_t from_ms,
                         uint64_t to_ms, uint64_t *n, unsigned nk)
{
    uint64_t lo, hi;
    held_range(h, from_ms, to_ms, &lo, &hi);
    for (uint64_t idx = lo; idx < hi; idx++) {
        const struct bucket *b = bucket_at(h, idx);
        for (size_t i = 0; b && i < b->nk; i++)
            if (b->kc[i].key % SV_HIST_KINDS == kind && b->kc[i].key / SV_HIST_KINDS < nk)
                n[b->kc[i].key / SV_HIST_KINDS] += b->kc[i].records;
    }
}
