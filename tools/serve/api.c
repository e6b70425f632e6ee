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
#include "tools/output/folded.h"
#include "tools/output/pprof.h"
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

static void reply_json(struct sv_reply *out, unsigned status, json_t *j)
{
    out->status = status;
    out->type = TYPE_JSON;
    out->body = json_dumps(j, JSON_COMPACT);
    json_decref(j);
    if (!out->body) {
        fprintf(stderr, "sonde-prof: out of memory\n");
        exit(2);
    }
    out->len = strlen(out->body);
}

void sv_api_error(struct sv_reply *out, unsigned status, const char *msg)
{
    memset(out, 0, sizeof *out);
    reply_json(out, status, json_pack("{s:s}", "error", msg));
}

static void errorf(struct sv_reply *out, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void errorf(struct sv_reply *out, unsigned status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    sv_api_error(out, status, msg);
}

static json_t *jint(uint64_t v)
{
    return json_integer((json_int_t)(v > INT64_MAX ? INT64_MAX : v));
}

/* ---- arguments ------------------------------------------------------------ */

struct query {
    bool has_range, has_base;
    uint64_t from, to, base_from, base_to;
    struct sv_hist_filter f;
};

/* Decimal digits only, no sign, at most max: 0, or -1. */
static int parse_u64(const char *s, uint64_t max, uint64_t *out)
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
    if (parse_u64(a->value, now, out) == 0)
        return 0;
    errorf(r, 400, "%s=%.40s out of range (0-%" PRIu64 " ms since the Unix epoch, now %"
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
    if (parse_u64(a->value, max, &v) == 0) {
        *out = (int64_t)v;
        return 0;
    }
    errorf(r, 400, "%s=%.40s out of range (%s 0-%" PRIu64 ", or all)", a->key, a->value,
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
    errorf(r, 400, "kind=%.40s unknown (known: cpu, offcpu, heap)", a->value);
    return -1;
}

/* Every argument checked; unknown ones refused. 0, or -1 with r filled. */
static int parse_query(const struct sv_state *st, const struct sv_arg *args, unsigned n,
                       bool diff, struct query *q, struct sv_reply *r)
{
    memset(q, 0, sizeof *q);
    q->f = (struct sv_hist_filter){ -1, -1, -1, PRAW_KIND_CPU };
    bool from = false, to = false, bfrom = false, bto = false;
    for (unsigned i = 0; i < n; i++) {
        const struct sv_arg *a = &args[i];
        const char *k = a->key;
        int64_t v;
        int rc = 0;
        if (!a->value) {
            errorf(r, 400, "%.40s: no value (give %.40s=VALUE)", k, k);
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
                errorf(r, 400, "kernel=%.40s: there are no kernels", a->value);
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
        else {
            errorf(r, 400, "unknown argument '%.40s' (known: from, to,%s kernel, pid, cpu, kind)",
                   k, diff ? " base_from, base_to," : "");
            return -1;
        }
        if (rc)
            return -1;
    }
    uint64_t now = sv_hist_now(st->h);
    if (!from)
        q->from = now > SV_API_LIVE_MS ? now - SV_API_LIVE_MS : 0;
    if (!to)
        q->to = now;
    if (q->to <= q->from) {
        if (from || to) {
            errorf(r, 400, "from=%" PRIu64 " to=%" PRIu64 ": an empty range (from < to "
                   "<= %" PRIu64 ")", q->from, q->to, now);
            return -1;
        }
        q->to = q->from + 1;    /* nothing held yet: an empty answer */
    }
    if (diff && !(bfrom && bto)) {
        errorf(r, 400, "a diff needs base_from and base_to (Unix ms, 0-%" PRIu64 ")", now);
        return -1;
    }
    if (diff && q->base_to <= q->base_from) {
        errorf(r, 400, "base_from=%" PRIu64 " base_to=%" PRIu64 ": an empty range "
               "(base_from < base_to <= %" PRIu64 ")", q->base_from, q->base_to, now);
        return -1;
    }
    return 0;
}

/* ---- /api/status and /api/timeline ---------------------------------------- */

static json_t *kernel_json(const struct sv_state *st, unsigned i)
{
    const struct sv_kernel *k = &st->k[i];
    json_t *o = json_pack("{s:i, s:s, s:s, s:o, s:b, s:s, s:o, s:o}",
                          "index", (int)i, "name", k->name, "state", k->state,
                          "last_ms", k->last_ms ? jint(k->last_ms) : json_null(),
                          "authenticated", k->authenticated, "note", k->note,
                          "lost", jint(k->lost), "dropped", jint(k->dropped));
    json_object_set_new(o, "covered_ms", jint(k->covered_ms));
    const struct sp_stream *s = k->stream;
    json_t *tasks = json_array();
    if (s && s->have_meta) {
        json_object_set_new(o, "source", json_string(s->meta.source));
        json_object_set_new(o, "build_id", json_string(s->meta.build_id));
        json_object_set_new(o, "cpus", json_integer(s->ncpus > s->meta.cpus ? s->ncpus
                                                                          : s->meta.cpus));
        for (size_t t = 0; t < s->ntasks; t++)
            json_array_append_new(tasks, json_pack("{s:i, s:s}", "pid",
                                                   (json_int_t)s->tasks[t].pid, "name",
                                                   s->tasks[t].name));
    }
    json_object_set_new(o, "tasks", tasks);
    return o;
}

/* A kernel another serve streams: what the store says of it. */
static json_t *foreign_json(const struct sv_state *st, unsigned i)
{
    const struct sv_foreign *f = &st->foreign[i];
    return json_pack("{s:i, s:s, s:s, s:o, s:b, s:s, s:i, s:i, s:i, s:s, s:s, s:[]}",
                     "index", (int)(st->n + i), "name", f->k.name, "state", "elsewhere",
                     "last_ms", f->k.last_ms ? jint(f->k.last_ms) : json_null(),
                     "authenticated", false, "note",
                     "streamed by another serve into the same store", "lost", 0,
                     "dropped", 0, "covered_ms", 0, "source", f->k.source, "build_id",
                     f->k.build_id, "tasks");
}

static json_t *store_json(const struct sv_state *st)
{
    if (!st->store)
        return json_null();
    return json_pack("{s:s, s:I, s:s}", "backend", st_backend(st->store), "failed",
                     (json_int_t)st->store_failed, "error", st->store_error);
}

static void get_status(const struct sv_state *st, struct sv_reply *out)
{
    /* The kinds that have records (the page shows the first), CPU alone
     * before any has. */
    json_t *kinds = json_array();
    unsigned seen = sv_hist_kinds(st->h) ? sv_hist_kinds(st->h) : 1u << PRAW_KIND_CPU;
    for (unsigned k = 0; k <= PRAW_KIND_MAX; k++)
        if (seen & 1u << k)
            json_array_append_new(kinds, json_string(praw_kind_name(k)));
    json_t *kernels = json_array();
    for (unsigned i = 0; i < st->n; i++)
        json_array_append_new(kernels, kernel_json(st, i));
    for (unsigned i = 0; i < st->nforeign; i++)
        json_array_append_new(kernels, foreign_json(st, i));
    uint64_t oldest = sv_hist_oldest(st->h), kept = st->store ? st_oldest(st->store) : 0;
    json_t *o = json_object();
    json_object_set_new(o, "now_ms", jint(sv_hist_now(st->h)));
    json_object_set_new(o, "oldest_ms", jint(kept && kept < oldest ? kept : oldest));
    json_object_set_new(o, "store", store_json(st));
    json_object_set_new(o, "started_unix_ms", jint(st->started_unix_ms));
    json_object_set_new(o, "bucket_ms", json_integer(SV_HIST_BUCKET_MS));
    json_object_set_new(o, "live_ms", json_integer(SV_API_LIVE_MS));
    json_object_set_new(o, "listen", json_string(st->listen ? st->listen : ""));
    json_object_set_new(o, "public", json_boolean(st->public_));
    json_object_set_new(o, "stacks", json_pack("{s:i, s:i, s:I, s:I}",
                        "live", (json_int_t)sv_hist_live_stacks(st->h),
                        "max", (json_int_t)sv_hist_max_stacks(st->h),
                        "entries", (json_int_t)sv_hist_entries(st->h),
                        "over", (json_int_t)sv_hist_over(st->h)));
    json_object_set_new(o, "kinds", kinds);
    json_object_set_new(o, "kernels", kernels);
    reply_json(out, 200, o);
}

static void get_timeline(const struct sv_state *st, const struct sv_arg *args, unsigned n,
                         struct sv_reply *out)
{
    struct query q;
    bool from = false;
    for (unsigned i = 0; i < n; i++)
        from |= strcmp(args[i].key, "from") == 0;
    if (parse_query(st, args, n, false, &q, out))
        return;
    /* What the history holds, by default since serve started (its seconds
     * before are a store's, at bucket grain). */
    uint64_t held = sv_hist_oldest(st->h);
    uint64_t start = st->started_unix_ms / SV_HIST_BUCKET_MS * SV_HIST_BUCKET_MS;
    if (!from && start > held)
        held = start;
    if (!from || q.from < held)
        q.from = held;
    uint64_t s0 = q.from / 1000, s1 = q.to / 1000 + 1;    /* the second of to too */
    json_t *ks = json_array();
    for (unsigned k = 0; k < st->n; k++) {
        if (q.f.kernel >= 0 && (int)k != q.f.kernel)
            continue;
        json_t *rate = json_array();
        for (uint64_t s = s0; s < s1; s++)
            json_array_append_new(rate, json_integer(sv_hist_rate(st->h, k, q.f.kind, s)));
        json_array_append_new(ks, json_pack("{s:i, s:s, s:o}", "index", (int)k, "name",
                                            st->k[k].name, "rate", rate));
    }
    json_t *o = json_pack("{s:I, s:I, s:s, s:o}", "from_s", (json_int_t)s0, "to_s",
                          (json_int_t)s1, "kind", praw_kind_name(q.f.kind), "kernels", ks);
    reply_json(out, 200, o);
}

/* ---- selections ------------------------------------------------------------ */

static const char *unit_of(unsigned kind)
{
    return kind == PRAW_KIND_OFFCPU ? "ns" : kind == PRAW_KIND_HEAP ? "bytes" : "samples";
}

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
 * of its kind (an empty one when the range holds nothing). -1 with a 503
 * in r when the store could not be read (nothing to free then). */
static int select_profile(const struct sv_state *st, const struct query *q, uint64_t from,
                          uint64_t to, struct st_sel *sel, struct sp_profile *p,
                          struct sv_reply *r)
{
    char err[ST_ERR_MAX];
    if (sv_select(st, from, to, &q->f, sel, err, sizeof err)) {
        st_sel_free(sel);
        errorf(r, 503, "the store could not be read: %s", err);
        return -1;
    }
    sv_query_profile(st, sel, q->f.kind, sel->to_ms - sel->from_ms, p);
    return 0;
}

static void get_flame(const struct sv_state *st, const struct sv_arg *args, unsigned n,
                      struct sv_reply *out)
{
    struct query q;
    if (parse_query(st, args, n, false, &q, out))
        return;
    struct st_sel sel;
    struct sp_profile p;
    if (select_profile(st, &q, q.from, q.to, &sel, &p, out))
        return;
    json_t *o = range_json(&sel);
    json_object_set_new(o, "kind", json_string(praw_kind_name(q.f.kind)));
    json_object_set_new(o, "unit", json_string(unit_of(q.f.kind)));
    if (q.f.kind == PRAW_KIND_HEAP) {
        uint64_t objs = heap_objects(&p);
        json_object_set_new(o, "objects", json_integer((json_int_t)(objs > INT64_MAX
                                                                    ? INT64_MAX : objs)));
        json_object_set_new(o, "heap_view", json_string("allocated"));
    }
    json_object_set_new(o, "tree", sv_query_tree(&p));
    sp_profile_free(&p);
    st_sel_free(&sel);
    reply_json(out, 200, o);
}

static void get_diff(const struct sv_state *st, const struct sv_arg *args, unsigned n,
                     struct sv_reply *out)
{
    struct query q;
    if (parse_query(st, args, n, true, &q, out))
        return;
    struct st_sel bsel, nsel;
    struct sp_profile bp, np;
    if (select_profile(st, &q, q.base_from, q.base_to, &bsel, &bp, out))
        return;
    if (select_profile(st, &q, q.from, q.to, &nsel, &np, out)) {
        sp_profile_free(&bp);
        st_sel_free(&bsel);
        return;
    }
    struct sp_stacks bs, ns;
    sp_stacks_build(&bp, true, &bs);
    sp_stacks_build(&np, true, &ns);
    struct sp_diff d;
    sp_diff_build(&bs, &ns, &d);
    json_t *o = json_object();
    json_object_set_new(o, "base", range_json(&bsel));
    json_object_set_new(o, "new", range_json(&nsel));
    json_object_set_new(o, "kind", json_string(praw_kind_name(q.f.kind)));
    json_object_set_new(o, "unit", json_string(unit_of(q.f.kind)));
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
    if (parse_query(st, args, n, false, &q, out))
        return;
    struct st_sel sel;
    struct sp_profile p;
    if (select_profile(st, &q, q.from, q.to, &sel, &p, out))
        return;
    char *body = NULL, err[SP_ERR_MAX];
    size_t len = 0;
    FILE *f = open_memstream(&body, &len);
    if (!f) {
        fprintf(stderr, "sonde-prof: out of memory\n");
        exit(2);
    }
    int rc = pprof ? sp_pprof_write(&p, f, err, sizeof err) : sp_folded_write(&p, true, f);
    fclose(f);
    sp_profile_free(&p);
    st_sel_free(&sel);
    if (rc) {
        free(body);
        errorf(out, 500, "the %s could not be written: %s", pprof ? "pprof" : "folded",
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
    } else if (strcmp(path, "/api/timeline") == 0) {
        get_timeline(st, args, nargs, out);
    } else if (strcmp(path, "/api/flame") == 0) {
        get_flame(st, args, nargs, out);
    } else if (strcmp(path, "/api/diff") == 0) {
        get_diff(st, args, nargs, out);
    } else if (strcmp(path, "/download/selection.pb.gz") == 0) {
        get_download(st, args, nargs, true, out);
    } else if (strcmp(path, "/download/selection.folded") == 0) {
        get_download(st, args, nargs, false, out);
    } else {
        errorf(out, 404, "no such page: %.100s (known: /, /api/status, /api/timeline, "
               "/api/flame, /api/diff, /download/selection.pb.gz, "
               "/download/selection.folded)", path);
    }
}
