/* lib/parse.c: strict number parsing and word splitting for the shell and
 * the kernel command line.
 *
 * Strict on purpose: "10x", "-1", "" and a value that does not fit are
 * errors, never silently read as something else. A shell typo that turns
 * "profile 1O0" into "profile 1" would make a measurement lie. */
#include "lib/parse.h"
#include "lib/string.h"

static int digit_value(char c, unsigned base)
{
    int v;
    if (c >= '0' && c <= '9')
        v = c - '0';
    else if (c >= 'a' && c <= 'f')
        v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
        v = c - 'A' + 10;
    else
        return -1;
    return (unsigned)v < base ? v : -1;
}

/* Leading zeros in decimal are plain decimal ("010" is 10): there is no
 * octal here, so nothing changes meaning depending on a leading 0. */
bool parse_u64(const char *s, uint64_t *out)
{
    unsigned base = 10;
    uint64_t v = 0;

    if (!s)
        return false;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    if (!*s)
        return false;          /* "" or a bare "0x" */
    for (; *s; s++) {
        int d = digit_value(*s, base);
        if (d < 0)
            return false;
        if (v > (UINT64_MAX - (uint64_t)d) / base)
            return false;      /* v * base + d would wrap */
        v = v * base + (uint64_t)d;
    }
    *out = v;
    return true;
}

bool parse_range(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    uint64_t v;
    if (!parse_u64(s, &v) || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* Each part is 1-3 decimal digits, 0-255, with no leading zero unless the
 * part is "0": inet_aton would read "010" as octal 8, and an address that
 * means different things to different tools is refused rather than
 * guessed at. */
bool parse_ipv4(const char *s, uint32_t *out)
{
    uint32_t ip = 0;

    if (!s)
        return false;
    for (int part = 0; part < 4; part++) {
        unsigned v = 0;
        int nd = 0;
        if (part > 0 && *s++ != '.')
            return false;
        if (s[0] == '0' && s[1] >= '0' && s[1] <= '9')
            return false;      /* leading zero */
        while (*s >= '0' && *s <= '9' && nd < 3) {
            v = v * 10 + (unsigned)(*s++ - '0');
            nd++;
        }
        if (nd == 0 || v > 255)
            return false;
        ip = ip << 8 | v;
    }
    if (*s)
        return false;          /* a fifth part, a fourth digit, or garbage */
    *out = ip;
    return true;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

int split_words(char *line, char **argv, int max)
{
    int n = 0;
    char *p = line;

    for (;;) {
        while (is_space(*p))
            *p++ = '\0';
        if (!*p)
            return n;
        if (n == max)
            return -1;         /* a word beyond max: refuse the whole line */
        argv[n++] = p;
        while (*p && !is_space(*p))
            p++;
    }
}

/* Stores one word of text (len bytes at w) into cl: copies it to the end
 * of cl->buf and splits it at the first '='. Returns false if it does not
 * fit (no slot left, or no room in buf), leaving cl unchanged. */
static bool cmdline_add(struct cmdline *cl, size_t *used, const char *w,
                        size_t len)
{
    if (cl->n == CMDLINE_MAX_PARAMS || len + 1 > sizeof cl->buf - *used)
        return false;
    char *dst = cl->buf + *used;
    memcpy(dst, w, len);
    dst[len] = '\0';
    *used += len + 1;

    char *eq = strchr(dst, '=');
    cl->p[cl->n].key = dst;
    if (eq) {
        *eq = '\0';
        cl->p[cl->n].val = eq + 1;
    } else {
        cl->p[cl->n].val = dst + len;   /* bare word: its own NUL, "" */
    }
    cl->n++;
    return true;
}

/* Words are split on spaces/tabs. A word with an empty key ("=x") means
 * nothing and is counted in dropped with those that did not fit, so a
 * caller that reports dropped words reports it too. */
void cmdline_parse(struct cmdline *cl, const char *text)
{
    size_t used = 0;

    cl->n = 0;
    cl->dropped = 0;
    cl->buf[0] = '\0';
    if (!text)
        return;
    for (const char *p = text; *p;) {
        while (is_space(*p))
            p++;
        if (!*p)
            break;
        const char *w = p;
        while (*p && !is_space(*p))
            p++;
        size_t len = (size_t)(p - w);
        if (w[0] == '=' || !cmdline_add(cl, &used, w, len))
            cl->dropped++;
    }
}

/* The last occurrence wins, so a parameter appended to a boot line
 * overrides an earlier default, as on Linux. */
const char *cmdline_get(const struct cmdline *cl, const char *key)
{
    for (int i = cl->n - 1; i >= 0; i--)
        if (strcmp(cl->p[i].key, key) == 0)
            return cl->p[i].val;
    return NULL;
}

int cmdline_wipe(char *text, const char *key)
{
    size_t klen = strlen(key);
    int n = 0;
    for (char *p = text; p && *p;) {
        while (is_space(*p))
            p++;
        char *w = p;
        while (*p && !is_space(*p))
            p++;
        if ((size_t)(p - w) > klen && strncmp(w, key, klen) == 0 && w[klen] == '=') {
            for (char *v = w + klen + 1; v < p; v++)
                *v = 'x';
            n++;
        }
    }
    return n;
}

int cmdline_count(const char *text, const char *key)
{
    size_t klen = strlen(key);
    int n = 0;
    for (const char *p = text; p && *p;) {
        while (is_space(*p))
            p++;
        const char *w = p;
        while (*p && !is_space(*p))
            p++;
        size_t len = (size_t)(p - w);
        if (len >= klen && strncmp(w, key, klen) == 0 && (len == klen || w[klen] == '='))
            n++;
    }
    return n;
}

/* A word cut in two would be read as another value (udpshell=90 for
 * udpshell=9000, a key's first digits for the key): stop at the last
 * boundary that fits instead. */
int cmdline_copy(char *dst, size_t size, const char *src)
{
    size_t n = src ? strlen(src) : 0;
    if (n < size) {
        memcpy(dst, src ? src : "", n + 1);
        return 0;
    }
    size_t cut = size ? size - 1 : 0;
    if (cut && !is_space(src[cut]))
        while (cut > 0 && !is_space(src[cut - 1]))
            cut--;
    if (size) {
        memcpy(dst, src, cut);
        dst[cut] = '\0';
    }
    int left = 0;
    for (const char *p = src + cut; *p;) {
        while (is_space(*p))
            p++;
        if (!*p)
            break;
        left++;
        while (*p && !is_space(*p))
            p++;
    }
    return left;
}
