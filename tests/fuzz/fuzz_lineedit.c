// LINK: lib/lineedit.c lib/printf.c
/* tests/fuzz/fuzz_lineedit.c: the shell's line editor (lib/lineedit.c),
 * fed every byte that arrives on the serial line.
 *
 * Checked against a model written from lineedit.h's contract: printable
 * bytes append (past LINE_MAX they only count), backspace/DEL erase
 * (uncounted overflow first), Ctrl-U empties, Ctrl-C abandons, CR LF or
 * LF CR is one newline, other bytes are ignored. Every result and every
 * completed line must match the model's; the buffer never holds more than
 * LINE_MAX bytes, and the echo never writes more than the line shows plus
 * its erasures and newlines. */
#include <string.h>
#include "fuzz.h"
#include "lib/lineedit.h"
#include "lib/printf.h"

struct model {
    char buf[LINE_MAX + 1];
    size_t len, overflow;
    char last;
};

static int is_nl(char c) { return c == '\r' || c == '\n'; }

static enum le_result model_feed(struct model *m, char c)
{
    char prev = m->last;
    m->last = c;
    if (is_nl(prev))
        m->len = m->overflow = 0;
    if (is_nl(c)) {
        if (is_nl(prev) && prev != c) {
            m->last = 0;
            return LE_MORE;
        }
        return m->overflow ? LE_TOOLONG : LE_LINE;
    }
    unsigned char u = (unsigned char)c;
    if (u >= 0x20 && u <= 0x7e) {
        if (m->len < LINE_MAX)
            m->buf[m->len++] = c;
        else
            m->overflow++;
    } else if (u == 0x08 || u == 0x7f) {
        if (m->overflow)
            m->overflow--;
        else if (m->len)
            m->len--;
    } else if (u == 0x15) {
        m->len = m->overflow = 0;
    } else if (u == 0x03) {
        m->len = m->overflow = 0;
        return LE_CANCEL;
    }
    return LE_MORE;
}

static size_t echoed;
static void count_echo(struct printer *p, const char *s, size_t n) { echoed += n; }

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    static struct lineedit le;
    struct model m = { .len = 0 };
    struct printer echo = { count_echo };
    le_init(&le);
    echoed = 0;
    for (size_t i = 0; i < n; i++) {
        size_t echo_before = echoed;
        enum le_result r = le_feed(&le, (char)d[i], (d[0] & 1) ? &echo : NULL);
        enum le_result want = model_feed(&m, (char)d[i]);
        FUZZ_CHECK(r == want);
        FUZZ_CHECK(le.len <= LINE_MAX);
        /* One byte echoes at most a newline, "^C\r\n", or an erasure of
         * every shown byte (Ctrl-U: "\b \b" each). */
        FUZZ_CHECK(echoed - echo_before <= 4 + 3 * (size_t)LINE_MAX);
        if (r == LE_LINE) {
            FUZZ_CHECK(le.len == m.len && memcmp(le.buf, m.buf, m.len) == 0);
            FUZZ_CHECK(le.buf[le.len] == '\0' && strlen(le.buf) == le.len);
        }
    }
    return 0;
}
