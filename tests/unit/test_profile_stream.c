// LINK: uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c lib/sha256.c
/* tests/unit/test_profile_stream.c: the profile stream's encoder and
 * parsers (uapi/profile_stream.h): every type round trip, every refusal
 * reason, every truncation, names and sources cut, and the encoder's own
 * refusals. Each parse runs over a heap copy of exactly the datagram, so
 * ASan sees any read past it. */
#include "test.h"
#include "lib/sha256.h"
#include "uapi/byteorder.h"
#include "uapi/profile_stream.h"
#include <stdlib.h>

#define BID "0123456789abcdef0123456789abcdef01234567"

/* The parse of len bytes of d, from a heap copy of exactly that size. */
static int parse_copy(const uint8_t *d, size_t len, struct pstr_hdr *h, uint8_t **copy)
{
    *copy = malloc(len ? len : 1);
    memcpy(*copy, d, len);
    return pstr_parse(*copy, len, h);
}

struct recs {
    unsigned n;
    struct pstr_record r[64];
};

static void take_rec(void *ctx, const struct pstr_record *r)
{
    struct recs *s = ctx;
    if (s->n < 64)
        s->r[s->n] = *r;
    s->n++;
}

struct tasks {
    unsigned n;
    uint32_t pid[64];
    char name[64][PSTR_TASK_MAX + 1];
};

static void take_task(void *ctx, uint32_t pid, const char *name)
{
    struct tasks *t = ctx;
    if (t->n < 64) {
        t->pid[t->n] = pid;
        snprintf(t->name[t->n], sizeof t->name[0], "%s", name);
    }
    t->n++;
}

struct cpus {
    unsigned n;
    struct pstr_end_cpu c[64];
};

static void take_cpu(void *ctx, const struct pstr_end_cpu *c)
{
    struct cpus *s = ctx;
    if (s->n < 64)
        s->c[s->n] = *c;
    s->n++;
}

static struct pstr_record rec(uint32_t pid, uint8_t depth, uint8_t flags)
{
    struct pstr_record r = { .pid = pid, .depth = depth, .flags = flags };
    for (unsigned i = 0; i < depth; i++)
        r.frames[i] = 0xffffffff80100000ull + pid * 0x100 + i;
    return r;
}

static size_t make_batch(struct pstr_writer *w, unsigned n)
{
    pstr_begin(w, PSTR_BATCH, 3, 0x1a2b3c4d, 7, 123456789012ull);
    struct pstr_batch b = { .first = 100, .drops = 2, .drops_total = 9 };
    pstr_batch_head(w, &b);
    for (unsigned i = 0; i < n; i++) {
        struct pstr_record r = rec(i + 1, (uint8_t)(1 + i % PSTR_FRAMES), i & 1 ? PSTR_REC_TICK : 0);
        CHECK(pstr_add_record(w, &r));
    }
    return pstr_finish(w);
}

static size_t make_meta(struct pstr_writer *w)
{
    pstr_begin(w, PSTR_META, 0, 0x1a2b3c4d, 0, 5);
    struct pstr_meta m = { .build_id = BID, .source = "pmu/nmi intel fixed-ctr1",
                           .pid = PSTR_PID_ALL, .ms = 2000, .period_ns = 1000000, .cpus = 2 };
    pstr_meta_head(w, &m);
    CHECK(pstr_add_task(w, 1, "init"));
    CHECK(pstr_add_task(w, 7, "burn"));
    return pstr_finish(w);
}

static size_t make_end(struct pstr_writer *w)
{
    pstr_begin(w, PSTR_END, 0, 0x1a2b3c4d, 42, 99);
    pstr_end_head(w, PSTR_END_ELAPSED);
    for (uint16_t c = 0; c < 2; c++) {
        struct pstr_end_cpu e = { .cpu = c, .records = 200 + c, .drops_total = c };
        CHECK(pstr_add_end_cpu(w, &e));
    }
    return pstr_finish(w);
}

/* The payload parse of d (len bytes) for its type: 0 or a reason. */
static int parse_all(const uint8_t *d, size_t len)
{
    struct pstr_hdr h;
    uint8_t *copy;
    int rc = parse_copy(d, len, &h, &copy);
    if (rc == 0) {
        struct pstr_batch b;
        struct pstr_meta m;
        uint8_t reason;
        struct recs r = { 0 };
        struct tasks t = { 0 };
        struct cpus c = { 0 };
        if (h.type == PSTR_BATCH)
            rc = pstr_batch_parse(&h, &b, take_rec, &r);
        else if (h.type == PSTR_META)
            rc = pstr_meta_parse(&h, &m, take_task, &t);
        else
            rc = pstr_end_parse(&h, &reason, take_cpu, &c);
        if (rc != 0)
            CHECK(r.n == 0 && t.n == 0 && c.n == 0);   /* refused: nothing handed out */
    }
    free(copy);
    return rc;
}

TEST(stream_batch_round_trip)
{
    struct pstr_writer w;
    size_t len = make_batch(&w, 10);
    struct pstr_hdr h;
    uint8_t *copy;
    CHECK_EQ(parse_copy(w.buf, len, &h, &copy), 0);
    CHECK_EQ(h.type, PSTR_BATCH);
    CHECK_EQ(h.cpu, 3);
    CHECK_EQ(h.stream, 0x1a2b3c4d);
    CHECK_EQ(h.seq, 7);
    CHECK_EQ(h.t_ns, 123456789012ull);
    CHECK_EQ(h.count, 10);
    CHECK_EQ(h.len, len - PSTR_HDR_LEN);
    struct pstr_batch b;
    struct recs r = { 0 };
    CHECK_EQ(pstr_batch_parse(&h, &b, take_rec, &r), 0);
    CHECK_EQ(b.first, 100);
    CHECK_EQ(b.drops, 2);
    CHECK_EQ(b.drops_total, 9);
    CHECK_EQ(r.n, 10);
    for (unsigned i = 0; i < 10; i++) {
        struct pstr_record want = rec(i + 1, (uint8_t)(1 + i % PSTR_FRAMES), i & 1 ? PSTR_REC_TICK : 0);
        CHECK_EQ(r.r[i].pid, want.pid);
        CHECK_EQ(r.r[i].depth, want.depth);
        CHECK_EQ(r.r[i].flags, want.flags);
        CHECK(memcmp(r.r[i].frames, want.frames, sizeof want.frames) == 0);
    }
    free(copy);
    /* The wire bytes the header promises: magic, version, big-endian. */
    CHECK(w.buf[0] == 'S' && w.buf[1] == 'P' && w.buf[2] == 'R' && w.buf[3] == 'S');
    CHECK_EQ(w.buf[4], 1);
    CHECK_EQ(w.buf[5], PSTR_BATCH);
    CHECK_EQ(w.buf[7], 3);
    CHECK_EQ(w.buf[8], 0x1a);
}

/* Kinds and weights: a CPU sample goes without a weight (its bytes those
 * of the format before kinds) and reads back weighing 1; other kinds go
 * with theirs, full 64 bits, and a batch still holds 16 full-depth. */
TEST(stream_batch_kinds_and_weights)
{
    struct pstr_writer w;
    pstr_begin(&w, PSTR_BATCH, 1, 7, 0, 1);
    struct pstr_batch b = { 0 };
    pstr_batch_head(&w, &b);
    struct pstr_record cpu = rec(3, 2, PSTR_REC_TICK);
    cpu.weight = 99;                        /* ignored: a CPU sample weighs 1 */
    struct pstr_record off = rec(4, 3, 0);
    off.kind = PSTR_KIND_OFFCPU;
    off.weight = 0x123456789abcull;
    struct pstr_record heap = rec(5, 1, 0);
    heap.kind = PSTR_KIND_HEAP;
    heap.weight = 524288;
    heap.size = 0x10000000123ull;
    size_t at = w.len;
    CHECK(pstr_add_record(&w, &cpu));
    CHECK_EQ(w.len - at, PSTR_REC_FIXED + 2 * 8);
    CHECK_EQ(w.buf[at + 6], PSTR_KIND_CPU);
    at = w.len;
    CHECK(pstr_add_record(&w, &off));
    CHECK_EQ(w.len - at, PSTR_REC_FIXED + PSTR_REC_WEIGHT_LEN + 3 * 8);
    CHECK_EQ(w.buf[at + 5], PSTR_REC_WEIGHT);
    CHECK_EQ(w.buf[at + 6], PSTR_KIND_OFFCPU);
    at = w.len;
    CHECK(pstr_add_record(&w, &heap));
    CHECK_EQ(w.len - at, PSTR_REC_FIXED + PSTR_REC_WEIGHT_LEN + PSTR_REC_SIZE_LEN + 8);
    CHECK_EQ(w.buf[at + 5], PSTR_REC_WEIGHT | PSTR_REC_SIZE);
    size_t len = pstr_finish(&w);
    struct pstr_hdr h;
    CHECK_EQ(pstr_parse(w.buf, len, &h), 0);
    struct recs r = { 0 };
    CHECK_EQ(pstr_batch_parse(&h, &b, take_rec, &r), 0);
    CHECK_EQ(r.n, 3);
    CHECK_EQ(r.r[0].kind, PSTR_KIND_CPU);
    CHECK_EQ(r.r[0].weight, 1);
    CHECK_EQ(r.r[0].flags, PSTR_REC_TICK);
    CHECK_EQ(r.r[1].kind, PSTR_KIND_OFFCPU);
    CHECK_EQ(r.r[1].weight, 0x123456789abcull);
    CHECK_EQ(r.r[1].flags, 0);
    CHECK(memcmp(r.r[1].frames, off.frames, sizeof off.frames) == 0);
    CHECK_EQ(r.r[2].kind, PSTR_KIND_HEAP);
    CHECK_EQ(r.r[2].weight, 524288);
    CHECK_EQ(r.r[2].size, 0x10000000123ull);
    CHECK_EQ(r.r[2].frames[0], heap.frames[0]);
    CHECK_EQ(r.r[1].size, 0);
    /* A kind above the known ones is refused by the encoder too. */
    struct pstr_record bad = off;
    bad.kind = PSTR_KIND_MAX + 1;
    CHECK(!pstr_add_record(&w, &bad));
    /* Full-depth weighted records: at least 16 fit, 15 heap records
     * (their size too). */
    for (unsigned k = PSTR_KIND_OFFCPU; k <= PSTR_KIND_HEAP; k++) {
        pstr_begin(&w, PSTR_BATCH, 0, 1, 1, 1);
        pstr_batch_head(&w, &b);
        struct pstr_record full = rec(5, PSTR_FRAMES, 0);
        full.kind = (uint8_t)k;
        full.weight = 1000;
        full.size = 10;
        unsigned n = 0;
        while (pstr_add_record(&w, &full))
            n++;
        CHECK(n >= (k == PSTR_KIND_HEAP ? 15u : 16u));
        CHECK_EQ(parse_all(w.buf, pstr_finish(&w)), 0);
    }
}

/* One spelling per record: a heap record without its size (as a writer
 * from before sizes would send it) and any other kind with one are
 * refused, the whole batch with them. */
TEST(stream_heap_size_required_and_only_there)
{
    struct pstr_writer w;
    struct pstr_batch b = { 0 };
    for (unsigned k = PSTR_KIND_OFFCPU; k <= PSTR_KIND_HEAP; k++) {
        pstr_begin(&w, PSTR_BATCH, 0, 1, 1, 1);
        pstr_batch_head(&w, &b);
        struct pstr_record cpu = rec(3, 1, 0);
        CHECK(pstr_add_record(&w, &cpu));
        size_t at = w.len;
        struct pstr_record r = rec(4, 1, 0);
        r.kind = (uint8_t)k;
        r.weight = 64;
        r.size = 64;
        CHECK(pstr_add_record(&w, &r));
        /* Flip the size flag: the heap record loses it, offcpu gains it. */
        w.buf[at + 5] ^= PSTR_REC_SIZE;
        size_t len = pstr_finish(&w);
        struct pstr_hdr h;
        CHECK_EQ(pstr_parse(w.buf, len, &h), 0);
        struct recs got = { 0 };
        CHECK_EQ(pstr_batch_parse(&h, &b, take_rec, &got), PSTR_EFIELD);
        CHECK_EQ(got.n, 0);
    }
}

/* ---- off-CPU records: why, name, waker ------------------------------------ */

static struct pstr_record off_rec(uint8_t why, const char *name, int32_t waker, uint8_t wdepth)
{
    struct pstr_record r = rec(6, 5, 0);
    r.kind = PSTR_KIND_OFFCPU;
    r.weight = 106224150;
    r.why = why;
    snprintf(r.name, sizeof r.name, "%s", name);
    r.waker = waker;
    r.wdepth = wdepth;
    for (unsigned i = 0; i < wdepth && i < PSTR_FRAMES; i++)
        r.wframes[i] = 0xffffffff80200000ull + i;
    return r;
}

/* An interval with its reason, its queue's name and its waker's chain
 * reads back whole, at the byte offsets the header documents; the other
 * reasons without a name or a waker. */
TEST(stream_off_record_round_trip)
{
    struct pstr_writer w;
    pstr_begin(&w, PSTR_BATCH, 1, 7, 0, 1);
    struct pstr_batch b = { 0 };
    pstr_batch_head(&w, &b);
    struct pstr_record q = off_rec(PSTR_WHY_WAITQ, "virtio-rx", 9, 4);
    struct pstr_record run = off_rec(PSTR_WHY_RUNNABLE, "", PSTR_WAKER_NONE, 0);
    struct pstr_record sl = off_rec(PSTR_WHY_SLEEP, "", 0, 0);
    size_t at = w.len;
    CHECK(pstr_add_record(&w, &q));
    CHECK_EQ(w.len - at, PSTR_REC_FIXED + PSTR_REC_WEIGHT_LEN + PSTR_REC_OFF_LEN + 9 + 8 * (5 + 4));
    CHECK_EQ(w.buf[at + 5], PSTR_REC_WEIGHT | PSTR_REC_OFF);
    CHECK_EQ(w.buf[at + 16], PSTR_WHY_WAITQ);
    CHECK_EQ(w.buf[at + 17], 9);
    CHECK_EQ(w.buf[at + 18], 4);
    CHECK_EQ(get_be32(w.buf + at + 20), 9);
    CHECK(memcmp(w.buf + at + 24, "virtio-rx", 9) == 0);
    CHECK_EQ(get_be64(w.buf + at + 33), q.frames[0]);
    CHECK_EQ(get_be64(w.buf + at + 33 + 40), q.wframes[0]);
    at = w.len;
    CHECK(pstr_add_record(&w, &run));
    CHECK_EQ(get_be32(w.buf + at + 20), 0xffffffffu);
    CHECK(pstr_add_record(&w, &sl));
    size_t len = pstr_finish(&w);
    struct pstr_hdr h;
    uint8_t *copy;
    CHECK_EQ(parse_copy(w.buf, len, &h, &copy), 0);
    struct recs r = { 0 };
    CHECK_EQ(pstr_batch_parse(&h, &b, take_rec, &r), 0);
    CHECK_EQ(r.n, 3);
    CHECK_EQ(r.r[0].why, PSTR_WHY_WAITQ);
    CHECK_STR(r.r[0].name, "virtio-rx");
    CHECK_EQ(r.r[0].waker, 9);
    CHECK_EQ(r.r[0].wdepth, 4);
    CHECK_EQ(r.r[0].weight, 106224150);
    CHECK_EQ(r.r[0].flags, 0);
    CHECK(memcmp(r.r[0].frames, q.frames, sizeof q.frames) == 0);
    CHECK(memcmp(r.r[0].wframes, q.wframes, sizeof q.wframes) == 0);
    CHECK_EQ(r.r[1].why, PSTR_WHY_RUNNABLE);
    CHECK_STR(r.r[1].name, "");
    CHECK_EQ(r.r[1].waker, PSTR_WAKER_NONE);
    CHECK_EQ(r.r[1].wdepth, 0);
    CHECK_EQ(r.r[2].why, PSTR_WHY_SLEEP);
    CHECK_EQ(r.r[2].waker, 0);
    free(copy);
    /* A record of another kind, or an off-CPU one without its part, has
     * why 0 and no waker. */
    struct pstr_record plain = off_rec(0, "", 0, 0);
    pstr_begin(&w, PSTR_BATCH, 1, 7, 1, 1);
    pstr_batch_head(&w, &b);
    CHECK(pstr_add_record(&w, &plain));
    len = pstr_finish(&w);
    CHECK_EQ(w.buf[PSTR_HDR_LEN + PSTR_BATCH_HDR + 5], PSTR_REC_WEIGHT);
    CHECK_EQ(parse_copy(w.buf, len, &h, &copy), 0);
    r.n = 0;
    CHECK_EQ(pstr_batch_parse(&h, &b, take_rec, &r), 0);
    CHECK_EQ(r.r[0].why, 0);
    CHECK_EQ(r.r[0].waker, PSTR_WAKER_NONE);
    free(copy);
}

/* The encoder refuses, writing nothing, every off-CPU part the parser
 * would refuse; and a full batch of the longest ones still holds 7. */
TEST(stream_off_encoder_refuses)
{
    struct pstr_writer w;
    pstr_begin(&w, PSTR_BATCH, 1, 7, 0, 1);
    struct pstr_batch b = { 0 };
    pstr_batch_head(&w, &b);
    size_t len0 = w.len;
    struct pstr_record bad[] = {
        off_rec(PSTR_WHY_MAX + 1, "", PSTR_WAKER_NONE, 0),      /* no such reason */
        off_rec(PSTR_WHY_SLEEP, "q", 0, 0),                    /* a name on a sleep */
        off_rec(PSTR_WHY_RUNNABLE, "", 3, 0),                  /* a waker on runnable */
        off_rec(PSTR_WHY_PREEMPTED, "", PSTR_WAKER_NONE, 2),   /* a chain on preempted */
        off_rec(PSTR_WHY_WAITQ, "q", PSTR_WAKER_NONE, 2),      /* a chain with nobody */
        off_rec(PSTR_WHY_WAITQ, "q", -2, 0),                   /* waker below -1 */
        off_rec(PSTR_WHY_WAITQ, "q", 5, PSTR_FRAMES + 1),      /* too deep */
        off_rec(PSTR_WHY_MUTEX, "a:b", 5, 1),                  /* ':' in a name */
        off_rec(PSTR_WHY_MUTEX, "a b", 5, 1),                  /* ' ' in a name */
    };
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(!pstr_add_record(&w, &bad[i]));
        CHECK_EQ(w.len, len0);
    }
    struct pstr_record heap = off_rec(PSTR_WHY_SLEEP, "", 0, 0);
    heap.kind = PSTR_KIND_HEAP;                                 /* why on a heap record */
    CHECK(!pstr_add_record(&w, &heap));
    struct pstr_record full = off_rec(PSTR_WHY_MUTEX, "0123456789abcdef0123456789abcde",
                                      2147483647, PSTR_FRAMES);
    full.depth = PSTR_FRAMES;
    unsigned n = 0;
    while (pstr_add_record(&w, &full))
        n++;
    CHECK(n >= 7);
    CHECK_EQ(parse_all(w.buf, pstr_finish(&w)), 0);
}

/* Every rule of the off-CPU part, byte by byte on the wire, refused with
 * its reason; and every truncation of a batch of them. */
TEST(stream_off_parser_refuses)
{
    struct pstr_writer w;
    pstr_begin(&w, PSTR_BATCH, 1, 7, 0, 1);
    struct pstr_batch b = { 0 };
    pstr_batch_head(&w, &b);
    struct pstr_record q = off_rec(PSTR_WHY_WAITQ, "burn-q", 7, 2);
    CHECK(pstr_add_record(&w, &q));
    size_t len = pstr_finish(&w);
    const size_t o = PSTR_HDR_LEN + PSTR_BATCH_HDR + 16;   /* the off part */
    uint8_t d[PSTR_DGRAM_MAX];
    struct { size_t at; uint8_t v; int want; } cases[] = {
        { o + 0, 0, PSTR_EFIELD },                  /* why 0 with the flag */
        { o + 0, PSTR_WHY_MAX + 1, PSTR_EFIELD },
        { o + 0, PSTR_WHY_RUNNABLE, PSTR_EFIELD },  /* a name and a waker on runnable */
        { o + 1, PSTR_NAME_MAX + 1, PSTR_EFIELD },
        { o + 2, PSTR_FRAMES + 1, PSTR_EFIELD },
        { o + 3, 1, PSTR_ERESERVED },
        { o + 13, ';', PSTR_EFIELD },               /* a name character */
        { o + 8, ':', PSTR_EFIELD },
        { o + 4, 0x80, PSTR_EFIELD },               /* waker negative, below -1 */
        { PSTR_HDR_LEN + PSTR_BATCH_HDR + 6, PSTR_KIND_HEAP, PSTR_EFIELD },
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(d, w.buf, len);
        d[cases[i].at] = cases[i].v;
        CHECK_EQ(parse_all(d, len), cases[i].want);
    }
    memcpy(d, w.buf, len);
    d[o + 1] = 7;                                   /* name one longer: frames eaten */
    CHECK(parse_all(d, len) < 0);
    /* Cut anywhere: refused, never read past (parse_all's heap copy). */
    for (size_t cut = PSTR_HDR_LEN + PSTR_BATCH_HDR; cut < len; cut++) {
        memcpy(d, w.buf, len);
        put_be16(d + 24, (uint16_t)(cut - PSTR_HDR_LEN));
        CHECK(parse_all(d, cut) < 0);
    }
}

TEST(stream_batch_empty_and_full)
{
    struct pstr_writer w;
    size_t len = make_batch(&w, 0);
    CHECK_EQ(len, PSTR_HDR_LEN + PSTR_BATCH_HDR);
    CHECK_EQ(parse_all(w.buf, len), 0);
    /* Full-depth records: at least 18 fit, and the one that does not fit
     * writes nothing. */
    pstr_begin(&w, PSTR_BATCH, 0, 1, 1, 1);
    struct pstr_batch b = { 0 };
    pstr_batch_head(&w, &b);
    struct pstr_record r = rec(5, PSTR_FRAMES, 0);
    unsigned n = 0;
    while (pstr_add_record(&w, &r))
        n++;
    CHECK(n >= 18);
    size_t before = w.len;
    CHECK(!pstr_add_record(&w, &r));
    CHECK_EQ(w.len, before);
    CHECK_EQ(w.count, n);
    len = pstr_finish(&w);
    CHECK(len <= PSTR_DGRAM_MAX);
    CHECK_EQ(parse_all(w.buf, len), 0);
}

static void check_rec(void *ctx, const struct pstr_record *r)
{
    struct { unsigned n, bad; const struct pstr_record *want; } *cx = ctx;
    const struct pstr_record *w = &cx->want[cx->n++];
    cx->bad += r->pid != w->pid || r->depth != w->depth ||
               memcmp(r->frames, w->frames, w->depth * sizeof *w->frames) != 0;
}

/* A CPU sample of depth d with the given frames, innermost first. */
static struct pstr_record chain(uint32_t pid, unsigned d, const uint64_t *f)
{
    struct pstr_record r = { .pid = pid, .depth = (uint8_t)d };
    memcpy(r.frames, f, d * sizeof *f);
    return r;
}

/* Shared tails: a record sends only the frames that are not the previous
 * record's outermost ones; byte 7 says how many it took, and the reader
 * puts them back. Measured in bytes, and read back whole. */
TEST(stream_shared_tails)
{
    const uint64_t X = 0xffffffff80201000ull, Y = X + 0x100, Z = X + 0x200;
    const uint64_t a[] = { 0xa0, X, Y, Z }, b[] = { 0xb0, X, Y, Z }, c[] = { 0xc0, 0xc1, Y, Z };
    const uint64_t d[] = { Z }, e[] = { 1, 2, 3, 4, 5 };
    struct pstr_record want[8];
    unsigned n = 0;
    want[n++] = chain(1, 4, a);         /* first: no tail */
    want[n++] = chain(1, 4, b);         /* X Y Z shared: 1 frame sent */
    want[n++] = chain(2, 4, c);         /* Y Z shared */
    want[n++] = chain(2, 1, d);         /* Z alone, shared: no frame sent */
    want[n++] = chain(3, 5, e);         /* nothing shared */
    want[n++] = chain(3, 5, e);         /* all of it shared */
    struct pstr_record heap = chain(4, 4, a);
    heap.kind = PSTR_KIND_HEAP;
    heap.weight = 4096;
    heap.size = 64;
    want[n++] = heap;                   /* other kinds send every frame */
    want[n++] = chain(4, 4, b);         /* and a CPU sample shares theirs */
    const unsigned tails[] = { 0, 3, 2, 1, 0, 5, 0, 3 };
    struct pstr_writer w;
    pstr_begin(&w, PSTR_BATCH, 0, 1, 1, 1);
    struct pstr_batch bh = { 0 };
    pstr_batch_head(&w, &bh);
    size_t at[8];
    for (unsigned i = 0; i < n; i++) {
        at[i] = w.len;
        CHECK(pstr_add_record(&w, &want[i]));
    }
    size_t len = pstr_finish(&w);
    for (unsigned i = 0; i < n; i++) {
        size_t fixed = PSTR_REC_FIXED + (i == 6 ? PSTR_REC_WEIGHT_LEN + PSTR_REC_SIZE_LEN : 0);
        size_t size = (i + 1 < n ? at[i + 1] : len) - at[i];
        CHECK_EQ(w.buf[at[i] + 7], tails[i]);
        CHECK_EQ(size, fixed + 8 * (want[i].depth - tails[i]));
    }
    struct pstr_hdr h;
    uint8_t *copy;
    CHECK_EQ(parse_copy(w.buf, len, &h, &copy), 0);
    struct pstr_batch bb;
    struct recs r = { 0 };
    CHECK_EQ(pstr_batch_parse(&h, &bb, take_rec, &r), 0);
    CHECK_EQ(r.n, n);
    for (unsigned i = 0; i < n; i++) {
        CHECK_EQ(r.r[i].depth, want[i].depth);
        CHECK_EQ(r.r[i].kind, want[i].kind);
        CHECK(memcmp(r.r[i].frames, want[i].frames, sizeof want[i].frames) == 0);
    }
    free(copy);
    /* A tail longer than the previous record, or than the record itself. */
    uint8_t bad[PSTR_DGRAM_MAX];
    memcpy(bad, w.buf, len);
    bad[at[3] + 7] = 3;                 /* d has depth 1 */
    CHECK_EQ(parse_all(bad, len), PSTR_EFIELD);
    memcpy(bad, w.buf, len);
    bad[at[4] + 7] = 2;                 /* the record before e has depth 1 */
    CHECK_EQ(parse_all(bad, len), PSTR_EFIELD);
    memcpy(bad, w.buf, len);
    bad[at[6] + 7] = 1;                 /* a heap record's frames go whole */
    CHECK_EQ(parse_all(bad, len), PSTR_EFIELD);
}

/* Chains drawn from a few outer parts, so that tails of every length
 * come up, round-trip exactly, datagram after datagram. */
TEST(stream_shared_tails_round_trip)
{
    srand(5);
    uint64_t outer[3][PSTR_FRAMES];
    for (unsigned k = 0; k < 3; k++)
        for (unsigned i = 0; i < PSTR_FRAMES; i++)
            outer[k][i] = 0xffffffff80300000ull + k * 0x1000 + i * 8;
    unsigned shared = 0;
    for (unsigned round = 0; round < 50; round++) {
        struct pstr_writer w;
        static struct pstr_record sent[200];
        unsigned n = 0;
        pstr_begin(&w, PSTR_BATCH, 0, 1, round, 1);
        struct pstr_batch bh = { 0 };
        pstr_batch_head(&w, &bh);
        for (;;) {
            unsigned depth = 1 + (unsigned)rand() % PSTR_FRAMES, leaf = (unsigned)rand() % depth;
            const uint64_t *o = outer[rand() % 3];
            uint64_t f[PSTR_FRAMES];
            for (unsigned i = 0; i < depth; i++)    /* innermost leaf frames vary */
                f[i] = i < leaf ? (uint64_t)rand() : o[PSTR_FRAMES - depth + i];
            struct pstr_record rr = chain((uint32_t)rand() % 4, depth, f);
            size_t before = w.len;
            if (!pstr_add_record(&w, &rr))
                break;
            shared += w.buf[before + 7] != 0;
            sent[n++] = rr;
        }
        size_t len = pstr_finish(&w);
        struct pstr_hdr h;
        uint8_t *copy;
        CHECK_EQ(parse_copy(w.buf, len, &h, &copy), 0);
        CHECK_EQ(h.count, n);
        struct pstr_batch bb;
        struct { unsigned n, bad; const struct pstr_record *want; } cx = { 0, 0, sent };
        CHECK_EQ(pstr_batch_parse(&h, &bb, check_rec, &cx), 0);
        CHECK_EQ(cx.n, n);
        CHECK_EQ(cx.bad, 0);
        free(copy);
    }
    CHECK(shared > 300);                /* of ~2000 records: tails were exercised */
}

TEST(stream_encoder_refuses_bad_records)
{
    struct pstr_writer w;
    pstr_begin(&w, PSTR_BATCH, 0, 1, 1, 1);
    struct pstr_batch b = { 0 };
    pstr_batch_head(&w, &b);
    struct pstr_record r = rec(1, 0, 0);
    CHECK(!pstr_add_record(&w, &r));
    r = rec(1, PSTR_FRAMES, 0);
    r.depth = PSTR_FRAMES + 1;
    CHECK(!pstr_add_record(&w, &r));
    r = rec(1, 1, 0x80);
    CHECK(!pstr_add_record(&w, &r));
    CHECK_EQ(w.count, 0);
    CHECK_EQ(w.len, PSTR_HDR_LEN + PSTR_BATCH_HDR);
}

TEST(stream_meta_round_trip)
{
    struct pstr_writer w;
    size_t len = make_meta(&w);
    struct pstr_hdr h;
    uint8_t *copy;
    CHECK_EQ(parse_copy(w.buf, len, &h, &copy), 0);
    CHECK_EQ(h.type, PSTR_META);
    CHECK_EQ(h.cpu, 0);
    CHECK_EQ(h.count, 2);
    struct pstr_meta m;
    struct tasks t = { 0 };
    CHECK_EQ(pstr_meta_parse(&h, &m, take_task, &t), 0);
    CHECK_STR(m.build_id, BID);
    CHECK_STR(m.source, "pmu/nmi intel fixed-ctr1");
    CHECK_EQ(m.pid, PSTR_PID_ALL);
    CHECK_EQ(m.ms, 2000);
    CHECK_EQ(m.period_ns, 1000000);
    CHECK_EQ(m.cpus, 2);
    CHECK_EQ(t.n, 2);
    CHECK_EQ(t.pid[0], 1);
    CHECK_STR(t.name[0], "init");
    CHECK_EQ(t.pid[1], 7);
    CHECK_STR(t.name[1], "burn");
    free(copy);
}

TEST(stream_meta_names_cut_and_cleaned)
{
    struct pstr_writer w;
    pstr_begin(&w, PSTR_META, 0, 1, 0, 0);
    char src[100];
    memset(src, 's', sizeof src);
    src[99] = 0;
    src[0] = '\n';                           /* not printable: '_' */
    struct pstr_meta m = { .build_id = "ABC", .pid = 3, .cpus = 1 };
    memcpy(m.source, src, sizeof m.source - 1);
    m.source[PSTR_SOURCE_MAX] = 0;
    pstr_meta_head(&w, &m);
    CHECK(pstr_add_task(&w, 1, "a name;with spaces and more than thirty-one chars"));
    CHECK(pstr_add_task(&w, 2, ""));
    CHECK(pstr_add_task(&w, 3, "x"));
    size_t len = pstr_finish(&w);
    struct pstr_hdr h;
    uint8_t *copy;
    CHECK_EQ(parse_copy(w.buf, len, &h, &copy), 0);
    struct pstr_meta got;
    struct tasks t = { 0 };
    CHECK_EQ(pstr_meta_parse(&h, &got, take_task, &t), 0);
    /* Uppercase and short build ids become hex: "ABC" is not hex at all. */
    CHECK_STR(got.build_id, "0000000000000000000000000000000000000000");
    CHECK_EQ(strlen(got.source), PSTR_SOURCE_MAX);
    CHECK_EQ(got.source[0], '_');
    CHECK_EQ(t.n, 3);
    CHECK_STR(t.name[0], "a_name_with_spaces_and_more_tha");
    CHECK_EQ(strlen(t.name[0]), PSTR_TASK_MAX);
    CHECK_STR(t.name[1], "-");
    CHECK_STR(t.name[2], "x");
    free(copy);
    /* An empty source is sent as "-". */
    pstr_begin(&w, PSTR_META, 0, 1, 0, 0);
    struct pstr_meta e = { .build_id = BID, .cpus = 1 };
    pstr_meta_head(&w, &e);
    len = pstr_finish(&w);
    CHECK_EQ(parse_copy(w.buf, len, &h, &copy), 0);
    CHECK_EQ(pstr_meta_parse(&h, &got, 0, 0), 0);
    CHECK_STR(got.source, "-");
    free(copy);
}

TEST(stream_meta_fills_up)
{
    struct pstr_writer w;
    pstr_begin(&w, PSTR_META, 0, 1, 0, 0);
    struct pstr_meta m = { .build_id = BID, .source = "tick 100Hz", .cpus = 1 };
    pstr_meta_head(&w, &m);
    unsigned n = 0;
    while (pstr_add_task(&w, n, "0123456789012345678901234567890123"))
        n++;
    CHECK(n > 30);
    CHECK_EQ(w.count, n);
    size_t len = pstr_finish(&w);
    CHECK(len <= PSTR_DGRAM_MAX);
    CHECK_EQ(parse_all(w.buf, len), 0);
}

TEST(stream_end_round_trip)
{
    struct pstr_writer w;
    size_t len = make_end(&w);
    struct pstr_hdr h;
    uint8_t *copy;
    CHECK_EQ(parse_copy(w.buf, len, &h, &copy), 0);
    CHECK_EQ(h.type, PSTR_END);
    CHECK_EQ(h.seq, 42);
    CHECK_EQ(h.count, 2);
    uint8_t reason = 0;
    struct cpus c = { 0 };
    CHECK_EQ(pstr_end_parse(&h, &reason, take_cpu, &c), 0);
    CHECK_EQ(reason, PSTR_END_ELAPSED);
    CHECK_EQ(c.n, 2);
    CHECK_EQ(c.c[1].cpu, 1);
    CHECK_EQ(c.c[1].records, 201);
    CHECK_EQ(c.c[1].drops_total, 1);
    free(copy);
    for (uint8_t r = PSTR_END_STOPPED; r <= PSTR_END_ELAPSED; r++) {
        pstr_begin(&w, PSTR_END, 0, 1, 1, 1);
        pstr_end_head(&w, r);
        len = pstr_finish(&w);
        CHECK_EQ(parse_copy(w.buf, len, &h, &copy), 0);
        CHECK_EQ(pstr_end_parse(&h, &reason, 0, 0), 0);
        CHECK_EQ(reason, r);
        free(copy);
    }
}

/* Every datagram cut at every shorter length is refused, by the header
 * (the len field disagrees) or, with len patched to agree, by the payload
 * parser; never a read past the end. */
TEST(stream_truncation_at_every_length)
{
    struct pstr_writer w[3];
    size_t len[3] = { make_batch(&w[0], 12), make_meta(&w[1]), make_end(&w[2]) };
    for (int k = 0; k < 3; k++) {
        CHECK_EQ(parse_all(w[k].buf, len[k]), 0);
        for (size_t n = 0; n < len[k]; n++) {
            int rc = parse_all(w[k].buf, n);
            CHECK(rc == (n < PSTR_HDR_LEN ? PSTR_ESHORT : PSTR_ELEN));
            if (n < PSTR_HDR_LEN)
                continue;
            uint8_t cut[PSTR_DGRAM_MAX];
            memcpy(cut, w[k].buf, n);
            cut[24] = (uint8_t)((n - PSTR_HDR_LEN) >> 8);
            cut[25] = (uint8_t)(n - PSTR_HDR_LEN);
            rc = parse_all(cut, n);
            CHECK(rc == PSTR_ESHORT || rc == PSTR_ECOUNT);
        }
    }
}

static void patch(uint8_t *d, size_t off, uint8_t v) { d[off] = v; }

TEST(stream_header_reasons)
{
    struct pstr_writer w;
    size_t len = make_batch(&w, 2);
    uint8_t d[PSTR_DGRAM_MAX + 8];
    memcpy(d, w.buf, len);
    patch(d, 0, 'X');
    CHECK_EQ(parse_all(d, len), PSTR_EMAGIC);
    memcpy(d, w.buf, len);
    patch(d, 4, 2);
    CHECK_EQ(parse_all(d, len), PSTR_EMAGIC);
    memcpy(d, w.buf, len);
    patch(d, 5, 9);
    CHECK_EQ(parse_all(d, len), PSTR_ETYPE);
    patch(d, 5, 0);
    CHECK_EQ(parse_all(d, len), PSTR_ETYPE);
    for (int i = 28; i < 32; i++) {
        memcpy(d, w.buf, len);
        patch(d, (size_t)i, i == 28 ? 2 : 1);   /* flags: only PSTR_FLAG_TAGGED is known */
        CHECK_EQ(parse_all(d, len), PSTR_ERESERVED);
    }
    /* Tagged, with no tag after the payload. */
    memcpy(d, w.buf, len);
    patch(d, 28, PSTR_FLAG_TAGGED);
    CHECK_EQ(parse_all(d, len), PSTR_ELEN);
    /* One byte more than len says. */
    memcpy(d, w.buf, len);
    d[len] = 0;
    CHECK_EQ(parse_all(d, len + 1), PSTR_ELEN);
    /* Bigger than a datagram may be, even where len agrees. */
    uint8_t big[PSTR_DGRAM_MAX + 1];
    memset(big, 0, sizeof big);
    memcpy(big, w.buf, PSTR_HDR_LEN);
    big[24] = (uint8_t)((sizeof big - PSTR_HDR_LEN) >> 8);
    big[25] = (uint8_t)(sizeof big - PSTR_HDR_LEN);
    CHECK_EQ(parse_all(big, sizeof big), PSTR_ELEN);
    /* A META or END that names a CPU. */
    len = make_meta(&w);
    memcpy(d, w.buf, len);
    patch(d, 7, 1);
    CHECK_EQ(parse_all(d, len), PSTR_EFIELD);
    /* A wrong type to a payload parser. */
    struct pstr_hdr h;
    uint8_t *copy;
    CHECK_EQ(parse_copy(w.buf, len, &h, &copy), 0);
    struct pstr_batch b;
    uint8_t reason;
    CHECK_EQ(pstr_batch_parse(&h, &b, 0, 0), PSTR_ETYPE);
    CHECK_EQ(pstr_end_parse(&h, &reason, 0, 0), PSTR_ETYPE);
    free(copy);
    len = make_batch(&w, 1);
    CHECK_EQ(parse_copy(w.buf, len, &h, &copy), 0);
    struct pstr_meta m;
    CHECK_EQ(pstr_meta_parse(&h, &m, 0, 0), PSTR_ETYPE);
    free(copy);
}

TEST(stream_batch_reasons)
{
    struct pstr_writer w;
    size_t len = make_batch(&w, 2);         /* depths 1 and 2 */
    uint8_t d[PSTR_DGRAM_MAX];
    const size_t r0 = PSTR_HDR_LEN + PSTR_BATCH_HDR;
    memcpy(d, w.buf, len);
    patch(d, r0 + 4, 0);                    /* depth 0 */
    CHECK_EQ(parse_all(d, len), PSTR_EFIELD);
    memcpy(d, w.buf, len);
    patch(d, r0 + 4, PSTR_FRAMES + 1);
    CHECK_EQ(parse_all(d, len), PSTR_EFIELD);
    memcpy(d, w.buf, len);
    patch(d, r0 + 5, 0x08);                 /* an unknown flag */
    CHECK_EQ(parse_all(d, len), PSTR_EFIELD);
    memcpy(d, w.buf, len);
    patch(d, r0 + 5, PSTR_REC_OFF);         /* why and waker on a CPU sample */
    CHECK_EQ(parse_all(d, len), PSTR_EFIELD);
    memcpy(d, w.buf, len);
    patch(d, r0 + 6, PSTR_KIND_MAX + 1);    /* an unknown kind */
    CHECK_EQ(parse_all(d, len), PSTR_EFIELD);
    memcpy(d, w.buf, len);
    patch(d, r0 + 5, PSTR_REC_WEIGHT);      /* a CPU sample with a weight */
    CHECK_EQ(parse_all(d, len), PSTR_EFIELD);
    memcpy(d, w.buf, len);
    patch(d, r0 + 6, PSTR_KIND_HEAP);       /* another kind without one */
    CHECK_EQ(parse_all(d, len), PSTR_EFIELD);
    memcpy(d, w.buf, len);
    patch(d, r0 + 7, 1);                    /* a tail on a batch's first record */
    CHECK_EQ(parse_all(d, len), PSTR_EFIELD);
    memcpy(d, w.buf, len);
    patch(d, r0 + 4, 2);                    /* depth 2: the next record is eaten */
    CHECK(parse_all(d, len) < 0);
    memcpy(d, w.buf, len);
    patch(d, 27, 3);                        /* count 3, two there */
    CHECK_EQ(parse_all(d, len), PSTR_ECOUNT);
    memcpy(d, w.buf, len);
    patch(d, 27, 1);                        /* count 1, two there */
    CHECK_EQ(parse_all(d, len), PSTR_ECOUNT);
    memcpy(d, w.buf, len);
    patch(d, PSTR_HDR_LEN + 7, 10);         /* drops 10 > drops_total 9 */
    CHECK_EQ(parse_all(d, len), PSTR_EFIELD);
}

TEST(stream_meta_reasons)
{
    struct pstr_writer w;
    size_t len = make_meta(&w);
    uint8_t d[PSTR_DGRAM_MAX];
    const size_t p = PSTR_HDR_LEN;
    memcpy(d, w.buf, len);
    patch(d, p + 3, 'A');                   /* uppercase hex */
    CHECK_EQ(parse_all(d, len), PSTR_EFIELD);
    memcpy(d, w.buf, len);
    patch(d, p + 40, 0);                    /* source_len 0 */
    CHECK_EQ(parse_all(d, len), PSTR_EFIELD);
    memcpy(d, w.buf, len);
    patch(d, p + 40, PSTR_SOURCE_MAX + 1);
    CHECK_EQ(parse_all(d, len), PSTR_EFIELD);
    memcpy(d, w.buf, len);
    patch(d, p + 41, 0x7f);                 /* source not printable */
    CHECK_EQ(parse_all(d, len), PSTR_EFIELD);
    size_t sl = strlen("pmu/nmi intel fixed-ctr1");
    size_t f = p + 41 + sl;
    memcpy(d, w.buf, len);
    patch(d, f + 13, 0);                    /* cpus 0 */
    CHECK_EQ(parse_all(d, len), PSTR_EFIELD);
    size_t t0 = f + 14;
    memcpy(d, w.buf, len);
    patch(d, t0 + 4, 0);                    /* name_len 0 */
    CHECK_EQ(parse_all(d, len), PSTR_EFIELD);
    memcpy(d, w.buf, len);
    patch(d, t0 + 4, PSTR_TASK_MAX + 1);
    CHECK_EQ(parse_all(d, len), PSTR_EFIELD);
    memcpy(d, w.buf, len);
    patch(d, t0 + 5, ' ');                  /* a space in a name */
    CHECK_EQ(parse_all(d, len), PSTR_EFIELD);
    memcpy(d, w.buf, len);
    patch(d, t0 + 5, ';');
    CHECK_EQ(parse_all(d, len), PSTR_EFIELD);
    memcpy(d, w.buf, len);
    patch(d, 27, 3);
    CHECK_EQ(parse_all(d, len), PSTR_ECOUNT);
    memcpy(d, w.buf, len);
    patch(d, 27, 1);
    CHECK_EQ(parse_all(d, len), PSTR_ECOUNT);
}

TEST(stream_end_reasons)
{
    struct pstr_writer w;
    size_t len = make_end(&w);
    uint8_t d[PSTR_DGRAM_MAX];
    const size_t p = PSTR_HDR_LEN;
    memcpy(d, w.buf, len);
    patch(d, p, 0);
    CHECK_EQ(parse_all(d, len), PSTR_EFIELD);
    memcpy(d, w.buf, len);
    patch(d, p, PSTR_END_ELAPSED + 1);
    CHECK_EQ(parse_all(d, len), PSTR_EFIELD);
    for (int i = 1; i < 4; i++) {
        memcpy(d, w.buf, len);
        patch(d, p + (size_t)i, 1);
        CHECK_EQ(parse_all(d, len), PSTR_ERESERVED);
    }
    memcpy(d, w.buf, len);
    patch(d, p + 4 + 12 + 3, 1);            /* the second CPU's reserved */
    CHECK_EQ(parse_all(d, len), PSTR_ERESERVED);
    memcpy(d, w.buf, len);
    patch(d, 27, 1);
    CHECK_EQ(parse_all(d, len), PSTR_ECOUNT);
    memcpy(d, w.buf, len);
    patch(d, 27, 3);
    CHECK_EQ(parse_all(d, len), PSTR_ECOUNT);
}

TEST(stream_strerror_names_every_reason)
{
    for (int r = -1; r >= -PSTR_NREASONS; r--) {
        const char *s = pstr_strerror(r);
        CHECK(s && strlen(s) > 5);
        CHECK(strcmp(s, "unknown reason") != 0);
        for (int q = r - 1; q >= -PSTR_NREASONS; q--)
            CHECK(strcmp(s, pstr_strerror(q)) != 0);
    }
    CHECK_STR(pstr_strerror(-99), "unknown reason");
}

/* Random bytes and random flips of good datagrams: never a crash, never
 * an item handed out from a refused datagram (parse_all checks). */
TEST(stream_hostile_bytes)
{
    uint32_t x = 12345;
    struct pstr_writer w[3];
    size_t len[3] = { make_batch(&w[0], 8), make_meta(&w[1]), make_end(&w[2]) };
    for (int i = 0; i < 20000; i++) {
        int k = i % 3;
        uint8_t d[PSTR_DGRAM_MAX];
        memcpy(d, w[k].buf, len[k]);
        for (int f = 0; f < 3; f++) {
            x = x * 1103515245u + 12345u;
            d[(x >> 8) % len[k]] = (uint8_t)(x >> 20);
        }
        parse_all(d, len[k]);
    }
}

/* The wire bytes of a record as the format spells them, a byte at a time:
 * the encoder's word-at-a-time stores must give exactly these, on any
 * host, at any offset in the datagram. */
static size_t ref_record(uint8_t *p, const struct pstr_record *r)
{
    for (int k = 0; k < 4; k++)
        p[k] = (uint8_t)(r->pid >> (24 - 8 * k));
    p[4] = r->depth;
    p[5] = r->flags;
    p[6] = p[7] = 0;
    for (unsigned i = 0; i < r->depth; i++)
        for (int k = 0; k < 8; k++)
            p[8 + 8 * i + k] = (uint8_t)(r->frames[i] >> (56 - 8 * k));
    return 8 + 8 * (size_t)r->depth;
}

TEST(stream_encoder_bytes_match_reference)
{
    srand(11);
    for (unsigned round = 0; round < 200; round++) {
        struct pstr_writer w;
        uint8_t want[PSTR_DGRAM_MAX];
        pstr_begin(&w, PSTR_BATCH, 1, 0xdeadbeef, round, 42);
        struct pstr_batch b = { round, 0, 0 };
        pstr_batch_head(&w, &b);
        memcpy(want, w.buf, w.len);
        size_t len = w.len;
        for (;;) {
            struct pstr_record r = { .pid = (uint32_t)rand() * 2654435761u,
                                     .depth = (uint8_t)(1 + rand() % PSTR_FRAMES),
                                     .flags = (uint8_t)(rand() & PSTR_REC_TICK) };
            for (unsigned i = 0; i < PSTR_FRAMES; i++)
                r.frames[i] = (uint64_t)rand() << 40 ^ (uint64_t)rand() << 17 ^ (uint64_t)rand();
            if (!pstr_add_record(&w, &r))
                break;
            len += ref_record(want + len, &r);
        }
        CHECK_EQ(w.len, len);
        CHECK(memcmp(w.buf + PSTR_HDR_LEN, want + PSTR_HDR_LEN, len - PSTR_HDR_LEN) == 0);
    }
}

/* ---- tags ------------------------------------------------------------------ */

static const uint8_t tkey[PSTR_KEY_LEN] = "a key of thirty-two bytes, here.";

static void keyed(struct pstr_tag_key *k, const uint8_t *key, uint64_t epoch)
{
    struct hmac_sha256 m;
    hmac_sha256_init(&m, key, PSTR_KEY_LEN);
    pstr_tag_begin(k, &m, epoch);
}

/* A sealed datagram: the flag set, the tag appended (its bytes against a
 * reference: tests/unit/test_profile_stream_tag.c); it parses to the same
 * header and payload, tagged, and verifies under its key and epoch alone,
 * and not with any byte changed. */
TEST(stream_tag_seal_and_verify)
{
    struct pstr_writer w;
    size_t len = make_batch(&w, 3);
    uint8_t d[PSTR_TAGGED_MAX];
    memcpy(d, w.buf, len);
    static struct pstr_tag_key k, k_epoch, k_key;
    keyed(&k, tkey, 42);
    keyed(&k_epoch, tkey, 43);
    uint8_t key2[PSTR_KEY_LEN];
    memcpy(key2, tkey, sizeof key2);
    key2[31] ^= 0x80;
    keyed(&k_key, key2, 42);
    CHECK(!pstr_verify(&k, d, len));            /* untagged */
    size_t n = pstr_seal(&k, d, len);
    CHECK_EQ(n, len + PSTR_TAG_LEN);
    CHECK_EQ(d[28], PSTR_FLAG_TAGGED);
    struct pstr_hdr h, h0;
    uint8_t *copy, *copy0;
    CHECK_EQ(parse_copy(d, n, &h, &copy), 0);
    CHECK_EQ(parse_copy(w.buf, len, &h0, &copy0), 0);
    CHECK(h.tagged && !h0.tagged);
    CHECK_EQ(h.len, h0.len);
    CHECK_EQ(h.seq, h0.seq);
    CHECK(memcmp(h.payload, h0.payload, h.len) == 0);
    struct recs r = { 0 };
    struct pstr_batch b;
    CHECK_EQ(pstr_batch_parse(&h, &b, take_rec, &r), 0);
    CHECK_EQ(r.n, 3);
    free(copy);
    free(copy0);
    CHECK(pstr_verify(&k, d, n));
    CHECK(!pstr_verify(&k_epoch, d, n));
    CHECK(!pstr_verify(&k_key, d, n));
    for (size_t i = 0; i < n; i++) {
        d[i] ^= 0x01;
        CHECK(!pstr_verify(&k, d, n));
        d[i] ^= 0x01;
    }
    CHECK(!pstr_verify(&k, d, n - 1));          /* a byte short */
    CHECK(!pstr_verify(&k, d, PSTR_TAG_LEN));   /* shorter than a header and tag */
    /* The flag cleared: the same bytes are no longer a tagged datagram. */
    d[28] = 0;
    CHECK(!pstr_verify(&k, d, n));
    CHECK_EQ(parse_all(d, n), PSTR_ELEN);
}

/* The largest datagram, tagged, is within one frame and parses. */
TEST(stream_tag_on_the_largest_datagram)
{
    struct pstr_writer w;
    pstr_begin(&w, PSTR_BATCH, 0, 1, 2, 3);
    struct pstr_batch bh = { 0, 0, 0 };
    pstr_batch_head(&w, &bh);
    struct pstr_record r1 = rec(5, 1, 0);
    while (pstr_add_record(&w, &r1))            /* as many as fit */
        ;
    size_t len = pstr_finish(&w);
    CHECK(len > PSTR_DGRAM_MAX - 16);
    uint8_t d[PSTR_TAGGED_MAX];
    memcpy(d, w.buf, len);
    static struct pstr_tag_key k;
    keyed(&k, tkey, 7);
    size_t n = pstr_seal(&k, d, len);
    CHECK(n <= PSTR_TAGGED_MAX && n <= 1472);
    struct pstr_hdr h;
    uint8_t *copy;
    CHECK_EQ(parse_copy(d, n, &h, &copy), 0);
    CHECK(h.tagged);
    free(copy);
    CHECK(pstr_verify(&k, d, n));
}
