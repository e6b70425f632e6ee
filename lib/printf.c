/* lib/printf.c: bounded formatted printing and the printer helpers.
 *
 * One formatter (fmt_run) produces bytes into a struct fmt_out. The out
 * either fills a caller's buffer and drops the excess (fmt_vsnprintf), or
 * fills a small chunk on the stack and flushes it through a printer each
 * time it is full (pr_vprintf). Either way the formatter never needs more
 * than one chunk of memory, whatever the output length, and never
 * allocates. No floating point: the kernel is built -mgeneral-regs-only.
 *
 * Safe to call from any context in which the printer's write is safe: the
 * formatter itself takes no lock and touches no global state. */
#include <stdbool.h>
#include <stdint.h>
#include "lib/printf.h"
#include "lib/string.h"

#define PR_CHUNK 128   /* stack bytes pr_vprintf formats into before a flush */

struct fmt_out {
    char *buf;
    size_t cap;              /* bytes buf may hold (excluding NUL for snprintf) */
    size_t pos;              /* bytes in buf now */
    size_t total;            /* bytes the full output has produced so far */
    struct printer *p;       /* NULL: drop what does not fit; else flush to it */
};

static void out_flush(struct fmt_out *o)
{
    if (o->p && o->pos) {
        o->p->write(o->p, o->buf, o->pos);
        o->pos = 0;
    }
}

static void out_byte(struct fmt_out *o, char c)
{
    if (o->pos == o->cap)
        out_flush(o);          /* no-op for snprintf: the byte is dropped */
    if (o->pos < o->cap)
        o->buf[o->pos++] = c;
    o->total++;
}

static void out_bytes(struct fmt_out *o, const char *s, size_t n)
{
    while (n--)
        out_byte(o, *s++);
}

static void out_repeat(struct fmt_out *o, char c, long n)
{
    while (n-- > 0)
        out_byte(o, c);
}

/* One conversion's flags, width and precision. */
struct spec {
    bool left, zero;
    long width;
    long prec;                 /* -1: none given */
};

/* Digits of v in base (8, 10 or 16), least significant first, into tmp.
 * 22 bytes hold the longest case, UINT64_MAX in octal. */
static int u64_digits(char tmp[24], unsigned long long v, unsigned base,
                      bool upper)
{
    const char *dig = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    int n = 0;
    do {
        tmp[n++] = dig[v % base];
        v /= base;
    } while (v);
    return n;
}

/* An integer: sign or prefix, then zero padding (from '0' or a precision),
 * then the digits, with space padding on the side the '-' flag picks. */
static void out_number(struct fmt_out *o, const struct spec *sp,
                       unsigned long long mag, bool neg, unsigned base,
                       bool upper, const char *prefix)
{
    char tmp[24];
    int nd = u64_digits(tmp, mag, base, upper);
    long plen = (long)strlen(prefix) + (neg ? 1 : 0);
    long zeros = 0;

    if (sp->prec >= 0) {
        if (sp->prec > nd)
            zeros = sp->prec - nd;
    } else if (sp->zero && !sp->left && sp->width > plen + nd) {
        zeros = sp->width - plen - nd;
    }
    long pad = sp->width - plen - zeros - nd;

    if (!sp->left)
        out_repeat(o, ' ', pad);
    if (neg)
        out_byte(o, '-');
    out_bytes(o, prefix, strlen(prefix));
    out_repeat(o, '0', zeros);
    while (nd)
        out_byte(o, tmp[--nd]);
    if (sp->left)
        out_repeat(o, ' ', pad);
}

/* A string of n bytes, space padded to the width ('0' pads strings with
 * spaces too: zero-padding text is never what anyone meant). */
static void out_padded(struct fmt_out *o, const struct spec *sp,
                       const char *s, size_t n)
{
    long pad = sp->width - (long)n;
    if (!sp->left)
        out_repeat(o, ' ', pad);
    out_bytes(o, s, n);
    if (sp->left)
        out_repeat(o, ' ', pad);
}

static void out_string(struct fmt_out *o, const struct spec *sp, const char *s)
{
    if (!s)
        s = "(null)";
    /* strnlen, not strlen: with a precision the string need not be
     * terminated within reach. */
    size_t n = sp->prec >= 0 ? strnlen(s, (size_t)sp->prec) : strlen(s);
    out_padded(o, sp, s, n);
}

/* A width or precision written in digits, added to *v (0 on entry):
 * past a million the digits are read but no longer counted, so that no
 * string of them overflows; returns what follows them. */
static const char *parse_digits(const char *f, long *v)
{
    while (*f >= '0' && *f <= '9' && *v < 1000000)
        *v = *v * 10 + (*f++ - '0');
    while (*f >= '0' && *f <= '9')
        f++;
    return f;
}

/* Reads the flags, width and precision after a '%'; returns the position
 * of the length modifier or conversion. */
static const char *parse_spec(const char *f, struct spec *sp, va_list *ap)
{
    sp->left = sp->zero = false;
    sp->width = 0;
    sp->prec = -1;
    for (;; f++) {
        if (*f == '-')
            sp->left = true;
        else if (*f == '0')
            sp->zero = true;
        else
            break;
    }
    if (*f == '*') {
        int w = va_arg(*ap, int);
        if (w < 0) {                  /* C: a negative '*' width means '-' */
            sp->left = true;
            w = w == INT32_MIN ? INT32_MAX : -w;
        }
        sp->width = w;
        f++;
    } else {
        f = parse_digits(f, &sp->width);
    }
    if (*f == '.') {
        f++;
        sp->prec = 0;
        if (*f == '*') {
            int pr = va_arg(*ap, int);
            sp->prec = pr < 0 ? -1 : pr;   /* negative: as if none */
            f++;
        } else {
            f = parse_digits(f, &sp->prec);
        }
    }
    return f;
}

enum len_mod { LEN_INT, LEN_LONG, LEN_LLONG, LEN_SIZE };

static unsigned long long arg_unsigned(enum len_mod lm, va_list *ap)
{
    switch (lm) {
    case LEN_LONG:  return va_arg(*ap, unsigned long);
    case LEN_LLONG: return va_arg(*ap, unsigned long long);
    case LEN_SIZE:  return va_arg(*ap, size_t);
    default:        return va_arg(*ap, unsigned int);
    }
}

static long long arg_signed(enum len_mod lm, va_list *ap)
{
    switch (lm) {
    case LEN_LONG:  return va_arg(*ap, long);
    case LEN_LLONG: return va_arg(*ap, long long);
    case LEN_SIZE:  return (long long)va_arg(*ap, size_t);
    default:        return va_arg(*ap, int);
    }
}

/* One conversion at f (just past flags/width/precision); returns the byte
 * after it. An unknown conversion is printed as written, so a bad format
 * shows up in the output instead of silently eating arguments. */
static const char *convert(struct fmt_out *o, const char *f,
                           const struct spec *sp, va_list *ap)
{
    enum len_mod lm = LEN_INT;
    if (*f == 'l') {
        f++;
        lm = LEN_LONG;
        if (*f == 'l') {
            f++;
            lm = LEN_LLONG;
        }
    } else if (*f == 'z') {
        f++;
        lm = LEN_SIZE;
    }

    switch (*f) {
    case 'd':
    case 'i': {
        long long v = arg_signed(lm, ap);
        /* Negate in unsigned arithmetic: -INT64_MIN does not exist. */
        unsigned long long mag = v < 0 ? 0ull - (unsigned long long)v
                                       : (unsigned long long)v;
        out_number(o, sp, mag, v < 0, 10, false, "");
        break;
    }
    case 'u':
        out_number(o, sp, arg_unsigned(lm, ap), false, 10, false, "");
        break;
    case 'x':
    case 'X':
        out_number(o, sp, arg_unsigned(lm, ap), false, 16, *f == 'X', "");
        break;
    case 'o':
        out_number(o, sp, arg_unsigned(lm, ap), false, 8, false, "");
        break;
    case 'p': {
        /* Always the full 16 digits, so columns of addresses line up. */
        struct spec ps = *sp;
        ps.prec = 16;
        ps.zero = false;
        out_number(o, &ps, (uintptr_t)va_arg(*ap, void *), false, 16, false,
                   "0x");
        break;
    }
    case 's':
        out_string(o, sp, va_arg(*ap, const char *));
        break;
    case 'c': {
        char c = (char)va_arg(*ap, int);
        out_padded(o, sp, &c, 1);
        break;
    }
    case '%':
        out_byte(o, '%');
        break;
    case '\0':                 /* a lone '%' at the end: print it, stop */
        out_byte(o, '%');
        return f;
    default:
        out_byte(o, '%');
        out_byte(o, *f);
        break;
    }
    return f + 1;
}

static void fmt_run(struct fmt_out *o, const char *fmt, va_list *ap)
{
    const char *f = fmt;
    while (*f) {
        if (*f != '%') {
            out_byte(o, *f++);
            continue;
        }
        struct spec sp;
        f = parse_spec(f + 1, &sp, ap);
        f = convert(o, f, &sp, ap);
    }
}

int fmt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    struct fmt_out o = {
        .buf = buf, .cap = size ? size - 1 : 0, .pos = 0, .total = 0, .p = NULL,
    };
    va_list aq;
    va_copy(aq, ap);
    fmt_run(&o, fmt, &aq);
    va_end(aq);
    if (size)
        buf[o.pos] = '\0';
    return o.total > INT32_MAX ? INT32_MAX : (int)o.total;
}

int fmt_snprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = fmt_vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}

void pr_vprintf(struct printer *p, const char *fmt, va_list ap)
{
    char chunk[PR_CHUNK];
    struct fmt_out o = {
        .buf = chunk, .cap = sizeof chunk, .pos = 0, .total = 0, .p = p,
    };
    va_list aq;
    va_copy(aq, ap);
    fmt_run(&o, fmt, &aq);
    va_end(aq);
    out_flush(&o);
}

void pr_printf(struct printer *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pr_vprintf(p, fmt, ap);
    va_end(ap);
}

void pr_write(struct printer *p, const char *s, size_t n)
{
    if (n)
        p->write(p, s, n);
}

void pr_puts(struct printer *p, const char *s)
{
    pr_write(p, s, strlen(s));
}

static void buf_printer_write(struct printer *p, const char *s, size_t n)
{
    /* pr is the first member, so the printer is the buf_printer. */
    struct buf_printer *bp = (struct buf_printer *)p;
    bp->offered += n;
    if (bp->cap == 0)
        return;
    size_t room = bp->cap - 1 - bp->len;
    if (n > room)
        n = room;
    memcpy(bp->buf + bp->len, s, n);
    bp->len += n;
    bp->buf[bp->len] = '\0';
}

void buf_printer_init(struct buf_printer *bp, char *buf, size_t cap)
{
    _Static_assert(offsetof(struct buf_printer, pr) == 0,
                   "buf_printer_write casts the printer back");
    bp->pr.write = buf_printer_write;
    bp->buf = buf;
    bp->cap = cap;
    bp->len = 0;
    bp->offered = 0;
    if (cap)
        buf[0] = '\0';
}
