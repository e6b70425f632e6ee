/* tools/store/retain.c: the store's retention (tools/store/store.h):
 * older buckets merged into coarser ones (1 min after an hour, 10 min
 * after a day) and those past --retain dropped, in SQL that SQLite and
 * PostgreSQL both speak; and --retain's DURATION read.
 * Store layer: prefix st_. */
#define _GNU_SOURCE
#include "tools/store/store_priv.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- retention ------------------------------------------------------------------------ */

/* Rows of a span below to_span, older than cut (a multiple of to_span),
 * merged into buckets of to_span. */
static int downsample(struct st_store *s, uint32_t to_span, uint64_t cut, uint64_t lo,
                      char *err, size_t len)
{
    if (cut <= lo)
        return 0;
    char sql[1024];
    snprintf(sql, sizeof sql,
             "INSERT INTO counts (bucket_ms, span_ms, kernel, kind, stack, count, weight) "
             "SELECT bucket_ms / %u * %u, %u, kernel, kind, stack, sum(count), sum(weight) "
             "FROM counts WHERE span_ms < %u AND bucket_ms >= %" PRIu64 " AND bucket_ms < %" PRIu64
             " GROUP BY 1, 3, 4, 5 "
             "ON CONFLICT (bucket_ms, span_ms, kernel, kind, stack) DO UPDATE SET "
             "count = counts.count + excluded.count, weight = counts.weight + excluded.weight;"
             "DELETE FROM counts WHERE span_ms < %u AND bucket_ms >= %" PRIu64 " AND bucket_ms < %"
             PRIu64 ";", to_span, to_span, to_span, to_span, lo, cut, to_span, lo, cut);
    return s->ops->exec(s, sql, err, len);
}

int st_retain(struct st_store *s, uint64_t now_ms, uint64_t retain_ms, char *err, size_t len)
{
    uint64_t cut_min = now_ms > ST_AGE_MINUTE
                           ? (now_ms - ST_AGE_MINUTE) / ST_SPAN_MINUTE * ST_SPAN_MINUTE : 0;
    uint64_t cut_coarse = now_ms > ST_AGE_COARSE
                              ? (now_ms - ST_AGE_COARSE) / ST_SPAN_COARSE * ST_SPAN_COARSE : 0;
    uint64_t cut_drop = now_ms > retain_ms
                            ? (now_ms - retain_ms) / ST_SPAN_COARSE * ST_SPAN_COARSE : 0;
    /* One writer at a time: two serves merging the same rows at once
     * would each add them (the backend's begin takes a lock). */
    if (s->ops->exec(s, s->ops->begin, err, len))
        return -1;
    int rc = downsample(s, ST_SPAN_MINUTE, cut_min, s->merged_min, err, len);
    if (rc == 0)
        rc = downsample(s, ST_SPAN_COARSE, cut_coarse, s->merged_coarse, err, len);
    if (rc == 0 && cut_drop)
        rc = s->ops->drop_before(s, cut_drop, err, len);
    if (rc == 0)
        rc = s->ops->exec(s, "COMMIT", err, len);
    if (rc) {
        char ignored[ST_ERR_MAX];
        s->ops->exec(s, "ROLLBACK", ignored, sizeof ignored);
        return -1;
    }
    /* What this process merged is not scanned again; another's late rows
     * below it wait for the next start (every start scans from 0). */
    s->merged_min = cut_min;
    s->merged_coarse = cut_coarse;
    return 0;
}

/* ---- --retain ---------------------------------------------------------------------------- */

int st_parse_duration(const char *arg, uint64_t *ms, char *err, size_t len)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(arg, &end, 10), scale = 1;
    bool digits = *arg >= '0' && *arg <= '9';
    if (strcmp(end, "d") == 0)
        scale = 86400000ull;
    else if (strcmp(end, "h") == 0)
        scale = 3600000ull;
    else if (strcmp(end, "m") == 0)
        scale = 60000ull;
    else if (strcmp(end, "s") == 0)
        scale = 1000ull;
    else if (*end && strcmp(end, "ms") != 0)
        digits = false;
    if (!digits || errno == ERANGE || v > ST_RETAIN_MAX / scale ||
        v * scale < ST_RETAIN_MIN) {
        st_errf(err, len, "%s out of range (1h to 3650d: \"7d\", \"36h\", \"90m\", or a "
                "number of ms)", arg);
        return -1;
    }
    *ms = v * scale;
    return 0;
}
