/* tests/unit/batch_fixture.h: what the profile stream's record tests share
 * (test_profile_stream-lock.c, -trace.c): a BATCH parsed from a heap copy
 * of exactly its bytes, so that ASan sees any read past it, its records
 * kept in order. */
#pragma once
#include "test.h"
#include "uapi/profile_stream.h"
#include <stdlib.h>
#include <string.h>

struct recs {
    unsigned n;
    struct pstr_record r[16];
};

static inline void take_rec(void *ctx, const struct pstr_record *r)
{
    struct recs *s = ctx;
    if (s->n < 16)
        s->r[s->n] = *r;
    s->n++;
}

/* The batch parse of len bytes of d, from a heap copy of that size. */
static inline int parse_batch_copy(const uint8_t *d, size_t len, struct recs *out)
{
    uint8_t *copy = malloc(len ? len : 1);
    memcpy(copy, d, len);
    struct pstr_hdr h;
    int rc = pstr_parse(copy, len, &h);
    if (rc == 0) {
        struct pstr_batch b;
        rc = pstr_batch_parse(&h, &b, take_rec, out);
    }
    free(copy);
    return rc;
}
