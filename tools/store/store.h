/* tools/store/store.h: `sonde-prof serve`'s history kept past the
 * process, in SQLite (a file, WAL mode) or PostgreSQL (one database that
 * several serves write and any of them reads), behind one interface and
 * one schema:
 *
 *   kernels (id, name UNIQUE, build_id, source, last_ms)
 *                                                   a kernel by its name
 *                                                   (HOST:PORT), never by
 *                                                   a process's index
 *   reasons (id, why, name, UNIQUE (why, name))     off-CPU reasons' names
 *   stacks  (hash PRIMARY KEY, kernel, kind, pid, cpu, reason, size,
 *            depth, frames)                         each stack once, by a
 *                                                   64-bit hash of all of it
 *   counts  (bucket_ms, span_ms, kernel, kind, stack, count, weight,
 *            PRIMARY KEY (bucket_ms, span_ms, kernel, kind, stack))
 *                                                   counts per bucket;
 *                                                   PostgreSQL: partitioned
 *                                                   by bucket_ms, a day each
 *
 * Times are Unix ms. A bucket is written once, when it closes: 10 s
 * (ST_SPAN_FINE). Retention (st_retain) merges buckets older than an hour
 * into minutes, older than a day into 10 minutes, and drops what is older
 * than the retention: whole partitions in PostgreSQL, one time range of
 * the primary key in SQLite. Records that a writer could not keep (its
 * bound of distinct stacks was full) are written as rows of depth 0 and
 * come back as a selection's `over`.
 *
 * Store layer: prefix st_. Below serve, above ingest. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tools/common/hostaddr.h"
#include "uapi/profile_stream.h"

#define ST_SPAN_FINE    10000u      /* a bucket as serve closes it */
#define ST_SPAN_MINUTE  60000u      /* older than ST_AGE_MINUTE */
#define ST_SPAN_COARSE  600000u     /* older than ST_AGE_COARSE */
#define ST_AGE_MINUTE   3600000ull  /* an hour */
#define ST_AGE_COARSE   86400000ull /* a day */
#define ST_RETAIN_DEFAULT (7ull * 86400000ull)
#define ST_RETAIN_MIN   ST_AGE_MINUTE
#define ST_RETAIN_MAX   (3650ull * 86400000ull)
#define ST_NAME_MAX     HOSTADDR_NAME_MAX   /* a kernel's name (HOST:PORT), its NUL included */
#define ST_ERR_MAX      256
#define ST_DEFAULT_FILE "sonde-serve.db"

/* A stack as stored: its kernel and reason by name. */
struct st_key {
    char kernel[ST_NAME_MAX];
    char reason[PSTR_NAME_MAX + 1]; /* off-CPU: the queue's or mutex's name */
    uint64_t frames[PSTR_FRAMES];
    uint64_t size;                  /* heap: the block's requested size; else 0 */
    uint32_t pid;
    uint16_t cpu;
    uint8_t kind, depth;            /* depth 0: records over a writer's bound */
    uint8_t why;                    /* off-CPU: PSTR_WHY_*; else 0 */
};

struct st_row {
    struct st_key key;
    uint64_t count, weight;
};

/* A kernel as stored: what names its frames. */
struct st_kernel {
    char name[ST_NAME_MAX];
    char build_id[PSTR_BUILD_ID_HEX + 1];
    char source[PSTR_SOURCE_MAX + 1];
    uint64_t last_ms;               /* the end of its newest bucket written; 0 none */
};

/* Which rows a selection takes: kernel NULL, pid or cpu < 0 take all;
 * kernel_ok NULL, or it says which kernels' rows count (called with
 * ctx and a kernel's name). */
struct st_filter {
    const char *kernel;
    int64_t pid;
    int cpu;
    unsigned kind;
    bool (*kernel_ok)(const void *ctx, const char *name);
    const void *ctx;
};

/* A selection: the range its buckets cover, and per stack its counts
 * added over them (keys[i] counted counts[i] records weighing weights[i]). */
struct st_sel {
    uint64_t from_ms, to_ms;
    uint64_t samples, weight, over;
    size_t n, cap;
    struct st_key *keys;
    uint64_t *counts, *weights;
    size_t *idx, icap;              /* keys' index + 1 by hash; 0: free */
};

struct st_store;

/* uri: "postgresql://USER@HOST:PORT/DB" (or "postgres://"), or a path of
 * an SQLite file (made if missing). The schema is made if missing. NULL
 * with err filled when it cannot be opened. */
struct st_store *st_open(const char *uri, char *err, size_t len);
void st_close(struct st_store *s);
/* "sqlite" or "postgresql". */
const char *st_backend(const struct st_store *s);

/* A kernel's identity, before its first bucket (again when it changed). */
int st_kernel_put(struct st_store *s, const struct st_kernel *k, char *err, size_t len);
/* Every kernel stored, in name order: malloc'd, *n of them. last_ms is
 * not st_kernel_put's: each st_write moves it for its kernels. */
struct st_kernel *st_kernels(struct st_store *s, size_t *n, char *err, size_t len);

/* One closed bucket of span_ms from start_ms, in one transaction: its
 * rows added to what is stored for the same (bucket, kernel, kind,
 * stack). 0, or -1 with err filled (nothing written). */
int st_write(struct st_store *s, uint64_t start_ms, uint32_t span_ms,
             const struct st_row *rows, size_t n, char *err, size_t len);

/* Every bucket that overlaps [from_ms, to_ms) and that f takes, added by
 * stack into out (initialised here; st_sel_free frees it). The range
 * answered is the buckets' whole span, from_ms = to_ms when none. */
int st_select(struct st_store *s, uint64_t from_ms, uint64_t to_ms,
              const struct st_filter *f, struct st_sel *out, char *err, size_t len);
/* The oldest bucket's start, or 0 when nothing is stored. */
uint64_t st_oldest(struct st_store *s);

/* At now_ms: buckets older than an hour merged into minutes, older than a
 * day into 10 minutes, older than retain_ms dropped. */
int st_retain(struct st_store *s, uint64_t now_ms, uint64_t retain_ms, char *err, size_t len);

/* ---- selections, apart from any store ---------------------------------- */

void st_sel_init(struct st_sel *s);
void st_sel_free(struct st_sel *s);
/* count records weighing weight of key into s, added to key's if there
 * (s->samples and s->weight too; depth 0: s->over). */
void st_sel_add(struct st_sel *s, const struct st_key *key, uint64_t count, uint64_t weight);
/* The stack's hash: kernel by its name, so the same in every process. */
uint64_t st_key_hash(const struct st_key *k);
bool st_key_eq(const struct st_key *a, const struct st_key *b);

/* --retain: "7d", "36h", "90m" (or a number of ms), ST_RETAIN_MIN to
 * ST_RETAIN_MAX. 0, or -1 with err naming what was wrong and the range. */
int st_parse_duration(const char *arg, uint64_t *ms, char *err, size_t len);
