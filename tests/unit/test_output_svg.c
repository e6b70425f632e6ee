// LINK: tools/output/svg.c tools/output/folded.c tools/model/model.c uapi/profile_raw.c
/* tests/unit/test_output_svg.c: the flame graph, read back with a minimal
 * XML scanner: tags balance, text is escaped, and every frame is as wide
 * as its share of the samples, to within a pixel. */
#include "test.h"
#include "pipeline_fixture.h"
#include "tools/output/svg.h"
#include <math.h>

static char *render(const struct sp_profile *p, bool per_kernel, const char *title)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK_EQ(sp_svg_write(p, per_kernel, title, f), 0);
    fclose(f);
    return buf;
}

/* Tags balance, every '&' starts an entity, no '<' inside text. Returns
 * the number of elements, or -1 with a message. */
static int well_formed(const char *s)
{
    char stack[64][16];
    int depth = 0, elements = 0;
    for (const char *c = s; *c; c++) {
        if (*c == '&') {
            static const char *ents[] = { "&amp;", "&lt;", "&gt;", "&quot;",
                                          "&apos;" };
            int ok = 0;
            for (int i = 0; i < 5; i++)
                ok |= strncmp(c, ents[i], strlen(ents[i])) == 0;
            if (!ok)
                return printf("  bare & at %zu\n", (size_t)(c - s)), -1;
            continue;
        }
        if (*c != '<')
            continue;
        const char *end = strchr(c, '>');
        if (!end)
            return printf("  unclosed tag\n"), -1;
        if (memchr(c + 1, '<', (size_t)(end - c - 1)))
            return printf("  '<' inside a tag\n"), -1;
        if (c[1] == '?') {
            c = end;
            continue;
        }
        char name[16] = "";
        const char *n = c + 1 + (c[1] == '/');
        size_t k = strcspn(n, " />");
        if (k == 0 || k >= sizeof name)
            return printf("  bad tag name\n"), -1;
        memcpy(name, n, k);
        if (c[1] == '/') {
            if (depth == 0 || strcmp(stack[depth - 1], name) != 0)
                return printf("  </%s> closes <%s>\n", name,
                              depth ? stack[depth - 1] : "nothing"), -1;
            depth--;
        } else if (end[-1] != '/') {
            if (depth == 64)
                return printf("  too deep\n"), -1;
            memcpy(stack[depth++], name, sizeof name);
            elements++;
        } else {
            elements++;
        }
        c = end;
    }
    return depth == 0 ? elements : (printf("  %d unclosed\n", depth), -1);
}

static double attr(const char *tag, const char *name)
{
    char key[32];
    snprintf(key, sizeof key, " %s=\"", name);
    const char *a = strstr(tag, key);
    return a ? atof(a + strlen(key)) : -1;
}

/* For each <g>: the count in its title against its rect's width. */
static unsigned check_widths(const char *svg, uint64_t total)
{
    double scale = sp_svg_scale(total);
    unsigned frames = 0;
    for (const char *g = strstr(svg, "<g>"); g; g = strstr(g + 1, "<g>")) {
        const char *t = strstr(g, "<title>"), *r = strstr(g, "<rect ");
        const char *end = strstr(g, "</g>");
        CHECK(t && r && end && t < end && r < end);
        if (!(t && r && end))
            break;
        const char *paren = strstr(t, " (");
        while (paren && strstr(paren + 1, " (") &&
               strstr(paren + 1, " (") < strstr(t, "</title>"))
            paren = strstr(paren + 1, " (");
        unsigned long long n = strtoull(paren + 2, NULL, 10);
        double w = attr(r, "width");
        CHECK(fabs(w - (double)n * scale) < 1.0);
        CHECK(attr(r, "x") >= SP_SVG_XPAD - 0.01);
        CHECK(attr(r, "x") + w <= SP_SVG_WIDTH - SP_SVG_XPAD + 0.01);
        frames++;
    }
    return frames;
}

TEST(svg_well_formed_and_proportional)
{
    struct sp_profile p;
    CHECK_EQ(fix_load(&p), 0);
    char *svg = render(&p, false, "t");
    CHECK(strncmp(svg, "<?xml", 5) == 0);
    CHECK(well_formed(svg) > 0);
    /* all, burn, top, caller, spin, step, idle, 0x9999, net, caller,
     * spin, step: 12 frames. */
    CHECK_EQ(check_widths(svg, 15), 12);
    CHECK(strstr(svg, "<title>all (15 samples, 100.00%)</title>") != NULL);
    CHECK(strstr(svg, "<title>step (6 samples, 40.00%)</title>") != NULL);
    CHECK(strstr(svg, "width=\"1180.00\"") != NULL);
    free(svg);
    svg = render(&p, true, "t");
    CHECK(strstr(svg, "<title>k1 (10 samples, 66.67%)</title>") != NULL);
    CHECK_EQ(check_widths(svg, 15), 14);
    free(svg);
    sp_profile_free(&p);
}

/* Root at the bottom: a deeper frame has a smaller y. */
TEST(svg_root_at_the_bottom)
{
    struct sp_profile p;
    CHECK_EQ(fix_load(&p), 0);
    char *svg = render(&p, false, "t");
    const char *all = strstr(svg, "<title>all ");
    const char *step = strstr(svg, "<title>step ");
    CHECK(all && step);
    if (all && step)
        CHECK(attr(strstr(step, "<rect"), "y") < attr(strstr(all, "<rect"), "y"));
    free(svg);
    sp_profile_free(&p);
}

TEST(svg_escapes_and_truncates)
{
    struct sp_profile p;
    char err[SP_ERR_MAX];
    sp_profile_init(&p);
    unsigned m = sp_profile_add_map(&p, "k.elf");
    const char t[] = "# sonde raw build-id=" FIX_BID " source=tick 100Hz "
                     "samples=20 dropped=0 cpus=1 ms=5\n"
                     "19 1 <&>\"' 0 1020\n"
                     "1 2 abcdefghijklmnopqrstuvwxyz01234 0 1020\n";
    CHECK_EQ(sp_profile_add_raw(&p, t, strlen(t), "t", "t", m, err, sizeof err), 0);
    fix_symbolize(&p);
    char *svg = render(&p, false, "a <title> & more");
    CHECK(well_formed(svg) > 0);
    CHECK(strstr(svg, "&lt;&amp;&gt;&quot;&apos; (19 samples") != NULL);
    CHECK(strstr(svg, "a &lt;title&gt; &amp; more") != NULL);
    /* 1 of 20 samples is 59 px: 8 characters, so 6 and "..". */
    CHECK(strstr(svg, ">abcdef..</text>") != NULL);
    CHECK_EQ(check_widths(svg, 20), 5);
    free(svg);
    sp_profile_free(&p);
}

TEST(svg_empty_profile)
{
    struct sp_profile p;
    char err[SP_ERR_MAX];
    sp_profile_init(&p);
    unsigned m = sp_profile_add_map(&p, "k.elf");
    const char t[] = "# sonde raw build-id=" FIX_BID " source=tick 100Hz "
                     "samples=0 dropped=0 cpus=0 ms=5\n";
    CHECK_EQ(sp_profile_add_raw(&p, t, strlen(t), "t", "t", m, err, sizeof err), 0);
    char *svg = render(&p, false, "t");
    CHECK(well_formed(svg) > 0);
    CHECK(strstr(svg, "no samples") != NULL);
    CHECK(strstr(svg, "<g>") == NULL);
    free(svg);
    sp_profile_free(&p);
}
