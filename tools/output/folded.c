/* tools/output/folded.c: chains to root-first stacks of names, merged.
 * Host pipeline: prefix sp_. */
#include "tools/output/folded.h"
#include <stdlib.h>
#include <string.h>

/* A chain's weight in microseconds, in a profile that holds off-CPU time
 * (sp_folded_us): an off-CPU chain's nanoseconds, a CPU chain's time on
 * the CPU (the wall-clock profile's other half, sp_chain_cpu_ns). */
static uint64_t chain_us(const struct sp_profile *p, const struct sp_chain *c)
{
    uint64_t ns = c->c_why ? c->c_weight : sp_chain_cpu_ns(p, c);
    return (ns + 500) / 1000;
}

bool sp_folded_us(const struct sp_profile *p)
{
    return sp_profile_has_kind(p, PRAW_KIND_OFFCPU) || sp_profile_has_kind(p, PRAW_KIND_LOCK);
}

/* Root first: [kernel;] task; then the outermost caller down to the pc,
 * each address's inlined frames outermost first; an off-CPU chain's
 * reason below them all, a lock chain's lock above the task, as the
 * kernel's folded outputs have them. */
static void chain_stack(const struct sp_profile *p, const struct sp_chain *c,
                        bool per_kernel, bool us, struct sp_stack *s)
{
    unsigned n = 1 + per_kernel + (c->c_reason != NULL);
    for (unsigned i = 0; i < c->c_depth; i++)
        n += c->c_locs[i]->pl_nframes;
    s->ps_names = sp_xcalloc(n, sizeof *s->ps_names);
    unsigned k = 0;
    if (per_kernel)
        s->ps_names[k++] = p->inputs[c->c_input].pi_kernel;
    if (c->c_lock)
        s->ps_names[k++] = c->c_reason->pl_frames[0].pf_func;
    s->ps_names[k++] = c->c_task;
    for (unsigned i = c->c_depth; i-- > 0;) {
        const struct sp_loc *l = c->c_locs[i];
        for (unsigned j = l->pl_nframes; j-- > 0;)
            s->ps_names[k++] = l->pl_frames[j].pf_func;
    }
    if (c->c_reason && !c->c_lock)
        s->ps_names[k++] = c->c_reason->pl_frames[0].pf_func;
    s->ps_n = k;
    /* The weight: a CPU chain's is its count, a heap chain's its bytes;
     * with off-CPU or lock time in the profile, microseconds. */
    s->ps_count = us ? chain_us(p, c) : c->c_weight;
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
    /* Asked once, not per chain: it walks the inputs, a fleet's thousand. */
    bool us = sp_folded_us(p);
    for (size_t i = 0; i < p->nchains; i++)
        chain_stack(p, &p->chains[i], per_kernel, us, &out->v[i]);
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

bool sp_is_reason(const char *name)
{
    size_t n = strlen(name);
    return n >= 3 && name[0] == '[' && name[n - 1] == ']';
}

void sp_folded_name(FILE *f, const char *name)
{
    /* A reason frame keeps its space, as the kernel writes it: a folded
     * line splits at its last space alone. */
    bool reason = sp_is_reason(name);
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        fputc(*c == ';' || (*c <= ' ' && !(reason && *c == ' ')) || *c == 0x7f ? '_' : *c, f);
}

int sp_folded_write(const struct sp_profile *p, bool per_kernel, FILE *f)
{
    struct sp_stacks s;
    sp_stacks_build(p, per_kernel, &s);
    for (size_t i = 0; i < s.n; i++) {
        if (!s.v[i].ps_count)
            continue;               /* under half a microsecond */
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
