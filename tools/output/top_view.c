/* tools/output/top_view.c: `sonde-prof top`'s screen, drawn as text.
 * Host pipeline: prefix sp_. */
#include "tools/output/top_view.h"
#include "tools/model/model.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KERNEL_COL_W  7         /* " %6.1f" */
#define NAME_MIN_W    24        /* per-kernel columns stop before this */
#define TABLE_MIN     5         /* kernel lines stop before the table has fewer */

void sp_top_grid_init(struct sp_top_grid *g, unsigned w, unsigned h)
{
    g->w = w < SP_TOP_GRID_MIN_W ? SP_TOP_GRID_MIN_W : w;
    g->h = h < SP_TOP_GRID_MIN_H ? SP_TOP_GRID_MIN_H : h;
    g->cells = sp_xcalloc((size_t)g->h * (g->w + 1), 1);
    g->hl = -1;
}

void sp_top_grid_free(struct sp_top_grid *g)
{
    free(g->cells);
    g->cells = NULL;
}

const char *sp_top_grid_line(const struct sp_top_grid *g, unsigned row)
{
    return g->cells + (size_t)row * (g->w + 1);
}

/* Line row becomes the text, cut to the width with "..." at the end. */
static void put(struct sp_top_grid *g, unsigned row, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    if (n < 0)
        n = 0;
    if ((size_t)n >= sizeof buf)
        n = sizeof buf - 1;
    if ((unsigned)n > g->w) {
        memcpy(buf + g->w - 3, "...", 4);
        n = (int)g->w;
    }
    while (n > 0 && buf[n - 1] == ' ')
        n--;
    char *line = g->cells + (size_t)row * (g->w + 1);
    memcpy(line, buf, (size_t)n);
    line[n] = 0;
}

void sp_top_view_init(struct sp_top_view *v)
{
    memset(v, 0, sizeof *v);
    v->fid = -1;
    v->cfid = -1;
}

static double pct(uint64_t n, uint64_t of)
{
    return of ? 100.0 * (double)n / (double)of : 0.0;
}

static double rate(uint64_t n, double span)
{
    return span > 0 ? (double)n / span : 0.0;
}

/* The title, the totals and, for several kernels, one line each; returns
 * the next free line. */
static unsigned header(const struct sp_top_model *m, struct sp_top_grid *g,
                       unsigned max_lines)
{
    unsigned nk = sp_top_nkernels(m);
    double span = sp_top_span_s(m);
    uint64_t lost = 0;
    for (unsigned k = 0; k < nk; k++)
        lost += sp_top_kernel(m, k)->tk_lost;
    if (nk <= 1) {
        const struct sp_top_kernel *k = nk ? sp_top_kernel(m, 0) : NULL;
        put(g, 0, "sonde-prof top  %s  source %s  window %u s",
            k && k->tk_name[0] ? k->tk_name : "-",
            k && k->tk_source[0] ? k->tk_source : "?", sp_top_window(m));
    } else {
        put(g, 0, "sonde-prof top  %u kernels  window %u s", nk, sp_top_window(m));
    }
    put(g, 1, "%llu %s in %.1f s: %.1f/s, %llu lost",
        (unsigned long long)sp_top_samples(m), sp_top_unit(m), span,
        rate(sp_top_samples(m), span), (unsigned long long)lost);
    unsigned row = 2;
    if (nk <= 1)
        return row;
    for (unsigned k = 0; k < nk; k++, row++) {
        if (row - 2 + 1 == max_lines && k + 1 < nk) {
            put(g, row, "... and %u more kernels", nk - k);
            return row + 1;
        }
        const struct sp_top_kernel *tk = sp_top_kernel(m, k);
        put(g, row, "k%u %s  source %s  %.1f/s, %llu lost", k + 1,
            tk->tk_name, tk->tk_source[0] ? tk->tk_source : "?",
            rate(tk->tk_samples, span), (unsigned long long)tk->tk_lost);
    }
    return row;
}

/* The selection kept in [0, n) and in sight within rows lines. */
static void keep_in_sight(size_t *sel, size_t *scroll, size_t n, unsigned rows)
{
    if (*sel >= n)
        *sel = n ? n - 1 : 0;
    if (*sel < *scroll)
        *scroll = *sel;
    if (rows && *sel >= *scroll + rows)
        *scroll = *sel - rows + 1;
    if (*scroll + rows > n)
        *scroll = n > rows ? n - rows : 0;
}

static void table(const struct sp_top_model *m, struct sp_top_view *v,
                  struct sp_top_grid *g, unsigned row, unsigned end)
{
    unsigned nk = sp_top_nkernels(m);
    unsigned kcols = 0;
    if (nk > 1) {
        kcols = (g->w - 17 - NAME_MIN_W) / KERNEL_COL_W;
        if (kcols > nk)
            kcols = nk;
    }
    char head[256] = "";
    size_t hn = (size_t)snprintf(head, sizeof head, " %6s %7s", "SELF%", "TOTAL%");
    for (unsigned k = 0; k < kcols; k++) {
        char lab[16];
        snprintf(lab, sizeof lab, "k%u%%", k + 1);
        hn += (size_t)snprintf(head + hn, sizeof head - hn, " %6s", lab);
    }
    put(g, row++, "%s  FUNCTION", head);
    size_t n = sp_top_rows(m, NULL, 0);
    if (n == 0) {
        put(g, row, "(no samples in the last %u s)", sp_top_window(m));
        return;
    }
    struct sp_top_row *rows = sp_xcalloc(n, sizeof *rows);
    sp_top_rows(m, rows, n);
    if (v->fid >= 0)            /* the same function where it moved to */
        for (size_t i = 0; i < n; i++)
            if (rows[i].tr_fid == v->fid)
                v->sel = i;
    keep_in_sight(&v->sel, &v->scroll, n, end - row);
    v->fid = rows[v->sel].tr_fid;
    uint64_t all = sp_top_samples(m);
    for (size_t i = v->scroll; i < n && row < end; i++, row++) {
        const struct sp_top_row *r = &rows[i];
        char line[256];
        size_t ln = (size_t)snprintf(line, sizeof line, "%c%6.1f %7.1f",
                                     i == v->sel && !v->plain ? '>' : ' ',
                                     pct(r->tr_self, all), pct(r->tr_total, all));
        for (unsigned k = 0; k < kcols; k++) {
            uint64_t of = sp_top_kernel(m, k)->tk_samples;
            if (of)
                ln += (size_t)snprintf(line + ln, sizeof line - ln, " %6.1f",
                                       pct(r->tr_kself[k], of));
            else
                ln += (size_t)snprintf(line + ln, sizeof line - ln, " %6s", "-");
        }
        put(g, row, "%s  %s", line, sp_top_func_name(m, r->tr_fid));
        if (i == v->sel && !v->plain)
            g->hl = (int)row;
    }
    free(rows);
}

static void callers(const struct sp_top_model *m, struct sp_top_view *v,
                    struct sp_top_grid *g, unsigned row, unsigned end)
{
    const char *name = sp_top_func_name(m, v->cfid);
    uint64_t samples;
    size_t n = sp_top_callers(m, v->cfid, NULL, 0, &samples);
    if (n == 0) {
        put(g, row, "no samples of %s in the last %u s", name, sp_top_window(m));
        return;
    }
    put(g, row++, "callers of %s: in %llu samples, %.1f%% of all", name,
        (unsigned long long)samples, pct(samples, sp_top_samples(m)));
    put(g, row++, " %6s %8s  CALLER", "SHARE%", "SAMPLES");
    struct sp_top_caller *cs = sp_xcalloc(n, sizeof *cs);
    sp_top_callers(m, v->cfid, cs, n, &samples);
    keep_in_sight(&v->csel, &v->cscroll, n, end - row);
    for (size_t i = v->cscroll; i < n && row < end; i++, row++) {
        bool sel = i == v->csel && !v->plain;
        put(g, row, "%c%6.1f %8llu  %s", sel ? '>' : ' ',
            pct(cs[i].tc_count, samples), (unsigned long long)cs[i].tc_count,
            sp_top_func_name(m, cs[i].tc_fid));
        if (sel)
            g->hl = (int)row;
    }
    free(cs);
}

void sp_top_render(const struct sp_top_model *m, struct sp_top_view *v,
                struct sp_top_grid *g)
{
    memset(g->cells, 0, (size_t)g->h * (g->w + 1));
    g->hl = -1;
    unsigned end = v->plain ? g->h : g->h - 1;  /* the keys' line */
    /* Room for the table: its header, TABLE_MIN rows and a blank line. */
    unsigned row = header(m, g, end - 2 - (TABLE_MIN + 1) - 1);
    row++;                      /* blank */
    if (v->mode == SP_TOP_CALLERS && v->cfid >= 0)
        callers(m, v, g, row, end);
    else
        table(m, v, g, row, end);
    if (v->plain)
        return;
    if (v->mode == SP_TOP_CALLERS)
        put(g, g->h - 1, "q quit  up/down select  enter: its callers  left/esc: back");
    else
        put(g, g->h - 1, "q quit  up/down select  enter/right: callers  (by self, last %u s)",
            sp_top_window(m));
}

/* The callers view's rows, for the keys: n callers, and the fid of row i. */
static size_t caller_at(const struct sp_top_model *m, int cfid, size_t i, int *fid)
{
    uint64_t samples;
    size_t n = sp_top_callers(m, cfid, NULL, 0, &samples);
    *fid = -1;
    if (i < n) {
        struct sp_top_caller *cs = sp_xcalloc(n, sizeof *cs);
        sp_top_callers(m, cfid, cs, n, &samples);
        *fid = cs[i].tc_fid;
        free(cs);
    }
    return n;
}

static void move(size_t *sel, enum sp_top_key key, unsigned rows)
{
    size_t step = key == SP_TOP_KEY_PGUP || key == SP_TOP_KEY_PGDN ? (rows ? rows : 1) : 1;
    if (key == SP_TOP_KEY_UP || key == SP_TOP_KEY_PGUP)
        *sel = *sel > step ? *sel - step : 0;
    else
        *sel += step;           /* render keeps it below the last row */
}

void sp_top_view_key(const struct sp_top_model *m, struct sp_top_view *v,
                  enum sp_top_key key, unsigned rows)
{
    if (key == SP_TOP_KEY_BACK) {
        if (v->mode == SP_TOP_CALLERS) {
            v->mode = SP_TOP_TABLE;
            v->fid = v->cfid;   /* the table selects the function looked at */
        }
        return;
    }
    if (key == SP_TOP_KEY_ENTER) {
        int fid = v->fid;
        if (v->mode == SP_TOP_CALLERS)
            caller_at(m, v->cfid, v->csel, &fid);
        if (fid < 0)            /* nothing selected, or not a function */
            return;
        v->mode = SP_TOP_CALLERS;
        v->cfid = fid;
        v->csel = v->cscroll = 0;
        return;
    }
    if (v->mode == SP_TOP_CALLERS) {
        move(&v->csel, key, rows);
        return;
    }
    move(&v->sel, key, rows);
    size_t n = sp_top_rows(m, NULL, 0);
    if (v->sel >= n)
        v->sel = n ? n - 1 : 0;
    v->fid = -1;                /* render takes the row's function */
    if (n) {
        struct sp_top_row *r = sp_xcalloc(n, sizeof *r);
        sp_top_rows(m, r, n);
        v->fid = r[v->sel].tr_fid;
        free(r);
    }
}
