// LINK: tools/output/flame_json.c tools/model/model.c uapi/profile_raw.c
// LIBS: -ljansson
/* tests/unit/test_output_flame_json.c: the web pages' flame-graph tree
 * (every chain a path from "all", weights summed, inlined frames marked,
 * source lines heaviest first, a root per kernel) and its JSON: strings
 * escaped so that nothing in a name can end the <script> element it is
 * inlined in, UTF-8 kept, invalid bytes replaced. */
#include "test.h"
#include <time.h>
#include "pipeline_fixture.h"
#include "tools/output/flame_json.h"

/* The node at path ("burn/top/caller"), or 0 when there is none. */
static size_t find(const struct sp_fj_tree *t, const char *path)
{
    size_t at = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *s = strtok(buf, "/"); s; s = strtok(NULL, "/")) {
        size_t c = t->v[at].fn_first;
        while (c && strcmp(t->v[c].fn_name, s) != 0)
            c = t->v[c].fn_next;
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
    sp_fj_build(&p, SP_FJ_BY_TASK, &t);
    CHECK_EQ(t.v[0].fn_v, 15);                     /* 10 from k1, 5 from k2 */
    size_t burn = find(&t, "burn"), spin = find(&t, "burn/top/caller/spin");
    size_t step = find(&t, "burn/top/caller/spin/step"), net = find(&t, "net/caller/spin/step");
    CHECK(burn && spin && step && net);
    CHECK_EQ(t.v[burn].fn_kind, SP_FJ_TASK);
    CHECK_EQ(t.v[burn].fn_v, 9);
    CHECK_EQ(t.v[spin].fn_v, 9);                   /* 6 through step, 3 alone */
    CHECK_EQ(t.v[step].fn_v, 6);
    CHECK_EQ(t.v[step].fn_inl, 6);                 /* step is only ever inlined */
    CHECK_EQ(t.v[spin].fn_inl, 0);
    CHECK_EQ(t.v[net].fn_v, 5);
    CHECK_EQ(find(&t, "idle/0x9999") != 0, 1);
    CHECK_EQ(t.v[find(&t, "idle/0x9999")].fn_file == NULL, 1);
    /* spin's lines: a.c:12 under step (6), a.c:14 alone (3). */
    CHECK_STR(t.v[spin].fn_file, "a.c");
    CHECK_EQ(t.v[spin].fn_nlines, 2);
    CHECK_EQ(find(&t, "k1"), 0);                /* no kernel roots */
    sp_fj_free(&t);
    sp_profile_free(&p);
}

TEST(fj_tree_root_per_kernel)
{
    struct sp_profile p;
    CHECK_EQ(fix_load(&p), 0);
    struct sp_fj_tree t;
    sp_fj_build(&p, SP_FJ_BY_KERNEL, &t);
    size_t k1 = find(&t, "k1"), k2 = find(&t, "k2");
    CHECK(k1 && k2);
    CHECK_EQ(t.v[k1].fn_kind, SP_FJ_KERNEL);
    CHECK_EQ(t.v[k1].fn_v, 10);
    CHECK_EQ(t.v[k2].fn_v, 5);
    CHECK_EQ(t.v[find(&t, "k1/burn/top/caller/spin")].fn_v, 9);
    CHECK_EQ(t.v[find(&t, "k2/net/caller/spin/step")].fn_v, 5);
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
    CHECK(strncmp(buf, "{\"title\":\"t\\u003C1\\u003E\",\"kind\":\"cpu\",\"view\":\"CPU samples\","
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
    CHECK_STR(s, "\"\\u003C/script\\u003E\\u003C!--\\u0026\\\"\\\\\\n\\u007F\"");
    free(s);
    s = str_json("</SCRIPT >");
    CHECK(strchr(s, '<') == NULL && strchr(s, '>') == NULL);
    free(s);
}

TEST(fj_strings_utf8)
{
    char *s = str_json("caf\xc3\xa9 \xe2\x80\xa8 \xf0\x9f\x94\xa5");   /* é, U+2028, U+1F525 */
    CHECK_STR(s, "\"caf\\u00E9 \\u2028 \\uD83D\\uDD25\"");
    free(s);
    /* A stray continuation, an overlong '/', a surrogate, a cut sequence,
     * 0xff: each bad byte one U+FFFD, the ASCII after it kept. */
    s = str_json("a\x80" "b\xc0\xaf" "c\xed\xa0\x80" "d\xe2\x80" "e\xff");
    CHECK_STR(s, "\"a\\uFFFDb\\uFFFD\\uFFFDc\\uFFFD\\uFFFD\\uFFFDd\\uFFFD\\uFFFDe\\uFFFD\"");
    free(s);
}

/* An off-CPU chain's reason is its leaf, below the frames, as the folded
 * stacks have it; its weight is the wait's nanoseconds. */
TEST(fj_tree_off_cpu_reason_is_the_leaf)
{
    static const char raw[] =
        "# sonde raw build-id=" FIX_BID " source=sched samples=2 dropped=0 cpus=1 "
        "ms=1000 kind=offcpu\n"
        "2:6000 7 burn 0 why=waitq:burn-q waker=0 1020\n";
    struct sp_profile p;
    char err[SP_ERR_MAX] = "";
    sp_profile_init(&p);
    unsigned m = sp_profile_add_map(&p, "kernel.elf");
    CHECK_EQ(sp_profile_add_raw(&p, raw, strlen(raw), "o.raw", "k1", m, err, sizeof err), 0);
    fix_symbolize(&p);
    sp_profile_name_unknown(&p);
    struct sp_fj_tree t;
    sp_fj_build(&p, SP_FJ_BY_KERNEL, &t);
    size_t leaf = find(&t, "k1/burn/spin/[waitq burn-q]");
    CHECK(leaf != 0);
    CHECK_EQ(leaf ? t.v[leaf].fn_v : 0, 6000);
    CHECK_EQ(leaf ? t.v[leaf].fn_first : 1, 0);
    CHECK_EQ(t.v[find(&t, "k1")].fn_kind, SP_FJ_KERNEL);
    sp_fj_free(&t);
    sp_profile_free(&p);
}

/* serve's keys: name, value, children; with a diff base and delta. */
TEST(fj_d3_keys)
{
    struct sp_profile p;
    CHECK_EQ(fix_load(&p), 0);
    struct sp_fj_tree t;
    sp_fj_build(&p, SP_FJ_BY_KERNEL, &t);
    json_t *j = sp_fj_node_json(&t, 0, false, SP_FJ_D3);
    CHECK_STR(json_string_value(json_object_get(j, "name")), "all");
    CHECK_EQ(json_integer_value(json_object_get(j, "value")), 15);
    CHECK(json_object_get(j, "n") == NULL && json_object_get(j, "delta") == NULL);
    json_t *k1 = json_array_get(json_object_get(j, "children"), 0);
    CHECK_STR(json_string_value(json_object_get(k1, "name")), "k1");
    CHECK_EQ(json_integer_value(json_object_get(k1, "value")), 10);
    CHECK(json_object_get(k1, "k") == NULL && json_object_get(k1, "c") == NULL);
    json_decref(j);
    sp_fj_free(&t);
    sp_profile_free(&p);
    const char *a[] = { "burn", "spin" };
    struct sp_diff_row rows[] = { { a, 2, 10, 4 } };
    struct sp_diff d = { rows, 1, 10, 4 };
    sp_fj_build_diff(&d, &t);
    j = sp_fj_node_json(&t, 0, true, SP_FJ_D3);
    json_t *burn = json_array_get(json_object_get(j, "children"), 0);
    CHECK_EQ(json_integer_value(json_object_get(burn, "value")), 4);
    CHECK_EQ(json_integer_value(json_object_get(burn, "base")), 10);
    CHECK_EQ(json_integer_value(json_object_get(burn, "delta")), -6);
    json_decref(j);
    sp_fj_free(&t);
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

/* ---- random strings: what a name becomes is always safe, and a valid
 * UTF-8 name comes back whole from the JSON ---- */

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

static size_t put_utf8(char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* JSON's string escapes undone, as JSON.parse would: the UTF-8 of what a
 * page's script sees. -1 when the text is no JSON string. */
static int json_decode(const char *s, char *out, size_t cap)
{
    size_t n = strlen(s), k = 0;
    if (n < 2 || s[0] != '"' || s[n - 1] != '"')
        return -1;
    for (size_t i = 1; i + 1 < n; i++) {
        if (k + 4 >= cap)
            return -1;
        if (s[i] == '"')
            return -1;
        if (s[i] != '\\') {
            out[k++] = s[i];
            continue;
        }
        char e = s[++i];
        static const char shorts[] = "b\bf\fn\nr\rt\t";
        const char *sh = e ? strchr(shorts, e) : NULL;
        if (e == '"' || e == '\\' || e == '/') {
            out[k++] = e;
        } else if (sh && (sh - shorts) % 2 == 0) {
            out[k++] = sh[1];       /* \b \f \n \r \t */
        } else if (e == 'u') {
            unsigned cp, lo;
            if (sscanf(s + i + 1, "%4x", &cp) != 1)
                return -1;
            i += 4;
            if (cp >= 0xd800 && cp < 0xdc00) {
                if (strncmp(s + i + 1, "\\u", 2) != 0 || sscanf(s + i + 3, "%4x", &lo) != 1 ||
                    lo < 0xdc00 || lo > 0xdfff)
                    return -1;
                i += 6;
                cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
            }
            k += put_utf8(out + k, cp);
        } else {
            return -1;
        }
    }
    out[k] = 0;
    return 0;
}

TEST(fj_strings_random)
{
    char in[64], back[256];
    unsigned bad = 0, unsafe = 0, changed = 0;
    for (int t = 0; t < 20000; t++) {
        size_t n = 0;
        bool utf8 = t & 1;
        while (n < 40 && rnd() % 16) {
            if (!utf8) {
                in[n] = (char)(rnd() % 255 + 1);          /* any byte but NUL */
                n++;
                continue;
            }
            uint32_t cp = rnd() % 4 == 0 ? rnd() % 0x110000 : rnd() % 0x80;
            if (cp == 0 || (cp >= 0xd800 && cp <= 0xdfff))
                continue;
            n += put_utf8(in + n, cp);
        }
        in[n] = 0;
        char *s = str_json(in);
        for (const char *c = s; *c; c++)
            if (*c < 0x20 || *c > 0x7e || *c == '<' || *c == '>' || *c == '&')
                unsafe++;
        if (json_decode(s, back, sizeof back))
            bad++;
        else if (utf8 && strcmp(back, in) != 0)
            changed++;
        free(s);
    }
    CHECK_EQ(unsafe, 0);
    CHECK_EQ(bad, 0);
    CHECK_EQ(changed, 0);
}

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

TEST(fj_siblings_found_by_hash_in_linear_time)
{
    /* 65536 siblings under one node (serve with --max-stacks 65536 and
     * a leaf per stack), each stepped to twice: a scan of the siblings
     * per step is 2^32 compares (8.6 s measured before, without the
     * sanitizers). Bound: 2 s under them; the time is printed. */
    enum { N = 65536 };
    static char names[N][8];
    struct sp_fj_tree t;
    sp_fj_init(&t);
    double t0 = mono_s();
    size_t task = sp_fj_step(&t, 0, "burn", SP_FJ_TASK, 2 * N, 0);
    int same = 1;
    for (unsigned i = 0; i < N; i++) {
        snprintf(names[i], sizeof names[i], "f%05u", i);
        sp_fj_step(&t, task, names[i], SP_FJ_FUNC, 1, 0);
    }
    for (unsigned i = 0; i < N; i++)
        same &= sp_fj_step(&t, task, names[i], SP_FJ_FUNC, 1, 0) == i + 2;
    double took = mono_s() - t0;
    fprintf(stderr, "flame_json: %u siblings stepped to twice in %.3f s\n", N, took);
    CHECK(same);
    CHECK_EQ(t.n, N + 2);
    CHECK_EQ(t.v[N + 1].fn_v, 2);
    /* The same name under another parent is another node. */
    CHECK(sp_fj_step(&t, 2, "f00000", SP_FJ_FUNC, 1, 0) == N + 2);
    CHECK(took < 2.0);
    sp_fj_free(&t);
}
