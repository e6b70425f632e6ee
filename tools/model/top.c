/* tools/model/top.c: the sliding window behind `sonde-prof top`.
 * Host pipeline: prefix sp_. */
#define _GNU_SOURCE             /* qsort_r */
#include "tools/model/top.h"
#include "tools/model/model.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_S 1000000000ull

struct func {
    char *name;
    uint64_t self[SP_TOP_KERNELS_MAX], total[SP_TOP_KERNELS_MAX];
};

/* One distinct chain of functions within one second of one kernel. */
struct chain {
    unsigned ch_kernel, ch_depth;
    int ch_fids[SP_TOP_DEPTH_MAX];         /* leaf first */
    uint64_t ch_count;
};

struct bucket {
    bool b_used;
    uint64_t b_sec;
    struct chain *b_chains;
    size_t b_n, b_cap;
    size_t *b_hash;                     /* index + 1 into b_chains; 0: free */
    size_t b_hcap;
};

struct addr_ent {
    bool ae_used, ae_ret;
    unsigned ae_kernel;
    uint64_t ae_addr;
    int ae_fid;
};

struct sp_top_model {
    unsigned window;
    sp_top_name_fn name;
    void *name_ctx;
    struct sp_top_kernel kernels[SP_TOP_KERNELS_MAX];
    unsigned nkernels;
    struct func *funcs;
    size_t nfuncs, capfuncs;
    size_t *fhash, fhcap;               /* fid + 1 by name; 0: free */
    struct addr_ent *ahash;
    size_t ahcap, nah;
    struct bucket *buckets;             /* window of them, by second % window */
    bool started;
    uint64_t start_ns, now_ns;
    uint64_t samples;
    const char *unit;                   /* NULL: "samples" */
};

static uint64_t mix(uint64_t h)
{
    h ^= h >> 31;
    h *= 0x9e3779b97f4a7c15ull;
    return h ^ h >> 29;
}

static uint64_t str_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;       /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

struct sp_top_model *sp_top_new(unsigned window_s, sp_top_name_fn name, void *ctx)
{
    struct sp_top_model *m = sp_xcalloc(1, sizeof *m);
    m->window = window_s;
    m->name = name;
    m->name_ctx = ctx;
    m->buckets = sp_xcalloc(window_s, sizeof *m->buckets);
    return m;
}

void sp_top_free(struct sp_top_model *m)
{
    if (!m)
        return;
    for (unsigned i = 0; i < m->window; i++) {
        free(m->buckets[i].b_chains);
        free(m->buckets[i].b_hash);
    }
    for (size_t i = 0; i < m->nfuncs; i++)
        free(m->funcs[i].name);
    free(m->buckets);
    free(m->funcs);
    free(m->fhash);
    free(m->ahash);
    free(m);
}

static void use_kernel(struct sp_top_model *m, unsigned k)
{
    if (k >= m->nkernels)
        m->nkernels = k + 1;
}

void sp_top_set_kernel_info(struct sp_top_model *m, unsigned k, const char *name,
                         const char *source, uint64_t lost)
{
    if (k >= SP_TOP_KERNELS_MAX)
        return;
    use_kernel(m, k);
    struct sp_top_kernel *tk = &m->kernels[k];
    snprintf(tk->tk_name, sizeof tk->tk_name, "%s", name ? name : "");
    snprintf(tk->tk_source, sizeof tk->tk_source, "%s", source ? source : "");
    tk->tk_lost = lost;
}

/* ---- functions by name, and addresses to functions ----------------------- */

static void fhash_put(size_t *tab, size_t cap, const struct func *funcs,
                      size_t fid)
{
    size_t i = str_hash(funcs[fid].name) & (cap - 1);
    while (tab[i])
        i = (i + 1) & (cap - 1);
    tab[i] = fid + 1;
}

static int intern(struct sp_top_model *m, const char *name)
{
    if (m->fhcap) {
        size_t i = str_hash(name) & (m->fhcap - 1);
        for (; m->fhash[i]; i = (i + 1) & (m->fhcap - 1))
            if (strcmp(m->funcs[m->fhash[i] - 1].name, name) == 0)
                return (int)(m->fhash[i] - 1);
    }
    if ((m->nfuncs + 1) * 2 > m->fhcap) {      /* keep it half empty */
        size_t cap = m->fhcap ? m->fhcap * 2 : 256;
        size_t *tab = sp_xcalloc(cap, sizeof *tab);
        for (size_t f = 0; f < m->nfuncs; f++)
            fhash_put(tab, cap, m->funcs, f);
        free(m->fhash);
        m->fhash = tab;
        m->fhcap = cap;
    }
    m->funcs = sp_grow(m->funcs, &m->capfuncs, m->nfuncs + 1, sizeof *m->funcs);
    struct func *f = &m->funcs[m->nfuncs];
    memset(f, 0, sizeof *f);
    size_t n = strlen(name) + 1;
    f->name = sp_xcalloc(n, 1);
    memcpy(f->name, name, n);
    fhash_put(m->fhash, m->fhcap, m->funcs, m->nfuncs);
    return (int)m->nfuncs++;
}

static size_t addr_slot(unsigned k, uint64_t addr, bool ret, size_t cap)
{
    return mix(addr ^ ((uint64_t)k << 1 | ret) << 56) & (cap - 1);
}

static void ahash_grow(struct sp_top_model *m)
{
    size_t cap = m->ahcap ? m->ahcap * 2 : 1024;
    struct addr_ent *tab = sp_xcalloc(cap, sizeof *tab);
    for (size_t i = 0; i < m->ahcap; i++) {
        struct addr_ent *e = &m->ahash[i];
        if (!e->ae_used)
            continue;
        size_t j = addr_slot(e->ae_kernel, e->ae_addr, e->ae_ret, cap);
        while (tab[j].ae_used)
            j = (j + 1) & (cap - 1);
        tab[j] = *e;
    }
    free(m->ahash);
    m->ahash = tab;
    m->ahcap = cap;
}

/* The function of an address, named once. */
static int addr_fid(struct sp_top_model *m, unsigned k, uint64_t addr, bool ret)
{
    if ((m->nah + 1) * 2 > m->ahcap)
        ahash_grow(m);
    size_t i = addr_slot(k, addr, ret, m->ahcap);
    for (; m->ahash[i].ae_used; i = (i + 1) & (m->ahcap - 1)) {
        struct addr_ent *e = &m->ahash[i];
        if (e->ae_addr == addr && e->ae_kernel == k && e->ae_ret == ret)
            return e->ae_fid;
    }
    int fid = intern(m, m->name(m->name_ctx, k, addr, ret));
    m->ahash[i] = (struct addr_ent){ true, ret, k, addr, fid };
    m->nah++;
    return fid;
}

/* ---- the window ------------------------------------------------------- */

/* Adds (sign 1) or takes away (sign -1) a chain's samples from the
 * running counts: self for the leaf, total once for each distinct
 * function in the chain. */
static void count_chain(struct sp_top_model *m, const struct chain *c, int sign)
{
    uint64_t n = sign > 0 ? c->ch_count : -c->ch_count;   /* mod 2^64 */
    unsigned k = c->ch_kernel;
    m->kernels[k].tk_samples += n;
    m->samples += n;
    m->funcs[c->ch_fids[0]].self[k] += n;
    for (unsigned i = 0; i < c->ch_depth; i++) {
        unsigned j = 0;
        while (j < i && c->ch_fids[j] != c->ch_fids[i])
            j++;
        if (j == i)             /* recursion: counted at its first frame only */
            m->funcs[c->ch_fids[i]].total[k] += n;
    }
}

static void bucket_expire(struct sp_top_model *m, struct bucket *b)
{
    for (size_t i = 0; i < b->b_n; i++)
        count_chain(m, &b->b_chains[i], -1);
    b->b_n = 0;
    if (b->b_hcap)
        memset(b->b_hash, 0, b->b_hcap * sizeof *b->b_hash);
    b->b_used = false;
}

static uint64_t chain_hash(const struct chain *c)
{
    uint64_t h = c->ch_kernel * 131u + c->ch_depth;
    for (unsigned i = 0; i < c->ch_depth; i++)
        h = mix(h + (uint64_t)c->ch_fids[i]);
    return h;
}

static bool chain_eq(const struct chain *a, const struct chain *b)
{
    return a->ch_kernel == b->ch_kernel && a->ch_depth == b->ch_depth &&
           memcmp(a->ch_fids, b->ch_fids, a->ch_depth * sizeof *a->ch_fids) == 0;
}

static void bucket_rehash(struct bucket *b)
{
    size_t cap = b->b_hcap ? b->b_hcap * 2 : 64;
    free(b->b_hash);
    b->b_hash = sp_xcalloc(cap, sizeof *b->b_hash);
    b->b_hcap = cap;
    for (size_t n = 0; n < b->b_n; n++) {
        size_t i = chain_hash(&b->b_chains[n]) & (cap - 1);
        while (b->b_hash[i])
            i = (i + 1) & (cap - 1);
        b->b_hash[i] = n + 1;
    }
}

static void bucket_add(struct sp_top_model *m, struct bucket *b,
                       const struct chain *c)
{
    if ((b->b_n + 1) * 2 > b->b_hcap)
        bucket_rehash(b);
    size_t i = chain_hash(c) & (b->b_hcap - 1);
    for (; b->b_hash[i]; i = (i + 1) & (b->b_hcap - 1)) {
        struct chain *have = &b->b_chains[b->b_hash[i] - 1];
        if (chain_eq(have, c)) {
            have->ch_count += c->ch_count;
            count_chain(m, c, 1);
            return;
        }
    }
    b->b_chains = sp_grow(b->b_chains, &b->b_cap, b->b_n + 1, sizeof *b->b_chains);
    b->b_chains[b->b_n] = *c;
    b->b_hash[i] = ++b->b_n;
    count_chain(m, c, 1);
}

static void start(struct sp_top_model *m, uint64_t t_ns)
{
    if (!m->started) {
        m->started = true;
        m->start_ns = m->now_ns = t_ns;
    }
}

void sp_top_advance(struct sp_top_model *m, uint64_t now_ns)
{
    start(m, now_ns);
    if (now_ns < m->now_ns)
        return;
    m->now_ns = now_ns;
    uint64_t cur = now_ns / NS_PER_S;
    for (unsigned i = 0; i < m->window; i++) {
        struct bucket *b = &m->buckets[i];
        if (b->b_used && b->b_sec + m->window <= cur)
            bucket_expire(m, b);
    }
}

bool sp_top_add_sample(struct sp_top_model *m, unsigned k, uint64_t t_ns,
                    const uint64_t *frames, unsigned depth)
{
    return sp_top_add_weighted(m, k, t_ns, frames, depth, 1);
}

void sp_top_set_unit(struct sp_top_model *m, const char *unit)
{
    m->unit = unit;
}

const char *sp_top_unit(const struct sp_top_model *m)
{
    return m->unit ? m->unit : "samples";
}

bool sp_top_add_weighted(struct sp_top_model *m, unsigned k, uint64_t t_ns,
                         const uint64_t *frames, unsigned depth, uint64_t weight)
{
    if (k >= SP_TOP_KERNELS_MAX || depth == 0 || weight == 0)
        return false;
    start(m, t_ns);
    if (t_ns > m->now_ns)
        sp_top_advance(m, t_ns);
    uint64_t sec = t_ns / NS_PER_S;
    if (sec + m->window <= m->now_ns / NS_PER_S)
        return false;
    use_kernel(m, k);
    struct chain c = { .ch_kernel = k, .ch_count = weight };
    c.ch_depth = depth < SP_TOP_DEPTH_MAX ? depth : SP_TOP_DEPTH_MAX;
    for (unsigned i = 0; i < c.ch_depth; i++)
        c.ch_fids[i] = addr_fid(m, k, frames[i], i > 0);
    struct bucket *b = &m->buckets[sec % m->window];
    if (b->b_used && b->b_sec != sec)
        bucket_expire(m, b);    /* an older second: sp_top_advance left none */
    b->b_used = true;
    b->b_sec = sec;
    bucket_add(m, b, &c);
    return true;
}

/* ---- reading ---------------------------------------------------------- */

unsigned sp_top_window(const struct sp_top_model *m) { return m->window; }
unsigned sp_top_nkernels(const struct sp_top_model *m) { return m->nkernels; }
uint64_t sp_top_samples(const struct sp_top_model *m) { return m->samples; }

const struct sp_top_kernel *sp_top_kernel(const struct sp_top_model *m, unsigned k)
{
    return &m->kernels[k];
}

const char *sp_top_func_name(const struct sp_top_model *m, int fid)
{
    if (fid == SP_TOP_CALLER_ROOT)
        return "(outermost frame)";
    if (fid == SP_TOP_CALLER_CUT)
        return "(beyond the walk's frames)";
    return m->funcs[fid].name;
}

double sp_top_span_s(const struct sp_top_model *m)
{
    uint64_t cur = m->now_ns / NS_PER_S;
    uint64_t from = cur + 1 > m->window ? (cur + 1 - m->window) * NS_PER_S : 0;
    if (m->start_ns > from)
        from = m->start_ns;
    return (double)(m->now_ns - from) / 1e9;
}

static int row_cmp(const void *a, const void *b, void *ctx)
{
    const struct sp_top_row *x = a, *y = b;
    const struct sp_top_model *m = ctx;
    if (x->tr_self != y->tr_self)
        return x->tr_self > y->tr_self ? -1 : 1;
    if (x->tr_total != y->tr_total)
        return x->tr_total > y->tr_total ? -1 : 1;
    return strcmp(m->funcs[x->tr_fid].name, m->funcs[y->tr_fid].name);
}

size_t sp_top_rows(const struct sp_top_model *m, struct sp_top_row *rows, size_t cap)
{
    struct sp_top_row *all = sp_xcalloc(m->nfuncs, sizeof *all);
    size_t n = 0;
    for (size_t f = 0; f < m->nfuncs; f++) {
        struct sp_top_row r = { .tr_fid = (int)f };
        for (unsigned k = 0; k < m->nkernels; k++) {
            r.tr_self += m->funcs[f].self[k];
            r.tr_total += m->funcs[f].total[k];
            r.tr_kself[k] = m->funcs[f].self[k];
        }
        if (r.tr_total)
            all[n++] = r;
    }
    qsort_r(all, n, sizeof *all, row_cmp, (void *)m);
    if (rows && cap)
        memcpy(rows, all, (n < cap ? n : cap) * sizeof *rows);
    free(all);
    return n;
}

static int caller_cmp(const void *a, const void *b, void *ctx)
{
    const struct sp_top_caller *x = a, *y = b;
    const struct sp_top_model *m = ctx;
    if (x->tc_count != y->tc_count)
        return x->tc_count > y->tc_count ? -1 : 1;
    if ((x->tc_fid < 0) != (y->tc_fid < 0))
        return x->tc_fid < 0 ? 1 : -1;
    if (x->tc_fid < 0)
        return y->tc_fid - x->tc_fid;           /* ROOT before CUT */
    return strcmp(m->funcs[x->tc_fid].name, m->funcs[y->tc_fid].name);
}

/* The distinct callers of fid's occurrences in one chain, as indexes
 * into the counts below: a function's fid + 2, ROOT 1, CUT 0. */
static unsigned chain_callers(const struct chain *c, int fid, size_t *out)
{
    unsigned n = 0;
    for (unsigned i = 0; i < c->ch_depth; i++) {
        if (c->ch_fids[i] != fid)
            continue;
        size_t who;
        if (i + 1 < c->ch_depth)
            who = (size_t)c->ch_fids[i + 1] + 2;
        else
            who = c->ch_depth == SP_TOP_DEPTH_MAX ? 0 : 1;
        unsigned j = 0;
        while (j < n && out[j] != who)
            j++;
        if (j == n)
            out[n++] = who;
    }
    return n;
}

size_t sp_top_callers(const struct sp_top_model *m, int fid, struct sp_top_caller *out,
                   size_t cap, uint64_t *samples)
{
    uint64_t *count = sp_xcalloc(m->nfuncs + 2, sizeof *count);
    *samples = 0;
    for (unsigned bi = 0; fid >= 0 && bi < m->window; bi++) {
        const struct bucket *b = &m->buckets[bi];
        for (size_t i = 0; b->b_used && i < b->b_n; i++) {
            size_t who[SP_TOP_DEPTH_MAX];
            unsigned n = chain_callers(&b->b_chains[i], fid, who);
            if (n)
                *samples += b->b_chains[i].ch_count;
            for (unsigned j = 0; j < n; j++)
                count[who[j]] += b->b_chains[i].ch_count;
        }
    }
    struct sp_top_caller *all = sp_xcalloc(m->nfuncs + 2, sizeof *all);
    size_t n = 0;
    for (size_t i = 0; i < m->nfuncs + 2; i++)
        if (count[i])
            all[n++] = (struct sp_top_caller){ (int)i - 2, count[i] };
    qsort_r(all, n, sizeof *all, caller_cmp, (void *)m);
    if (out && cap)
        memcpy(out, all, (n < cap ? n : cap) * sizeof *out);
    free(all);
    free(count);
    return n;
}
