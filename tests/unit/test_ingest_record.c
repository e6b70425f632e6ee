// LINK: tools/ingest/record.c tools/common/ushell_client.c uapi/udpshell.c tools/model/model.c tools/output/folded.c tools/output/pprof.c uapi/profile_raw.c build/host/proto/profile.pb-c.c uapi/udpshell_auth.c lib/sha256.c
// LIBS: -Ibuild/host/proto -lprotobuf-c -lz
/* tests/unit/test_ingest_record.c: `sonde-prof record`'s collection from
 * several kernels at once (tools/ingest/record.c over the real protocol
 * code, tools/common/ushell_client.c) against fake kernels sharing one fake
 * clock; the build-id check; and the kernel labels of a merged profile.
 *
 * The clock moves only while the collector waits: a datagram scheduled
 * for time T is delivered when the wait reaches T, so "all at once" is
 * checkable: two 1000 ms windows end at 1000 ms, not 2000. */
#include "test.h"
#include <stdlib.h>
#include "profile.pb-c.h"
#include "tools/output/folded.h"
#include "tools/output/pprof.h"
#include "tools/ingest/record.h"
#include "uapi/udpshell.h"

#define NK 2
#define MAXQ 64

enum behaviour { RAW, BUSY, SILENT, CUT };

struct kernel {
    struct world *w;
    unsigned index;
    enum behaviour how;
    uint64_t reply_after;             /* ms after the request */
    int sends;
    uint64_t first_send_at;
    uint32_t seq;
    char cmd[300];
};

struct world {
    uint64_t now;
    struct kernel k[NK];
    struct { uint64_t at; unsigned who; uint8_t d[USHP_DGRAM_MAX]; size_t len; } q[MAXQ];
    int nq;
    long waits;
};

static const char raw_a[] =
    "# sonde raw build-id=00112233445566778899aabbccddeeff00112233 source=tick 100Hz "
    "samples=3 dropped=0 cpus=1 ms=500\n"
    "3 7 burn 0 1010 2005\n";

static void schedule(struct world *w, uint64_t at, unsigned who, uint32_t seq,
                     uint16_t chunk, bool last, const char *text, size_t n)
{
    CHECK(w->nq < MAXQ);
    if (w->nq >= MAXQ)
        return;
    w->q[w->nq].at = at;
    w->q[w->nq].who = who;
    w->q[w->nq].len = ushp_build(w->q[w->nq].d, sizeof w->q[w->nq].d, seq, chunk,
                                 last, text, n);
    w->nq++;
}

static int k_send(void *ctx, const void *d, size_t len)
{
    struct kernel *k = ctx;
    struct ushp_hdr h;
    const uint8_t *pl;
    CHECK_EQ(ushp_parse(d, len, &h, &pl), 0);
    if (k->sends++ == 0)
        k->first_send_at = k->w->now;
    else
        return 0;                     /* a retransmission: the reply is on its way */
    k->seq = h.seq;
    memcpy(k->cmd, pl, h.len);
    k->cmd[h.len] = 0;
    uint64_t at = k->w->now + k->reply_after;
    switch (k->how) {
    case RAW:
        schedule(k->w, at, k->index, h.seq, 0, true, raw_a, strlen(raw_a));
        break;
    case CUT:                         /* the last line lost its end */
        schedule(k->w, at, k->index, h.seq, 0, true, raw_a, strlen(raw_a) - 4);
        break;
    case BUSY:
        schedule(k->w, k->w->now + 5, k->index, h.seq, 0, true, "profile: busy\n", 14);
        break;
    case SILENT:
        break;
    }
    return 0;
}

static uint64_t w_now(void *ctx)
{
    struct kernel *k = ctx;
    return k->w->now;
}

static uint64_t mux_now(void *ctx) { return ((struct world *)ctx)->now; }

/* The earliest datagram due within the wait, from whichever kernel. */
static long recv_any(void *ctx, unsigned *which, void *buf, size_t cap, uint64_t timeout_ms)
{
    struct world *w = ctx;
    if (++w->waits > 100000) {
        test_fail(__FILE__, __LINE__, "the collector keeps polling without giving up");
        return USHC_IO_ERROR;
    }
    int best = -1;
    for (int i = 0; i < w->nq; i++)
        if (w->q[i].len && w->q[i].at <= w->now + timeout_ms &&
            (best < 0 || w->q[i].at < w->q[best].at))
            best = i;
    if (best < 0) {
        w->now += timeout_ms;
        return 0;
    }
    if (w->q[best].at > w->now)
        w->now = w->q[best].at;
    size_t n = w->q[best].len < cap ? w->q[best].len : cap;
    memcpy(buf, w->q[best].d, n);
    w->q[best].len = 0;               /* delivered */
    *which = w->q[best].who;
    return (long)n;
}

struct outcome {
    int rc;
    char *err[NK];
    size_t errlen[NK];
    struct sp_rec_host h[NK];
};

static void collect(struct world *w, struct outcome *o, unsigned ms)
{
    static char peers[NK][32];
    FILE *errs[NK];
    for (unsigned i = 0; i < NK; i++) {
        w->k[i].w = w;
        w->k[i].index = i;
        snprintf(peers[i], sizeof peers[i], "127.0.0.1:%u", 9000 + i);
        errs[i] = open_memstream(&o->err[i], &o->errlen[i]);
        o->h[i].c = (struct ushc){
            .io = { &w->k[i], k_send, NULL, w_now },
            .seq = 100 + 1000 * i, .timeout_ms = ms + 5000,
            .peer = peers[i], .prog = "sonde-prof", .err = errs[i],
        };
    }
    struct ushc_mux m = { w, recv_any, mux_now };
    char cmd[SP_RECORD_CMD_MAX];
    sp_record_command(cmd, sizeof cmd, ms, "all");
    o->rc = sp_record_collect(&m, o->h, NK, cmd);
    for (unsigned i = 0; i < NK; i++)
        fclose(errs[i]);
}

static void outcome_free(struct outcome *o)
{
    sp_record_free(o->h, NK);
    for (unsigned i = 0; i < NK; i++)
        free(o->err[i]);
}

TEST(record_two_kernels_over_one_window)
{
    struct world w = { .now = 10000 };
    w.k[0] = (struct kernel){ .how = RAW, .reply_after = 500 };
    w.k[1] = (struct kernel){ .how = RAW, .reply_after = 520 };
    struct outcome o;
    collect(&w, &o, 500);
    CHECK_EQ(o.rc, 0);
    for (int i = 0; i < NK; i++) {
        CHECK_EQ(o.h[i].rc, 0);
        CHECK_STR(o.h[i].text, raw_a);
        CHECK_EQ(o.h[i].len, strlen(raw_a));
        CHECK_STR(w.k[i].cmd, "profile 500 all raw");
        CHECK_EQ(w.k[i].first_send_at, 10000);   /* both asked before any wait */
        CHECK_STR(o.err[i], "");
    }
    /* Concurrent: both windows ran side by side; nothing waited for the
     * first reply before asking the second kernel. */
    CHECK_EQ(w.now, 10520);
    outcome_free(&o);
}

TEST(record_busy_and_silent_kernels)
{
    struct world w = { 0 };
    w.k[0] = (struct kernel){ .how = BUSY };
    w.k[1] = (struct kernel){ .how = SILENT };
    struct outcome o;
    collect(&w, &o, 1000);
    CHECK_EQ(o.rc, USHC_EXIT_PROTO);          /* the worst: no answer at all */
    CHECK_EQ(o.h[0].rc, USHC_EXIT_REFUSED);
    CHECK_STR(o.err[0], "sonde-prof: 127.0.0.1:9000 said: profile: busy\n");
    CHECK_EQ(o.h[1].rc, USHC_EXIT_PROTO);
    CHECK(strstr(o.err[1], "timeout: no reply from 127.0.0.1:9001 for 6.0 s") != NULL);
    CHECK(strstr(o.err[1], "sent 4 times") != NULL);   /* the shell's resends first */
    CHECK_EQ(w.k[1].sends, 1 + USHC_RETRIES);
    CHECK_EQ(w.k[0].sends, 1);                /* a finished call is not resent */
    CHECK_EQ(w.now, 6000);                    /* window + 5 s of silence, not more */
    outcome_free(&o);
}

TEST(record_busy_alone_exits_1)
{
    struct world w = { 0 };
    w.k[0] = (struct kernel){ .how = RAW, .reply_after = 1000 };
    w.k[1] = (struct kernel){ .how = BUSY };
    struct outcome o;
    collect(&w, &o, 1000);
    CHECK_EQ(o.rc, USHC_EXIT_REFUSED);
    CHECK_EQ(o.h[0].rc, 0);
    CHECK_STR(o.err[1], "sonde-prof: 127.0.0.1:9001 said: profile: busy\n");
    outcome_free(&o);
}

TEST(record_cut_reply_reaches_the_parser)
{
    /* The transport delivered it whole; the text itself is cut: collect
     * passes it on, and the strict parser refuses it naming the line. */
    struct world w = { 0 };
    w.k[0] = (struct kernel){ .how = CUT, .reply_after = 10 };
    w.k[1] = (struct kernel){ .how = RAW, .reply_after = 10 };
    struct outcome o;
    collect(&w, &o, 10);
    CHECK_EQ(o.rc, 0);
    struct sp_profile p;
    sp_profile_init(&p);
    unsigned map = sp_profile_add_map(&p, "k.elf");
    char err[SP_ERR_MAX];
    CHECK_EQ(sp_profile_add_raw(&p, o.h[0].text, o.h[0].len, "127.0.0.1:9000", "127.0.0.1:9000",
                          map, err, sizeof err), -1);
    CHECK(strstr(err, "127.0.0.1:9000: line 2: truncated") != NULL);
    sp_profile_free(&p);
    outcome_free(&o);
}

TEST(record_build_id_check_names_both)
{
    char err[SP_ERR_MAX] = "";
    const char *a = "00112233445566778899aabbccddeeff00112233";
    const char *b = "ffeeddccbbaa99887766554433221100ffeeddcc";
    CHECK_EQ(sp_check_build_id("127.0.0.1:9000", a, "k.elf", a, err, sizeof err), 0);
    CHECK_EQ(sp_check_build_id("127.0.0.1:9000", a, "k.elf", b, err, sizeof err), -1);
    CHECK_STR(err, "build id mismatch: 127.0.0.1:9000 was recorded on a kernel with build id "
              "00112233445566778899aabbccddeeff00112233, but k.elf has build id "
              "ffeeddccbbaa99887766554433221100ffeeddcc");
}

/* Two kernels' replies merged: every sample carries its HOST:PORT. */
TEST(record_merge_labels_each_sample_with_its_kernel)
{
    struct sp_profile p;
    sp_profile_init(&p);
    unsigned map = sp_profile_add_map(&p, "k.elf");
    char err[SP_ERR_MAX];
    CHECK_EQ(sp_profile_add_raw(&p, raw_a, strlen(raw_a), "127.0.0.1:9000", "127.0.0.1:9000", map,
                          err, sizeof err), 0);
    CHECK_EQ(sp_profile_add_raw(&p, raw_a, strlen(raw_a), "box:9001", "box:9001", map,
                          err, sizeof err), 0);
    sp_profile_name_unknown(&p);
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    CHECK_EQ(sp_folded_write(&p, true, f), 0);
    fclose(f);
    CHECK_STR(buf, "127.0.0.1:9000;burn;0x2005;0x1010 3\nbox:9001;burn;0x2005;0x1010 3\n");
    free(buf);

    uint8_t *pb = sp_pprof_pack(&p, &len);
    Perftools__Profiles__Profile *m = perftools__profiles__profile__unpack(NULL, len, pb);
    free(pb);
    CHECK(m != NULL);
    if (m) {
        CHECK_EQ(m->n_sample, 2);
        const char *want[2] = { "127.0.0.1:9000", "box:9001" };
        for (size_t i = 0; i < m->n_sample && i < 2; i++) {
            const char *got = NULL;
            for (size_t j = 0; j < m->sample[i]->n_label; j++)
                if (strcmp(m->string_table[m->sample[i]->label[j]->key], "kernel") == 0)
                    got = m->string_table[m->sample[i]->label[j]->str];
            CHECK_STR(got, want[i]);
        }
        perftools__profiles__profile__free_unpacked(m, NULL);
    }
    sp_profile_free(&p);
}
