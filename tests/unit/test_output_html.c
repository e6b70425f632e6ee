// LINK: tools/output/html.c tools/output/flame_json.c tools/model/model.c uapi/profile_raw.c build/web/assets.c
// LIBS: -ljansson
/* tests/unit/test_output_html.c: the page of -o FILE.html: self-contained
 * (the page web/build.js made, a policy that forbids every request), its title
 * escaped, no name able to close one of its <script> elements, and one
 * kind per page; the trace's page (sp_html_write_trace) likewise. tests/browser/
 * opens both in chromium. */
#include "test.h"
#include "pipeline_fixture.h"
#include "tools/output/html.h"
#include "tools/output/web_assets.h"

static char *page(const struct sp_profile *p, const char *title, int *rc, char *err)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    *rc = sp_html_write(p, false, title, f, err, SP_ERR_MAX);
    fclose(f);
    return buf;
}

static unsigned count(const char *hay, const char *needle)
{
    unsigned n = 0;
    for (const char *s = strstr(hay, needle); s; s = strstr(s + 1, needle))
        n++;
    return n;
}

TEST(html_page_self_contained)
{
    struct sp_profile p;
    CHECK_EQ(fix_load(&p), 0);
    char err[SP_ERR_MAX] = "";
    int rc;
    char *out = page(&p, "a & <b>", &rc, err);
    CHECK_EQ(rc, 0);
    CHECK(strncmp(out, "<!DOCTYPE html>\n", 16) == 0);
    CHECK(strstr(out, "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src "
                      "'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'\">") != NULL);
    CHECK(strstr(out, "<title>a &amp; &lt;b&gt;</title>") != NULL);
    /* The page web/build.js made, whole: all before its title marker and
     * all after its JSON marker; no reference to anything outside. */
    const char *tpl = sp_web_flame_html.data;
    const char *t = strstr(tpl, "<!--SONDE_TITLE-->"), *j = strstr(tpl, "<!--SONDE_PROFILE-->");
    CHECK(sp_web_flame_html.len > 10000 && t != NULL && j != NULL && t < j);
    CHECK(strncmp(out, tpl, (size_t)(t - tpl)) == 0);
    const char *rest = j + strlen("<!--SONDE_PROFILE-->");
    CHECK(strlen(out) > strlen(rest) && strcmp(out + strlen(out) - strlen(rest), rest) == 0);
    CHECK(strstr(out, "<!--") == NULL);
    CHECK(strstr(out, " src=") == NULL && strstr(out, "<link") == NULL);
    /* The JSON, then the bundle's script: two elements. */
    CHECK_EQ(count(out, "<script"), 2);
    CHECK_EQ(count(out, "</script"), 2);
    CHECK(strstr(out, "<script type=\"application/json\" id=\"sonde-profile\">{\"title\":"
                      "\"a \\u0026 \\u003Cb\\u003E\"") != NULL);
    CHECK(strstr(out, "</body>\n</html>\n") != NULL);
    free(out);
    sp_profile_free(&p);
}

/* Kernel and task names come from the network and may be anything. */
TEST(html_names_cannot_close_the_script)
{
    struct sp_profile p;
    CHECK_EQ(fix_load(&p), 0);
    p.inputs[0].pi_kernel = "</script><script>alert(1)</script>";
    snprintf(p.chains[0].c_task, sizeof p.chains[0].c_task, "</ScRiPt><!--");
    char err[SP_ERR_MAX] = "";
    int rc;
    char *out = page(&p, "</script>", &rc, err);
    CHECK_EQ(rc, 0);
    CHECK_EQ(count(out, "</script"), 2);
    CHECK_EQ(count(out, "</ScRiPt"), 0);
    CHECK_EQ(count(out, "<!--"), 0);
    CHECK(strstr(out, "\\u003C/script\\u003E\\u003Cscript\\u003Ealert(1)") != NULL);
    free(out);
    sp_profile_free(&p);
}

TEST(html_one_kind_per_page)
{
    struct sp_profile p;
    CHECK_EQ(fix_load(&p), 0);
    p.inputs[1].pi_hdr.ph_kind = PRAW_KIND_OFFCPU;
    char err[SP_ERR_MAX] = "";
    int rc;
    char *out = page(&p, "t", &rc, err);
    CHECK_EQ(rc, -1);
    CHECK_STR(err, "k1.raw is CPU samples and k2.raw is off-CPU time: one flame graph "
                   "shows one kind; make a page of each");
    free(out);
    sp_profile_free(&p);
}

TEST(html_several_kernels_get_roots)
{
    struct sp_profile p;
    CHECK_EQ(fix_load(&p), 0);
    char err[SP_ERR_MAX] = "";
    int rc;
    char *out = page(&p, "t", &rc, err);       /* per_kernel false: two kernels */
    CHECK_EQ(rc, 0);
    CHECK(strstr(out, "{\"n\":\"k1\",\"v\":10,\"k\":\"kernel\"") != NULL);
    free(out);
    p.inputs[1].pi_kernel = p.inputs[0].pi_kernel;     /* one kernel, two files */
    out = page(&p, "t", &rc, err);
    CHECK_EQ(rc, 0);
    CHECK(strstr(out, "\"k\":\"kernel\"") == NULL);
    CHECK(strstr(out, "{\"n\":\"burn\",\"v\":9,\"k\":\"task\"") != NULL);
    free(out);
    sp_profile_free(&p);
}

static char *trace_page(const char *title, const char *json)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK_EQ(sp_html_write_trace(f, title, json), 0);
    fclose(f);
    return buf;
}

/* The trace's page: the page web/build.js made, whole, around the title
 * and the JSON; nothing else in it, nothing outside it asked for. */
TEST(html_trace_page_self_contained)
{
    const char *json = "{\"traceEvents\":[],\"otherData\":{\"kernel\":\"k\"}}";
    char *out = trace_page("a & <b>", json);
    const char *tpl = sp_web_trace_html.data;
    const char *t = strstr(tpl, "<!--SONDE_TITLE-->"), *j = strstr(tpl, "<!--SONDE_TRACE-->");
    CHECK(sp_web_trace_html.len > 10000 && t != NULL && j != NULL && t < j);
    CHECK(strstr(tpl, "<!--SONDE_PROFILE-->") == NULL);
    CHECK(strncmp(out, tpl, (size_t)(t - tpl)) == 0);
    CHECK(strstr(out, "<title>a &amp; &lt;b&gt;</title>") != NULL);
    const char *rest = j + strlen("<!--SONDE_TRACE-->");
    CHECK(strlen(out) > strlen(rest) && strcmp(out + strlen(out) - strlen(rest), rest) == 0);
    CHECK(strstr(out, "<script type=\"application/json\" id=\"sonde-trace\">{\"traceEvents\":[],"
                      "\"otherData\":{\"kernel\":\"k\"}}</script>") != NULL);
    CHECK(strstr(out, "<!--") == NULL);
    CHECK(strstr(out, " src=") == NULL && strstr(out, "<link") == NULL);
    CHECK_EQ(count(out, "<script"), 2);
    CHECK(strstr(out, "Content-Security-Policy\" content=\"default-src 'none'; script-src "
                      "'unsafe-inline'; style-src 'unsafe-inline'\">") != NULL);
    free(out);
}

/* Whatever the JSON's writer escaped, a name in it cannot end the
 * element or open a comment: "<", ">" and "&" go in as \u escapes,
 * which JSON reads as the same characters. */
TEST(html_trace_json_cannot_close_the_script)
{
    const char *json = "{\"traceEvents\":[{\"name\":\"</script><!--&\"}]}";
    char *out = trace_page("</script>", json);
    CHECK_EQ(count(out, "</script"), 2);
    CHECK_EQ(count(out, "<!--"), 0);
    CHECK(strstr(out, "{\"traceEvents\":[{\"name\":\"\\u003C/script\\u003E\\u003C!--\\u0026\"}]}")
          != NULL);
    CHECK(strstr(out, "<title>&lt;/script&gt;</title>") != NULL);
    free(out);
}

/* A write error is reported, not lost: a stream that fails every write. */
TEST(html_trace_write_error)
{
    FILE *f = fopen("/dev/full", "w");
    CHECK(f != NULL);
    setvbuf(f, NULL, _IONBF, 0);
    CHECK_EQ(sp_html_write_trace(f, "t", "{\"traceEvents\":[]}"), -1);
    fclose(f);
}
