/* tools/model/trace.c: a scheduling trace in memory (trace.h). */
#include "tools/model/trace.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sp_trace_init(struct sp_trace *t)
{
    memset(t, 0, sizeof *t);
    sp_profile_init(&t->st_prof);
}

void sp_trace_free(struct sp_trace *t)
{
    free(t->st_ev);
    free(t->st_chain);
    sp_profile_free(&t->st_prof);
    memset(t, 0, sizeof *t);
}

void sp_trace_begin(struct sp_trace *t, const struct traw_header *h,
                    const char *origin, const char *kernel, const char *path)
{
    sp_trace_begin_map(t, h, origin, kernel, sp_profile_add_map(&t->st_prof, path));
}

void sp_trace_begin_map(struct sp_trace *t, const struct traw_header *h,
                        const char *origin, const char *kernel, unsigned map)
{
    t->st_hdr = *h;
    t->st_origin = sp_strdup(&t->st_prof, origin);
    t->st_kernel = sp_strdup(&t->st_prof, kernel);
    t->st_map = map;
    /* The samples' input: a CPU profile of the window, so that every
     * profile writer (pprof, folded, the flame graph) takes it as one. */
    struct praw_header ph = { .ph_kind = PRAW_KIND_CPU, .ph_ms = h->th_ms, .ph_cpus = h->th_cpus };
    memcpy(ph.ph_build_id, h->th_build_id, sizeof ph.ph_build_id);
    snprintf(ph.ph_source, sizeof ph.ph_source, "trace");
    t->st_input = sp_profile_add_input(&t->st_prof, &ph, origin, kernel, t->st_map);
}

void sp_trace_add_event(struct sp_trace *t, const struct traw_event *e)
{
    size_t cap = t->st_capev;     /* st_chain grows as st_ev does */
    t->st_ev = sp_grow(t->st_ev, &t->st_capev, t->st_nev + 1, sizeof *t->st_ev);
    t->st_chain = sp_grow(t->st_chain, &cap, t->st_nev + 1, sizeof *t->st_chain);
    t->st_ev[t->st_nev] = *e;
    t->st_chain[t->st_nev] = (size_t)-1;
    if (e->te_type == TRAW_SAMPLE) {
        struct praw_chain rc = { .pc_count = 1, .pc_weight = 1, .pc_objects = 1,
                                 .pc_pid = e->te_pid, .pc_cpu = e->te_cpu,
                                 .pc_depth = e->te_depth, .pc_waker = PRAW_WAKER_NONE };
        memcpy(rc.pc_task, e->te_task, sizeof rc.pc_task);
        memcpy(rc.pc_frames, e->te_frames, sizeof rc.pc_frames);
        sp_profile_add_chain(&t->st_prof, t->st_input, &rc);
        t->st_chain[t->st_nev] = t->st_prof.nchains - 1;
    }
    t->st_nev++;
}

const struct sp_chain *sp_trace_sample(const struct sp_trace *t, size_t ev)
{
    if (ev >= t->st_nev || t->st_chain[ev] == (size_t)-1)
        return NULL;
    return &t->st_prof.chains[t->st_chain[ev]];
}

/* ---- one raw trace's text ------------------------------------------- */

struct add_raw {
    struct sp_trace *t;
    const struct traw_header *h;    /* traw_parse's, filled before any event */
    const char *origin, *kernel, *path;
    bool begun;
};

static void add_raw_begin(struct add_raw *a)
{
    if (!a->begun)
        sp_trace_begin(a->t, a->h, a->origin, a->kernel, a->path);
    a->begun = true;
}

static int add_raw_event(void *ctx, const struct traw_event *e, unsigned line, char *err,
                         size_t errcap)
{
    (void)line, (void)err, (void)errcap;
    struct add_raw *a = ctx;
    add_raw_begin(a);
    sp_trace_add_event(a->t, e);
    return 0;
}

int sp_trace_add_raw(struct sp_trace *t, const char *text, size_t len,
                     const char *origin, const char *kernel, const char *path,
                     char *err, size_t errcap)
{
    struct traw_header h;
    struct add_raw a = { t, &h, origin, kernel, path, false };
    char why[TRAW_ERR_MAX];
    if (traw_parse(text, len, &h, add_raw_event, &a, why, sizeof why) != 0) {
        snprintf(err, errcap, "%s: %s", origin, why);
        return -1;
    }
    add_raw_begin(&a);            /* a window with no event is a trace too */
    return 0;
}
