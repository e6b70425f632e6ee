/* tests/unit/harness.c: runs the TEST blocks registered by one test file. */
#include "test.h"
#include <stdlib.h>

#define MAX_TESTS 512

static struct { const char *name; void (*fn)(void); } tests[MAX_TESTS];
static int ntests;
static int cur_failed;

void test_register(const char *name, void (*fn)(void))
{
    if (ntests == MAX_TESTS) {
        fprintf(stderr, "harness: more than %d tests\n", MAX_TESTS);
        exit(2);
    }
    tests[ntests].name = name;
    tests[ntests].fn = fn;
    ntests++;
}

void test_fail(const char *file, int line, const char *what)
{
    if (cur_failed < 5)
        printf("  FAIL %s:%d: %s\n", file, line, what);
    cur_failed++;
}

int main(int argc, char **argv)
{
    int passed = 0, failed = 0;
    const char *only = argc > 1 ? argv[1] : NULL;

    for (int i = 0; i < ntests; i++) {
        if (only && strcmp(only, tests[i].name) != 0)
            continue;
        cur_failed = 0;
        tests[i].fn();
        if (cur_failed) {
            printf("FAIL %s\n", tests[i].name);
            failed++;
        } else {
            passed++;
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
