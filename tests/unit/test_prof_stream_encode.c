// LINK: kernel/prof/sample.c kernel/prof/trace.c kernel/prof/trace_hooks.c kernel/prof/ring.c kernel/prof/session.c kernel/prof/offcpu.c kernel/prof/offreport.c kernel/prof/wall.c kernel/prof/stream.c kernel/prof/stream_encode.c kernel/prof/report.c kernel/prof/lockreport.c kernel/prof/export.c kernel/prof/fold.c kernel/prof/fold_order.c kernel/prof/quantile.c kernel/prof/fold_index.c kernel/cmd/profile.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c lib/sha256.c kernel/symtab.c tests/unit/fake_profiler.c kernel/stacks.c kernel/stacktrace.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c lib/printf.c lib/parse.c uapi/profile_raw.c kernel/cmd/profile_heap.c kernel/prof/heapview.c mm/heapprof.c tests/unit/fake_heap_table.c kernel/cmd/profile_stream.c uapi/stream_ctl.c kernel/cmd/profile_say.c kernel/irqname.c
/* tests/unit/test_prof_stream_encode.c: the stream's hot loop
 * (kernel/prof/stream_encode.c, prof_stream_add_cpu_run): runs of CPU samples
 * with one chain but the pc, at every depth, go through a loop of their
 * own, and must come out as the general encoder writes them.
 *
 * A scripted ring of 4000 records (chains at every depth, out-of-range
 * depths, runs broken by another outer frame, another depth, a call from
 * the last record's pc or a heap record, pcs that repeat or not, tick
 * flags and pids that change, stale frames past the depth and a stale
 * pr_why) is streamed; every record must arrive as it was put, in order,
 * and every batch must be byte for byte what pstr_add_record writes for
 * the same records: the tails shared as far as they go, and nothing
 * else different. */
#include "test.h"
#include "fake_hal.h"
#include "fake_profiler.h"
#include "stream_fixture.h"
#include "kernel/cmd/profile.h"
#include "kernel/prof/ring.h"
#include "kernel/prof/session.h"
#include "kernel/prof/stream_encode.h"
#include "kernel/prof/trace.h"
#include "uapi/profile_stream.h"

#define RUN_RECS 4000

static struct prof_record script[RUN_RECS];
static unsigned script_put;
static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng >> 33) % n;
}

static void script_make(void)
{
    rng = 0x9e3779b97f4a7c15ull;
    unsigned i = 0;
    while (i < RUN_RECS) {
        /* A segment: one depth (0 and 9 are out of range, sent as 1),
         * one outer chain out of a few, pcs out of three. */
        unsigned depth = rnd(10), len = 1 + (rnd(4) ? rnd(80) : rnd(3));
        uintptr_t outer[PROF_FRAMES], pcs[3];
        for (unsigned k = 0; k < PROF_FRAMES; k++)
            outer[k] = 0x40000000u + 0x10000u * k + 0x100u * rnd(3);
        for (unsigned k = 0; k < 3; k++)
            pcs[k] = 0x40100000u + 4u * rnd(64);
        for (unsigned j = 0; j < len && i < RUN_RECS; j++, i++) {
            struct prof_record *r = &script[i];
            memset(r, 0, sizeof *r);
            for (unsigned k = 0; k < PROF_FRAMES; k++)
                r->pr_frames[k] = 0xdead0000u + rnd(1 << 16);     /* stale */
            if (rnd(50) == 0) {
                /* A heap sample in the middle of a run. */
                r->pr_pid = 9;
                r->pr_tag = PROF_TAG(0, PROF_KIND_HEAP);
                r->pr_depth = (uint8_t)(1 + rnd(PROF_FRAMES));
                r->pr_weight = 4096 + rnd(4096);
                r->pr_size = 64;
                continue;
            }
            if (rnd(40) == 0)
                outer[1 + rnd(PROF_FRAMES - 1)] ^= 0x8;         /* another caller */
            r->pr_pid = 5 + (int)rnd(3);
            r->pr_tag = PROF_TAG(rnd(2), PROF_KIND_CPU);
            r->pr_why = (uint8_t)rnd(256);                        /* stale: not a CPU sample's */
            r->pr_depth = (uint8_t)depth;
            r->pr_frames[0] = pcs[rnd(3)];
            for (unsigned k = 1; k < depth && k < PROF_FRAMES; k++)
                r->pr_frames[k] = outer[k];
            if (depth >= 1 && depth < PROF_FRAMES && rnd(25) == 0 && i + 1 < RUN_RECS) {
                /* A call from there: the next record's outer frames are
                 * this one's whole chain, its pc included (which a run
                 * may hold apart from the writer's copy). */
                struct prof_record *c = &script[++i];
                *c = *r;
                c->pr_depth = (uint8_t)(depth + 1);
                for (unsigned k = depth; k > 0; k--)
                    c->pr_frames[k] = r->pr_frames[k - 1];
                c->pr_frames[0] = 0x40200000u + 4u * rnd(64);
                j++;
            }
        }
    }
}

/* Every look of the stream's task: as many of the script's records into
 * CPU 0's ring as it has room for, up to 150, so that none is dropped. */
static void script_world(void)
{
    uint32_t first, n = prof_ring_avail(0, &first);
    for (unsigned k = 0; k < 150 && n < prof_ring_cap(0) && script_put < RUN_RECS; k++, n++)
        CHECK_EQ(prof_ring_put(0, &script[script_put++]), PROF_OK);
}

struct got_batch {
    struct pstr_record recs[PSTR_DGRAM_MAX / PSTR_REC_FIXED];
    unsigned n;
};

static void on_rec(void *ctx, const struct pstr_record *r)
{
    struct got_batch *g = ctx;
    if (g->n < sizeof g->recs / sizeof g->recs[0])
        g->recs[g->n] = *r;
    g->n++;
}

/* What the stream must have sent for the script's record i. */
static void check_as_put(const struct pstr_record *r, unsigned i)
{
    const struct prof_record *s = &script[i];
    unsigned depth = s->pr_depth >= 1 && s->pr_depth <= PSTR_FRAMES ? s->pr_depth : 1;
    CHECK_EQ(r->pid, (uint32_t)s->pr_pid);
    CHECK_EQ(r->kind, s->pr_kind);
    CHECK_EQ(r->depth, depth);
    CHECK_EQ(r->flags & PSTR_REC_TICK, s->pr_tick ? PSTR_REC_TICK : 0);
    for (unsigned k = 0; k < depth; k++)
        CHECK_EQ(r->frames[k], s->pr_frames[k]);
    if (s->pr_kind == PROF_KIND_HEAP) {
        CHECK_EQ(r->weight, s->pr_weight);
        CHECK_EQ(r->size, s->pr_size);
    }
}

TEST(stream_runs_encode_as_the_general_path)
{
    static struct got_batch g;
    static struct pstr_writer w;
    script_make();
    for (int inplace = 0; inplace < 2; inplace++) {
        reset();
        cmd_profile_test_reset();
        fake_inplace = inplace;
        script_put = 0;
        char started[256];
        stream_start_confirmed("profile stream 5555 5000 all", 5555, started, sizeof started);
        each_sleep = script_world;
        prof_stream_test_task(NULL);
        each_sleep = NULL;
        CHECK_EQ(script_put, RUN_RECS);
        unsigned seen = 0, batches = 0;
        for (unsigned d = 0; d < fake_ndgrams; d++) {
            struct pstr_hdr h;
            struct pstr_batch b;
            CHECK_EQ(pstr_parse(fake_dgrams[d].d, fake_dgrams[d].len, &h), 0);
            if (h.type != PSTR_BATCH || h.cpu != 0)
                continue;
            g.n = 0;
            CHECK_EQ(pstr_batch_parse(&h, &b, on_rec, &g), 0);
            CHECK_EQ(b.first, seen);
            CHECK_EQ(b.drops_total, 0);
            pstr_begin(&w, PSTR_BATCH, h.cpu, h.stream, h.seq, h.t_ns);
            pstr_batch_head(&w, &b);
            for (unsigned i = 0; i < g.n; i++) {
                check_as_put(&g.recs[i], seen + i);
                CHECK(pstr_add_record(&w, &g.recs[i]));
            }
            CHECK_EQ(pstr_finish(&w), fake_dgrams[d].len);
            CHECK(memcmp(w.buf, fake_dgrams[d].d, fake_dgrams[d].len) == 0);
            seen += g.n;
            batches++;
        }
        CHECK_EQ(seen, RUN_RECS);
        /* Runs of 16- and 8-byte records: far fewer batches than records
         * of a whole chain each (~18 a batch) would take. */
        CHECK(batches < RUN_RECS / 30);
    }
    fake_inplace = false;
    cmd_profile_test_reset();
}

struct lock_recs {
    unsigned n;
    struct pstr_record r[4];
};

static void lock_take_rec(void *ctx, const struct pstr_record *r)
{
    struct lock_recs *s = ctx;
    if (s->n < 4)
        s->r[s->n] = *r;
    s->n++;
}

/* A ring's lock record goes as a PSTR_KIND_LOCK record: its delay, waits,
 * kind and name (cleaned) and the holder's chain, as the parser reads it. */
TEST(stream_lock_record_encodes)
{
    struct prof_record ring[2] = { 0 };
    ring[0].pr_kind = PROF_KIND_LOCK;
    ring[0].pr_pid = 7;
    ring[0].pr_depth = 2;
    ring[0].pr_frames[0] = 0xffffffff80101234ull;
    ring[0].pr_frames[1] = 0xffffffff80105678ull;
    ring[0].pr_weight = 4500000;
    ring[0].pr_waits = 9;
    ring[0].pr_why = PROF_WHY_MUTEX;
    ring[0].pr_name = "big lock";
    ring[1] = ring[0];
    ring[1].pr_why = PROF_WHY_SPIN;
    ring[1].pr_waits = 0;
    ring[1].pr_name = 0;
    struct pstr_writer w;
    pstr_begin(&w, PSTR_BATCH, 0, 1, 0, 0);
    struct pstr_batch b = { 0 };
    pstr_batch_head(&w, &b);
    CHECK_EQ(prof_stream_add(&w, ring, 1, 0, 2), 1);
    CHECK_EQ(prof_stream_add(&w, ring, 1, 1, 1), 1);
    size_t len = pstr_finish(&w);
    struct pstr_hdr h;
    CHECK_EQ(pstr_parse(w.buf, len, &h), 0);
    struct lock_recs got = { 0 };
    CHECK_EQ(pstr_batch_parse(&h, &b, lock_take_rec, &got), 0);
    CHECK_EQ(got.n, 2);
    CHECK_EQ(got.r[0].kind, PSTR_KIND_LOCK);
    CHECK_EQ(got.r[0].pid, 7);
    CHECK_EQ(got.r[0].weight, 4500000);
    CHECK_EQ(got.r[0].waits, 9);
    CHECK_EQ(got.r[0].lkind, PSTR_LOCK_MUTEX);
    CHECK(strcmp(got.r[0].name, "big_lock") == 0);
    CHECK_EQ(got.r[0].depth, 2);
    CHECK_EQ(got.r[0].frames[1], 0xffffffff80105678ull);
    CHECK_EQ(got.r[1].lkind, PSTR_LOCK_SPIN);
    CHECK_EQ(got.r[1].waits, 1);
    CHECK(strcmp(got.r[1].name, "") == 0);
}

/* ---- a trace stream's records (prof_stream_add_trace) ------------------- */

static bool fake_idle(int pid) { return pid == 1; }

static bool fake_vec_name(unsigned vec, char *buf, size_t cap)
{
    if (vec != 43)
        return false;
    snprintf(buf, cap, "virtio net");       /* a space the format refuses */
    return true;
}

static struct pstr_record trace_got[8];
static unsigned trace_ngot;

static void trace_take(void *ctx, const struct pstr_record *r)
{
    if (trace_ngot < 8)
        trace_got[trace_ngot] = *r;
    trace_ngot++;
}

/* Each kind of ring record a trace holds comes out as its event: times
 * made ns since the trace's start (2 ns a unit here), idle as pid 0, a
 * queue's and an interrupt's names cleaned, a record of no trace kind
 * skipped, and a slice's length from its entry and exit. */
TEST(stream_trace_records_are_events)
{
    prof_trace_begin(1000, 2ull << 32);
    const struct prof_stream_trace_names names = { fake_idle, fake_vec_name };
    struct prof_record r[6];
    memset(r, 0, sizeof r);
    r[0].pr_tag = PROF_TAG(1, PROF_KIND_CPU);           /* a sample at 1100 */
    r[0].pr_pid = 5;
    r[0].pr_depth = 2;
    r[0].pr_weight = 1100;
    r[0].pr_frames[0] = 0x4000;
    r[0].pr_frames[1] = 0x5000;
    r[1].pr_tag = PROF_TAG(0, PROF_KIND_TRACE);         /* 5 leaves for waitq q, idle in */
    r[1].pr_why = PROF_TRACE_SWITCH;
    r[1].pr_pid = 5;
    r[1].pr_waker = 1;
    r[1].pr_cost = PROF_TRACE_LEFT_WAITQ;
    r[1].pr_name = "q";
    r[1].pr_weight = 1200;
    r[2].pr_tag = PROF_TAG(0, PROF_KIND_TRACE);         /* 6 woken in irq 43 on idle */
    r[2].pr_why = PROF_TRACE_WAKE;
    r[2].pr_pid = 6;
    r[2].pr_waker = 1;
    r[2].pr_cost = 1;
    r[2].pr_frames[0] = 43 + 1;
    r[2].pr_frames[1] = PROF_TRACE_IRQ_DEVICE;
    r[2].pr_weight = 1300;
    r[3].pr_tag = PROF_TAG(0, PROF_KIND_TRACE);         /* irq 43, 1250 to 1350 */
    r[3].pr_why = PROF_TRACE_IRQ;
    r[3].pr_pid = 1;
    r[3].pr_waker = 43;
    r[3].pr_cost = PROF_TRACE_IRQ_DEVICE;
    r[3].pr_frames[0] = 1250;
    r[3].pr_weight = 1350;
    r[4].pr_tag = PROF_TAG(0, PROF_KIND_OFFCPU);        /* not a trace's: skipped */
    r[4].pr_depth = 1;
    r[4].pr_weight = 10;
    r[5].pr_tag = PROF_TAG(0, PROF_KIND_TRACE);         /* before the start: time 1 */
    r[5].pr_why = PROF_TRACE_SWITCH;
    r[5].pr_pid = 1;
    r[5].pr_waker = 5;
    r[5].pr_weight = 900;
    struct pstr_writer w;
    pstr_begin(&w, PSTR_BATCH, 0, 1, 0, 0);
    struct pstr_batch b = { 0 };
    pstr_batch_head(&w, &b);
    for (unsigned i = 0; i < 6; i++)
        CHECK_EQ(prof_stream_add_trace(&w, &r[i], &names), 1);
    CHECK_EQ(w.count, 5);
    size_t len = pstr_finish(&w);
    struct pstr_hdr h;
    CHECK_EQ(pstr_parse(w.buf, len, &h), 0);
    trace_ngot = 0;
    CHECK_EQ(pstr_batch_parse(&h, &b, trace_take, NULL), 0);
    CHECK_EQ(trace_ngot, 5);
    const struct pstr_record *g = trace_got;
    CHECK_EQ(g[0].kind, PSTR_KIND_TRACE);
    CHECK_EQ(g[0].tev, PSTR_TEV_SAMPLE);
    CHECK_EQ(g[0].weight, 200);
    CHECK_EQ(g[0].flags, PSTR_REC_TICK);
    CHECK_EQ(g[0].depth, 2);
    CHECK_EQ(g[0].frames[1], 0x5000);
    CHECK_EQ(g[1].tev, PSTR_TEV_SWITCH);
    CHECK_EQ(g[1].pid, 5);
    CHECK_EQ(g[1].tother, 0);
    CHECK_EQ(g[1].targ, PSTR_LEFT_WAITQ);
    CHECK_STR(g[1].name, "q");
    CHECK_EQ(g[1].weight, 400);
    CHECK_EQ(g[2].tev, PSTR_TEV_WAKE);
    CHECK_EQ(g[2].pid, 0);
    CHECK_EQ(g[2].tother, 6);
    CHECK_EQ(g[2].twcpu, 1);
    CHECK_EQ(g[2].targ, PROF_TRACE_IRQ_DEVICE);
    CHECK_EQ(g[2].tvec, 43);
    CHECK_STR(g[2].name, "virtio_net");
    CHECK_EQ(g[3].tev, PSTR_TEV_IRQ);
    CHECK_EQ(g[3].weight, 500);
    CHECK_EQ(g[3].tdur, 200);
    CHECK_EQ(g[3].pid, 0);
    CHECK_EQ(g[4].weight, 1);
    CHECK_EQ(g[4].tother, 5);
}
