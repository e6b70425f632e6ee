/* tools/output/pprof.c: building pprof's Profile message with protobuf-c.
 *
 * pprof refers to every string by its index in one table whose entry 0
 * must be "", and to functions, locations and mappings by non-zero ids:
 * strings and functions are interned here; location ids are the model's.
 *
 * Host pipeline: prefix sp_. */
#include "tools/output/pprof.h"
#include "profile.pb-c.h"
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

static uint64_t hash_str(const char *s, uint64_t seed)
{
    uint64_t h = 14695981039346656037ull ^ seed;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* ---- the builder: string and function tables ------------------------- */

struct fkey {
    int64_t name, file, line;
};

struct builder {
    char **strs;
    size_t nstrs, capstrs;
    size_t *shash;              /* index + 1, open addressing */
    size_t shcap;
    Function **funcs;
    size_t nfuncs, capfuncs;
    size_t *fhash;
    size_t fhcap;
    bool off;                   /* sp_pprof_off, asked once: it walks the inputs */
    bool lock;                  /* a lock profile: Go's mutex profile's types */
};

static void sh_insert(struct builder *b, size_t i)
{
    size_t k = hash_str(b->strs[i], 0) & (b->shcap - 1);
    while (b->shash[k])
        k = (k + 1) & (b->shcap - 1);
    b->shash[k] = i + 1;
}

static int64_t str_id(struct builder *b, const char *s)
{
    if (b->shcap) {
        size_t k = hash_str(s, 0) & (b->shcap - 1);
        for (; b->shash[k]; k = (k + 1) & (b->shcap - 1))
            if (strcmp(b->strs[b->shash[k] - 1], s) == 0)
                return (int64_t)(b->shash[k] - 1);
    }
    if ((b->nstrs + 1) * 2 > b->shcap) {
        free(b->shash);
        b->shcap = b->shcap ? b->shcap * 2 : 256;
        b->shash = sp_xcalloc(b->shcap, sizeof *b->shash);
        for (size_t i = 0; i < b->nstrs; i++)
            sh_insert(b, i);
    }
    b->strs = sp_grow(b->strs, &b->capstrs, b->nstrs + 1, sizeof *b->strs);
    size_t n = strlen(s) + 1;
    b->strs[b->nstrs] = sp_xcalloc(n, 1);
    memcpy(b->strs[b->nstrs], s, n);
    sh_insert(b, b->nstrs);
    return (int64_t)b->nstrs++;
}

static uint64_t fkey_hash(const struct fkey *k)
{
    return (uint64_t)k->name * 0x9e3779b97f4a7c15ull ^
           (uint64_t)k->file * 0xbf58476d1ce4e5b9ull ^ (uint64_t)k->line;
}

static void fh_insert(struct builder *b, size_t i)
{
    struct fkey k = { b->funcs[i]->name, b->funcs[i]->filename,
                      b->funcs[i]->start_line };
    size_t s = fkey_hash(&k) & (b->fhcap - 1);
    while (b->fhash[s])
        s = (s + 1) & (b->fhcap - 1);
    b->fhash[s] = i + 1;
}

static uint64_t func_id(struct builder *b, const struct sp_frame *fr)
{
    struct fkey k = { str_id(b, fr->pf_func),
                      fr->pf_file ? str_id(b, fr->pf_file) : 0,
                      fr->pf_func_line };
    if (b->fhcap) {
        size_t s = fkey_hash(&k) & (b->fhcap - 1);
        for (; b->fhash[s]; s = (s + 1) & (b->fhcap - 1)) {
            Function *f = b->funcs[b->fhash[s] - 1];
            if (f->name == k.name && f->filename == k.file &&
                f->start_line == k.line)
                return f->id;
        }
    }
    if ((b->nfuncs + 1) * 2 > b->fhcap) {
        free(b->fhash);
        b->fhcap = b->fhcap ? b->fhcap * 2 : 256;
        b->fhash = sp_xcalloc(b->fhcap, sizeof *b->fhash);
        for (size_t i = 0; i < b->nfuncs; i++)
            fh_insert(b, i);
    }
    Function *f = sp_xcalloc(1, sizeof *f);
    perftools__profiles__function__init(f);
    f->id = b->nfuncs + 1;
    f->name = f->system_name = k.name;
    f->filename = k.file;
    f->start_line = k.line;
    b->funcs = sp_grow(b->funcs, &b->capfuncs, b->nfuncs + 1, sizeof *b->funcs);
    b->funcs[b->nfuncs] = f;
    fh_insert(b, b->nfuncs++);
    return f->id;
}

/* ---- the message's parts --------------------------------------------- */

static Location *make_location(struct builder *b, const struct sp_loc *l)
{
    Location *loc = sp_xcalloc(1, sizeof *loc);
    perftools__profiles__location__init(loc);
    loc->id = l->pl_id;
    loc->mapping_id = l->pl_map == SP_MAP_REASON ? 0 : l->pl_map + 1;   /* no image's */
    loc->address = l->pl_addr;
    loc->n_line = l->pl_nframes;
    loc->line = sp_xcalloc(l->pl_nframes, sizeof *loc->line);
    for (unsigned i = 0; i < l->pl_nframes; i++) {
        Line *ln = sp_xcalloc(1, sizeof *ln);
        perftools__profiles__line__init(ln);
        ln->function_id = func_id(b, &l->pl_frames[i]);
        ln->line = l->pl_frames[i].pf_line;
        loc->line[i] = ln;
    }
    return loc;
}

static Mapping *make_mapping(struct builder *b, const struct sp_map *m,
                             unsigned i)
{
    Mapping *mp = sp_xcalloc(1, sizeof *mp);
    perftools__profiles__mapping__init(mp);
    mp->id = i + 1;
    mp->memory_start = m->pm_start;
    mp->memory_limit = m->pm_limit;
    mp->filename = str_id(b, m->pm_path);
    mp->build_id = str_id(b, m->pm_build_id);
    mp->has_functions = 1;
    mp->has_filenames = m->pm_dwarf;
    mp->has_line_numbers = m->pm_dwarf;
    mp->has_inline_frames = m->pm_dwarf;
    return mp;
}

static Label *make_label(struct builder *b, const char *key, const char *str)
{
    Label *l = sp_xcalloc(1, sizeof *l);
    perftools__profiles__label__init(l);
    l->key = str_id(b, key);
    l->str = str_id(b, str);
    return l;
}

/* A numeric label carries a unit, named after the key: pprof reads a
 * numeric label with neither a value nor a unit as absent, and pid 0 and
 * cpu 0 are real. Numbers (not strings) make -tagfocus=cpu=0 work. */
static Label *make_num_label(struct builder *b, const char *key, int64_t num)
{
    Label *l = sp_xcalloc(1, sizeof *l);
    perftools__profiles__label__init(l);
    l->key = str_id(b, key);
    l->num = num;
    l->num_unit = str_id(b, key);
    return l;
}

/* A heap profile's view, from its source ("heap inuse rate R" or "heap
 * allocs rate R", uapi/profile_raw.h). */
static bool sp_heap_inuse(const struct sp_input *in)
{
    return strncmp(in->pi_hdr.ph_source, "heap inuse", 10) == 0;
}

/* R from "heap ... rate R", or 0. */
static int64_t sp_heap_rate(const struct sp_input *in)
{
    const char *r = strstr(in->pi_hdr.ph_source, " rate ");
    return r ? strtoll(r + 6, NULL, 10) : 0;
}

/* ---- off-CPU and wall-clock time --------------------------------------
 *
 * A profile holding off-CPU time (`record --off`, `--wall`) has four
 * sample types: samples/count, cpu/nanoseconds, off_cpu/nanoseconds and
 * wall/nanoseconds; a CPU chain's off_cpu is 0, an off-CPU chain's cpu is
 * 0, and wall is either's time. Its off-CPU chains end in their reason
 * as a frame ("[waitq virtio-rx]", a location of no mapping), and carry
 * who woke them as labels: waker (the pid and task, "the tick", or
 * "none"), waker_pid, and waker_stack, the waker's chain root first,
 * joined by ';' (-tagfocus and -tagshow select and show them). */
#define SP_OFF_TYPES 4

static bool sp_pprof_off(const struct sp_profile *p)
{
    return sp_profile_has_kind(p, PRAW_KIND_OFFCPU);
}

static void sp_pprof_off_values(const struct sp_profile *p, const struct sp_chain *c,
                                Sample *s)
{
    s->n_value = SP_OFF_TYPES;
    s->value = sp_xcalloc(SP_OFF_TYPES, sizeof *s->value);
    s->value[0] = (int64_t)c->c_count;
    if (c->c_why) {
        s->value[2] = (int64_t)c->c_weight;
    } else {
        s->value[1] = (int64_t)sp_chain_cpu_ns(p, c);
    }
    s->value[3] = s->value[1] + s->value[2];
}

/* The waker's chain, root first, its frames' names joined by ';'. */
static void sp_pprof_waker_stack(const struct sp_chain *c, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = 0;
    for (unsigned i = c->c_wdepth; i-- > 0 && n < cap;) {
        const struct sp_loc *l = c->c_wlocs[i];
        for (unsigned j = l->pl_nframes; j-- > 0 && n < cap;)
            n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? ";" : "",
                                  l->pl_frames[j].pf_func);
    }
}

static void sp_pprof_off_labels(struct builder *b, const struct sp_profile *p,
                                const struct sp_chain *c, Sample *s)
{
    if (!c->c_why || c->c_lock || !praw_why_blocked(c->c_why))
        return;
    char who[PRAW_TASK_MAX + 24], stack[1024];
    const char *task = sp_waker_task(p, c);
    if (c->c_waker == PRAW_WAKER_NONE)
        snprintf(who, sizeof who, "none");
    else if (c->c_waker == 0)
        snprintf(who, sizeof who, "the tick");
    else
        snprintf(who, sizeof who, "%d %s", c->c_waker, task ? task : "-");
    sp_pprof_waker_stack(c, stack, sizeof stack);
    size_t n = s->n_label;
    s->label = realloc(s->label, (n + 3) * sizeof *s->label);
    if (!s->label) {
        fprintf(stderr, "sonde-prof: out of memory\n");
        exit(2);
    }
    s->label[n++] = make_label(b, "waker", who);
    s->label[n++] = make_num_label(b, "waker_pid", c->c_waker);
    if (stack[0])
        s->label[n++] = make_label(b, "waker_stack", stack);
    s->n_label = n;
}

static Sample *make_sample(struct builder *b, const struct sp_profile *p,
                           const struct sp_chain *c)
{
    const struct sp_input *in = &p->inputs[c->c_input];
    Sample *s = sp_xcalloc(1, sizeof *s);
    perftools__profiles__sample__init(s);
    /* An off-CPU chain's reason is its leaf, a lock chain's lock its root. */
    unsigned r = c->c_reason != NULL, leaf = r && !c->c_lock;
    s->n_location_id = c->c_depth + r;
    s->location_id = sp_xcalloc(c->c_depth + r, sizeof *s->location_id);
    if (r)
        s->location_id[c->c_lock ? c->c_depth : 0] = c->c_reason->pl_id;
    for (unsigned i = 0; i < c->c_depth; i++)
        s->location_id[leaf + i] = c->c_locs[i]->pl_id;     /* leaf first */
    if (b->lock) {
        /* Go's mutex profile: contentions (the waits), delay (ns). */
        s->n_value = 2;
        s->value = sp_xcalloc(2, sizeof *s->value);
        s->value[0] = (int64_t)(c->c_lock ? c->c_objects : 0);
        s->value[1] = (int64_t)(c->c_lock ? c->c_weight : 0);
    } else if (b->off) {
        sp_pprof_off_values(p, c, s);
    } else if (in->pi_hdr.ph_kind == PRAW_KIND_HEAP) {
        /* Go's four: alloc_objects, alloc_space, inuse_objects,
         * inuse_space. A profile is one view, so the other's pair is 0. */
        unsigned at = sp_heap_inuse(in) ? 2 : 0;
        s->n_value = 4;
        s->value = sp_xcalloc(4, sizeof *s->value);
        s->value[at] = (int64_t)c->c_objects;
        s->value[at + 1] = (int64_t)c->c_weight;
    } else {
        s->n_value = 2;
        s->value = sp_xcalloc(2, sizeof *s->value);
        s->value[0] = (int64_t)c->c_count;
        s->value[1] = (int64_t)(c->c_count * in->pi_period_ns);
    }
    s->n_label = 4;
    s->label = sp_xcalloc(4, sizeof *s->label);
    s->label[0] = make_num_label(b, "pid", c->c_pid);
    s->label[1] = make_label(b, "task", c->c_task);
    s->label[2] = make_num_label(b, "cpu", c->c_cpu);
    s->label[3] = make_label(b, "kernel", in->pi_kernel);
    sp_pprof_off_labels(b, p, c, s);
    /* A diff's base counts against: pprof then shows new - base, as its
     * own -diff_base does. */
    for (size_t i = 0; in->pi_negate && i < s->n_value; i++)
        s->value[i] = -s->value[i];
    return s;
}

static ValueType *make_type(struct builder *b, const char *type,
                            const char *unit)
{
    ValueType *v = sp_xcalloc(1, sizeof *v);
    perftools__profiles__value_type__init(v);
    v->type = str_id(b, type);
    v->unit = str_id(b, unit);
    return v;
}

/* One comment per input: what pprof -comments shows. */
static void make_comments(struct builder *b, const struct sp_profile *p, Profile *m)
{
    m->n_comment = p->ninputs;
    m->comment = sp_xcalloc(p->ninputs, sizeof *m->comment);
    for (unsigned i = 0; i < p->ninputs; i++) {
        const struct sp_input *in = &p->inputs[i];
        char c[1024], lost[512] = "";
        if (in->pi_stream)
            snprintf(lost, sizeof lost, ", streamed: %llu records lost on the wire "
                     "(%llu datagrams)%s%s", (unsigned long long)in->pi_lost_records,
                     (unsigned long long)in->pi_lost_dgrams,
                     in->pi_note ? ", " : "", in->pi_note ? in->pi_note : "");
        snprintf(c, sizeof c, "kernel %s: %s, source %s, %u ms, %llu samples, "
                 "%llu dropped, build id %s%s", in->pi_kernel, in->pi_origin,
                 in->pi_hdr.ph_source, in->pi_hdr.ph_ms,
                 (unsigned long long)in->pi_hdr.ph_samples,
                 (unsigned long long)in->pi_hdr.ph_dropped,
                 in->pi_hdr.ph_build_id, lost);
        m->comment[i] = str_id(b, c);
    }
}

/* ---- the whole message ----------------------------------------------- */

static void build(struct builder *b, const struct sp_profile *p, Profile *m)
{
    perftools__profiles__profile__init(m);
    str_id(b, "");              /* index 0 must be the empty string */
    if (p->ninputs && p->inputs[0].pi_hdr.ph_kind == PRAW_KIND_HEAP) {
        /* As Go's heap profiles: pprof's default is the view's space. */
        m->n_sample_type = 4;
        m->sample_type = sp_xcalloc(4, sizeof *m->sample_type);
        m->sample_type[0] = make_type(b, "alloc_objects", "count");
        m->sample_type[1] = make_type(b, "alloc_space", "bytes");
        m->sample_type[2] = make_type(b, "inuse_objects", "count");
        m->sample_type[3] = make_type(b, "inuse_space", "bytes");
        m->period_type = make_type(b, "space", "bytes");
        m->default_sample_type = str_id(b, sp_heap_inuse(&p->inputs[0]) ? "inuse_space"
                                                                          : "alloc_space");
    } else if (b->lock) {
        /* Go's mutex profile's types; its period type is contentions, its
         * period the sampling rate: 1, every wait is counted. */
        m->n_sample_type = 2;
        m->sample_type = sp_xcalloc(2, sizeof *m->sample_type);
        m->sample_type[0] = make_type(b, "contentions", "count");
        m->sample_type[1] = make_type(b, "delay", "nanoseconds");
        m->period_type = make_type(b, "contentions", "count");
        m->default_sample_type = str_id(b, "delay");
    } else if (sp_pprof_off(p)) {
        m->n_sample_type = SP_OFF_TYPES;
        m->sample_type = sp_xcalloc(SP_OFF_TYPES, sizeof *m->sample_type);
        m->sample_type[0] = make_type(b, "samples", "count");
        m->sample_type[1] = make_type(b, "cpu", "nanoseconds");
        m->sample_type[2] = make_type(b, "off_cpu", "nanoseconds");
        m->sample_type[3] = make_type(b, "wall", "nanoseconds");
        m->period_type = make_type(b, "wall", "nanoseconds");
        /* Off-CPU time alone, or with the CPU's half: the wall. */
        m->default_sample_type = str_id(b, sp_profile_has_kind(p, PRAW_KIND_CPU) ? "wall"
                                                                                : "off_cpu");
    } else {
        m->n_sample_type = 2;
        m->sample_type = sp_xcalloc(2, sizeof *m->sample_type);
        m->sample_type[0] = make_type(b, "samples", "count");
        m->sample_type[1] = make_type(b, "cpu", "nanoseconds");
        m->period_type = make_type(b, "cpu", "nanoseconds");
    }
    uint32_t ms = 0;
    for (unsigned i = 0; i < p->ninputs; i++)
        if (p->inputs[i].pi_hdr.ph_ms > ms)
            ms = p->inputs[i].pi_hdr.ph_ms;
    m->period = p->ninputs ? (int64_t)p->inputs[0].pi_period_ns : 0;
    if (p->ninputs && p->inputs[0].pi_hdr.ph_kind == PRAW_KIND_HEAP)
        m->period = sp_heap_rate(&p->inputs[0]);
    if (b->lock)
        m->period = 1;
    m->duration_nanos = (int64_t)ms * 1000000;
    m->n_mapping = p->nmaps;
    m->mapping = sp_xcalloc(p->nmaps, sizeof *m->mapping);
    for (unsigned i = 0; i < p->nmaps; i++)
        m->mapping[i] = make_mapping(b, &p->maps[i], i);
    m->n_location = p->nlocs;
    m->location = sp_xcalloc(p->nlocs, sizeof *m->location);
    for (size_t i = 0; i < p->nlocs; i++)
        m->location[i] = make_location(b, p->locs[i]);
    m->n_sample = p->nchains;
    m->sample = sp_xcalloc(p->nchains, sizeof *m->sample);
    for (size_t i = 0; i < p->nchains; i++)
        m->sample[i] = make_sample(b, p, &p->chains[i]);
    make_comments(b, p, m);
    m->n_function = b->nfuncs;
    m->function = b->funcs;
    m->n_string_table = b->nstrs;
    m->string_table = b->strs;
}

static void release(struct builder *b, Profile *m)
{
    for (size_t i = 0; i < m->n_sample_type; i++)
        free(m->sample_type[i]);
    free(m->sample_type);
    free(m->period_type);
    for (size_t i = 0; i < m->n_mapping; i++)
        free(m->mapping[i]);
    free(m->mapping);
    for (size_t i = 0; i < m->n_location; i++) {
        for (size_t j = 0; j < m->location[i]->n_line; j++)
            free(m->location[i]->line[j]);
        free(m->location[i]->line);
        free(m->location[i]);
    }
    free(m->location);
    for (size_t i = 0; i < m->n_sample; i++) {
        Sample *s = m->sample[i];
        for (size_t j = 0; j < s->n_label; j++)
            free(s->label[j]);
        free(s->label);
        free(s->value);
        free(s->location_id);
        free(s);
    }
    free(m->sample);
    free(m->comment);
    for (size_t i = 0; i < b->nfuncs; i++)
        free(b->funcs[i]);
    free(b->funcs);
    free(b->fhash);
    for (size_t i = 0; i < b->nstrs; i++)
        free(b->strs[i]);
    free(b->strs);
    free(b->shash);
}

uint8_t *sp_pprof_pack(const struct sp_profile *p, size_t *len)
{
    struct builder b = { .off = sp_pprof_off(p),
                         .lock = p->ninputs && p->inputs[0].pi_hdr.ph_kind == PRAW_KIND_LOCK };
    Profile m;
    build(&b, p, &m);
    *len = perftools__profiles__profile__get_packed_size(&m);
    uint8_t *buf = sp_xcalloc(*len, 1);
    perftools__profiles__profile__pack(&m, buf);
    release(&b, &m);
    return buf;
}

/* gzip (not zlib) framing: windowBits 15 + 16. */
int sp_pprof_write(const struct sp_profile *p, FILE *f, char *err, size_t errcap)
{
    size_t len;
    uint8_t *raw = sp_pprof_pack(p, &len);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(raw);
        snprintf(err, errcap, "zlib: cannot start compression");
        return -1;
    }
    uLong cap = deflateBound(&z, (uLong)len);
    uint8_t *gz = sp_xcalloc(cap, 1);
    z.next_in = raw;
    z.avail_in = (uInt)len;
    z.next_out = gz;
    z.avail_out = (uInt)cap;
    int rc = deflate(&z, Z_FINISH);
    size_t out = z.total_out;
    deflateEnd(&z);
    free(raw);
    if (rc != Z_STREAM_END) {
        free(gz);
        snprintf(err, errcap, "zlib: compression failed (%d)", rc);
        return -1;
    }
    size_t wrote = fwrite(gz, 1, out, f);
    free(gz);
    if (wrote != out) {
        snprintf(err, errcap, "write error");
        return -1;
    }
    return 0;
}
