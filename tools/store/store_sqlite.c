/* tools/store/store_sqlite.c: the store in an SQLite file (libsqlite3),
 * WAL mode: readers never wait for the writer, and a kill -9 loses at
 * most the transaction open then (a bucket is one transaction). Time
 * ranges are the primary key's first column, so a retention's DELETE of
 * everything before a time is one range of the B-tree.
 * Store layer: prefix st_. */
#include "tools/store/store_priv.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#define SQLITE_BUSY_MS 5000         /* another serve's write: waited for this long */

struct lite {
    sqlite3_stmt *stack, *count;    /* the writer's two statements, made once */
};

static int lite_fail(struct st_store *s, const char *what, char *err, size_t len)
{
    st_errf(err, len, "sqlite: %s: %s", what, sqlite3_errmsg(s->db));
    return -1;
}

static int lite_exec(struct st_store *s, const char *sql, char *err, size_t len)
{
    char *msg = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) == SQLITE_OK)
        return 0;
    st_errf(err, len, "sqlite: %s", msg ? msg : sqlite3_errmsg(s->db));
    sqlite3_free(msg);
    return -1;
}

static int lite_bind(sqlite3_stmt *st, const struct st_param *p, unsigned np)
{
    for (unsigned i = 0; i < np; i++) {
        int rc = p[i].text ? sqlite3_bind_text(st, (int)i + 1, p[i].text, -1, SQLITE_STATIC)
                           : sqlite3_bind_int64(st, (int)i + 1, p[i].i);
        if (rc != SQLITE_OK)
            return -1;
    }
    return 0;
}

static int lite_query(struct st_store *s, const char *sql, const struct st_param *p,
                      unsigned np, st_row_fn fn, void *ctx, char *err, size_t len)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return lite_fail(s, "prepare", err, len);
    if (lite_bind(st, p, np)) {
        sqlite3_finalize(st);
        return lite_fail(s, "bind", err, len);
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        unsigned nc = (unsigned)sqlite3_column_count(st);
        const char *v[16];
        size_t l[16];
        if (nc > 16)
            nc = 16;
        for (unsigned c = 0; c < nc; c++) {
            int t = sqlite3_column_type(st, (int)c);
            v[c] = t == SQLITE_NULL ? NULL
                 : t == SQLITE_BLOB ? sqlite3_column_blob(st, (int)c)
                                    : (const char *)sqlite3_column_text(st, (int)c);
            l[c] = (size_t)sqlite3_column_bytes(st, (int)c);
            if (t == SQLITE_BLOB && !v[c])
                v[c] = "";          /* an empty blob is no NULL */
        }
        if (fn && fn(ctx, nc, v, l))
            break;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : lite_fail(s, "step", err, len);
}

static int lite_scan(struct st_store *s, const char *sql, const struct st_param *p,
                     unsigned np, unsigned ncols, void (*fn)(void *ctx, const int64_t *v),
                     void *ctx, char *err, size_t len)
{
    sqlite3_stmt *st;
    int64_t v[8];
    if (ncols > 8 || sqlite3_prepare_v2(s->db, sql, -1, &st, NULL) != SQLITE_OK)
        return lite_fail(s, "prepare", err, len);
    if (lite_bind(st, p, np)) {
        sqlite3_finalize(st);
        return lite_fail(s, "bind", err, len);
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        for (unsigned c = 0; c < ncols; c++)
            v[c] = sqlite3_column_int64(st, (int)c);
        fn(ctx, v);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : lite_fail(s, "step", err, len);
}

static int step_reset(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? 0 : -1;
}

static int lite_write(struct st_store *s, uint64_t start_ms, uint32_t span_ms,
                      const struct st_wrow *w, size_t n, char *err, size_t len)
{
    struct lite *l = s->priv;
    if (lite_exec(s, "BEGIN IMMEDIATE", err, len))
        return -1;
    uint8_t frames[PSTR_FRAMES * 8];
    for (size_t i = 0; i < n; i++) {
        const struct st_key *k = &w[i].r->key;
        if (w[i].new_stack) {
            for (unsigned f = 0; f < k->depth; f++)
                for (unsigned b = 0; b < 8; b++)
                    frames[f * 8 + b] = (uint8_t)(k->frames[f] >> (8 * b));
            sqlite3_bind_int64(l->stack, 1, w[i].stack);
            sqlite3_bind_int64(l->stack, 2, w[i].kernel);
            sqlite3_bind_int(l->stack, 3, k->kind);
            sqlite3_bind_int64(l->stack, 4, k->pid);
            sqlite3_bind_int(l->stack, 5, k->cpu);
            sqlite3_bind_int64(l->stack, 6, w[i].reason);
            sqlite3_bind_int64(l->stack, 7, (int64_t)(k->size > INT64_MAX ? INT64_MAX : k->size));
            sqlite3_bind_int(l->stack, 8, k->depth);
            sqlite3_bind_blob(l->stack, 9, frames, k->depth * 8, SQLITE_TRANSIENT);
            if (step_reset(l->stack))
                goto fail;
        }
        sqlite3_bind_int64(l->count, 1, (int64_t)start_ms);
        sqlite3_bind_int(l->count, 2, (int)span_ms);
        sqlite3_bind_int64(l->count, 3, w[i].kernel);
        sqlite3_bind_int(l->count, 4, k->kind);
        sqlite3_bind_int64(l->count, 5, w[i].stack);
        sqlite3_bind_int64(l->count, 6, (int64_t)(w[i].r->count > INT32_MAX ? INT32_MAX
                                                                             : w[i].r->count));
        sqlite3_bind_int64(l->count, 7, (int64_t)(w[i].r->weight > INT64_MAX / 4
                                                      ? INT64_MAX / 4 : w[i].r->weight));
        if (step_reset(l->count))
            goto fail;
    }
    return lite_exec(s, "COMMIT", err, len);
fail:
    lite_fail(s, "write", err, len);
    char ignored[ST_ERR_MAX];
    lite_exec(s, "ROLLBACK", ignored, sizeof ignored);
    return -1;
}

static int lite_drop_before(struct st_store *s, uint64_t cut_ms, char *err, size_t len)
{
    struct st_param p = { .i = (int64_t)cut_ms };
    return lite_query(s, "DELETE FROM counts WHERE bucket_ms < $1", &p, 1, NULL, NULL, err, len);
}

static void lite_close(struct st_store *s)
{
    struct lite *l = s->priv;
    if (l) {
        sqlite3_finalize(l->stack);
        sqlite3_finalize(l->count);
        free(l);
    }
    sqlite3_close(s->db);
}

static const struct st_ops lite_ops = {
    .name = "sqlite",
    .begin = "BEGIN IMMEDIATE",
    .exec = lite_exec,
    .query = lite_query,
    .scan = lite_scan,
    .write = lite_write,
    .drop_before = lite_drop_before,
    .close = lite_close,
};

int st_sqlite_open(struct st_store *s, const char *path, char *err, size_t len)
{
    sqlite3 *db;
    s->ops = &lite_ops;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
        st_errf(err, len, "%s: %s", path, db ? sqlite3_errmsg(db) : "out of memory");
        sqlite3_close(db);
        return -1;
    }
    s->db = db;
    sqlite3_busy_timeout(db, SQLITE_BUSY_MS);
    struct lite *l = calloc(1, sizeof *l);
    s->priv = l;
    char why[ST_ERR_MAX] = "";
    /* synchronous=NORMAL: in WAL mode a commit survives the process's
     * death (kill -9); only a power cut may take the last ones. */
    if (!l || lite_exec(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL", why, sizeof why) ||
        st_schema(s, "BLOB", "INTEGER PRIMARY KEY", " WITHOUT ROWID", why, sizeof why) ||
        sqlite3_prepare_v2(db, "INSERT INTO stacks (hash, kernel, kind, pid, cpu, reason, size, "
                           "depth, frames) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) "
                           "ON CONFLICT (hash) DO NOTHING", -1, &l->stack, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db, "INSERT INTO counts (bucket_ms, span_ms, kernel, kind, stack, "
                           "count, weight) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7) ON CONFLICT "
                           "(bucket_ms, span_ms, kernel, kind, stack) DO UPDATE SET count = "
                           "count + excluded.count, weight = weight + excluded.weight", -1,
                           &l->count, NULL) != SQLITE_OK) {
        if (!l)
            snprintf(why, sizeof why, "out of memory");
        else if (!*why || strncmp(why, "sqlite", 6) != 0)
            snprintf(why, sizeof why, "sqlite: %s", sqlite3_errmsg(db));
        st_errf(err, len, "%s: %s", path, why);
        lite_close(s);
        return -1;
    }
    return 0;
}
