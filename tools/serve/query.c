/* tools/serve/query.c: selections as profiles and flame-graph trees
 * (tools/serve/query.h).
 * Serve layer: prefix sv_. */
#define _GNU_SOURCE
#include "tools/serve/query.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/ingest/agg.h"

/* One kernel's records of the selection as its raw profile, added to p. */
static void add_kernel(const struct sv_state *st, const struct sv_hist_sel *sel,
                       unsigned k, unsigned kind, uint64_t ms, struct sp_profile *p)
{
    struct sp_agg a;
    sp_agg_init(&a);
    for (size_t i = 0; i < sel->n; i++) {
        const struct sv_hist_key *key = sel->keys[i];
        if (key->kernel != k)
            continue;
        struct pstr_record r;
        memset(&r, 0, sizeof r);
        r.pid = key->pid;
        r.depth = key->depth;
        r.kind = key->kind;
        r.size = key->size;         /* heap: the chain's objects, weight / size */
        const char *name;
        if (sv_hist_reason(st->h, key->reason, &r.why, &name))
            snprintf(r.name, sizeof r.name, "%s", name);
        r.waker = PSTR_WAKER_NONE;
        memcpy(r.frames, key->frames, sizeof r.frames);
        sp_agg_add_n(&a, key->cpu, &r, sel->counts[i], sel->weights[i]);
    }
    size_t len;
    char *text = a.n && st->k[k].stream
                     ? sp_agg_raw(&a, st->k[k].stream, kind,
                                  ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms, &len)
                     : NULL;
    char err[SP_ERR_MAX];
    /* A kernel's records are in the history only once its META named its
     * build id and the build id was its ELF's (tools/cmd/serve.c), so
     * the text parses; a failure here is a bug, said rather than hidden. */
    if (text && sp_profile_add_raw(p, text, len, st->k[k].name, st->k[k].name,
                                   st->k[k].map, err, sizeof err))
        fprintf(stderr, "sonde-prof serve: %s\n", err);
    free(text);
    sp_agg_free(&a);
}

void sv_query_profile(const struct sv_state *st, const struct sv_hist_sel *sel,
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
    for (unsigned k = 0; k < st->n; k++)
        add_kernel(st, sel, k, kind, ms, p);
    for (unsigned m = 0; m < st->nmaps; m++)
        st->symbolize(st->sym_ctx, p, m);
}

/* ---- the tree ------------------------------------------------------------ */

/* Nodes in one array, linked by index: children are found by name, and
 * the stacks come sorted, so a stack's frame is most often its parent's
 * last child. */
struct node {
    const char *name;
    uint64_t value, base;
    size_t first, last, next;           /* 0: none (node 0 is the root) */
};

struct tree {
    struct node *v;
    size_t n, cap;
    bool diff;
};

static size_t child(struct tree *t, size_t parent, const char *name)
{
    struct node *p = &t->v[parent];
    if (p->last && strcmp(t->v[p->last].name, name) == 0)
        return p->last;
    for (size_t c = p->first; c; c = t->v[c].next)
        if (strcmp(t->v[c].name, name) == 0)
            return c;
    t->v = sp_grow(t->v, &t->cap, t->n + 1, sizeof *t->v);
    p = &t->v[parent];
    size_t c = t->n++;
    t->v[c] = (struct node){ .name = name };
    if (p->last)
        t->v[p->last].next = c;
    else
        p->first = c;
    p->last = c;
    return c;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

static void tree_add(struct tree *t, const char **names, unsigned n, uint64_t value,
                     uint64_t base)
{
    size_t at = 0;
    t->v[0].value = sat_add(t->v[0].value, value);
    t->v[0].base = sat_add(t->v[0].base, base);
    for (unsigned i = 0; i < n; i++) {
        at = child(t, at, names[i]);
        t->v[at].value = sat_add(t->v[at].value, value);
        t->v[at].base = sat_add(t->v[at].base, base);
    }
}

static json_t *node_json(const struct tree *t, size_t i)
{
    const struct node *nd = &t->v[i];
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(nd->name));
    json_object_set_new(o, "value", json_integer((json_int_t)(nd->value > INT64_MAX
                                                              ? INT64_MAX : nd->value)));
    if (t->diff) {
        json_object_set_new(o, "base", json_integer((json_int_t)(nd->base > INT64_MAX
                                                                 ? INT64_MAX : nd->base)));
        json_object_set_new(o, "delta", json_integer((json_int_t)nd->value -
                                                     (json_int_t)nd->base));
    }
    if (nd->first) {
        json_t *kids = json_array();
        for (size_t c = nd->first; c; c = t->v[c].next)
            json_array_append_new(kids, node_json(t, c));
        json_object_set_new(o, "children", kids);
    }
    return o;
}

static void tree_init(struct tree *t, bool diff)
{
    memset(t, 0, sizeof *t);
    t->diff = diff;
    t->v = sp_grow(NULL, &t->cap, 1, sizeof *t->v);
    t->v[0] = (struct node){ .name = "all" };
    t->n = 1;
}

static json_t *tree_done(struct tree *t)
{
    json_t *j = node_json(t, 0);
    free(t->v);
    return j;
}

json_t *sv_query_tree(const struct sp_stacks *s)
{
    struct tree t;
    tree_init(&t, false);
    for (size_t i = 0; i < s->n; i++)
        tree_add(&t, s->v[i].ps_names, s->v[i].ps_n, s->v[i].ps_count, 0);
    return tree_done(&t);
}

json_t *sv_query_diff_tree(const struct sp_diff *d)
{
    struct tree t;
    tree_init(&t, true);
    for (size_t i = 0; i < d->n; i++)
        tree_add(&t, d->v[i].dr_names, d->v[i].dr_n, d->v[i].dr_new, d->v[i].dr_base);
    return tree_done(&t);
}
