/* lib/lineedit.c: the shell's line editor, fed one byte at a time.
 *
 * After LE_LINE the caller reads le->buf and le->len; they stay valid
 * until the next le_feed, which starts the next line (the reset is lazy,
 * keyed on `last` being the newline that ended the line).
 *
 * A line that grows past LINE_MAX is not truncated: the extra bytes are
 * counted in `overflow`, neither stored nor echoed, and the whole line is
 * refused (LE_TOOLONG) at its newline. Running the first 255 bytes of a
 * longer command would execute something the user never typed. */
#include "lib/lineedit.h"
#include "lib/printf.h"

#define CTRL_C    0x03
#define BACKSPACE 0x08
#define CTRL_U    0x15
#define DEL       0x7f

static void echo_str(struct printer *echo, const char *s, size_t n)
{
    if (echo)
        pr_write(echo, s, n);
}

static void le_reset(struct lineedit *le)
{
    le->len = 0;
    le->overflow = 0;
    le->buf[0] = '\0';
}

void le_init(struct lineedit *le)
{
    le_reset(le);
    le->last = 0;
}

static bool is_newline(char c)
{
    return c == '\r' || c == '\n';
}

/* Erases one byte. Overflow bytes go first: they were never echoed, so
 * erasing them echoes nothing either and the terminal stays in step. */
static void le_erase_one(struct lineedit *le, struct printer *echo)
{
    if (le->overflow) {
        le->overflow--;
    } else if (le->len) {
        le->len--;
        echo_str(echo, "\b \b", 3);
    }
}

static enum le_result le_end_line(struct lineedit *le, struct printer *echo)
{
    echo_str(echo, "\r\n", 2);
    if (le->overflow)
        return LE_TOOLONG;
    le->buf[le->len] = '\0';
    return LE_LINE;
}

enum le_result le_feed(struct lineedit *le, char c, struct printer *echo)
{
    char prev = le->last;
    le->last = c;

    if (is_newline(prev))
        le_reset(le);          /* the previous byte ended a line */

    if (is_newline(c)) {
        /* CR LF (or LF CR) is one newline: the second half is swallowed,
         * and `last` cleared so that CR LF CR LF is still two lines. */
        if (is_newline(prev) && prev != c) {
            le->last = 0;
            return LE_MORE;
        }
        return le_end_line(le, echo);
    }

    unsigned char u = (unsigned char)c;
    if (u >= 0x20 && u <= 0x7e) {
        if (le->len < LINE_MAX) {
            le->buf[le->len++] = c;
            echo_str(echo, &c, 1);
        } else {
            le->overflow++;
        }
        return LE_MORE;
    }

    switch (u) {
    case BACKSPACE:
    case DEL:
        le_erase_one(le, echo);
        break;
    case CTRL_U:
        le->overflow = 0;
        while (le->len)
            le_erase_one(le, echo);
        break;
    case CTRL_C:
        echo_str(echo, "^C\r\n", 4);
        le_reset(le);
        return LE_CANCEL;
    default:
        break;                 /* other control bytes and bytes >= 0x80 */
    }
    return LE_MORE;
}
