// LINK: tools/pipeline/flame_json.c tools/pipeline/model.c uapi/profile_raw.c
/* tests/unit/test_pipeline_flame_json.c: the web pages' flame-graph tree
 * (every chain a path from "all", weights summed, inlined frames marked,
 * source lines heaviest first, a root per kernel) and its JSON: strings
 * escaped so that nothing in a name can end the <script> element it is
 * inlined in, UTF-8 kept, invalid bytes replaced. */
#include "test.h"
#include "pipeline_fixture.h"
#include "tools/pipeline/flame_json.h"

/* The node at path ("burn/top/caller"), or 0 when there is none. */
static size_t find(const struct sp_fj_tree *t, const char *path)
{
    size_t at = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *s = strtok(buf, "/"); s; s = strtok(NULL, "/")) {
        size_t c = t->v[at].first;
        while (c && strcmp(t->v[c].name, s) != 0)
            c = t->v[c].next;
        if (!c)
            return 0;
        at = c;
    }
    return at;
}

static char *str_json(const char *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sp_fj_str(f, s);
    fclose(f);
    return buf;
}

TEST(fj_tree_paths_and_weights)
{
    struct sp_profile p;
    CHECK_EQ(fix_load(&p), 0);
    struct sp_fj_tree t;
    sp_fj_build(&p, false, &t);
    CHECK_EQ(t.v[0].v, 15);                     /* 10 from k1, 5 from k2 */
    size_t burn = find(&t, "burn"), spin = find(&t, "burn/top/caller/spin");
    size_t step = find(&t, "burn/top/caller/spin/step"), net = find(&t, "net/caller/spin/step");
    CHECK(burn && spin && step && net);
    CHECK_EQ(t.v[burn].kind, SP_FJ_TASK);
    CHECK_EQ(t.v[burn].v, 9);
    CHECK_EQ(t.v[spin].v, 9);                   /* 6 through step, 3 alone */
    CHECK_EQ(t.v[step].v, 6);
    CHECK_EQ(t.v[step].inl, 6);                 /* step is only ever inlined */
    CHECK_EQ(t.v[spin].inl, 0);
    CHECK_EQ(t.v[net].v, 5);
    CHECK_EQ(find(&t, "idle/0x9999") != 0, 1);
    CHECK_EQ(t.v[find(&t, "idle/0x9999")].file == NULL, 1);
    /* spin's lines: a.c:12 under step (6), a.c:14 alone (3). */
    CHECK_STR(t.v[spin].file, "a.c");
    CHECK_EQ(t.v[spin].nlines, 2);
    CHECK_EQ(find(&t, "k1"), 0);                /* no kernel roots */
    sp_fj_free(&t);
    sp_profile_free(&p);
}

TEST(fj_tree_root_per_kernel)
{
    struct sp_profile p;
    CHECK_EQ(fix_load(&p), 0);
    struct sp_fj_tree t;
    sp_fj_build(&p, true, &t);
    size_t k1 = find(&t, "k1"), k2 = find(&t, "k2");
    CHECK(k1 && k2);
    CHECK_EQ(t.v[k1].kind, SP_FJ_KERNEL);
    CHECK_EQ(t.v[k1].v, 10);
    CHECK_EQ(t.v[k2].v, 5);
    CHECK_EQ(t.v[find(&t, "k1/burn/top/caller/spin")].v, 9);
    CHECK_EQ(t.v[find(&t, "k2/net/caller/spin/step")].v, 5);
    CHECK_EQ(find(&t, "burn"), 0);
    sp_fj_free(&t);
    sp_profile_free(&p);
}

TEST(fj_document)
{
    struct sp_profile p;
    CHECK_EQ(fix_load(&p), 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK_EQ(sp_fj_write(&p, false, "t<1>", f), 0);
    fclose(f);
    CHECK(strncmp(buf, "{\"title\":\"t\\u003c1\\u003e\",\"kind\":\"cpu\",\"view\":\"CPU samples\","
                  "\"unit\":\"samples\",\"total\":15,\"diff\":false,\"kernels\":[", 110) == 0);
    CHECK(strstr(buf, "{\"name\":\"k1\",\"origin\":\"k1.raw\",\"source\":\"pmu/nmi intel "
                      "fixed-ctr1\",\"ms\":1000,\"samples\":10,\"dropped\":1}") != NULL);
    /* spin, its lines heaviest first, then step: inlined, from a.h. */
    CHECK(strstr(buf, "{\"n\":\"spin\",\"v\":9,\"f\":\"a.c\",\"ln\":[[12,6],[14,3]],\"c\":"
                      "[{\"n\":\"step\",\"v\":6,\"l\":\"inlined\",\"f\":\"a.h\",\"ln\":[[5,6]]}]}")
          != NULL);
    CHECK(strstr(buf, "{\"n\":\"burn\",\"v\":9,\"k\":\"task\",\"c\":[") != NULL);
    CHECK(strstr(buf, "{\"n\":\"0x9999\",\"v\":1}") != NULL);
    /* Braces and brackets balance outside strings. */
    int depth = 0, ok = 1;
    bool in = false;
    for (const char *c = buf; *c; c++) {
        if (in) {
            if (*c == '\\')
                c++;
            else if (*c == '"')
                in = false;
        } else if (*c == '"') {
            in = true;
        } else if (*c == '{' || *c == '[') {
            depth++;
        } else if (*c == '}' || *c == ']') {
            ok &= --depth >= 0;
        }
    }
    CHECK(ok && depth == 0 && !in);
    free(buf);
    sp_profile_free(&p);
}

TEST(fj_strings_cannot_end_the_script)
{
    char *s = str_json("</script><!--&\"\\\n\x7f");
    CHECK_STR(s, "\"\\u003c/script\\u003e\\u003c!--\\u0026\\\"\\\\\\u000a\\u007f\"");
    free(s);
    s = str_json("</SCRIPT >");
    CHECK(strchr(s, '<') == NULL && strchr(s, '>') == NULL);
    free(s);
}

TEST(fj_strings_utf8)
{
    char *s = str_json("caf\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x94\xa5");   /* é, U+2028, U+1F525 */
    CHECK_STR(s, "\"caf\\u00e9 \\u2028 \\ud83d\\udd25\"");
    free(s);
    /* A stray continuation, an overlong '/', a surrogate, a cut sequence,
     * 0xff: each bad byte one U+FFFD, the ASCII after it kept. */
    s = str_json("a\x80" "b\xc0\xaf" "c\xed\xa0\x80" "d\xe2\x80" "e\xff");
    CHECK_STR(s, "\"a\\ufffdb\\ufffd\\ufffdc\\ufffd\\ufffd\\ufffdd\\ufffd\\ufffde\\ufffd\"");
    free(s);
}

TEST(fj_diff_document)
{
    const char *a[] = { "burn", "outer", "spin" }, *b[] = { "burn", "outer", "wait" };
    struct sp_diff_row rows[] = {
        { a, 3, 10, 40 },                      /* spin grew */
        { b, 3, 30, 5 },                       /* wait shrank */
    };
    struct sp_diff d = { rows, 2, 40, 45 };
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK_EQ(sp_fj_write_diff(&d, PRAW_KIND_OFFCPU, "d", f), 0);
    fclose(f);
    CHECK(strstr(buf, "\"unit\":\"ns\",\"total\":45,\"diff\":true,\"base_total\":40,") != NULL);
    CHECK(strstr(buf, "{\"n\":\"all\",\"v\":45,\"b\":40,") != NULL);
    CHECK(strstr(buf, "{\"n\":\"outer\",\"v\":45,\"b\":40,\"c\":[{\"n\":\"spin\",\"v\":40,"
                      "\"b\":10},{\"n\":\"wait\",\"v\":5,\"b\":30}]}") != NULL);
    CHECK(strstr(buf, "{\"n\":\"burn\",\"v\":45,\"k\":\"task\",\"b\":40,") != NULL);
    free(buf);
}
