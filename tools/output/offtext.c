/* tools/output/offtext.c: the kernel's `profile off` and `profile lock`
 * reports, symbolized on the host (tools/output/offtext.h).
 * Host pipeline: prefix sp_. */
#include "tools/output/offtext.h"
#include <stdlib.h>
#include <string.h>

/* "12.345": ns as milliseconds, 3 decimals, rounded half up (as the
 * kernel's prof_off_ms). */
static void ms3(FILE *f, uint64_t ns)
{
    uint64_t us = (ns + 500) / 1000;
    fprintf(f, "%llu.%03llu", (unsigned long long)(us / 1000), (unsigned long long)(us % 1000));
}

static const struct sp_profile *sort_p;

/* Heaviest first; ties by pid, then reason, then the chain's locations:
 * an order that does not depend on the input's. */
static int entry_cmp(const void *a, const void *b)
{
    const struct sp_chain *x = &sort_p->chains[*(const size_t *)a];
    const struct sp_chain *y = &sort_p->chains[*(const size_t *)b];
    if (x->c_weight != y->c_weight)
        return x->c_weight > y->c_weight ? -1 : 1;
    if (x->c_pid != y->c_pid)
        return x->c_pid < y->c_pid ? -1 : 1;
    if (x->c_why != y->c_why)
        return x->c_why < y->c_why ? -1 : 1;
    for (unsigned i = 0; i < x->c_depth && i < y->c_depth; i++)
        if (x->c_locs[i] != y->c_locs[i])
            return x->c_locs[i]->pl_id < y->c_locs[i]->pl_id ? -1 : 1;
    return (x->c_depth > y->c_depth) - (x->c_depth < y->c_depth);
}

/* "<- sym+0xoff (file:line)" at indent; a chain of "0" (no walk) is none. */
static void caller(FILE *f, const struct sp_loc *l, const char *indent)
{
    if (l->pl_addr == 0)
        return;
    fprintf(f, "%s<- ", indent);
    if (l->pl_sym)
        fprintf(f, "%s+0x%llx", l->pl_sym, (unsigned long long)l->pl_sym_off);
    else
        fprintf(f, "0x%016llx", (unsigned long long)l->pl_addr);
    const struct sp_frame *fr = l->pl_nframes ? &l->pl_frames[0] : NULL;
    if (fr && fr->pf_file)
        fprintf(f, " (%s:%u)\n", fr->pf_file, fr->pf_line);
    else
        fputs(" (??:0)\n", f);
}

static void entry(const struct sp_profile *p, const struct sp_chain *c,
                  uint64_t total, FILE *f)
{
    uint64_t tenths = total ? (c->c_weight * 2000 + total) / (2 * total) : 0;
    fprintf(f, "%llu.%llu%% ", (unsigned long long)(tenths / 10),
            (unsigned long long)(tenths % 10));
    ms3(f, c->c_weight);
    fprintf(f, " ms %s task %u %s\n", c->c_reason->pl_frames[0].pf_func, c->c_pid, c->c_task);
    for (unsigned i = 0; i < c->c_depth; i++)
        caller(f, c->c_locs[i], "        ");
    if (!praw_why_blocked(c->c_why))
        return;
    if (c->c_waker == PRAW_WAKER_NONE) {
        fputs("        still waiting at the window's end\n", f);
        return;
    }
    if (c->c_waker == 0) {
        fputs("        woken by the tick\n", f);
    } else {
        const char *t = sp_waker_task(p, c);
        fprintf(f, "        woken by %d %s\n", c->c_waker, t ? t : "-");
    }
    for (unsigned i = 0; i < c->c_wdepth; i++)
        caller(f, c->c_wlocs[i], "            ");
}

int sp_offtext_input(const struct sp_profile *p, unsigned input, FILE *f)
{
    const struct sp_input *in = &p->inputs[input];
    size_t *idx = sp_xcalloc(p->nchains, sizeof *idx);
    size_t n = 0;
    uint64_t blocked = 0, runnable = 0, total;
    /* Tasks with off-CPU time: distinct pids (a small set per window). */
    uint32_t *pids = sp_xcalloc(p->nchains, sizeof *pids);
    size_t npids = 0;
    for (size_t i = 0; i < p->nchains; i++) {
        const struct sp_chain *c = &p->chains[i];
        if (c->c_input != input || !c->c_reason)
            continue;
        idx[n++] = i;
        if (praw_why_blocked(c->c_why))
            blocked += c->c_weight;
        else
            runnable += c->c_weight;
        size_t k = 0;
        while (k < npids && pids[k] != c->c_pid)
            k++;
        if (k == npids)
            pids[npids++] = c->c_pid;
    }
    total = blocked + runnable;
    fprintf(f, "off-cpu profiled %u ms\nblocked ", in->pi_hdr.ph_ms);
    ms3(f, blocked);
    fputs(" ms, runnable ", f);
    ms3(f, runnable);
    fprintf(f, " ms, %zu tasks, %llu dropped\n", npids,
            (unsigned long long)in->pi_hdr.ph_dropped);
    if (in->pi_stream)
        fprintf(f, "streamed: %llu records lost on the wire (%llu datagrams)%s%s\n",
                (unsigned long long)in->pi_lost_records, (unsigned long long)in->pi_lost_dgrams,
                in->pi_note ? "; " : "", in->pi_note ? in->pi_note : "");
    if (!n)
        fputs("no off-CPU time: no task left its CPU in the window\n", f);
    sort_p = p;
    qsort(idx, n, sizeof *idx, entry_cmp);
    for (size_t i = 0; i < n; i++)
        entry(p, &p->chains[idx[i]], total, f);
    free(pids);
    free(idx);
    return ferror(f) ? -1 : 0;
}

int sp_locktext_input(const struct sp_profile *p, unsigned input, FILE *f)
{
    const struct sp_input *in = &p->inputs[input];
    size_t *idx = sp_xcalloc(p->nchains, sizeof *idx);
    size_t n = 0;
    uint64_t mutex = 0, spin = 0, waits = 0, releases = 0;
    for (size_t i = 0; i < p->nchains; i++) {
        const struct sp_chain *c = &p->chains[i];
        if (c->c_input != input || !c->c_lock)
            continue;
        idx[n++] = i;
        *(c->c_why == PRAW_WHY_SPIN ? &spin : &mutex) += c->c_weight;
        waits += c->c_objects;
        releases += c->c_count;
    }
    fprintf(f, "lock profiled %u ms: ", in->pi_hdr.ph_ms);
    ms3(f, mutex + spin);
    fprintf(f, " ms of waits charged to their holders, %llu waits, %llu releases, %llu dropped\n"
            "mutex ", (unsigned long long)waits, (unsigned long long)releases,
            (unsigned long long)in->pi_hdr.ph_dropped);
    ms3(f, mutex);
    fputs(" ms, spin ", f);
    ms3(f, spin);
    fputs(" ms\n", f);
    if (!n)
        fputs("no lock waited on in the window\n", f);
    sort_p = p;
    qsort(idx, n, sizeof *idx, entry_cmp);
    for (size_t i = 0; i < n; i++) {
        const struct sp_chain *c = &p->chains[idx[i]];
        uint64_t total = mutex + spin, tenths = (c->c_weight * 2000 + total) / (2 * total);
        fprintf(f, "%llu.%llu%% ", (unsigned long long)(tenths / 10),
                (unsigned long long)(tenths % 10));
        ms3(f, c->c_weight);
        fprintf(f, " ms %s %llu waits, held by task %u %s\n", c->c_reason->pl_frames[0].pf_func,
                (unsigned long long)c->c_objects, c->c_pid, c->c_task);
        for (unsigned k = 0; k < c->c_depth; k++)
            caller(f, c->c_locs[k], "        ");
    }
    free(idx);
    return ferror(f) ? -1 : 0;
}
