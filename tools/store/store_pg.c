/* tools/store/store_pg.c: the store in PostgreSQL (libpq), the database
 * several serves share. counts is partitioned by bucket_ms, a day a
 * partition, so that retention drops whole partitions; a bucket goes in
 * by COPY into a temporary table and one INSERT ... ON CONFLICT from it,
 * in one transaction. What two serves could do at once and collide on
 * (making the schema, a day's partition, merging old buckets) is done
 * under one advisory lock (PG_LOCK).
 * Store layer: prefix st_. */
#define _GNU_SOURCE
#include "tools/store/store_priv.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <libpq-fe.h>
#include "tools/model/model.h"

#define PG_LOCK     535345      /* the store's advisory lock ("SNDE") */
#define PG_DAY_MS   UINT64_C(86400000) /* a partition */
#define PG_BYTEA    17          /* bytea's type oid (pg_type.dat) */

struct pg {
    uint64_t day_made;          /* the last day whose partition this process made + 1 */
    char *buf;                  /* COPY's text */
    size_t cap;
};

static int pg_fail(struct st_store *s, const char *what, char *err, size_t len)
{
    const char *m = PQerrorMessage(s->db);
    size_t n = strlen(m);
    st_errf(err, len, "postgresql: %s: %.*s", what, (int)(n && m[n - 1] == '\n' ? n - 1 : n), m);
    return -1;
}

static int pg_ok(PGresult *r, const char *what, char *err, size_t len)
{
    ExecStatusType st = PQresultStatus(r);
    bool ok = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK || st == PGRES_COPY_IN;
    if (!ok) {
        const char *m = PQresultErrorMessage(r);
        size_t n = strlen(m);
        st_errf(err, len, "postgresql: %s: %.*s", what,
                (int)(n && m[n - 1] == '\n' ? n - 1 : n), m);
    }
    if (st != PGRES_COPY_IN)
        PQclear(r);
    return ok ? 0 : -1;
}

static int pg_exec(struct st_store *s, const char *sql, char *err, size_t len)
{
    PGresult *r = PQexec(s->db, sql);
    if (!r)
        return pg_fail(s, "exec", err, len);
    return pg_ok(r, "exec", err, len);
}

static int pg_query(struct st_store *s, const char *sql, const struct st_param *p,
                    unsigned np, st_row_fn fn, void *ctx, char *err, size_t len)
{
    char num[8][24];
    const char *vals[8];
    if (np > 8) {
        st_errf(err, len, "postgresql: %u parameters (at most 8)", np);
        return -1;
    }
    for (unsigned i = 0; i < np; i++) {
        snprintf(num[i], sizeof num[i], "%" PRId64, p[i].i);
        vals[i] = p[i].text ? p[i].text : num[i];
    }
    PGresult *r = PQexecParams(s->db, sql, (int)np, NULL, vals, NULL, NULL, 0);
    if (!r)
        return pg_fail(s, "query", err, len);
    if (PQresultStatus(r) != PGRES_TUPLES_OK)
        return pg_ok(r, "query", err, len);
    unsigned nc = (unsigned)PQnfields(r);
    if (nc > 16)
        nc = 16;
    for (int row = 0; fn && row < PQntuples(r); row++) {
        const char *v[16];
        size_t l[16];
        unsigned char *un[16] = { NULL };
        for (unsigned c = 0; c < nc; c++) {
            v[c] = PQgetisnull(r, row, (int)c) ? NULL : PQgetvalue(r, row, (int)c);
            l[c] = v[c] ? (size_t)PQgetlength(r, row, (int)c) : 0;
            if (v[c] && PQftype(r, (int)c) == PG_BYTEA) {
                un[c] = PQunescapeBytea((const unsigned char *)v[c], &l[c]);
                v[c] = un[c] ? (const char *)un[c] : "";
                l[c] = un[c] ? l[c] : 0;
            }
        }
        int stop = fn(ctx, nc, v, l);
        for (unsigned c = 0; c < nc; c++)
            PQfreemem(un[c]);
        if (stop)
            break;
    }
    PQclear(r);
    return 0;
}

/* ---- a bucket in ----------------------------------------------------------------- */

static void buf_printf(struct pg *g, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void buf_printf(struct pg *g, size_t *at, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(g->buf + *at, g->cap - *at, fmt, ap);
        va_end(ap);
        if (n >= 0 && (size_t)n < g->cap - *at) {
            *at += (size_t)n;
            return;
        }
        g->buf = sp_grow(g->buf, &g->cap, *at + (size_t)(n > 0 ? n : 0) + 1, 1);
    }
}

static int copy_in(struct st_store *s, const char *table, const char *text, size_t n,
                   char *err, size_t len)
{
    char sql[96];
    snprintf(sql, sizeof sql, "COPY %s FROM STDIN", table);
    PGresult *r = PQexec(s->db, sql);
    if (!r || PQresultStatus(r) != PGRES_COPY_IN) {
        if (!r)
            return pg_fail(s, "copy", err, len);
        pg_ok(r, "copy", err, len);
        return -1;
    }
    PQclear(r);
    if (PQputCopyData(s->db, text, (int)n) != 1 || PQputCopyEnd(s->db, NULL) != 1)
        return pg_fail(s, "copy", err, len);
    int rc = 0;
    while ((r = PQgetResult(s->db)))
        rc |= pg_ok(r, "copy", err, len);
    return rc;
}

/* The day's partition of counts, made under the lock if this process has
 * not made it yet (IF NOT EXISTS alone races with another serve's). */
static int day_partition(struct st_store *s, uint64_t start_ms, char *err, size_t len)
{
    struct pg *g = s->priv;
    uint64_t day = start_ms / PG_DAY_MS;
    if (g->day_made == day + 1)
        return 0;
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT pg_advisory_xact_lock(%d); CREATE TABLE IF NOT EXISTS "
             "counts_d%" PRIu64 " PARTITION OF counts FOR VALUES FROM (%" PRIu64 ") TO (%"
             PRIu64 ")", PG_LOCK, day, day * PG_DAY_MS, (day + 1) * PG_DAY_MS);
    if (pg_exec(s, sql, err, len))
        return -1;
    g->day_made = day + 1;
    return 0;
}

static int pg_write_rows(struct st_store *s, uint64_t start_ms, uint32_t span_ms,
                         const struct st_wrow *w, size_t n, char *err, size_t len)
{
    struct pg *g = s->priv;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        const struct st_key *k = &w[i].r->key;
        if (!w[i].new_stack)
            continue;
        buf_printf(g, &at, "%" PRId64 "\t%" PRId64 "\t%u\t%u\t%u\t%" PRId64 "\t%" PRIu64
                   "\t%u\t\\\\x", w[i].stack, w[i].kernel, k->kind, k->pid, k->cpu,
                   w[i].reason, k->size > INT64_MAX ? (uint64_t)INT64_MAX : k->size, k->depth);
        for (unsigned f = 0; f < k->depth; f++)
            for (unsigned b = 0; b < 8; b++)
                buf_printf(g, &at, "%02x", (unsigned)(uint8_t)(k->frames[f] >> (8 * b)));
        buf_printf(g, &at, "\n");
    }
    if (at && (copy_in(s, "st_stacks_in", g->buf, at, err, len) ||
               pg_exec(s, "INSERT INTO stacks SELECT * FROM st_stacks_in ON CONFLICT (hash) "
                       "DO NOTHING", err, len)))
        return -1;
    at = 0;
    for (size_t i = 0; i < n; i++)
        buf_printf(g, &at, "%" PRIu64 "\t%u\t%" PRId64 "\t%u\t%" PRId64 "\t%" PRIu64 "\t%"
                   PRIu64 "\n", start_ms, span_ms, w[i].kernel, w[i].r->key.kind, w[i].stack,
                   w[i].r->count > INT32_MAX ? (uint64_t)INT32_MAX : w[i].r->count,
                   w[i].r->weight > INT64_MAX / 4 ? (uint64_t)INT64_MAX / 4 : w[i].r->weight);
    if (copy_in(s, "st_counts_in", g->buf, at, err, len))
        return -1;
    return pg_exec(s, "INSERT INTO counts SELECT * FROM st_counts_in ON CONFLICT (bucket_ms, "
                   "span_ms, kernel, kind, stack) DO UPDATE SET count = counts.count + "
                   "excluded.count, weight = counts.weight + excluded.weight", err, len);
}

static int pg_write(struct st_store *s, uint64_t start_ms, uint32_t span_ms,
                    const struct st_wrow *w, size_t n, char *err, size_t len)
{
    if (pg_exec(s, "BEGIN", err, len))
        return -1;
    if (day_partition(s, start_ms, err, len) ||
        pg_write_rows(s, start_ms, span_ms, w, n, err, len) ||
        pg_exec(s, "COMMIT", err, len)) {
        char ignored[ST_ERR_MAX];
        pg_exec(s, "ROLLBACK", ignored, sizeof ignored);
        ((struct pg *)s->priv)->day_made = 0;   /* the partition may be rolled back too */
        return -1;
    }
    return 0;
}

/* ---- retention --------------------------------------------------------------------- */

struct drop_ctx {
    uint64_t cut;
    char names[64][64];
    unsigned n;
};

static int row_partition(void *ctx, unsigned nc, const char *const *v, const size_t *len)
{
    struct drop_ctx *d = ctx;
    char name[64];
    uint64_t day;
    if (nc < 1 || !v[0] || len[0] >= sizeof name)
        return 0;
    memcpy(name, v[0], len[0]);
    name[len[0]] = 0;
    if (sscanf(name, "counts_d%" SCNu64, &day) == 1 && (day + 1) * PG_DAY_MS <= d->cut &&
        d->n < 64)
        snprintf(d->names[d->n++], sizeof d->names[0], "%s", name);
    return 0;
}

static int pg_drop_before(struct st_store *s, uint64_t cut_ms, char *err, size_t len)
{
    struct drop_ctx d = { .cut = cut_ms };
    if (pg_query(s, "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
                 "WHERE i.inhparent = 'counts'::regclass", NULL, 0, row_partition, &d, err, len))
        return -1;
    for (unsigned i = 0; i < d.n; i++) {
        char sql[96];
        snprintf(sql, sizeof sql, "DROP TABLE %s", d.names[i]);
        if (pg_exec(s, sql, err, len))
            return -1;
    }
    struct st_param p = { .i = (int64_t)cut_ms };
    return pg_query(s, "DELETE FROM counts WHERE bucket_ms < $1", &p, 1, NULL, NULL, err, len);
}

static void pg_close(struct st_store *s)
{
    struct pg *g = s->priv;
    if (g)
        free(g->buf);
    free(g);
    PQfinish(s->db);
}

static const struct st_ops pg_ops = {
    .name = "postgresql",
    .begin = "BEGIN; SELECT pg_advisory_xact_lock(535345)",
    .exec = pg_exec,
    .query = pg_query,
    .write = pg_write,
    .drop_before = pg_drop_before,
    .close = pg_close,
};
_Static_assert(PG_LOCK == 535345, "pg_ops.begin names PG_LOCK");

int st_pg_open(struct st_store *s, const char *uri, char *err, size_t len)
{
    s->ops = &pg_ops;
    s->db = PQconnectdb(uri);
    s->priv = sp_xcalloc(1, sizeof(struct pg));
    char why[ST_ERR_MAX] = "", sql[128];
    if (!s->db || PQstatus(s->db) != CONNECTION_OK) {
        pg_fail(s, "connect", why, sizeof why);
        st_errf(err, len, "%s: %s", uri, why);
        pg_close(s);
        return -1;
    }
    snprintf(sql, sizeof sql, "SET client_min_messages = warning; SELECT pg_advisory_lock(%d)",
             PG_LOCK);
    int rc = pg_exec(s, sql, why, sizeof why);
    if (rc == 0)
        rc = st_schema(s, "BYTEA", "BIGSERIAL PRIMARY KEY", " PARTITION BY RANGE (bucket_ms)",
                       why, sizeof why);
    snprintf(sql, sizeof sql, "SELECT pg_advisory_unlock(%d)", PG_LOCK);
    if (rc == 0)
        rc = pg_exec(s, sql, why, sizeof why);
    if (rc == 0)
        rc = pg_exec(s, "CREATE TEMP TABLE st_stacks_in (LIKE stacks) ON COMMIT DELETE ROWS; "
                     "CREATE TEMP TABLE st_counts_in (LIKE counts) ON COMMIT DELETE ROWS",
                     why, sizeof why);
    if (rc) {
        st_errf(err, len, "%s: %s", uri, why);
        pg_close(s);
        return -1;
    }
    return 0;
}
