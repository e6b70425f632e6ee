/* lib/printf.h: bounded formatted printing and the printer interface.
 *
 * Every shell command writes through a struct printer (serial, a UDP reply
 * buffer, a test capture), never to a device directly. */
#pragma once
#include <stdarg.h>
#include <stddef.h>

struct printer {
    /* Write n bytes. Must accept any n; may drop bytes it cannot hold. */
    void (*write)(struct printer *p, const char *s, size_t n);
};

/* Formats: %d %i %u %x %X %o %p %s %c %%, length modifiers l, ll, z,
 * flags '-' and '0', a width (digits or '*'), and a precision for %s
 * (".N" or ".*"). Never writes past size bytes and always terminates when
 * size > 0. Returns the length the full output would have had. */
int fmt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int fmt_snprintf(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Format to a printer, in pieces, with no length limit on the output. */
void pr_vprintf(struct printer *p, const char *fmt, va_list ap);
void pr_printf(struct printer *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void pr_write(struct printer *p, const char *s, size_t n);
void pr_puts(struct printer *p, const char *s);

/* A printer into a fixed buffer: keeps the first cap-1 bytes, always
 * terminated, counts everything offered. */
struct buf_printer {
    struct printer pr;
    char *buf;
    size_t cap, len, offered;
};
void buf_printer_init(struct buf_printer *bp, char *buf, size_t cap);
