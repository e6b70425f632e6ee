// LINK: lib/printf.c
/* Host tests of lib/printf.c: fmt_snprintf against hand-worked expected
 * strings (and against the C library's snprintf where the formats mean
 * the same), truncation at every size, and pr_printf in chunks. */
#include "test.h"
#include "lib/printf.h"
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>

/* Formats with ours and with libc, and checks both text and length. */
#define SAME_AS_LIBC(...)                                                 \
    do {                                                                  \
        char _ours[256], _libc[256];                                      \
        int _n1 = fmt_snprintf(_ours, sizeof _ours, __VA_ARGS__);         \
        int _n2 = snprintf(_libc, sizeof _libc, __VA_ARGS__);             \
        CHECK_STR(_ours, _libc);                                          \
        CHECK_EQ(_n1, _n2);                                               \
    } while (0)

static const char *fmt1(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static const char *fmt1(const char *fmt, ...)
{
    static char buf[512];
    va_list ap;
    va_start(ap, fmt);
    fmt_vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return buf;
}

/* Hidden from GCC's format checker, which rejects a literal NULL %s. */
static const char *volatile null_str = NULL;

TEST(printf_decimal)
{
    CHECK_STR(fmt1("%d", 0), "0");
    CHECK_STR(fmt1("%d", 42), "42");
    CHECK_STR(fmt1("%d", -42), "-42");
    CHECK_STR(fmt1("%i", -7), "-7");
    CHECK_STR(fmt1("%d", INT_MIN), "-2147483648");
    CHECK_STR(fmt1("%d", INT_MAX), "2147483647");
    CHECK_STR(fmt1("%u", 4294967295u), "4294967295");
    CHECK_STR(fmt1("%ld", (long)INT64_MIN), "-9223372036854775808");
    CHECK_STR(fmt1("%lld", (long long)INT64_MIN), "-9223372036854775808");
    CHECK_STR(fmt1("%lld", (long long)INT64_MAX), "9223372036854775807");
    CHECK_STR(fmt1("%llu", (unsigned long long)UINT64_MAX),
              "18446744073709551615");
    CHECK_STR(fmt1("%lu", (unsigned long)UINT64_MAX), "18446744073709551615");
    CHECK_STR(fmt1("%zu", (size_t)123456789012ull), "123456789012");
    CHECK_STR(fmt1("%zd", (size_t)-5), "-5");
}

TEST(printf_hex_octal)
{
    CHECK_STR(fmt1("%x", 0xdeadbeefu), "deadbeef");
    CHECK_STR(fmt1("%X", 0xdeadbeefu), "DEADBEEF");
    CHECK_STR(fmt1("%x", 0u), "0");
    CHECK_STR(fmt1("%llx", (unsigned long long)UINT64_MAX), "ffffffffffffffff");
    CHECK_STR(fmt1("%lX", 0xabcdef0123456789ul), "ABCDEF0123456789");
    CHECK_STR(fmt1("%o", 8u), "10");
    CHECK_STR(fmt1("%o", 0755u), "755");
    CHECK_STR(fmt1("%llo", (unsigned long long)UINT64_MAX),
              "1777777777777777777777");
    CHECK_STR(fmt1("%x", -1), "ffffffff");   /* int argument, as unsigned */
}

TEST(printf_pointer)
{
    CHECK_STR(fmt1("%p", (void *)0x1234), "0x0000000000001234");
    CHECK_STR(fmt1("%p", (void *)0), "0x0000000000000000");
    CHECK_STR(fmt1("%p", (void *)0xffffffff80001000ul), "0xffffffff80001000");
    CHECK_STR(fmt1("[%20p]", (void *)0x10), "[  0x0000000000000010]");
    CHECK_STR(fmt1("[%-20p]", (void *)0x10), "[0x0000000000000010  ]");
}

TEST(printf_string_char)
{
    CHECK_STR(fmt1("%s", "hello"), "hello");
    CHECK_STR(fmt1("%s", null_str), "(null)");
    CHECK_STR(fmt1("%s|%s", "", "x"), "|x");
    CHECK_STR(fmt1("%c%c%c", 'a', 'b', 'c'), "abc");
    CHECK_STR(fmt1("100%%"), "100%");
    CHECK_STR(fmt1("%%d"), "%d");
    CHECK_STR(fmt1("[%3c]", 'z'), "[  z]");
    CHECK_STR(fmt1("[%-3c]", 'z'), "[z  ]");
    CHECK_STR(fmt1("plain text"), "plain text");
}

TEST(printf_string_precision)
{
    CHECK_STR(fmt1("%.3s", "abcdef"), "abc");
    CHECK_STR(fmt1("%.0s", "abcdef"), "");
    CHECK_STR(fmt1("%.10s", "abc"), "abc");
    CHECK_STR(fmt1("%.*s", 2, "abcdef"), "ab");
    CHECK_STR(fmt1("%.*s", -1, "abcdef"), "abcdef");   /* negative: none */
    CHECK_STR(fmt1("[%6.2s]", "abcdef"), "[    ab]");
    CHECK_STR(fmt1("[%-6.2s]", "abcdef"), "[ab    ]");
    CHECK_STR(fmt1("%.3s", null_str), "(nu");
    /* Precision bounds the read: an unterminated array is fine. */
    char raw[4] = { 'w', 'x', 'y', 'z' };
    CHECK_STR(fmt1("%.4s", raw), "wxyz");
}

TEST(printf_width_and_flags)
{
    CHECK_STR(fmt1("[%5d]", 42), "[   42]");
    CHECK_STR(fmt1("[%-5d]", 42), "[42   ]");
    CHECK_STR(fmt1("[%05d]", 42), "[00042]");
    CHECK_STR(fmt1("[%05d]", -42), "[-0042]");
    /* '-' beats '0' (GCC warns about the pair, so pass it at run time). */
    const char *minus_zero = "[%-05d]";
    CHECK_STR(fmt1(minus_zero, -42), "[-42  ]");
    CHECK_STR(fmt1("[%08x]", 0xbeefu), "[0000beef]");
    CHECK_STR(fmt1("[%2d]", 12345), "[12345]");    /* width is a minimum */
    CHECK_STR(fmt1("[%*d]", 6, 7), "[     7]");
    CHECK_STR(fmt1("[%*d]", -6, 7), "[7     ]");   /* negative '*': '-' */
    CHECK_STR(fmt1("[%0*d]", 4, 7), "[0007]");
    CHECK_STR(fmt1("[%8s]", "ab"), "[      ab]");
    CHECK_STR(fmt1("[%-8s]", "ab"), "[ab      ]");
    CHECK_STR(fmt1("[%020lld]", (long long)INT64_MIN), "[-9223372036854775808]");
    CHECK_STR(fmt1("[%022lld]", (long long)INT64_MIN),
              "[-009223372036854775808]");
    CHECK_STR(fmt1("[%-24llu]", (unsigned long long)UINT64_MAX),
              "[18446744073709551615    ]");
}

/* Where the formats mean the same thing, agree with the C library. */
TEST(printf_matches_libc)
{
    SAME_AS_LIBC("%d %i %u %x %X %o", -1, 99, 7u, 255u, 255u, 64u);
    SAME_AS_LIBC("[%10d|%-10d|%010d]", -123, -123, -123);
    SAME_AS_LIBC("[%*s|%-*s]", 7, "ab", 7, "cd");
    SAME_AS_LIBC("%lld %llu", (long long)INT64_MIN, (unsigned long long)UINT64_MAX);
    SAME_AS_LIBC("%zu %zx", (size_t)SIZE_MAX, (size_t)SIZE_MAX);
    SAME_AS_LIBC("[%.2s|%5.1s]", "xyz", "xyz");
    SAME_AS_LIBC("%c%%%c", 'q', 'r');
    SAME_AS_LIBC("%08lx-%-8lo|", 0x1fUL, 8UL);
}

TEST(printf_return_value)
{
    char b[4];
    CHECK_EQ(fmt_snprintf(b, sizeof b, "%d", 123456), 6);
    CHECK_STR(b, "123");
    CHECK_EQ(fmt_snprintf(NULL, 0, "%s-%d", "abc", -1), 6);
    CHECK_EQ(fmt_snprintf(b, sizeof b, "%20s", "x"), 20);
    const char *empty = "";
    CHECK_EQ(fmt_snprintf(b, sizeof b, empty), 0);
    CHECK_STR(b, "");
}

/* Every size from 0 to past the full length: never a byte beyond size,
 * always terminated, always the full prefix, always the full length. */
TEST(printf_truncation_every_size)
{
    const char *want = "id=-12345 name=sonde ptr=0x00000000deadbeef end";
    size_t full = strlen(want);
    for (size_t size = 0; size <= full + 3; size++) {
        char buf[128];
        memset(buf, 0xa5, sizeof buf);
        int n = fmt_snprintf(buf, size, "id=%d name=%s ptr=%p end", -12345,
                             "sonde", (void *)0xdeadbeef);
        CHECK_EQ(n, full);
        for (size_t i = size; i < sizeof buf; i++)
            if ((unsigned char)buf[i] != 0xa5) {
                CHECK(!"wrote past size");
                break;
            }
        if (size == 0)
            continue;
        size_t kept = size - 1 < full ? size - 1 : full;
        CHECK_EQ(strlen(buf), kept);
        CHECK(memcmp(buf, want, kept) == 0);
    }
}

/* A printer that captures everything written and counts the calls. */
struct capture {
    struct printer pr;
    char buf[8192];
    size_t len;
    int calls;
    size_t biggest;
};

static void capture_write(struct printer *p, const char *s, size_t n)
{
    struct capture *c = (struct capture *)p;
    CHECK(c->len + n < sizeof c->buf);
    memcpy(c->buf + c->len, s, n);
    c->len += n;
    c->buf[c->len] = '\0';
    c->calls++;
    if (n > c->biggest)
        c->biggest = n;
}

/* CHECK_STR's message snprintf trips -Wformat-truncation on an 8 KiB
 * buffer, so compare captures through this. */
#define CHECK_CAP(c, want) CHECK(strcmp((c).buf, (want)) == 0)

static void capture_init(struct capture *c)
{
    memset(c, 0, sizeof *c);
    c->pr.write = capture_write;
}

TEST(printf_printer_long_output)
{
    struct capture c;
    capture_init(&c);
    char big[1500];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    pr_printf(&c.pr, "<%s|%d|%600s>", big, -99, "r");

    char want[2200];
    int n = snprintf(want, sizeof want, "<%s|%d|%600s>", big, -99, "r");
    CHECK_EQ(c.len, n);
    CHECK(strcmp(c.buf, want) == 0);
    CHECK(c.calls > 1);            /* it did flush in pieces */
    CHECK(c.biggest <= 512);       /* and in small ones */
}

TEST(printf_printer_short_and_puts)
{
    struct capture c;
    capture_init(&c);
    pr_printf(&c.pr, "a%db", 5);
    CHECK_CAP(c, "a5b");
    CHECK_EQ(c.calls, 1);
    pr_puts(&c.pr, "-tail");
    CHECK_CAP(c, "a5b-tail");
    pr_write(&c.pr, "XYZ", 2);
    CHECK_CAP(c, "a5b-tailXY");
    int before = c.calls;
    pr_printf(&c.pr, "%s", "");
    pr_write(&c.pr, "", 0);
    CHECK_EQ(c.calls, before);     /* nothing to say, nothing written */
}

TEST(printf_buf_printer)
{
    char buf[8];
    memset(buf, 0x5a, sizeof buf);
    struct buf_printer bp;
    buf_printer_init(&bp, buf, 6);
    CHECK_STR(buf, "");
    pr_printf(&bp.pr, "%d", 123);
    CHECK_STR(buf, "123");
    pr_printf(&bp.pr, "%s", "456789");
    CHECK_STR(buf, "12345");       /* first cap-1 bytes kept */
    CHECK_EQ(bp.len, 5);
    CHECK_EQ(bp.offered, 9);
    CHECK_EQ((unsigned char)buf[6], 0x5a);   /* never past cap */
    pr_puts(&bp.pr, "more");
    CHECK_STR(buf, "12345");
    CHECK_EQ(bp.offered, 13);

    struct buf_printer z;
    buf_printer_init(&z, buf, 0);  /* cap 0: counts, stores nothing */
    pr_puts(&z.pr, "abc");
    CHECK_EQ(z.offered, 3);
    CHECK_EQ(z.len, 0);
    CHECK_EQ((unsigned char)buf[6], 0x5a);
}

TEST(printf_buf_printer_long)
{
    char buf[300];
    struct buf_printer bp;
    buf_printer_init(&bp, buf, sizeof buf);
    for (int i = 0; i < 100; i++)
        pr_printf(&bp.pr, "%03d,", i);
    CHECK_EQ(bp.offered, 400);
    CHECK_EQ(bp.len, 299);
    CHECK_EQ(strlen(buf), 299);
    CHECK(memcmp(buf, "000,001,002,", 12) == 0);
}

/* A width or precision of many digits counts up to a million and reads
 * the rest without counting them: no int overflow (UBSan would say), and
 * what follows them is still the conversion. */
TEST(printf_long_digit_runs_are_capped)
{
    char buf[16];
    const char *volatile wide = "%99999999999999999999d|";  /* hidden from GCC's checker */
    int n = fmt_snprintf(buf, sizeof buf, wide, 5);
    CHECK_EQ(n, 9999999 + 1);                            /* 7 nines counted, then capped */
    CHECK_STR(buf, "               ");                   /* truncated, terminated */
    const char *volatile prec = "%.99999999999999999999s|%05d";
    CHECK_EQ(fmt_snprintf(buf, sizeof buf, prec, "ab", 7), 8);
    CHECK_STR(buf, "ab|00007");
}
