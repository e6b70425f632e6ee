// LINK: lib/lineedit.c lib/printf.c
/* Host tests of lib/lineedit.c: editing, newlines, over-long lines and
 * exactly what is echoed. */
#include "test.h"
#include "lib/lineedit.h"
#include "lib/printf.h"

struct echo {
    struct printer pr;
    char buf[4096];
    size_t len;
};

static void echo_write(struct printer *p, const char *s, size_t n)
{
    struct echo *e = (struct echo *)p;
    if (e->len + n >= sizeof e->buf)
        n = sizeof e->buf - 1 - e->len;
    memcpy(e->buf + e->len, s, n);
    e->len += n;
    e->buf[e->len] = '\0';
}

static void echo_init(struct echo *e)
{
    memset(e, 0, sizeof *e);
    e->pr.write = echo_write;
}

/* Checks the echo so far equals want, then clears it. */
#define CHECK_ECHO(e, want)                                               \
    do {                                                                  \
        CHECK_EQ((e)->len, strlen(want));                                 \
        CHECK(memcmp((e)->buf, (want), strlen(want)) == 0);               \
        (e)->len = 0;                                                     \
        (e)->buf[0] = '\0';                                               \
    } while (0)

/* Feeds n bytes; returns the last result, and counts non-MORE results. */
static enum le_result feed(struct lineedit *le, const char *s, size_t n,
                           struct printer *pr, int *ends)
{
    enum le_result r = LE_MORE;
    for (size_t i = 0; i < n; i++) {
        r = le_feed(le, s[i], pr);
        if (r != LE_MORE && ends)
            (*ends)++;
    }
    return r;
}

static enum le_result feeds(struct lineedit *le, const char *s,
                            struct printer *pr)
{
    return feed(le, s, strlen(s), pr, NULL);
}

TEST(le_simple_line)
{
    struct lineedit le;
    struct echo e;
    echo_init(&e);
    le_init(&le);
    CHECK_EQ(feeds(&le, "lscpu", &e.pr), LE_MORE);
    CHECK_ECHO(&e, "lscpu");
    CHECK_EQ(le_feed(&le, '\r', &e.pr), LE_LINE);
    CHECK_STR(le.buf, "lscpu");
    CHECK_EQ(le.len, 5);
    CHECK_ECHO(&e, "\r\n");
}

TEST(le_backspace_and_del)
{
    struct lineedit le;
    struct echo e;
    echo_init(&e);
    le_init(&le);
    feeds(&le, "abc\b", &e.pr);
    CHECK_ECHO(&e, "abc\b \b");
    feeds(&le, "\x7f" "d", &e.pr);
    CHECK_ECHO(&e, "\b \bd");
    CHECK_EQ(le_feed(&le, '\n', &e.pr), LE_LINE);
    CHECK_STR(le.buf, "ad");
}

TEST(le_backspace_on_empty)
{
    struct lineedit le;
    struct echo e;
    echo_init(&e);
    le_init(&le);
    feeds(&le, "\b\b\x7f", &e.pr);
    CHECK_ECHO(&e, "");            /* nothing to erase, nothing echoed */
    feeds(&le, "x\b\b", &e.pr);
    CHECK_ECHO(&e, "x\b \b");
    CHECK_EQ(le_feed(&le, '\r', &e.pr), LE_LINE);
    CHECK_STR(le.buf, "");
    CHECK_EQ(le.len, 0);
}

TEST(le_ctrl_u)
{
    struct lineedit le;
    struct echo e;
    echo_init(&e);
    le_init(&le);
    feeds(&le, "wrong", &e.pr);
    CHECK_ECHO(&e, "wrong");
    feeds(&le, "\x15", &e.pr);
    CHECK_ECHO(&e, "\b \b\b \b\b \b\b \b\b \b");
    feeds(&le, "ok", &e.pr);
    CHECK_EQ(le_feed(&le, '\r', &e.pr), LE_LINE);
    CHECK_STR(le.buf, "ok");
}

TEST(le_ctrl_c)
{
    struct lineedit le;
    struct echo e;
    echo_init(&e);
    le_init(&le);
    feeds(&le, "half", &e.pr);
    e.len = 0;
    CHECK_EQ(le_feed(&le, 0x03, &e.pr), LE_CANCEL);
    CHECK_ECHO(&e, "^C\r\n");
    CHECK_EQ(le.len, 0);
    feeds(&le, "next", &e.pr);
    CHECK_EQ(le_feed(&le, '\n', &e.pr), LE_LINE);
    CHECK_STR(le.buf, "next");
}

TEST(le_control_bytes_ignored)
{
    struct lineedit le;
    struct echo e;
    echo_init(&e);
    le_init(&le);
    /* Tab, ESC, NUL, BEL, Ctrl-A, a byte >= 0x80: none stored or echoed. */
    const char in[] = { 'a', '\t', 0x1b, 0, 0x07, 0x01, (char)0xc3, 'b' };
    CHECK_EQ(feed(&le, in, sizeof in, &e.pr, NULL), LE_MORE);
    CHECK_ECHO(&e, "ab");
    CHECK_EQ(le_feed(&le, '\r', &e.pr), LE_LINE);
    CHECK_STR(le.buf, "ab");
}

TEST(le_crlf_folds)
{
    struct lineedit le;
    struct echo e;
    echo_init(&e);
    le_init(&le);
    int ends = 0;
    /* CR LF, LF CR, lone CR, lone LF, CR LF CR LF: 1+1+1+1+2 lines. */
    const char *in = "a\r\nb\n\rc\rd\ne\r\n\r\n";
    feed(&le, in, strlen(in), &e.pr, &ends);
    CHECK_EQ(ends, 6);
    CHECK_ECHO(&e, "a\r\nb\r\nc\r\nd\r\ne\r\n\r\n");

    /* Each line's text, checked one at a time. */
    le_init(&le);
    CHECK_EQ(feeds(&le, "one\r", NULL), LE_LINE);
    CHECK_STR(le.buf, "one");
    CHECK_EQ(le_feed(&le, '\n', NULL), LE_MORE);   /* folded */
    CHECK_EQ(feeds(&le, "two\n", NULL), LE_LINE);
    CHECK_STR(le.buf, "two");
    CHECK_EQ(le_feed(&le, '\r', NULL), LE_MORE);   /* folded */
    CHECK_EQ(le_feed(&le, '\r', NULL), LE_LINE);   /* a new, empty line */
    CHECK_STR(le.buf, "");
    CHECK_EQ(le_feed(&le, '\r', NULL), LE_LINE);   /* CR CR: two lines */
}

TEST(le_null_echo)
{
    struct lineedit le;
    le_init(&le);
    CHECK_EQ(feeds(&le, "ab\bc\x15xyz\r", NULL), LE_LINE);
    CHECK_STR(le.buf, "xyz");
}

static void fill(struct lineedit *le, struct printer *pr, size_t n)
{
    for (size_t i = 0; i < n; i++)
        le_feed(le, (char)('a' + i % 26), pr);
}

TEST(le_exactly_max)
{
    struct lineedit le;
    struct echo e;
    echo_init(&e);
    le_init(&le);
    fill(&le, &e.pr, LINE_MAX);
    CHECK_EQ(e.len, LINE_MAX);
    CHECK_EQ(le_feed(&le, '\r', &e.pr), LE_LINE);
    CHECK_EQ(strlen(le.buf), LINE_MAX);
    CHECK_EQ(le.buf[LINE_MAX - 1], 'a' + (LINE_MAX - 1) % 26);
}

TEST(le_max_plus_one_refused)
{
    struct lineedit le;
    struct echo e;
    echo_init(&e);
    le_init(&le);
    fill(&le, &e.pr, LINE_MAX + 1);
    CHECK_EQ(e.len, LINE_MAX);         /* the extra byte was not echoed */
    CHECK_EQ(le.overflow, 1);
    CHECK_EQ(le_feed(&le, '\n', &e.pr), LE_TOOLONG);
}

TEST(le_long_line_then_next)
{
    struct lineedit le;
    struct echo e;
    echo_init(&e);
    le_init(&le);
    fill(&le, &e.pr, 300);
    CHECK_EQ(le.len, LINE_MAX);
    CHECK_EQ(le.overflow, 300 - LINE_MAX);
    CHECK_EQ(le_feed(&le, '\r', &e.pr), LE_TOOLONG);
    CHECK_EQ(le_feed(&le, '\n', &e.pr), LE_MORE);  /* its LF folds */
    e.len = 0;
    CHECK_EQ(feeds(&le, "help\r", &e.pr), LE_LINE);
    CHECK_STR(le.buf, "help");
    CHECK_EQ(le.overflow, 0);
    CHECK_ECHO(&e, "help\r\n");
}

/* Erasing back under the limit makes a long line acceptable again, and
 * erasing overflow bytes echoes nothing (they were never shown). */
TEST(le_erase_overflow)
{
    struct lineedit le;
    struct echo e;
    echo_init(&e);
    le_init(&le);
    fill(&le, &e.pr, LINE_MAX + 2);
    e.len = 0;
    feeds(&le, "\b\b", &e.pr);
    CHECK_ECHO(&e, "");
    CHECK_EQ(le.overflow, 0);
    feeds(&le, "\b", &e.pr);
    CHECK_ECHO(&e, "\b \b");
    CHECK_EQ(le_feed(&le, '\r', &e.pr), LE_LINE);
    CHECK_EQ(strlen(le.buf), LINE_MAX - 1);

    /* Ctrl-U clears overflow too. */
    fill(&le, &e.pr, 400);
    feeds(&le, "\x15ok", &e.pr);
    CHECK_EQ(le_feed(&le, '\r', &e.pr), LE_LINE);
    CHECK_STR(le.buf, "ok");
}

TEST(le_ctrl_c_clears_overflow)
{
    struct lineedit le;
    le_init(&le);
    fill(&le, NULL, 500);
    CHECK_EQ(le_feed(&le, 0x03, NULL), LE_CANCEL);
    CHECK_EQ(feeds(&le, "x\n", NULL), LE_LINE);
    CHECK_STR(le.buf, "x");
}
