/* tools/output/flame_json.c: chains to the web pages' flame-graph tree, and
 * the tree to JSON (jansson) fit to inline in a page or to serve.
 * Host pipeline: prefix sp_. */
#include "tools/output/flame_json.h"
#include <stdlib.h>
#include <string.h>

void sp_fj_init(struct sp_fj_tree *t)
{
    memset(t, 0, sizeof *t);
    t->v = sp_grow(NULL, &t->cap, 1, sizeof *t->v);
    memset(&t->v[0], 0, sizeof t->v[0]);
    t->v[0].fn_name = "all";
    t->n = 1;
}

void sp_fj_free(struct sp_fj_tree *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->v[i].fn_lines);
    free(t->v);
    free(t->by_name);
    memset(t, 0, sizeof *t);
}

static size_t name_hash(size_t parent, const char *name)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)parent * 0x9e3779b97f4a7c15ull;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = (h ^ *c) * 1099511628211ull;
    return (size_t)(h ^ h >> 29);
}

/* The slot of (parent, name): the node's, or the free one it would take. */
static size_t *name_slot(const struct sp_fj_tree *t, size_t parent, const char *name)
{
    size_t mask = t->nslots - 1;
    for (size_t h = name_hash(parent, name) & mask;; h = (h + 1) & mask) {
        size_t c = t->by_name[h];
        if (!c || (t->v[c].fn_parent == parent && strcmp(t->v[c].fn_name, name) == 0))
            return &t->by_name[h];
    }
}

/* Room for one more node in the table: twice the slots, all put again. */
static void name_room(struct sp_fj_tree *t)
{
    if (2 * (t->n + 1) <= t->nslots)
        return;
    free(t->by_name);
    t->nslots = t->nslots ? 2 * t->nslots : 64;
    t->by_name = sp_xcalloc(t->nslots, sizeof *t->by_name);
    for (size_t i = 1; i < t->n; i++)
        *name_slot(t, t->v[i].fn_parent, t->v[i].fn_name) = i;
}

size_t sp_fj_step(struct sp_fj_tree *t, size_t parent, const char *name,
                  enum sp_fj_kind kind, uint64_t w, uint64_t b)
{
    name_room(t);
    size_t *slot = name_slot(t, parent, name), c = *slot;
    if (!c) {
        t->v = sp_grow(t->v, &t->cap, t->n + 1, sizeof *t->v);
        c = *slot = t->n++;
        struct sp_fj_node *x = &t->v[c];
        memset(x, 0, sizeof *x);
        x->fn_name = name;
        x->fn_kind = kind;
        x->fn_parent = parent;
        struct sp_fj_node *up = &t->v[parent];
        if (up->fn_last)
            t->v[up->fn_last].fn_next = c;
        else
            up->fn_first = c;
        up->fn_last = c;
    }
    struct sp_fj_node *x = &t->v[c];
    x->fn_v += w;
    x->fn_b += b;
    if (kind == SP_FJ_INLINED)
        x->fn_inl += w;
    return c;
}

static void add_line(struct sp_fj_node *x, const struct sp_frame *fr, uint64_t w)
{
    if (!fr->pf_file)
        return;
    if (!x->fn_file)
        x->fn_file = fr->pf_file;
    if (strcmp(x->fn_file, fr->pf_file) != 0 || !fr->pf_line)
        return;                 /* a second file (a macro's?): its lines would mislead */
    for (size_t i = 0; i < x->fn_nlines; i++)
        if (x->fn_lines[i].fl_line == fr->pf_line) {
            x->fn_lines[i].fl_w += w;
            return;
        }
    x->fn_lines = sp_grow(x->fn_lines, &x->fn_caplines, x->fn_nlines + 1, sizeof *x->fn_lines);
    x->fn_lines[x->fn_nlines++] = (struct sp_fj_line){ fr->pf_line, w };
}

/* Root first, as tools/output/folded.c orders a stack: [kernel;] [task;]
 * (as by says), the outermost caller down to the pc, each address's frames outermost
 * first; an off-CPU chain's reason ("[waitq NAME]") below them all, a
 * lock chain's lock ("[mutex NAME]") above the task. In an
 * address's frames (innermost first) all but the last are inlined into
 * it. */
static void add_chain(struct sp_fj_tree *t, const struct sp_profile *p,
                      const struct sp_chain *c, enum sp_fj_by by)
{
    uint64_t w = c->c_weight;
    size_t at = 0;
    t->v[0].fn_v += w;
    if (by == SP_FJ_BY_KERNEL)
        at = sp_fj_step(t, at, p->inputs[c->c_input].pi_kernel, SP_FJ_KERNEL, w, 0);
    if (c->c_lock)
        at = sp_fj_step(t, at, c->c_reason->pl_frames[0].pf_func, SP_FJ_FUNC, w, 0);
    if (by != SP_FJ_BY_FRAME)
        at = sp_fj_step(t, at, c->c_task, SP_FJ_TASK, w, 0);
    for (unsigned i = c->c_depth; i-- > 0;) {
        const struct sp_loc *l = c->c_locs[i];
        for (unsigned j = l->pl_nframes; j-- > 0;) {
            const struct sp_frame *fr = &l->pl_frames[j];
            at = sp_fj_step(t, at, fr->pf_func,
                            j + 1 < l->pl_nframes ? SP_FJ_INLINED : SP_FJ_FUNC, w, 0);
            add_line(&t->v[at], fr, w);
        }
    }
    if (c->c_reason && !c->c_lock)
        sp_fj_step(t, at, c->c_reason->pl_frames[0].pf_func, SP_FJ_FUNC, w, 0);
}

void sp_fj_build(const struct sp_profile *p, enum sp_fj_by by, struct sp_fj_tree *t)
{
    sp_fj_init(t);
    for (size_t i = 0; i < p->nchains; i++)
        add_chain(t, p, &p->chains[i], by);
}

void sp_fj_build_diff(const struct sp_diff *d, struct sp_fj_tree *t)
{
    sp_fj_init(t);
    for (size_t i = 0; i < d->n; i++) {
        const struct sp_diff_row *r = &d->v[i];
        size_t at = 0;
        t->v[0].fn_v += r->dr_new;
        t->v[0].fn_b += r->dr_base;
        for (unsigned k = 0; k < r->dr_n; k++)
            at = sp_fj_step(t, at, r->dr_names[k], k ? SP_FJ_FUNC : SP_FJ_TASK,
                            r->dr_new, r->dr_base);
    }
}

const char *sp_fj_unit(unsigned kind)
{
    return kind == PRAW_KIND_HEAP ? "bytes"
         : kind == PRAW_KIND_OFFCPU || kind == PRAW_KIND_LOCK ? "ns" : "samples";
}

const char *sp_fj_view(const struct sp_input *in)
{
    switch (in->pi_hdr.ph_kind) {
    case PRAW_KIND_OFFCPU:
        return "off-CPU time";
    case PRAW_KIND_LOCK:
        return "lock delay";
    case PRAW_KIND_HEAP:
        return strncmp(in->pi_hdr.ph_source, "heap inuse", 10) == 0 ? "heap in use"
                                                                    : "heap allocations";
    default:
        return "CPU samples";
    }
}

/* The code point of the UTF-8 sequence at s, its length in *n; -1 for a
 * byte that starts none (a stray continuation, an overlong form, a
 * surrogate, beyond U+10FFFF). */
static long utf8_next(const unsigned char *s, size_t *n)
{
    unsigned c = s[0], len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    static const unsigned long min[] = { 0, 0, 0x80, 0x800, 0x10000 };
    *n = 1;
    if (len == 1 || c > 0xf4)
        return -1;
    unsigned long cp = c & (0x7f >> len);
    for (unsigned i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return -1;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return -1;
    *n = len;
    return (long)cp;
}

json_t *sp_fj_string(const char *str)
{
    /* jansson takes valid UTF-8 only: each bad byte becomes U+FFFD. */
    const unsigned char *s = (const unsigned char *)str;
    size_t n = strlen(str), len = 0;
    char *buf = sp_xcalloc(3 * n + 1, 1);
    while (*s) {
        size_t k = 1;
        if (*s < 0x80 || utf8_next(s, &k) >= 0) {
            memcpy(buf + len, s, k);
            len += k;
        } else {
            memcpy(buf + len, "\xef\xbf\xbd", 3);
            len += 3;
        }
        s += k;
    }
    json_t *j = json_stringn(buf, len);
    free(buf);
    return j;
}

/* What jansson leaves raw that must not be inside <script>: "<", ">"
 * and "&" (so no "</script>" or "<!--" can end or change the element)
 * and DEL. They occur only inside strings, so each byte is replaced on
 * its own, in jansson's own \uXXXX form. */
static int dump_safe(const char *buf, size_t size, void *data)
{
    FILE *f = data;
    size_t from = 0;
    for (size_t i = 0; i < size; i++) {
        unsigned char c = (unsigned char)buf[i];
        if (c != '<' && c != '>' && c != '&' && c != 0x7f)
            continue;
        if (fwrite(buf + from, 1, i - from, f) != i - from || fprintf(f, "\\u%04X", c) < 0)
            return -1;
        from = i + 1;
    }
    return fwrite(buf + from, 1, size - from, f) == size - from ? 0 : -1;
}

int sp_fj_dump(json_t *j, FILE *f)
{
    int rc = j ? json_dump_callback(j, dump_safe, f, JSON_COMPACT | JSON_ENSURE_ASCII |
                                    JSON_PRESERVE_ORDER | JSON_ENCODE_ANY) : -1;
    json_decref(j);
    return rc || ferror(f) ? -1 : 0;
}

void sp_fj_str(FILE *f, const char *str)
{
    (void)sp_fj_dump(sp_fj_string(str), f);
}

static int line_cmp(const void *a, const void *b)
{
    const struct sp_fj_line *x = a, *y = b;
    if (x->fl_w != y->fl_w)
        return x->fl_w < y->fl_w ? 1 : -1;
    return (x->fl_line > y->fl_line) - (x->fl_line < y->fl_line);
}

/* A weight as JSON: jansson's integers are signed 64-bit. */
static json_t *weight(uint64_t w)
{
    return json_integer((json_int_t)(w > INT64_MAX ? INT64_MAX : w));
}

/* The page's keys: n, v, k, l, b, f, ln, c (tools/output/flame_json.h). */
static void page_keys(json_t *o, struct sp_fj_node *x, bool diff)
{
    json_object_set_new(o, "n", sp_fj_string(x->fn_name));
    json_object_set_new(o, "v", weight(x->fn_v));
    if (x->fn_kind == SP_FJ_KERNEL || x->fn_kind == SP_FJ_TASK)
        json_object_set_new(o, "k", json_string(x->fn_kind == SP_FJ_KERNEL ? "kernel" : "task"));
    if (x->fn_v && x->fn_inl == x->fn_v)
        json_object_set_new(o, "l", json_string("inlined"));
    if (diff)
        json_object_set_new(o, "b", weight(x->fn_b));
    if (x->fn_file) {
        json_object_set_new(o, "f", sp_fj_string(x->fn_file));
        qsort(x->fn_lines, x->fn_nlines, sizeof *x->fn_lines, line_cmp);
        json_t *ln = json_array();
        for (size_t k = 0; k < x->fn_nlines && k < SP_FJ_LINES; k++)
            json_array_append_new(ln, json_pack("[Io]", (json_int_t)x->fn_lines[k].fl_line,
                                                weight(x->fn_lines[k].fl_w)));
        json_object_set_new(o, "ln", ln);
    }
}

/* d3-flame-graph's keys, serve's API: name, value, a diff's base and
 * delta (NEW - BASE), children. */
static void d3_keys(json_t *o, const struct sp_fj_node *x, bool diff)
{
    json_object_set_new(o, "name", sp_fj_string(x->fn_name));
    json_object_set_new(o, "value", weight(x->fn_v));
    if (diff) {
        json_object_set_new(o, "base", weight(x->fn_b));
        json_object_set_new(o, "delta", json_integer((json_int_t)x->fn_v - (json_int_t)x->fn_b));
    }
}

json_t *sp_fj_node_json(struct sp_fj_tree *t, size_t i, bool diff, enum sp_fj_keys keys)
{
    json_t *o = json_object();
    if (keys == SP_FJ_PAGE)
        page_keys(o, &t->v[i], diff);
    else
        d3_keys(o, &t->v[i], diff);
    if (t->v[i].fn_first) {
        json_t *kids = json_array();
        for (size_t c = t->v[i].fn_first; c; c = t->v[c].fn_next)
            json_array_append_new(kids, sp_fj_node_json(t, c, diff, keys));
        json_object_set_new(o, keys == SP_FJ_PAGE ? "c" : "children", kids);
    }
    return o;
}

static json_t *kernels_json(const struct sp_profile *p)
{
    json_t *ks = json_array();
    for (unsigned i = 0; i < p->ninputs; i++) {
        const struct sp_input *in = &p->inputs[i];
        json_t *k = json_object();
        json_object_set_new(k, "name", sp_fj_string(in->pi_kernel));
        json_object_set_new(k, "origin", sp_fj_string(in->pi_origin));
        json_object_set_new(k, "source", sp_fj_string(in->pi_hdr.ph_source));
        json_object_set_new(k, "ms", json_integer(in->pi_hdr.ph_ms));
        json_object_set_new(k, "samples", weight(in->pi_hdr.ph_samples));
        json_object_set_new(k, "dropped", weight(in->pi_hdr.ph_dropped));
        if (in->pi_stream)
            json_object_set_new(k, "lost", weight(in->pi_lost_records));
        if (in->pi_note)
            json_object_set_new(k, "note", sp_fj_string(in->pi_note));
        json_array_append_new(ks, k);
    }
    return ks;
}

static json_t *head_json(const char *title, unsigned kind, const char *view, uint64_t total,
                         bool diff)
{
    json_t *o = json_object();
    json_object_set_new(o, "title", sp_fj_string(title));
    json_object_set_new(o, "kind", json_string(praw_kind_name(kind) ? praw_kind_name(kind)
                                                                     : "cpu"));
    json_object_set_new(o, "view", sp_fj_string(view));
    json_object_set_new(o, "unit", json_string(sp_fj_unit(kind)));
    json_object_set_new(o, "total", weight(total));
    json_object_set_new(o, "diff", json_boolean(diff));
    return o;
}

int sp_fj_write(const struct sp_profile *p, bool per_kernel, const char *title, FILE *f)
{
    struct sp_fj_tree t;
    sp_fj_build(p, per_kernel ? SP_FJ_BY_KERNEL : SP_FJ_BY_TASK, &t);
    unsigned kind = p->ninputs ? p->inputs[0].pi_hdr.ph_kind : PRAW_KIND_CPU;
    json_t *o = head_json(title, kind, p->ninputs ? sp_fj_view(&p->inputs[0]) : "CPU samples",
                          t.v[0].fn_v, false);
    json_object_set_new(o, "kernels", kernels_json(p));
    json_object_set_new(o, "root", sp_fj_node_json(&t, 0, false, SP_FJ_PAGE));
    sp_fj_free(&t);
    return sp_fj_dump(o, f);
}

int sp_fj_write_diff(const struct sp_diff *d, unsigned kind, const char *title, FILE *f)
{
    struct sp_fj_tree t;
    sp_fj_build_diff(d, &t);
    static const char *const views[] = { "CPU samples", "off-CPU time", "heap",
                                                 "lock delay" };
    json_t *o = head_json(title, kind, kind <= PRAW_KIND_MAX ? views[kind] : views[0],
                          t.v[0].fn_v, true);
    json_object_set_new(o, "base_total", weight(t.v[0].fn_b));
    json_object_set_new(o, "kernels", json_array());
    json_object_set_new(o, "root", sp_fj_node_json(&t, 0, true, SP_FJ_PAGE));
    sp_fj_free(&t);
    return sp_fj_dump(o, f);
}
