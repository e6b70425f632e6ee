/* tools/serve/query.c: selections as profiles and flame-graph trees
 * (tools/serve/query.h): the records counted (tools/ingest/agg.c) and put
 * in the model as its own types, the trees built as the HTML page's are
 * (tools/output/flame_json.c).
 * Serve layer: prefix sv_. */
#define _GNU_SOURCE
#include "tools/serve/query.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/ingest/agg.h"
#include "tools/output/flame_json.h"

/* A kernel's stream (its META and task names), ELF and drops: this
 * serve's, or one another serve wrote into the store. False when it is
 * neither, or has no META yet. */
static bool kernel_source(const struct sv_state *st, const char *name,
                          const struct sp_stream **s, unsigned *map, uint64_t *dropped)
{
    for (unsigned k = 0; k < st->n; k++)
        if (strcmp(st->k[k].name, name) == 0) {
            *s = st->k[k].stream;
            *map = st->k[k].map;
            *dropped = st->k[k].dropped;
            return *s != NULL;
        }
    for (unsigned k = 0; k < st->nforeign; k++)
        if (strcmp(st->foreign[k].k.name, name) == 0) {
            *s = &st->foreign[k].s;
            *map = st->foreign[k].map;
            *dropped = 0;
            return true;
        }
    return false;
}

/* Stack i of the selection into a, as its record (pid 0 and CPU 0 when
 * merged: the fleet's frames alone). */
static void add_stack(const struct st_sel *sel, size_t i, bool merged, struct sp_agg *a)
{
    const struct st_key *key = &sel->keys[i];
    struct pstr_record r;
    memset(&r, 0, sizeof r);
    r.pid = merged ? 0 : key->pid;
    r.depth = key->depth;
    r.kind = key->kind;
    r.size = key->size;         /* heap: the chain's objects, weight / size */
    r.why = key->why;
    snprintf(r.name, sizeof r.name, "%s", key->reason);
    r.waker = PSTR_WAKER_NONE;
    /* A lock's: its type from the why it was kept under; its count is its
     * waits already (tools/serve/hist.c). */
    if (key->kind == PSTR_KIND_LOCK) {
        r.lkind = key->why == PRAW_WHY_SPIN ? PSTR_LOCK_SPIN : PSTR_LOCK_MUTEX;
        r.waits = 1;
    }
    memcpy(r.frames, key->frames, sizeof r.frames);
    sp_agg_add_n(a, merged ? 0 : key->cpu, &r, sel->counts[i], sel->weights[i]);
}

static uint32_t clamp_ms(uint64_t ms)
{
    return ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
}

/* by=frame: one input per ELF (labelled "fleet", with the META of the
 * first kernel of that ELF that has one), the stacks of every kernel of
 * it merged (aggs[m]: the groups' records added by the caller). */
static void add_fleet(const struct sv_state *st, struct sp_agg *aggs,
                      const struct sp_stream **metas, unsigned kind, uint64_t ms,
                      struct sp_profile *p)
{
    for (unsigned m = 0; m < st->nmaps; m++) {
        const struct sp_stream *meta = NULL;
        uint64_t drops = 0;
        for (unsigned k = 0; k < st->n; k++)
            if (st->k[k].map == m && st->k[k].stream && st->k[k].stream->have_meta) {
                meta = meta ? meta : st->k[k].stream;
                drops += st->k[k].dropped;
            }
        if (!meta)
            meta = metas[m];        /* only other serves' kernels have it */
        if (aggs[m].n && meta)
            (void)sp_agg_profile(&aggs[m], meta, kind, clamp_ms(ms), drops, p, "fleet", m);
        sp_agg_free(&aggs[m]);
    }
}

static int by_kernel(const void *a, const void *b, void *ctx)
{
    const struct st_sel *sel = ctx;
    const size_t *x = a, *y = b;
    int c = strcmp(sel->keys[*x].kernel, sel->keys[*y].kernel);
    return c ? c : (*x > *y) - (*x < *y);
}

void sv_query_maps(const struct sv_state *st, struct sp_profile *p)
{
    for (unsigned m = 0; m < st->nmaps; m++) {
        unsigned i = sp_profile_add_map(p, st->maps[m].pm_path);
        memcpy(p->maps[i].pm_build_id, st->maps[m].pm_build_id,
               sizeof p->maps[i].pm_build_id);
        p->maps[i].pm_start = st->maps[m].pm_start;
        p->maps[i].pm_limit = st->maps[m].pm_limit;
        p->maps[i].pm_dwarf = st->maps[m].pm_dwarf;
    }
}

void sv_query_profile(const struct sv_state *st, const struct st_sel *sel,
                      unsigned kind, uint64_t ms, bool merged, struct sp_profile *p)
{
    sp_profile_init(p);
    sv_query_maps(st, p);
    /* Kernel by kernel, in name order (the same order every time), so
     * that each kernel's input costs its own stacks and its source is
     * looked up once. */
    size_t *order = sp_xcalloc(sel->n ? sel->n : 1, sizeof *order);
    for (size_t i = 0; i < sel->n; i++)
        order[i] = i;
    qsort_r(order, sel->n, sizeof *order, by_kernel, (void *)sel);
    struct sp_agg aggs[SV_HIST_MAPS];
    const struct sp_stream *metas[SV_HIST_MAPS] = { NULL };
    for (unsigned m = 0; merged && m < st->nmaps; m++)
        sp_agg_init(&aggs[m]);
    for (size_t i = 0, j; i < sel->n; i = j) {
        const char *name = sel->keys[order[i]].kernel;
        for (j = i + 1; j < sel->n && strcmp(sel->keys[order[j]].kernel, name) == 0; j++)
            ;
        const struct sp_stream *s;
        unsigned map;
        uint64_t dropped;
        /* A kernel's records are in the history only once its META named
         * its build id and the build id was its ELF's (tools/cmd/serve.c). */
        if (!kernel_source(st, name, &s, &map, &dropped) || map >= st->nmaps)
            continue;
        if (merged) {
            metas[map] = metas[map] ? metas[map] : s;
            for (size_t x = i; x < j; x++)
                add_stack(sel, order[x], true, &aggs[map]);
            continue;
        }
        struct sp_agg a;
        sp_agg_init(&a);
        for (size_t x = i; x < j; x++)
            add_stack(sel, order[x], false, &a);
        if (a.n)
            (void)sp_agg_profile(&a, s, kind, clamp_ms(ms), dropped, p, name, map);
        sp_agg_free(&a);
    }
    free(order);
    if (merged)
        add_fleet(st, aggs, metas, kind, ms, p);
}

void sv_query_name(const struct sv_state *st, struct sp_profile *p)
{
    for (unsigned m = 0; m < st->nmaps; m++)
        st->symbolize(st->sym_ctx, p, m);
    /* What no ELF names is shown by its address, as record shows it:
     * dropped, its samples would vanish from every graph. */
    sp_profile_name_unknown(p);
}

/* ---- the trees: flame_json.c's, with d3-flame-graph's keys ------------ */

json_t *sv_query_tree(const struct sp_profile *p, enum sp_fj_by by)
{
    struct sp_fj_tree t;
    sp_fj_build(p, by, &t);
    json_t *j = sp_fj_node_json(&t, 0, false, SP_FJ_D3);
    sp_fj_free(&t);
    return j;
}

json_t *sv_query_diff_tree(const struct sp_diff *d)
{
    struct sp_fj_tree t;
    sp_fj_build_diff(d, &t);
    json_t *j = sp_fj_node_json(&t, 0, true, SP_FJ_D3);
    sp_fj_free(&t);
    return j;
}
