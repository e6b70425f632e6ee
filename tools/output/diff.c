/* tools/output/diff.c: differential profiles (tools/output/diff.h); the
 * command that loads them is tools/cmd/diff.c.
 *
 * BASE and NEW are in one model as two inputs (their `kernel` labels
 * "base" and "new"), symbolized once, and compared as folded stacks: the same function in both is the same frame, whatever its
 * address. So a CPU, off-CPU or heap profile diffs alike; the weight is
 * what the kind weighs (samples, nanoseconds, bytes).
 *
 * Host pipeline: prefix sp_. */
#include "tools/output/diff.h"
#include "tools/output/flame_json.h"
#include "tools/output/pprof.h"
#include "tools/output/svg.h"
#include "tools/output/html.h"
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

static bool ends_with(const char *s, const char *ext)
{
    size_t n = strlen(s), k = strlen(ext);
    return n > k && strcmp(s + n - k, ext) == 0;
}

bool sp_diff_format_known(const char *out)
{
    return ends_with(out, ".txt") || ends_with(out, ".folded") || ends_with(out, ".svg") ||
           ends_with(out, ".pb.gz") || ends_with(out, ".html");
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
        /* The stacks weigh off-CPU and lock time in µs (sp_folded_us). */
        const char *unit = sp_folded_us(p) ? "us" : sp_fj_unit(kind);
        if (ends_with(out, ".folded")) {
            rc = sp_diff_folded(&d, f);
        } else if (ends_with(out, ".svg") || ends_with(out, ".html")) {
            char title[160];
            snprintf(title, sizeof title, "sonde diff: %s, base %llu, new %llu %s",
                     praw_kind_name(kind), (unsigned long long)d.base_total,
                     (unsigned long long)d.new_total, unit);
            rc = ends_with(out, ".svg") ? sp_diff_svg(&d, title, f)
                                        : sp_html_write_diff(&d, kind, title, f);
        } else {
            rc = sp_diff_text(&d, unit, f);
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
