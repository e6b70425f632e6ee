/* tools/model/pprof_read.c: a pprof profile read back into the model
 * (tools/model/pprof_read.h).
 *
 * zlib inflates (gzip framing, or zlib's), protobuf-c unpacks, and then
 * every index the message holds is checked before it is used: a string
 * index against the table, a function, location or mapping id against
 * theirs. Nothing from the file is trusted to be in range.
 *
 * Host pipeline: prefix sp_. */
#include "tools/model/pprof_read.h"
#include "profile.pb-c.h"
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Function Function;

/* An inflated profile larger than RD_MAX_BYTES is refused: a profile of
 * thousands of distinct stacks (serve's default bound is 8192) comes
 * nowhere near it, and a small file must not fill memory. What
 * protobuf-c allocates to unpack it is budgeted too (RD_MAX_UNPACKED,
 * through its allocator): an empty message is 2 bytes on the wire and
 * about 90 unpacked, so 8 MiB of them would be 380 MiB. The budget, 32
 * times the cap, holds a million locations. */
#define RD_MAX_BYTES    (8u << 20)
#define RD_MAX_UNPACKED (256u << 20)

/* id -> index of one table (locations, functions, mappings): open
 * addressing over a power of two at least twice the entries. An id given
 * twice is found at its first entry, as a scan from the start finds it;
 * id 0 is no entry (pprof's "none"). */
struct rd_id_slot {
    uint64_t id;
    size_t index;               /* + 1; 0: a free slot */
};

struct rd_ids {
    struct rd_id_slot *slot;
    size_t mask;
};

struct rd {
    const Profile *m;
    struct sp_profile *p;
    const char *origin;
    unsigned map0;              /* the model's map of the file's first mapping */
    unsigned kind;              /* PRAW_KIND_* */
    int ix_count, ix_weight, ix_objects;    /* value indices; -1: none */
    struct sp_loc **locs[2];    /* per file location, as leaf [0] or caller [1] */
    struct rd_ids loc_ids, fn_ids, map_ids;
    char *err;
    size_t cap;
};

static int rd_fail(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int rd_fail(struct rd *r, const char *fmt, ...)
{
    char why[SP_ERR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    snprintf(r->err, r->cap, "%s: %s", r->origin, why);
    return -1;
}

/* gzip or zlib framing (windowBits 15 + 32: either, told by the header). */
static int rd_inflate(const void *gz, size_t len, uint8_t **out, size_t *outlen,
                      char *why, size_t cap)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 15 + 32) != Z_OK) {
        snprintf(why, cap, "zlib: cannot start decompression");
        return -1;
    }
    size_t n = 0, room = len * 4 + 4096;
    uint8_t *buf = NULL;
    z.next_in = (Bytef *)gz;
    z.avail_in = (uInt)len;
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
        if (room > RD_MAX_BYTES)
            room = RD_MAX_BYTES;
        buf = sp_grow(buf, &n, room, 1);
        z.next_out = buf + z.total_out;
        z.avail_out = (uInt)(n - z.total_out);
        rc = inflate(&z, Z_NO_FLUSH);
        if (rc == Z_STREAM_END)
            break;
        if (rc != Z_OK && !(rc == Z_BUF_ERROR && z.avail_out == 0)) {
            snprintf(why, cap, "not a gzip-compressed pprof profile (zlib: %s)",
                     z.msg ? z.msg : rc == Z_BUF_ERROR ? "truncated" : "bad data");
            break;
        }
        if (z.avail_out == 0 && n >= RD_MAX_BYTES) {
            snprintf(why, cap, "inflates to more than %u MiB (the most a profile may hold): "
                     "not a profile Sonde wrote", RD_MAX_BYTES >> 20);
            rc = Z_MEM_ERROR;
            break;
        }
        room = n * 2;
    }
    *outlen = z.total_out;
    inflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(buf);
        return -1;
    }
    *out = buf;
    return 0;
}

/* protobuf-c's allocations for one unpack, counted against a budget:
 * each block carries its size before it, so a free gives it back. */
struct rd_budget {
    size_t left;
    bool over;
};

union rd_block {
    size_t size;
    max_align_t align;
};

static void *rd_alloc(void *ctx, size_t size)
{
    struct rd_budget *b = ctx;
    if (b->left < sizeof(union rd_block) || size > b->left - sizeof(union rd_block)) {
        b->over = true;
        return NULL;
    }
    union rd_block *blk = malloc(sizeof *blk + size);
    if (!blk)
        return NULL;
    blk->size = sizeof *blk + size;
    b->left -= blk->size;
    return blk + 1;
}

static void rd_free(void *ctx, void *ptr)
{
    struct rd_budget *b = ctx;
    if (!ptr)
        return;
    union rd_block *blk = (union rd_block *)ptr - 1;
    b->left += blk->size;
    free(blk);
}

static const char *rd_str(const struct rd *r, int64_t i)
{
    return i >= 0 && (uint64_t)i < r->m->n_string_table ? r->m->string_table[i] : NULL;
}

/* The index of the sample type named type/unit, or -1. */
static int rd_type(const struct rd *r, const char *type, const char *unit)
{
    for (size_t i = 0; i < r->m->n_sample_type; i++) {
        const char *t = rd_str(r, r->m->sample_type[i]->type);
        const char *u = rd_str(r, r->m->sample_type[i]->unit);
        if (t && u && strcmp(t, type) == 0 && strcmp(u, unit) == 0)
            return (int)i;
    }
    return -1;
}

/* Any sample with a value at index i. */
static bool rd_has_values(const struct rd *r, int i)
{
    for (size_t k = 0; k < r->m->n_sample; k++)
        if (r->m->sample[k]->n_value > (size_t)i && r->m->sample[k]->value[i])
            return true;
    return false;
}

/* The kind from the sample types, the value indices, and the input's
 * source as the raw profile would name it. */
static int rd_kind(struct rd *r, struct sp_input *in)
{
    const Profile *m = r->m;
    int ao = rd_type(r, "alloc_objects", "count"), as = rd_type(r, "alloc_space", "bytes");
    int io = rd_type(r, "inuse_objects", "count"), is = rd_type(r, "inuse_space", "bytes");
    int samples = rd_type(r, "samples", "count"), cpu = rd_type(r, "cpu", "nanoseconds");
    int off = rd_type(r, "off_cpu", "nanoseconds");
    int cont = rd_type(r, "contentions", "count"), delay = rd_type(r, "delay", "nanoseconds");
    in->pi_period_ns = m->period > 0 ? (uint64_t)m->period : 0;
    if (ao >= 0 && as >= 0 && io >= 0 && is >= 0) {
        const char *def = rd_str(r, m->default_sample_type);
        bool inuse = def && *def ? strncmp(def, "inuse_", 6) == 0
                                 : rd_has_values(r, is) || !rd_has_values(r, as);
        r->kind = PRAW_KIND_HEAP;
        r->ix_objects = inuse ? io : ao;
        r->ix_weight = inuse ? is : as;
        r->ix_count = -1;
        snprintf(in->pi_hdr.ph_source, sizeof in->pi_hdr.ph_source, "heap %s rate %" PRId64,
                 inuse ? "inuse" : "allocs", m->period);
        in->pi_period_ns = 0;
    } else if (cont >= 0 && delay >= 0) {
        /* Go's mutex profile, as record --lock writes it: a chain counts
         * its waits (its releases are not in pprof). */
        r->kind = PRAW_KIND_LOCK;
        r->ix_count = r->ix_objects = cont;
        r->ix_weight = delay;
        snprintf(in->pi_hdr.ph_source, sizeof in->pi_hdr.ph_source, "locks");
        in->pi_period_ns = 0;
    } else if (samples >= 0 && off >= 0) {
        r->kind = PRAW_KIND_OFFCPU;
        r->ix_count = samples;
        r->ix_weight = off;
        r->ix_objects = -1;
        snprintf(in->pi_hdr.ph_source, sizeof in->pi_hdr.ph_source, "pprof off_cpu");
    } else if (samples >= 0 && cpu >= 0 && m->n_sample_type == 2) {
        r->kind = PRAW_KIND_CPU;
        r->ix_count = r->ix_weight = samples;
        r->ix_objects = -1;
        if (!in->pi_period_ns)
            return rd_fail(r, "a CPU profile with no period: cannot weigh a sample");
        snprintf(in->pi_hdr.ph_source, sizeof in->pi_hdr.ph_source,
                 "pprof period %" PRIu64 " ns", in->pi_period_ns);
    } else {
        char types[256] = "";
        for (size_t i = 0; i < m->n_sample_type && strlen(types) < 200; i++) {
            const char *t = rd_str(r, m->sample_type[i]->type);
            const char *u = rd_str(r, m->sample_type[i]->unit);
            snprintf(types + strlen(types), sizeof types - strlen(types), "%s%s/%s",
                     i ? ", " : "", t ? t : "?", u ? u : "?");
        }
        return rd_fail(r, "sample types [%s] are none of Sonde's kinds (cpu: samples/count, "
                       "cpu/nanoseconds; off-CPU: samples/count, off_cpu/nanoseconds; heap: "
                       "alloc_objects, alloc_space, inuse_objects, inuse_space; lock: "
                       "contentions/count, delay/nanoseconds)", types);
    }
    in->pi_hdr.ph_kind = (uint8_t)r->kind;
    return 0;
}

/* Each mapping becomes a map of the model, its build id and range. */
static int rd_maps(struct rd *r, struct sp_input *in)
{
    const Profile *m = r->m;
    if (m->n_mapping == 0)
        return rd_fail(r, "no mapping: nothing says which kernel it profiled (its build id)");
    r->map0 = r->p->nmaps;
    for (size_t i = 0; i < m->n_mapping; i++) {
        const char *file = rd_str(r, m->mapping[i]->filename);
        const char *bid = rd_str(r, m->mapping[i]->build_id);
        if (!file || !bid)
            return rd_fail(r, "mapping %zu: a string index out of the table", i + 1);
        if (strlen(bid) > PRAW_BUILD_ID_HEX)
            return rd_fail(r, "mapping's build id '%.60s' is longer than %d characters: "
                           "not a kernel Sonde profiled", bid, PRAW_BUILD_ID_HEX);
        unsigned k = sp_profile_add_map(r->p, *file ? file : r->origin);
        struct sp_map *mp = &r->p->maps[k];
        snprintf(mp->pm_build_id, sizeof mp->pm_build_id, "%s", bid);
        mp->pm_start = m->mapping[i]->memory_start;
        mp->pm_limit = m->mapping[i]->memory_limit;
        mp->pm_dwarf = m->mapping[i]->has_line_numbers;
    }
    snprintf(in->pi_hdr.ph_build_id, sizeof in->pi_hdr.ph_build_id, "%s",
             r->p->maps[r->map0].pm_build_id);
    return 0;
}

static size_t rd_ids_hash(uint64_t id, size_t mask)
{
    return (size_t)((id * 0x9e3779b97f4a7c15ull) >> 20) & mask;
}

/* t over n entries, each one's id from id_at (the tables' messages differ
 * in type, not in their id). */
static void rd_ids_build(struct rd_ids *t, size_t n, uint64_t (*id_at)(const Profile *, size_t),
                         const Profile *m)
{
    size_t cap = 16;
    while (cap < 2 * n)
        cap *= 2;
    t->slot = sp_xcalloc(cap, sizeof *t->slot);
    t->mask = cap - 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t id = id_at(m, i);
        size_t h = rd_ids_hash(id, t->mask);
        while (id && t->slot[h].index && t->slot[h].id != id)
            h = (h + 1) & t->mask;
        if (id && !t->slot[h].index)
            t->slot[h] = (struct rd_id_slot){ id, i + 1 };
    }
}

static void rd_ids_free(struct rd_ids *t)
{
    free(t->slot);
    t->slot = NULL;
}

/* The index of the entry with id, or n when there is none. */
static size_t rd_ids_find(const struct rd_ids *t, uint64_t id, size_t n)
{
    if (!t->slot)
        return n;
    for (size_t h = rd_ids_hash(id, t->mask); id && t->slot[h].index; h = (h + 1) & t->mask)
        if (t->slot[h].id == id)
            return t->slot[h].index - 1;
    return n;
}

static uint64_t loc_id(const Profile *m, size_t i) { return m->location[i]->id; }
static uint64_t fn_id(const Profile *m, size_t i) { return m->function[i]->id; }
static uint64_t map_id(const Profile *m, size_t i) { return m->mapping[i]->id; }

/* The frames of a file location, innermost first, as its lines are. */
static int rd_name(struct rd *r, const Location *fl, struct sp_loc *l)
{
    l->pl_frames = sp_xcalloc(fl->n_line ? fl->n_line : 1, sizeof *l->pl_frames);
    l->pl_nframes = 0;
    for (size_t i = 0; i < fl->n_line; i++) {
        size_t fi = rd_ids_find(&r->fn_ids, fl->line[i]->function_id, r->m->n_function);
        const Function *f = fi < r->m->n_function ? r->m->function[fi] : NULL;
        const char *name = f ? rd_str(r, f->name) : NULL;
        const char *file = f ? rd_str(r, f->filename) : NULL;
        if (!name || !file)
            return rd_fail(r, "location %" PRIu64 ": a line names a function or string "
                           "not in its table", fl->id);
        struct sp_frame *fr = &l->pl_frames[l->pl_nframes++];
        fr->pf_func = sp_strdup(r->p, name);
        fr->pf_file = *file ? sp_strdup(r->p, file) : NULL;
        fr->pf_line = fl->line[i]->line > 0 ? (unsigned)fl->line[i]->line : 0;
        fr->pf_func_line = f->start_line > 0 ? (unsigned)f->start_line : 0;
    }
    if (l->pl_nframes == 0) {
        /* No function known: the address, as an unsymbolized raw frame. */
        char buf[24];
        snprintf(buf, sizeof buf, "0x%" PRIx64, fl->address);
        l->pl_frames[0].pf_func = sp_strdup(r->p, buf);
        l->pl_nframes = 1;
    }
    return 0;
}

/* The model's location for file location id as leaf (ret false) or
 * caller, named once. */
static struct sp_loc *rd_loc(struct rd *r, uint64_t id, bool ret)
{
    const Profile *m = r->m;
    size_t idx = rd_ids_find(&r->loc_ids, id, m->n_location);
    if (idx == m->n_location) {
        rd_fail(r, "a sample names location %" PRIu64 ", which is not in the file", id);
        return NULL;
    }
    struct sp_loc **slot = &r->locs[ret][idx];
    if (*slot)
        return *slot;
    const Location *fl = m->location[idx];
    size_t mi = fl->mapping_id ? rd_ids_find(&r->map_ids, fl->mapping_id, m->n_mapping) : 0;
    if (mi == m->n_mapping) {
        rd_fail(r, "location %" PRIu64 " names mapping %" PRIu64 ", which is not in the file",
                id, fl->mapping_id);
        return NULL;
    }
    /* A location without an address (other tools write them) is told
     * apart by its id. */
    uint64_t addr = fl->address ? fl->address : 1ull << 63 | fl->id;
    struct sp_loc *l = sp_loc_get(r->p, r->map0 + (unsigned)mi, addr, ret);
    if (!l->pl_frames && rd_name(r, fl, l))
        return NULL;
    return *slot = l;
}

/* pid and cpu (numbers), task (a string), an off-CPU chain's waker_pid;
 * others, kernel among them, are the diff's own business (a waker's
 * chain is not read back: the diff compares the waiting chains). */
static int rd_labels(struct rd *r, const Sample *s, struct sp_chain *c)
{
    snprintf(c->c_task, sizeof c->c_task, "-");
    for (size_t i = 0; i < s->n_label; i++) {
        const char *key = rd_str(r, s->label[i]->key), *str = rd_str(r, s->label[i]->str);
        if (!key || !str)
            return rd_fail(r, "a label's string index is out of the table");
        if (strcmp(key, "pid") == 0 && s->label[i]->num >= 0 && s->label[i]->num <= INT32_MAX)
            c->c_pid = (uint32_t)s->label[i]->num;
        else if (strcmp(key, "cpu") == 0 && s->label[i]->num >= 0 && s->label[i]->num < 4096)
            c->c_cpu = (uint32_t)s->label[i]->num;
        else if (strcmp(key, "task") == 0 && *str)
            snprintf(c->c_task, sizeof c->c_task, "%s", str);
        else if (strcmp(key, "waker_pid") == 0 && c->c_why && s->label[i]->num >= 0 &&
                 s->label[i]->num <= INT32_MAX)
            c->c_waker = (int32_t)s->label[i]->num;
    }
    return 0;
}

static int64_t rd_value(const Sample *s, int i)
{
    return i >= 0 && (size_t)i < s->n_value ? s->value[i] : 0;
}

/* An off-CPU chain's leaf is its reason, "[WHY]" or "[WHY NAME]" (the
 * writer's, tools/output/pprof.c): the reason's number, and its name in
 * name (cap bytes), or 0 when the leaf is no reason (a wall profile's
 * CPU half). */
static unsigned rd_reason(const struct sp_loc *leaf, char *name, size_t cap)
{
    const char *f = leaf->pl_frames[0].pf_func;
    size_t n = strlen(f);
    name[0] = 0;
    if (leaf->pl_nframes != 1 || n < 3 || f[0] != '[' || f[n - 1] != ']')
        return 0;
    for (unsigned why = 1; why <= PRAW_WHY_MAX; why++) {
        const char *w = praw_why_name(why);
        size_t k = strlen(w);
        if (strncmp(f + 1, w, k) != 0)
            continue;
        if (f[1 + k] == ']' && 2 + k == n)
            return why;
        if (f[1 + k] == ' ' && n - k - 3 >= 1 && n - k - 3 < cap) {
            memcpy(name, f + 2 + k, n - k - 3);
            name[n - k - 3] = 0;
            return why;
        }
    }
    return 0;
}

/* The chain's frames from the sample's locations (leaf first); an
 * off-CPU sample's leaf, when it is a reason, becomes the chain's reason
 * (kept as the model keeps it, below the frames) and its weight the
 * off-CPU nanoseconds; without one it is a wall profile's CPU half and
 * weighs its count, as a CPU chain. */
static int rd_frames(struct rd *r, struct sp_chain *c, const Sample *s)
{
    struct sp_loc *locs[PRAW_FRAMES + 1];
    unsigned n = (unsigned)s->n_location_id, skip = 0;
    for (unsigned i = 0; i < n; i++)
        if (!(locs[i] = rd_loc(r, s->location_id[i], i > 0)))
            return -1;
    char name[PRAW_NAME_MAX + 1];
    if (r->kind == PRAW_KIND_LOCK) {
        /* The lock is the root: "[mutex NAME]" or "[spin NAME]", above the
         * holder's chain at its release. */
        unsigned why = n > 1 ? rd_reason(locs[n - 1], name, sizeof name) : 0;
        if ((why != PRAW_WHY_MUTEX && why != PRAW_WHY_SPIN) || !name[0])
            return rd_fail(r, "a lock sample's root is no lock (\"[mutex NAME]\" or "
                           "\"[spin NAME]\", above the holder's chain)");
        c->c_lock = true;
        c->c_why = (uint8_t)why;
        snprintf(c->c_name, sizeof c->c_name, "%s", name);
        c->c_reason = sp_loc_reason(r->p, why, name);
        c->c_waker = PRAW_WAKER_NONE;
        if (n - 1 > PRAW_FRAMES)
            return rd_fail(r, "a sample has %u frames besides its lock (at most %d)", n - 1,
                           PRAW_FRAMES);
        c->c_depth = n - 1;
        memcpy(c->c_locs, locs, c->c_depth * sizeof *locs);
        return 0;
    }
    unsigned why = r->kind == PRAW_KIND_OFFCPU ? rd_reason(locs[0], name, sizeof name) : 0;
    if (why) {
        c->c_why = (uint8_t)why;
        snprintf(c->c_name, sizeof c->c_name, "%s", name);
        c->c_reason = sp_loc_reason(r->p, why, name);
        c->c_waker = PRAW_WAKER_NONE;
        skip = 1;
    } else if (r->kind == PRAW_KIND_OFFCPU) {
        c->c_weight = c->c_count;
    }
    if (n - skip > PRAW_FRAMES)
        return rd_fail(r, "a sample has %u frames besides any reason (at most %d)", n - skip,
                       PRAW_FRAMES);
    c->c_depth = n - skip;
    memcpy(c->c_locs, locs + skip, c->c_depth * sizeof *locs);
    return 0;
}

static int rd_sample(struct rd *r, const Sample *s, unsigned input)
{
    /* An off-CPU chain has its reason as one more location. */
    size_t most = PRAW_FRAMES + (r->kind == PRAW_KIND_OFFCPU || r->kind == PRAW_KIND_LOCK);
    if (s->n_location_id < 1 || s->n_location_id > most)
        return rd_fail(r, "a sample has %zu locations (Sonde's chains have 1 to %zu)",
                       s->n_location_id, most);
    int64_t count = rd_value(s, r->ix_count), weight = rd_value(s, r->ix_weight);
    int64_t objects = rd_value(s, r->ix_objects);
    if (count < 0 || weight < 0 || objects < 0)
        return rd_fail(r, "negative sample values: a differential profile (diff's own "
                       ".pb.gz) cannot be BASE or NEW");
    struct sp_profile *p = r->p;
    p->chains = sp_grow(p->chains, &p->capchains, p->nchains + 1, sizeof *p->chains);
    struct sp_chain *c = &p->chains[p->nchains];
    memset(c, 0, sizeof *c);
    /* A heap sample's count of samples is not in pprof: one per sample. */
    c->c_count = r->ix_count >= 0 ? (uint64_t)count : 1;
    c->c_weight = (uint64_t)weight;
    c->c_objects = r->ix_objects >= 0 ? (uint64_t)objects : c->c_count;
    c->c_input = input;
    if (rd_frames(r, c, s) || rd_labels(r, s, c))
        return -1;
    p->nchains++;
    p->inputs[input].pi_hdr.ph_samples += c->c_count;
    return 0;
}

static int rd_profile(struct rd *r, const char *kernel)
{
    struct sp_profile *p = r->p;
    size_t cap = p->ninputs;
    p->inputs = sp_grow(p->inputs, &cap, p->ninputs + 1, sizeof *p->inputs);
    unsigned input = p->ninputs;
    struct sp_input *in = &p->inputs[input];
    memset(in, 0, sizeof *in);
    in->pi_origin = sp_strdup(p, r->origin);
    in->pi_kernel = sp_strdup(p, kernel);
    if (r->m->n_string_table == 0 || r->m->string_table[0][0])
        return rd_fail(r, "string table entry 0 is not \"\": not a pprof profile");
    if (rd_kind(r, in) || rd_maps(r, in))
        return -1;
    in->pi_map = r->map0;
    in->pi_hdr.ph_ms = r->m->duration_nanos > 0 && r->m->duration_nanos / 1000000 <= UINT32_MAX
                       ? (uint32_t)(r->m->duration_nanos / 1000000) : 0;
    rd_ids_build(&r->loc_ids, r->m->n_location, loc_id, r->m);
    rd_ids_build(&r->fn_ids, r->m->n_function, fn_id, r->m);
    rd_ids_build(&r->map_ids, r->m->n_mapping, map_id, r->m);
    r->locs[0] = sp_xcalloc(r->m->n_location + 1, sizeof *r->locs[0]);
    r->locs[1] = sp_xcalloc(r->m->n_location + 1, sizeof *r->locs[1]);
    size_t before = p->nchains;
    p->ninputs++;               /* rd_sample counts into it */
    for (size_t i = 0; i < r->m->n_sample; i++) {
        if (rd_sample(r, r->m->sample[i], input)) {
            p->nchains = before;    /* its maps and locations stay, unused */
            p->ninputs--;
            return -1;
        }
    }
    return 0;
}

int sp_pprof_read_mem(struct sp_profile *p, const void *gz, size_t len, const char *origin,
                      const char *kernel, char *err, size_t errcap)
{
    uint8_t *raw;
    size_t n;
    char why[SP_ERR_MAX];
    if (rd_inflate(gz, len, &raw, &n, why, sizeof why)) {
        snprintf(err, errcap, "%s: %s", origin, why);
        return -1;
    }
    struct rd_budget b = { .left = RD_MAX_UNPACKED };
    ProtobufCAllocator alloc = { rd_alloc, rd_free, &b };
    Profile *m = perftools__profiles__profile__unpack(&alloc, n, raw);
    free(raw);
    if (!m && b.over) {
        snprintf(err, errcap, "%s: unpacks to more than %u MiB (a profile of %zu bytes): not "
                 "a profile Sonde wrote", origin, RD_MAX_UNPACKED >> 20, n);
        return -1;
    }
    if (!m) {
        snprintf(err, errcap, "%s: not a pprof profile (its protobuf does not decode as "
                 "profile.proto's Profile)", origin);
        return -1;
    }
    struct rd r = { .m = m, .p = p, .origin = origin, .err = err, .cap = errcap };
    int rc = rd_profile(&r, kernel);
    free(r.locs[0]);
    free(r.locs[1]);
    rd_ids_free(&r.loc_ids);
    rd_ids_free(&r.fn_ids);
    rd_ids_free(&r.map_ids);
    perftools__profiles__profile__free_unpacked(m, &alloc);
    return rc;
}

int sp_pprof_read(struct sp_profile *p, const char *path, const char *kernel,
                  char *err, size_t errcap)
{
    char *data;
    size_t len;
    if (sp_profile_read_file(path, &data, &len, err, errcap))
        return -1;
    int rc = sp_pprof_read_mem(p, data, len, path, kernel, err, errcap);
    free(data);
    return rc;
}
