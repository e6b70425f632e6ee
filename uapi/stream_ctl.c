/* uapi/stream_ctl.c: the stream's control line (uapi/stream_ctl.h),
 * formatted and parsed by the same code in the kernel, the fleet
 * simulator and the collector. Freestanding: no C library. */
#include "uapi/stream_ctl.h"

static const char *const sctl_ops[] = { 0, "start", "stop", "status", "keepalive" };
static const char *const sctl_results[] = {
    0, "ok", "busy", "none", "refused", "other", "ending", "failed", "invalid",
};
static const char *const sctl_states[] = { 0, "none", "streaming", "ending", "ended" };
static const char *const sctl_kinds[] = { 0, "cpu", "off", "wall", "allocs", "lock", "trace" };
static const char *const sctl_reasons[] = { 0, "stopped", "timeout", "elapsed", "unconfirmed" };
#define SCTL_N(a) (sizeof a / sizeof *a)

static const char *sctl_word(const char *const *t, unsigned n, unsigned v)
{
    return v > 0 && v < n ? t[v] : 0;
}

const char *sctl_op_name(unsigned v) { return sctl_word(sctl_ops, SCTL_N(sctl_ops), v); }
const char *sctl_result_name(unsigned v) { return sctl_word(sctl_results, SCTL_N(sctl_results), v); }
const char *sctl_state_name(unsigned v) { return sctl_word(sctl_states, SCTL_N(sctl_states), v); }
const char *sctl_kind_name(unsigned v) { return sctl_word(sctl_kinds, SCTL_N(sctl_kinds), v); }
const char *sctl_reason_name(unsigned v) { return sctl_word(sctl_reasons, SCTL_N(sctl_reasons), v); }

const char *sctl_strerror(int code)
{
    switch (code) {
    case 0:              return "a control line";
    case SCTL_E_NOLINE:  return "no control line";
    case SCTL_E_SYNTAX:  return "a malformed control line";
    case SCTL_E_LONG:    return "a control line too long";
    case SCTL_E_VERSION: return "a control line of another version";
    case SCTL_E_RANGE:   return "a control line with a value out of range";
    case SCTL_E_DUP:     return "a control line with a key twice";
    case SCTL_E_MISSING: return "a control line without v, op, result or state";
    default:             return "an unknown control line error";
    }
}

/* ---- formatting ---------------------------------------------------------- */

struct sctl_out {
    char *b;
    size_t cap, len;
    bool full;
};

static void sctl_put(struct sctl_out *o, const char *s)
{
    for (; *s; s++) {
        if (o->len + 1 >= o->cap) {
            o->full = true;
            return;
        }
        o->b[o->len++] = *s;
    }
}

static void sctl_put_u64(struct sctl_out *o, uint64_t v)
{
    char d[21];
    int i = 20;
    d[i] = 0;
    do
        d[--i] = (char)('0' + v % 10);
    while (v /= 10);
    sctl_put(o, d + i);
}

static void sctl_put_key(struct sctl_out *o, const char *key)
{
    sctl_put(o, " ");
    sctl_put(o, key);
    sctl_put(o, "=");
}

static void sctl_put_num(struct sctl_out *o, const char *key, uint64_t v)
{
    sctl_put_key(o, key);
    sctl_put_u64(o, v);
}

static void sctl_put_hex32(struct sctl_out *o, const char *key, uint32_t v)
{
    char d[11] = "0x";
    for (int i = 0; i < 8; i++)
        d[2 + i] = "0123456789abcdef"[(v >> (28 - 4 * i)) & 15];
    d[10] = 0;
    sctl_put_key(o, key);
    sctl_put(o, d);
}

static void sctl_put_word(struct sctl_out *o, const char *key, const char *w)
{
    sctl_put_key(o, key);
    sctl_put(o, w);
}

/* Whether every value of l is one the parser takes. */
static bool sctl_line_ok(const struct sctl_line *l)
{
    uint32_t h = l->sl_have;
    if (!sctl_op_name(l->sl_op) || !sctl_result_name(l->sl_result) ||
        !sctl_state_name(l->sl_state))
        return false;
    if (((h & SCTL_HAVE_ID) && !l->sl_id) || ((h & SCTL_HAVE_LAST) && !l->sl_last))
        return false;
    if ((h & SCTL_HAVE_TO) && !l->sl_to_port)
        return false;
    if (((h & SCTL_HAVE_KIND) && !sctl_kind_name(l->sl_kind)) ||
        ((h & SCTL_HAVE_REASON) && !sctl_reason_name(l->sl_reason)))
        return false;
    if (((h & SCTL_HAVE_CPUS) && l->sl_cpus > SCTL_CPUS_MAX) ||
        ((h & SCTL_HAVE_LEN) && l->sl_len > SCTL_LEN_MAX) ||
        ((h & SCTL_HAVE_CONFIRMED) && l->sl_confirmed > 1) ||
        ((h & SCTL_HAVE_AGE) && l->sl_age > SCTL_MS_MAX) ||
        ((h & SCTL_HAVE_KA) && l->sl_ka > SCTL_MS_MAX))
        return false;
    return true;
}

size_t sctl_format(char *buf, size_t cap, const struct sctl_line *l)
{
    if (cap == 0)
        return 0;
    buf[0] = 0;
    if (!sctl_line_ok(l))
        return 0;
    struct sctl_out o = { buf, cap, 0, false };
    uint32_t h = l->sl_have;
    sctl_put(&o, "stream");
    sctl_put_num(&o, "v", SCTL_VERSION);
    sctl_put_word(&o, "op", sctl_op_name(l->sl_op));
    sctl_put_word(&o, "result", sctl_result_name(l->sl_result));
    sctl_put_word(&o, "state", sctl_state_name(l->sl_state));
    if (h & SCTL_HAVE_ID)
        sctl_put_hex32(&o, "id", l->sl_id);
    if (h & SCTL_HAVE_LAST)
        sctl_put_hex32(&o, "last", l->sl_last);
    if (h & SCTL_HAVE_TO) {
        sctl_put_key(&o, "to");
        for (int i = 3; i >= 0; i--) {
            sctl_put_u64(&o, (l->sl_to_ip >> (8 * i)) & 0xff);
            sctl_put(&o, i ? "." : ":");
        }
        sctl_put_u64(&o, l->sl_to_port);
    }
    if (h & SCTL_HAVE_KIND)
        sctl_put_word(&o, "kind", sctl_kind_name(l->sl_kind));
    if (h & SCTL_HAVE_CPUS)
        sctl_put_num(&o, "cpus", l->sl_cpus);
    if (h & SCTL_HAVE_LEN)
        sctl_put_num(&o, "len", l->sl_len);
    if (h & SCTL_HAVE_AGE)
        sctl_put_num(&o, "age", l->sl_age);
    if (h & SCTL_HAVE_CONFIRMED)
        sctl_put_num(&o, "confirmed", l->sl_confirmed);
    if (h & SCTL_HAVE_KA)
        sctl_put_num(&o, "ka", l->sl_ka);
    if (h & SCTL_HAVE_REASON)
        sctl_put_word(&o, "reason", sctl_reason_name(l->sl_reason));
    if (h & SCTL_HAVE_RECORDS)
        sctl_put_num(&o, "records", l->sl_records);
    if (h & SCTL_HAVE_DATAGRAMS)
        sctl_put_num(&o, "datagrams", l->sl_datagrams);
    if (h & SCTL_HAVE_DROPS)
        sctl_put_num(&o, "drops", l->sl_drops);
    if (h & SCTL_HAVE_SENDFAIL)
        sctl_put_num(&o, "sendfail", l->sl_sendfail);
    if (h & SCTL_HAVE_KAREFUSED)
        sctl_put_num(&o, "karefused", l->sl_karefused);
    sctl_put(&o, "\n");
    if (o.full || o.len > SCTL_LINE_MAX) {
        buf[0] = 0;
        return 0;
    }
    buf[o.len] = 0;
    return o.len;
}

/* ---- parsing ------------------------------------------------------------- */

struct sctl_tok {
    const char *s;
    size_t n;
};

static bool sctl_is(struct sctl_tok t, const char *w)
{
    size_t i = 0;
    for (; w[i]; i++)
        if (i >= t.n || t.s[i] != w[i])
            return false;
    return i == t.n;
}

/* Decimal without leading zeros, at most max. */
static bool sctl_num(struct sctl_tok t, uint64_t max, uint64_t *v)
{
    if (t.n == 0 || t.n > 20 || (t.n > 1 && t.s[0] == '0'))
        return false;
    uint64_t x = 0;
    for (size_t i = 0; i < t.n; i++) {
        unsigned d = (unsigned)(t.s[i] - '0');
        if (d > 9 || x > (UINT64_MAX - d) / 10)
            return false;
        x = x * 10 + d;
    }
    if (x > max)
        return false;
    *v = x;
    return true;
}

/* 0x and exactly 8 hex digits, not 0. */
static bool sctl_hex32(struct sctl_tok t, uint32_t *v)
{
    if (t.n != 10 || t.s[0] != '0' || t.s[1] != 'x')
        return false;
    uint32_t x = 0;
    for (size_t i = 2; i < 10; i++) {
        char c = t.s[i];
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                   : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                   : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16u;
        if (d > 15)
            return false;
        x = x << 4 | d;
    }
    if (!x)
        return false;
    *v = x;
    return true;
}

/* A.B.C.D:PORT. */
static bool sctl_addr(struct sctl_tok t, uint32_t *ip, uint16_t *port)
{
    uint32_t a = 0;
    size_t i = 0;
    for (int part = 0; part < 5; part++) {
        size_t j = i;
        while (j < t.n && t.s[j] != '.' && t.s[j] != ':')
            j++;
        char sep = j < t.n ? t.s[j] : 0;
        if ((part < 3 && sep != '.') || (part == 3 && sep != ':') || (part == 4 && sep))
            return false;
        uint64_t v;
        struct sctl_tok d = { t.s + i, j - i };
        if (!sctl_num(d, part < 4 ? 255 : 65535, &v) || (part == 4 && v == 0))
            return false;
        if (part < 4)
            a = a << 8 | (uint32_t)v;
        else
            *port = (uint16_t)v;
        i = j + 1;
    }
    *ip = a;
    return true;
}

/* The index (1..n-1) of t's word in table, or 0. */
static unsigned sctl_which(struct sctl_tok t, const char *const *table, unsigned n)
{
    for (unsigned i = 1; i < n; i++)
        if (sctl_is(t, table[i]))
            return i;
    return 0;
}

static bool sctl_key_char(char c, bool first)
{
    return (c >= 'a' && c <= 'z') || (!first && ((c >= '0' && c <= '9') || c == '_'));
}

/* One word KEY=VALUE at s[0..n): false when malformed. */
static bool sctl_split(const char *s, size_t n, struct sctl_tok *k, struct sctl_tok *v)
{
    size_t i = 0;
    while (i < n && s[i] != '=') {
        if (!sctl_key_char(s[i], i == 0))
            return false;
        i++;
    }
    if (i == 0 || i == n || i > SCTL_KEY_MAX)
        return false;
    k->s = s;
    k->n = i;
    v->s = s + i + 1;
    v->n = n - i - 1;
    if (v->n == 0 || v->n > SCTL_VALUE_MAX)
        return false;
    for (size_t j = 0; j < v->n; j++)
        if (v->s[j] <= ' ' || v->s[j] > '~' || v->s[j] == '=')
            return false;
    return true;
}

/* Each key: its name, its SCTL_HAVE_ bit (0: required, by position in
 * sctl_required). */
static int sctl_word_into(struct sctl_tok k, struct sctl_tok v, struct sctl_line *l,
                          uint32_t *seen)
{
    static const char *const keys[] = {
        "id", "last", "to", "kind", "cpus", "len", "age", "confirmed", "ka", "reason",
        "records", "datagrams", "drops", "sendfail", "karefused", "op", "result", "state",
    };
    unsigned i = 0;
    while (i < SCTL_N(keys) && !sctl_is(k, keys[i]))
        i++;
    if (i == SCTL_N(keys))
        return 0;                   /* a newer version's key: skipped */
    uint32_t bit = 1u << i;
    if (*seen & bit)
        return SCTL_E_DUP;
    *seen |= bit;
    uint64_t x = 0;
    bool ok;
    switch (i) {
    case 0:  ok = sctl_hex32(v, &l->sl_id); break;
    case 1:  ok = sctl_hex32(v, &l->sl_last); break;
    case 2:  ok = sctl_addr(v, &l->sl_to_ip, &l->sl_to_port); break;
    case 3:  ok = (l->sl_kind = (uint8_t)sctl_which(v, sctl_kinds, SCTL_N(sctl_kinds))) != 0; break;
    case 4:  ok = sctl_num(v, SCTL_CPUS_MAX, &x); l->sl_cpus = (uint16_t)x; break;
    case 5:  ok = sctl_num(v, SCTL_LEN_MAX, &x); l->sl_len = (uint32_t)x; break;
    case 6:  ok = sctl_num(v, SCTL_MS_MAX, &l->sl_age); break;
    case 7:  ok = sctl_num(v, 1, &x); l->sl_confirmed = (uint8_t)x; break;
    case 8:  ok = sctl_num(v, SCTL_MS_MAX, &l->sl_ka); break;
    case 9:  ok = (l->sl_reason = (uint8_t)sctl_which(v, sctl_reasons, SCTL_N(sctl_reasons))) != 0; break;
    case 10: ok = sctl_num(v, UINT64_MAX, &l->sl_records); break;
    case 11: ok = sctl_num(v, UINT64_MAX, &l->sl_datagrams); break;
    case 12: ok = sctl_num(v, UINT64_MAX, &l->sl_drops); break;
    case 13: ok = sctl_num(v, UINT64_MAX, &l->sl_sendfail); break;
    case 14: ok = sctl_num(v, UINT64_MAX, &l->sl_karefused); break;
    case 15: ok = (l->sl_op = (uint8_t)sctl_which(v, sctl_ops, SCTL_N(sctl_ops))) != 0; break;
    case 16: ok = (l->sl_result = (uint8_t)sctl_which(v, sctl_results, SCTL_N(sctl_results))) != 0; break;
    default: ok = (l->sl_state = (uint8_t)sctl_which(v, sctl_states, SCTL_N(sctl_states))) != 0; break;
    }
    return ok ? 0 : SCTL_E_RANGE;
}

_Static_assert(SCTL_HAVE_KAREFUSED == 1u << 14, "the optional keys come first in sctl_word_into");

bool sctl_is_line(const char *s, size_t n)
{
    static const char lead[SCTL_LEAD_LEN + 1] = "stream ";
    if (n < SCTL_LEAD_LEN)
        return false;
    for (size_t i = 0; i < SCTL_LEAD_LEN; i++)
        if (s[i] != lead[i])
            return false;
    return true;
}

int sctl_parse(const char *s, size_t n, struct sctl_line *l)
{
    *l = (struct sctl_line){ 0 };
    size_t len = 0;
    while (len < n && s[len] != '\n')
        len++;
    if (len + 1 > SCTL_LINE_MAX)
        return SCTL_E_LONG;
    if (!sctl_is_line(s, len))
        return SCTL_E_NOLINE;
    size_t i = SCTL_LEAD_LEN;
    uint32_t seen = 0;
    bool first = true;
    int err = 0;
    while (i < len) {
        size_t j = i;
        while (j < len && s[j] != ' ')
            j++;
        struct sctl_tok k, v;
        if (!sctl_split(s + i, j - i, &k, &v))
            return SCTL_E_SYNTAX;
        if (first) {
            /* Another version's line is read no further. */
            uint64_t x;
            if (!sctl_is(k, "v"))
                return SCTL_E_MISSING;
            if (!sctl_num(v, SCTL_VERSION_MAX, &x))
                return SCTL_E_VERSION;
            l->sl_v = (uint16_t)x;
            if (x != SCTL_VERSION)
                return SCTL_E_VERSION;
            first = false;
        } else if (!err) {
            err = sctl_word_into(k, v, l, &seen);
        }
        if (j < len && j + 1 == len)
            return SCTL_E_SYNTAX;   /* a space at the end */
        i = j + 1;
        if (j < len && s[i] == ' ')
            return SCTL_E_SYNTAX;   /* two spaces */
    }
    if (first)
        return SCTL_E_MISSING;
    if (err)
        return err;
    const uint32_t required = 7u << 15;
    if ((seen & required) != required)
        return SCTL_E_MISSING;
    l->sl_have = seen & ~required;
    return 0;
}

int sctl_find(const char *text, size_t n, struct sctl_line *l)
{
    size_t i = 0;
    while (i < n) {
        if (sctl_is_line(text + i, n - i))
            return sctl_parse(text + i, n - i, l);
        while (i < n && text[i] != '\n')
            i++;
        i++;
    }
    *l = (struct sctl_line){ 0 };
    return SCTL_E_NOLINE;
}
