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

/* Stack i of the selection into a, as its record (pid 0 and CPU 0 when
 * merged: the fleet's frames alone). */
static void add_stack(const struct sv_state *st, const struct sv_hist_sel *sel, size_t i,
                      bool merged, struct sp_agg *a)
{
    const struct sv_hist_key *key = sel->keys[i];
    struct pstr_record r;
    memset(&r, 0, sizeof r);
    r.pid = merged ? 0 : key->pid;
    r.depth = key->depth;
    r.kind = key->kind;
    r.size = key->size;         /* heap: the chain's objects, weight / size */
    const char *name;
    if (sv_hist_reason(st->h, key->reason, &r.why, &name))
        snprintf(r.name, sizeof r.name, "%s", name);
    r.waker = PSTR_WAKER_NONE;
    memcpy(r.frames, key->frames, sizeof r.frames);
    sp_agg_add_n(a, merged ? 0 : key->cpu, &r, sel->counts[i], sel->weights[i]);
}

/* by=frame: the selection's stacks merged over kernels, tasks and CPUs,
 * one input per ELF (labelled "fleet", with the META of the first kernel
 * of that ELF). A selection of the whole fleet is of the fleet's stacks
 * already (tools/serve/hist.h): its graph costs the fleet's distinct
 * frames, not its kernels' stacks. */
static void add_fleet(const struct sv_state *st, const struct sv_hist_sel *sel,
                      unsigned kind, uint64_t ms, struct sp_profile *p)
{
    for (unsigned m = 0; m < st->nmaps; m++) {
        struct sp_agg a;
        sp_agg_init(&a);
        const struct sp_stream *meta = NULL;
        uint64_t drops = 0;
        for (unsigned k = 0; k < st->n; k++)
            if (st->k[k].map == m && st->k[k].stream && st->k[k].stream->have_meta) {
                meta = meta ? meta : st->k[k].stream;
                drops += st->k[k].dropped;
            }
        for (size_t i = 0; meta && i < sel->n; i++) {
            const struct sv_hist_key *key = sel->keys[i];
            if (sv_hist_key_fleet(key) ? sv_hist_key_map(key) == m
                                       : key->kernel < st->n && st->k[key->kernel].map == m)
                add_stack(st, sel, i, true, &a);
        }
        if (a.n)
            (void)sp_agg_profile(&a, meta, kind, ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms,
                                 drops, p, "fleet", m);
        sp_agg_free(&a);
    }
}

/* One kernel's records of the selection, the ones at order[0 .. n), as
 * an input of p. */
static void add_kernel(const struct sv_state *st, const struct sv_hist_sel *sel,
                       const size_t *order, size_t n, unsigned k, unsigned kind, uint64_t ms,
                       struct sp_profile *p)
{
    struct sp_agg a;
    sp_agg_init(&a);
    for (size_t j = 0; j < n; j++)
        add_stack(st, sel, order[j], false, &a);
    /* A kernel's records are in the history only once its META named its
     * build id and the build id was its ELF's (tools/cmd/serve.c). */
    const struct sp_stream *s = st->k[k].stream;
    if (a.n && s)
        (void)sp_agg_profile(&a, s, kind, ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms,
                             st->k[k].dropped, p, st->k[k].name, st->k[k].map);
    sp_agg_free(&a);
}

void sv_query_profile(const struct sv_state *st, const struct sv_hist_sel *sel,
                      unsigned kind, uint64_t ms, bool merged, struct sp_profile *p)
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
    if (merged) {
        add_fleet(st, sel, kind, ms, p);
        return;
    }
    /* The selection's stacks in kernel order (a counting sort), so that
     * each kernel's input costs its own stacks, not the fleet's. */
    size_t *first = sp_xcalloc(st->n + 1, sizeof *first);
    size_t *order = sp_xcalloc(sel->n + 1, sizeof *order);
    for (size_t i = 0; i < sel->n; i++)
        if (sel->keys[i]->kernel < st->n)
            first[sel->keys[i]->kernel + 1]++;
    for (unsigned k = 0; k < st->n; k++)
        first[k + 1] += first[k];
    size_t *at = sp_xcalloc(st->n + 1, sizeof *at);
    memcpy(at, first, (st->n + 1) * sizeof *at);
    for (size_t i = 0; i < sel->n; i++)
        if (sel->keys[i]->kernel < st->n)
            order[at[sel->keys[i]->kernel]++] = i;
    for (unsigned k = 0; k < st->n; k++)
        if (first[k + 1] > first[k])
            add_kernel(st, sel, order + first[k], first[k + 1] - first[k], k, kind, ms, p);
    free(at);
    free(order);
    free(first);
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
