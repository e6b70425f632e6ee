// LINK: tools/ingest/stream.c tools/ingest/collect.c tools/ingest/collect_shell.c tools/ingest/collect_index.c tools/common/toolio.c tools/ingest/agg.c tools/model/model.c tools/common/hostaddr.c tools/common/ushell_client.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c uapi/profile_raw.c uapi/udpshell.c uapi/udpshell_auth.c lib/sha256.c uapi/stream_ctl.c
/* tests/unit/test_ingest_stream.c: the host's side of the profile stream:
 * loss accounting (tools/ingest/stream.c) over datagrams built with the
 * uapi encoder: gaps, copies, reordering, the END's totals, an END that
 * never came, kernel drops, a restart; the collector's demultiplexing
 * (tools/ingest/collect.c's sp_collect_datagram: kernels by stream id and
 * address, foreign datagrams, a restart from a kernel's own address);
 * and the raw profile a stream becomes (tools/ingest/agg.c), read back by
 * the strict raw parser. */
#define _GNU_SOURCE
#include "test.h"
#include <arpa/inet.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#include "tools/common/toolio.h"
#include "lib/sha256.h"
#include "tools/ingest/agg.h"
#include "tools/model/model.h"
#include "tools/ingest/collect.h"
#include "tools/ingest/collect_priv.h"
#include "tools/ingest/stream.h"
#include "uapi/byteorder.h"
#include "uapi/profile_raw.h"
#include "uapi/udpshell.h"

#define BID  "0123456789abcdef0123456789abcdef01234567"
#define BID2 "fedcba9876543210fedcba9876543210fedcba98"
#define ID   0x1a2b3c4du

struct dg {
    uint8_t b[PSTR_TAGGED_MAX];
    size_t len;
};

static struct dg meta(uint32_t id, uint32_t seq, const char *bid)
{
    struct pstr_writer w;
    struct pstr_meta m = { .pid = PSTR_PID_ALL, .ms = 0, .period_ns = 10000000, .cpus = 2 };
    snprintf(m.build_id, sizeof m.build_id, "%s", bid);
    snprintf(m.source, sizeof m.source, "tick 100Hz");
    pstr_begin(&w, PSTR_META, 0, id, seq, 1000);
    pstr_meta_head(&w, &m);
    CHECK(pstr_add_task(&w, 7, "burn"));
    CHECK(pstr_add_task(&w, 0, "idle"));
    struct dg d;
    d.len = pstr_finish(&w);
    memcpy(d.b, w.buf, d.len);
    return d;
}

/* count records of cpu numbered from first, each pc = first + i. */
static struct dg batch(uint32_t id, uint32_t seq, uint16_t cpu, uint32_t first,
                       unsigned count, uint32_t drops_total)
{
    struct pstr_writer w;
    struct pstr_batch b = { first, 0, drops_total };
    pstr_begin(&w, PSTR_BATCH, cpu, id, seq, 2000 + seq);
    pstr_batch_head(&w, &b);
    for (unsigned i = 0; i < count; i++) {
        struct pstr_record r = { .pid = 7, .depth = 2, .flags = PSTR_REC_TICK };
        r.frames[0] = 0x1000 + (i % 2);
        r.frames[1] = 0x2005;
        CHECK(pstr_add_record(&w, &r));
    }
    struct dg d;
    d.len = pstr_finish(&w);
    memcpy(d.b, w.buf, d.len);
    return d;
}

/* An END with records and drops for cpus 0 and 1. */
static struct dg end(uint32_t id, uint32_t seq, uint32_t r0, uint32_t r1, uint32_t d0)
{
    struct pstr_writer w;
    pstr_begin(&w, PSTR_END, 0, id, seq, 9000);
    pstr_end_head(&w, PSTR_END_ELAPSED);
    struct pstr_end_cpu c0 = { 0, r0, d0 }, c1 = { 1, r1, 0 };
    CHECK(pstr_add_end_cpu(&w, &c0));
    CHECK(pstr_add_end_cpu(&w, &c1));
    struct dg d;
    d.len = pstr_finish(&w);
    memcpy(d.b, w.buf, d.len);
    return d;
}

static unsigned delivered;

static void count_rec(void *ctx, uint16_t cpu, const struct pstr_record *r)
{
    delivered++;
}

static int take(struct sp_stream *s, const struct dg *d)
{
    struct pstr_hdr h;
    CHECK_EQ(pstr_parse(d->b, d->len, &h), 0);
    return sp_stream_take(s, &h, 100, count_rec, NULL);
}

TEST(in_order_stream_loses_nothing)
{
    struct sp_stream s;
    CHECK_EQ(sp_stream_init(&s, ID), 0);
    delivered = 0;
    struct dg ds[] = {
        meta(ID, 0, BID), batch(ID, 1, 0, 0, 3, 0), batch(ID, 2, 1, 0, 2, 0),
        batch(ID, 3, 0, 3, 2, 0), end(ID, 4, 5, 2, 0),
    };
    for (unsigned i = 0; i < 5; i++)
        CHECK_EQ(take(&s, &ds[i]), SP_STREAM_TAKEN);
    /* The END is sent three times with the same seq: copies, not gaps. */
    CHECK_EQ(take(&s, &ds[4]), SP_STREAM_DUP);
    CHECK_EQ(take(&s, &ds[4]), SP_STREAM_DUP);
    sp_stream_finish(&s);
    CHECK_EQ(s.records, 7);
    CHECK_EQ(delivered, 7);
    CHECK_EQ(s.lost_records, 0);
    CHECK_EQ(s.lost_dgrams, 0);
    CHECK_EQ(s.dups, 2);
    CHECK(s.ended && !s.end_missing);
    CHECK_EQ(s.end_reason, PSTR_END_ELAPSED);
    CHECK_EQ(s.ncpus, 2);
    CHECK_STR(s.meta.build_id, BID);
    CHECK_STR(sp_stream_task(&s, 7), "burn");
    sp_stream_free(&s);
}

TEST(a_lost_batch_is_its_records_and_one_datagram)
{
    struct sp_stream s;
    sp_stream_init(&s, ID);
    struct dg a = meta(ID, 0, BID), b = batch(ID, 1, 0, 0, 3, 0),
              c = batch(ID, 3, 0, 5, 1, 0), e = end(ID, 4, 6, 0, 0);
    take(&s, &a);
    take(&s, &b);
    take(&s, &c);               /* seq 2, records 3 and 4 of cpu 0: lost */
    CHECK_EQ(s.lost_records, 2);
    CHECK_EQ(s.lost_dgrams, 1);
    take(&s, &e);
    CHECK_EQ(s.lost_records, 2);
    CHECK_EQ(s.records, 4);
    sp_stream_free(&s);
}

/* Sequence numbers and each CPU's record indexes are 32 bits and wrap
 * (a 1 kHz CPU in 49 days): across the wrap nothing is lost, a gap is
 * still a gap, and a datagram from half the space ahead is not taken for
 * the newest. The stream is placed just short of the wrap by hand. */
TEST(sequence_and_record_indexes_wrap)
{
    struct sp_stream s;
    sp_stream_init(&s, ID);
    struct dg a = meta(ID, 0xfffffffcu, BID);
    s.seq_next = 0xfffffffcu;
    s.cpus[0].next = 0xfffffffeu;
    CHECK_EQ(take(&s, &a), SP_STREAM_TAKEN);
    struct dg b = batch(ID, 0xfffffffdu, 0, 0xfffffffeu, 2, 0),
              c = batch(ID, 0xfffffffeu, 0, 0, 3, 0),
              d = batch(ID, 0, 0, 3, 1, 0),              /* seq 0xffffffff lost */
              e = batch(ID, 0x80000001u, 0, 4, 1, 0);    /* half the space ahead */
    CHECK_EQ(take(&s, &b), SP_STREAM_TAKEN);
    CHECK_EQ(take(&s, &c), SP_STREAM_TAKEN);
    CHECK_EQ(s.lost_records, 0);
    CHECK_EQ(s.lost_dgrams, 0);
    CHECK_EQ(take(&s, &d), SP_STREAM_TAKEN);
    CHECK_EQ(s.lost_dgrams, 1);
    CHECK_EQ(s.lost_records, 0);
    CHECK_EQ(s.records, 6);
    CHECK_EQ(take(&s, &e), SP_STREAM_LATE);
    CHECK_EQ(s.lost_dgrams, 1);
    CHECK_EQ(s.records, 6);
    sp_stream_free(&s);
}

TEST(reordering_is_no_loss)
{
    struct sp_stream s;
    sp_stream_init(&s, ID);
    struct dg a = meta(ID, 0, BID), b = batch(ID, 1, 0, 0, 3, 0),
              c = batch(ID, 2, 0, 3, 2, 0), d = batch(ID, 3, 0, 5, 1, 0);
    take(&s, &a);
    take(&s, &b);
    CHECK_EQ(take(&s, &d), SP_STREAM_TAKEN);
    CHECK_EQ(s.lost_records, 2);
    CHECK_EQ(s.lost_dgrams, 1);
    CHECK_EQ(take(&s, &c), SP_STREAM_TAKEN);     /* late: fills the gap */
    CHECK_EQ(s.lost_records, 0);
    CHECK_EQ(s.lost_dgrams, 0);
    CHECK_EQ(s.records, 6);
    CHECK_EQ(take(&s, &c), SP_STREAM_DUP);       /* and once only */
    CHECK_EQ(s.records, 6);
    sp_stream_free(&s);
}

TEST(the_end_counts_records_after_the_last_batch)
{
    struct sp_stream s;
    sp_stream_init(&s, ID);
    struct dg a = meta(ID, 0, BID), b = batch(ID, 1, 0, 0, 5, 0),
              late = batch(ID, 2, 0, 5, 3, 0), e = end(ID, 3, 8, 4, 0);
    take(&s, &a);
    take(&s, &b);
    take(&s, &e);               /* cpu 0 sent 8, cpu 1 sent 4: 7 lost, 1 datagram */
    CHECK_EQ(s.lost_records, 7);
    CHECK_EQ(s.lost_dgrams, 1);
    CHECK_EQ(take(&s, &late), SP_STREAM_TAKEN);  /* overtaken by the END */
    CHECK_EQ(s.lost_records, 4);
    CHECK_EQ(s.lost_dgrams, 0);
    /* Numbered after the END: no stream this one knows. */
    struct dg after = batch(ID, 9, 0, 8, 1, 0);
    CHECK_EQ(take(&s, &after), SP_STREAM_AFTER_END);
    CHECK_EQ(s.records, 8);
    sp_stream_free(&s);
}

TEST(a_lost_end_is_said_and_the_gaps_still_count)
{
    struct sp_stream s;
    sp_stream_init(&s, ID);
    struct dg a = meta(ID, 0, BID), b = batch(ID, 1, 0, 0, 5, 0),
              c = batch(ID, 3, 0, 9, 1, 0);
    take(&s, &a);
    take(&s, &b);
    take(&s, &c);
    sp_stream_finish(&s);
    CHECK(!s.ended && s.end_missing);
    CHECK_EQ(s.lost_records, 4);
    CHECK_EQ(s.lost_dgrams, 1);
    sp_stream_free(&s);
}

TEST(kernel_drops_survive_a_lost_batch)
{
    struct sp_stream s;
    sp_stream_init(&s, ID);
    struct dg a = batch(ID, 0, 0, 0, 1, 4), c = batch(ID, 2, 0, 2, 1, 9),
              d = batch(ID, 3, 1, 0, 1, 0), e = end(ID, 4, 3, 1, 10);
    take(&s, &a);
    take(&s, &c);               /* the batch with drops 4 -> 6 was lost */
    take(&s, &d);
    CHECK_EQ(sp_stream_drops(&s), 9);
    take(&s, &e);
    CHECK_EQ(sp_stream_drops(&s), 10);
    CHECK(!s.have_meta);        /* a META lost: learnt late, or never */
    sp_stream_free(&s);
}

/* Another build id under the stream's id is not taken, and said; whether
 * the kernel restarted is the collector's to find out (its shell). */
TEST(a_meta_with_another_build_id_is_not_taken)
{
    struct sp_stream s;
    sp_stream_init(&s, ID);
    struct dg a = meta(ID, 0, BID), b = batch(ID, 1, 0, 0, 2, 0),
              m2 = meta(ID, 2, BID2), c = batch(ID, 2, 0, 2, 2, 0);
    take(&s, &a);
    take(&s, &b);
    CHECK_EQ(take(&s, &m2), SP_STREAM_OTHER_BUILD);
    CHECK_EQ(s.other_builds, 1);
    CHECK_STR(s.other_build_id, BID2);
    CHECK_EQ(take(&s, &c), SP_STREAM_TAKEN);      /* its seq was not used up */
    CHECK_EQ(s.records, 4);
    CHECK_EQ(s.lost_dgrams, 0);
    CHECK_STR(s.meta.build_id, BID);
    sp_stream_free(&s);
}

/* Issue 26: a seq 2^31 (or a window) ahead is refused, counted, and
 * every real datagram after it is still taken; so is a record index far
 * past what its CPU could have lost. */
TEST(a_seq_or_index_far_ahead_is_refused)
{
    struct sp_stream s;
    sp_stream_init(&s, ID);
    delivered = 0;
    struct dg a = meta(ID, 0, BID), b = batch(ID, 1, 0, 0, 2, 0),
              f1 = batch(ID, 2u + (1u << 31), 0, 2, 2, 0),
              f2 = batch(ID, 2 + SP_STREAM_SEQ_WIN, 0, 2, 2, 0),
              f3 = batch(ID, 0x7fffffffu, 0, 2, 2, 0),
              f4 = batch(ID, 2, 0, 2 + SP_STREAM_REC_JUMP, 2, 0),
              fe = end(ID, 3, 2 + SP_STREAM_REC_JUMP, 0, 0),
              c = batch(ID, 2, 0, 2, 2, 0), d = batch(ID, 3, 1, 0, 1, 0), e = end(ID, 4, 4, 1, 0);
    take(&s, &a);
    take(&s, &b);
    CHECK_EQ(take(&s, &f1), SP_STREAM_LATE);      /* half the space ahead: behind */
    CHECK_EQ(take(&s, &f2), SP_STREAM_FAR);
    CHECK_EQ(take(&s, &f3), SP_STREAM_FAR);
    CHECK_EQ(take(&s, &f4), SP_STREAM_FAR);       /* a right seq, an index far ahead */
    CHECK_EQ(take(&s, &fe), SP_STREAM_FAR);
    CHECK_EQ(s.far, 4);
    CHECK_EQ(s.late, 1);
    CHECK_EQ(take(&s, &c), SP_STREAM_TAKEN);
    CHECK_EQ(take(&s, &d), SP_STREAM_TAKEN);
    CHECK_EQ(take(&s, &e), SP_STREAM_TAKEN);
    sp_stream_finish(&s);
    CHECK_EQ(delivered, 5);
    CHECK_EQ(s.records, 5);
    CHECK_EQ(s.lost_dgrams, 0);
    CHECK_EQ(s.lost_records, 0);
    CHECK(s.ended && !s.end_missing);
    sp_stream_free(&s);
}

/* Issue 35: two forged empty batches without a key, each 65535 seqs
 * ahead (just inside the window): believed, they would count 131070
 * datagrams lost and make the real ones after them late. A jump is
 * believed only as far as the budget (SP_STREAM_JUMP_MAX, refilled
 * SP_STREAM_JUMP_RATE a second): both are refused, the real stream is
 * taken whole; a real gap within the budget still counts, and the budget
 * spent comes back with time. A verified stream (-k) has no budget. */
static int take_at(struct sp_stream *s, const struct dg *d, uint64_t now_ms)
{
    struct pstr_hdr h;
    CHECK_EQ(pstr_parse(d->b, d->len, &h), 0);
    return sp_stream_take(s, &h, now_ms, count_rec, NULL);
}

TEST(a_seq_jump_is_believed_only_as_far_as_the_budget)
{
    struct sp_stream s;
    sp_stream_init(&s, ID);
    delivered = 0;
    struct dg a = meta(ID, 0, BID), b = batch(ID, 1, 0, 0, 2, 0),
              f1 = batch(ID, 2 + 65535, 0, 2, 0, 0), f2 = batch(ID, 2 + 2 * 65535, 0, 2, 0, 0);
    CHECK_EQ(take_at(&s, &a, 1000), SP_STREAM_TAKEN);
    CHECK_EQ(take_at(&s, &b, 1000), SP_STREAM_TAKEN);
    CHECK_EQ(take_at(&s, &f1, 1001), SP_STREAM_FAR);
    CHECK_EQ(take_at(&s, &f2, 1002), SP_STREAM_FAR);
    unsigned taken = 0;
    for (uint32_t q = 2; q < 1002; q++) {
        struct dg d = batch(ID, q, 0, 2 + (q - 2), 1, 0);
        taken += take_at(&s, &d, 1003 + q) == SP_STREAM_TAKEN;
    }
    CHECK_EQ(taken, 1000);
    CHECK_EQ(s.late, 0);
    CHECK_EQ(s.far, 2);
    CHECK_EQ(s.lost_dgrams, 0);
    CHECK_EQ(delivered, 1002);
    /* A real gap of 5000 is believed; a second at once is past what is
     * left (8192 - 5000), and taken once the budget has come back. */
    struct dg g1 = batch(ID, 1002 + 5000, 0, 1002, 1, 0),
              g2 = batch(ID, 6003 + 5000, 0, 1003, 1, 0);
    CHECK_EQ(take_at(&s, &g1, 3000), SP_STREAM_TAKEN);
    CHECK_EQ(s.lost_dgrams, 5000);
    CHECK_EQ(take_at(&s, &g2, 3000), SP_STREAM_FAR);
    CHECK_EQ(take_at(&s, &g2, 5000), SP_STREAM_TAKEN);
    CHECK_EQ(s.lost_dgrams, 10000);
    sp_stream_free(&s);
    /* A stream whose every datagram's tag was verified (-k): its jumps
     * are real loss, believed whole. */
    sp_stream_init(&s, ID);
    s.verified = true;
    CHECK_EQ(take_at(&s, &a, 1000), SP_STREAM_TAKEN);
    CHECK_EQ(take_at(&s, &b, 1000), SP_STREAM_TAKEN);
    CHECK_EQ(take_at(&s, &f1, 1001), SP_STREAM_TAKEN);
    CHECK_EQ(s.lost_dgrams, 65535);
    sp_stream_free(&s);
}

/* A seq ahead but within the window is taken (a real gap looks the
 * same), and real datagrams fill what it skipped; the END then says no
 * real one is numbered past it: nothing is counted lost there. */
TEST(gaps_past_the_end_are_not_lost)
{
    struct sp_stream s;
    sp_stream_init(&s, ID);
    struct dg a = meta(ID, 0, BID), f = batch(ID, 1000, 9, 0, 1, 0),
              b = batch(ID, 1, 0, 0, 2, 0), c = batch(ID, 3, 0, 3, 1, 0), e = end(ID, 4, 4, 0, 0);
    take(&s, &a);
    CHECK_EQ(take(&s, &f), SP_STREAM_TAKEN);
    CHECK_EQ(s.lost_dgrams, 999);
    take(&s, &b);
    take(&s, &c);                /* seq 2 (record 2) lost on the wire */
    CHECK_EQ(take(&s, &e), SP_STREAM_TAKEN);
    sp_stream_finish(&s);
    CHECK_EQ(s.lost_dgrams, 1);
    CHECK_EQ(s.lost_records, 1);
    sp_stream_free(&s);
}

/* Issue 26: a record whose pid the raw profile cannot carry costs that
 * record alone: counted, not delivered; its batch's others are. */
TEST(a_bad_record_costs_that_record)
{
    struct sp_stream s;
    sp_stream_init(&s, ID);
    delivered = 0;
    struct pstr_writer w;
    struct pstr_batch bh = { 0, 0, 0 };
    pstr_begin(&w, PSTR_BATCH, 0, ID, 1, 2000);
    pstr_batch_head(&w, &bh);
    uint32_t pids[3] = { 7, 0x80000000u, 0xffffffffu };
    for (unsigned i = 0; i < 3; i++) {
        struct pstr_record r = { .pid = pids[i], .depth = 1, .frames = { 0x1000 } };
        CHECK(pstr_add_record(&w, &r));
    }
    struct dg b = { .len = pstr_finish(&w) };
    memcpy(b.b, w.buf, b.len);
    struct dg a = meta(ID, 0, BID), e = end(ID, 2, 3, 0, 0);
    take(&s, &a);
    CHECK_EQ(take(&s, &b), SP_STREAM_TAKEN);
    take(&s, &e);
    CHECK_EQ(delivered, 1);
    CHECK_EQ(s.bad_records, 2);
    CHECK_EQ(s.records, 3);     /* arrived: the wire lost none */
    CHECK_EQ(s.lost_records, 0);
    sp_stream_free(&s);
}

/* A META whose source the raw profile's header could not carry (it ends
 * the source at " samples=") is refused, counted, and the next is taken. */
TEST(a_meta_the_raw_header_cannot_carry_is_refused)
{
    struct sp_stream s;
    sp_stream_init(&s, ID);
    struct pstr_writer w;
    struct pstr_meta m = { .pid = PSTR_PID_ALL, .period_ns = 10000000, .cpus = 1 };
    snprintf(m.build_id, sizeof m.build_id, "%s", BID);
    snprintf(m.source, sizeof m.source, "tick samples=5");
    pstr_begin(&w, PSTR_META, 0, ID, 0, 1000);
    pstr_meta_head(&w, &m);
    struct dg bad = { .len = pstr_finish(&w) };
    memcpy(bad.b, w.buf, bad.len);
    struct dg good = meta(ID, 0, BID);
    CHECK_EQ(take(&s, &bad), SP_STREAM_MALFORMED);
    CHECK(!s.have_meta);
    CHECK_EQ(take(&s, &good), SP_STREAM_TAKEN);
    CHECK_STR(s.meta.source, "tick 100Hz");
    sp_stream_free(&s);
}

TEST(a_malformed_payload_is_counted_not_taken)
{
    struct sp_stream s;
    sp_stream_init(&s, ID);
    struct dg b = batch(ID, 0, 0, 0, 2, 0);
    struct pstr_hdr h;
    CHECK_EQ(pstr_parse(b.b, b.len, &h), 0);
    h.count = 3;                /* more than the payload holds */
    CHECK_EQ(sp_stream_take(&s, &h, 0, count_rec, NULL), SP_STREAM_MALFORMED);
    CHECK_EQ(s.malformed, 1);
    CHECK_EQ(s.records, 0);
    CHECK_EQ(s.seq_next, 0);    /* its seq is still to come */
    sp_stream_free(&s);
}

/* ---- the collector's demultiplexing ---------------------------------- */

struct got {
    unsigned n[3];
};

static void on_record(void *ctx, unsigned kernel, uint16_t cpu, const struct pstr_record *r)
{
    struct got *g = ctx;
    if (kernel < 3)
        g->n[kernel]++;
}

static struct sockaddr_in addr(const char *ip, uint16_t port)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
    inet_pton(AF_INET, ip, &a.sin_addr);
    return a;
}

/* The shell requests the collector sends, by kernel: the last one's text. */
static unsigned sent_n[2];
static char sent_cmd[2][64];

static int capture_send(void *ctx, unsigned k, const void *d, size_t n)
{
    struct ushp_hdr h;
    const uint8_t *pl;
    CHECK_EQ(ushp_parse(d, n, &h, &pl), 0);
    if (k < 2) {
        sent_n[k]++;
        snprintf(sent_cmd[k], sizeof sent_cmd[k], "%.*s", (int)h.len, (const char *)pl);
    }
    return 0;
}

/* Kernel k's shell answers its last request with text (one chunk). */
static void shell_says(struct sp_collect *c, unsigned k, const char *text, uint64_t now)
{
    uint8_t d[USHP_DGRAM_MAX];
    size_t n = strlen(text);
    put_be32(d + USHP_OFF_MAGIC, USHP_MAGIC);
    put_be32(d + USHP_OFF_SEQ, c->k[k].c.seq);
    put_be16(d + USHP_OFF_CHUNK, 0);
    put_be16(d + USHP_OFF_FLAGS, USHP_FLAG_LAST | USHP_FLAG_REPLY);
    put_be16(d + USHP_OFF_LEN, (uint16_t)n);
    put_be16(d + USHP_OFF_RESERVED, 0);
    memcpy(d + USHP_HDR_LEN, text, n);
    sp_collect_input(c, &c->k[k].shell, d, USHP_HDR_LEN + n, now);
}

/* Two kernels under QEMU's user network: both shells on 127.0.0.1, both
 * streams from 127.0.0.1, told apart by their stream ids. */
static void two_kernels(struct sp_collect *c, struct got *g, FILE *err)
{
    memset(c, 0, sizeof *c);
    c->o = (struct sp_collect_opts){ .prog = "sonde-prof", .err = err, .silent_ms = 3000 };
    c->fd = -1;
    c->send = capture_send;
    c->n = 2;
    c->k = calloc(2, sizeof *c->k);
    c->fn = on_record;
    c->ctx = g;
    memset(sent_n, 0, sizeof sent_n);
    for (unsigned i = 0; i < 2; i++) {
        struct sp_collect_kernel *k = &c->k[i];
        sp_stream_init(&k->s, ID + i);
        k->owner = c;
        k->c.seq = 100 * i;
        k->state = SP_COLLECT_STREAMING;
        k->shell = addr("127.0.0.1", 9001 + i);
        snprintf(k->name, sizeof k->name, "127.0.0.1:%u", 9001 + i);
    }
}

TEST(datagrams_go_to_their_kernel_by_stream_id_and_address)
{
    struct sp_collect c;
    struct got g = { { 0 } };
    char *msgs = NULL;
    size_t mlen = 0;
    FILE *err = open_memstream(&msgs, &mlen);
    two_kernels(&c, &g, err);
    struct sockaddr_in s1 = addr("127.0.0.1", 40001), s2 = addr("127.0.0.1", 40002),
                       far = addr("10.9.9.9", 40001);
    struct dg a = batch(ID, 0, 0, 0, 3, 0), b = batch(ID + 1, 0, 0, 0, 2, 0),
              x = batch(0x77777777u, 0, 0, 0, 4, 0);
    sp_collect_datagram(&c, &s1, a.b, a.len, 10);
    sp_collect_datagram(&c, &s2, b.b, b.len, 10);
    CHECK_EQ(g.n[0], 3);
    CHECK_EQ(g.n[1], 2);
    /* Another stream id, a right id from another host, and bytes that
     * are no stream at all: counted, never taken. */
    sp_collect_datagram(&c, &s1, x.b, x.len, 20);
    sp_collect_datagram(&c, &s1, x.b, x.len, 20);
    struct dg a2 = batch(ID, 1, 0, 3, 1, 0);
    sp_collect_datagram(&c, &far, a2.b, a2.len, 20);
    sp_collect_datagram(&c, &s1, "hello", 5, 20);
    CHECK_EQ(c.foreign, 4);
    CHECK_EQ(g.n[0], 3);
    CHECK_EQ(c.k[0].s.records, 3);
    /* x came from where kernel 0's stream comes from: kernel 0 may have
     * started another stream. Its shell is asked, once, and says its
     * stream is the one running: x was forged, and nothing changes. */
    CHECK_EQ(c.k[0].state, SP_COLLECT_STREAMING);
    CHECK_EQ(sent_n[0], 1);
    CHECK_STR(sent_cmd[0], "profile status");
    CHECK_EQ(c.k[0].forged, 2);
    shell_says(&c, 0, "stream v=1 op=status result=ok state=streaming id=0x1a2b3c4d "
               "to=10.0.2.2:40000 age=900 confirmed=1 ka=10 records=3 datagrams=2 drops=0 "
               "sendfail=0 karefused=0\n"
               "profile: streaming id 0x1a2b3c4d to 10.0.2.2:40000, 900 ms, last "
               "keep-alive 10 ms ago: 3 records in 2 datagrams, 0 dropped, 0 send failures, "
               "0 keep-alives refused\n", 25);
    CHECK_EQ(c.k[0].state, SP_COLLECT_STREAMING);
    CHECK(!c.k[0].probe.on);
    /* Asked again only a second later. */
    sp_collect_datagram(&c, &s1, x.b, x.len, 30);
    CHECK_EQ(sent_n[0], 1);
    sp_collect_datagram(&c, &s1, x.b, x.len, 25 + SP_COLLECT_PROBE_GAP_MS);
    CHECK_EQ(sent_n[0], 2);
    CHECK_EQ(c.k[0].forged, 4);
    /* A reply to another request, or from elsewhere, is no answer. */
    shell_says(&c, 1, "stream v=1 op=status result=ok state=none\n"
               "profile: no stream since boot\n", 1030);
    CHECK_EQ(c.k[0].state, SP_COLLECT_STREAMING);
    /* This time it says there is none: the kernel restarted; the old
     * stream is kept and ends there. */
    shell_says(&c, 0, "stream v=1 op=status result=ok state=none\n"
               "profile: no stream since boot\n", 1040);
    CHECK_EQ(c.k[0].forged, 3);
    fflush(err);
    CHECK_EQ(c.k[0].state, SP_COLLECT_RESTARTED);
    CHECK(strstr(msgs, "kernel 127.0.0.1:9001 restarted") != NULL);
    CHECK(strstr(c.k[0].note, "new stream 0x77777777") != NULL);
    CHECK_EQ(c.k[1].state, SP_COLLECT_STREAMING);
    /* Kernel 0's stream after its restart: not taken. */
    struct dg a3 = batch(ID, 2, 0, 4, 1, 0);
    sp_collect_datagram(&c, &s1, a3.b, a3.len, 1050);
    CHECK_EQ(c.k[0].s.records, 3);
    /* Foreign from elsewhere: said once per stream id. */
    struct dg y = batch(0x55555555u, 0, 0, 0, 1, 0);
    sp_collect_datagram(&c, &far, y.b, y.len, 40);
    sp_collect_datagram(&c, &far, y.b, y.len, 40);
    fflush(err);
    CHECK(strstr(msgs, "stream 0x55555555 from 10.9.9.9:40001 not started") != NULL);
    CHECK(strstr(strstr(msgs, "0x55555555") + 1, "0x55555555") == NULL);
    /* Kernel 1's END: it is over, and the record of it complete. */
    struct dg e = end(ID + 1, 1, 2, 0, 0);
    sp_collect_datagram(&c, &s2, e.b, e.len, 50);
    CHECK_EQ(c.k[1].state, SP_COLLECT_ENDED);
    CHECK_STR(c.k[1].note, "");         /* elapsed: the end asked for */
    CHECK(!sp_collect_active(&c));
    CHECK(!c.k[0].keyed && !c.k[1].keyed);   /* no key: no tag state made */
    fclose(err);
    free(msgs);
    for (unsigned i = 0; i < 2; i++)
        sp_stream_free(&c.k[i].s);
    free(c.k);
}

/* Issue 35: 50,000 datagrams of random stream ids from elsewhere (5.4 MB
 * of stderr before, every id past the 16th said): the first
 * SP_COLLECT_FOREIGN_SAID ids are said once each, then one line a minute
 * counts the rest. Over 100 s: 64 lines and one summary. */
TEST(foreign_stream_ids_are_said_up_to_a_bound_then_once_a_minute)
{
    struct sp_collect c;
    struct got g = { { 0 } };
    char *msgs = NULL;
    size_t mlen = 0;
    FILE *err = open_memstream(&msgs, &mlen);
    two_kernels(&c, &g, err);
    struct sockaddr_in far = addr("10.9.9.9", 40001);
    uint32_t x = 12345;
    for (unsigned i = 0; i < 50000; i++) {
        x = x * 1103515245u + 12345u;
        struct dg d = batch(x | 0x80000000u, 0, 0, 0, 1, 0);
        sp_collect_datagram(&c, &far, d.b, d.len, 100 + 2ull * i);
    }
    fflush(err);
    unsigned lines = 0, named = 0, summaries = 0;
    static const char more[] = "more datagrams of streams not started by this collector";
    for (const char *l = msgs, *nl; l && *l; l = nl + 1) {
        nl = strchr(l, '\n');
        if (!nl)
            break;
        lines++;
        named += strncmp(l, "sonde-prof: datagrams of stream 0x", 34) == 0;
        summaries += memmem(l, (size_t)(nl - l), more, sizeof more - 1) != NULL;
    }
    CHECK_EQ(c.foreign, 50000);
    CHECK_EQ(named, SP_COLLECT_FOREIGN_SAID);
    CHECK_EQ(summaries, 1);
    CHECK_EQ(lines, SP_COLLECT_FOREIGN_SAID + 1);
    CHECK(mlen < 12000);
    CHECK_EQ(g.n[0] + g.n[1], 0);
    fclose(err);
    free(msgs);
    for (unsigned i = 0; i < 2; i++)
        sp_stream_free(&c.k[i].s);
    free(c.k);
}

/* A collector that fell behind (descheduled, or a burst) reads a backlog
 * over several polls: no kernel is judged silent until it has been read,
 * since a kernel whose datagrams wait in the collector's own socket is
 * not silent. Here kernel 1's datagrams come last, after more than one
 * poll's worth of kernel 0's, both last heard 4 s ago. */
TEST(no_kernel_is_given_up_on_while_a_backlog_is_read)
{
    struct sp_collect c;
    struct got g = { { 0 } };
    char *msgs = NULL;
    size_t mlen = 0;
    FILE *err = open_memstream(&msgs, &mlen);
    two_kernels(&c, &g, err);
    int force = 16 << 20, tx = socket(AF_INET, SOCK_DGRAM, 0);
    c.fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in me = addr("127.0.0.1", 0);
    socklen_t len = sizeof me;
    CHECK(c.fd >= 0 && tx >= 0);
    if (setsockopt(c.fd, SOL_SOCKET, SO_RCVBUFFORCE, &force, sizeof force))
        CHECK(setsockopt(c.fd, SOL_SOCKET, SO_RCVBUF, &force, sizeof force) == 0);
    CHECK(bind(c.fd, (struct sockaddr *)&me, sizeof me) == 0);
    CHECK(getsockname(c.fd, (struct sockaddr *)&me, &len) == 0);
    const unsigned n0 = 5000;
    for (unsigned i = 0; i < n0; i++) {
        struct dg d = batch(ID, i, 0, i, 1, 0);
        CHECK(sendto(tx, d.b, d.len, 0, (struct sockaddr *)&me, sizeof me) == (ssize_t)d.len);
    }
    struct dg d1 = batch(ID + 1, 0, 0, 0, 1, 0);
    CHECK(sendto(tx, d1.b, d1.len, 0, (struct sockaddr *)&me, sizeof me) == (ssize_t)d1.len);
    uint64_t long_ago = tool_mono_ms() - 4000;
    c.k[0].last_dgram_ms = c.k[1].last_dgram_ms = long_ago;
    c.k[0].last_keepalive_ms = c.k[1].last_keepalive_ms = tool_mono_ms();
    c.k[0].last_reply_ms = c.k[1].last_reply_ms = tool_mono_ms();
    int first = sp_collect_poll(&c, 100);
    CHECK(first > 0 && (unsigned)first < n0);       /* one poll's worth, not all */
    CHECK_EQ(c.k[0].state, SP_COLLECT_STREAMING);
    CHECK_EQ(c.k[1].state, SP_COLLECT_STREAMING);   /* its datagram still waits */
    unsigned total = (unsigned)first;
    for (int r; (r = sp_collect_poll(&c, 0)) > 0;)
        total += (unsigned)r;
    CHECK_EQ(total, n0 + 1);
    CHECK_EQ(g.n[0], n0);
    CHECK_EQ(g.n[1], 1);
    CHECK_EQ(c.k[1].state, SP_COLLECT_STREAMING);
    CHECK_EQ(c.k[1].s.lost_dgrams, 0);
    close(tx);
    close(c.fd);
    free(c.rx);
    fclose(err);
    free(msgs);
    for (unsigned i = 0; i < 2; i++)
        sp_stream_free(&c.k[i].s);
    free(c.k);
}

/* While kernels start (a retry beside running streams: serve), the
 * running streams' datagrams are taken at once; only those of ids not
 * known yet wait for the start's answers. */
TEST(while_kernels_start_running_streams_are_taken_at_once)
{
    struct sp_collect c;
    struct got g = { { 0 } };
    two_kernels(&c, &g, stderr);
    c.k[1].state = SP_COLLECT_IDLE;         /* being started again */
    c.pending_max = 4;
    c.pending = calloc(c.pending_max, sizeof *c.pending);
    c.starting = true;
    struct sockaddr_in s1 = addr("127.0.0.1", 40001), s2 = addr("127.0.0.1", 40002);
    struct dg a = batch(ID, 0, 0, 0, 3, 0), m = meta(0x55555555u, 0, BID);
    sp_collect_datagram(&c, &s1, a.b, a.len, 10);
    sp_collect_datagram(&c, &s2, m.b, m.len, 10);
    CHECK_EQ(g.n[0], 3);
    CHECK_EQ(c.k[0].s.records, 3);
    CHECK_EQ(c.npending, 1);                /* the new stream's META waits */
    CHECK_EQ(c.foreign, 0);
    free(c.pending);
    for (unsigned i = 0; i < 2; i++)
        sp_stream_free(&c.k[i].s);
    free(c.k);
}

TEST(an_end_nobody_here_asked_for_is_said)
{
    struct sp_collect c;
    struct got g = { { 0 } };
    char *msgs = NULL;
    size_t mlen = 0;
    FILE *err = open_memstream(&msgs, &mlen);
    two_kernels(&c, &g, err);
    struct sockaddr_in s1 = addr("127.0.0.1", 40001);
    struct pstr_writer w;
    pstr_begin(&w, PSTR_END, 0, ID, 0, 5000);
    pstr_end_head(&w, PSTR_END_TIMEOUT);
    size_t n = pstr_finish(&w);
    sp_collect_datagram(&c, &s1, w.buf, n, 10);
    fclose(err);
    CHECK_EQ(c.k[0].state, SP_COLLECT_ENDED);
    CHECK(strstr(c.k[0].note, "no keep-alive") != NULL);
    CHECK(strstr(msgs, "kernel 127.0.0.1:9001: its stream ended at") != NULL);
    free(msgs);
    for (unsigned i = 0; i < 2; i++)
        sp_stream_free(&c.k[i].s);
    free(c.k);
}

TEST(a_meta_with_another_build_id_restarts_the_kernel_its_shell_says_so)
{
    struct sp_collect c;
    struct got g = { { 0 } };
    FILE *err = fopen("/dev/null", "w");
    two_kernels(&c, &g, err);
    struct sockaddr_in s2 = addr("127.0.0.1", 40002);
    struct dg m1 = meta(ID + 1, 0, BID), m2 = meta(ID + 1, 5, BID2);
    sp_collect_datagram(&c, &s2, m1.b, m1.len, 10);
    sp_collect_datagram(&c, &s2, m2.b, m2.len, 20);
    CHECK_EQ(c.k[1].state, SP_COLLECT_STREAMING);    /* asked, not believed yet */
    CHECK_STR(sent_cmd[1], "profile status");
    /* Another's stream runs there now (its id is not shown to us). */
    shell_says(&c, 1, "stream v=1 op=status result=ok state=streaming to=10.0.2.2:5555 "
               "age=100\nprofile: streaming to 10.0.2.2:5555, 100 ms, ...\n", 30);
    CHECK_EQ(c.k[1].state, SP_COLLECT_RESTARTED);
    CHECK(strstr(c.k[1].note, "build id fedcba987654") != NULL);
    CHECK_EQ(c.k[0].state, SP_COLLECT_STREAMING);
    fclose(err);
    for (unsigned i = 0; i < 2; i++)
        sp_stream_free(&c.k[i].s);
    free(c.k);
}

/* ---- a stream as a raw profile ---------------------------------------- */

static uint64_t chain_total;

static int sum_chain(void *ctx, const struct praw_chain *c, unsigned line, char *err,
                     size_t cap)
{
    chain_total += c->pc_count;
    if (c->pc_pid == 7)
        CHECK_STR(c->pc_task, "burn");
    return 0;
}

static void agg_rec(void *ctx, uint16_t cpu, const struct pstr_record *r)
{
    sp_agg_add(ctx, cpu, r);
}

static uint64_t weight_total;
static int sum_weight(void *ctx, const struct praw_chain *c, unsigned line, char *err,
                      size_t cap)
{
    weight_total += c->pc_weight;
    return 0;
}

/* Kinds in one stream stay apart: each raw profile holds its own kind's
 * records, a weighted kind says so and carries count:weight, and the
 * model reads the weights back. */
TEST(streamed_kinds_become_one_raw_profile_each)
{
    struct sp_stream s;
    struct sp_agg a;
    sp_stream_init(&s, ID);
    sp_agg_init(&a);
    struct dg m = meta(ID, 0, BID);
    struct pstr_hdr h0;
    pstr_parse(m.b, m.len, &h0);
    sp_stream_take(&s, &h0, 0, agg_rec, &a);
    struct pstr_record cpu = { .pid = 7, .depth = 1, .kind = PSTR_KIND_CPU, .weight = 1,
                               .frames = { 0x1000 } };
    struct pstr_record off = { .pid = 7, .depth = 1, .kind = PSTR_KIND_OFFCPU,
                               .frames = { 0x1000 }, .why = PSTR_WHY_SLEEP };
    for (unsigned i = 0; i < 3; i++) {
        sp_agg_add(&a, 0, &cpu);
        off.weight = 1000000 * (i + 1);
        sp_agg_add(&a, 0, &off);
    }
    size_t len;
    char *text = sp_agg_raw(&a, &s, PRAW_KIND_OFFCPU, 1000, &len);
    CHECK(text != NULL);
    CHECK(strstr(text, " ms=1000 kind=offcpu\n3:6000000 7 ") != NULL);
    CHECK(strstr(text, " 0 why=sleep waker=0 1000\n") != NULL);
    struct praw_header h;
    char err[PRAW_ERR_MAX] = "";
    weight_total = 0;
    CHECK_EQ(praw_parse(text, len, &h, sum_weight, NULL, err, sizeof err), 0);
    CHECK_EQ(h.ph_kind, PRAW_KIND_OFFCPU);
    CHECK_EQ(h.ph_samples, 3);
    CHECK_EQ(weight_total, 6000000);
    struct sp_profile p;
    sp_profile_init(&p);
    unsigned map = sp_profile_add_map(&p, "kernel.elf");
    CHECK_EQ(sp_profile_add_raw(&p, text, len, "stream", "k", map, err, sizeof err), 0);
    CHECK_EQ(p.nchains, 1);
    CHECK_EQ(p.chains[0].c_count, 3);
    CHECK_EQ(p.chains[0].c_weight, 6000000);
    free(text);
    text = sp_agg_raw(&a, &s, PRAW_KIND_CPU, 1000, &len);
    CHECK(text != NULL && strstr(text, "kind=") == NULL);
    CHECK(strstr(text, " ms=1000\n3 7 ") != NULL);
    free(text);
    sp_profile_free(&p);
    sp_agg_free(&a);
    sp_stream_free(&s);
}

static uint64_t objects_total;
static int sum_objects(void *ctx, const struct praw_chain *c, unsigned line, char *err,
                       size_t cap)
{
    weight_total += c->pc_weight;
    objects_total += c->pc_objects;
    return 0;
}

/* Streamed heap records carry their size, so a streamed heap profile has
 * the objects the raw format requires (weight / size per record, summed
 * and rounded, as the kernel counts them): all four of pprof's types. */
TEST(streamed_heap_records_carry_objects)
{
    struct sp_stream s;
    struct sp_agg a;
    sp_stream_init(&s, ID);
    sp_agg_init(&a);
    struct dg m = meta(ID, 0, BID);
    struct pstr_hdr h0;
    pstr_parse(m.b, m.len, &h0);
    sp_stream_take(&s, &h0, 0, agg_rec, &a);
    /* Two samples of 64-byte blocks standing for 524320 bytes each
     * (8192.5 objects each), one of a 1 MiB block standing for itself. */
    struct pstr_record small = { .pid = 7, .depth = 1, .kind = PSTR_KIND_HEAP,
                                 .weight = 524320, .size = 64, .frames = { 0x1000 } };
    struct pstr_record big = { .pid = 7, .depth = 1, .kind = PSTR_KIND_HEAP,
                               .weight = 1 << 20, .size = 1 << 20, .frames = { 0x2000 } };
    sp_agg_add(&a, 0, &small);
    sp_agg_add(&a, 0, &small);
    sp_agg_add(&a, 0, &big);
    CHECK_EQ(sp_agg_objects_q16(&small), 8192 * 65536 + 32768);
    size_t len;
    char *text = sp_agg_raw(&a, &s, PRAW_KIND_HEAP, 1000, &len);
    CHECK(text != NULL);
    CHECK(strstr(text, "\n2:1048640:16385 7 ") != NULL);
    CHECK(strstr(text, "\n1:1048576:1 7 ") != NULL);
    struct praw_header h;
    char err[PRAW_ERR_MAX] = "";
    weight_total = objects_total = 0;
    CHECK_EQ(praw_parse(text, len, &h, sum_objects, NULL, err, sizeof err), 0);
    CHECK_EQ(h.ph_kind, PRAW_KIND_HEAP);
    CHECK_EQ(weight_total, 2 * 524320 + (1 << 20));
    CHECK_EQ(objects_total, 16385 + 1);
    free(text);
    sp_agg_free(&a);
    sp_stream_free(&s);
}

TEST(a_stream_becomes_a_raw_profile_the_parser_takes)
{
    struct sp_stream s;
    struct sp_agg a;
    sp_stream_init(&s, ID);
    sp_agg_init(&a);
    struct dg ds[] = {
        meta(ID, 0, BID), batch(ID, 1, 0, 0, 5, 0), batch(ID, 2, 1, 0, 50, 2),
        end(ID, 3, 5, 50, 0),
    };
    size_t len;
    CHECK(sp_agg_raw(&a, &s, PRAW_KIND_CPU, 10000, &len) == NULL);   /* no META yet */
    for (unsigned i = 0; i < 4; i++) {
        struct pstr_hdr h;
        pstr_parse(ds[i].b, ds[i].len, &h);
        sp_stream_take(&s, &h, 0, agg_rec, &a);
    }
    char *text = sp_agg_raw(&a, &s, PRAW_KIND_CPU, 10000, &len);
    CHECK(text != NULL);
    struct praw_header h;
    char err[PRAW_ERR_MAX] = "";
    chain_total = 0;
    CHECK_EQ(praw_parse(text, len, &h, sum_chain, NULL, err, sizeof err), 0);
    CHECK_STR(err, "");
    CHECK_EQ(h.ph_samples, 55);
    CHECK_EQ(chain_total, 55);
    CHECK_EQ(h.ph_dropped, 0);  /* the END's word: cpu 1 dropped none in the end */
    CHECK_EQ(h.ph_cpus, 2);
    CHECK_EQ(h.ph_ms, 10000);
    CHECK_STR(h.ph_build_id, BID);
    CHECK_STR(h.ph_source, "tick 100Hz");
    CHECK_EQ(a.n, 4);           /* two leaves on each of two CPUs */
    free(text);
    sp_agg_free(&a);
    sp_stream_free(&s);
}

/* ---- with a key (-k): tagged datagrams only ------------------------------ */

static const uint8_t kkey[PSTR_KEY_LEN] = "the fleet's key, thirty-two long";

/* d tagged under key and epoch, as a kernel with that key sends it. */
static struct dg sealed(struct dg d, const uint8_t *key, uint64_t epoch)
{
    struct hmac_sha256 m;
    static struct pstr_tag_key k;
    hmac_sha256_init(&m, key, PSTR_KEY_LEN);
    pstr_tag_begin(&k, &m, epoch);
    d.len = pstr_seal(&k, d.b, d.len);
    return d;
}

/* With one key per kernel (sonde-prof --id: the shared key made each
 * kernel's own by its ushid=), kernel 0's stream counts under kernel 0's
 * key only: tagged under kernel 1's (or the shared one), it is a bad tag. */
TEST(with_a_key_per_kernel_each_stream_verifies_under_its_own)
{
    struct sp_collect c;
    struct got g = { { 0 } };
    FILE *err = fopen("/dev/null", "w");
    two_kernels(&c, &g, err);
    uint8_t k0[PSTR_KEY_LEN], k1[PSTR_KEY_LEN];
    memcpy(k0, kkey, sizeof k0);
    memcpy(k1, kkey, sizeof k1);
    k0[0] ^= 1;
    k1[0] ^= 2;
    const uint8_t *keys[2] = { k0, k1 };
    c.o.key = kkey;
    c.o.keys = keys;
    c.k[0].c.epoch = 0xe90c;
    struct sockaddr_in s1 = addr("127.0.0.1", 40001);
    struct dg m = sealed(meta(ID, 0, BID), k0, 0xe90c),
              good = sealed(batch(ID, 1, 0, 0, 3, 0), k0, 0xe90c),
              theirs = sealed(batch(ID, 2, 0, 3, 4, 0), k1, 0xe90c),
              shared = sealed(batch(ID, 2, 0, 3, 4, 0), kkey, 0xe90c);
    sp_collect_datagram(&c, &s1, m.b, m.len, 10);
    sp_collect_datagram(&c, &s1, good.b, good.len, 10);
    sp_collect_datagram(&c, &s1, theirs.b, theirs.len, 11);
    sp_collect_datagram(&c, &s1, shared.b, shared.len, 12);
    CHECK_EQ(g.n[0], 3);
    CHECK_EQ(c.k[0].bad_tag, 2);
    CHECK(sp_collect_key(&c, &c.k[1]) == k1);
    c.o.keys = NULL;
    CHECK(sp_collect_key(&c, &c.k[1]) == kkey);
    fclose(err);
    for (unsigned i = 0; i < 2; i++) {
        sp_stream_free(&c.k[i].s);
        free(c.k[i].keyed);             /* made at the first tagged datagram */
    }
    free(c.k);
}

/* Issue 26: with -k, a datagram counts only when tagged under the key and
 * the kernel's boot epoch. Untagged, tagged for another boot (epoch) or
 * under another key: counted, never taken; and a datagram of another id
 * from where the stream comes is a question for the shell only when its
 * tag verifies. */
TEST(with_a_key_only_its_tagged_datagrams_count)
{
    struct sp_collect c;
    struct got g = { { 0 } };
    FILE *err = fopen("/dev/null", "w");
    two_kernels(&c, &g, err);
    c.o.key = kkey;
    c.k[0].c.epoch = 0xe90c;
    uint8_t key2[PSTR_KEY_LEN];
    memcpy(key2, kkey, sizeof key2);
    key2[5] ^= 4;
    struct sockaddr_in s1 = addr("127.0.0.1", 40001);
    struct dg m = sealed(meta(ID, 0, BID), kkey, 0xe90c),
              good = sealed(batch(ID, 1, 0, 0, 3, 0), kkey, 0xe90c),
              plain = batch(ID, 2, 0, 3, 4, 0),
              old_boot = sealed(batch(ID, 2, 0, 3, 4, 0), kkey, 0xe90b),
              other_key = sealed(batch(ID, 2, 0, 3, 4, 0), key2, 0xe90c),
              next = sealed(batch(ID, 2, 0, 3, 2, 0), kkey, 0xe90c);
    sp_collect_datagram(&c, &s1, m.b, m.len, 10);
    sp_collect_datagram(&c, &s1, good.b, good.len, 10);
    sp_collect_datagram(&c, &s1, plain.b, plain.len, 11);
    sp_collect_datagram(&c, &s1, old_boot.b, old_boot.len, 12);
    sp_collect_datagram(&c, &s1, other_key.b, other_key.len, 13);
    CHECK_EQ(g.n[0], 3);
    CHECK_EQ(c.k[0].untagged, 1);
    CHECK_EQ(c.k[0].bad_tag, 2);
    CHECK_EQ(sp_collect_refused(&c.k[0]), 3);
    sp_collect_datagram(&c, &s1, next.b, next.len, 14);     /* seq 2 was not used up */
    CHECK_EQ(g.n[0], 5);
    CHECK_EQ(c.k[0].s.lost_dgrams, 0);
    CHECK_EQ(c.k[0].s.lost_records, 0);
    /* Another id from the stream's own address: untagged, not a question. */
    struct dg x = batch(0x77777777u, 0, 0, 0, 1, 0);
    sp_collect_datagram(&c, &s1, x.b, x.len, 20);
    CHECK_EQ(sent_n[0], 0);
    CHECK_EQ(c.k[0].untagged, 2);
    /* Tagged by the kernel itself: its shell is asked. */
    struct dg xs = sealed(x, kkey, 0xe90c);
    sp_collect_datagram(&c, &s1, xs.b, xs.len, 30);
    CHECK_EQ(sent_n[0], 1);
    CHECK_STR(sent_cmd[0], "profile status");
    CHECK_EQ(c.k[0].state, SP_COLLECT_STREAMING);
    fclose(err);
    for (unsigned i = 0; i < 2; i++) {
        sp_stream_free(&c.k[i].s);
        free(c.k[i].keyed);             /* made at the first tagged datagram */
    }
    free(c.k);
}

/* Off-CPU records: the same chain woken by two tasks is two chains (the
 * kernel's report keeps them apart too); the raw profile carries each
 * one's reason, queue, waker with its name from the META, and the
 * waker's chain, and the model reads them back with the reason as a
 * frame of its own. A record without its reason is not added. */
TEST(streamed_off_cpu_keeps_reasons_and_wakers)
{
    struct sp_stream s;
    struct sp_agg a;
    sp_stream_init(&s, ID);
    sp_agg_init(&a);
    struct dg m = meta(ID, 0, BID);
    struct pstr_hdr h0;
    pstr_parse(m.b, m.len, &h0);
    sp_stream_take(&s, &h0, 0, agg_rec, &a);
    struct pstr_record q = { .pid = 7, .depth = 2, .kind = PSTR_KIND_OFFCPU, .weight = 3000,
                             .frames = { 0x1000, 0x2000 }, .why = PSTR_WHY_WAITQ,
                             .waker = 7, .wdepth = 1, .wframes = { 0x5000 } };
    snprintf(q.name, sizeof q.name, "burn-q");
    struct pstr_record q2 = q;
    q2.waker = 9;                           /* another waker: another chain */
    struct pstr_record run = { .pid = 7, .depth = 2, .kind = PSTR_KIND_OFFCPU, .weight = 40,
                               .frames = { 0x1000, 0x2000 }, .why = PSTR_WHY_RUNNABLE,
                               .waker = PSTR_WAKER_NONE };
    struct pstr_record bare = run;
    bare.why = 0;
    sp_agg_add(&a, 1, &q);
    sp_agg_add(&a, 1, &q);
    sp_agg_add(&a, 1, &q2);
    sp_agg_add(&a, 1, &run);
    sp_agg_add(&a, 1, &bare);
    CHECK_EQ(a.n, 3);
    size_t len;
    char *text = sp_agg_raw(&a, &s, PRAW_KIND_OFFCPU, 1000, &len);
    CHECK(text != NULL);
    CHECK(strstr(text, " source=tick 100Hz samples=4 ") != NULL);
    CHECK(strstr(text, "\n2:6000 7 burn 1 why=waitq:burn-q waker=7:burn 1000 2000 | 5000\n"));
    CHECK(strstr(text, "\n1:3000 7 burn 1 why=waitq:burn-q waker=9 1000 2000 | 5000\n"));
    CHECK(strstr(text, "\n1:40 7 burn 1 why=runnable 1000 2000\n"));
    struct sp_profile p;
    sp_profile_init(&p);
    char err[PRAW_ERR_MAX] = "";
    unsigned map = sp_profile_add_map(&p, "kernel.elf");
    CHECK_EQ(sp_profile_add_raw(&p, text, len, "stream", "k", map, err, sizeof err), 0);
    CHECK_EQ(p.nchains, 3);
    unsigned seen = 0;
    for (size_t i = 0; i < p.nchains; i++) {
        const struct sp_chain *c = &p.chains[i];
        CHECK(c->c_reason != NULL);
        CHECK(c->c_locs[0]->pl_ret);        /* a saved context: return addresses all */
        if (c->c_waker == 7) {
            CHECK_STR(c->c_reason->pl_frames[0].pf_func, "[waitq burn-q]");
            CHECK_STR(c->c_wtask, "burn");
            CHECK_EQ(c->c_wdepth, 1);
            CHECK_EQ(c->c_wlocs[0]->pl_addr, 0x5000);
            CHECK_EQ(c->c_weight, 6000);
            seen |= 1;
        } else if (c->c_waker == 9) {
            CHECK_STR(c->c_wtask, "");      /* no META names 9 */
            seen |= 2;
        } else {
            CHECK_STR(c->c_reason->pl_frames[0].pf_func, "[runnable]");
            CHECK_EQ(c->c_waker, PRAW_WAKER_NONE);
            seen |= 4;
        }
    }
    CHECK_EQ(seen, 7);
    /* One location per distinct reason, shared. */
    CHECK_EQ(p.nreasons, 2);
    free(text);
    sp_profile_free(&p);
    sp_agg_free(&a);
    sp_stream_free(&s);
}

/* A kernel that answers without a control line (older than the grammar),
 * or in another version, is said so once, by its address; its answers
 * decide nothing, and the other kernel is read as before. */
TEST(a_kernel_of_another_control_version_is_said_once_and_decides_nothing)
{
    struct sp_collect c;
    struct got g = { { 0 } };
    char *msgs = NULL;
    size_t msgs_len = 0;
    FILE *err = open_memstream(&msgs, &msgs_len);
    two_kernels(&c, &g, err);
    uint32_t id = 0;
    CHECK_EQ(sp_collect_parse_started(&c, &c.k[0], "stream v=1 op=start result=ok "
             "state=streaming id=0x1a2b3c4d to=10.0.2.2:40000\nprofile: streaming id "
             "0x1a2b3c4d to 10.0.2.2:40000 (tick 100Hz, 4 cpus)\n", &id), 0);
    CHECK_EQ(id, 0x1a2b3c4d);
    CHECK_EQ(sp_collect_parse_started(&c, &c.k[0], "stream v=1 op=start result=busy "
             "state=streaming to=10.0.2.2:40000\nprofile: busy (streaming to 10.0.2.2:40000)\n",
             &id), -1);
    CHECK(!c.k[0].skew);
    fflush(err);
    CHECK_EQ(msgs_len, 0);
    /* The old way: the sentence alone. */
    const char *old = "profile: streaming id 0x1a2b3c4d to 10.0.2.2:40000 (tick 100Hz, 4 cpus)\n";
    CHECK_EQ(sp_collect_parse_started(&c, &c.k[0], old, &id), -2);
    CHECK_EQ(sp_collect_parse_started(&c, &c.k[0], old, &id), -2);
    fflush(err);
    CHECK(strstr(msgs, "sonde-prof: kernel 127.0.0.1:9001 answers without a stream control "
                 "line") != NULL);
    CHECK(strstr(msgs, "version 1 only: left out\n") != NULL);
    const char *once = strstr(msgs, "answers without");
    CHECK(once && !strstr(once + 1, "answers without"));    /* said once */
    /* Another version: which one, once. */
    size_t before = msgs_len;
    const char *v2 = "stream v=2 op=start result=ok id=0x1a2b3c4d\n";
    CHECK_EQ(sp_collect_parse_started(&c, &c.k[1], v2, &id), -2);
    CHECK_EQ(sp_collect_parse_started(&c, &c.k[1], v2, &id), -2);
    fflush(err);
    CHECK_STR(msgs + before, "sonde-prof: kernel 127.0.0.1:9002 speaks stream control version 2, "
              "this collector version 1: left out\n");
    /* The status probe's answer, the old way: no restart believed. */
    struct sockaddr_in s1 = addr("127.0.0.1", 40001);
    struct dg a = batch(ID, 0, 0, 0, 1, 0), x = batch(0x77777777u, 0, 0, 0, 1, 0);
    sp_collect_datagram(&c, &s1, a.b, a.len, 5);
    sp_collect_datagram(&c, &s1, x.b, x.len, 10);
    CHECK_EQ(sent_n[0], 1);
    CHECK_STR(sent_cmd[0], "profile status");
    shell_says(&c, 0, "profile: no stream since boot\n", 20);
    CHECK_EQ(c.k[0].state, SP_COLLECT_STREAMING);
    CHECK(!c.k[0].probe.on);
    fflush(err);
    /* A malformed line is said, with its code, each time. */
    before = msgs_len;
    CHECK_EQ(sp_collect_parse_started(&c, &c.k[0], "stream v=1 op=start result=ok state=on\n",
                                      &id), -1);
    fflush(err);
    CHECK_STR(msgs + before, "sonde-prof: kernel 127.0.0.1:9001: a control line with a value "
              "out of range in its answer (code -5)\n");
    CHECK(strstr(msgs, "restarted") == NULL);
    fclose(err);
    free(msgs);
    for (unsigned i = 0; i < 2; i++)
        sp_stream_free(&c.k[i].s);
    free(c.k);
}
