/* tools/serve/persist.c: serve's history and its store together
 * (tools/serve/persist.h): each bucket written as it closes, kernels by
 * name, and a selection made of the store's closed buckets and the
 * history's open one.
 * Serve layer: prefix sv_. */
#define _GNU_SOURCE
#include "tools/serve/persist.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *sv_kernel_name(const struct sv_state *st, int64_t i)
{
    if (i < 0)
        return NULL;
    if (i < (int64_t)st->n)
        return st->k[i].name;
    if (i < (int64_t)(st->n + st->nforeign))
        return st->foreign[i - st->n].k.name;
    return NULL;
}

/* The name a fleet stack of map goes by in a selection: the first of
 * this serve's kernels of that ELF. A merged profile reads only its ELF
 * (tools/serve/query.c); a fleet stack is never written to the store. */
static const char *fleet_name(const struct sv_state *st, unsigned map)
{
    for (unsigned i = 0; i < st->n; i++)
        if (st->k[i].map == map)
            return st->k[i].name;
    return NULL;
}

/* A history's key as the store keeps it: its kernel and reason by name. */
static void key_of(const struct sv_state *st, const struct sv_hist_key *hk, unsigned kernel,
                   unsigned kind, struct st_key *k)
{
    memset(k, 0, sizeof *k);
    const char *name = hk && sv_hist_key_fleet(hk) ? fleet_name(st, sv_hist_key_map(hk))
                                                   : sv_kernel_name(st, kernel);
    snprintf(k->kernel, sizeof k->kernel, "%s", name ? name : "");
    k->kind = (uint8_t)kind;
    if (!hk)
        return;                     /* records over the bound: depth 0 */
    k->pid = hk->pid;
    k->cpu = hk->cpu;
    k->size = hk->size;
    k->depth = hk->depth;
    memcpy(k->frames, hk->frames, hk->depth * sizeof *hk->frames);
    const char *reason;
    if (hk->reason && sv_hist_reason(st->h, hk->reason, &k->why, &reason))
        snprintf(k->reason, sizeof k->reason, "%s", reason);
}

struct rows {
    const struct sv_state *st;
    struct st_row *r;
    size_t n, cap;
};

static void add_row(void *ctx, const struct sv_hist_key *key, unsigned kernel, unsigned kind,
                    uint64_t count, uint64_t weight)
{
    struct rows *rs = ctx;
    rs->r = sp_grow(rs->r, &rs->cap, rs->n + 1, sizeof *rs->r);
    struct st_row *r = &rs->r[rs->n++];
    key_of(rs->st, key, kernel, kind, &r->key);
    r->count = count;
    r->weight = weight;
}

struct st_row *sv_persist_rows(const struct sv_state *st, uint64_t index, size_t *n)
{
    struct rows rs = { .st = st };
    sv_hist_bucket_each(st->h, index, add_row, &rs);
    *n = rs.n;
    return rs.r;
}

int sv_persist_bucket(const struct sv_state *st, uint64_t index, char *err, size_t len)
{
    size_t n;
    struct st_row *rows = sv_persist_rows(st, index, &n);
    int rc = st_write(st->store, index * SV_HIST_BUCKET_MS, ST_SPAN_FINE, rows, n, err, len);
    free(rows);
    return rc;
}

/* The history's selection of [from, to) added into out. */
static void from_history(const struct sv_state *st, uint64_t from, uint64_t to,
                         const struct sv_hist_filter *f, struct st_sel *out)
{
    struct sv_hist_sel hs;
    if (sv_hist_select(st->h, from, to, f, &hs))
        return;
    struct st_key k;
    for (size_t i = 0; i < hs.n; i++) {
        key_of(st, hs.keys[i], hs.keys[i]->kernel, hs.keys[i]->kind, &k);
        st_sel_add(out, &k, hs.counts[i], hs.weights[i]);
    }
    out->over += hs.over;
    if (out->from_ms == out->to_ms)
        out->from_ms = hs.from_ms;
    if (hs.to_ms > out->to_ms)
        out->to_ms = hs.to_ms;
    sv_hist_sel_free(&hs);
}

bool sv_kernel_ok(const void *st, const char *name)
{
    return sv_kernel_name_known(st, name);
}

static bool local(const struct sv_state *st, const char *name)
{
    for (unsigned i = 0; i < st->n; i++)
        if (strcmp(st->k[i].name, name) == 0)
            return true;
    return false;
}

/* Whether memory answers [from, to) as the store would: from its oldest
 * bucket on once buckets since serve's start have left it; before that,
 * from serve's start, or from earlier still when what the store held of
 * this serve's kernels at the start ends earlier (nothing then is the
 * store's alone; with no such rows, any from). */
static bool held_whole(const struct sv_state *st, uint64_t from)
{
    uint64_t start = st->started_unix_ms / SV_HIST_BUCKET_MS * SV_HIST_BUCKET_MS;
    uint64_t oldest = sv_hist_oldest(st->h);
    if (oldest > start)
        return from >= oldest;
    return from >= (st->store_prior_ms < start ? st->store_prior_ms : start);
}

int sv_persist_start(struct sv_state *st, char *err, size_t len)
{
    size_t n;
    struct st_kernel *ks = st_kernels(st->store, &n, err, len);
    if (!ks)
        return -1;
    st->store_prior_ms = 0;
    for (size_t i = 0; i < n; i++)
        if (local(st, ks[i].name) && ks[i].last_ms > st->store_prior_ms)
            st->store_prior_ms = ks[i].last_ms;
    free(ks);
    return 0;
}

int sv_select(const struct sv_state *st, uint64_t from, uint64_t to,
              const struct sv_hist_filter *f, struct st_sel *out, char *err, size_t len)
{
    st_sel_init(out);
    if (to <= from) {
        snprintf(err, len, "an empty range");
        return -1;
    }
    out->from_ms = out->to_ms = from;
    /* Hot: a range the history holds whole, from memory alone (the whole
     * fleet's merged flame from its fleet stacks). Other serves' kernels
     * are in the store alone. */
    bool others = st->nforeign && (f->kernel < 0 || f->kernel >= (int)st->n);
    if (!st->store || (held_whole(st, from) && !others)) {
        if (f->kernel < (int)st->n)
            from_history(st, from, to, f, out);
        return 0;
    }
    /* Cold: closed buckets from the store (every serve's kernels), the
     * open one from the history (this serve's alone). */
    uint64_t open = sv_hist_now(st->h) / SV_HIST_BUCKET_MS * SV_HIST_BUCKET_MS;
    if (from < open) {
        /* This serve's kernels and those it lists: a default store's rows
         * of kernels an earlier serve streamed are none of them. */
        struct st_filter sf = { sv_kernel_name(st, f->kernel), f->pid, f->cpu, f->kind,
                                sv_kernel_ok, st };
        if (f->kernel >= 0 && !sf.kernel)
            return 0;
        if (st_select(st->store, from, to < open ? to : open, &sf, out, err, len))
            return -1;
    }
    if (to > open && f->kernel < (int)st->n)
        from_history(st, from > open ? from : open, to, f, out);
    return 0;
}

/* ---- kernels other serves stream ------------------------------------------- */

bool sv_kernel_name_known(const struct sv_state *st, const char *name)
{
    for (unsigned i = 0; i < st->nforeign; i++)
        if (strcmp(st->foreign[i].k.name, name) == 0)
            return true;
    return local(st, name);
}

void sv_foreign_free(struct sv_state *st)
{
    for (unsigned i = 0; i < st->nforeign; i++)
        sp_stream_free(&st->foreign[i].s);
    free(st->foreign);
    st->foreign = NULL;
    st->nforeign = 0;
}

int sv_foreign_load(struct sv_state *st, uint64_t since_ms, char *err, size_t len)
{
    size_t n;
    struct st_kernel *ks = st_kernels(st->store, &n, err, len);
    if (!ks)
        return -1;
    sv_foreign_free(st);
    st->foreign = sp_xcalloc(n ? n : 1, sizeof *st->foreign);
    for (size_t i = 0; i < n && st->nforeign < SV_FOREIGN_MAX; i++) {
        if (local(st, ks[i].name) || ks[i].last_ms < since_ms)
            continue;
        struct sv_foreign *fk = &st->foreign[st->nforeign];
        unsigned m = 0;
        while (m < st->nmaps && strcmp(st->maps[m].pm_build_id, ks[i].build_id) != 0)
            m++;
        if (m == st->nmaps || !ks[i].build_id[0])
            continue;               /* no ELF given names its frames */
        fk->k = ks[i];
        fk->map = m;
        /* Its META as its own serve had it: what names the kernel's
         * profile (build id, source); no task names, pids stand. */
        sp_stream_init(&fk->s, 0);
        fk->s.have_meta = true;
        snprintf(fk->s.meta.build_id, sizeof fk->s.meta.build_id, "%s", ks[i].build_id);
        snprintf(fk->s.meta.source, sizeof fk->s.meta.source, "%s", ks[i].source);
        st->nforeign++;
    }
    free(ks);
    return 0;
}
