/* tools/output/svg.c: the flame graph. Stacks (tools/output/folded.c)
 * become a tree of frames, laid out by cumulative sample counts so that no
 * rounding accumulates from left to right.
 * Host pipeline: prefix sp_. */
#include "tools/output/svg.h"
#include "tools/output/folded.h"
#include <stdlib.h>
#include <string.h>

#define FONT_SIZE   12
#define FONT_WIDTH  0.59        /* average glyph width, in font sizes */
#define MIN_WIDTH   0.1         /* narrower frames are left out */
#define YPAD_TOP    (FONT_SIZE * 3)
#define YPAD_BOTTOM (FONT_SIZE * 2 + 10)

struct node {
    const char *name;
    uint64_t count;
    size_t first, next, last;   /* children list; 0 = none (0 is the root) */
    unsigned depth;
};

struct tree {
    struct node *v;
    size_t n, cap;
    unsigned max_depth;
};

static size_t node_new(struct tree *t, const char *name, unsigned depth)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 64;
        t->v = realloc(t->v, t->cap * sizeof *t->v);
        if (!t->v) {
            fprintf(stderr, "sonde-prof: out of memory\n");
            exit(2);
        }
    }
    struct node *x = &t->v[t->n];
    memset(x, 0, sizeof *x);
    x->name = name;
    x->depth = depth;
    if (depth > t->max_depth)
        t->max_depth = depth;
    return t->n++;
}

/* Stacks arrive sorted, so a frame's matching child, if any, is always
 * the one added last: siblings come out in name order. */
static void tree_add(struct tree *t, const struct sp_stack *s)
{
    size_t at = 0;
    t->v[0].count += s->ps_count;
    for (unsigned i = 0; i < s->ps_n; i++) {
        size_t c = t->v[at].last;
        if (!c || strcmp(t->v[c].name, s->ps_names[i]) != 0) {
            size_t k = node_new(t, s->ps_names[i], i + 1);
            if (t->v[at].last)
                t->v[t->v[at].last].next = k;
            else
                t->v[at].first = k;
            t->v[at].last = k;
            c = k;
        }
        t->v[c].count += s->ps_count;
        at = c;
    }
}

static void xml_text(FILE *f, const char *s, size_t max)
{
    for (size_t i = 0; s[i] && i < max; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default: fputc(c < ' ' || c == 0x7f ? '?' : c, f);
        }
    }
}

/* flamegraph.pl's "hot" palette, from FNV-1a of the name; an off-CPU
 * reason ("[waitq virtio-rx]") in its "io" blues, so that time waiting
 * never looks like time on a CPU. */
static void colour(const char *name, unsigned rgb[3])
{
    uint32_t h = 2166136261u;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = (h ^ *c) * 16777619u;
    double v1 = (h & 0xff) / 255.0, v2 = (h >> 8 & 0xff) / 255.0,
           v3 = (h >> 16 & 0xff) / 255.0;
    if (sp_is_reason(name)) {
        rgb[0] = 80 + (unsigned)(60 * v1);
        rgb[1] = 80 + (unsigned)(60 * v1);
        rgb[2] = 190 + (unsigned)(65 * v2);
        return;
    }
    rgb[0] = 205 + (unsigned)(50 * v3);
    rgb[1] = (unsigned)(230 * v1);
    rgb[2] = (unsigned)(55 * v2);
}

double sp_svg_scale(uint64_t total)
{
    return total ? (SP_SVG_WIDTH - 2.0 * SP_SVG_XPAD) / (double)total : 0;
}

static const char *frame_unit = "samples";   /* what a node's count is */

static void frame(FILE *f, const struct node *x, uint64_t left,
                  uint64_t total, double height)
{
    double scale = sp_svg_scale(total);
    double w = x->count * scale, xpos = SP_SVG_XPAD + left * scale;
    if (w < MIN_WIDTH)
        return;
    double y = height - YPAD_BOTTOM - (x->depth + 1.0) * SP_SVG_FRAME_H;
    unsigned rgb[3];
    colour(x->name, rgb);
    fputs("<g>\n<title>", f);
    xml_text(f, x->name, SIZE_MAX);
    fprintf(f, " (%llu %s, %.2f%%)</title>\n",
            (unsigned long long)x->count, frame_unit, 100.0 * x->count / total);
    fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" "
            "fill=\"rgb(%u,%u,%u)\" rx=\"2\" ry=\"2\"/>\n", xpos, y, w,
            SP_SVG_FRAME_H - 1, rgb[0], rgb[1], rgb[2]);
    size_t fit = (size_t)(w / (FONT_SIZE * FONT_WIDTH));
    size_t len = strlen(x->name);
    if (fit >= 3) {
        fprintf(f, "<text x=\"%.2f\" y=\"%.1f\">", xpos + 3, y + 11.5);
        xml_text(f, x->name, len <= fit ? len : fit - 2);
        fputs(len <= fit ? "" : "..", f);
        fputs("</text>\n", f);
    }
    fputs("</g>\n", f);
}

/* Depth first; a child's left edge is its parent's plus its elder
 * siblings' counts, in samples, scaled only when drawn. */
static void frames(FILE *f, const struct tree *t, size_t at, uint64_t left,
                   double height)
{
    frame(f, &t->v[at], left, t->v[0].count, height);
    for (size_t c = t->v[at].first; c; c = t->v[c].next) {
        frames(f, t, c, left, height);
        left += t->v[c].count;
    }
}

int sp_svg_write(const struct sp_profile *p, bool per_kernel, const char *title,
                   FILE *f)
{
    struct sp_stacks s;
    sp_stacks_build(p, per_kernel, &s);
    frame_unit = sp_folded_us(p) ? "us" : "samples";
    struct tree t = { 0 };
    node_new(&t, "all", 0);
    for (size_t i = 0; i < s.n; i++)
        tree_add(&t, &s.v[i]);
    double height = (t.max_depth + 1.0) * SP_SVG_FRAME_H + YPAD_TOP +
                    YPAD_BOTTOM;
    fprintf(f, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
            "<svg version=\"1.1\" width=\"%d\" height=\"%.0f\" "
            "viewBox=\"0 0 %d %.0f\" xmlns=\"http://www.w3.org/2000/svg\">\n"
            "<style>text { font-family: Verdana, sans-serif; font-size: "
            "%dpx; fill: rgb(0,0,0); }</style>\n"
            "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" "
            "fill=\"rgb(248,248,240)\"/>\n"
            "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" "
            "font-size=\"17\">", SP_SVG_WIDTH, height, SP_SVG_WIDTH,
            height, FONT_SIZE, SP_SVG_WIDTH / 2, FONT_SIZE * 2);
    xml_text(f, title, SIZE_MAX);
    fputs("</text>\n", f);
    if (s.total)
        frames(f, &t, 0, 0, height);
    else
        fprintf(f, "<text x=\"%d\" y=\"%d\">no samples</text>\n",
                SP_SVG_XPAD, YPAD_TOP + FONT_SIZE);
    fputs("</svg>\n", f);
    free(t.v);
    sp_stacks_free(&s);
    return ferror(f) ? -1 : 0;
}
