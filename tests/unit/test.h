/* tests/unit/test.h: the host unit-test harness.
 *
 * A test file defines TEST(name) { ... CHECK(...); } blocks; harness.c
 * runs them all and prints "N passed, N failed". A test passes when none
 * of its checks failed. The first line of a test file may name the sources
 * it links:  // LINK: lib/printf.c lib/parse.c */
#pragma once
#include <stdint.h>
#include <stdio.h>
#include <string.h>

void test_register(const char *name, void (*fn)(void));
void test_fail(const char *file, int line, const char *what);

#define TEST(name)                                                        \
    static void name(void);                                               \
    __attribute__((constructor)) static void name##_reg(void)             \
    { test_register(#name, name); }                                       \
    static void name(void)

#define CHECK(c)                                                          \
    do { if (!(c)) test_fail(__FILE__, __LINE__, #c); } while (0)

#define CHECK_EQ(a, b)                                                    \
    do {                                                                  \
        unsigned long long _a = (unsigned long long)(a);                  \
        unsigned long long _b = (unsigned long long)(b);                  \
        if (_a != _b) {                                                   \
            char _m[256];                                                 \
            snprintf(_m, sizeof _m, "%s == %s (0x%llx vs 0x%llx)",        \
                     #a, #b, _a, _b);                                     \
            test_fail(__FILE__, __LINE__, _m);                            \
        }                                                                 \
    } while (0)

#define CHECK_STR(a, b)                                                   \
    do {                                                                  \
        const char *_a = (a), *_b = (b);                                  \
        if (!_a || !_b || strcmp(_a, _b) != 0) {                          \
            char _m[1024];                                                \
            snprintf(_m, sizeof _m, "%s == %s (\"%s\" vs \"%s\")",        \
                     #a, #b, _a ? _a : "(null)", _b ? _b : "(null)");     \
            test_fail(__FILE__, __LINE__, _m);                            \
        }                                                                 \
    } while (0)
