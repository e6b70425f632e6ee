// LINK: kernel/prof/sample.c kernel/prof/trace.c kernel/prof/trace_hooks.c kernel/prof/ring.c kernel/prof/session.c kernel/prof/offcpu.c kernel/prof/offreport.c kernel/prof/wall.c kernel/prof/stream.c kernel/prof/stream_encode.c kernel/prof/report.c kernel/prof/lockreport.c kernel/prof/export.c kernel/prof/fold.c kernel/prof/fold_order.c kernel/prof/quantile.c kernel/prof/fold_index.c kernel/cmd/profile.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c lib/sha256.c kernel/symtab.c tests/unit/fake_profiler.c kernel/stacks.c kernel/stacktrace.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c lib/printf.c lib/parse.c uapi/profile_raw.c kernel/cmd/profile_heap.c kernel/prof/heapview.c mm/heapprof.c tests/unit/fake_heap_table.c kernel/cmd/profile_stream.c uapi/stream_ctl.c kernel/cmd/profile_say.c kernel/irqname.c
/* tests/unit/test_prof_stream-heap.c: `profile allocs stream`, the
 * allocator's samples in the profile stream (kernel/prof/stream.c,
 * kernel/cmd/profile_heap.c): each sample one heap record with its
 * weight and its block's size, the META's source naming the rate, every
 * sample delivered or counted dropped, the END's totals what arrived; the
 * stream's own argument parser and its errors, and no stream while heap
 * profiling is off. */
#include "test.h"
#include "fake_hal.h"
#include "fake_profiler.h"
#include "stream_fixture.h"
#include "kernel/cmd/profile.h"
#include "kernel/percpu.h"
#include "kernel/prof/ring.h"
#include "kernel/prof/session.h"
#include "kernel/sched.h"
#include "mm/heapprof.h"
#include "uapi/profile_stream.h"
#include <stdlib.h>

/* The allocator's world: every 10 ms, pid 5 on CPU 1 has 4 KiB blocks
 * from site 0x3011 and a 64-byte one from 0x2045 sampled; once, at 200
 * ms, more 64-byte samples than the ring holds. Each block is freed at
 * once (the in-use table stays empty; the stream sees allocations). */
static uint64_t world_t0;
static struct task running;

/* pid allocating on cpu, as the allocator's sampler finds it there. */
static void on_cpu_as(unsigned cpu, int pid)
{
    fake_cpu = cpu;
    running.pid = pid;
    cpus[cpu].current = &running;
}

static unsigned ticks_done, tried_big, tried_small;
static char block[4096];

static void heap_world(void)
{
    while ((ticks_done + 1) * 10ull <= (fake_ns - world_t0) / 1000000) {
        ticks_done++;
        on_cpu_as(1, 5);
        unsigned small = ticks_done == 20 ? 3 * PROF_HEAP_WINDOW_RECS : 1;
        for (unsigned i = 0; i < 3; i++, tried_big++) {
            heapprof_sample(block, 4096, 0x3011);
            heapprof_forget(block);
        }
        for (unsigned i = 0; i < small; i++, tried_small++) {
            heapprof_sample(block, 64, 0x2045);
            heapprof_forget(block);
        }
        fake_cpu = 0;
    }
}

struct heap_seen {
    unsigned big, small, other, cpu_now;
    uint32_t recs[64], end_recs[64], drops_total[64], end_drops[64];
    unsigned metas, ends, bad;
    char source[PSTR_SOURCE_MAX + 1];
};

static void on_heap_rec(void *ctx, const struct pstr_record *r)
{
    struct heap_seen *s = ctx;
    s->recs[s->cpu_now]++;
    bool ours = r->kind == PSTR_KIND_HEAP && r->pid == 5 && s->cpu_now == 1 && r->depth >= 1;
    if (ours && r->size == 4096 && r->frames[0] == 0x3010 && r->weight == heapprof_scale(4096, 4096))
        s->big++;
    else if (ours && r->size == 64 && r->frames[0] == 0x2044 && r->weight == heapprof_scale(64, 4096))
        s->small++;
    else
        s->other++;
}

static void on_end_cpu(void *ctx, const struct pstr_end_cpu *c)
{
    struct heap_seen *s = ctx;
    s->end_recs[c->cpu] = c->records;
    s->end_drops[c->cpu] = c->drops_total;
}

static void decode_heap(struct heap_seen *s)
{
    memset(s, 0, sizeof *s);
    for (unsigned i = 0; i < fake_ndgrams; i++) {
        struct pstr_hdr h;
        if (pstr_parse(fake_dgrams[i].d, fake_dgrams[i].len, &h) != 0) {
            s->bad++;
            continue;
        }
        if (h.type == PSTR_META) {
            struct pstr_meta m;
            s->metas++;
            if (pstr_meta_parse(&h, &m, NULL, NULL) != 0)
                s->bad++;
            memcpy(s->source, m.source, sizeof s->source);
        } else if (h.type == PSTR_BATCH) {
            struct pstr_batch b;
            s->cpu_now = h.cpu;
            if (pstr_batch_parse(&h, &b, on_heap_rec, s) != 0)
                s->bad++;
            s->drops_total[h.cpu] = b.drops_total;
        } else if (h.type == PSTR_END) {
            uint8_t reason;
            s->ends++;
            if (pstr_end_parse(&h, &reason, on_end_cpu, s) != 0)
                s->bad++;
        }
    }
}

/* `profile allocs stream`: each sample is one heap record (weight scaled
 * at the rate, the block's size, the chain from the site), the META says
 * "heap allocs rate R" as a window's raw header does, and every sample is
 * delivered or counted dropped, the END's totals agreeing. */
TEST(stream_allocs_heap_records)
{
    reset();
    heapprof_test_reset();
    heapprof_set_rate(4096);
    ticks_done = tried_big = tried_small = 0;
    world_t0 = fake_ns;
    char started[256], want[128];
    uint32_t id = stream_start_confirmed("profile allocs stream 5555 600 all", 5555, started,
                                  sizeof started);
    snprintf(want, sizeof want, "profile: streaming id 0x%08x to 10.0.2.2:5555 "
             "(heap allocs rate 4096, 4 cpus)\n", id);
    CHECK_STR(started, want);
    each_sleep = heap_world;
    prof_stream_test_task(NULL);
    each_sleep = NULL;

    struct heap_seen s;
    decode_heap(&s);
    CHECK_EQ(s.bad, 0);
    CHECK(s.metas >= 1);
    CHECK_STR(s.source, "heap allocs rate 4096");
    CHECK_EQ(s.ends, 3);
    CHECK_EQ(s.other, 0);
    CHECK(tried_big >= 170);
    CHECK_EQ(s.big + s.small + s.drops_total[1], tried_big + tried_small);
    CHECK(s.drops_total[1] > 0);            /* the burst overflowed the ring */
    CHECK_EQ(s.end_recs[1], s.recs[1]);
    CHECK_EQ(s.end_drops[1], s.drops_total[1]);
    CHECK_EQ(s.recs[0] + s.recs[2] + s.recs[3], 0);
    CHECK_EQ(run_cmd("profile status"), 0);
    CHECK(strstr(said(), "ended (length reached)"));
    /* The profiler is free again: a window after it is a window. */
    CHECK_EQ(run_cmd("profile allocs 100"), 0);
    CHECK(strstr(said(), "heap allocated in 100 ms: rate 4096 bytes") != NULL);
    heapprof_set_rate(0);
}

/* The words: `profile allocs stream` takes the stream's arguments through
 * the stream's one parser, says what was wrong as `profile stream` does,
 * and starts nothing while heap profiling is off. */
TEST(stream_allocs_words)
{
    static const struct { const char *line, *msg; } bad[] = {
        { "profile allocs stream", "profile: stream needs a port (usage: profile "
                                   "[off|wall|allocs|lock] stream <port> [ms|0] [pid|all])\n" },
        { "profile allocs stream 70000", "profile: port 70000 out of range (1-65535)\n" },
        { "profile allocs stream 5555 x", "profile: 'x' is not a stream length (0: until "
                                          "stopped, or 1-86400000 ms)\n" },
        { "profile allocs stream 5555 100 99", "profile: pid 99: no such task\n" },
        { "profile allocs stream 5555 100 all x", "profile: too many arguments (usage: profile "
                                                  "[off|wall|allocs|lock] stream <port> [ms|0] [pid|all])\n" },
    };
    reset();
    heapprof_test_reset();
    heapprof_set_rate(4096);
    stream_from(5555);
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_EQ(run_cmd(bad[i].line), 1);
        CHECK_STR(said(), bad[i].msg);
        CHECK(fake_spawned == NULL);
    }
    heapprof_set_rate(0);
    CHECK_EQ(run_cmd("profile allocs stream 5555 100 all"), 1);
    CHECK_STR(said(), "profile: heap profiling is off; turn it on with profile heap rate "
                     "<bytes> (1-1073741824)\n");
    CHECK(fake_spawned == NULL);
    /* Nothing held: a CPU stream starts, and while it runs a heap one is
     * refused as busy. */
    heapprof_set_rate(4096);
    CHECK_EQ(run_cmd("profile stream 5555 100 all"), 0);
    CHECK(fake_spawned != NULL);
    CHECK_EQ(run_cmd("profile allocs stream 5555 100 all"), 1);
    CHECK(strstr(said(), "profile: busy (streaming id 0x"));
    prof_stream_test_task(NULL);            /* unconfirmed: it ends unheard */
    heapprof_set_rate(0);
}

/* A heap stream for one pid carries that pid's samples alone. */
TEST(stream_allocs_one_pid)
{
    reset();
    heapprof_test_reset();
    heapprof_set_rate(4096);
    char started[256];
    stream_start_confirmed("profile allocs stream 5555 50 7", 5555, started, sizeof started);
    for (int pid = 5; pid <= 7; pid += 2) {
        on_cpu_as(1, pid);
        heapprof_sample(block, 4096, 0x3011);
        heapprof_forget(block);
    }
    fake_cpu = 0;
    prof_stream_test_task(NULL);
    struct heap_seen s;
    decode_heap(&s);
    CHECK_EQ(s.bad, 0);
    CHECK_EQ(s.recs[1], 1);
    CHECK_EQ(s.other, 1);                   /* pid 7's: not the world's pid 5 */
    CHECK_EQ(s.drops_total[1], 0);
    heapprof_set_rate(0);
}
