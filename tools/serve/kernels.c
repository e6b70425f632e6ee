/* tools/serve/kernels.c: what /api/status and /api/kernels say of each
 * kernel, this serve's or another's in the same store
 * (tools/serve/kernels.h).
 * Serve layer: prefix sv_. */
#define _GNU_SOURCE
#include "tools/serve/kernels.h"
#include <stdio.h>
#include <string.h>
#include "tools/output/flame_json.h"

json_t *sv_json_uint(uint64_t v)
{
    return json_integer((json_int_t)(v > INT64_MAX ? INT64_MAX : v));
}

/* Kernel i's records per second over the last whole bucket, every kind. */
static uint64_t kernel_rate(const struct sv_state *st, unsigned i)
{
    uint64_t cur = sv_hist_now(st->h) / SV_HIST_BUCKET_MS, n = 0;
    for (unsigned kind = 0; cur && kind < SV_HIST_KINDS; kind++)
        n += sv_hist_kernel_records(st->h, i, kind, cur - 1);
    return n * 1000 / SV_HIST_BUCKET_MS;
}

/* What a kernel or the command line said (a task's name, the stream's
 * source, a note) may be any bytes: each one not UTF-8 a U+FFFD, never a
 * string jansson refuses. */
json_t *sv_json_str(const char *s)
{
    return sp_fj_string(s);
}

static json_t *kernel_json(const struct sv_state *st, unsigned i)
{
    const struct sv_kernel *k = &st->k[i];
    json_t *o = json_pack("{s:I, s:o, s:s, s:o, s:b, s:o, s:o, s:o}",
                          "index", (json_int_t)i, "name", sv_json_str(k->name), "state", k->state,
                          "last_ms", k->last_ms ? sv_json_uint(k->last_ms) : json_null(),
                          "authenticated", k->authenticated, "note", sv_json_str(k->note),
                          "lost", sv_json_uint(k->lost), "dropped", sv_json_uint(k->dropped));
    if (!o)
        return NULL;
    json_object_set_new(o, "covered_ms", sv_json_uint(k->covered_ms));
    json_object_set_new(o, "received", sv_json_uint(k->received));
    json_object_set_new(o, "behind", sv_json_uint(k->behind));
    json_object_set_new(o, "rate", sv_json_uint(kernel_rate(st, i)));
    const struct sp_stream *s = k->stream;
    json_t *tasks = json_array();
    if (s && s->have_meta) {
        json_object_set_new(o, "source", sv_json_str(s->meta.source));
        json_object_set_new(o, "build_id", sv_json_str(s->meta.build_id));
        json_object_set_new(o, "cpus", json_integer(s->ncpus > s->meta.cpus ? s->ncpus
                                                                          : s->meta.cpus));
        for (size_t t = 0; t < s->ntasks; t++)
            json_array_append_new(tasks, json_pack("{s:I, s:o}", "pid",
                                                   (json_int_t)s->tasks[t].pid, "name",
                                                   sv_json_str(s->tasks[t].name)));
    }
    json_object_set_new(o, "tasks", tasks);
    return o;
}

/* A kernel another serve streams: what the store says of it. */
static json_t *foreign_json(const struct sv_state *st, unsigned i)
{
    const struct sv_foreign *f = &st->foreign[i];
    return json_pack("{s:I, s:o, s:s, s:o, s:b, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:o,"
                     " s:o, s:[]}",
                     "index", (json_int_t)(st->n + i), "name", sv_json_str(f->k.name), "state",
                     "elsewhere", "last_ms", f->k.last_ms ? sv_json_uint(f->k.last_ms) : json_null(),
                     "authenticated", false, "note",
                     "streamed by another serve into the same store", "lost", (json_int_t)0,
                     "dropped", (json_int_t)0, "covered_ms", (json_int_t)0, "received",
                     (json_int_t)0, "behind", (json_int_t)0, "rate", (json_int_t)0,
                     "source", sv_json_str(f->k.source), "build_id", sv_json_str(f->k.build_id), "tasks");
}


/* Kernel i's name and state: this serve's (i < n), or another's that
 * writes into the same store ("elsewhere"). */
static bool kernel_matches(const struct sv_state *st, unsigned i, const struct sv_kernel_match *m)
{
    const char *name = i < st->n ? st->k[i].name : st->foreign[i - st->n].k.name;
    const char *state = i < st->n ? st->k[i].state : "elsewhere";
    return (!m->q || strstr(name, m->q)) && (!m->state || strcmp(state, m->state) == 0);
}

/* The page of the kernels m takes, from the offset-th of them, at most
 * limit: {"total", "matched", "offset", "limit", "kernels": [...]}. */
json_t *sv_kernel_page(const struct sv_state *st, const struct sv_kernel_match *m,
                      uint64_t offset, uint64_t limit)
{
    json_t *ks = json_array();
    uint64_t matched = 0;
    for (unsigned i = 0; i < st->n + st->nforeign; i++) {
        if (!kernel_matches(st, i, m))
            continue;
        if (matched >= offset && matched - offset < limit)
            json_array_append_new(ks, i < st->n ? kernel_json(st, i)
                                                : foreign_json(st, i - st->n));
        matched++;
    }
    return json_pack("{s:I, s:I, s:I, s:I, s:o}", "total", (json_int_t)(st->n + st->nforeign),
                     "matched", (json_int_t)matched, "offset", (json_int_t)offset,
                     "limit", (json_int_t)limit, "kernels", ks);
}

