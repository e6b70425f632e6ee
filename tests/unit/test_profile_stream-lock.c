// LINK: uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c lib/sha256.c
/* tests/unit/test_profile_stream-lock.c: lock records (kind 3) in the
 * profile stream (uapi/profile_stream.h): the encoder's bytes, the round
 * trip beside the other kinds, the encoder's refusals, and the parser's
 * refusal of every bad field and every truncation. Each parse runs over a
 * heap copy of exactly the datagram, so ASan sees any read past it. */
#include "test.h"
#include "batch_fixture.h"
#include "uapi/byteorder.h"
#include "uapi/profile_stream.h"

static struct pstr_record lock_rec(uint32_t pid, uint8_t depth, const char *name)
{
    struct pstr_record r = { .pid = pid, .depth = depth, .kind = PSTR_KIND_LOCK,
                             .weight = 1234567, .waits = 42, .lkind = PSTR_LOCK_MUTEX };
    for (unsigned i = 0; i < depth; i++)
        r.frames[i] = 0xffffffff80200000ull + pid * 0x100 + i;
    snprintf(r.name, sizeof r.name, "%s", name);
    return r;
}

/* A batch of a CPU sample, a lock record, and a spin lock without a name. */
static size_t lock_batch(struct pstr_writer *w, size_t *lock_at)
{
    pstr_begin(w, PSTR_BATCH, 1, 9, 0, 5);
    struct pstr_batch b = { 0 };
    pstr_batch_head(w, &b);
    struct pstr_record cpu = { .pid = 1, .depth = 2, .frames = { 0x10, 0x20 } };
    CHECK(pstr_add_record(w, &cpu));
    *lock_at = w->len;
    struct pstr_record l = lock_rec(3, 4, "runq");
    CHECK(pstr_add_record(w, &l));
    struct pstr_record s = lock_rec(4, 1, "");
    s.lkind = PSTR_LOCK_SPIN;
    s.waits = 0xffffffffu;
    s.weight = 0xfedcba9876543210ull;
    CHECK(pstr_add_record(w, &s));
    return pstr_finish(w);
}

TEST(stream_lock_bytes_and_round_trip)
{
    struct pstr_writer w;
    size_t at;
    size_t len = lock_batch(&w, &at);
    const uint8_t *p = w.buf + at;
    CHECK_EQ(p[5], PSTR_REC_WEIGHT | PSTR_REC_LOCK);
    CHECK_EQ(p[6], PSTR_KIND_LOCK);
    CHECK_EQ(p[7], 0);                              /* no tail */
    CHECK_EQ(get_be64(p + 8), 1234567);
    CHECK_EQ(get_be32(p + 16), 42);
    CHECK_EQ(p[20], PSTR_LOCK_MUTEX);
    CHECK_EQ(p[21], 4);
    CHECK(memcmp(p + 24, "runq", 4) == 0);
    CHECK_EQ(get_be64(p + 28), 0xffffffff80200300ull);
    struct recs r = { 0 };
    CHECK_EQ(parse_batch_copy(w.buf, len, &r), 0);
    CHECK_EQ(r.n, 3);
    CHECK_EQ(r.r[0].kind, PSTR_KIND_CPU);
    CHECK_EQ(r.r[0].waits, 0);
    CHECK_EQ(r.r[0].lkind, 0);
    CHECK_EQ(r.r[1].kind, PSTR_KIND_LOCK);
    CHECK_EQ(r.r[1].pid, 3);
    CHECK_EQ(r.r[1].depth, 4);
    CHECK_EQ(r.r[1].weight, 1234567);
    CHECK_EQ(r.r[1].waits, 42);
    CHECK_EQ(r.r[1].lkind, PSTR_LOCK_MUTEX);
    CHECK(strcmp(r.r[1].name, "runq") == 0);
    CHECK_EQ(r.r[1].why, 0);
    CHECK_EQ(r.r[1].size, 0);
    for (unsigned i = 0; i < 4; i++)
        CHECK_EQ(r.r[1].frames[i], 0xffffffff80200300ull + i);
    CHECK_EQ(r.r[1].frames[4], 0);
    CHECK_EQ(r.r[2].lkind, PSTR_LOCK_SPIN);
    CHECK_EQ(r.r[2].waits, 0xffffffffu);
    CHECK_EQ(r.r[2].weight, 0xfedcba9876543210ull);
    CHECK(strcmp(r.r[2].name, "") == 0);
    /* Every truncation of the datagram is refused, none read past it. */
    for (size_t n = 0; n < len; n++) {
        struct recs t = { 0 };
        CHECK(parse_batch_copy(w.buf, n, &t) < 0);
    }
}

TEST(stream_lock_encoder_refuses)
{
    struct pstr_writer w;
    pstr_begin(&w, PSTR_BATCH, 0, 1, 0, 0);
    struct pstr_batch b = { 0 };
    pstr_batch_head(&w, &b);
    size_t len0 = w.len;
    struct pstr_record bad[6];
    for (unsigned i = 0; i < 6; i++)
        bad[i] = lock_rec(2, 2, "m");
    bad[0].waits = 0;                       /* a delay of no wait */
    bad[1].lkind = 0;                       /* no lock kind */
    bad[2].lkind = PSTR_LOCK_MAX + 1;
    snprintf(bad[3].name, sizeof bad[3].name, "a;b");   /* a field separator */
    bad[4].why = PSTR_WHY_MUTEX;            /* an off-CPU part on a lock record */
    bad[5].weight = 0;
    for (unsigned i = 0; i < 6; i++)
        CHECK(!pstr_add_record(&w, &bad[i]));
    CHECK_EQ(w.len, len0);
    CHECK_EQ(w.count, 0);
    /* A full-length name is taken whole. */
    struct pstr_record l = lock_rec(2, PSTR_FRAMES, "");
    memset(l.name, 'n', PSTR_NAME_MAX);
    l.name[PSTR_NAME_MAX] = 0;
    CHECK(pstr_add_record(&w, &l));
    CHECK_EQ(w.len - len0, PSTR_REC_MAX_LOCK);
}

TEST(stream_lock_parser_refuses)
{
    struct pstr_writer w;
    size_t at;
    size_t len = lock_batch(&w, &at);
    struct {
        size_t off;
        uint8_t val;
        int want;
    } cases[] = {
        { 5, PSTR_REC_WEIGHT, PSTR_EFIELD },                    /* kind lock, no lock part */
        { 5, PSTR_REC_WEIGHT | PSTR_REC_LOCK | PSTR_REC_OFF, PSTR_EFIELD },
        { 6, PSTR_KIND_HEAP, PSTR_EFIELD },                     /* a lock part on heap */
        { 7, 1, PSTR_EFIELD },                                  /* a tail */
        { 16 + 3, 0, PSTR_EFIELD },                             /* waits 0 (low byte of 42) */
        { 20, 0, PSTR_EFIELD },                                 /* no lock kind */
        { 20, PSTR_LOCK_MAX + 1, PSTR_EFIELD },
        { 21, PSTR_NAME_MAX + 1, PSTR_EFIELD },
        { 22, 1, PSTR_ERESERVED },
        { 23, 1, PSTR_ERESERVED },
        { 24, ':', PSTR_EFIELD },                               /* a name's separator */
        { 24, ' ', PSTR_EFIELD },
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t d[PSTR_DGRAM_MAX];
        memcpy(d, w.buf, len);
        d[at + cases[i].off] = cases[i].val;
        struct recs r = { 0 };
        CHECK_EQ(parse_batch_copy(d, len, &r), cases[i].want);
    }
    /* A longer name than the record holds runs past it: short, or the
     * frames misread as a name and refused, never a read past the end. */
    uint8_t d[PSTR_DGRAM_MAX];
    memcpy(d, w.buf, len);
    d[at + 21] = PSTR_NAME_MAX;
    struct recs r = { 0 };
    CHECK(parse_batch_copy(d, len, &r) < 0);
}

