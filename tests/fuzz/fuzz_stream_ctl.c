// LINK: uapi/stream_ctl.c
/* tests/fuzz/fuzz_stream_ctl.c: the stream's control line
 * (uapi/stream_ctl.c), which the collector reads in whatever a kernel's
 * shell (or anyone who can reach its socket) answers.
 *
 * Invariants, for any input:
 * - sctl_parse and sctl_find read nothing past the n bytes given (the
 *   input is copied into a buffer of exactly its size, so ASan sees a
 *   read past it);
 * - a line that parses formats again (nothing parsed is out of range),
 *   and the formatted line parses to the same values: the grammar has
 *   one meaning per line, whatever keys were skipped;
 * - a refusal is one of the codes the header lists. */
#include <string.h>
#include "fuzz.h"
#include "uapi/stream_ctl.h"

static void check_line(const struct sctl_line *l)
{
    char b[SCTL_LINE_MAX + 1];          /* and its NUL */
    size_t n = sctl_format(b, sizeof b, l);
    FUZZ_CHECK(n > 0 && n <= SCTL_LINE_MAX && b[n - 1] == '\n' && b[n] == 0);
    struct sctl_line again;
    FUZZ_CHECK(sctl_parse(b, n, &again) == 0);
    FUZZ_CHECK(memcmp(l, &again, sizeof again) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = malloc(size ? size : 1);
    if (!s)
        return 0;
    memcpy(s, data, size);
    struct sctl_line l;
    int rc = sctl_parse(s, size, &l);
    FUZZ_CHECK(rc <= 0 && rc >= SCTL_E_MISSING);
    if (rc == 0)
        check_line(&l);
    rc = sctl_find(s, size, &l);
    FUZZ_CHECK(rc <= 0 && rc >= SCTL_E_MISSING);
    if (rc == 0)
        check_line(&l);
    free(s);
    return 0;
}
