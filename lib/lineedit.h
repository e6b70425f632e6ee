/* lib/lineedit.h: the shell's line editor, fed one byte at a time.
 *
 * Backspace/DEL erase a byte, Ctrl-U the line, Ctrl-C abandons it; other
 * control bytes are ignored. A line longer than LINE_MAX bytes is refused
 * whole when its newline arrives, never truncated or overflowed. Echo goes
 * to the printer given (may be NULL). */
#pragma once
#include <stdbool.h>
#include <stddef.h>

struct printer;

#define LINE_MAX 255

enum le_result {
    LE_MORE,      /* keep feeding */
    LE_LINE,      /* le->buf holds a complete line, NUL-terminated */
    LE_CANCEL,    /* Ctrl-C: line abandoned */
    LE_TOOLONG,   /* newline after more than LINE_MAX bytes: line refused */
};

struct lineedit {
    char buf[LINE_MAX + 1];
    size_t len;
    size_t overflow;   /* bytes typed past LINE_MAX in this line */
    char last;         /* previous byte, to fold CR LF into one newline */
};

void le_init(struct lineedit *le);
enum le_result le_feed(struct lineedit *le, char c, struct printer *echo);
