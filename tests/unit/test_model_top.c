// LINK: tools/model/top.c tools/output/top_view.c tools/model/model.c uapi/profile_raw.c
/* tests/unit/test_model_top.c: `sonde-prof top`'s model (the window,
 * self and total, callers, kernels) and its screen, line by line, with
 * a table of names in place of libdw. */
#include "test.h"
#include "tools/model/top.h"
#include "tools/output/top_view.h"
#include <stdarg.h>
#include <stdlib.h>

#define S 1000000000ull

/* Functions are 0x100 bytes each from 0x1000: spin, inner, outer, rec,
 * top; anything else is named by its address. */
static const char *const names[] = { "spin", "inner", "outer", "rec", "top" };
static unsigned calls;

static const char *fake_name(void *ctx, unsigned k, uint64_t addr, bool ret)
{
    static char buf[32];
    (void)ctx, (void)k;
    calls++;
    uint64_t a = ret ? addr - 1 : addr;
    if (a >= 0x1000 && a < 0x1000 + 0x100 * 5)
        return names[(a - 0x1000) / 0x100];
    snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)addr);
    return buf;
}

#define SPIN  0x1010
#define INNER 0x1105        /* return addresses inside each */
#define OUTER 0x1205
#define REC   0x1305
#define TOP   0x1405

static void add(struct sp_top_model *m, unsigned k, uint64_t t, unsigned n,
                unsigned depth, ...)
{
    uint64_t f[SP_TOP_DEPTH_MAX];
    va_list ap;
    va_start(ap, depth);
    for (unsigned i = 0; i < depth; i++)
        f[i] = va_arg(ap, uint64_t);
    va_end(ap);
    for (unsigned i = 0; i < n; i++)
        CHECK(sp_top_add_sample(m, k, t, f, depth));
}

static int fid_of(const struct sp_top_model *m, const char *name)
{
    struct sp_top_row r[64];
    size_t n = sp_top_rows(m, r, 64);
    for (size_t i = 0; i < n && i < 64; i++)
        if (strcmp(sp_top_func_name(m, r[i].tr_fid), name) == 0)
            return r[i].tr_fid;
    return -100;
}

static const struct sp_top_row *row_of(const struct sp_top_model *m, const char *name,
                                    struct sp_top_row *r, size_t cap)
{
    size_t n = sp_top_rows(m, r, cap);
    for (size_t i = 0; i < n && i < cap; i++)
        if (strcmp(sp_top_func_name(m, r[i].tr_fid), name) == 0)
            return &r[i];
    return NULL;
}

TEST(window_expires_whole_seconds)
{
    struct sp_top_model *m = sp_top_new(5, fake_name, NULL);
    add(m, 0, 10 * S + S / 2, 3, 2, (uint64_t)SPIN, (uint64_t)INNER);
    add(m, 0, 12 * S + S / 2, 2, 1, (uint64_t)SPIN);
    sp_top_advance(m, 14 * S + 900000000);
    CHECK_EQ(sp_top_samples(m), 5);
    struct sp_top_row r[8];
    CHECK_EQ(sp_top_rows(m, r, 8), 2);
    CHECK_EQ(r[0].tr_self, 5);
    /* Second 10 leaves the window when second 15 begins. */
    sp_top_advance(m, 15 * S);
    CHECK_EQ(sp_top_samples(m), 2);
    CHECK_EQ(sp_top_rows(m, r, 8), 1);
    CHECK_EQ(r[0].tr_self, 2);
    CHECK_EQ(r[0].tr_total, 2);
    CHECK_EQ(sp_top_kernel(m, 0)->tk_samples, 2);
    /* Too old for the window: not counted. */
    CHECK(!sp_top_add_sample(m, 0, 10 * S, (uint64_t[]){ SPIN }, 1));
    sp_top_advance(m, 17 * S);
    CHECK_EQ(sp_top_samples(m), 0);
    CHECK_EQ(sp_top_rows(m, r, 8), 0);
    /* Time never goes back. */
    sp_top_advance(m, 11 * S);
    add(m, 0, 17 * S + 1, 1, 1, (uint64_t)SPIN);
    CHECK_EQ(sp_top_samples(m), 1);
    /* A ring slot reused after a gap much longer than the window. */
    add(m, 0, 1000 * S, 4, 1, (uint64_t)TOP);
    CHECK_EQ(sp_top_samples(m), 4);
    CHECK_EQ(sp_top_rows(m, r, 8), 1);
    sp_top_free(m);
}

TEST(span_grows_to_the_window)
{
    struct sp_top_model *m = sp_top_new(5, fake_name, NULL);
    sp_top_advance(m, 10 * S);
    CHECK(sp_top_span_s(m) == 0.0);
    sp_top_advance(m, 12 * S);
    CHECK(sp_top_span_s(m) == 2.0);
    sp_top_advance(m, 20 * S + S / 2);     /* seconds 16..20 */
    CHECK(sp_top_span_s(m) == 4.5);
    sp_top_free(m);
}

TEST(self_and_total_recursion_once)
{
    struct sp_top_model *m = sp_top_new(5, fake_name, NULL);
    /* spin <- rec <- rec <- rec <- top: rec recurses, counted once. */
    add(m, 0, S, 4, 5, (uint64_t)SPIN, (uint64_t)REC, (uint64_t)REC,
        (uint64_t)REC, (uint64_t)TOP);
    /* rec itself as the leaf, called by rec. */
    add(m, 0, S, 1, 3, (uint64_t)0x1310, (uint64_t)REC, (uint64_t)TOP);
    struct sp_top_row r[8];
    const struct sp_top_row *x = row_of(m, "rec", r, 8);
    CHECK(x && x->tr_self == 1 && x->tr_total == 5);
    x = row_of(m, "spin", r, 8);
    CHECK(x && x->tr_self == 4 && x->tr_total == 4);
    x = row_of(m, "top", r, 8);
    CHECK(x && x->tr_self == 0 && x->tr_total == 5);
    /* Hottest first: self, then total, then name. */
    CHECK_EQ(sp_top_rows(m, r, 8), 3);
    CHECK_STR(sp_top_func_name(m, r[0].tr_fid), "spin");
    CHECK_STR(sp_top_func_name(m, r[1].tr_fid), "rec");
    CHECK_STR(sp_top_func_name(m, r[2].tr_fid), "top");
    /* Each distinct address named once, whatever the samples. */
    sp_top_free(m);
}

TEST(addresses_named_once_return_addresses_from_ret_minus_1)
{
    calls = 0;
    struct sp_top_model *m = sp_top_new(5, fake_name, NULL);
    /* 0x1100 as a return address is the call at 0x10ff: spin. */
    add(m, 0, S, 10, 2, (uint64_t)0x1100, (uint64_t)0x1100);
    CHECK_EQ(calls, 2);
    struct sp_top_row r[8];
    CHECK_EQ(sp_top_rows(m, r, 8), 2);
    CHECK_STR(sp_top_func_name(m, r[0].tr_fid), "inner");
    CHECK_EQ(r[0].tr_self, 10);
    CHECK_STR(sp_top_func_name(m, r[1].tr_fid), "spin");
    CHECK_EQ(r[1].tr_total, 10);
    sp_top_free(m);
}

TEST(callers_aggregated_once_per_sample)
{
    struct sp_top_model *m = sp_top_new(5, fake_name, NULL);
    add(m, 0, S, 3, 3, (uint64_t)SPIN, (uint64_t)INNER, (uint64_t)TOP);
    add(m, 0, 2 * S, 1, 2, (uint64_t)SPIN, (uint64_t)OUTER);
    add(m, 0, 2 * S, 2, 1, (uint64_t)SPIN);        /* the walk ended at spin */
    /* rec called by rec twice and by top: rec once, top once. */
    add(m, 0, 3 * S, 5, 5, (uint64_t)SPIN, (uint64_t)REC, (uint64_t)REC,
        (uint64_t)REC, (uint64_t)TOP);
    /* The walk's 8 frames, all rec: the outermost caller is unknown. */
    add(m, 0, 3 * S, 1, 8, (uint64_t)0x1310, (uint64_t)REC, (uint64_t)REC,
        (uint64_t)REC, (uint64_t)REC, (uint64_t)REC, (uint64_t)REC,
        (uint64_t)REC);
    struct sp_top_caller c[8];
    uint64_t samples;
    CHECK_EQ(sp_top_callers(m, fid_of(m, "spin"), c, 8, &samples), 4);
    CHECK_EQ(samples, 11);
    CHECK_STR(sp_top_func_name(m, c[0].tc_fid), "rec");
    CHECK_EQ(c[0].tc_count, 5);
    CHECK_STR(sp_top_func_name(m, c[1].tc_fid), "inner");
    CHECK_EQ(c[1].tc_count, 3);
    CHECK_EQ(c[2].tc_fid, SP_TOP_CALLER_ROOT);
    CHECK_EQ(c[2].tc_count, 2);
    CHECK_STR(sp_top_func_name(m, c[3].tc_fid), "outer");
    CHECK_EQ(c[3].tc_count, 1);
    CHECK_EQ(sp_top_callers(m, fid_of(m, "rec"), c, 8, &samples), 3);
    CHECK_EQ(samples, 6);
    CHECK_STR(sp_top_func_name(m, c[0].tc_fid), "rec");
    CHECK_EQ(c[0].tc_count, 6);
    CHECK_STR(sp_top_func_name(m, c[1].tc_fid), "top");
    CHECK_EQ(c[1].tc_count, 5);
    CHECK_EQ(c[2].tc_fid, SP_TOP_CALLER_CUT);
    CHECK_EQ(c[2].tc_count, 1);
    /* Callers leave with their second. */
    sp_top_advance(m, 6 * S);
    CHECK_EQ(sp_top_callers(m, fid_of(m, "spin"), c, 8, &samples), 3);
    CHECK_EQ(samples, 8);
    CHECK_EQ(c[1].tc_fid, SP_TOP_CALLER_ROOT);
    sp_top_free(m);
}

TEST(kernels_counted_apart)
{
    struct sp_top_model *m = sp_top_new(5, fake_name, NULL);
    sp_top_set_kernel_info(m, 0, "a", "tick 100Hz", 1);
    sp_top_set_kernel_info(m, 1, "b", "pmu/x", 2);
    add(m, 0, S, 3, 1, (uint64_t)SPIN);
    add(m, 0, S, 1, 1, (uint64_t)0x1410);
    add(m, 1, S, 6, 1, (uint64_t)0x1410);
    CHECK_EQ(sp_top_nkernels(m), 2);
    CHECK_EQ(sp_top_kernel(m, 0)->tk_samples, 4);
    CHECK_EQ(sp_top_kernel(m, 1)->tk_samples, 6);
    CHECK_EQ(sp_top_kernel(m, 1)->tk_lost, 2);
    struct sp_top_row r[8];
    const struct sp_top_row *x = row_of(m, "top", r, 8);
    CHECK(x && x->tr_self == 7 && x->tr_kself[0] == 1 && x->tr_kself[1] == 6);
    x = row_of(m, "spin", r, 8);
    CHECK(x && x->tr_kself[0] == 3 && x->tr_kself[1] == 0);
    CHECK(!sp_top_add_sample(m, SP_TOP_KERNELS_MAX, S, (uint64_t[]){ SPIN }, 1));
    sp_top_free(m);
}

/* ---- the screen --------------------------------------------------------- */

static void check_lines(const struct sp_top_grid *g, const char *const *want)
{
    for (unsigned r = 0; r < g->h; r++) {
        const char *w = want[r] ? want[r] : "";
        if (strcmp(sp_top_grid_line(g, r), w) != 0) {
            char msg[512];
            snprintf(msg, sizeof msg, "line %u: \"%s\" vs \"%s\"", r,
                     sp_top_grid_line(g, r), w);
            test_fail(__FILE__, __LINE__, msg);
        }
    }
}

static void check_width(const struct sp_top_grid *g)
{
    for (unsigned r = 0; r < g->h; r++)
        CHECK(strlen(sp_top_grid_line(g, r)) <= g->w);
}

static struct sp_top_model *burn_model(void)
{
    struct sp_top_model *m = sp_top_new(5, fake_name, NULL);
    sp_top_set_kernel_info(m, 0, "127.0.0.1:9000", "tick 100Hz", 3);
    sp_top_advance(m, 100 * S);
    add(m, 0, 100 * S, 90, 3, (uint64_t)SPIN, (uint64_t)INNER, (uint64_t)TOP);
    add(m, 0, 101 * S, 7, 2, (uint64_t)0x1110, (uint64_t)TOP);
    add(m, 0, 101 * S, 3, 1, (uint64_t)0x1410);
    sp_top_advance(m, 102 * S);
    return m;
}

TEST(render_one_kernel_80x24)
{
    struct sp_top_model *m = burn_model();
    struct sp_top_grid g;
    struct sp_top_view v;
    sp_top_grid_init(&g, 20, 10);          /* raised to 80x24 */
    CHECK_EQ(g.w, 80);
    CHECK_EQ(g.h, 24);
    sp_top_view_init(&v);
    sp_top_render(m, &v, &g);
    const char *want[24] = {
        "sonde-prof top  127.0.0.1:9000  source tick 100Hz  window 5 s",
        "100 samples in 2.0 s: 50.0/s, 3 lost",
        "",
        "  SELF%  TOTAL%  FUNCTION",
        ">  90.0    90.0  spin",
        "    7.0    97.0  inner",
        "    3.0   100.0  top",
        [23] = "q quit  up/down select  enter/right: callers  (by self, last 5 s)",
    };
    check_lines(&g, want);
    CHECK_EQ(g.hl, 4);
    /* Down twice: top; the selection stays on top as rows move. */
    sp_top_view_key(m, &v, SP_TOP_KEY_DOWN, 19);
    sp_top_view_key(m, &v, SP_TOP_KEY_DOWN, 19);
    sp_top_view_key(m, &v, SP_TOP_KEY_DOWN, 19);       /* past the end: stays */
    sp_top_render(m, &v, &g);
    CHECK_EQ(g.hl, 6);
    add(m, 0, 102 * S, 200, 1, (uint64_t)0x1410);
    sp_top_render(m, &v, &g);
    CHECK_EQ(g.hl, 4);
    CHECK_STR(sp_top_grid_line(&g, 4), ">  67.7   100.0  top");
    sp_top_grid_free(&g);
    sp_top_free(m);
}

TEST(render_callers_and_back)
{
    struct sp_top_model *m = burn_model();
    struct sp_top_grid g;
    struct sp_top_view v;
    sp_top_grid_init(&g, 80, 24);
    sp_top_view_init(&v);
    sp_top_render(m, &v, &g);
    sp_top_view_key(m, &v, SP_TOP_KEY_ENTER, 19);     /* spin's callers */
    sp_top_render(m, &v, &g);
    const char *want[24] = {
        "sonde-prof top  127.0.0.1:9000  source tick 100Hz  window 5 s",
        "100 samples in 2.0 s: 50.0/s, 3 lost",
        "",
        "callers of spin: in 90 samples, 90.0% of all",
        " SHARE%  SAMPLES  CALLER",
        "> 100.0       90  inner",
        [23] = "q quit  up/down select  enter: its callers  left/esc: back",
    };
    check_lines(&g, want);
    /* Enter again: inner's callers; then back to the table, on inner. */
    sp_top_view_key(m, &v, SP_TOP_KEY_ENTER, 19);
    sp_top_render(m, &v, &g);
    CHECK_STR(sp_top_grid_line(&g, 3), "callers of inner: in 97 samples, 97.0% of all");
    CHECK_STR(sp_top_grid_line(&g, 5), "> 100.0       97  top");
    sp_top_view_key(m, &v, SP_TOP_KEY_ENTER, 19);
    sp_top_render(m, &v, &g);
    CHECK_STR(sp_top_grid_line(&g, 5), "> 100.0      100  (outermost frame)");
    sp_top_view_key(m, &v, SP_TOP_KEY_ENTER, 19);     /* not a function: stays */
    CHECK_EQ(v.mode, SP_TOP_CALLERS);
    sp_top_view_key(m, &v, SP_TOP_KEY_BACK, 19);
    sp_top_render(m, &v, &g);
    CHECK_EQ(v.mode, SP_TOP_TABLE);
    CHECK_STR(sp_top_grid_line(&g, g.hl), ">   3.0   100.0  top");
    sp_top_grid_free(&g);
    sp_top_free(m);
}

TEST(render_plain_and_empty)
{
    struct sp_top_model *m = sp_top_new(5, fake_name, NULL);
    struct sp_top_grid g;
    struct sp_top_view v;
    sp_top_grid_init(&g, 80, 24);
    sp_top_view_init(&v);
    v.plain = true;
    sp_top_render(m, &v, &g);
    const char *want[24] = {
        "sonde-prof top  -  source ?  window 5 s",
        "0 samples in 0.0 s: 0.0/s, 0 lost",
        "",
        "  SELF%  TOTAL%  FUNCTION",
        "(no samples in the last 5 s)",
    };
    check_lines(&g, want);
    sp_top_free(m);
    m = burn_model();
    sp_top_render(m, &v, &g);
    CHECK_STR(sp_top_grid_line(&g, 4), "   90.0    90.0  spin");
    CHECK_EQ(g.hl, -1);
    CHECK_STR(sp_top_grid_line(&g, 23), "");
    sp_top_grid_free(&g);
    sp_top_free(m);
}

static const char *long_name(void *ctx, unsigned k, uint64_t addr, bool ret)
{
    static char buf[200];
    (void)ctx, (void)ret;
    snprintf(buf, sizeof buf, "f%llu_%s", (unsigned long long)addr,
             addr == 7 ? "a_function_name_much_longer_than_any_terminal_is_wide_"
                         "so_that_it_must_be_cut_somewhere_before_the_edge" : "x");
    return buf;
}

TEST(render_kernels_truncation_scrolling)
{
    struct sp_top_model *m = sp_top_new(60, long_name, NULL);
    char name[64];
    for (unsigned k = 0; k < 3; k++) {
        snprintf(name, sizeof name, "kernel-%u-with-a-rather-long-name."
                 "example.org:9000", k);
        sp_top_set_kernel_info(m, k, name, "pmu/nmi amd perfctr0 with a long name", k);
    }
    for (uint64_t a = 1; a <= 40; a++)
        for (unsigned i = 0; i < a; i++)
            CHECK(sp_top_add_sample(m, a % 3, 5 * S, &a, 1));
    sp_top_advance(m, 7 * S);
    struct sp_top_grid g;
    struct sp_top_view v;
    sp_top_grid_init(&g, 80, 24);
    sp_top_view_init(&v);
    sp_top_render(m, &v, &g);
    check_width(&g);
    CHECK_STR(sp_top_grid_line(&g, 0), "sonde-prof top  3 kernels  window 60 s");
    CHECK_STR(sp_top_grid_line(&g, 2),
              "k1 kernel-0-with-a-rather-long-name.example.org:9000  source pmu/nmi amd perf...");
    CHECK_STR(sp_top_grid_line(&g, 6), "  SELF%  TOTAL%    k1%    k2%    k3%  FUNCTION");
    CHECK_EQ(strlen(sp_top_grid_line(&g, 2)), 80);
    /* 820 samples; f40 holds 40 of kernel k2's 287 (a % 3 == 1: 1+4+..+40),
     * none of the others'. */
    CHECK_STR(sp_top_grid_line(&g, 7), ">   4.9     4.9    0.0   13.9    0.0  f40_x");
    /* Scrolled down to the long one (7 samples, row 33 of 40): cut with
     * "..." at the width. */
    for (int i = 0; i < 33; i++)
        sp_top_view_key(m, &v, SP_TOP_KEY_DOWN, 15);
    sp_top_render(m, &v, &g);
    check_width(&g);
    CHECK_EQ(g.hl, 22);
    CHECK_STR(sp_top_grid_line(&g, 22),
              ">   0.9     0.9    0.0    2.4    0.0  f7_a_function_name_much_longer_than_any...");
    CHECK_EQ(strlen(sp_top_grid_line(&g, 22)), 80);
    sp_top_view_key(m, &v, SP_TOP_KEY_PGDN, 15);
    sp_top_render(m, &v, &g);
    CHECK_STR(sp_top_grid_line(&g, 22), ">   0.1     0.1    0.0    0.3    0.0  f1_x");
    /* A larger terminal is used as it is. */
    sp_top_grid_free(&g);
    sp_top_grid_init(&g, 132, 50);
    sp_top_render(m, &v, &g);
    check_width(&g);
    CHECK_EQ(g.w, 132);
    CHECK_STR(sp_top_grid_line(&g, 2), "k1 kernel-0-with-a-rather-long-name.example.org:9000  "
              "source pmu/nmi amd perfctr0 with a long name  136.5/s, 0 lost");
    sp_top_grid_free(&g);
    sp_top_free(m);
}
