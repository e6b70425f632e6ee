/* tools/serve/api.c: the JSON API and the downloads of `sonde-prof serve`
 * (tools/serve/api.h).
 * Serve layer: prefix sv_. */
#define _GNU_SOURCE
#include "tools/serve/api.h"
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "tools/output/diff.h"
#include "tools/output/flame_json.h"
#include "tools/output/folded.h"
#include "tools/output/pprof.h"
#include "tools/serve/kernels.h"
#include "tools/serve/persist.h"
#include "tools/serve/query.h"
#include "uapi/profile_raw.h"

#define TYPE_JSON "application/json"

void sv_reply_free(struct sv_reply *r)
{
    if (!r->body_static)
        free(r->body);
    memset(r, 0, sizeof *r);
}

/* What is answered when no JSON could be built (jansson out of memory, or
 * a string it refused): a request must never end serve. */
static char reply_failed[] = "{\"error\":\"the reply could not be built\"}";

static void reply_static_500(struct sv_reply *out)
{
    memset(out, 0, sizeof *out);
    out->status = 500;
    out->type = TYPE_JSON;
    out->body = reply_failed;
    out->len = sizeof reply_failed - 1;
    out->body_static = true;
}

static void reply_json(struct sv_reply *out, unsigned status, json_t *j)
{
    out->status = status;
    out->type = TYPE_JSON;
    out->body = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    if (!out->body) {
        reply_static_500(out);
        return;
    }
    out->len = strlen(out->body);
}

/* s with every byte outside printable ASCII (controls, DEL, and every
 * byte of UTF-8 or not) written \xHH: a message that echoes a request
 * stays valid UTF-8 however the request was cut, and shows what came. */
static void escape_bytes(const char *s, char *out, size_t cap)
{
    size_t n = 0;
    for (; *s && n + 5 <= cap; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c < 0x7f && c != '\\')
            out[n++] = (char)c;
        else
            n += (size_t)snprintf(out + n, cap - n, "\\x%02x", c);
    }
    out[n] = 0;
}

void sv_api_error(struct sv_reply *out, unsigned status, const char *msg)
{
    char safe[4 * SV_API_ERROR_MAX + 1];
    memset(out, 0, sizeof *out);
    escape_bytes(msg, safe, sizeof safe);
    reply_json(out, status, json_pack("{s:s}", "error", safe));
}

void sv_api_errorf(struct sv_reply *out, unsigned status, const char *fmt, ...)
{
    char msg[SV_API_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sv_api_error(out, status, msg);
}


/* ---- the lock ------------------------------------------------------------ */

void sv_lock_take(struct sv_lock *l)
{
    if (!l)
        return;
    atomic_fetch_add(&l->waiting, 1);
    pthread_mutex_lock(&l->m);
    atomic_fetch_sub(&l->waiting, 1);
}

void sv_lock_give(struct sv_lock *l)
{
    if (l)
        pthread_mutex_unlock(&l->m);
}

bool sv_lock_try(struct sv_lock *l)
{
    return !l || pthread_mutex_trylock(&l->m) == 0;
}

bool sv_lock_waiting(struct sv_lock *l)
{
    return l && atomic_load(&l->waiting) > 0;
}

/* ---- arguments ------------------------------------------------------------ */

struct query {
    bool has_range, has_base;
    uint64_t from, to, base_from, base_to;
    struct sv_hist_filter f;
    enum sp_fj_by by;               /* the tree's levels above the frames */
};

int sv_api_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    if (!s || !*s || strlen(s) > 20)
        return -1;
    uint64_t v = 0;
    for (const char *c = s; *c; c++) {
        if (*c < '0' || *c > '9')
            return -1;
        unsigned d = (unsigned)(*c - '0');
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if (v > max)
        return -1;
    *out = v;
    return 0;
}

/* A time argument: 0 .. now. */
static int arg_time(const struct sv_state *st, const struct sv_arg *a, uint64_t *out,
                    struct sv_reply *r)
{
    uint64_t now = sv_hist_now(st->h);
    if (sv_api_parse_u64(a->value, now, out) == 0)
        return 0;
    sv_api_errorf(r, 400, "%s=%.40s out of range (0-%" PRIu64 " ms since the Unix epoch, now %"
                  PRIu64 ")",
                  a->key, a->value, now, now);
    return -1;
}

/* "all" (-1) or a number 0 .. max. */
static int arg_all(const struct sv_arg *a, uint64_t max, int64_t *out, struct sv_reply *r,
                   const char *what)
{
    uint64_t v;
    if (strcmp(a->value, "all") == 0) {
        *out = -1;
        return 0;
    }
    if (sv_api_parse_u64(a->value, max, &v) == 0) {
        *out = (int64_t)v;
        return 0;
    }
    sv_api_errorf(r, 400, "%s=%.40s out of range (%s 0-%" PRIu64 ", or all)", a->key, a->value,
                  what, max);
    return -1;
}

static int arg_kind(const struct sv_arg *a, unsigned *out, struct sv_reply *r)
{
    for (unsigned k = 0; k <= PRAW_KIND_MAX; k++)
        if (strcmp(a->value, praw_kind_name(k)) == 0) {
            *out = k;
            return 0;
        }
    sv_api_errorf(r, 400, "kind=%.40s unknown (known: cpu, offcpu, heap, lock)", a->value);
    return -1;
}

static int arg_by(const struct sv_arg *a, enum sp_fj_by *out, struct sv_reply *r)
{
    static const char *const names[] = { [SP_FJ_BY_KERNEL] = "kernel",
                                         [SP_FJ_BY_TASK] = "task",
                                         [SP_FJ_BY_FRAME] = "frame" };
    for (unsigned b = 0; b < sizeof names / sizeof *names; b++)
        if (strcmp(a->value, names[b]) == 0) {
            *out = (enum sp_fj_by)b;
            return 0;
        }
    sv_api_errorf(r, 400, "by=%.40s unknown (known: kernel, task, frame)", a->value);
    return -1;
}

/* Every argument checked; unknown ones refused. 0, or -1 with r filled. */
static int parse_query(const struct sv_state *st, const struct sv_arg *args, unsigned n,
                       bool diff, struct query *q, struct sv_reply *r)
{
    memset(q, 0, sizeof *q);
    q->f = (struct sv_hist_filter){ -1, -1, -1, PRAW_KIND_CPU, false };
    bool from = false, to = false, bfrom = false, bto = false, by = false;
    for (unsigned i = 0; i < n; i++) {
        const struct sv_arg *a = &args[i];
        const char *k = a->key;
        int64_t v;
        int rc = 0;
        if (!a->value) {
            sv_api_errorf(r, 400, "%.40s: no value (give %.40s=VALUE)", k, k);
            return -1;
        }
        if (strcmp(k, "from") == 0)
            rc = arg_time(st, a, &q->from, r), from = true;
        else if (strcmp(k, "to") == 0)
            rc = arg_time(st, a, &q->to, r), to = true;
        else if (diff && strcmp(k, "base_from") == 0)
            rc = arg_time(st, a, &q->base_from, r), bfrom = true;
        else if (diff && strcmp(k, "base_to") == 0)
            rc = arg_time(st, a, &q->base_to, r), bto = true;
        else if (strcmp(k, "kernel") == 0) {
            if (st->n + st->nforeign == 0) {
                sv_api_errorf(r, 400, "kernel=%.40s: there are no kernels", a->value);
                return -1;
            }
            rc = arg_all(a, st->n + st->nforeign - 1, &v, r, "a kernel's index");
            q->f.kernel = (int)v;
        } else if (strcmp(k, "pid") == 0) {
            rc = arg_all(a, PRAW_PID_MAX, &v, r, "pid");
            q->f.pid = v;
        } else if (strcmp(k, "cpu") == 0) {
            rc = arg_all(a, PRAW_CPU_MAX, &v, r, "cpu");
            q->f.cpu = (int)v;
        } else if (strcmp(k, "kind") == 0)
            rc = arg_kind(a, &q->f.kind, r);
        else if (strcmp(k, "by") == 0)
            rc = arg_by(a, &q->by, r), by = true;
        else {
            sv_api_errorf(r, 400, "unknown argument '%.40s' (known: from, to,%s kernel, pid, cpu, "
                          "kind, by)", k, diff ? " base_from, base_to," : "");
            return -1;
        }
        if (rc)
            return -1;
    }
    if (!by)        /* a frame per kernel while they fit a graph's width */
        q->by = st->n <= SV_API_BY_KERNEL_MAX ? SP_FJ_BY_KERNEL : SP_FJ_BY_FRAME;
    uint64_t now = sv_hist_now(st->h);
    if (!from)
        q->from = now > SV_API_LIVE_MS ? now - SV_API_LIVE_MS : 0;
    if (!to)
        q->to = now;
    if (q->to <= q->from) {
        if (from || to) {
            sv_api_errorf(r, 400, "from=%" PRIu64 " to=%" PRIu64 ": an empty range (from < to "
                          "<= %" PRIu64 ")", q->from, q->to, now);
            return -1;
        }
        q->to = q->from + 1;    /* nothing held yet: an empty answer */
    }
    if (diff && !(bfrom && bto)) {
        sv_api_errorf(r, 400, "a diff needs base_from and base_to (Unix ms, 0-%" PRIu64 ")", now);
        return -1;
    }
    if (diff && q->base_to <= q->base_from) {
        sv_api_errorf(r, 400, "base_from=%" PRIu64 " base_to=%" PRIu64 ": an empty range "
                      "(base_from < base_to <= %" PRIu64 ")", q->base_from, q->base_to, now);
        return -1;
    }
    return 0;
}

/* ---- /api/status, /api/kernels and /api/timeline -------------------------- */

static json_t *store_json(const struct sv_state *st)
{
    if (!st->store)
        return json_null();
    return json_pack("{s:s, s:I, s:o}", "backend", st_backend(st->store), "failed",
                     (json_int_t)st->store_failed, "error", sv_json_str(st->store_error));
}

static void get_status(const struct sv_state *st, struct sv_reply *out)
{
    sv_lock_take(st->lock);
    /* The kinds that have records (the page shows the first), CPU alone
     * before any has. */
    json_t *kinds = json_array();
    unsigned seen = sv_hist_kinds(st->h) ? sv_hist_kinds(st->h) : 1u << PRAW_KIND_CPU;
    for (unsigned k = 0; k <= PRAW_KIND_MAX && !st->tr; k++)
        if (seen & 1u << k)
            json_array_append_new(kinds, json_string(praw_kind_name(k)));
    if (st->tr)                 /* a trace's serve keeps nothing else */
        json_array_append_new(kinds, json_string("trace"));
    /* The kernels counted by state; the list itself is /api/kernels's,
     * whose first page this carries. */
    json_t *states = json_object();
    uint64_t received = 0;
    for (unsigned i = 0; i < st->n; i++) {
        received += st->k[i].received;
        json_t *c = json_object_get(states, st->k[i].state);
        json_object_set_new(states, st->k[i].state,
                            json_integer(c ? json_integer_value(c) + 1 : 1));
    }
    if (st->nforeign)
        json_object_set_new(states, "elsewhere", json_integer(st->nforeign));
    struct sv_kernel_match all = { NULL, NULL };
    json_t *page = sv_kernel_page(st, &all, 0, SV_API_PAGE_DEFAULT);
    uint64_t oldest = sv_hist_oldest(st->h), kept = st->store ? st_oldest(st->store) : 0;
    json_t *o = json_object();
    json_object_set_new(o, "now_ms", sv_json_uint(sv_hist_now(st->h)));
    json_object_set_new(o, "oldest_ms", sv_json_uint(kept && kept < oldest ? kept : oldest));
    json_object_set_new(o, "store", store_json(st));
    json_object_set_new(o, "started_unix_ms", sv_json_uint(st->started_unix_ms));
    json_object_set_new(o, "bucket_ms", json_integer(SV_HIST_BUCKET_MS));
    json_object_set_new(o, "live_ms", json_integer(SV_API_LIVE_MS));
    json_object_set_new(o, "listen", sv_json_str(st->listen ? st->listen : ""));
    json_object_set_new(o, "public", json_boolean(st->public_));
    json_object_set_new(o, "stacks", json_pack("{s:I, s:I, s:I, s:I}",
                        "live", (json_int_t)sv_hist_live_stacks(st->h),
                        "max", (json_int_t)sv_hist_max_stacks(st->h),
                        "entries", (json_int_t)sv_hist_entries(st->h),
                        "over", (json_int_t)sv_hist_over(st->h)));
    json_object_set_new(o, "kinds", kinds);
    json_object_set_new(o, "kernel_count", json_integer(st->n + st->nforeign));
    json_object_set_new(o, "kernel_states", states);
    json_object_set_new(o, "received", sv_json_uint(received));
    json_object_set_new(o, "kernels", json_incref(json_object_get(page, "kernels")));
    json_decref(page);
    sv_lock_give(st->lock);
    reply_json(out, 200, o);
}

static void get_kernels(const struct sv_state *st, const struct sv_arg *args, unsigned n,
                        struct sv_reply *out)
{
    uint64_t offset = 0, limit = SV_API_PAGE_DEFAULT;
    struct sv_kernel_match m = { NULL, NULL };
    for (unsigned i = 0; i < n; i++) {
        const struct sv_arg *a = &args[i];
        const char *v = a->value ? a->value : "";
        if (strcmp(a->key, "offset") == 0 && sv_api_parse_u64(v, SV_HIST_KERNELS, &offset) == 0)
            continue;
        if (strcmp(a->key, "limit") == 0 && sv_api_parse_u64(v, SV_API_PAGE_MAX, &limit) == 0 &&
            limit > 0)
            continue;
        if (strcmp(a->key, "q") == 0 && strlen(v) < HOSTADDR_NAME_MAX) {
            m.q = *v ? v : NULL;
            continue;
        }
        if (strcmp(a->key, "state") == 0 && strlen(v) < 32) {
            m.state = *v ? v : NULL;
            continue;
        }
        if (strcmp(a->key, "offset") == 0)
            sv_api_errorf(out, 400, "offset=%.40s out of range (0-%u)", v, SV_HIST_KERNELS);
        else if (strcmp(a->key, "limit") == 0)
            sv_api_errorf(out, 400, "limit=%.40s out of range (1-%u)", v, SV_API_PAGE_MAX);
        else if (strcmp(a->key, "q") == 0 || strcmp(a->key, "state") == 0)
            sv_api_errorf(out, 400, "%s: too long (a part of a kernel's HOST:PORT, or a state)",
                          a->key);
        else
            sv_api_errorf(out, 400, "unknown argument '%.40s' (known: offset, limit, q, state)",
                          a->key);
        return;
    }
    sv_lock_take(st->lock);
    json_t *o = sv_kernel_page(st, &m, offset, limit);
    sv_lock_give(st->lock);
    reply_json(out, 200, o);
}

/* The kernels of the top lines: kernel alone when the filter names one,
 * else the SV_API_TIMELINE_TOP with the most records in [from, to), the
 * most first. Returns how many, in top[]. */
static unsigned timeline_top(const struct sv_state *st, const struct query *q,
                             unsigned top[SV_API_TIMELINE_TOP])
{
    if (q->f.kernel >= 0) {
        /* Another serve's kernel has no line here: its seconds are in
         * that serve's memory, and the timeline is never the store's. */
        top[0] = (unsigned)q->f.kernel;
        return q->f.kernel < (int)st->n;
    }
    uint64_t *sums = sp_xcalloc(st->n + 1, sizeof *sums);
    sv_hist_kernel_sums(st->h, q->f.kind, q->from, q->to, sums, st->n);
    unsigned nt = 0;
    for (unsigned k = 0; k < st->n; k++) {
        if (!sums[k] || (nt == SV_API_TIMELINE_TOP && sums[k] <= sums[top[nt - 1]]))
            continue;
        top[nt < SV_API_TIMELINE_TOP ? nt++ : nt - 1] = k;
        for (unsigned a = nt - 1; a > 0 && sums[top[a - 1]] < sums[top[a]]; a--) {
            unsigned t = top[a - 1];
            top[a - 1] = top[a];
            top[a] = t;
        }
    }
    free(sums);
    return nt;
}

/* Kernel k's records per second over each bucket of [b0, b1), the
 * current one over its part so far. */
static json_t *kernel_line(const struct sv_state *st, unsigned k, unsigned kind, uint64_t b0,
                           uint64_t b1)
{
    uint64_t now = sv_hist_now(st->h);
    json_t *rate = json_array();
    for (uint64_t b = b0; b < b1; b++) {
        uint64_t ms = SV_HIST_BUCKET_MS;
        if ((b + 1) * SV_HIST_BUCKET_MS > now)
            ms = now > b * SV_HIST_BUCKET_MS ? now - b * SV_HIST_BUCKET_MS : 1;
        uint64_t n = sv_hist_kernel_records(st->h, k, kind, b);
        json_array_append_new(rate, sv_json_uint((n * 1000 + ms / 2) / (ms < 1000 ? 1000 : ms)));
    }
    return json_pack("{s:I, s:o, s:o}", "index", (json_int_t)k, "name", sv_json_str(st->k[k].name),
                     "rate", rate);
}

static void get_timeline(const struct sv_state *st, const struct sv_arg *args, unsigned n,
                         struct sv_reply *out)
{
    struct query q;
    bool from = false;
    for (unsigned i = 0; i < n; i++)
        from |= strcmp(args[i].key, "from") == 0;
    sv_lock_take(st->lock);
    if (parse_query(st, args, n, false, &q, out)) {
        sv_lock_give(st->lock);
        return;
    }
    /* By default the whole history held since serve started (its seconds
     * before are a store's, at bucket grain: the timeline is memory's
     * alone); and never before what it holds, where every second would
     * be a 0 (from=0 after a month: 2.6 million of them per kernel). */
    uint64_t held = sv_hist_oldest(st->h);
    uint64_t start = st->started_unix_ms / SV_HIST_BUCKET_MS * SV_HIST_BUCKET_MS;
    if (!from && start > held)
        held = start;
    if (!from || q.from < held)
        q.from = held;
    if (q.to < q.from)
        q.to = q.from;
    uint64_t s0 = q.from / 1000, s1 = q.to / 1000 + 1;    /* the second of to too */
    json_t *total = json_array();
    for (uint64_t s = s0; s < s1; s++)
        json_array_append_new(total, json_integer(sv_hist_rate(st->h, q.f.kind, s)));
    unsigned top[SV_API_TIMELINE_TOP];
    unsigned nt = timeline_top(st, &q, top);
    uint64_t b0 = q.from / SV_HIST_BUCKET_MS, b1 = q.to / SV_HIST_BUCKET_MS + 1;
    json_t *ks = json_array();
    for (unsigned i = 0; i < nt; i++)
        json_array_append_new(ks, kernel_line(st, top[i], q.f.kind, b0, b1));
    sv_lock_give(st->lock);
    json_t *o = json_pack("{s:I, s:I, s:s, s:o, s:I, s:I, s:o}", "from_s", (json_int_t)s0,
                          "to_s", (json_int_t)s1, "kind", praw_kind_name(q.f.kind),
                          "total", total, "bucket_s", (json_int_t)(SV_HIST_BUCKET_MS / 1000),
                          "from_bucket_s", (json_int_t)(b0 * SV_HIST_BUCKET_MS / 1000),
                          "kernels", ks);
    reply_json(out, 200, o);
}

/* ---- selections ------------------------------------------------------------ */

static json_t *range_json(const struct st_sel *s)
{
    return json_pack("{s:I, s:I, s:I, s:I, s:I}", "from_ms", (json_int_t)s->from_ms,
                     "to_ms", (json_int_t)s->to_ms, "samples", (json_int_t)s->samples,
                     "weight", (json_int_t)(s->weight > INT64_MAX ? INT64_MAX : s->weight),
                     "over", (json_int_t)s->over);
}

/* Heap: the objects the selection's bytes stand for (each chain's
 * weight / size). The stream carries sampled allocations and no frees,
 * so this is what was allocated in the range, never the heap in use. */
static uint64_t heap_objects(const struct sp_profile *p)
{
    uint64_t n = 0;
    for (size_t i = 0; i < p->nchains; i++)
        n = n + p->chains[i].c_objects < n ? UINT64_MAX : n + p->chains[i].c_objects;
    return n;
}

/* The records of [from, to) that the query's filter takes, as a profile
 * of its kind (an empty one when the range holds nothing), not named:
 * under the lock (a store read too: its one connection is the
 * collector's as well). -1 with a 503 in r when the store could not be
 * read (nothing to free then; the lock still held). */
static int select_profile(const struct sv_state *st, const struct query *q, uint64_t from,
                          uint64_t to, bool merged, struct st_sel *sel, struct sp_profile *p,
                          struct sv_reply *r)
{
    struct sv_hist_filter f = q->f;
    f.merged = merged;
    char err[ST_ERR_MAX];
    if (sv_select(st, from, to, &f, sel, err, sizeof err)) {
        st_sel_free(sel);
        sv_api_errorf(r, 503, "the store could not be read: %s", err);
        return -1;
    }
    sv_query_profile(st, sel, q->f.kind, sel->to_ms - sel->from_ms, merged, p);
    return 0;
}

/* A selection's request, its arguments read and its profiles made
 * under the lock; then named without it. -1: a 400 in out. */
static int parse_locked(const struct sv_state *st, const struct sv_arg *args, unsigned n,
                        bool diff, struct query *q, struct sv_reply *out)
{
    sv_lock_take(st->lock);
    int rc = parse_query(st, args, n, diff, q, out);
    if (rc)
        sv_lock_give(st->lock);
    return rc;
}

static void get_flame(const struct sv_state *st, const struct sv_arg *args, unsigned n,
                      struct sv_reply *out)
{
    struct query q;
    if (parse_locked(st, args, n, false, &q, out))
        return;
    struct st_sel sel;
    struct sp_profile p;
    int rc = select_profile(st, &q, q.from, q.to, q.by == SP_FJ_BY_FRAME, &sel, &p, out);
    sv_lock_give(st->lock);
    if (rc)
        return;
    sv_query_name(st, &p);
    json_t *o = range_json(&sel);
    json_object_set_new(o, "kind", json_string(praw_kind_name(q.f.kind)));
    json_object_set_new(o, "unit", json_string(sp_fj_unit(q.f.kind)));
    if (q.f.kind == PRAW_KIND_HEAP) {
        uint64_t objs = heap_objects(&p);
        json_object_set_new(o, "objects", json_integer((json_int_t)(objs > INT64_MAX
                                                                    ? INT64_MAX : objs)));
        json_object_set_new(o, "heap_view", json_string("allocated"));
    }
    json_object_set_new(o, "tree", sv_query_tree(&p, q.by));
    sp_profile_free(&p);
    st_sel_free(&sel);
    reply_json(out, 200, o);
}

static void get_diff(const struct sv_state *st, const struct sv_arg *args, unsigned n,
                     struct sv_reply *out)
{
    struct query q;
    if (parse_locked(st, args, n, true, &q, out))
        return;
    struct st_sel bsel, nsel;
    struct sp_profile bp, np;
    bool merged = q.by == SP_FJ_BY_FRAME;
    if (select_profile(st, &q, q.base_from, q.base_to, merged, &bsel, &bp, out)) {
        sv_lock_give(st->lock);
        return;
    }
    if (select_profile(st, &q, q.from, q.to, merged, &nsel, &np, out)) {
        sv_lock_give(st->lock);
        sp_profile_free(&bp);
        st_sel_free(&bsel);
        return;
    }
    sv_lock_give(st->lock);
    sv_query_name(st, &bp);
    sv_query_name(st, &np);
    struct sp_stacks bs, ns;
    sp_stacks_build(&bp, q.by == SP_FJ_BY_KERNEL, &bs);
    sp_stacks_build(&np, q.by == SP_FJ_BY_KERNEL, &ns);
    struct sp_diff d;
    sp_diff_build(&bs, &ns, &d);
    json_t *o = json_object();
    json_object_set_new(o, "base", range_json(&bsel));
    json_object_set_new(o, "new", range_json(&nsel));
    json_object_set_new(o, "kind", json_string(praw_kind_name(q.f.kind)));
    json_object_set_new(o, "unit", json_string(sp_fj_unit(q.f.kind)));
    json_object_set_new(o, "tree", sv_query_diff_tree(&d));
    sp_diff_free(&d);
    sp_stacks_free(&bs);
    sp_stacks_free(&ns);
    sp_profile_free(&bp);
    sp_profile_free(&np);
    st_sel_free(&bsel);
    st_sel_free(&nsel);
    reply_json(out, 200, o);
}

static void get_download(const struct sv_state *st, const struct sv_arg *args, unsigned n,
                         bool pprof, struct sv_reply *out)
{
    struct query q;
    if (parse_locked(st, args, n, false, &q, out))
        return;
    struct st_sel sel;
    struct sp_profile p;
    /* every kernel apart */
    int rc = select_profile(st, &q, q.from, q.to, false, &sel, &p, out);
    sv_lock_give(st->lock);
    if (rc)
        return;
    sv_query_name(st, &p);
    char *body = NULL, err[SP_ERR_MAX];
    size_t len = 0;
    FILE *f = open_memstream(&body, &len);
    if (!f) {
        sp_profile_free(&p);
        st_sel_free(&sel);
        sv_api_errorf(out, 500, "the %s could not be written: out of memory",
                      pprof ? "pprof" : "folded");
        return;
    }
    rc = pprof ? sp_pprof_write(&p, f, err, sizeof err) : sp_folded_write(&p, true, f);
    fclose(f);
    sp_profile_free(&p);
    st_sel_free(&sel);
    if (rc) {
        free(body);
        sv_api_errorf(out, 500, "the %s could not be written: %s", pprof ? "pprof" : "folded",
                      pprof ? err : "a write error");
        return;
    }
    out->status = 200;
    out->type = pprof ? "application/gzip" : "text/plain; charset=utf-8";
    out->body = body;
    out->len = len;
    out->filename = pprof ? "selection.pb.gz" : "selection.folded";
}

void sv_api_get(const struct sv_state *st, const char *path, const struct sv_arg *args,
                unsigned nargs, struct sv_reply *out)
{
    memset(out, 0, sizeof *out);
    bool none = nargs == 0;
    if ((strcmp(path, "/") == 0 || strcmp(path, "/index.html") == 0) && st->page) {
        if (!none) {
            sv_api_error(out, 400, "the page takes no arguments");
            return;
        }
        out->status = 200;
        out->type = "text/html; charset=utf-8";
        out->body = (char *)st->page;
        out->len = st->page_len;
        out->body_static = true;
    } else if (strcmp(path, "/api/status") == 0) {
        if (!none)
            sv_api_error(out, 400, "/api/status takes no arguments");
        else
            get_status(st, out);
    } else if (strcmp(path, "/api/kernels") == 0) {
        get_kernels(st, args, nargs, out);
    } else if (strcmp(path, "/api/timeline") == 0) {
        get_timeline(st, args, nargs, out);
    } else if (strcmp(path, "/api/flame") == 0) {
        get_flame(st, args, nargs, out);
    } else if (strcmp(path, "/api/diff") == 0) {
        get_diff(st, args, nargs, out);
    } else if (strcmp(path, "/api/trace") == 0) {
        sv_api_trace(st, args, nargs, out);
    } else if (strcmp(path, "/download/selection.pb.gz") == 0) {
        get_download(st, args, nargs, true, out);
    } else if (strcmp(path, "/download/selection.folded") == 0) {
        get_download(st, args, nargs, false, out);
    } else {
        sv_api_errorf(out, 404, "no such page: %.100s (known: /, /api/status, /api/kernels, "
                      "/api/timeline, /api/flame, /api/diff, /api/trace, "
                      "/download/selection.pb.gz, /download/selection.folded)", path);
    }
}
