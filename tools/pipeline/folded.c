/* tools/pipeline/folded.c: chains to root-first stacks of names, merged.
 * Host pipeline: prefix sp_. */
#include "tools/pipeline/folded.h"
#include <stdlib.h>
#include <string.h>

/* Root first: [kernel;] task; then the outermost caller down to the pc,
 * each address's inlined frames outermost first. */
static void chain_stack(const struct sp_profile *p, const struct sp_chain *c,
                        bool per_kernel, struct sp_stack *s)
{
    unsigned n = 1 + per_kernel;
    for (unsigned i = 0; i < c->c_depth; i++)
        n += c->c_locs[i]->pl_nframes;
    s->ps_names = sp_xcalloc(n, sizeof *s->ps_names);
    unsigned k = 0;
    if (per_kernel)
        s->ps_names[k++] = p->inputs[c->c_input].pi_kernel;
    s->ps_names[k++] = c->c_task;
    for (unsigned i = c->c_depth; i-- > 0;) {
        const struct sp_loc *l = c->c_locs[i];
        for (unsigned j = l->pl_nframes; j-- > 0;)
            s->ps_names[k++] = l->pl_frames[j].pf_func;
    }
    s->ps_n = k;
    /* The weight: a CPU chain's is its count, a heap chain's its bytes. */
    s->ps_count = c->c_weight;
}

static int stack_cmp(const void *a, const void *b)
{
    const struct sp_stack *x = a, *y = b;
    for (unsigned i = 0; i < x->ps_n && i < y->ps_n; i++) {
        int r = strcmp(x->ps_names[i], y->ps_names[i]);
        if (r)
            return r;
    }
    return (x->ps_n > y->ps_n) - (x->ps_n < y->ps_n);
}

void sp_stacks_build(const struct sp_profile *p, bool per_kernel,
                       struct sp_stacks *out)
{
    memset(out, 0, sizeof *out);
    out->v = sp_xcalloc(p->nchains, sizeof *out->v);
    for (size_t i = 0; i < p->nchains; i++)
        chain_stack(p, &p->chains[i], per_kernel, &out->v[i]);
    qsort(out->v, p->nchains, sizeof *out->v, stack_cmp);
    size_t n = 0;
    for (size_t i = 0; i < p->nchains; i++) {
        out->total += out->v[i].ps_count;
        if (n && stack_cmp(&out->v[n - 1], &out->v[i]) == 0) {
            out->v[n - 1].ps_count += out->v[i].ps_count;
            free(out->v[i].ps_names);
        } else {
            out->v[n++] = out->v[i];
        }
    }
    out->n = n;
}

void sp_stacks_free(struct sp_stacks *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i].ps_names);
    free(s->v);
    memset(s, 0, sizeof *s);
}

void sp_folded_name(FILE *f, const char *name)
{
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        fputc(*c == ';' || *c <= ' ' || *c == 0x7f ? '_' : *c, f);
}

int sp_folded_write(const struct sp_profile *p, bool per_kernel, FILE *f)
{
    struct sp_stacks s;
    sp_stacks_build(p, per_kernel, &s);
    for (size_t i = 0; i < s.n; i++) {
        for (unsigned j = 0; j < s.v[i].ps_n; j++) {
            if (j)
                fputc(';', f);
            sp_folded_name(f, s.v[i].ps_names[j]);
        }
        fprintf(f, " %llu\n", (unsigned long long)s.v[i].ps_count);
    }
    sp_stacks_free(&s);
    return ferror(f) ? -1 : 0;
}
