/* uapi/rawtext.h: the scanners the raw text formats' strict parsers share
 * (uapi/profile_raw.c, uapi/trace_raw.c): an error appender, a cursor
 * over one line and its fields (DEC, hex, literals), and the cut into
 * lines.
 *
 * Static inline in a header, not a .c of its own: each parser is linked
 * alone by the kernel, the host tools and many unit tests, and a shared
 * object file would be one more source on every one of their link
 * lines. No library calls: the kernel builds these as they are.
 *
 * Wire format helpers: prefix rawtext_. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* Always inlined: an out-of-line copy of one would be the first code of
 * its parser's object, which makes this header the first file of that
 * unit's DWARF 5 line table, and GNU addr2line 2.40 then names every
 * innermost frame of the unit by the unit's own file instead
 * (tests/tools/check_sonde_prof.sh compares against it). */
#define RAWTEXT_INLINE static inline __attribute__((always_inline))

/* ---- error text: a tiny appender, since there is no snprintf here ---- */

struct rawtext_msg {
    char *buf;
    size_t cap, len;
};

RAWTEXT_INLINE void rawtext_put(struct rawtext_msg *m, const char *s)
{
    if (!m->cap)
        return;
    for (; *s && m->len + 1 < m->cap; s++)
        m->buf[m->len++] = *s;
    m->buf[m->len] = 0;
}

RAWTEXT_INLINE void rawtext_num(struct rawtext_msg *m, uint64_t v)
{
    char d[21];
    int i = 20;
    d[i] = 0;
    do {
        d[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    rawtext_put(m, d + i);
}

/* err = a then b (b may be NULL); always -1. */
RAWTEXT_INLINE int rawtext_fail(char *err, size_t cap, const char *a, const char *b)
{
    struct rawtext_msg m = { err, cap, 0 };
    rawtext_put(&m, a);
    if (b)
        rawtext_put(&m, b);
    return -1;
}

/* ---- fields ---------------------------------------------------------- */

/* A cursor over one line. */
struct rawtext_cur {
    const char *p, *end;
    char stop;                  /* a field also ends here (0: only at ' ') */
};

/* The field at the cursor: up to the next space (or, when the cursor
 * has a stop, that character), or the end. */
RAWTEXT_INLINE size_t rawtext_field_len(const struct rawtext_cur *c)
{
    size_t n = 0;
    while (c->p + n < c->end && c->p[n] != ' ' && c->p[n] != c->stop)
        n++;
    return n;
}

/* DEC at the cursor up to the field's end, within max. */
RAWTEXT_INLINE int rawtext_take_dec(struct rawtext_cur *c, uint64_t max, uint64_t *out,
                                   const char *what, char *err, size_t cap)
{
    size_t n = rawtext_field_len(c);
    if (n == 0)
        return rawtext_fail(err, cap, what, " is missing");
    if (n > 1 && c->p[0] == '0')
        return rawtext_fail(err, cap, what, " has a leading zero");
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = c->p[i];
        if (ch < '0' || ch > '9')
            return rawtext_fail(err, cap, what, " is not a decimal number");
        unsigned d = (unsigned)(ch - '0');
        if (v > (max - d) / 10)
            return rawtext_fail(err, cap, what, " is out of range");
        v = v * 10 + d;
    }
    c->p += n;
    *out = v;
    return 0;
}

/* 1-16 lowercase hex digits at the cursor, no "0x". */
RAWTEXT_INLINE int rawtext_take_hex(struct rawtext_cur *c, uint64_t *out, const char *what,
                                   char *err, size_t cap)
{
    size_t n = rawtext_field_len(c);
    if (n == 0)
        return rawtext_fail(err, cap, what, " is missing");
    if (n > 16)
        return rawtext_fail(err, cap, what, " has more than 16 hex digits");
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = c->p[i];
        unsigned d;
        if (ch >= '0' && ch <= '9')
            d = (unsigned)(ch - '0');
        else if (ch >= 'a' && ch <= 'f')
            d = (unsigned)(ch - 'a' + 10);
        else
            return rawtext_fail(err, cap, what,
                                " is not lowercase hex (no 0x, digits 0-9a-f)");
        v = v << 4 | d;
    }
    c->p += n;
    *out = v;
    return 0;
}

/* Whether the literal s is at the cursor (nothing taken). */
RAWTEXT_INLINE int rawtext_at(const struct rawtext_cur *c, const char *s)
{
    const char *p = c->p;
    for (; *s; s++, p++)
        if (p == c->end || *p != *s)
            return 0;
    return 1;
}

/* The literal s at the cursor. */
RAWTEXT_INLINE int rawtext_take_lit(struct rawtext_cur *c, const char *s, char *err, size_t cap)
{
    const char *p = c->p;
    for (const char *q = s; *q; q++, p++) {
        if (p == c->end || *p != *q) {
            struct rawtext_msg m = { err, cap, 0 };
            rawtext_put(&m, "expected \"");
            rawtext_put(&m, s);
            rawtext_put(&m, "\"");
            return -1;
        }
    }
    c->p = p;
    return 0;
}

RAWTEXT_INLINE int rawtext_take_sep(struct rawtext_cur *c, const char *next, char *err,
                                   size_t cap)
{
    if (c->p < c->end && *c->p == ' ') {
        c->p++;
        return 0;
    }
    return rawtext_fail(err, cap, "missing space before ", next);
}

/* 40 lowercase hex digits (a GNU build id) into out (41 bytes). */
RAWTEXT_INLINE int rawtext_take_build_id(struct rawtext_cur *c, char *out, char *err,
                                        size_t cap)
{
    size_t n = rawtext_field_len(c);
    if (n != 40)
        return rawtext_fail(err, cap, "build-id is not 40 hex digits", 0);
    for (size_t i = 0; i < n; i++) {
        char ch = c->p[i];
        if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
            return rawtext_fail(err, cap, "build-id is not lowercase hex", 0);
        out[i] = ch;
    }
    out[n] = 0;
    c->p += n;
    return 0;
}

/* A name at the cursor into out (max + 1 bytes): 1..max characters from
 * '!'..'~' except ';' (and, when after_colon, ':': the name followed a
 * ':' and runs to the field's end). what names it in messages. */
RAWTEXT_INLINE int rawtext_take_name(struct rawtext_cur *c, char *out, size_t max,
                                    int after_colon, const char *what, char *err, size_t cap)
{
    size_t n = rawtext_field_len(c);
    struct rawtext_msg m = { err, cap, 0 };
    rawtext_put(&m, what);
    if (n == 0) {
        rawtext_put(&m, after_colon ? " after ':' is missing" : " is missing");
        return -1;
    }
    if (n > max) {
        rawtext_put(&m, " is longer than ");
        rawtext_num(&m, max);
        rawtext_put(&m, " characters");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        char t = c->p[i];
        if (t < '!' || t > '~' || t == ';' || (after_colon && t == ':')) {
            rawtext_put(&m, after_colon ? " has a character outside '!'..'~', a ';' or a ':'"
                                        : " has a character outside '!'..'~' or a ';'");
            return -1;
        }
        out[i] = t;
    }
    out[n] = 0;
    c->p += n;
    return 0;
}

/* Addresses up to the line's end, or (bar) up to " |": the first named
 * first, then at most max - 1 return addresses, each after a space. */
RAWTEXT_INLINE int rawtext_take_addrs(struct rawtext_cur *c, uint64_t *frames, unsigned max,
                                     unsigned *depth, int bar, const char *first, char *err,
                                     size_t cap)
{
    *depth = 0;
    if (rawtext_take_hex(c, &frames[0], first, err, cap) < 0)
        return -1;
    *depth = 1;
    while (c->p < c->end && !(bar && rawtext_at(c, " |"))) {
        if (rawtext_take_sep(c, "a return address", err, cap) < 0)
            return -1;
        if (*depth == max) {
            struct rawtext_msg m = { err, cap, 0 };
            rawtext_put(&m, "more than ");
            rawtext_num(&m, max);
            rawtext_put(&m, " frames (pc and at most ");
            rawtext_num(&m, max - 1);
            rawtext_put(&m, " return addresses)");
            return -1;
        }
        if (rawtext_take_hex(c, &frames[*depth], "return address", err, cap) < 0)
            return -1;
        (*depth)++;
    }
    return 0;
}

/* ---- lines ----------------------------------------------------------- */

/* "line N: " + what the line parser said (what may be err itself). */
RAWTEXT_INLINE int rawtext_fail_line(char *err, size_t cap, unsigned line, const char *what)
{
    char tmp[160];
    size_t i = 0;
    for (; what[i] && i + 1 < sizeof tmp; i++)
        tmp[i] = what[i];
    tmp[i] = 0;
    struct rawtext_msg m = { err, cap, 0 };
    rawtext_put(&m, "line ");
    rawtext_num(&m, line);
    rawtext_put(&m, ": ");
    rawtext_put(&m, tmp);
    return -1;
}

/* The next line [*start, *end) of text from *pos; -1 (err set) if it is
 * cut or has a character no line may hold. */
RAWTEXT_INLINE int rawtext_next_line(const char *text, size_t len, size_t *pos, unsigned line,
                                    size_t *start, size_t *end, char *err, size_t cap)
{
    size_t i = *pos;
    *start = i;
    for (; i < len && text[i] != '\n'; i++) {
        if (text[i] == '\r')
            return rawtext_fail_line(err, cap, line, "carriage return (lines end "
                                     "with \\n alone)");
        if (text[i] == 0)
            return rawtext_fail_line(err, cap, line, "NUL byte");
    }
    if (i == len)
        return rawtext_fail_line(err, cap, line, "truncated: the last line has no "
                                 "newline");
    *end = i;
    *pos = i + 1;
    return 0;
}
