// LINK: uapi/stream_ctl.c
/* tests/unit/test_stream_ctl.c: the stream's control line
 * (uapi/stream_ctl.c): format and parse round trips, every refusal with
 * its code, unknown keys skipped, and the lines the Python fake kernel
 * (tests/tools/fake_stream_kernel.py, which writes the grammar by hand)
 * really produces, read by this parser. */
#include "test.h"
#include "uapi/stream_ctl.h"
#include <stdlib.h>

static int parse(const char *s, struct sctl_line *l)
{
    return sctl_parse(s, strlen(s), l);
}

TEST(sctl_round_trip_every_field)
{
    struct sctl_line l = {
        .sl_op = SCTL_OP_STATUS, .sl_result = SCTL_OK, .sl_state = SCTL_ST_STREAMING,
        .sl_have = SCTL_HAVE_ID | SCTL_HAVE_LAST | SCTL_HAVE_TO | SCTL_HAVE_KIND |
                   SCTL_HAVE_CPUS | SCTL_HAVE_LEN | SCTL_HAVE_AGE | SCTL_HAVE_CONFIRMED |
                   SCTL_HAVE_KA | SCTL_HAVE_REASON | SCTL_HAVE_COUNTS,
        .sl_id = 0x1a2b3c4d, .sl_last = 0xffffffff, .sl_to_ip = 0x0a000202, .sl_to_port = 5555,
        .sl_kind = SCTL_KIND_WALL, .sl_cpus = 4, .sl_len = SCTL_LEN_MAX, .sl_age = 3120,
        .sl_confirmed = 1, .sl_ka = 410, .sl_reason = SCTL_END_UNCONFIRMED,
        .sl_records = UINT64_MAX, .sl_datagrams = 260, .sl_drops = 0, .sl_sendfail = 7,
        .sl_karefused = 3,
    };
    char b[SCTL_LINE_MAX];
    size_t n = sctl_format(b, sizeof b, &l);
    CHECK_STR(b, "stream v=1 op=status result=ok state=streaming id=0x1a2b3c4d last=0xffffffff "
                 "to=10.0.2.2:5555 kind=wall cpus=4 len=86400000 age=3120 confirmed=1 ka=410 "
                 "reason=unconfirmed records=18446744073709551615 datagrams=260 drops=0 "
                 "sendfail=7 karefused=3\n");
    CHECK_EQ(n, strlen(b));
    struct sctl_line r;
    CHECK_EQ(sctl_parse(b, n, &r), 0);
    CHECK_EQ(r.sl_v, 1);
    l.sl_v = 1;
    CHECK(memcmp(&l, &r, sizeof l) == 0);
}

TEST(sctl_round_trip_each_enum_and_no_options)
{
    for (unsigned op = SCTL_OP_START; op <= SCTL_OP_KEEPALIVE; op++)
        for (unsigned res = SCTL_OK; res <= SCTL_INVALID; res++)
            for (unsigned st = SCTL_ST_NONE; st <= SCTL_ST_ENDED; st++) {
                struct sctl_line l = { .sl_op = (uint8_t)op, .sl_result = (uint8_t)res,
                                       .sl_state = (uint8_t)st }, r;
                char b[SCTL_LINE_MAX];
                size_t n = sctl_format(b, sizeof b, &l);
                CHECK(n > 0);
                CHECK_EQ(sctl_parse(b, n, &r), 0);
                CHECK_EQ(r.sl_op, op);
                CHECK_EQ(r.sl_result, res);
                CHECK_EQ(r.sl_state, st);
                CHECK_EQ(r.sl_have, 0);
            }
    for (unsigned k = SCTL_KIND_CPU; k <= SCTL_KIND_TRACE; k++)
        for (unsigned why = SCTL_END_STOPPED; why <= SCTL_END_UNCONFIRMED; why++) {
            struct sctl_line l = { .sl_op = SCTL_OP_STOP, .sl_result = SCTL_OK,
                                   .sl_state = SCTL_ST_ENDED,
                                   .sl_have = SCTL_HAVE_KIND | SCTL_HAVE_REASON,
                                   .sl_kind = (uint8_t)k, .sl_reason = (uint8_t)why }, r;
            char b[SCTL_LINE_MAX];
            CHECK_EQ(sctl_parse(b, sctl_format(b, sizeof b, &l), &r), 0);
            CHECK_EQ(r.sl_kind, k);
            CHECK_EQ(r.sl_reason, why);
        }
}

TEST(sctl_format_refuses_what_the_parser_would)
{
    char b[SCTL_LINE_MAX];
    struct sctl_line ok = { .sl_op = SCTL_OP_START, .sl_result = SCTL_OK,
                            .sl_state = SCTL_ST_STREAMING };
    struct sctl_line l = ok;
    l.sl_op = 0;
    CHECK_EQ(sctl_format(b, sizeof b, &l), 0);
    CHECK_STR(b, "");
    l = ok;
    l.sl_have = SCTL_HAVE_ID;           /* id 0 */
    CHECK_EQ(sctl_format(b, sizeof b, &l), 0);
    l = ok;
    l.sl_have = SCTL_HAVE_TO;           /* port 0 */
    CHECK_EQ(sctl_format(b, sizeof b, &l), 0);
    l = ok;
    l.sl_have = SCTL_HAVE_CPUS;
    l.sl_cpus = SCTL_CPUS_MAX + 1;
    CHECK_EQ(sctl_format(b, sizeof b, &l), 0);
    l = ok;
    l.sl_have = SCTL_HAVE_LEN;
    l.sl_len = SCTL_LEN_MAX + 1;
    CHECK_EQ(sctl_format(b, sizeof b, &l), 0);
    l = ok;
    l.sl_have = SCTL_HAVE_KIND;
    l.sl_kind = SCTL_KIND_TRACE + 1;
    CHECK_EQ(sctl_format(b, sizeof b, &l), 0);
    /* Too small a buffer: nothing, never a cut line. */
    CHECK_EQ(sctl_format(b, 20, &ok), 0);
    CHECK_STR(b, "");
    CHECK(sctl_format(b, sizeof b, &ok) > 0);
}

TEST(sctl_is_line_tells_the_control_line_by_its_first_word)
{
    CHECK(sctl_is_line("stream v=1 op=stop", 18));
    CHECK(sctl_is_line("stream ", 7));
    CHECK(!sctl_is_line("stream ", 6));         /* n counts, not the NUL */
    CHECK(!sctl_is_line("stream", 6));
    CHECK(!sctl_is_line("streams v=1", 11));
    CHECK(!sctl_is_line("Stream v=1", 10));
    CHECK(!sctl_is_line("profile: stream ", 16));
    CHECK(!sctl_is_line("", 0));
}

TEST(sctl_refusals_each_with_its_code)
{
    struct sctl_line l;
    static const struct { const char *s; int code; } cases[] = {
        { "profile: streaming id 0x1a2b3c4d to 10.0.2.2:5555", SCTL_E_NOLINE },
        { "streams v=1 op=stop result=ok state=ended", SCTL_E_NOLINE },
        { "stream", SCTL_E_NOLINE },
        { "stream ", SCTL_E_MISSING },
        { "stream op=stop result=ok state=ended", SCTL_E_MISSING },
        { "stream v=1", SCTL_E_MISSING },
        { "stream v=1 op=stop result=ok", SCTL_E_MISSING },
        { "stream v=2 op=stop result=ok state=ended", SCTL_E_VERSION },
        { "stream v=01 op=stop result=ok state=ended", SCTL_E_VERSION },
        { "stream v=99999 op=stop", SCTL_E_VERSION },
        { "stream v=1  op=stop result=ok state=ended", SCTL_E_SYNTAX },
        { "stream v=1 op=stop result=ok state=ended ", SCTL_E_SYNTAX },
        { "stream v=1 op=stop result=ok state=ended\r", SCTL_E_SYNTAX },
        { "stream v=1 op stop", SCTL_E_SYNTAX },
        { "stream v=1 op= result=ok state=ended", SCTL_E_SYNTAX },
        { "stream v=1 =stop result=ok state=ended", SCTL_E_SYNTAX },
        { "stream v=1 Op=stop result=ok state=ended", SCTL_E_SYNTAX },
        { "stream v=1 op=st=op result=ok state=ended", SCTL_E_SYNTAX },
        { "stream v=1 abcdefghijklmnopq=1 op=stop result=ok state=ended", SCTL_E_SYNTAX },
        { "stream v=1 op=halt result=ok state=ended", SCTL_E_RANGE },
        { "stream v=1 op=stop result=ok state=ended id=0x00000000", SCTL_E_RANGE },
        { "stream v=1 op=stop result=ok state=ended id=0x1a2b3c4", SCTL_E_RANGE },
        { "stream v=1 op=stop result=ok state=ended id=1a2b3c4d00", SCTL_E_RANGE },
        { "stream v=1 op=stop result=ok state=ended id=0x1a2b3c4g", SCTL_E_RANGE },
        { "stream v=1 op=stop result=ok state=ended to=10.0.2.256:5", SCTL_E_RANGE },
        { "stream v=1 op=stop result=ok state=ended to=10.0.2.2:0", SCTL_E_RANGE },
        { "stream v=1 op=stop result=ok state=ended to=10.0.2.2:65536", SCTL_E_RANGE },
        { "stream v=1 op=stop result=ok state=ended to=10.0.2:5", SCTL_E_RANGE },
        { "stream v=1 op=stop result=ok state=ended to=10.0.2.2.1:5", SCTL_E_RANGE },
        { "stream v=1 op=stop result=ok state=ended to=10.0.2.2", SCTL_E_RANGE },
        { "stream v=1 op=stop result=ok state=ended cpus=4097", SCTL_E_RANGE },
        { "stream v=1 op=stop result=ok state=ended len=86400001", SCTL_E_RANGE },
        { "stream v=1 op=stop result=ok state=ended confirmed=2", SCTL_E_RANGE },
        { "stream v=1 op=stop result=ok state=ended records=18446744073709551616", SCTL_E_RANGE },
        { "stream v=1 op=stop result=ok state=ended records=007", SCTL_E_RANGE },
        { "stream v=1 op=stop result=ok state=ended drops=-1", SCTL_E_RANGE },
        { "stream v=1 op=stop result=ok state=ended kind=gpu", SCTL_E_RANGE },
        { "stream v=1 op=stop result=ok state=ended reason=bored", SCTL_E_RANGE },
        { "stream v=1 op=stop result=ok state=ended op=start", SCTL_E_DUP },
        { "stream v=1 op=stop result=ok state=ended id=0x00000001 id=0x00000001", SCTL_E_DUP },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        int rc = parse(cases[i].s, &l);
        if (rc != cases[i].code) {
            char m[200];
            snprintf(m, sizeof m, "'%s': %d, not %d", cases[i].s, rc, cases[i].code);
            test_fail(__FILE__, __LINE__, m);
        }
    }
    /* Another version is reported as what it says. */
    CHECK_EQ(parse("stream v=2 op=stop whatever", &l), SCTL_E_VERSION);
    CHECK_EQ(l.sl_v, 2);
    CHECK(strcmp(sctl_strerror(SCTL_E_VERSION), sctl_strerror(SCTL_E_NOLINE)) != 0);
}

/* The widest line the formatter can write: every key at its longest
 * value. It must fit SCTL_LINE_MAX (a status whose line did not fit was
 * sent without one, and read as a kernel of another version), and parse
 * back the same. */
TEST(ctl_widest_line_fits)
{
    struct sctl_line l = {
        .sl_op = SCTL_OP_KEEPALIVE, .sl_result = SCTL_INVALID, .sl_state = SCTL_ST_STREAMING,
        .sl_have = SCTL_HAVE_ID | SCTL_HAVE_LAST | SCTL_HAVE_TO | SCTL_HAVE_KIND |
                   SCTL_HAVE_CPUS | SCTL_HAVE_LEN | SCTL_HAVE_AGE | SCTL_HAVE_CONFIRMED |
                   SCTL_HAVE_KA | SCTL_HAVE_REASON | SCTL_HAVE_COUNTS,
        .sl_id = 0xffffffff, .sl_last = 0xffffffff, .sl_to_ip = 0xffffffff, .sl_to_port = 65535,
        .sl_kind = SCTL_KIND_ALLOCS, .sl_cpus = SCTL_CPUS_MAX, .sl_len = SCTL_LEN_MAX,
        .sl_age = SCTL_MS_MAX, .sl_confirmed = 1, .sl_ka = SCTL_MS_MAX,
        .sl_reason = SCTL_END_UNCONFIRMED, .sl_records = UINT64_MAX, .sl_datagrams = UINT64_MAX,
        .sl_drops = UINT64_MAX, .sl_sendfail = UINT64_MAX, .sl_karefused = UINT64_MAX,
    };
    char b[SCTL_LINE_MAX + 1];
    size_t n = sctl_format(b, sizeof b, &l);
    CHECK(n > 320);                 /* past the first limit, which it broke */
    CHECK(n <= SCTL_LINE_MAX);
    CHECK_EQ(n, strlen(b));
    struct sctl_line r;
    CHECK_EQ(sctl_parse(b, n, &r), 0);
    l.sl_v = 1;
    CHECK(memcmp(&l, &r, sizeof l) == 0);
}

TEST(sctl_unknown_keys_skipped_and_the_line_ends_at_newline)
{
    struct sctl_line l;
    const char *s = "stream v=1 colour=blue op=keepalive result=other state=streaming "
                    "z9_=x id=0x0000abcd\nprofile: stream 0x00000001 is not running\n";
    CHECK_EQ(parse(s, &l), 0);
    CHECK_EQ(l.sl_op, SCTL_OP_KEEPALIVE);
    CHECK_EQ(l.sl_result, SCTL_OTHER);
    CHECK_EQ(l.sl_have, SCTL_HAVE_ID);
    CHECK_EQ(l.sl_id, 0xabcd);
    /* Bounded: a line past SCTL_LINE_MAX is refused whatever it holds. */
    char big[SCTL_LINE_MAX + 40];
    int n = snprintf(big, sizeof big, "stream v=1 op=stop result=none state=none");
    while (n + 4 < SCTL_LINE_MAX)
        n += snprintf(big + n, sizeof big - (size_t)n, " x=1");
    CHECK_EQ(sctl_parse(big, (size_t)n, &l), 0);           /* its '\n' would still fit */
    n += snprintf(big + n, sizeof big - (size_t)n, " x=1");
    CHECK_EQ(sctl_parse(big, (size_t)n, &l), SCTL_E_LONG);
    /* Not NUL-terminated: n bytes are all it reads. */
    CHECK_EQ(sctl_parse("stream v=1 op=stop result=none state=nonesuch", 41, &l), 0);
    CHECK_EQ(l.sl_state, SCTL_ST_NONE);
}

TEST(sctl_find_the_line_among_human_text)
{
    struct sctl_line l;
    const char *t = "profile: busy (streaming to 10.0.2.2:5555)\n"
                    "stream v=1 op=start result=busy state=streaming to=10.0.2.2:5555\n";
    CHECK_EQ(sctl_find(t, strlen(t), &l), 0);
    CHECK_EQ(l.sl_result, SCTL_BUSY);
    CHECK_EQ(l.sl_to_port, 5555);
    const char *old = "profile: streaming id 0x1a2b3c4d to 10.0.2.2:5555 (tick 100Hz, 4 cpus)\n";
    CHECK_EQ(sctl_find(old, strlen(old), &l), SCTL_E_NOLINE);
    CHECK_EQ(sctl_find("", 0, &l), SCTL_E_NOLINE);
    const char *v2 = "stream v=2 op=start\nprofile: streaming\n";
    CHECK_EQ(sctl_find(v2, strlen(v2), &l), SCTL_E_VERSION);
    CHECK_EQ(l.sl_v, 2);
}

/* The fake kernel's answers, as it makes them (--control-lines: each of
 * its paths once, "LABEL<TAB>first line"), each read by this parser. */
TEST(sctl_the_python_fakes_lines_parse)
{
    FILE *f = popen("python3 tests/tools/fake_stream_kernel.py --control-lines", "r");
    CHECK(f != NULL);
    if (!f)
        return;
    char line[512];
    unsigned n = 0, with_id = 0;
    bool saw_start = false, saw_stop = false, saw_none = false;
    while (fgets(line, sizeof line, f)) {
        char *tab = strchr(line, '\t');
        CHECK(tab != NULL);
        if (!tab)
            continue;
        *tab = 0;
        const char *label = line, *ctl = tab + 1;
        struct sctl_line l;
        int rc = parse(ctl, &l);
        if (rc != 0) {
            char m[600];
            snprintf(m, sizeof m, "%s: '%s' does not parse: %s", label, ctl, sctl_strerror(rc));
            test_fail(__FILE__, __LINE__, m);
            continue;
        }
        n++;
        with_id += (l.sl_have & SCTL_HAVE_ID) != 0;
        if (strcmp(label, "start") == 0) {
            saw_start = true;
            CHECK_EQ(l.sl_op, SCTL_OP_START);
            CHECK_EQ(l.sl_result, SCTL_OK);
            CHECK_EQ(l.sl_state, SCTL_ST_STREAMING);
            CHECK(l.sl_have & SCTL_HAVE_ID);
            CHECK(l.sl_have & SCTL_HAVE_TO);
        } else if (strcmp(label, "stop") == 0) {
            saw_stop = true;
            CHECK_EQ(l.sl_op, SCTL_OP_STOP);
            CHECK_EQ(l.sl_result, SCTL_OK);
            CHECK_EQ(l.sl_reason, SCTL_END_STOPPED);
        } else if (strcmp(label, "status-none") == 0) {
            saw_none = true;
            CHECK_EQ(l.sl_state, SCTL_ST_NONE);
            CHECK_EQ(l.sl_have & (SCTL_HAVE_ID | SCTL_HAVE_LAST), 0);
        } else if (strncmp(label, "stranger-", 9) == 0) {
            CHECK_EQ(l.sl_have & (SCTL_HAVE_ID | SCTL_HAVE_LAST), 0);   /* no id told */
        }
    }
    CHECK_EQ(pclose(f), 0);
    CHECK(n >= 10);
    CHECK(with_id >= 3);
    CHECK(saw_start && saw_stop && saw_none);
}
