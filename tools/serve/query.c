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

/* A kernel's stream (its META and task names) and ELF: this serve's, or
 * one another serve wrote into the store. False when it is neither. */
static bool kernel_source(const struct sv_state *st, const char *name,
                          const struct sp_stream **s, unsigned *map)
{
    for (unsigned k = 0; k < st->n; k++)
        if (strcmp(st->k[k].name, name) == 0) {
            *s = st->k[k].stream;
            *map = st->k[k].map;
            return *s != NULL;
        }
    for (unsigned k = 0; k < st->nforeign; k++)
        if (strcmp(st->foreign[k].k.name, name) == 0) {
            *s = &st->foreign[k].s;
            *map = st->foreign[k].map;
            return true;
        }
    return false;
}

/* One kernel's records of the selection, keys order[0 .. n), as an input of p. */
static void add_kernel(const struct sv_state *st, const struct st_sel *sel,
                       const size_t *order, size_t n, unsigned kind, uint64_t ms,
                       struct sp_profile *p)
{
    const char *name = sel->keys[order[0]].kernel;
    const struct sp_stream *s;
    unsigned map;
    if (!kernel_source(st, name, &s, &map))
        return;
    struct sp_agg a;
    sp_agg_init(&a);
    for (size_t i = 0; i < n; i++) {
        const struct st_key *key = &sel->keys[order[i]];
        struct pstr_record r;
        memset(&r, 0, sizeof r);
        r.pid = key->pid;
        r.depth = key->depth;
        r.kind = key->kind;
        r.size = key->size;         /* heap: the chain's objects, weight / size */
        r.why = key->why;
        snprintf(r.name, sizeof r.name, "%s", key->reason);
        r.waker = PSTR_WAKER_NONE;
        memcpy(r.frames, key->frames, sizeof r.frames);
        sp_agg_add_n(&a, key->cpu, &r, sel->counts[order[i]], sel->weights[order[i]]);
    }
    /* A kernel's records are in the history only once its META named its
     * build id and the build id was its ELF's (tools/cmd/serve.c). */
    if (a.n)
        (void)sp_agg_profile(&a, s, kind, ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms,
                             sp_stream_drops(s), p, name, map);
    sp_agg_free(&a);
}

static int by_kernel(const void *a, const void *b, void *ctx)
{
    const struct st_sel *sel = ctx;
    const size_t *x = a, *y = b;
    int c = strcmp(sel->keys[*x].kernel, sel->keys[*y].kernel);
    return c ? c : (*x > *y) - (*x < *y);
}

void sv_query_profile(const struct sv_state *st, const struct st_sel *sel,
                      unsigned kind, uint64_t ms, struct sp_profile *p)
{
    sp_profile_init(p);
    for (unsigned m = 0; m < st->nmaps; m++) {
        unsigned i = sp_profile_add_map(p, st->maps[m].pm_path);
        memcpy(p->maps[i].pm_build_id, st->maps[m].pm_build_id,
               sizeof p->maps[i].pm_build_id);
        p->maps[i].pm_start = st->maps[m].pm_start;
        p->maps[i].pm_limit = st->maps[m].pm_limit;
        p->maps[i].pm_dwarf = st->maps[m].pm_dwarf;
    }
    /* Kernel by kernel, in name order (the same order every time). */
    size_t *order = sp_xcalloc(sel->n ? sel->n : 1, sizeof *order);
    for (size_t i = 0; i < sel->n; i++)
        order[i] = i;
    qsort_r(order, sel->n, sizeof *order, by_kernel, (void *)sel);
    for (size_t i = 0, j; i < sel->n; i = j) {
        for (j = i + 1; j < sel->n && strcmp(sel->keys[order[j]].kernel,
                                             sel->keys[order[i]].kernel) == 0; j++)
            ;
        add_kernel(st, sel, order + i, j - i, kind, ms, p);
    }
    free(order);
    for (unsigned m = 0; m < st->nmaps; m++)
        st->symbolize(st->sym_ctx, p, m);
}

/* ---- the trees: flame_json.c's, with d3-flame-graph's keys ------------ */

json_t *sv_query_tree(const struct sp_profile *p)
{
    struct sp_fj_tree t;
    sp_fj_build(p, true, &t);
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
