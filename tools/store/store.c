/* tools/store/store.c: the store's interface over its two backends
 * (tools/store/store.h): ids of kernels, reasons and stacks, selections,
 * all in SQL that SQLite and PostgreSQL both speak (retention:
 * tools/store/retain.c).
 * Store layer: prefix st_. */
#define _GNU_SOURCE
#include "tools/store/store_priv.h"
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/model/model.h"

void st_errf(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
}

/* ---- hashes and the id maps ---------------------------------------------- */

static uint64_t mix(uint64_t h)
{
    h ^= h >> 31;
    h *= 0x9e3779b97f4a7c15ull;
    return h ^ h >> 29;
}

static uint64_t str_hash(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;      /* FNV-1a's prime */
    return mix(h);
}

/* Over values, never bytes of a struct: the same on every machine, so
 * that serves on several write one stack once. */
uint64_t st_key_hash(const struct st_key *k)
{
    uint64_t h = str_hash(0xcbf29ce484222325ull, k->kernel);
    h = mix(h + ((uint64_t)k->kind << 48 | (uint64_t)k->depth << 40 | (uint64_t)k->why << 32 |
                 k->pid));
    h = mix(h + k->cpu);
    h = mix(h + k->size);
    h = str_hash(h, k->reason);
    for (unsigned i = 0; i < k->depth && i < PSTR_FRAMES; i++)
        h = mix(h + k->frames[i]);
    return h;
}

bool st_key_eq(const struct st_key *a, const struct st_key *b)
{
    return a->kind == b->kind && a->depth == b->depth && a->pid == b->pid &&
           a->cpu == b->cpu && a->size == b->size && a->why == b->why &&
           strcmp(a->kernel, b->kernel) == 0 && strcmp(a->reason, b->reason) == 0 &&
           memcmp(a->frames, b->frames, a->depth * sizeof *a->frames) == 0;
}

/* Open addressing, key 0 stands for itself by a flag-free trick: keys
 * are stored + 1 and a hash of UINT64_MAX is taken as UINT64_MAX - 1. */
static size_t idmap_slot(const struct st_idmap *m, uint64_t key)
{
    size_t i = mix(key) & (m->cap - 1);
    while (m->keys[i] && m->keys[i] != key)
        i = (i + 1) & (m->cap - 1);
    return i;
}

static uint64_t idmap_key(uint64_t key)
{
    return key == UINT64_MAX ? UINT64_MAX : key + 1;
}

static bool idmap_get(const struct st_idmap *m, uint64_t key, int64_t *val)
{
    if (!m->cap)
        return false;
    size_t i = idmap_slot(m, idmap_key(key));
    if (!m->keys[i])
        return false;
    *val = m->vals[i];
    return true;
}

static void idmap_put(struct st_idmap *m, uint64_t key, int64_t val)
{
    if ((m->n + 1) * 2 > m->cap) {
        struct st_idmap old = *m;
        m->cap = old.cap ? old.cap * 2 : 1024;
        m->keys = sp_xcalloc(m->cap, sizeof *m->keys);
        m->vals = sp_xcalloc(m->cap, sizeof *m->vals);
        m->n = 0;
        for (size_t i = 0; i < old.cap; i++)
            if (old.keys[i]) {
                size_t j = idmap_slot(m, old.keys[i]);
                m->keys[j] = old.keys[i];
                m->vals[j] = old.vals[i];
                m->n++;
            }
        free(old.keys);
        free(old.vals);
    }
    size_t i = idmap_slot(m, idmap_key(key));
    m->n += !m->keys[i];
    m->keys[i] = idmap_key(key);
    m->vals[i] = val;
}

static void idmap_free(struct st_idmap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ---- opening, the schema ---------------------------------------------------- */

struct st_store *st_open(const char *uri, char *err, size_t len)
{
    struct st_store *s = sp_xcalloc(1, sizeof *s);
    int rc;
    if (!uri || !*uri) {
        st_errf(err, len, "no store given (a file, or postgresql://USER@HOST:PORT/DB)");
        rc = -1;
    } else if (strncmp(uri, "postgresql://", 13) == 0 || strncmp(uri, "postgres://", 11) == 0)
        rc = st_pg_open(s, uri, err, len);
    else
        rc = st_sqlite_open(s, uri, err, len);
    if (rc) {
        free(s);
        return NULL;
    }
    return s;
}

void st_close(struct st_store *s)
{
    if (!s)
        return;
    s->ops->close(s);
    idmap_free(&s->stacks);
    idmap_free(&s->kernels);
    idmap_free(&s->reasons);
    free(s);
}

const char *st_backend(const struct st_store *s)
{
    return s->ops->name;
}

int st_schema(struct st_store *s, const char *blob, const char *serial,
              const char *counts_tail, char *err, size_t len)
{
    char sql[2048];
    snprintf(sql, sizeof sql,
        "CREATE TABLE IF NOT EXISTS kernels (id %s, name TEXT NOT NULL UNIQUE, "
        "  build_id TEXT NOT NULL DEFAULT '', source TEXT NOT NULL DEFAULT '', "
        "  last_ms BIGINT NOT NULL DEFAULT 0);"
        "CREATE TABLE IF NOT EXISTS reasons (id %s, why INTEGER NOT NULL, "
        "  name TEXT NOT NULL, UNIQUE (why, name));"
        "CREATE TABLE IF NOT EXISTS stacks (hash BIGINT PRIMARY KEY, kernel BIGINT NOT NULL, "
        "  kind INTEGER NOT NULL, pid BIGINT NOT NULL, cpu INTEGER NOT NULL, "
        "  reason BIGINT NOT NULL, size BIGINT NOT NULL, depth INTEGER NOT NULL, "
        "  frames %s NOT NULL);"
        "CREATE TABLE IF NOT EXISTS counts (bucket_ms BIGINT NOT NULL, "
        "  span_ms INTEGER NOT NULL, kernel BIGINT NOT NULL, kind INTEGER NOT NULL, "
        "  stack BIGINT NOT NULL, count BIGINT NOT NULL, weight BIGINT NOT NULL, "
        "  PRIMARY KEY (bucket_ms, span_ms, kernel, kind, stack))%s;",
        serial, serial, blob, counts_tail);
    if (s->ops->exec(s, sql, err, len))
        return -1;
    /* A store made before kernels had last_ms gets it (a serve's writes
     * name it): every kernel's 0, moved by its next bucket. */
    char ignored[ST_ERR_MAX];
    if (s->ops->query(s, "SELECT last_ms FROM kernels LIMIT 0", NULL, 0, NULL, NULL, ignored,
                      sizeof ignored) == 0)
        return 0;
    return s->ops->exec(s, "ALTER TABLE kernels ADD COLUMN last_ms BIGINT NOT NULL DEFAULT 0",
                        err, len);
}

/* ---- values out of rows ------------------------------------------------------ */

static uint64_t col_u64(const char *v, size_t len)
{
    char buf[48];
    if (!v || len == 0 || len >= sizeof buf || *v == '-')
        return 0;
    memcpy(buf, v, len);
    buf[len] = 0;
    errno = 0;
    unsigned long long x = strtoull(buf, NULL, 10);
    if (errno == ERANGE || strchr(buf, '.') || strchr(buf, 'e'))
        return errno == ERANGE ? UINT64_MAX : (uint64_t)strtod(buf, NULL);
    return x;
}

static void col_str(char *dst, size_t cap, const char *v, size_t len)
{
    size_t n = v ? (len < cap - 1 ? len : cap - 1) : 0;
    if (n)
        memcpy(dst, v, n);
    dst[n] = 0;
}

static int row_id(void *ctx, unsigned nc, const char *const *v, const size_t *len)
{
    if (nc >= 1 && v[0])
        *(int64_t *)ctx = (int64_t)col_u64(v[0], len[0]);
    return 0;
}

/* ---- kernels and reasons ------------------------------------------------------ */

static int kernel_id(struct st_store *s, const char *name, bool make, int64_t *id,
                     char *err, size_t len)
{
    uint64_t h = str_hash(1, name);
    if (idmap_get(&s->kernels, h, id))
        return 0;
    struct st_param p = { .text = name };
    if (make && s->ops->query(s, "INSERT INTO kernels (name) VALUES ($1) ON CONFLICT (name) "
                              "DO NOTHING", &p, 1, NULL, NULL, err, len))
        return -1;
    *id = -1;
    if (s->ops->query(s, "SELECT id FROM kernels WHERE name = $1", &p, 1, row_id, id, err, len))
        return -1;
    if (*id >= 0)
        idmap_put(&s->kernels, h, *id);
    return 0;
}

int st_kernel_put(struct st_store *s, const struct st_kernel *k, char *err, size_t len)
{
    struct st_param p[3] = { { .text = k->name }, { .text = k->build_id }, { .text = k->source } };
    return s->ops->query(s, "INSERT INTO kernels (name, build_id, source) VALUES ($1, $2, $3) "
                         "ON CONFLICT (name) DO UPDATE SET build_id = excluded.build_id, "
                         "source = excluded.source", p, 3, NULL, NULL, err, len);
}

struct kernels_ctx {
    struct st_kernel *k;
    size_t n, cap;
};

static int row_kernel(void *ctx, unsigned nc, const char *const *v, const size_t *len)
{
    struct kernels_ctx *c = ctx;
    if (nc < 4)
        return 0;
    c->k = sp_grow(c->k, &c->cap, c->n + 1, sizeof *c->k);
    struct st_kernel *k = &c->k[c->n++];
    col_str(k->name, sizeof k->name, v[0], len[0]);
    col_str(k->build_id, sizeof k->build_id, v[1], len[1]);
    col_str(k->source, sizeof k->source, v[2], len[2]);
    k->last_ms = col_u64(v[3], len[3]);
    return 0;
}

struct st_kernel *st_kernels(struct st_store *s, size_t *n, char *err, size_t len)
{
    struct kernels_ctx c = { 0 };
    *n = 0;
    if (s->ops->query(s, "SELECT name, build_id, source, last_ms FROM kernels ORDER BY name",
                      NULL, 0,
                      row_kernel, &c, err, len)) {
        free(c.k);
        return NULL;
    }
    *n = c.n;
    return c.k ? c.k : sp_xcalloc(1, sizeof *c.k);
}

static int reason_id(struct st_store *s, uint8_t why, const char *name, int64_t *id,
                     char *err, size_t len)
{
    *id = 0;
    if (!why)
        return 0;
    uint64_t h = str_hash(why, name);
    if (idmap_get(&s->reasons, h, id))
        return 0;
    struct st_param p[2] = { { .i = why }, { .text = name } };
    if (s->ops->query(s, "INSERT INTO reasons (why, name) VALUES ($1, $2) ON CONFLICT "
                      "(why, name) DO NOTHING", p, 2, NULL, NULL, err, len) ||
        s->ops->query(s, "SELECT id FROM reasons WHERE why = $1 AND name = $2", p, 2, row_id,
                      id, err, len))
        return -1;
    idmap_put(&s->reasons, h, *id);
    return 0;
}

/* ---- writing ---------------------------------------------------------------------- */

/* The kernels of a bucket's rows wrote up to end_ms: one UPDATE for all. */
static int kernels_seen(struct st_store *s, const struct st_wrow *w, size_t n, uint64_t end_ms,
                        char *err, size_t len)
{
    struct st_idmap seen = { 0 };
    size_t cap = 256, at = 0;
    char *sql = sp_xcalloc(1, cap);
    int64_t one;
    for (size_t i = 0; i < n; i++) {
        if (idmap_get(&seen, (uint64_t)w[i].kernel, &one))
            continue;
        idmap_put(&seen, (uint64_t)w[i].kernel, 1);
        sql = sp_grow(sql, &cap, at + 32, 1);
        at += (size_t)snprintf(sql + at, cap - at, "%s%" PRId64, at ? "," : "", w[i].kernel);
    }
    char *full = sp_xcalloc(1, at + 128);
    snprintf(full, at + 128, "UPDATE kernels SET last_ms = $1 WHERE last_ms < $1 AND id IN (%s)",
             sql);
    struct st_param p = { .i = (int64_t)end_ms };
    int rc = s->ops->query(s, full, &p, 1, NULL, NULL, err, len);
    free(full);
    free(sql);
    idmap_free(&seen);
    return rc;
}

int st_write(struct st_store *s, uint64_t start_ms, uint32_t span_ms,
             const struct st_row *rows, size_t n, char *err, size_t len)
{
    if (span_ms != ST_SPAN_FINE && span_ms != ST_SPAN_MINUTE && span_ms != ST_SPAN_COARSE) {
        st_errf(err, len, "bucket span %u ms: not %u, %u or %u", span_ms, ST_SPAN_FINE,
                ST_SPAN_MINUTE, ST_SPAN_COARSE);
        return -1;
    }
    if (start_ms % span_ms || start_ms > INT64_MAX / 2) {
        st_errf(err, len, "bucket start %" PRIu64 " ms: not a multiple of its span %u ms "
                "below 2^62", start_ms, span_ms);
        return -1;
    }
    if (!n)
        return 0;
    struct st_wrow *w = sp_xcalloc(n, sizeof *w);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        const struct st_key *k = &rows[i].key;
        int64_t known;
        w[i].r = &rows[i];
        w[i].stack = (int64_t)st_key_hash(k);
        w[i].new_stack = !idmap_get(&s->stacks, (uint64_t)w[i].stack, &known);
        rc = kernel_id(s, k->kernel, true, &w[i].kernel, err, len);
        if (rc == 0)
            rc = reason_id(s, k->why, k->reason, &w[i].reason, err, len);
    }
    if (rc == 0)
        rc = s->ops->write(s, start_ms, span_ms, w, n, err, len);
    if (rc == 0)
        rc = kernels_seen(s, w, n, start_ms + span_ms, err, len);
    /* The stacks known stored are a cache: past its bound it starts
     * again, and a stack written twice is written once (ON CONFLICT). */
    if (s->stacks.n > ST_KNOWN_MAX)
        idmap_free(&s->stacks);
    for (size_t i = 0; i < n && rc == 0; i++)
        if (w[i].new_stack)
            idmap_put(&s->stacks, (uint64_t)w[i].stack, 1);
    free(w);
    return rc;
}

/* ---- selections ---------------------------------------------------------------------- */

void st_sel_init(struct st_sel *s)
{
    memset(s, 0, sizeof *s);
}

void st_sel_free(struct st_sel *s)
{
    free(s->keys);
    free(s->counts);
    free(s->weights);
    free(s->idx);
    memset(s, 0, sizeof *s);
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

static void sel_reindex(struct st_sel *s)
{
    free(s->idx);
    s->icap = s->icap ? s->icap * 2 : 256;
    s->idx = sp_xcalloc(s->icap, sizeof *s->idx);
    for (size_t n = 0; n < s->n; n++) {
        size_t i = st_key_hash(&s->keys[n]) & (s->icap - 1);
        while (s->idx[i])
            i = (i + 1) & (s->icap - 1);
        s->idx[i] = n + 1;
    }
}

void st_sel_add(struct st_sel *s, const struct st_key *key, uint64_t count, uint64_t weight)
{
    if (key->depth == 0) {
        s->over = sat_add(s->over, count);
        return;
    }
    s->samples = sat_add(s->samples, count);
    s->weight = sat_add(s->weight, weight);
    if ((s->n + 1) * 2 > s->icap)
        sel_reindex(s);
    size_t i = st_key_hash(key) & (s->icap - 1);
    for (; s->idx[i]; i = (i + 1) & (s->icap - 1)) {
        size_t at = s->idx[i] - 1;
        if (st_key_eq(&s->keys[at], key)) {
            s->counts[at] = sat_add(s->counts[at], count);
            s->weights[at] = sat_add(s->weights[at], weight);
            return;
        }
    }
    if (s->n == s->cap) {       /* the three grow alike */
        size_t kc = s->cap, cc = s->cap, wc = s->cap;
        s->keys = sp_grow(s->keys, &kc, s->n + 1, sizeof *s->keys);
        s->counts = sp_grow(s->counts, &cc, s->n + 1, sizeof *s->counts);
        s->weights = sp_grow(s->weights, &wc, s->n + 1, sizeof *s->weights);
        s->cap = kc;
    }
    s->keys[s->n] = *key;
    s->counts[s->n] = count;
    s->weights[s->n] = weight;
    s->idx[i] = ++s->n;
}

/* A stack's columns, kernel name, kind, pid, cpu, why, reason, size,
 * depth, frames, as a key: false for a row this store did not write. */
static bool key_row(const char *const *v, const size_t *len, struct st_key *k)
{
    memset(k, 0, sizeof *k);
    col_str(k->kernel, sizeof k->kernel, v[0], len[0]);
    k->kind = (uint8_t)col_u64(v[1], len[1]);
    k->pid = (uint32_t)col_u64(v[2], len[2]);
    k->cpu = (uint16_t)col_u64(v[3], len[3]);
    k->why = (uint8_t)col_u64(v[4], len[4]);
    col_str(k->reason, sizeof k->reason, v[5], len[5]);
    k->size = col_u64(v[6], len[6]);
    uint64_t depth = col_u64(v[7], len[7]);
    if (depth > PSTR_FRAMES || !v[8] || len[8] != depth * 8)
        return false;
    k->depth = (uint8_t)depth;
    for (unsigned i = 0; i < k->depth; i++)
        for (unsigned b = 0; b < 8; b++)
            k->frames[i] |= (uint64_t)(uint8_t)v[8][i * 8 + b] << (8 * b);
    return true;
}

/* key's counts over buckets lo .. hi into s, its range widened to them. */
struct take {
    struct st_sel *out;
    const struct st_filter *f;
};

static void sel_take(const struct take *t, const struct st_key *k, uint64_t n, uint64_t w,
                     uint64_t lo, uint64_t hi)
{
    struct st_sel *s = t->out;
    if (t->f->kernel_ok && !t->f->kernel_ok(t->f->ctx, k->kernel))
        return;
    bool first = s->n == 0 && s->samples == 0 && s->over == 0;
    if (first || lo < s->from_ms)
        s->from_ms = lo;
    if (first || hi > s->to_ms)
        s->to_ms = hi;
    st_sel_add(s, k, n, w);
}

/* A stack's columns, then its count, weight, first bucket's start and
 * last bucket's end, added up by the database. */
static int row_stack(void *ctx, unsigned nc, const char *const *v, const size_t *len)
{
    struct st_key k;
    if (nc >= 13 && key_row(v, len, &k))
        sel_take(ctx, &k, col_u64(v[9], len[9]), col_u64(v[10], len[10]),
                 col_u64(v[11], len[11]), col_u64(v[12], len[12]));
    return 0;
}

/* ---- a selection added up here: SQLite sorts to GROUP BY, slower than
 * one pass over the range and a hash (bench/store.py: a day of 1000
 * kernels, 14 s against 2.5 s) ------------------------------------------- */

struct agg {
    struct st_idmap at;             /* stack -> its index + 1 in a */
    struct { int64_t stack; uint64_t n, w, lo, hi; } *a;
    size_t n, cap;
    struct take t;
};

/* stack, count, weight, bucket_ms, span_ms */
static void agg_row(void *ctx, const int64_t *v)
{
    struct agg *g = ctx;
    int64_t at;
    uint64_t lo = (uint64_t)v[3], hi = (uint64_t)(v[3] + v[4]);
    if (!idmap_get(&g->at, (uint64_t)v[0], &at)) {
        g->a = sp_grow(g->a, &g->cap, g->n + 1, sizeof *g->a);
        g->a[g->n].stack = v[0];
        g->a[g->n].n = g->a[g->n].w = 0;
        g->a[g->n].lo = lo;
        g->a[g->n].hi = hi;
        at = (int64_t)g->n++;
        idmap_put(&g->at, (uint64_t)v[0], at);
    }
    g->a[at].n = sat_add(g->a[at].n, (uint64_t)v[1]);
    g->a[at].w = sat_add(g->a[at].w, (uint64_t)v[2]);
    g->a[at].lo = lo < g->a[at].lo ? lo : g->a[at].lo;
    g->a[at].hi = hi > g->a[at].hi ? hi : g->a[at].hi;
}

/* A stack's columns, then its hash: its sums from the pass. */
static int row_agg_stack(void *ctx, unsigned nc, const char *const *v, const size_t *len)
{
    struct agg *g = ctx;
    struct st_key k;
    int64_t at;
    if (nc >= 10 && key_row(v, len, &k) &&
        idmap_get(&g->at, (uint64_t)(int64_t)strtoll(v[9], NULL, 10), &at))
        sel_take(&g->t, &k, g->a[at].n, g->a[at].w, g->a[at].lo, g->a[at].hi);
    return 0;
}

#define AGG_BATCH 500               /* stacks named in one IN (...) */

static int select_here(struct st_store *s, const char *where, const struct st_param *p,
                       unsigned np, const struct st_filter *f, struct st_sel *out,
                       char *err, size_t len)
{
    struct agg g = { .t = { out, f } };
    char sql[1024];
    snprintf(sql, sizeof sql, "SELECT stack, count, weight, bucket_ms, span_ms FROM counts "
             "WHERE %s", where);
    int rc = s->ops->scan(s, sql, p, np, 5, agg_row, &g, err, len);
    struct st_param q[2];
    unsigned nq = 0;
    char more[96] = "";
    int w = 0;
    if (f->pid >= 0) {
        q[nq] = (struct st_param){ .i = f->pid };
        w += snprintf(more + w, sizeof more - (size_t)w, " AND s.pid = $%u", ++nq);
    }
    if (f->cpu >= 0) {
        q[nq] = (struct st_param){ .i = f->cpu };
        snprintf(more + w, sizeof more - (size_t)w, " AND s.cpu = $%u", ++nq);
    }
    char *in = sp_xcalloc(AGG_BATCH, 22), *big = sp_xcalloc(1, AGG_BATCH * 22 + 1024);
    for (size_t i = 0; rc == 0 && i < g.n; i += AGG_BATCH) {
        size_t at = 0;
        for (size_t j = i; j < g.n && j < i + AGG_BATCH; j++)
            at += (size_t)snprintf(in + at, AGG_BATCH * 22 - at, "%s%" PRId64,
                                   j > i ? "," : "", g.a[j].stack);
        snprintf(big, AGG_BATCH * 22 + 1024,
                 "SELECT k.name, s.kind, s.pid, s.cpu, coalesce(r.why, 0), "
                 "coalesce(r.name, ''), s.size, s.depth, s.frames, s.hash FROM stacks s "
                 "JOIN kernels k ON k.id = s.kernel LEFT JOIN reasons r ON r.id = s.reason "
                 "WHERE s.hash IN (%s)%s", in, more);
        rc = s->ops->query(s, big, q, nq, row_agg_stack, &g, err, len);
    }
    free(in);
    free(big);
    idmap_free(&g.at);
    free(g.a);
    return rc;
}

/* The WHERE of a selection over counts: $1 kind, $2 .. $4 the range, then
 * the kernel's id if any. */
static unsigned sel_where(char *buf, size_t cap, const struct st_filter *f, int64_t kid,
                          uint64_t from_ms, uint64_t to_ms, struct st_param *p)
{
    unsigned n = 0;
    p[n++] = (struct st_param){ .i = f->kind };
    p[n++] = (struct st_param){ .i = (int64_t)(from_ms > ST_SPAN_COARSE ? from_ms - ST_SPAN_COARSE
                                                                        : 0) };
    p[n++] = (struct st_param){ .i = (int64_t)to_ms };
    p[n++] = (struct st_param){ .i = (int64_t)from_ms };
    int w = snprintf(buf, cap, "kind = $1 AND bucket_ms > $2 AND bucket_ms < $3 AND "
                     "bucket_ms + span_ms > $4");
    if (f->kernel) {
        p[n] = (struct st_param){ .i = kid };
        w += snprintf(buf + w, cap - (size_t)w, " AND kernel = $%u", ++n);
    }
    return n;
}

int st_select(struct st_store *s, uint64_t from_ms, uint64_t to_ms,
              const struct st_filter *f, struct st_sel *out, char *err, size_t len)
{
    st_sel_init(out);
    out->from_ms = out->to_ms = from_ms;
    if (to_ms <= from_ms || to_ms > INT64_MAX / 2) {
        st_errf(err, len, "range %" PRIu64 "-%" PRIu64 " ms: want from < to < 2^62",
                from_ms, to_ms);
        return -1;
    }
    int64_t kid = -1;
    if (f->kernel && kernel_id(s, f->kernel, false, &kid, err, len))
        return -1;
    if (f->kernel && kid < 0)
        return 0;                   /* a kernel never stored: nothing */
    char where[256], sql[1024];
    struct st_param p[8];
    unsigned np = sel_where(where, sizeof where, f, kid, from_ms, to_ms, p);
    if (s->ops->scan) {
        if (select_here(s, where, p, np, f, out, err, len)) {
            st_sel_free(out);
            return -1;
        }
        return 0;
    }
    char more[128] = "";
    int w = 0;
    if (f->pid >= 0) {
        p[np] = (struct st_param){ .i = f->pid };
        w += snprintf(more + w, sizeof more - (size_t)w, " AND s.pid = $%u", ++np);
    }
    if (f->cpu >= 0) {
        p[np] = (struct st_param){ .i = f->cpu };
        snprintf(more + w, sizeof more - (size_t)w, " AND s.cpu = $%u", ++np);
    }
    snprintf(sql, sizeof sql,
             "SELECT k.name, s.kind, s.pid, s.cpu, coalesce(r.why, 0), coalesce(r.name, ''), "
             "s.size, s.depth, s.frames, a.n, a.w, a.lo, a.hi FROM (SELECT stack, "
             "sum(count) AS n, sum(weight) AS w, min(bucket_ms) AS lo, "
             "max(bucket_ms + span_ms) AS hi FROM counts WHERE %s GROUP BY stack) a "
             "JOIN stacks s ON s.hash = a.stack JOIN kernels k ON k.id = s.kernel "
             "LEFT JOIN reasons r ON r.id = s.reason WHERE s.depth >= 0%s", where, more);
    struct take t = { out, f };
    if (s->ops->query(s, sql, p, np, row_stack, &t, err, len)) {
        st_sel_free(out);
        return -1;
    }
    return 0;
}

uint64_t st_oldest(struct st_store *s)
{
    char err[ST_ERR_MAX];
    int64_t t = 0;
    if (s->ops->query(s, "SELECT min(bucket_ms) FROM counts", NULL, 0, row_id, &t, err,
                      sizeof err))
        return 0;
    return t > 0 ? (uint64_t)t : 0;
}
