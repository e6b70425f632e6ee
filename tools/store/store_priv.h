/* tools/store/store_priv.h: what tools/store/store.c shares with its two
 * backends (store_sqlite.c, store_pg.c): one table of operations each,
 * chosen once by st_open; everything else (the schema's use, ids,
 * selections, retention) is store.c's, in SQL both speak.
 * Store layer: prefix st_. */
#pragma once
#include "tools/store/store.h"

/* A parameter: an integer, or a text when text is not NULL. SQL names
 * them $1, $2 ... in order of first use (SQLite numbers "$N" so too). */
struct st_param {
    const char *text;
    int64_t i;
};

/* One row of a query: column c's value is v[c] of len[c] bytes (a blob's
 * raw bytes; NULL for SQL NULL). Returns 0 to go on. */
typedef int (*st_row_fn)(void *ctx, unsigned ncols, const char *const *v, const size_t *len);

/* A count row ready for a backend: ids resolved. */
struct st_wrow {
    int64_t stack, kernel, reason;
    const struct st_row *r;
    bool new_stack;                 /* not known to be stored yet */
};

struct st_ops {
    const char *name;
    const char *begin;              /* a writer's transaction, its lock taken */
    /* SQL without parameters or rows. */
    int (*exec)(struct st_store *s, const char *sql, char *err, size_t len);
    int (*query)(struct st_store *s, const char *sql, const struct st_param *p, unsigned np,
                 st_row_fn fn, void *ctx, char *err, size_t len);
    /* NULL, or every row of integer columns (ncols of them) to fn: the
     * backend that adds a selection up faster here than in SQL. */
    int (*scan)(struct st_store *s, const char *sql, const struct st_param *p, unsigned np,
                unsigned ncols, void (*fn)(void *ctx, const int64_t *v), void *ctx,
                char *err, size_t len);
    /* rows of one bucket (new stacks with them), inside one transaction. */
    int (*write)(struct st_store *s, uint64_t start_ms, uint32_t span_ms,
                 const struct st_wrow *rows, size_t n, char *err, size_t len);
    /* Everything before cut_ms (a multiple of ST_SPAN_COARSE) gone. */
    int (*drop_before)(struct st_store *s, uint64_t cut_ms, char *err, size_t len);
    void (*close)(struct st_store *s);
};

#define ST_KNOWN_MAX (1u << 20)     /* stacks a process remembers as stored */

/* A set of 64-bit values: the stacks known stored, ids by hash. */
struct st_idmap {
    uint64_t *keys;
    int64_t *vals;
    size_t n, cap;
};

struct st_store {
    const struct st_ops *ops;
    void *db;                       /* sqlite3 *, or PGconn * */
    void *priv;                     /* the backend's prepared statements */
    struct st_idmap stacks;         /* stack hash -> 1: known stored */
    struct st_idmap kernels;        /* hash of a kernel's name -> its id */
    struct st_idmap reasons;        /* hash of (why, name) -> its id */
    uint64_t merged_min, merged_coarse; /* retention: merged below these */
};

/* 0, or -1 with err "what: why". */
int st_sqlite_open(struct st_store *s, const char *path, char *err, size_t len);
int st_pg_open(struct st_store *s, const char *uri, char *err, size_t len);

/* The schema's tables common to both, as the backend's dialect writes
 * them: blob "BLOB" or "BYTEA", serial "INTEGER PRIMARY KEY" or
 * "BIGSERIAL PRIMARY KEY", and after counts' columns what partitions it. */
int st_schema(struct st_store *s, const char *blob, const char *serial,
              const char *counts_tail, char *err, size_t len);

void st_errf(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
