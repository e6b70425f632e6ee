// LINK: uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c lib/sha256.c
/* tests/unit/test_profile_stream-trace.c: trace records (kind 4) in the
 * profile stream (uapi/profile_stream.h): the encoder's bytes, the round
 * trip of each event, the encoder's refusals of fields an event does not
 * have, and the parser's refusal of every bad field and every
 * truncation. Each parse runs over a heap copy of exactly the datagram,
 * so ASan sees any read past it. */
#include "test.h"
#include "batch_fixture.h"
#include "uapi/byteorder.h"
#include "uapi/profile_stream.h"

static struct pstr_record ev(uint8_t tev, uint32_t pid, uint64_t ns)
{
    struct pstr_record r = { .pid = pid, .kind = PSTR_KIND_TRACE, .weight = ns, .tev = tev };
    return r;
}

/* A switch into a wait queue, a wake in an interrupt, the interrupt's
 * slice, and a sample: the four events, in one batch. */
static size_t trace_batch(struct pstr_writer *w, size_t *switch_at)
{
    pstr_begin(w, PSTR_BATCH, 1, 9, 0, 5);
    struct pstr_batch b = { 0 };
    pstr_batch_head(w, &b);
    struct pstr_record s = ev(PSTR_TEV_SWITCH, 7, 1000);
    s.targ = PSTR_LEFT_WAITQ;
    s.tother = 0;                           /* idle comes in */
    snprintf(s.name, sizeof s.name, "burn-pp");
    *switch_at = w->len;
    CHECK(pstr_add_record(w, &s));
    struct pstr_record k = ev(PSTR_TEV_WAKE, 0, 2000);
    k.tother = 7;
    k.twcpu = 1;
    k.targ = 2;                             /* in a device's interrupt */
    k.tvec = 43;
    snprintf(k.name, sizeof k.name, "virtio-net");
    CHECK(pstr_add_record(w, &k));
    struct pstr_record i = ev(PSTR_TEV_IRQ, 0, 1900);
    i.targ = 2;
    i.tvec = 43;
    i.tdur = 0xffffffffu;
    snprintf(i.name, sizeof i.name, "virtio-net");
    CHECK(pstr_add_record(w, &i));
    struct pstr_record p = ev(PSTR_TEV_SAMPLE, 7, 0xfedcba9876543210ull);
    p.depth = 3;
    p.flags = PSTR_REC_TICK;
    for (unsigned j = 0; j < 3; j++)
        p.frames[j] = 0xffffffff80100000ull + j;
    CHECK(pstr_add_record(w, &p));
    return pstr_finish(w);
}

TEST(stream_trace_bytes_and_round_trip)
{
    struct pstr_writer w;
    size_t at;
    size_t len = trace_batch(&w, &at);
    const uint8_t *p = w.buf + at;
    CHECK_EQ(get_be32(p), 7);
    CHECK_EQ(p[4], 0);                              /* no frames */
    CHECK_EQ(p[5], PSTR_REC_WEIGHT | PSTR_REC_TRACE);
    CHECK_EQ(p[6], PSTR_KIND_TRACE);
    CHECK_EQ(p[7], 0);
    CHECK_EQ(get_be64(p + 8), 1000);
    CHECK_EQ(p[16], PSTR_TEV_SWITCH);
    CHECK_EQ(p[17], PSTR_LEFT_WAITQ);
    CHECK_EQ(p[18], 7);
    CHECK_EQ(p[19], 0);
    CHECK_EQ(get_be32(p + 20), 0);
    CHECK(memcmp(p + 32, "burn-pp", 7) == 0);
    struct recs r = { 0 };
    CHECK_EQ(parse_batch_copy(w.buf, len, &r), 0);
    CHECK_EQ(r.n, 4);
    CHECK_EQ(r.r[0].tev, PSTR_TEV_SWITCH);
    CHECK_EQ(r.r[0].pid, 7);
    CHECK_EQ(r.r[0].depth, 0);
    CHECK_EQ(r.r[0].weight, 1000);
    CHECK_EQ(r.r[0].targ, PSTR_LEFT_WAITQ);
    CHECK_STR(r.r[0].name, "burn-pp");
    CHECK_EQ(r.r[1].tev, PSTR_TEV_WAKE);
    CHECK_EQ(r.r[1].tother, 7);
    CHECK_EQ(r.r[1].twcpu, 1);
    CHECK_EQ(r.r[1].tvec, 43);
    CHECK_STR(r.r[1].name, "virtio-net");
    CHECK_EQ(r.r[2].tev, PSTR_TEV_IRQ);
    CHECK_EQ(r.r[2].tdur, 0xffffffffu);
    CHECK_EQ(r.r[2].weight, 1900);
    CHECK_EQ(r.r[3].tev, PSTR_TEV_SAMPLE);
    CHECK_EQ(r.r[3].depth, 3);
    CHECK_EQ(r.r[3].flags, PSTR_REC_TICK);
    CHECK_EQ(r.r[3].weight, 0xfedcba9876543210ull);
    CHECK_EQ(r.r[3].frames[2], 0xffffffff80100002ull);
    CHECK_EQ(r.r[3].name[0], 0);
    for (size_t n = 0; n < len; n++) {
        struct recs t = { 0 };
        CHECK(parse_batch_copy(w.buf, n, &t) < 0);
    }
}

TEST(stream_trace_encoder_refuses_fields_an_event_has_not)
{
    struct pstr_writer w;
    pstr_begin(&w, PSTR_BATCH, 0, 1, 0, 0);
    struct pstr_batch b = { 0 };
    pstr_batch_head(&w, &b);
    size_t len0 = w.len;
    struct pstr_record bad[12];
    for (unsigned i = 0; i < 12; i++)
        bad[i] = ev(PSTR_TEV_SWITCH, 3, 10);
    bad[0].tev = 0;
    bad[1].tev = PSTR_TEV_MAX + 1;
    bad[2].targ = PSTR_LEFT_MAX + 1;
    bad[3].targ = 4;                        /* preempted: no queue to name */
    snprintf(bad[3].name, sizeof bad[3].name, "q");
    bad[4].tvec = 5;                        /* a switch has no vector */
    bad[5].depth = 1;                       /* nor frames */
    bad[6].tev = PSTR_TEV_SAMPLE;           /* a sample has frames */
    bad[7].tev = PSTR_TEV_IRQ;              /* an irq has a class */
    bad[8].tev = PSTR_TEV_WAKE;             /* a wake in task context: no vector */
    bad[8].tvec = 3;
    bad[9].tev = PSTR_TEV_IRQ;
    bad[9].targ = 1;
    bad[9].tvec = PSTR_VEC_MAX + 1;
    bad[10].weight = 0;
    bad[11].why = PSTR_WHY_SLEEP;           /* an off-CPU part */
    for (unsigned i = 0; i < 12; i++)
        CHECK(!pstr_add_record(&w, &bad[i]));
    CHECK_EQ(w.len, len0);
    CHECK_EQ(w.count, 0);
    struct pstr_record full = ev(PSTR_TEV_SAMPLE, 2, 5);
    full.depth = PSTR_FRAMES;
    CHECK(pstr_add_record(&w, &full));
    struct pstr_record named = ev(PSTR_TEV_IRQ, 2, 5);
    named.targ = 3;
    memset(named.name, 'n', PSTR_NAME_MAX);
    CHECK(pstr_add_record(&w, &named));
    CHECK_EQ(w.len - len0, PSTR_REC_MAX_TRACE - PSTR_NAME_MAX + PSTR_REC_MAX_TRACE -
                           8 * PSTR_FRAMES);
}

TEST(stream_trace_parser_refuses)
{
    struct pstr_writer w;
    size_t at;
    size_t len = trace_batch(&w, &at);
    struct {
        size_t off;
        uint8_t val;
        int want;
    } cases[] = {
        { 4, 1, PSTR_EFIELD },                          /* a frame the switch has not */
        { 5, PSTR_REC_WEIGHT, PSTR_EFIELD },            /* kind trace, no trace part */
        { 6, PSTR_KIND_LOCK, PSTR_EFIELD },
        { 7, 1, PSTR_EFIELD },                          /* a tail */
        { 16, 0, PSTR_EFIELD },                         /* no event */
        { 16, PSTR_TEV_MAX + 1, PSTR_EFIELD },
        { 16, PSTR_TEV_SAMPLE, PSTR_EFIELD },           /* a sample of no frames */
        { 17, PSTR_LEFT_MAX + 1, PSTR_EFIELD },
        { 17, 4, PSTR_EFIELD },                         /* preempted, with a name */
        { 19, 1, PSTR_ERESERVED },
        { 25, 1, PSTR_EFIELD },                         /* a switch's vector */
        { 27, 1, PSTR_EFIELD },                         /* its wakee's CPU */
        { 31, 1, PSTR_EFIELD },                         /* its slice */
        { 32, ';', PSTR_EFIELD },
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t d[PSTR_DGRAM_MAX];
        memcpy(d, w.buf, len);
        d[at + cases[i].off] = cases[i].val;
        struct recs r = { 0 };
        CHECK_EQ(parse_batch_copy(d, len, &r), cases[i].want);
    }
}
