/* tools/output/text.c: the kernel's report format, symbolized on the host.
 * Host pipeline: prefix sp_. */
#include "tools/output/text.h"
#include "tools/output/offtext.h"
#include <stdlib.h>
#include <string.h>

/* One folded chain: chains of one input with the same leaf function and
 * the same caller addresses. */
struct tchain {
    const char *leaf;           /* the leaf's symbol, or NULL (no symbol) */
    uint64_t leaf_addr;         /* the leaf address when there is none */
    uint64_t off_min, off_max;
    const struct sp_loc *hot;   /* the most sampled leaf location */
    uint64_t hot_count;
    unsigned ncallers;
    const struct sp_loc *callers[PRAW_FRAMES - 1];
    uint64_t count;
};

/* Sort key of a chain within one input: leaf function (or address when
 * no symbol holds it), then the callers' locations, then the leaf's own
 * location, so that a group and each leaf address in it are runs. */
static const struct sp_profile *sort_p;

static int key_cmp(const struct sp_chain *x, const struct sp_chain *y,
                   int with_leaf_loc)
{
    const struct sp_loc *a = x->c_locs[0], *b = y->c_locs[0];
    if ((a->pl_sym == NULL) != (b->pl_sym == NULL))
        return a->pl_sym ? -1 : 1;
    int r = a->pl_sym ? strcmp(a->pl_sym, b->pl_sym) : 0;
    if (r)
        return r;
    if (!a->pl_sym && a->pl_addr != b->pl_addr)
        return a->pl_addr < b->pl_addr ? -1 : 1;
    if (x->c_depth != y->c_depth)
        return x->c_depth < y->c_depth ? -1 : 1;
    for (unsigned i = 1; i < x->c_depth; i++)
        if (x->c_locs[i] != y->c_locs[i])
            return x->c_locs[i]->pl_id < y->c_locs[i]->pl_id ? -1 : 1;
    if (with_leaf_loc && a != b)
        return a->pl_id < b->pl_id ? -1 : 1;
    return 0;
}

static int index_cmp(const void *a, const void *b)
{
    return key_cmp(&sort_p->chains[*(const size_t *)a],
                   &sort_p->chains[*(const size_t *)b], 1);
}

static void group_start(struct tchain *t, const struct sp_chain *c)
{
    memset(t, 0, sizeof *t);
    t->leaf = c->c_locs[0]->pl_sym;
    t->leaf_addr = c->c_locs[0]->pl_addr;
    t->off_min = UINT64_MAX;
    t->ncallers = c->c_depth - 1;
    memcpy(t->callers, &c->c_locs[1], t->ncallers * sizeof *t->callers);
}

/* One leaf location's run [c, c + n) within the group: the group keeps
 * the hottest (ties: the lowest address) for its file:line. */
static void leaf_run(struct tchain *t, const struct sp_loc *l, uint64_t n)
{
    t->count += n;
    if (l->pl_sym_off < t->off_min)
        t->off_min = l->pl_sym_off;
    if (l->pl_sym_off > t->off_max)
        t->off_max = l->pl_sym_off;
    if (!t->hot || n > t->hot_count ||
        (n == t->hot_count && l->pl_addr < t->hot->pl_addr)) {
        t->hot = l;
        t->hot_count = n;
    }
}

static size_t fold(const struct sp_profile *p, unsigned input, struct tchain *v,
                   size_t *idx)
{
    size_t m = 0, n = 0;
    for (size_t i = 0; i < p->nchains; i++)
        if (p->chains[i].c_input == input)
            idx[m++] = i;
    sort_p = p;
    qsort(idx, m, sizeof *idx, index_cmp);
    for (size_t i = 0; i < m;) {
        const struct sp_chain *c = &p->chains[idx[i]];
        if (!n || key_cmp(&p->chains[idx[i - 1]], c, 0) != 0)
            group_start(&v[n++], c);
        uint64_t run = 0;
        size_t j = i;
        for (; j < m && key_cmp(&p->chains[idx[j]], c, 1) == 0; j++)
            run += p->chains[idx[j]].c_count;
        leaf_run(&v[n - 1], c->c_locs[0], run);
        i = j;
    }
    return n;
}

/* The kernel's order: count descending; ties by leaf address, then the
 * callers' addresses, then fewer callers first. */
static int tchain_cmp(const void *a, const void *b)
{
    const struct tchain *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    uint64_t ax = x->leaf ? x->hot->pl_addr - x->hot->pl_sym_off : x->leaf_addr;
    uint64_t ay = y->leaf ? y->hot->pl_addr - y->hot->pl_sym_off : y->leaf_addr;
    if (ax != ay)
        return ax < ay ? -1 : 1;
    for (unsigned i = 0; i < x->ncallers && i < y->ncallers; i++)
        if (x->callers[i]->pl_addr != y->callers[i]->pl_addr)
            return x->callers[i]->pl_addr < y->callers[i]->pl_addr ? -1 : 1;
    return (x->ncallers > y->ncallers) - (x->ncallers < y->ncallers);
}

static void where(FILE *f, const struct sp_loc *l)
{
    const struct sp_frame *fr = l->pl_nframes ? &l->pl_frames[0] : NULL;
    if (fr && fr->pf_file)
        fprintf(f, " (%s:%u)\n", fr->pf_file, fr->pf_line);
    else
        fputs(" (??:0)\n", f);
}

static void print_chain(FILE *f, const struct tchain *t, uint64_t total)
{
    uint64_t tenths = (t->count * 2000 + total) / (2 * total);
    fprintf(f, "%llu.%llu%% %llu ", (unsigned long long)(tenths / 10),
            (unsigned long long)(tenths % 10), (unsigned long long)t->count);
    if (!t->leaf)
        fprintf(f, "0x%llx", (unsigned long long)t->leaf_addr);
    else if (t->off_min == t->off_max)
        fprintf(f, "%s+0x%llx", t->leaf, (unsigned long long)t->off_min);
    else
        fprintf(f, "%s+0x%llx..0x%llx", t->leaf,
                (unsigned long long)t->off_min, (unsigned long long)t->off_max);
    where(f, t->hot);
    for (unsigned i = 0; i < t->ncallers; i++) {
        const struct sp_loc *l = t->callers[i];
        if (l->pl_sym)
            fprintf(f, "        <- %s+0x%llx", l->pl_sym,
                    (unsigned long long)l->pl_sym_off);
        else
            fprintf(f, "        <- 0x%016llx", (unsigned long long)l->pl_addr);
        where(f, l);
    }
}

static void print_input(const struct sp_profile *p, unsigned input, FILE *f)
{
    const struct sp_input *in = &p->inputs[input];
    const struct praw_header *h = &in->pi_hdr;
    if (p->ninputs > 1)
        fprintf(f, "%skernel %s\n", input ? "\n" : "", in->pi_kernel);
    fprintf(f, "profiled %u ms\n", h->ph_ms);
    fprintf(f, "%llu samples on %u cpus, %llu dropped, source %s\n",
            (unsigned long long)h->ph_samples, h->ph_cpus,
            (unsigned long long)h->ph_dropped, h->ph_source);
    if (in->pi_stream)
        fprintf(f, "streamed: %llu records lost on the wire (%llu datagrams)%s%s\n",
                (unsigned long long)in->pi_lost_records,
                (unsigned long long)in->pi_lost_dgrams,
                in->pi_note ? "; " : "", in->pi_note ? in->pi_note : "");
    if (h->ph_samples == 0) {
        fputs("no samples\n", f);
        return;
    }
    struct tchain *v = calloc(p->nchains ? p->nchains : 1, sizeof *v);
    size_t *idx = calloc(p->nchains ? p->nchains : 1, sizeof *idx);
    if (!v || !idx) {
        fprintf(stderr, "sonde-prof: out of memory\n");
        exit(2);
    }
    size_t n = fold(p, input, v, idx);
    qsort(v, n, sizeof *v, tchain_cmp);
    for (size_t i = 0; i < n; i++)
        print_chain(f, &v[i], h->ph_samples);
    free(idx);
    free(v);
}

int sp_text_write(const struct sp_profile *p, FILE *f)
{
    for (unsigned i = 0; i < p->ninputs; i++) {
        /* Off-CPU time: the kernel's `profile off` report. */
        if (p->inputs[i].pi_hdr.ph_kind == PRAW_KIND_OFFCPU) {
            if (p->ninputs > 1)
                fprintf(f, "%skernel %s\n", i ? "\n" : "", p->inputs[i].pi_kernel);
            sp_offtext_input(p, i, f);
            continue;
        }
        /* Lock delay: the kernel's `profile lock` report. */
        if (p->inputs[i].pi_hdr.ph_kind == PRAW_KIND_LOCK) {
            if (p->ninputs > 1)
                fprintf(f, "%skernel %s\n", i ? "\n" : "", p->inputs[i].pi_kernel);
            sp_locktext_input(p, i, f);
            continue;
        }
        print_input(p, i, f);
    }
    return ferror(f) ? -1 : 0;
}
