// LINK: lib/parse.c
/* Host tests of lib/parse.c: strict numbers, addresses, word splitting and
 * the kernel command line. */
#include "test.h"
#include "lib/parse.h"

static bool u64_ok(const char *s, uint64_t want)
{
    uint64_t v = 0xabababababababab;
    return parse_u64(s, &v) && v == want;
}

/* A rejected string must also leave *out alone. */
static bool u64_bad(const char *s)
{
    uint64_t v = 0x5555;
    return !parse_u64(s, &v) && v == 0x5555;
}

TEST(parse_u64_decimal)
{
    CHECK(u64_ok("0", 0));
    CHECK(u64_ok("7", 7));
    CHECK(u64_ok("1000", 1000));
    CHECK(u64_ok("010", 10));               /* no octal */
    CHECK(u64_ok("18446744073709551615", UINT64_MAX));
    CHECK(u64_ok("18446744073709551610", UINT64_MAX - 5));
    CHECK(u64_bad("18446744073709551616"));
    CHECK(u64_bad("18446744073709551620"));
    CHECK(u64_bad("99999999999999999999"));
    CHECK(u64_bad("184467440737095516150"));
}

TEST(parse_u64_hex)
{
    CHECK(u64_ok("0x0", 0));
    CHECK(u64_ok("0x10", 16));
    CHECK(u64_ok("0XfF", 255));
    CHECK(u64_ok("0xdeadBEEF", 0xdeadbeef));
    CHECK(u64_ok("0xffffffffffffffff", UINT64_MAX));
    CHECK(u64_ok("0x0000000000000000000001", 1));
    CHECK(u64_bad("0x10000000000000000"));
    CHECK(u64_bad("0x"));
    CHECK(u64_bad("0xg"));
    CHECK(u64_bad("ff"));                   /* hex needs its 0x */
    CHECK(u64_bad("0x-1"));
}

TEST(parse_u64_rejects)
{
    CHECK(u64_bad(""));
    CHECK(u64_bad(NULL));
    CHECK(u64_bad("-1"));
    CHECK(u64_bad("+1"));
    CHECK(u64_bad(" 1"));
    CHECK(u64_bad("1 "));
    CHECK(u64_bad("10x"));
    CHECK(u64_bad("1O0"));
    CHECK(u64_bad("1.5"));
    CHECK(u64_bad("0b101"));
}

TEST(parse_range_bounds)
{
    uint64_t v = 77;
    CHECK(parse_range("1", 1, 2000, &v) && v == 1);
    CHECK(parse_range("2000", 1, 2000, &v) && v == 2000);
    CHECK(parse_range("0x10", 1, 2000, &v) && v == 16);
    v = 77;
    CHECK(!parse_range("0", 1, 2000, &v));
    CHECK(!parse_range("2001", 1, 2000, &v));
    CHECK(!parse_range("abc", 1, 2000, &v));
    CHECK(!parse_range("18446744073709551616", 0, UINT64_MAX, &v));
    CHECK_EQ(v, 77);
    CHECK(parse_range("18446744073709551615", 0, UINT64_MAX, &v) && v == UINT64_MAX);
}

static bool ip_ok(const char *s, uint32_t want)
{
    uint32_t v = 0x12345678;
    return parse_ipv4(s, &v) && v == want;
}

static bool ip_bad(const char *s)
{
    uint32_t v = 0x12345678;
    return !parse_ipv4(s, &v) && v == 0x12345678;
}

TEST(parse_ipv4_good)
{
    CHECK(ip_ok("10.0.2.15", 0x0a00020f));
    CHECK(ip_ok("0.0.0.0", 0));
    CHECK(ip_ok("255.255.255.255", 0xffffffff));
    CHECK(ip_ok("127.0.0.1", 0x7f000001));
    CHECK(ip_ok("192.168.100.200", 0xc0a864c8));
}

TEST(parse_ipv4_bad)
{
    CHECK(ip_bad(""));
    CHECK(ip_bad(NULL));
    CHECK(ip_bad("10.0.2"));
    CHECK(ip_bad("10.0.2.15.1"));
    CHECK(ip_bad("10.0.2.15."));
    CHECK(ip_bad(".10.0.2.15"));
    CHECK(ip_bad("10..2.15"));
    CHECK(ip_bad("256.0.0.1"));
    CHECK(ip_bad("10.0.2.256"));
    CHECK(ip_bad("1000.0.0.1"));
    CHECK(ip_bad("10.0.2.1500"));
    CHECK(ip_bad("10.0.2.15 "));
    CHECK(ip_bad(" 10.0.2.15"));
    CHECK(ip_bad("10.0.2.x"));
    CHECK(ip_bad("10.0.-2.15"));
    CHECK(ip_bad("010.0.2.15"));            /* octal to inet_aton */
    CHECK(ip_bad("0x0a.0.2.15"));
    CHECK(ip_bad("10.0.2.15/24"));
}

TEST(parse_split_words)
{
    char line[] = "  profile\t 100  cycles ";
    char *argv[4];
    CHECK_EQ(split_words(line, argv, 4), 3);
    CHECK_STR(argv[0], "profile");
    CHECK_STR(argv[1], "100");
    CHECK_STR(argv[2], "cycles");

    char one[] = "lscpu";
    CHECK_EQ(split_words(one, argv, 4), 1);
    CHECK_STR(argv[0], "lscpu");

    char empty[] = "";
    CHECK_EQ(split_words(empty, argv, 4), 0);
    char blank[] = " \t  ";
    CHECK_EQ(split_words(blank, argv, 4), 0);

    char exact[] = "a b c d";
    CHECK_EQ(split_words(exact, argv, 4), 4);
    CHECK_STR(argv[3], "d");
}

TEST(parse_split_too_many)
{
    char line[] = "a b c d e";
    char *argv[5] = { 0 };
    /* Room for 4 given; the fifth slot must stay untouched. */
    CHECK_EQ(split_words(line, argv, 4), -1);
    CHECK(argv[4] == NULL);

    char line2[] = "x y";
    CHECK_EQ(split_words(line2, argv, 1), -1);
    char line3[] = "x";
    CHECK_EQ(split_words(line3, argv, 0), -1);
    char line4[] = "   ";
    CHECK_EQ(split_words(line4, argv, 0), 0);
}

TEST(cmdline_basic)
{
    struct cmdline cl;
    cmdline_parse(&cl, "udpshell=9000 ip=10.0.2.15  gw=10.0.2.2\tsmp=4 quiet pmu=");
    CHECK_EQ(cl.n, 6);
    CHECK_EQ(cl.dropped, 0);
    CHECK_STR(cmdline_get(&cl, "udpshell"), "9000");
    CHECK_STR(cmdline_get(&cl, "ip"), "10.0.2.15");
    CHECK_STR(cmdline_get(&cl, "gw"), "10.0.2.2");
    CHECK_STR(cmdline_get(&cl, "smp"), "4");
    CHECK_STR(cmdline_get(&cl, "quiet"), "");   /* bare word */
    CHECK_STR(cmdline_get(&cl, "pmu"), "");     /* empty value */
    CHECK(cmdline_get(&cl, "absent") == NULL);
    CHECK(cmdline_get(&cl, "ud") == NULL);      /* no prefix match */
    CHECK(cmdline_get(&cl, "udpshell=9000") == NULL);
}

TEST(cmdline_values_with_equals_and_repeats)
{
    struct cmdline cl;
    cmdline_parse(&cl, "opt=a=b smp=2 smp=8 =junk");
    CHECK_STR(cmdline_get(&cl, "opt"), "a=b");  /* split at the first '=' */
    CHECK_STR(cmdline_get(&cl, "smp"), "8");    /* the last one wins */
    CHECK_EQ(cl.dropped, 1);                    /* "=junk": no key */
    CHECK(cmdline_get(&cl, "") == NULL);
}

TEST(cmdline_empty)
{
    struct cmdline cl;
    cmdline_parse(&cl, "");
    CHECK_EQ(cl.n, 0);
    CHECK_EQ(cl.dropped, 0);
    CHECK(cmdline_get(&cl, "x") == NULL);
    cmdline_parse(&cl, NULL);
    CHECK_EQ(cl.n, 0);
    cmdline_parse(&cl, "   \t ");
    CHECK_EQ(cl.n, 0);
    CHECK_EQ(cl.dropped, 0);
}

TEST(cmdline_too_many_words)
{
    char text[1024] = "";
    size_t len = 0;
    for (int i = 0; i < CMDLINE_MAX_PARAMS + 5; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "k%d=%d ", i, i);
    struct cmdline cl;
    cmdline_parse(&cl, text);
    CHECK_EQ(cl.n, CMDLINE_MAX_PARAMS);
    CHECK_EQ(cl.dropped, 5);
    CHECK_STR(cmdline_get(&cl, "k0"), "0");
    CHECK_STR(cmdline_get(&cl, "k31"), "31");
    CHECK(cmdline_get(&cl, "k32") == NULL);
}

/* Text longer than the private buffer: the words that fit are kept, the
 * rest counted, and nothing is written past the struct's buffer. */
TEST(cmdline_longer_than_buf)
{
    struct {
        struct cmdline cl;
        unsigned char guard[64];
    } g;
    memset(g.guard, 0xcd, sizeof g.guard);

    char text[2048];
    char word[201];
    memset(word, 'v', 200);
    word[200] = '\0';
    /* "a=vvv..." words of 202 bytes: two fit in 512 (with NULs), not three. */
    snprintf(text, sizeof text, "a=%s b=%s c=%s d=1", word, word, word);
    cmdline_parse(&g.cl, text);
    CHECK_EQ(g.cl.n, 3);                    /* a, b, and the short d */
    CHECK_EQ(g.cl.dropped, 1);              /* c */
    CHECK(cmdline_get(&g.cl, "a") && strlen(cmdline_get(&g.cl, "a")) == 200);
    CHECK(cmdline_get(&g.cl, "c") == NULL);
    CHECK_STR(cmdline_get(&g.cl, "d"), "1");
    for (size_t i = 0; i < sizeof g.guard; i++)
        CHECK_EQ(g.guard[i], 0xcd);

    /* One word longer than the whole buffer. */
    char huge[1200];
    memset(huge, 'h', sizeof huge - 1);
    huge[sizeof huge - 1] = '\0';
    cmdline_parse(&g.cl, huge);
    CHECK_EQ(g.cl.n, 0);
    CHECK_EQ(g.cl.dropped, 1);
    for (size_t i = 0; i < sizeof g.guard; i++)
        CHECK_EQ(g.guard[i], 0xcd);
}

/* A word of exactly 511 bytes fills the buffer with its NUL and fits. */
TEST(cmdline_exact_fit)
{
    char text[600];
    memset(text, 'k', 511);
    text[511] = '\0';
    struct cmdline cl;
    cmdline_parse(&cl, text);
    CHECK_EQ(cl.n, 1);
    CHECK_EQ(cl.dropped, 0);
    text[511] = 'k';
    text[512] = '\0';
    cmdline_parse(&cl, text);
    CHECK_EQ(cl.n, 0);
    CHECK_EQ(cl.dropped, 1);
}

TEST(cmdline_wipe_overwrites_every_value_in_place)
{
    char t[] = "ushkey=abc ip=1.2.3.4\tushkey=0123 ushkeyx=keep ushkey xushkey=keep ushkey=";
    CHECK_EQ(cmdline_wipe(t, "ushkey"), 3);
    CHECK_STR(t, "ushkey=xxx ip=1.2.3.4\tushkey=xxxx ushkeyx=keep ushkey xushkey=keep ushkey=");
    char e[] = "";
    CHECK_EQ(cmdline_wipe(e, "ushkey"), 0);
    CHECK_EQ(cmdline_wipe(NULL, "ushkey"), 0);
}

TEST(cmdline_copy_keeps_whole_words_only)
{
    char d[16];
    CHECK_EQ(cmdline_copy(d, sizeof d, "smp=2 ip=1.2.3"), 0);      /* 14 bytes: fits */
    CHECK_STR(d, "smp=2 ip=1.2.3");
    CHECK_EQ(cmdline_copy(d, sizeof d, "smp=2 ip=1.2.3.4"), 1);    /* 16: one too many */
    CHECK_STR(d, "smp=2 ");                     /* ip=1.2.3. would be another address */
    CHECK_EQ(cmdline_copy(d, sizeof d, "smp=2 ip=1.2.3.4 udpshell=9000"), 2);
    CHECK_STR(d, "smp=2 ");
    CHECK_EQ(cmdline_copy(d, sizeof d, "udpshell=9000 x y"), 1);   /* the cut falls on a space */
    CHECK_STR(d, "udpshell=9000 x");
    CHECK_EQ(cmdline_copy(d, sizeof d, "udpshell=9000 xy zz"), 2);
    CHECK_STR(d, "udpshell=9000 ");
    CHECK_EQ(cmdline_copy(d, sizeof d, "udpshell=9000  \t yy"), 1);  /* ... in a run of them */
    CHECK_STR(d, "udpshell=9000  ");
    CHECK_EQ(cmdline_copy(d, sizeof d, "ushkey=0123456789abcdef"), 1);   /* one long word */
    CHECK_STR(d, "");
    CHECK_EQ(cmdline_copy(d, sizeof d, ""), 0);
    CHECK_STR(d, "");
    CHECK_EQ(cmdline_copy(d, sizeof d, NULL), 0);
    CHECK_STR(d, "");
    d[0] = 'z';
    CHECK_EQ(cmdline_copy(d, 0, "a b c"), 3);   /* no room at all: nothing written */
    CHECK_EQ(d[0], 'z');
}

TEST(cmdline_count_counts_key_words_bare_or_not)
{
    CHECK_EQ(cmdline_count("ushkey=1 ushkey ushkey= ushkeyx=2 xushkey=3 ushkey=4=5\tushkey", "ushkey"), 5);
    CHECK_EQ(cmdline_count("", "ushkey"), 0);
    CHECK_EQ(cmdline_count(NULL, "ushkey"), 0);
    CHECK_EQ(cmdline_count("ushke ushkex", "ushkey"), 0);
}
