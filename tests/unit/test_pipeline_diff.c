// LINK: tools/pipeline/diff.c tools/pipeline/pprof_read.c tools/pipeline/html.c tools/pipeline/flame_json.c build/web/assets.c tools/pipeline/folded.c tools/pipeline/model.c tools/pipeline/pprof.c tools/pipeline/svg.c tools/pipeline/sym.c uapi/profile_raw.c build/host/proto/profile.pb-c.c
// LIBS: -Ibuild/host/proto -lprotobuf-c -lz -lelf -ldw
/* tests/unit/test_pipeline_diff.c: differential profiles
 * (tools/pipeline/diff.c): the merge of two stack lists, the .folded
 * (difffolded) and .txt writers, and the SVG's colours. */
#include "test.h"
#include "tools/pipeline/diff.h"
#include <stdlib.h>

static const char *sa[] = { "shell", "main", "leak" };
static const char *sb[] = { "shell", "main", "ok" };
static const char *sc[] = { "shell", "gone" };

static void two_lists(struct sp_stacks *b, struct sp_stacks *n)
{
    static struct sp_stack bv[2], nv[2];
    bv[0] = (struct sp_stack){ sc, 2, 50 };          /* sorted by names: gone < main */
    bv[1] = (struct sp_stack){ sa, 3, 100 };
    nv[0] = (struct sp_stack){ sa, 3, 400 };
    nv[1] = (struct sp_stack){ sb, 3, 30 };
    *b = (struct sp_stacks){ bv, 2, 150 };
    *n = (struct sp_stacks){ nv, 2, 430 };
}

static char *written(int (*fn)(const struct sp_diff *, FILE *), const struct sp_diff *d)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK_EQ(fn(d, f), 0);
    fclose(f);
    return buf;
}

static int text_bytes(const struct sp_diff *d, FILE *f)
{
    return sp_diff_text(d, "bytes", f);
}

static int svg(const struct sp_diff *d, FILE *f)
{
    return sp_diff_svg(d, "t", f);
}

TEST(diff_merge_folded_text_svg)
{
    struct sp_stacks b, n;
    two_lists(&b, &n);
    struct sp_diff d;
    sp_diff_build(&b, &n, &d);
    CHECK_EQ(d.n, 3);
    CHECK_EQ(d.base_total, 150);
    CHECK_EQ(d.new_total, 430);
    char *s = written(sp_diff_folded, &d);
    CHECK_STR(s, "shell;gone 50 0\nshell;main;leak 100 400\nshell;main;ok 0 30\n");
    free(s);
    s = written(text_bytes, &d);
    CHECK(strstr(s, "base 150 bytes, new 430 bytes, change +280 bytes\n") != NULL);
    char *leak = strstr(s, "shell;main;leak"), *ok = strstr(s, "shell;main;ok"),
         *gone = strstr(s, "shell;gone");
    CHECK(leak && ok && gone && leak < ok && ok < gone);     /* by growth */
    CHECK(strstr(s, "+300   +300.0%") != NULL);
    CHECK(strstr(s, "+30       new") != NULL);
    CHECK(strstr(s, "-50   -100.0%") != NULL);
    free(s);
    s = written(svg, &d);
    CHECK(strstr(s, "leak (base 100, new 400, +300)") != NULL);
    CHECK(strstr(s, "rgb(255,63,63)") != NULL);   /* leak: grew by 3/4 of 400: 1/4 white */
    CHECK(strstr(s, "gone") == NULL);                         /* not in NEW: no width */
    free(s);
    sp_diff_free(&d);
}
