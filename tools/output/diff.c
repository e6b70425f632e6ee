/* tools/output/diff.c: differential profiles (tools/output/diff.h).
 *
 * BASE and NEW are loaded into one model as two inputs (their `kernel`
 * labels "base" and "new"), symbolized once, and compared as folded
 * stacks: the same function in both is the same frame, whatever its
 * address. So a CPU, off-CPU or heap profile diffs alike; the weight is
 * what the kind weighs (samples, nanoseconds, bytes).
 *
 * Host pipeline: prefix sp_. */
#include "tools/output/diff.h"
#include "tools/output/pprof.h"
#include "tools/model/pprof_read.h"
#include "tools/output/svg.h"
#include "tools/output/html.h"
#include "tools/model/sym.h"
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static int names_cmp(const char **a, unsigned na, const char **b, unsigned nb)
{
    for (unsigned i = 0; i < na && i < nb; i++) {
        int r = strcmp(a[i], b[i]);
        if (r)
            return r;
    }
    return (na > nb) - (na < nb);
}

/* Each list's stacks lose their first skip names (the kernel label). */
static void diff_merge(const struct sp_stack *b, size_t nb, const struct sp_stack *n,
                       size_t nn, unsigned skip, struct sp_diff *d)
{
    d->v = sp_xcalloc(nb + nn + 1, sizeof *d->v);
    size_t i = 0, j = 0;
    while (i < nb || j < nn) {
        int c = i == nb ? 1 : j == nn ? -1
              : names_cmp(b[i].ps_names + skip, b[i].ps_n - skip,
                          n[j].ps_names + skip, n[j].ps_n - skip);
        struct sp_diff_row *r = &d->v[d->n++];
        const struct sp_stack *s = c <= 0 ? &b[i] : &n[j];
        r->dr_names = s->ps_names + skip;
        r->dr_n = s->ps_n - skip;
        if (c <= 0)
            r->dr_base = b[i++].ps_count;
        if (c >= 0)
            r->dr_new = n[j++].ps_count;
        d->base_total += r->dr_base;
        d->new_total += r->dr_new;
    }
}

void sp_diff_build(const struct sp_stacks *base, const struct sp_stacks *new_,
                   struct sp_diff *d)
{
    memset(d, 0, sizeof *d);
    diff_merge(base->v, base->n, new_->v, new_->n, 0, d);
}

void sp_diff_free(struct sp_diff *d)
{
    free(d->v);
    memset(d, 0, sizeof *d);
}

static void diff_stack(const struct sp_diff_row *r, FILE *f)
{
    for (unsigned i = 0; i < r->dr_n; i++) {
        if (i)
            fputc(';', f);
        sp_folded_name(f, r->dr_names[i]);
    }
}

int sp_diff_folded(const struct sp_diff *d, FILE *f)
{
    for (size_t i = 0; i < d->n; i++) {
        diff_stack(&d->v[i], f);
        fprintf(f, " %llu %llu\n", (unsigned long long)d->v[i].dr_base,
                (unsigned long long)d->v[i].dr_new);
    }
    return ferror(f) ? -1 : 0;
}

static int64_t row_delta(const struct sp_diff_row *r)
{
    return (int64_t)r->dr_new - (int64_t)r->dr_base;
}

static const struct sp_diff *sort_d;

/* Growth first; then what shrank most last; ties by names. */
static int by_growth(const void *a, const void *b)
{
    const struct sp_diff_row *x = &sort_d->v[*(const size_t *)a];
    const struct sp_diff_row *y = &sort_d->v[*(const size_t *)b];
    int64_t dx = row_delta(x), dy = row_delta(y);
    if (dx != dy)
        return dx > dy ? -1 : 1;
    return names_cmp(x->dr_names, x->dr_n, y->dr_names, y->dr_n);
}

int sp_diff_text(const struct sp_diff *d, const char *unit, FILE *f)
{
    size_t *idx = sp_xcalloc(d->n + 1, sizeof *idx);
    for (size_t i = 0; i < d->n; i++)
        idx[i] = i;
    sort_d = d;
    qsort(idx, d->n, sizeof *idx, by_growth);
    fprintf(f, "base %llu %s, new %llu %s, change %+lld %s\n",
            (unsigned long long)d->base_total, unit, (unsigned long long)d->new_total, unit,
            (long long)d->new_total - (long long)d->base_total, unit);
    fprintf(f, "%14s %9s %14s %14s  stack (root first)\n", "change", "relative", "base", "new");
    for (size_t k = 0; k < d->n; k++) {
        const struct sp_diff_row *r = &d->v[idx[k]];
        if (row_delta(r) == 0)
            continue;
        char rel[32];
        if (r->dr_base == 0)
            snprintf(rel, sizeof rel, "new");
        else
            snprintf(rel, sizeof rel, "%+.1f%%", 100.0 * (double)row_delta(r) / (double)r->dr_base);
        fprintf(f, "%+14lld %9s %14llu %14llu  ", (long long)row_delta(r), rel,
                (unsigned long long)r->dr_base, (unsigned long long)r->dr_new);
        diff_stack(r, f);
        fputc('\n', f);
    }
    free(idx);
    return ferror(f) ? -1 : 0;
}

/* ---- the differential flame graph ---- */

struct svg_ctx {
    FILE *f;
    double scale;               /* pixels per unit of NEW */
    unsigned height;            /* the image's, pixels */
};

static void svg_escape(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<')
            fputs("&lt;", f);
        else if (*s == '>')
            fputs("&gt;", f);
        else if (*s == '&')
            fputs("&amp;", f);
        else if (*s == '"')
            fputs("&quot;", f);
        else
            fputc(*s, f);
    }
}

/* Red as NEW grew over BASE, blue as it shrank, white when equal. */
static void svg_frame(struct svg_ctx *c, const char *name, unsigned depth, double x,
                      uint64_t base, uint64_t new_)
{
    double w = (double)new_ * c->scale;
    double y = c->height - (depth + 1.0) * SP_SVG_FRAME_H - 4;
    uint64_t big = base > new_ ? base : new_;
    double r = big ? ((double)new_ - (double)base) / (double)big : 0;
    int red = r < 0 ? (int)(255 * (1 + r)) : 255, blue = r > 0 ? (int)(255 * (1 - r)) : 255;
    int green = r > 0 ? blue : red;
    fprintf(c->f, "<g><title>");
    svg_escape(c->f, name);
    fprintf(c->f, " (base %llu, new %llu, %+lld)</title><rect x=\"%.1f\" y=\"%.1f\" "
            "width=\"%.1f\" height=\"%d\" fill=\"rgb(%d,%d,%d)\" rx=\"2\"/>",
            (unsigned long long)base, (unsigned long long)new_,
            (long long)new_ - (long long)base, x, y, w, SP_SVG_FRAME_H - 1, red, green, blue);
    if (w > 30) {
        fprintf(c->f, "<text x=\"%.1f\" y=\"%.1f\">", x + 3, y + SP_SVG_FRAME_H - 5);
        size_t chars = (size_t)(w / 7), n = strlen(name);
        char buf[256];
        snprintf(buf, sizeof buf, "%.*s%s", (int)(n > chars ? (chars > 2 ? chars - 2 : 0) : n),
                 name, n > chars ? ".." : "");
        svg_escape(c->f, buf);
        fprintf(c->f, "</text>");
    }
    fprintf(c->f, "</g>\n");
}

/* The rows [lo, hi) share their first depth names: draw each child. */
static void svg_level(struct svg_ctx *c, const struct sp_diff *d, size_t lo, size_t hi,
                      unsigned depth, double x)
{
    size_t i = lo;
    while (i < hi) {
        if (d->v[i].dr_n <= depth) {
            x += (double)d->v[i++].dr_new * c->scale;     /* self: no frame above */
            continue;
        }
        const char *name = d->v[i].dr_names[depth];
        size_t j = i;
        uint64_t b = 0, n = 0;
        while (j < hi && d->v[j].dr_n > depth && strcmp(d->v[j].dr_names[depth], name) == 0) {
            b += d->v[j].dr_base;
            n += d->v[j].dr_new;
            j++;
        }
        if (n) {
            svg_frame(c, name, depth + 1, x, b, n);
            svg_level(c, d, i, j, depth + 1, x);
        }
        x += (double)n * c->scale;
        i = j;
    }
}

int sp_diff_svg(const struct sp_diff *d, const char *title, FILE *f)
{
    unsigned depth = 0;
    for (size_t i = 0; i < d->n; i++)
        if (d->v[i].dr_n > depth)
            depth = d->v[i].dr_n;
    struct svg_ctx c = { f, sp_svg_scale(d->new_total), (depth + 1) * SP_SVG_FRAME_H + 40 };
    fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
            "<svg version=\"1.1\" width=\"%d\" height=\"%u\" "
            "xmlns=\"http://www.w3.org/2000/svg\" font-family=\"Verdana\" font-size=\"12\">\n"
            "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#eeeeee\"/>\n"
            "<text x=\"%d\" y=\"20\" font-size=\"16\">", SP_SVG_WIDTH, c.height, SP_SVG_XPAD);
    svg_escape(f, title);
    fprintf(f, "</text>\n");
    svg_frame(&c, "all", 0, SP_SVG_XPAD, d->base_total, d->new_total);
    svg_level(&c, d, 0, d->n, 0, SP_SVG_XPAD);
    fprintf(f, "</svg>\n");
    return ferror(f) ? -1 : 0;
}

/* ---- the command ---- */

#define DIFF_USAGE "usage: sonde-prof diff BASE NEW [-e ELF [-e ELF]] -o OUT [--force]\n"

static int diff_usage(const char *what, const char *arg)
{
    fprintf(stderr, "sonde-prof diff: %s%s (see sonde-prof diff --help)\n", what, arg ? arg : "");
    return 2;
}

/* A profile is named with its own kernel's ELF, or every name is wrong. */
static int diff_same_build(const char *path, const char *id, const struct sp_map *m,
                           char *err, size_t cap)
{
    if (strcmp(id, m->pm_build_id) == 0)
        return 0;
    snprintf(err, cap, "%s has build id %s but %s has %s: give the ELF of the kernel "
             "that made it (-e once per profile when they differ)", path, id, m->pm_path,
             m->pm_build_id[0] ? m->pm_build_id : "none");
    return -1;
}

/* A gzip stream's first two bytes: a .pb.gz, where a raw profile is text
 * beginning with '#'. */
static bool diff_is_pprof(const char *text, size_t len)
{
    return len >= 2 && (unsigned char)text[0] == 0x1f && (unsigned char)text[1] == 0x8b;
}

/* Loads path as input "base" or "new": a pprof profile named by its own
 * functions and lines, or a raw profile against the ELF of map m (none:
 * m is -1, and a raw profile is an error). */
static int diff_load(struct sp_profile *p, const char *path, const char *label, int m)
{
    char *text = NULL, err[SP_ERR_MAX];
    size_t len;
    int rc = sp_profile_read_file(path, &text, &len, err, sizeof err);
    if (rc == 0 && diff_is_pprof(text, len)) {
        rc = sp_pprof_read_mem(p, text, len, path, label, err, sizeof err);
    } else if (rc == 0 && m < 0) {
        snprintf(err, sizeof err, "%s is a raw profile: give -e ELF to name its addresses",
                 path);
        rc = -1;
    } else if (rc == 0) {
        rc = sp_profile_add_raw(p, text, len, path, label, (unsigned)m, err, sizeof err) ||
             diff_same_build(path, p->inputs[p->ninputs - 1].pi_hdr.ph_build_id,
                             &p->maps[m], err, sizeof err);
    }
    if (rc)
        fprintf(stderr, "sonde-prof diff: %s\n", err);
    free(text);
    return rc ? -1 : 0;
}

/* A heap profile's view, from its source: in use or allocated. */
static bool diff_heap_inuse(const struct praw_header *h)
{
    return strncmp(h->ph_source, "heap inuse", 10) == 0;
}

/* BASE and NEW compare: one kind (and for the heap one view), one build
 * unless force. 0, 1 (compare, with a warning printed), or 2. */
static int diff_comparable(const struct sp_profile *p, const char *const in[2], int force)
{
    const struct praw_header *b = &p->inputs[0].pi_hdr, *n = &p->inputs[1].pi_hdr;
    if (b->ph_kind != n->ph_kind) {
        fprintf(stderr, "sonde-prof diff: %s is a %s profile and %s a %s profile: "
                "only profiles of one kind compare\n", in[0], praw_kind_name(b->ph_kind),
                in[1], praw_kind_name(n->ph_kind));
        return 2;
    }
    if (b->ph_kind == PRAW_KIND_HEAP && diff_heap_inuse(b) != diff_heap_inuse(n)) {
        fprintf(stderr, "sonde-prof diff: %s is a heap %s profile and %s a heap %s profile: "
                "their sample types differ (inuse_* against alloc_*), only one view "
                "compares\n", in[0], diff_heap_inuse(b) ? "in-use" : "allocs", in[1],
                diff_heap_inuse(n) ? "in-use" : "allocs");
        return 2;
    }
    if (strcmp(b->ph_build_id, n->ph_build_id) != 0) {
        fprintf(stderr, "sonde-prof diff: %s: %s comes from build %s and %s from build "
                "%s: the kernels differ, so a chain may differ for that reason alone%s\n",
                force ? "warning" : "error", in[0], b->ph_build_id, in[1],
                n->ph_build_id, force ? " (compared by name, --force)" :
                "; give --force (and -e for each raw profile) to compare them by name anyway");
        return force ? 0 : 2;
    }
    return 0;
}

static const char *diff_unit(unsigned kind)
{
    return kind == PRAW_KIND_HEAP ? "bytes" : kind == PRAW_KIND_OFFCPU ? "ns" : "samples";
}

static bool ends_with(const char *s, const char *ext)
{
    size_t n = strlen(s), k = strlen(ext);
    return n > k && strcmp(s + n - k, ext) == 0;
}

int sp_diff_write(struct sp_profile *p, const char *out, char *err, size_t cap)
{
    FILE *f = fopen(out, "w");
    if (!f) {
        snprintf(err, cap, "%s: cannot write", out);
        return -1;
    }
    int rc;
    if (ends_with(out, ".pb.gz")) {
        p->inputs[0].pi_negate = true;
        rc = sp_pprof_write(p, f, err, cap);
    } else {
        struct sp_stacks all;
        sp_stacks_build(p, true, &all);     /* "base" stacks sort before "new" */
        size_t nb = 0;
        while (nb < all.n && strcmp(all.v[nb].ps_names[0], "base") == 0)
            nb++;
        struct sp_diff d = { 0 };
        diff_merge(all.v, nb, all.v + nb, all.n - nb, 1, &d);
        unsigned kind = p->inputs[0].pi_hdr.ph_kind;
        if (ends_with(out, ".folded")) {
            rc = sp_diff_folded(&d, f);
        } else if (ends_with(out, ".svg") || ends_with(out, ".html")) {
            char title[160];
            snprintf(title, sizeof title, "sonde diff: %s, base %llu, new %llu %s",
                     praw_kind_name(kind), (unsigned long long)d.base_total,
                     (unsigned long long)d.new_total, diff_unit(kind));
            rc = ends_with(out, ".svg") ? sp_diff_svg(&d, title, f)
                                        : sp_html_write_diff(&d, kind, title, f);
        } else {
            rc = sp_diff_text(&d, diff_unit(kind), f);
        }
        sp_diff_free(&d);
        sp_stacks_free(&all);
    }
    if (fclose(f) != 0 || rc) {
        if (!err[0])
            snprintf(err, cap, "%s: write error", out);
        remove(out);
        return -1;
    }
    return 0;
}

int sp_diff_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "force", no_argument, NULL, 'F' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *elf[2] = { 0 }, *out = NULL, *in[2] = { 0 };
    unsigned nelf = 0, nin = 0;
    int force = 0, c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":e:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'e':
            if (nelf == 2)
                return diff_usage("-e given more than twice", NULL);
            elf[nelf++] = optarg;
            break;
        case 'o': out = optarg; break;
        case 'F': force = 1; break;
        case 'h':
            printf(DIFF_USAGE
                   "BASE and NEW are raw profiles (record -r, profile ... raw) or pprof\n"
                   "profiles (.pb.gz, as record writes them) of the same kind, either mixed.\n"
                   "  -e ELF   the kernel ELF, for raw profiles (a .pb.gz names its own\n"
                   "           frames): once for both, or BASE's then NEW's\n"
                   "  -o OUT   .txt chains by growth; .folded BASE NEW per stack\n"
                   "           (difffolded); .svg a differential flame graph (sized by\n"
                   "           NEW, red grew, blue shrank); .html the same, interactive\n"
                   "           (zoom, search, tooltips with both weights); .pb.gz NEW minus BASE for\n"
                   "           go tool pprof (BASE's samples negated, as -diff_base)\n"
                   "  --force  compare profiles of different build ids, by name\n");
            return 0;
        case ':': return diff_usage("missing value for ", argv[optind - 1]);
        default: return diff_usage("unknown option ", argv[optind - 1]);
        }
    }
    for (; optind < argc; optind++) {
        if (nin == 2)
            return diff_usage("more than two profiles: ", argv[optind]);
        in[nin++] = argv[optind];
    }
    if (nin != 2)
        return diff_usage("give BASE and NEW", NULL);
    if (!out)
        return diff_usage("no output: give -o OUT", NULL);
    if (!ends_with(out, ".txt") && !ends_with(out, ".folded") && !ends_with(out, ".svg") &&
        !ends_with(out, ".pb.gz") && !ends_with(out, ".html"))
        return diff_usage("unknown extension (known: .txt, .folded, .svg, .html, .pb.gz): ", out);
    struct sp_profile p;
    struct sp_elf *es[2] = { 0 };
    char err[SP_ERR_MAX] = "";
    int rc = 0;
    sp_profile_init(&p);
    for (unsigned i = 0; i < nelf && rc == 0; i++) {
        unsigned m = sp_profile_add_map(&p, elf[i]);
        if (!(es[m] = sp_elf_open(&p, m, err, sizeof err))) {
            fprintf(stderr, "sonde-prof diff: %s\n", err);
            rc = 2;
        }
    }
    /* The ELF maps come first (0, and 1 when given twice); a .pb.gz adds
     * maps of its own after them. */
    if (rc == 0 && (diff_load(&p, in[0], "base", nelf ? 0 : -1) ||
                    diff_load(&p, in[1], "new", nelf ? (int)nelf - 1 : -1)))
        rc = 2;
    if (rc == 0)
        rc = diff_comparable(&p, in, force);
    if (rc == 0) {
        for (unsigned m = 0; m < nelf; m++)
            sp_elf_symbolize(&p, m, es[m]);
        sp_profile_name_unknown(&p);
        err[0] = 0;
        if (sp_diff_write(&p, out, err, sizeof err)) {
            fprintf(stderr, "sonde-prof diff: %s\n", err);
            rc = 2;
        }
    }
    for (unsigned m = 0; m < 2; m++)
        if (es[m])
            sp_elf_close(es[m]);
    sp_profile_free(&p);
    return rc;
}
