/* tools/output/flame_json.c: chains to the web pages' flame-graph tree, and
 * the tree to JSON fit to inline in a page.
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
    memset(t, 0, sizeof *t);
}

size_t sp_fj_step(struct sp_fj_tree *t, size_t parent, const char *name,
                  enum sp_fj_kind kind, uint64_t w, uint64_t b)
{
    size_t c = t->v[parent].fn_first;
    while (c && strcmp(t->v[c].fn_name, name) != 0)
        c = t->v[c].fn_next;
    if (!c) {
        t->v = sp_grow(t->v, &t->cap, t->n + 1, sizeof *t->v);
        c = t->n++;
        struct sp_fj_node *x = &t->v[c];
        memset(x, 0, sizeof *x);
        x->fn_name = name;
        x->fn_kind = kind;
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

/* Root first, as tools/output/folded.c orders a stack: [kernel;] task;
 * the outermost caller down to the pc, each address's frames outermost
 * first. In an address's frames (innermost first) all but the last are
 * inlined into it. */
static void add_chain(struct sp_fj_tree *t, const struct sp_profile *p,
                      const struct sp_chain *c, bool per_kernel)
{
    uint64_t w = c->c_weight;
    size_t at = 0;
    t->v[0].fn_v += w;
    if (per_kernel)
        at = sp_fj_step(t, at, p->inputs[c->c_input].pi_kernel, SP_FJ_KERNEL, w, 0);
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
}

void sp_fj_build(const struct sp_profile *p, bool per_kernel, struct sp_fj_tree *t)
{
    sp_fj_init(t);
    for (size_t i = 0; i < p->nchains; i++)
        add_chain(t, p, &p->chains[i], per_kernel);
}

const char *sp_fj_unit(unsigned kind)
{
    return kind == PRAW_KIND_HEAP ? "bytes" : kind == PRAW_KIND_OFFCPU ? "ns" : "samples";
}

const char *sp_fj_view(const struct sp_input *in)
{
    switch (in->pi_hdr.ph_kind) {
    case PRAW_KIND_OFFCPU:
        return "off-CPU time";
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

void sp_fj_str(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', f);
    while (*s) {
        unsigned c = *s;
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc((int)c, f);
        } else if (c >= 0x20 && c < 0x7f && c != '<' && c != '>' && c != '&') {
            fputc((int)c, f);
        } else if (c < 0x80) {
            fprintf(f, "\\u%04x", c);       /* control, DEL, < > & */
        } else {
            size_t n;
            long cp = utf8_next(s, &n);
            if (cp < 0)
                fputs("\\ufffd", f);
            else if (cp < 0x10000)
                fprintf(f, "\\u%04lx", (unsigned long)cp);
            else
                fprintf(f, "\\u%04lx\\u%04lx", 0xd800 + ((unsigned long)(cp - 0x10000) >> 10),
                        0xdc00 + ((unsigned long)(cp - 0x10000) & 0x3ff));
            s += n;
            continue;
        }
        s++;
    }
    fputc('"', f);
}

static int line_cmp(const void *a, const void *b)
{
    const struct sp_fj_line *x = a, *y = b;
    if (x->fl_w != y->fl_w)
        return x->fl_w < y->fl_w ? 1 : -1;
    return (x->fl_line > y->fl_line) - (x->fl_line < y->fl_line);
}

static void node_json(FILE *f, struct sp_fj_tree *t, size_t i, bool diff)
{
    struct sp_fj_node *x = &t->v[i];
    fputs("{\"n\":", f);
    sp_fj_str(f, x->fn_name);
    fprintf(f, ",\"v\":%llu", (unsigned long long)x->fn_v);
    if (x->fn_kind == SP_FJ_KERNEL || x->fn_kind == SP_FJ_TASK)
        fprintf(f, ",\"k\":\"%s\"", x->fn_kind == SP_FJ_KERNEL ? "kernel" : "task");
    if (x->fn_v && x->fn_inl == x->fn_v)
        fputs(",\"l\":\"inlined\"", f);
    if (diff)
        fprintf(f, ",\"b\":%llu", (unsigned long long)x->fn_b);
    if (x->fn_file) {
        fputs(",\"f\":", f);
        sp_fj_str(f, x->fn_file);
        qsort(x->fn_lines, x->fn_nlines, sizeof *x->fn_lines, line_cmp);
        fputs(",\"ln\":[", f);
        for (size_t k = 0; k < x->fn_nlines && k < SP_FJ_LINES; k++)
            fprintf(f, "%s[%u,%llu]", k ? "," : "", x->fn_lines[k].fl_line,
                    (unsigned long long)x->fn_lines[k].fl_w);
        fputc(']', f);
    }
    if (x->fn_first) {
        fputs(",\"c\":[", f);
        for (size_t c = x->fn_first; c; c = t->v[c].fn_next) {
            node_json(f, t, c, diff);
            if (t->v[c].fn_next)
                fputc(',', f);
        }
        fputc(']', f);
    }
    fputs("}", f);
}

static void kernels_json(FILE *f, const struct sp_profile *p)
{
    fputs("\"kernels\":[", f);
    for (unsigned i = 0; i < p->ninputs; i++) {
        const struct sp_input *in = &p->inputs[i];
        fputs(i ? ",{\"name\":" : "{\"name\":", f);
        sp_fj_str(f, in->pi_kernel);
        fputs(",\"origin\":", f);
        sp_fj_str(f, in->pi_origin);
        fputs(",\"source\":", f);
        sp_fj_str(f, in->pi_hdr.ph_source);
        fprintf(f, ",\"ms\":%u,\"samples\":%llu,\"dropped\":%llu", in->pi_hdr.ph_ms,
                (unsigned long long)in->pi_hdr.ph_samples,
                (unsigned long long)in->pi_hdr.ph_dropped);
        if (in->pi_stream)
            fprintf(f, ",\"lost\":%llu", (unsigned long long)in->pi_lost_records);
        if (in->pi_note) {
            fputs(",\"note\":", f);
            sp_fj_str(f, in->pi_note);
        }
        fputc('}', f);
    }
    fputs("],", f);
}

static void head_json(FILE *f, const char *title, unsigned kind, const char *view,
                      uint64_t total)
{
    fputs("{\"title\":", f);
    sp_fj_str(f, title);
    fprintf(f, ",\"kind\":\"%s\",\"view\":", praw_kind_name(kind) ? praw_kind_name(kind) : "cpu");
    sp_fj_str(f, view);
    fprintf(f, ",\"unit\":\"%s\",\"total\":%llu,", sp_fj_unit(kind), (unsigned long long)total);
}

int sp_fj_write(const struct sp_profile *p, bool per_kernel, const char *title, FILE *f)
{
    struct sp_fj_tree t;
    sp_fj_build(p, per_kernel, &t);
    unsigned kind = p->ninputs ? p->inputs[0].pi_hdr.ph_kind : PRAW_KIND_CPU;
    head_json(f, title, kind, p->ninputs ? sp_fj_view(&p->inputs[0]) : "CPU samples",
              t.v[0].fn_v);
    fputs("\"diff\":false,", f);
    kernels_json(f, p);
    fputs("\"root\":", f);
    node_json(f, &t, 0, false);
    fputs("}", f);
    sp_fj_free(&t);
    return ferror(f) ? -1 : 0;
}

int sp_fj_write_diff(const struct sp_diff *d, unsigned kind, const char *title, FILE *f)
{
    struct sp_fj_tree t;
    sp_fj_init(&t);
    for (size_t i = 0; i < d->n; i++) {
        const struct sp_diff_row *r = &d->v[i];
        size_t at = 0;
        t.v[0].fn_v += r->dr_new;
        t.v[0].fn_b += r->dr_base;
        for (unsigned k = 0; k < r->dr_n; k++)
            at = sp_fj_step(&t, at, r->dr_names[k], k ? SP_FJ_FUNC : SP_FJ_TASK,
                            r->dr_new, r->dr_base);
    }
    static const char *const views[] = { "CPU samples", "off-CPU time", "heap" };
    head_json(f, title, kind, kind <= PRAW_KIND_MAX ? views[kind] : views[0], t.v[0].fn_v);
    fprintf(f, "\"diff\":true,\"base_total\":%llu,\"kernels\":[],\"root\":",
            (unsigned long long)t.v[0].fn_b);
    node_json(f, &t, 0, true);
    fputs("}", f);
    sp_fj_free(&t);
    return ferror(f) ? -1 : 0;
}
