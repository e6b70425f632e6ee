/* uapi/profile_stream_meta.c: the profile stream's META and END
 * datagrams, parsed and encoded (the format is in uapi/profile_stream.h;
 * the header and BATCH are uapi/profile_stream.c's). The same rules as
 * there: each parser measures before it reads and checks a whole payload
 * before it hands out an item; the encoder writes only what the parsers
 * take. No library calls, no allocation: the kernel builds this file as
 * it is.
 *
 * Wire format: prefix pstr_. */
#include "uapi/profile_stream.h"
#include "uapi/byteorder.h"

#define META_FIXED   (PSTR_BUILD_ID_HEX + 1)     /* build id, source_len */
#define META_AFTER   14                          /* pid, ms, period_ns, cpus */
#define END_HDR      4
#define END_CPU      12

static bool room(const struct pstr_writer *w, size_t n)
{
    return w->len + n <= PSTR_DGRAM_MAX;
}

/* ---- META ---------------------------------------------------------------- */

static bool is_hex_lower(uint8_t c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static bool is_name_char(uint8_t c)     /* as the raw profile's task field */
{
    return c >= '!' && c <= '~' && c != ';';
}

/* The task at p: its size, or a PSTR_E* reason; with name (PSTR_TASK_MAX
 * + 1 bytes), the name is copied out, terminated. */
static int task_at(const uint8_t *p, size_t avail, uint32_t *pid, char *name)
{
    if (avail < 5)
        return PSTR_ESHORT;
    uint8_t nl = p[4];
    if (nl < 1 || nl > PSTR_TASK_MAX)
        return PSTR_EFIELD;
    if (avail < 5 + (size_t)nl)
        return PSTR_ESHORT;
    for (unsigned i = 0; i < nl; i++)
        if (!is_name_char(p[5 + i]))
            return PSTR_EFIELD;
    if (name) {
        *pid = get_be32(p);
        for (unsigned i = 0; i < nl; i++)
            name[i] = (char)p[5 + i];
        name[nl] = 0;
    }
    return 5 + nl;
}

int pstr_meta_parse(const struct pstr_hdr *h, struct pstr_meta *m,
                    pstr_task_fn fn, void *ctx)
{
    if (h->type != PSTR_META)
        return PSTR_ETYPE;
    const uint8_t *p = h->payload;
    if (h->len < META_FIXED)
        return PSTR_ESHORT;
    for (unsigned i = 0; i < PSTR_BUILD_ID_HEX; i++)
        if (!is_hex_lower(p[i]))
            return PSTR_EFIELD;
    size_t sl = p[PSTR_BUILD_ID_HEX];
    if (sl < 1 || sl > PSTR_SOURCE_MAX)
        return PSTR_EFIELD;
    if (h->len < META_FIXED + sl + META_AFTER)
        return PSTR_ESHORT;
    const uint8_t *s = p + META_FIXED;
    for (size_t i = 0; i < sl; i++)
        if (s[i] < ' ' || s[i] > '~')
            return PSTR_EFIELD;
    const uint8_t *f = s + sl;
    if (get_be16(f + 12) == 0)              /* a stream has at least one CPU */
        return PSTR_EFIELD;
    for (int pass = 0; pass < 2; pass++) {
        size_t off = META_FIXED + sl + META_AFTER;
        for (unsigned i = 0; i < h->count; i++) {
            if (off == h->len)
                return PSTR_ECOUNT;
            uint32_t pid = 0;
            char name[PSTR_TASK_MAX + 1];
            int n = task_at(p + off, h->len - off, &pid, pass ? name : 0);
            if (n < 0)
                return n;
            if (pass && fn)
                fn(ctx, pid, name);
            off += (size_t)n;
        }
        if (off != h->len)
            return PSTR_ECOUNT;
    }
    for (unsigned i = 0; i < PSTR_BUILD_ID_HEX; i++)
        m->build_id[i] = (char)p[i];
    m->build_id[PSTR_BUILD_ID_HEX] = 0;
    for (size_t i = 0; i < sl; i++)
        m->source[i] = (char)s[i];
    m->source[sl] = 0;
    m->pid = get_be32(f);
    m->ms = get_be32(f + 4);
    m->period_ns = get_be32(f + 8);
    m->cpus = get_be16(f + 12);
    return 0;
}

/* ---- END ----------------------------------------------------------------- */

int pstr_end_parse(const struct pstr_hdr *h, uint8_t *reason,
                   pstr_cpu_fn fn, void *ctx)
{
    if (h->type != PSTR_END)
        return PSTR_ETYPE;
    const uint8_t *p = h->payload;
    if (h->len < END_HDR)
        return PSTR_ESHORT;
    if (p[0] < PSTR_END_STOPPED || p[0] > PSTR_END_ELAPSED)
        return PSTR_EFIELD;
    if (p[1] || p[2] || p[3])
        return PSTR_ERESERVED;
    if (h->len != END_HDR + (size_t)h->count * END_CPU)
        return PSTR_ECOUNT;
    for (unsigned i = 0; i < h->count; i++)
        if (get_be16(p + END_HDR + END_CPU * i + 2) != 0)
            return PSTR_ERESERVED;
    for (unsigned i = 0; fn && i < h->count; i++) {
        const uint8_t *c = p + END_HDR + END_CPU * i;
        struct pstr_end_cpu e = {
            .cpu = get_be16(c), .records = get_be32(c + 4), .drops_total = get_be32(c + 8),
        };
        fn(ctx, &e);
    }
    *reason = p[0];
    return 0;
}

/* ---- the encoder ------------------------------------------------------- */

void pstr_meta_head(struct pstr_writer *w, const struct pstr_meta *m)
{
    uint8_t *p = w->buf + w->len;
    /* A build id that is not 40 lowercase hex digits would make the whole
     * META refused; '0' stands in for what is missing or foreign. */
    bool ended = false;
    for (unsigned i = 0; i < PSTR_BUILD_ID_HEX; i++) {
        char c = ended ? 0 : m->build_id[i];
        ended = ended || !c;
        p[i] = is_hex_lower((uint8_t)c) ? (uint8_t)c : '0';
    }
    size_t sl = 0;
    while (sl < PSTR_SOURCE_MAX && m->source[sl])
        sl++;
    uint8_t *s = p + META_FIXED;
    if (!sl) {
        s[0] = '-';
        sl = 1;
    } else {
        for (size_t i = 0; i < sl; i++) {
            uint8_t c = (uint8_t)m->source[i];
            s[i] = c >= ' ' && c <= '~' ? c : '_';
        }
    }
    p[PSTR_BUILD_ID_HEX] = (uint8_t)sl;
    uint8_t *f = s + sl;
    put_be32(f, m->pid);
    put_be32(f + 4, m->ms);
    put_be32(f + 8, m->period_ns);
    put_be16(f + 12, m->cpus ? m->cpus : 1);
    w->len += META_FIXED + sl + META_AFTER;
}

bool pstr_add_task(struct pstr_writer *w, uint32_t pid, const char *name)
{
    size_t nl = 0;
    while (nl < PSTR_TASK_MAX && name && name[nl])
        nl++;
    if (!room(w, 5 + (nl ? nl : 1)))
        return false;
    uint8_t *p = w->buf + w->len;
    put_be32(p, pid);
    if (!nl) {
        p[4] = 1;
        p[5] = '-';
        nl = 1;
    } else {
        p[4] = (uint8_t)nl;
        for (size_t i = 0; i < nl; i++)
            p[5 + i] = is_name_char((uint8_t)name[i]) ? (uint8_t)name[i] : '_';
    }
    w->len += 5 + nl;
    w->count++;
    return true;
}

void pstr_end_head(struct pstr_writer *w, uint8_t reason)
{
    uint8_t *p = w->buf + w->len;
    p[0] = reason;
    p[1] = p[2] = p[3] = 0;
    w->len += END_HDR;
}

bool pstr_add_end_cpu(struct pstr_writer *w, const struct pstr_end_cpu *c)
{
    if (!room(w, END_CPU))
        return false;
    uint8_t *p = w->buf + w->len;
    put_be16(p, c->cpu);
    put_be16(p + 2, 0);
    put_be32(p + 4, c->records);
    put_be32(p + 8, c->drops_total);
    w->len += END_CPU;
    w->count++;
    return true;
}
