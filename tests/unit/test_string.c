/* tests/unit/test_string.c: lib/string.h's strlcpy, the one routine there
 * that host tests and the kernel share (the rest is the C library's on
 * the host, lib/string.c in the kernel). */
#include "test.h"
#include "lib/string.h"

TEST(strlcpy_copies_and_terminates)
{
    char d[8];
    memset(d, 'x', sizeof d);
    CHECK_EQ(strlcpy(d, "abc", sizeof d), 3);
    CHECK_STR(d, "abc");
    CHECK_EQ(d[4], 'x');                        /* nothing written past the end */
    CHECK_EQ(strlcpy(d, "", sizeof d), 0);
    CHECK_STR(d, "");
}

TEST(strlcpy_truncates_and_says_so)
{
    char d[4];
    CHECK_EQ(strlcpy(d, "abcdef", sizeof d), 6);    /* >= size: truncated */
    CHECK_STR(d, "abc");
    CHECK_EQ(strlcpy(d, "abcd", sizeof d), 4);      /* one too many */
    CHECK_STR(d, "abc");
    CHECK_EQ(strlcpy(d, "abc", sizeof d), 3);       /* exactly fits */
    CHECK_STR(d, "abc");
}

TEST(strlcpy_size_zero_and_one)
{
    char d[2] = { 'q', 'r' };
    CHECK_EQ(strlcpy(d, "abc", 0), 3);              /* touches nothing */
    CHECK_EQ(d[0], 'q');
    CHECK_EQ(strlcpy(d, "abc", 1), 3);              /* room for the terminator only */
    CHECK_EQ(d[0], '\0');
    CHECK_EQ(d[1], 'r');
}
