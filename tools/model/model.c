/* tools/model/model.c: loading raw profiles into sonde-prof's model.
 * Host pipeline: prefix sp_. */
#include "tools/model/model.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *xrealloc(void *ptr, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        n = SIZE_MAX;           /* forces the failure below */
    size_t bytes = n * size;
    void *q = realloc(ptr, bytes ? bytes : 1);
    if (!q) {
        fprintf(stderr, "sonde-prof: out of memory\n");
        exit(2);
    }
    return q;
}

void *sp_xcalloc(size_t n, size_t size)
{
    void *q = calloc(n ? n : 1, size);
    if (!q) {
        fprintf(stderr, "sonde-prof: out of memory\n");
        exit(2);
    }
    return q;
}

void *sp_grow(void *ptr, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return ptr;
    size_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    *cap = c;
    return xrealloc(ptr, c, size);
}

void sp_profile_init(struct sp_profile *p)
{
    memset(p, 0, sizeof *p);
}

void sp_profile_free(struct sp_profile *p)
{
    for (size_t i = 0; i < p->nlocs; i++) {
        free(p->locs[i]->pl_frames);
        free(p->locs[i]);
    }
    for (size_t i = 0; i < p->nstrs; i++)
        free(p->strs[i]);
    free(p->locs);
    free(p->reasons);
    free(p->hash);
    free(p->strs);
    free(p->chains);
    free(p->inputs);
    free(p->maps);
    memset(p, 0, sizeof *p);
}

const char *sp_strdup(struct sp_profile *p, const char *s)
{
    p->strs = sp_grow(p->strs, &p->capstrs, p->nstrs + 1, sizeof *p->strs);
    size_t n = strlen(s) + 1;
    char *d = xrealloc(NULL, n, 1);
    memcpy(d, s, n);
    p->strs[p->nstrs++] = d;
    return d;
}

unsigned sp_profile_add_map(struct sp_profile *p, const char *path)
{
    p->maps = xrealloc(p->maps, p->nmaps + 1, sizeof *p->maps);
    struct sp_map *m = &p->maps[p->nmaps];
    memset(m, 0, sizeof *m);
    m->pm_path = sp_strdup(p, path);
    return p->nmaps++;
}

/* ---- the location table ---------------------------------------------- */

static size_t loc_hash(unsigned map, uint64_t addr, bool ret)
{
    uint64_t h = addr * 0x9e3779b97f4a7c15ull ^ ((uint64_t)map << 1 | ret);
    h ^= h >> 29;
    return (size_t)(h * 0xbf58476d1ce4e5b9ull >> 7);
}

static void hash_put(struct sp_loc **tab, size_t cap, struct sp_loc *l)
{
    size_t i = loc_hash(l->pl_map, l->pl_addr, l->pl_ret) & (cap - 1);
    while (tab[i])
        i = (i + 1) & (cap - 1);
    tab[i] = l;
}

static void hash_grow(struct sp_profile *p)
{
    size_t cap = p->hashcap ? p->hashcap * 2 : 256;
    struct sp_loc **tab = xrealloc(NULL, cap, sizeof *tab);
    memset(tab, 0, cap * sizeof *tab);
    for (size_t i = 0; i < p->nlocs; i++)
        hash_put(tab, cap, p->locs[i]);
    free(p->hash);
    p->hash = tab;
    p->hashcap = cap;
}

struct sp_loc *sp_loc_get(struct sp_profile *p, unsigned map, uint64_t addr,
                              bool ret)
{
    if (p->hashcap) {
        size_t i = loc_hash(map, addr, ret) & (p->hashcap - 1);
        for (; p->hash[i]; i = (i + 1) & (p->hashcap - 1)) {
            struct sp_loc *l = p->hash[i];
            if (l->pl_map == map && l->pl_addr == addr && l->pl_ret == ret)
                return l;
        }
    }
    if ((p->nlocs + 1) * 2 > p->hashcap)   /* keep the table half empty */
        hash_grow(p);
    struct sp_loc *l = xrealloc(NULL, 1, sizeof *l);
    memset(l, 0, sizeof *l);
    l->pl_addr = addr;
    l->pl_ret = ret;
    l->pl_map = map;
    p->locs = sp_grow(p->locs, &p->caplocs, p->nlocs + 1, sizeof *p->locs);
    p->locs[p->nlocs++] = l;
    l->pl_id = p->nlocs;
    hash_put(p->hash, p->hashcap, l);
    return l;
}

/* ---- loading --------------------------------------------------------- */

struct add_ctx {
    struct sp_profile *p;
    unsigned input;
};

struct sp_chain *sp_profile_add_chain(struct sp_profile *p, unsigned input,
                                      const struct praw_chain *rc)
{
    p->chains = sp_grow(p->chains, &p->capchains, p->nchains + 1,
                     sizeof *p->chains);
    struct sp_chain *c = &p->chains[p->nchains++];
    memset(c, 0, sizeof *c);
    c->c_count = rc->pc_count;
    c->c_weight = rc->pc_weight;
    c->c_objects = rc->pc_objects;
    c->c_pid = rc->pc_pid;
    c->c_cpu = rc->pc_cpu;
    memcpy(c->c_task, rc->pc_task, sizeof c->c_task);
    c->c_input = input;
    c->c_depth = rc->pc_depth;
    unsigned map = p->inputs[input].pi_map;
    /* An off-CPU chain is a task's saved context: return addresses all. */
    bool off = rc->pc_why != PRAW_WHY_NONE;
    for (unsigned i = 0; i < rc->pc_depth; i++)
        c->c_locs[i] = sp_loc_get(p, map, rc->pc_frames[i], i > 0 || off);
    c->c_why = rc->pc_why;
    c->c_lock = p->inputs[input].pi_hdr.ph_kind == PRAW_KIND_LOCK;
    c->c_waker = rc->pc_waker;
    memcpy(c->c_wtask, rc->pc_wtask, sizeof c->c_wtask);
    memcpy(c->c_name, rc->pc_name, sizeof c->c_name);
    if (off) {
        c->c_reason = sp_loc_reason(p, rc->pc_why, rc->pc_name);
        c->c_wdepth = rc->pc_wdepth;
        for (unsigned i = 0; i < rc->pc_wdepth; i++)
            c->c_wlocs[i] = sp_loc_get(p, map, rc->pc_wframes[i], true);
    }
    return c;
}

static int add_chain(void *ctx, const struct praw_chain *rc, unsigned line,
                     char *err, size_t cap)
{
    (void)line, (void)err, (void)cap;   /* nothing here can fail */
    struct add_ctx *a = ctx;
    sp_profile_add_chain(a->p, a->input, rc);
    return 0;
}

/* Room for one more input, zeroed and labelled, not counted yet. */
static struct sp_input *input_new(struct sp_profile *p, const char *origin, const char *kernel,
                                  unsigned map)
{
    p->inputs = xrealloc(p->inputs, p->ninputs + 1, sizeof *p->inputs);
    struct sp_input *in = &p->inputs[p->ninputs];
    memset(in, 0, sizeof *in);
    in->pi_origin = sp_strdup(p, origin);
    in->pi_kernel = sp_strdup(p, kernel);
    in->pi_map = map;
    return in;
}

unsigned sp_profile_add_input(struct sp_profile *p, const struct praw_header *h,
                              const char *origin, const char *kernel, unsigned map)
{
    struct sp_input *in = input_new(p, origin, kernel, map);
    in->pi_hdr = *h;
    in->pi_period_ns = praw_source_period_ns(h->ph_source);
    return p->ninputs++;
}

int sp_profile_add_raw(struct sp_profile *p, const char *text, size_t len,
                 const char *origin, const char *kernel, unsigned map,
                 char *err, size_t errcap)
{
    struct sp_input *in = input_new(p, origin, kernel, map);
    struct add_ctx a = { p, p->ninputs };
    size_t before = p->nchains;
    char why[PRAW_ERR_MAX];
    if (praw_parse(text, len, &in->pi_hdr, add_chain, &a, why, sizeof why)) {
        p->nchains = before;    /* its locations stay, unused: harmless */
        snprintf(err, errcap, "%s: %s", origin, why);
        return -1;
    }
    in->pi_period_ns = praw_source_period_ns(in->pi_hdr.ph_source);
    /* A heap profile's samples are bytes, an off-CPU or lock one's
     * nanoseconds already: no period to know. */
    if (!in->pi_period_ns && in->pi_hdr.ph_kind == PRAW_KIND_CPU) {
        p->nchains = before;
        snprintf(err, errcap, "%s: line 1: unknown source '%s' (known: "
                 "\"pmu/...\" sampling every 1 ms, \"tick NHz\")", origin,
                 in->pi_hdr.ph_source);
        return -1;
    }
    p->ninputs++;
    return 0;
}

void sp_reason_name(unsigned why, const char *name, char *buf, size_t cap)
{
    const char *w = praw_why_name(why);
    if (name && name[0])
        snprintf(buf, cap, "[%s %s]", w ? w : "?", name);
    else
        snprintf(buf, cap, "[%s]", w ? w : "?");
}

struct sp_loc *sp_loc_reason(struct sp_profile *p, unsigned why, const char *name)
{
    char buf[PRAW_NAME_MAX + 16];
    sp_reason_name(why, name, buf, sizeof buf);
    /* The reasons are few (a kernel names a handful of queues). */
    for (size_t i = 0; i < p->nreasons; i++)
        if (strcmp(p->reasons[i]->pl_frames[0].pf_func, buf) == 0)
            return p->reasons[i];
    struct sp_loc *l = sp_loc_get(p, SP_MAP_REASON, p->nreasons, false);
    p->reasons = sp_grow(p->reasons, &p->capreasons, p->nreasons + 1, sizeof *p->reasons);
    p->reasons[p->nreasons++] = l;
    l->pl_frames = xrealloc(NULL, 1, sizeof *l->pl_frames);
    memset(l->pl_frames, 0, sizeof *l->pl_frames);
    l->pl_frames[0].pf_func = sp_strdup(p, buf);
    l->pl_nframes = 1;
    return l;
}

uint64_t sp_chain_cpu_ns(const struct sp_profile *p, const struct sp_chain *c)
{
    return c->c_cpu_ns ? c->c_cpu_ns : c->c_count * p->inputs[c->c_input].pi_period_ns;
}

struct wall_task {
    uint32_t pid;
    uint64_t off_ns, samples;
};

static struct wall_task *wall_task_of(struct wall_task **v, size_t *n, size_t *cap, uint32_t pid)
{
    for (size_t i = 0; i < *n; i++)
        if ((*v)[i].pid == pid)
            return &(*v)[i];
    *v = sp_grow(*v, cap, *n + 1, sizeof **v);
    (*v)[*n] = (struct wall_task){ .pid = pid };
    return &(*v)[(*n)++];
}

/* The CPU input cpu's chains, given the off-CPU input off of the same
 * kernel and window. */
static void wall_fill_pair(struct sp_profile *p, unsigned cpu, unsigned off)
{
    struct wall_task *v = NULL;
    size_t n = 0, cap = 0;
    uint64_t window = (uint64_t)p->inputs[off].pi_hdr.ph_ms * 1000000;
    for (size_t i = 0; i < p->nchains; i++) {
        const struct sp_chain *c = &p->chains[i];
        if (c->c_input == off)
            wall_task_of(&v, &n, &cap, c->c_pid)->off_ns += c->c_weight;
        else if (c->c_input == cpu)
            wall_task_of(&v, &n, &cap, c->c_pid)->samples += c->c_count;
    }
    for (size_t i = 0; i < p->nchains; i++) {
        struct sp_chain *c = &p->chains[i];
        if (c->c_input != cpu || c->c_pid == 0)
            continue;
        const struct wall_task *t = wall_task_of(&v, &n, &cap, c->c_pid);
        uint64_t on = window > t->off_ns ? window - t->off_ns : 0;
        c->c_cpu_ns = (uint64_t)((unsigned __int128)on * c->c_count / t->samples);
    }
    free(v);
}

void sp_profile_wall_fill(struct sp_profile *p)
{
    for (unsigned i = 0; i < p->ninputs; i++) {
        if (p->inputs[i].pi_hdr.ph_kind != PRAW_KIND_CPU)
            continue;
        for (unsigned j = 0; j < p->ninputs; j++)
            if (p->inputs[j].pi_hdr.ph_kind == PRAW_KIND_OFFCPU &&
                strcmp(p->inputs[j].pi_kernel, p->inputs[i].pi_kernel) == 0) {
                wall_fill_pair(p, i, j);
                break;
            }
    }
}

bool sp_profile_has_kind(const struct sp_profile *p, unsigned kind)
{
    for (unsigned i = 0; i < p->ninputs; i++)
        if (p->inputs[i].pi_hdr.ph_kind == kind)
            return true;
    return false;
}

const char *sp_waker_task(const struct sp_profile *p, const struct sp_chain *c)
{
    if (c->c_wtask[0])
        return c->c_wtask;
    return c->c_waker > 0 ? sp_task_of_pid(p, c->c_input, (uint32_t)c->c_waker) : NULL;
}

const char *sp_task_of_pid(const struct sp_profile *p, unsigned input, uint32_t pid)
{
    for (size_t i = 0; i < p->nchains; i++)
        if (p->chains[i].c_input == input && p->chains[i].c_pid == pid)
            return p->chains[i].c_task;
    return NULL;
}

uint64_t sp_profile_total(const struct sp_profile *p)
{
    uint64_t t = 0;
    for (unsigned i = 0; i < p->ninputs; i++)
        t += p->inputs[i].pi_hdr.ph_samples;
    return t;
}

void sp_profile_name_unknown(struct sp_profile *p)
{
    for (size_t i = 0; i < p->nlocs; i++) {
        struct sp_loc *l = p->locs[i];
        if (l->pl_frames)
            continue;
        char buf[24];
        snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)l->pl_addr);
        l->pl_frames = xrealloc(NULL, 1, sizeof *l->pl_frames);
        memset(l->pl_frames, 0, sizeof *l->pl_frames);
        l->pl_frames[0].pf_func = sp_strdup(p, buf);
        l->pl_nframes = 1;
    }
}

int sp_profile_read_file(const char *path, char **text, size_t *len,
                   char *err, size_t errcap)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errcap, "%s: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = xrealloc(NULL, cap, 1);
    for (;;) {
        size_t got = fread(buf + n, 1, cap - n - 1, f);
        n += got;
        if (n + 1 < cap)
            break;
        cap *= 2;
        buf = xrealloc(buf, cap, 1);
    }
    int bad = ferror(f) ? errno : 0;
    fclose(f);
    if (bad) {
        free(buf);
        snprintf(err, errcap, "%s: %s", path, strerror(bad));
        return -1;
    }
    buf[n] = 0;
    *text = buf;
    *len = n;
    return 0;
}
