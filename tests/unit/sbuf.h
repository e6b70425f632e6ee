/* tests/unit/sbuf.h: a printer that captures into a string, for tests of
 * code that prints (the `net` command, the UDP shell's stats line). Keeps
 * the first 4095 bytes, always terminated. */
#pragma once
#include <string.h>
#include "lib/printf.h"

struct sbuf { struct printer pr; char s[4096]; size_t n; };

static inline void sbuf_write(struct printer *p, const char *s, size_t n)
{
    struct sbuf *b = (struct sbuf *)p;
    if (b->n + n < sizeof b->s) {
        memcpy(b->s + b->n, s, n);
        b->n += n;
        b->s[b->n] = 0;
    }
}

#define SBUF_INIT { { sbuf_write }, "", 0 }
