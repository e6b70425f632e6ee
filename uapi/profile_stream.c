/* uapi/profile_stream.c: the profile stream's encoder and parsers (the
 * format is in uapi/profile_stream.h): the header and BATCH here, META
 * and END in uapi/profile_stream_meta.c.
 *
 * The parsers meet whatever arrives on a UDP port, so each one measures
 * before it reads and checks a whole payload before it hands out a single
 * item: a collector never acts on half a datagram. The encoder refuses
 * what the parsers would refuse (a depth of 0, an unknown flag), so a
 * kernel cannot send a datagram its own collector throws away.
 *
 * Text fields are checked as the raw profile checks its task names: a
 * task name is one field of '!'..'~' without ';' (the encoder turns
 * anything else into '_'), a source is printable with spaces allowed, a
 * build id is lowercase hex. No library calls, no allocation: the kernel
 * builds this file as it is.
 *
 * Wire format: prefix pstr_. */
#include "uapi/profile_stream.h"
#include "uapi/byteorder.h"

/* Offsets in the 32-byte header. */
#define OFF_MAGIC    0
#define OFF_VERSION  4
#define OFF_TYPE     5
#define OFF_CPU      6
#define OFF_STREAM   8
#define OFF_SEQ      12
#define OFF_TNS      16
#define OFF_LEN      24
#define OFF_COUNT    26
#define OFF_FLAGS    28
#define OFF_RESERVED 29         /* 3 bytes */

/* ---- the header -------------------------------------------------------- */

int pstr_parse(const void *dgram, size_t len, struct pstr_hdr *h)
{
    const uint8_t *d = dgram;
    if (len < PSTR_HDR_LEN)
        return PSTR_ESHORT;
    if (get_be32(d + OFF_MAGIC) != PSTR_MAGIC || d[OFF_VERSION] != PSTR_VERSION)
        return PSTR_EMAGIC;
    uint8_t flags = d[OFF_FLAGS];
    size_t plen = get_be16(d + OFF_LEN);
    size_t tag = flags & PSTR_FLAG_TAGGED ? PSTR_TAG_LEN : 0;
    if (len > PSTR_DGRAM_MAX + tag || PSTR_HDR_LEN + plen + tag != len)
        return PSTR_ELEN;
    uint8_t type = d[OFF_TYPE];
    if (type != PSTR_META && type != PSTR_BATCH && type != PSTR_END)
        return PSTR_ETYPE;
    if ((flags & ~PSTR_FLAG_TAGGED) || d[OFF_RESERVED] || get_be16(d + OFF_RESERVED + 1))
        return PSTR_ERESERVED;
    uint16_t cpu = get_be16(d + OFF_CPU);
    if (type != PSTR_BATCH && cpu != 0)     /* only a batch is one CPU's */
        return PSTR_EFIELD;
    h->type = type;
    h->cpu = cpu;
    h->stream = get_be32(d + OFF_STREAM);
    h->seq = get_be32(d + OFF_SEQ);
    h->t_ns = get_be64(d + OFF_TNS);
    h->count = get_be16(d + OFF_COUNT);
    h->payload = d + PSTR_HDR_LEN;
    h->len = plen;
    h->tagged = tag != 0;
    return 0;
}

const char *pstr_strerror(int reason)
{
    switch (reason) {
    case 0:              return "no error";
    case PSTR_ESHORT:    return "shorter than a field it declares";
    case PSTR_EMAGIC:    return "not a profile stream datagram (magic or version)";
    case PSTR_ELEN:      return "length field disagrees with the datagram's size";
    case PSTR_ETYPE:     return "unknown datagram type";
    case PSTR_ERESERVED: return "reserved field not zero";
    case PSTR_EFIELD:    return "field out of range";
    case PSTR_ECOUNT:    return "count disagrees with the payload";
    default:             return "unknown reason";
    }
}

/* ---- BATCH --------------------------------------------------------------- */

/* A wait queue's or mutex's name character: one field of a raw
 * profile's why=REASON:NAME. */
static bool is_wait_name_char(uint8_t c)
{
    return c >= '!' && c <= '~' && c != ';' && c != ':';
}

/* The rules of an off-CPU record's PSTR_REC_OFF part, the encoder's and
 * the parser's alike (so that the two never disagree): a reason; a name
 * only for a wait queue or mutex; a waker and its chain only for blocked
 * time, and a chain only with a waker. */
static bool off_part_ok(unsigned why, unsigned name_len, unsigned wdepth, int64_t waker)
{
    if (why < PSTR_WHY_SLEEP || why > PSTR_WHY_MAX || name_len > PSTR_NAME_MAX ||
        wdepth > PSTR_FRAMES || waker < PSTR_WAKER_NONE || waker > INT32_MAX)
        return false;
    if (name_len && why != PSTR_WHY_WAITQ && why != PSTR_WHY_MUTEX)
        return false;
    if (!pstr_why_blocked(why))
        return wdepth == 0 && waker == PSTR_WAKER_NONE;
    return wdepth == 0 || waker >= 0;
}

/* The PSTR_REC_OFF part at p (avail bytes from it): its size without the
 * chains, or a PSTR_E* reason; *wdepth the waker's frames. */
static int off_part_at(const uint8_t *p, size_t avail, unsigned *wdepth)
{
    if (avail < PSTR_REC_OFF_LEN)
        return PSTR_ESHORT;
    unsigned nl = p[1];
    if (!off_part_ok(p[0], nl, p[2], (int32_t)get_be32(p + 4)))
        return PSTR_EFIELD;
    if (p[3] != 0)
        return PSTR_ERESERVED;
    if (avail < PSTR_REC_OFF_LEN + (size_t)nl)
        return PSTR_ESHORT;
    for (unsigned i = 0; i < nl; i++)
        if (!is_wait_name_char(p[PSTR_REC_OFF_LEN + i]))
            return PSTR_EFIELD;
    *wdepth = p[2];
    return (int)(PSTR_REC_OFF_LEN + nl);
}

static void off_part_decode(const uint8_t *p, struct pstr_record *r)
{
    r->why = p[0];
    r->wdepth = p[2];
    r->waker = (int32_t)get_be32(p + 4);
    unsigned nl = p[1];
    for (unsigned i = 0; i < nl; i++)
        r->name[i] = (char)p[PSTR_REC_OFF_LEN + i];
    r->name[nl] = 0;
}

/* A lock record's PSTR_REC_LOCK part, encoder's and parser's rules alike:
 * a wait at least, a lock kind, a name of the wait-name characters. */
static bool lock_part_ok(uint64_t waits, unsigned lkind, const uint8_t *name, size_t nl)
{
    if (waits < 1 || waits > UINT32_MAX || lkind < PSTR_LOCK_SPIN || lkind > PSTR_LOCK_MAX ||
        nl > PSTR_NAME_MAX)
        return false;
    for (size_t i = 0; i < nl; i++)
        if (!is_wait_name_char(name[i]))
            return false;
    return true;
}

/* The PSTR_REC_LOCK part at p (avail bytes from it): its size, or a
 * PSTR_E* reason. */
static int lock_part_at(const uint8_t *p, size_t avail)
{
    if (avail < PSTR_REC_LOCK_LEN)
        return PSTR_ESHORT;
    unsigned nl = p[5];
    if (p[6] || p[7])
        return PSTR_ERESERVED;
    if (nl > PSTR_NAME_MAX)
        return PSTR_EFIELD;
    if (avail < PSTR_REC_LOCK_LEN + (size_t)nl)
        return PSTR_ESHORT;
    if (!lock_part_ok(get_be32(p), p[4], p + PSTR_REC_LOCK_LEN, nl))
        return PSTR_EFIELD;
    return (int)(PSTR_REC_LOCK_LEN + nl);
}

static void lock_part_decode(const uint8_t *p, struct pstr_record *r)
{
    r->waits = get_be32(p);
    r->lkind = p[4];
    unsigned nl = p[5];
    for (unsigned i = 0; i < nl; i++)
        r->name[i] = (char)p[PSTR_REC_LOCK_LEN + i];
    r->name[nl] = 0;
}

/* A trace record's PSTR_REC_TRACE part, encoder's and parser's rules
 * alike: each event's fields, and only its own, set (the header says
 * which), depth frames for a sample alone. */
static bool trace_part_ok(const struct pstr_record *t, unsigned depth, const uint8_t *name,
                          size_t nl)
{
    unsigned ev = t->tev, arg = t->targ;
    if (ev < PSTR_TEV_SWITCH || ev > PSTR_TEV_MAX || nl > PSTR_NAME_MAX ||
        t->tvec > PSTR_VEC_MAX || (depth != 0) != (ev == PSTR_TEV_SAMPLE))
        return false;
    for (size_t i = 0; i < nl; i++)
        if (!is_wait_name_char(name[i]))
            return false;
    switch (ev) {
    case PSTR_TEV_SWITCH:
        return arg <= PSTR_LEFT_MAX && !t->tvec && !t->twcpu && !t->tdur &&
               (!nl || arg == PSTR_LEFT_WAITQ || arg == PSTR_LEFT_MUTEX);
    case PSTR_TEV_WAKE:
        return arg <= PSTR_IRQ_CLASS_MAX && !t->tdur && (arg || (!nl && !t->tvec));
    case PSTR_TEV_IRQ:
        return arg >= 1 && arg <= PSTR_IRQ_CLASS_MAX && !t->tother && !t->twcpu;
    default:
        return !arg && !nl && !t->tother && !t->tvec && !t->twcpu && !t->tdur;
    }
}

/* The PSTR_REC_TRACE part at p (avail bytes from it) of a record of
 * depth: its size, or a PSTR_E* reason. With r, decoded into it. */
static int trace_part_at(const uint8_t *p, size_t avail, unsigned depth, struct pstr_record *r)
{
    if (avail < PSTR_REC_TRACE_LEN)
        return PSTR_ESHORT;
    if (p[3])
        return PSTR_ERESERVED;
    unsigned nl = p[2];
    if (avail < PSTR_REC_TRACE_LEN + (size_t)nl)
        return PSTR_ESHORT;
    struct pstr_record t = {
        .tev = p[0], .targ = p[1], .tother = get_be32(p + 4), .tvec = get_be16(p + 8),
        .twcpu = get_be16(p + 10), .tdur = get_be32(p + 12),
    };
    if (!trace_part_ok(&t, depth, p + PSTR_REC_TRACE_LEN, nl))
        return PSTR_EFIELD;
    if (r) {
        r->tev = t.tev;
        r->targ = t.targ;
        r->tother = t.tother;
        r->tvec = t.tvec;
        r->twcpu = t.twcpu;
        r->tdur = t.tdur;
        for (unsigned i = 0; i < nl; i++)
            r->name[i] = (char)p[PSTR_REC_TRACE_LEN + i];
        r->name[nl] = 0;
    }
    return (int)(PSTR_REC_TRACE_LEN + nl);
}

/* The record at p (avail bytes left): its size, or a PSTR_E* reason.
 * prev is the record before it in the batch (depth 0: none), whose last
 * frames a tail takes. With r, the record is also decoded into it (r may
 * be prev: what it takes from prev is read before r is written). */
static int record_at(const uint8_t *p, size_t avail, const struct pstr_record *prev,
                     struct pstr_record *r)
{
    if (avail < PSTR_REC_FIXED)
        return PSTR_ESHORT;
    uint8_t depth = p[4], flags = p[5], kind = p[6], tail = p[7];
    /* One encoding per record: a CPU sample never carries a weight (it
     * weighs 1), every other kind always does; a heap record, and only
     * a heap record, its size; only an off-CPU record why it was away;
     * a lock record, and only a lock record, its waits, kind and name. */
    /* A trace event's depth is its part's to check: 0 but for a sample. */
    if ((kind != PSTR_KIND_TRACE && depth < 1) || depth > PSTR_FRAMES ||
        (flags & ~(PSTR_REC_TICK | PSTR_REC_WEIGHT | PSTR_REC_SIZE | PSTR_REC_OFF |
                   PSTR_REC_LOCK | PSTR_REC_TRACE)) ||
        (kind == PSTR_KIND_LOCK) != !!(flags & PSTR_REC_LOCK) ||
        (kind == PSTR_KIND_TRACE) != !!(flags & PSTR_REC_TRACE) ||
        kind > PSTR_KIND_MAX || (kind == PSTR_KIND_CPU) == !!(flags & PSTR_REC_WEIGHT) ||
        (kind == PSTR_KIND_HEAP) != !!(flags & PSTR_REC_SIZE) ||
        ((flags & PSTR_REC_OFF) && kind != PSTR_KIND_OFFCPU))
        return PSTR_EFIELD;
    /* A weight is at least 1: 0 would be a record of nothing. */
    if ((flags & PSTR_REC_WEIGHT) && avail >= PSTR_REC_FIXED + PSTR_REC_WEIGHT_LEN &&
        get_be64(p + PSTR_REC_FIXED) == 0)
        return PSTR_EFIELD;
    if (tail > depth || tail > prev->depth || (tail && kind != PSTR_KIND_CPU))
        return PSTR_EFIELD;
    size_t fixed = PSTR_REC_FIXED + (flags & PSTR_REC_WEIGHT ? PSTR_REC_WEIGHT_LEN : 0) +
                   (flags & PSTR_REC_SIZE ? PSTR_REC_SIZE_LEN : 0);
    unsigned wdepth = 0;
    size_t off_at = fixed;
    if (flags & PSTR_REC_OFF) {
        int n = off_part_at(p + fixed, avail > fixed ? avail - fixed : 0, &wdepth);
        if (n < 0)
            return n;
        fixed += (size_t)n;
    }
    if (flags & PSTR_REC_LOCK) {
        int n = lock_part_at(p + fixed, avail > fixed ? avail - fixed : 0);
        if (n < 0)
            return n;
        fixed += (size_t)n;
    }
    if (flags & PSTR_REC_TRACE) {
        int n = trace_part_at(p + fixed, avail > fixed ? avail - fixed : 0, depth, NULL);
        if (n < 0)
            return n;
        fixed += (size_t)n;
    }
    unsigned own = depth - tail;
    size_t need = fixed + 8 * ((size_t)own + wdepth);
    if (avail < need)
        return PSTR_ESHORT;
    if (r) {
        uint64_t shared[PSTR_FRAMES];
        for (unsigned j = 0; j < tail; j++)
            shared[j] = prev->frames[prev->depth - tail + j];
        r->pid = get_be32(p);
        r->depth = depth;
        r->flags = flags & PSTR_REC_TICK;
        r->kind = kind;
        r->weight = flags & PSTR_REC_WEIGHT ? get_be64(p + PSTR_REC_FIXED) : 1;
        r->size = flags & PSTR_REC_SIZE ? get_be64(p + PSTR_REC_FIXED + PSTR_REC_WEIGHT_LEN) : 0;
        for (unsigned i = 0; i < PSTR_FRAMES; i++)
            r->frames[i] = i < own ? get_be64(p + fixed + 8 * i) :
                           i < depth ? shared[i - own] : 0;
        r->why = 0;
        r->wdepth = 0;
        r->waker = PSTR_WAKER_NONE;
        r->name[0] = 0;
        r->waits = 0;
        r->lkind = 0;
        r->tev = r->targ = 0;
        r->tother = r->tdur = 0;
        r->tvec = r->twcpu = 0;
        if (flags & PSTR_REC_OFF)
            off_part_decode(p + off_at, r);
        if (flags & PSTR_REC_LOCK)
            lock_part_decode(p + off_at, r);
        if (flags & PSTR_REC_TRACE)
            trace_part_at(p + off_at, avail - off_at, depth, r);
        const uint8_t *wf = p + fixed + 8 * (size_t)own;
        for (unsigned i = 0; i < PSTR_FRAMES; i++)
            r->wframes[i] = i < wdepth ? get_be64(wf + 8 * i) : 0;
    }
    return (int)need;
}

int pstr_batch_parse(const struct pstr_hdr *h, struct pstr_batch *b,
                     pstr_record_fn fn, void *ctx)
{
    if (h->type != PSTR_BATCH)
        return PSTR_ETYPE;
    if (h->len < PSTR_BATCH_HDR)
        return PSTR_ESHORT;
    const uint8_t *p = h->payload;
    uint32_t drops = get_be32(p + 4), total = get_be32(p + 8);
    if (drops > total)                      /* since the last batch <= since the start */
        return PSTR_EFIELD;
    /* Pass 1: the whole payload is checked; pass 2 hands the records out. */
    for (int pass = 0; pass < 2; pass++) {
        size_t off = PSTR_BATCH_HDR;
        struct pstr_record r;               /* the record before the next: its tail */
        r.depth = 0;
        for (unsigned i = 0; i < h->count; i++) {
            if (off == h->len)
                return PSTR_ECOUNT;         /* fewer records than count */
            int n = record_at(p + off, h->len - off, &r, pass ? &r : 0);
            if (n < 0)
                return n;
            if (!pass)
                r.depth = p[off + 4];       /* all that checking the next needs */
            if (pass && fn)
                fn(ctx, &r);
            off += (size_t)n;
        }
        if (off != h->len)
            return PSTR_ECOUNT;             /* bytes beyond count records */
    }
    b->first = get_be32(p);
    b->drops = drops;
    b->drops_total = total;
    return 0;
}

/* ---- the encoder --------------------------------------------------------- */

void pstr_begin(struct pstr_writer *w, uint8_t type, uint16_t cpu,
                uint32_t stream, uint32_t seq, uint64_t t_ns)
{
    pstr_begin_in(w, w->mem, type, cpu, stream, seq, t_ns);
}

void pstr_begin_in(struct pstr_writer *w, uint8_t *out, uint8_t type, uint16_t cpu,
                   uint32_t stream, uint32_t seq, uint64_t t_ns)
{
    uint8_t *d = w->buf = out;
    put_be32(d + OFF_MAGIC, PSTR_MAGIC);
    d[OFF_VERSION] = PSTR_VERSION;
    d[OFF_TYPE] = type;
    put_be16(d + OFF_CPU, type == PSTR_BATCH ? cpu : 0);
    put_be32(d + OFF_STREAM, stream);
    put_be32(d + OFF_SEQ, seq);
    put_be64(d + OFF_TNS, t_ns);
    put_be16(d + OFF_LEN, 0);
    put_be16(d + OFF_COUNT, 0);
    d[OFF_FLAGS] = 0;                       /* pstr_seal tags it */
    d[OFF_RESERVED] = 0;
    put_be16(d + OFF_RESERVED + 1, 0);
    w->len = PSTR_HDR_LEN;
    w->count = 0;
    w->last_depth = 0;
}

void pstr_stamp(struct pstr_writer *w, uint32_t seq, uint64_t t_ns)
{
    put_be32(w->buf + OFF_SEQ, seq);
    put_be64(w->buf + OFF_TNS, t_ns);
}

void pstr_batch_drops(struct pstr_writer *w, uint32_t drops, uint32_t drops_total)
{
    put_be32(w->buf + PSTR_HDR_LEN + 4, drops);
    put_be32(w->buf + PSTR_HDR_LEN + 8, drops_total);
}

void pstr_batch_head(struct pstr_writer *w, const struct pstr_batch *b)
{
    uint8_t *p = w->buf + w->len;
    put_be32(p, b->first);
    put_be32(p + 4, b->drops);
    put_be32(p + 8, b->drops_total);
    w->len += PSTR_BATCH_HDR;
}

bool pstr_add_record(struct pstr_writer *w, const struct pstr_record *r)
{
    uint8_t flags = r->flags & ~(PSTR_REC_WEIGHT | PSTR_REC_SIZE | PSTR_REC_OFF | PSTR_REC_LOCK |
                                 PSTR_REC_TRACE);
    if (r->kind == PSTR_KIND_CPU)
        return pstr_add_frames(w, r->pid, flags, r->frames, r->depth);
    bool traced = r->kind == PSTR_KIND_TRACE;
    if ((!traced && r->depth < 1) || r->depth > PSTR_FRAMES || (flags & ~PSTR_REC_TICK) ||
        r->kind > PSTR_KIND_MAX || r->weight == 0)
        return false;
    bool sized = r->kind == PSTR_KIND_HEAP;
    size_t fixed = PSTR_REC_FIXED + PSTR_REC_WEIGHT_LEN + (sized ? PSTR_REC_SIZE_LEN : 0);
    size_t nl = 0;
    if (r->why) {
        while (nl <= PSTR_NAME_MAX && r->name[nl])
            nl++;
        if (r->kind != PSTR_KIND_OFFCPU || !off_part_ok(r->why, (unsigned)nl, r->wdepth, r->waker))
            return false;
        for (size_t i = 0; i < nl; i++)
            if (!is_wait_name_char((uint8_t)r->name[i]))
                return false;
    }
    bool locked = r->kind == PSTR_KIND_LOCK;
    if (locked) {
        if (r->why)
            return false;
        while (nl <= PSTR_NAME_MAX && r->name[nl])
            nl++;
        if (!lock_part_ok(r->waits, r->lkind, (const uint8_t *)r->name, nl))
            return false;
    }
    if (traced) {
        if (r->why)
            return false;
        while (nl <= PSTR_NAME_MAX && r->name[nl])
            nl++;
        if (!trace_part_ok(r, r->depth, (const uint8_t *)r->name, nl))
            return false;
    }
    size_t off_at = fixed;
    if (r->why)
        fixed += PSTR_REC_OFF_LEN + nl;
    if (locked)
        fixed += PSTR_REC_LOCK_LEN + nl;
    if (traced)
        fixed += PSTR_REC_TRACE_LEN + nl;
    unsigned wdepth = r->why ? r->wdepth : 0;
    size_t need = fixed + 8 * ((size_t)r->depth + wdepth);
    if (w->len + need > PSTR_DGRAM_MAX)
        return false;
    uint8_t *p = w->buf + w->len;
    flags |= PSTR_REC_WEIGHT | (sized ? PSTR_REC_SIZE : 0) | (r->why ? PSTR_REC_OFF : 0) |
             (locked ? PSTR_REC_LOCK : 0) | (traced ? PSTR_REC_TRACE : 0);
    put_be64(p, (uint64_t)r->pid << 32 | (uint64_t)r->depth << 24 | (uint64_t)flags << 16 |
                (uint64_t)r->kind << 8);
    put_be64(p + PSTR_REC_FIXED, r->weight);
    if (sized)
        put_be64(p + PSTR_REC_FIXED + PSTR_REC_WEIGHT_LEN, r->size);
    if (r->why) {
        uint8_t *o = p + off_at;
        o[0] = r->why;
        o[1] = (uint8_t)nl;
        o[2] = (uint8_t)wdepth;
        o[3] = 0;
        put_be32(o + 4, (uint32_t)r->waker);
        for (size_t i = 0; i < nl; i++)
            o[PSTR_REC_OFF_LEN + i] = (uint8_t)r->name[i];
    }
    if (locked) {
        uint8_t *o = p + off_at;
        put_be32(o, r->waits);
        o[4] = r->lkind;
        o[5] = (uint8_t)nl;
        o[6] = o[7] = 0;
        for (size_t i = 0; i < nl; i++)
            o[PSTR_REC_LOCK_LEN + i] = (uint8_t)r->name[i];
    }
    if (traced) {
        uint8_t *o = p + off_at;
        o[0] = r->tev;
        o[1] = r->targ;
        o[2] = (uint8_t)nl;
        o[3] = 0;
        put_be32(o + 4, r->tother);
        put_be16(o + 8, r->tvec);
        put_be16(o + 10, r->twcpu);
        put_be32(o + 12, r->tdur);
        for (size_t i = 0; i < nl; i++)
            o[PSTR_REC_TRACE_LEN + i] = (uint8_t)r->name[i];
    }
    for (unsigned i = 0; i < r->depth; i++) {
        put_be64(p + fixed + 8 * i, r->frames[i]);
        w->last[i] = r->frames[i];      /* a CPU sample next may share them */
    }
    w->last_depth = r->depth;
    for (unsigned i = 0; i < wdepth; i++)
        put_be64(p + fixed + 8 * ((size_t)r->depth + i), r->wframes[i]);
    w->len += need;
    w->count++;
    return true;
}

size_t pstr_finish(struct pstr_writer *w)
{
    put_be16(w->buf + OFF_LEN, (uint16_t)(w->len - PSTR_HDR_LEN));
    put_be16(w->buf + OFF_COUNT, w->count);
    return w->len;
}
