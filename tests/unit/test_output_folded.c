// LINK: tools/output/folded.c tools/output/text.c tools/output/offtext.c tools/model/model.c uapi/profile_raw.c
/* tests/unit/test_output_folded.c: the folded-stacks writer (root first,
 * merged, counts summing to the samples) and the annotated text report. */
#include "test.h"
#include "pipeline_fixture.h"
#include "tools/output/folded.h"
#include "tools/output/text.h"

/* Runs a writer into a memory buffer; the caller frees it. */
static char *capture(const struct sp_profile *p, int which, bool per_kernel)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc = which == 0 ? sp_folded_write(p, per_kernel, f)
                        : sp_text_write(p, f);
    fclose(f);
    CHECK_EQ(rc, 0);
    return buf;
}

TEST(folded_root_first_sorted_merged)
{
    struct sp_profile p;
    CHECK_EQ(fix_load(&p), 0);
    char *out = capture(&p, 0, false);
    CHECK_STR(out,
              "burn;top;caller;spin 3\n"
              "burn;top;caller;spin;step 6\n"
              "idle;0x9999 1\n"
              "net;caller;spin;step 5\n");
    free(out);
    out = capture(&p, 0, true);
    CHECK_STR(out,
              "k1;burn;top;caller;spin 3\n"
              "k1;burn;top;caller;spin;step 6\n"
              "k1;idle;0x9999 1\n"
              "k2;net;caller;spin;step 5\n");
    free(out);
    sp_profile_free(&p);
}

/* Every line's count adds up to the samples the headers declared. */
TEST(folded_counts_sum_to_samples)
{
    struct sp_profile p;
    CHECK_EQ(fix_load(&p), 0);
    char *out = capture(&p, 0, false);
    unsigned long long sum = 0;
    for (char *line = out; *line;) {
        char *nl = strchr(line, '\n');
        CHECK(nl != NULL);
        if (!nl)
            break;
        char *sp = line;
        for (char *c = line; c < nl; c++)
            if (*c == ' ')
                sp = c;
        sum += strtoull(sp + 1, NULL, 10);
        line = nl + 1;
    }
    CHECK_EQ(sum, sp_profile_total(&p));
    CHECK_EQ(sum, 15);
    free(out);
    sp_profile_free(&p);
}

/* Chains that differ only in cpu or pid fold into one stack. */
TEST(folded_merges_equal_stacks)
{
    struct sp_profile p;
    char err[SP_ERR_MAX];
    sp_profile_init(&p);
    unsigned m = sp_profile_add_map(&p, "k.elf");
    const char t[] = "# sonde raw build-id=" FIX_BID " source=tick 100Hz "
                     "samples=6 dropped=0 cpus=2 ms=5\n"
                     "1 4 w 0 1020\n2 5 w 1 1020\n3 4 w;x 1 1020\n";
    CHECK_EQ(sp_profile_add_raw(&p, t, strlen(t), "t", "t", m, err, sizeof err), -1);
    CHECK(strstr(err, "line 4: task has a character") != NULL);
    const char u[] = "# sonde raw build-id=" FIX_BID " source=tick 100Hz "
                     "samples=3 dropped=0 cpus=2 ms=5\n"
                     "1 4 w 0 1020\n2 5 w 1 1020\n";
    CHECK_EQ(sp_profile_add_raw(&p, u, strlen(u), "u", "u", m, err, sizeof err), 0);
    fix_symbolize(&p);
    char *out = capture(&p, 0, false);
    CHECK_STR(out, "w;spin 3\n");
    free(out);
    sp_profile_free(&p);
}

TEST(folded_name_sanitized)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sp_folded_name(f, "a;b c\td");
    fclose(f);
    CHECK_STR(buf, "a_b_c_d");
    free(buf);
}

TEST(text_report_kernel_format_with_lines)
{
    struct sp_profile p;
    CHECK_EQ(fix_load(&p), 0);
    char *out = capture(&p, 1, false);
    CHECK_STR(out,
              "kernel k1\n"
              "profiled 1000 ms\n"
              "10 samples on 2 cpus, 1 dropped, source pmu/nmi intel fixed-ctr1\n"
              "90.0% 9 spin+0x10..0x20 (a.h:5)\n"
              "        <- caller+0x5 (a.c:30)\n"
              "        <- top+0x5 (b.c:7)\n"
              "10.0% 1 0x9999 (??:0)\n"
              "\n"
              "kernel k2\n"
              "profiled 2000 ms\n"
              "5 samples on 1 cpus, 0 dropped, source tick 100Hz\n"
              "100.0% 5 spin+0x10 (a.h:5)\n"
              "        <- caller+0x5 (a.c:30)\n");
    free(out);
    sp_profile_free(&p);
}

/* One input: no "kernel" line, exactly the kernel's layout; an empty
 * profile says so. */
TEST(text_report_single_and_empty)
{
    struct sp_profile p;
    char err[SP_ERR_MAX];
    sp_profile_init(&p);
    unsigned m = sp_profile_add_map(&p, "k.elf");
    const char t[] = "# sonde raw build-id=" FIX_BID " source=tick 100Hz "
                     "samples=0 dropped=4 cpus=0 ms=5\n";
    CHECK_EQ(sp_profile_add_raw(&p, t, strlen(t), "t", "t", m, err, sizeof err), 0);
    char *out = capture(&p, 1, false);
    CHECK_STR(out, "profiled 5 ms\n0 samples on 0 cpus, 4 dropped, source "
                   "tick 100Hz\nno samples\n");
    free(out);
    out = capture(&p, 0, false);
    CHECK_STR(out, "");
    free(out);
    sp_profile_free(&p);
}

/* Ties in count order by leaf address, as the kernel does; callers that
 * differ keep their chains apart. */
TEST(text_report_order_and_split_callers)
{
    struct sp_profile p;
    char err[SP_ERR_MAX];
    sp_profile_init(&p);
    unsigned m = sp_profile_add_map(&p, "k.elf");
    const char t[] = "# sonde raw build-id=" FIX_BID " source=tick 100Hz "
                     "samples=4 dropped=0 cpus=1 ms=5\n"
                     "2 1 a 0 2005 3005\n2 1 a 0 1020 3005\n";
    CHECK_EQ(sp_profile_add_raw(&p, t, strlen(t), "t", "t", m, err, sizeof err), 0);
    fix_symbolize(&p);
    char *out = capture(&p, 1, false);
    CHECK_STR(out, "profiled 5 ms\n4 samples on 1 cpus, 0 dropped, source "
                   "tick 100Hz\n"
                   "50.0% 2 spin+0x20 (a.c:14)\n"
                   "        <- top+0x5 (b.c:7)\n"
                   "50.0% 2 caller+0x5 (a.c:30)\n"
                   "        <- top+0x5 (b.c:7)\n");
    free(out);
    sp_profile_free(&p);
}

/* A lock profile: folded has the lock as the root frame above the
 * holder's task, the delay in microseconds; text is the kernel's
 * `profile lock` report. */
TEST(folded_and_text_lock_profile)
{
    struct sp_profile p;
    CHECK_EQ(fix_load_one(&p, FIX_LOCK_RAW("1", "3000400")), 0);
    char *out = capture(&p, 0, false);
    CHECK_STR(out,
              "[mutex probe-m];holder;caller;spin;step 30000\n"
              "[spin probe-s];holder;caller 3000\n");
    free(out);
    out = capture(&p, 0, true);
    CHECK(strstr(out, "l;[mutex probe-m];holder;caller;spin;step 30000\n") != NULL);
    free(out);
    out = capture(&p, 1, false);
    CHECK(strstr(out, "lock profiled 2000 ms: 33.000 ms of waits charged to their holders, "
                      "12 waits, 4 releases, 1 dropped\nmutex 30.000 ms, spin 3.000 ms\n") == out);
    CHECK(strstr(out, "\n90.9% 30.000 ms [mutex probe-m] 10 waits, held by task 6 holder\n"
                      "        <- spin+0x10 (a.h:5)\n        <- caller+0x5 (a.c:30)\n"
                      "9.1% 3.000 ms [spin probe-s] 2 waits, held by task 6 holder\n") != NULL);
    free(out);
    sp_profile_free(&p);
}
