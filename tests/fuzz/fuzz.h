/* tests/fuzz/fuzz.h: what every libFuzzer target here shares.
 *
 * A target checks invariants beyond "no crash" with FUZZ_CHECK: a broken
 * one aborts, which libFuzzer reports as a crash and saves the input. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(c)                                                      \
    do {                                                                   \
        if (!(c)) {                                                        \
            fprintf(stderr, "%s:%d: invariant broken: %s\n",               \
                    __FILE__, __LINE__, #c);                               \
            abort();                                                       \
        }                                                                  \
    } while (0)

/* Cuts an input into pieces: a 2-byte big-endian length, then that many
 * bytes (or what is left). Returns false when nothing is left. */
struct fuzz_cur { const uint8_t *p; size_t n; };
static inline int fuzz_next(struct fuzz_cur *c, const uint8_t **piece, size_t *len)
{
    if (c->n < 2)
        return 0;
    size_t want = (size_t)c->p[0] << 8 | c->p[1];
    c->p += 2;
    c->n -= 2;
    *len = want < c->n ? want : c->n;
    *piece = c->p;
    c->p += *len;
    c->n -= *len;
    return 1;
}
