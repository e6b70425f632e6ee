// LINK: kernel/prof/sample.c kernel/prof/trace.c kernel/prof/trace_hooks.c kernel/prof/ring.c kernel/prof/session.c kernel/prof/offcpu.c kernel/prof/offreport.c kernel/prof/wall.c kernel/prof/stream.c kernel/prof/stream_encode.c kernel/prof/report.c kernel/prof/lockreport.c kernel/prof/export.c kernel/prof/fold.c kernel/prof/fold_order.c kernel/prof/quantile.c kernel/prof/fold_index.c kernel/cmd/profile.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c lib/sha256.c kernel/symtab.c tests/unit/fake_profiler.c kernel/stacks.c kernel/stacktrace.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c lib/printf.c lib/parse.c uapi/profile_raw.c kernel/cmd/profile_heap.c kernel/prof/heapview.c mm/heapprof.c tests/unit/fake_heap_table.c kernel/cmd/profile_stream.c uapi/stream_ctl.c kernel/cmd/profile_say.c kernel/irqname.c
/* tests/unit/test_prof_stream.c: the stream that drains the rings
 * (kernel/prof/stream.c), through the UDP sink of kernel/cmd/profile.c.
 *
 * The stream runs whole on the host: its task's body is called in place,
 * every sleep_ms moves the fake clock and lets samples arrive, and every
 * datagram udp_send is handed is read back with the C parser: seq and
 * first indices continuous, drops since the last batch adding up to the
 * total, END totals equal to what arrived, every sample either delivered
 * or counted dropped. */
#include "test.h"
#include "fake_hal.h"
#include "fake_profiler.h"
#include "prof_ring_fixture.h"
#include "stream_fixture.h"
#include "kernel/cmd/profile.h"
#include "kernel/prof/offcpu.h"
#include "kernel/prof/sample.h"
#include "lib/sha256.h"
#include "net/net.h"
#include "uapi/profile_stream.h"
#include <stdlib.h>

struct decoded {
    unsigned metas, batches, ends, bad;
    uint32_t stream;
    uint32_t next_seq, seq_gaps, end_seq;
    uint8_t reason;
    uint16_t meta_cpus;
    unsigned meta_tasks;
    uint32_t recs[64], next_first[64], first_gaps, drops_sum[64], drops_total[64];
    uint32_t end_recs[64], end_drops[64];
    uint32_t last_pc[64];
    bool order_broken;
    unsigned cpu_now;
};

static void on_rec(void *ctx, const struct pstr_record *r)
{
    struct decoded *d = ctx;
    unsigned c = d->cpu_now;
    if (d->recs[c] && r->frames[0] <= d->last_pc[c])
        d->order_broken = true;
    d->last_pc[c] = (uint32_t)r->frames[0];
    d->recs[c]++;
}

static void on_task(void *ctx, uint32_t pid, const char *name)
{
    ((struct decoded *)ctx)->meta_tasks++;
}

static void on_cpu(void *ctx, const struct pstr_end_cpu *c)
{
    struct decoded *d = ctx;
    d->end_recs[c->cpu] = c->records;
    d->end_drops[c->cpu] = c->drops_total;
}

static void decode_all(struct decoded *d)
{
    memset(d, 0, sizeof *d);
    for (unsigned i = 0; i < fake_ndgrams; i++) {
        struct pstr_hdr h;
        if (pstr_parse(fake_dgrams[i].d, fake_dgrams[i].len, &h) != 0) {
            d->bad++;
            continue;
        }
        if (i == 0)
            d->stream = h.stream;
        if (h.stream != d->stream)
            d->bad++;
        if (h.type == PSTR_END && d->ends) {
            d->ends++;              /* a copy: the same seq */
            if (h.seq != d->end_seq)
                d->bad++;
            continue;
        }
        d->seq_gaps += h.seq - d->next_seq;
        d->next_seq = h.seq + 1;
        if (h.type == PSTR_META) {
            struct pstr_meta m;
            d->metas++;
            d->meta_tasks = 0;
            if (pstr_meta_parse(&h, &m, on_task, d) != 0)
                d->bad++;
            d->meta_cpus = m.cpus;
        } else if (h.type == PSTR_BATCH) {
            struct pstr_batch b;
            d->batches++;
            d->cpu_now = h.cpu;
            uint32_t before = d->recs[h.cpu];
            if (pstr_batch_parse(&h, &b, on_rec, d) != 0)
                d->bad++;
            if (b.first != d->next_first[h.cpu])
                d->first_gaps++;
            d->next_first[h.cpu] = b.first + (d->recs[h.cpu] - before);
            d->drops_sum[h.cpu] += b.drops;
            d->drops_total[h.cpu] = b.drops_total;
        } else {
            d->ends++;
            d->end_seq = h.seq;
            if (pstr_end_parse(&h, &d->reason, on_cpu, d) != 0)
                d->bad++;
        }
    }
}

/* What a collector does (stream_fixture.h); the start's answer is kept
 * in started[]. */
static char started[256];

static uint32_t start_confirmed(const char *line, uint16_t port)
{
    return stream_start_confirmed(line, port, started, sizeof started);
}

/* The world runs on the fake clock, not on the stream's looks (which
 * come every 25 or 50 ms, as the rings fill): world_ms is the time since
 * the test started the stream, and each sleep of the task catches up
 * with the samples taken meanwhile. */
static uint64_t world_t0;
static unsigned ticks_done;
static uint32_t burst_at = 40, burst = 700;

static uint64_t world_ms(void)
{
    return (fake_ns - world_t0) / 1000000;
}

static void world_start(void)
{
    world_t0 = fake_ns;
    ticks_done = 0;
}

/* Every 10 ms: CPUs 0 and 1 take a few samples, and once (at 400 ms) CPU
 * 2 takes more than its ring holds in one go. */
static void world(void)
{
    while ((ticks_done + 1) * 10ull <= world_ms()) {
        ticks_done++;
        for (int i = 0; i < 3; i++) {
            sample(0);
            sample(1);
        }
        if (ticks_done == burst_at)
            for (uint32_t i = 0; i < burst; i++)
                sample(2);
    }
}

TEST(stream_accounts_every_sample)
{
    reset();
    memset(tried, 0, sizeof tried);
    world_start();
    uint32_t id = start_confirmed("profile stream 5555 1500 all", 5555);
    char want[96];
    snprintf(want, sizeof want, "profile: streaming id 0x%08x to 10.0.2.2:5555 (tick 100Hz, 4 cpus)\n", id);
    CHECK_STR(started, want);
    CHECK(fake_spawned != NULL);
    each_sleep = world;
    uint64_t t0 = fake_ns;
    prof_stream_test_task(NULL);
    each_sleep = NULL;
    CHECK(fake_ns - t0 >= 1500000000ull && fake_ns - t0 < 1550000000ull);
    CHECK_EQ(fake_udp_ip, 0x0a000202);
    CHECK_EQ(fake_udp_dst, 5555);
    CHECK_EQ(fake_udp_src, CMD_STREAM_SRC_PORT);

    struct decoded d;
    decode_all(&d);
    CHECK_EQ(d.bad, 0);
    CHECK_EQ(d.stream, id);
    CHECK_EQ(d.seq_gaps, 0);
    CHECK_EQ(d.first_gaps, 0);
    CHECK(!d.order_broken);
    CHECK(d.metas >= 2);            /* first, and again a second in */
    CHECK_EQ(d.meta_cpus, 4);
    CHECK_EQ(d.meta_tasks, 4);      /* fake_names: 1 5 7 12 */
    CHECK_EQ(d.ends, 3);
    CHECK_EQ(d.reason, PSTR_END_ELAPSED);
    for (unsigned c = 0; c < 4; c++) {
        CHECK_EQ(d.recs[c] + d.drops_total[c], tried[c]);   /* delivered or counted */
        CHECK_EQ(d.drops_sum[c], d.drops_total[c]);         /* since-last adds up */
        CHECK_EQ(d.end_recs[c], d.recs[c]);
        CHECK_EQ(d.end_drops[c], d.drops_total[c]);
    }
    CHECK_EQ(d.drops_total[2], burst - prof_ring_cap(2));
    CHECK(d.recs[0] >= 440);

    CHECK_EQ(run_cmd("profile status"), 0);
    CHECK(strstr(said(), "ended (length reached)"));
    CHECK(strstr(said(), "0 send failures"));
    /* `net` has the same counters. */
    CHECK(fake_app_stats != NULL);
    buf_printer_init(&bp, out, sizeof out);
    fake_app_stats->print(&bp.pr);
    char line[96];
    snprintf(line, sizeof line, "profile stream: %u records in ", d.recs[0] + d.recs[1] + d.recs[2]);
    CHECK(strncmp(said(), line, strlen(line)) == 0);
    /* The profiler is free again, and a window is a window. */
    CHECK_EQ(run_cmd("profile 100"), 0);
    CHECK(strncmp(said(), "profiled 100 ms", 15) == 0);
}

/* Datagrams the network refuses for longer than the retries last are
 * counted and show as seq gaps; the records in them are lost on the
 * wire, which first + count shows. The drain at 200 ms sends what the one
 * at 150 ms kept back, and its retries last 20 ms a datagram. */
static void flaky_net(void)
{
    fake_udp_rc = world_ms() >= 180 && world_ms() < 230 ? NET_ERR_NOBUF : 0;
}

TEST(stream_lost_datagrams_are_gaps)
{
    reset();
    memset(tried, 0, sizeof tried);
    world_start();
    start_confirmed("profile stream 6000 300", 6000);
    each_sleep = world;
    udp_hook = flaky_net;
    prof_stream_test_task(NULL);
    each_sleep = NULL;
    udp_hook = NULL;
    struct decoded d;
    decode_all(&d);
    CHECK_EQ(d.bad, 0);
    CHECK(d.seq_gaps >= 1);
    CHECK(d.first_gaps >= 1);
    CHECK_EQ(d.reason, PSTR_END_ELAPSED);
    CHECK_EQ(run_cmd("profile status"), 0);
    char want[64];
    snprintf(want, sizeof want, "%u send failures", d.seq_gaps);
    CHECK(strstr(said(), want));
    /* END's totals still count every record the rings delivered. */
    for (unsigned c = 0; c < 2; c++)
        CHECK_EQ(d.end_recs[c] + d.end_drops[c], tried[c]);
}

TEST(stream_ends_without_keepalive)
{
    reset();
    start_confirmed("profile stream 5555 0", 5555);     /* once, and never again */
    uint64_t t0 = fake_ns;
    prof_stream_test_task(NULL);
    uint64_t took = fake_ns - t0;
    CHECK(took >= 5000000000ull && took < 5050000000ull);
    struct decoded d;
    decode_all(&d);
    CHECK_EQ(d.reason, PSTR_END_TIMEOUT);
    CHECK_EQ(run_cmd("profile keepalive 0x1"), 1);
    CHECK_STR(said(), "profile: no stream running\n");
}

/* Keep-alives every second carry a stream past the timeout; meanwhile
 * windowed commands say busy and which stream; a stop ends it. */
static uint32_t ka_id;
static bool in_world;
static char busy_seen[160];
static int stop_rc = -1;
static uint64_t ka_next_ms = 1000;

static void keeping_alive(void)
{
    if (in_world)
        return;                     /* the stop below sleeps too */
    in_world = true;
    uint64_t ms = world_ms();
    if (ms >= ka_next_ms && ms < 8000) {    /* a keep-alive every second */
        char line[64];
        snprintf(line, sizeof line, "profile keepalive 0x%08x", ka_id);
        CHECK_EQ(run_cmd(line), 0);
        ka_next_ms += 1000;
    }
    if (ms >= 3000 && !busy_seen[0]) {
        CHECK_EQ(run_cmd("profile 100"), 1);
        snprintf(busy_seen, sizeof busy_seen, "%s", said());
    }
    if (ms >= 8000 && stop_rc == -1)
        stop_rc = run_cmd("profile stop");   /* the task is us: it cannot end meanwhile */
    in_world = false;
}

TEST(stream_keepalive_busy_stop)
{
    reset();
    world_start();
    ka_id = start_confirmed("profile stream 5555 0 all", 5555);
    char wrong[64];
    snprintf(wrong, sizeof wrong, "profile keepalive 0x%08x", ka_id ^ 1);
    CHECK_EQ(run_cmd(wrong), 1);
    CHECK(strstr(said(), "is not running"));
    CHECK_EQ(run_cmd("profile stream 5556"), 1);
    char busy[128];
    snprintf(busy, sizeof busy, "profile: busy (streaming id 0x%08x to 10.0.2.2:5555)\n", ka_id);
    CHECK_STR(said(), busy);
    CHECK_EQ(run_cmd("profile_cpus"), 1);
    CHECK(strstr(said(), "profile_cpus: busy (streaming id"));
    each_sleep = keeping_alive;
    uint64_t t0 = fake_ns;
    prof_stream_test_task(NULL);
    each_sleep = NULL;
    CHECK(fake_ns - t0 > 7000000000ull);
    CHECK_STR(busy_seen, busy);
    CHECK_EQ(stop_rc, 1);           /* it waited for a task that was its caller */
    struct decoded d;
    decode_all(&d);
    CHECK_EQ(d.reason, PSTR_END_STOPPED);
    CHECK_EQ(run_cmd("profile stop"), 1);
    CHECK_STR(said(), "profile: no stream running\n");
    CHECK_EQ(run_cmd("profile status"), 0);
    CHECK(strstr(said(), "ended (stopped)"));
}

TEST(stream_refusals)
{
    reset();
    CHECK_EQ(run_cmd("profile stream 5555"), 1);
    CHECK_STR(said(), "profile: stream goes to the UDP shell client that asks; use it over the UDP shell\n");
    fake_requester = true;
    CHECK_EQ(run_cmd("profile stream 0"), 1);
    CHECK_STR(said(), "profile: port 0 out of range (1-65535)\n");
    CHECK_EQ(run_cmd("profile stream 70000"), 1);
    CHECK_STR(said(), "profile: port 70000 out of range (1-65535)\n");
    CHECK_EQ(run_cmd("profile stream 5555 86400001"), 1);
    CHECK(strstr(said(), "out of range (0: until stopped, or 1-86400000 ms)"));
    CHECK_EQ(run_cmd("profile stream 5555 10 99"), 1);
    CHECK_STR(said(), "profile: pid 99: no such task\n");
    CHECK_EQ(run_cmd("profile stream 5555 10 12"), 0);      /* a pid that exists */
    prof_stream_test_task(NULL);
    /* No task to be had: nothing left holding the profiler. */
    fake_spawn_fail = 1;
    CHECK_EQ(run_cmd("profile stream 5555"), 1);
    CHECK(strstr(said(), "no memory for the stream's task"));
    fake_spawn_fail = 0;
    CHECK_EQ(run_cmd("profile 10"), 0);
    CHECK_EQ(run_cmd("profile stop"), 1);
}

/* A CPU with less than a datagram's worth at a drain: the drain keeps its
 * records back, and the next sends them with its own in one datagram. So
 * every datagram but the END's drain's holds two drains' records, and no
 * record waits more than two drains (100 ms) after it was taken. One
 * sample every 25 ms: record k is taken at 25 (k + 1) ms. */
static uint64_t sent_ms[FAKE_DGRAMS_MAX];

static void one_sample(void)
{
    while ((ticks_done + 1) * 25ull <= world_ms()) {
        ticks_done++;
        sample(0);
    }
}

static void note_send(void)
{
    if (fake_ndgrams < FAKE_DGRAMS_MAX)
        sent_ms[fake_ndgrams] = world_ms();
}

TEST(stream_part_filled_batches_wait_one_drain)
{
    reset();
    memset(tried, 0, sizeof tried);
    world_start();
    start_confirmed("profile stream 5555 1000 all", 5555);
    each_sleep = one_sample;
    udp_hook = note_send;
    prof_stream_test_task(NULL);
    each_sleep = NULL;
    udp_hook = NULL;
    unsigned batches = 0, two_drains = 0;
    uint32_t next = 0;
    for (unsigned i = 0; i < fake_ndgrams; i++) {
        struct pstr_hdr h;
        struct pstr_batch b;
        CHECK_EQ(pstr_parse(fake_dgrams[i].d, fake_dgrams[i].len, &h), 0);
        if (h.type != PSTR_BATCH || h.cpu != 0 || h.count == 0)
            continue;
        CHECK_EQ(pstr_batch_parse(&h, &b, NULL, NULL), 0);
        CHECK_EQ(b.first, next);    /* nothing lost, nothing sent twice */
        next = b.first + h.count;
        batches++;
        two_drains += h.count >= 3;
        /* The first record here is the oldest: sent by the second
         * drain after it was taken. */
        CHECK(sent_ms[i] <= 25 * (b.first + 1) + 2 * PROF_STREAM_DRAIN_MS);
    }
    CHECK_EQ(next, tried[0]);       /* all of them, the last at the END's drain */
    CHECK(tried[0] >= 39);          /* 40 samples */
    CHECK(batches <= tried[0] / 4 + 2);
    CHECK(two_drains + 1 >= batches);
}

/* The task looks every half drain (50 ms) while a ring held more than an
 * eighth of itself at the last drain, and only at the drains (100 ms)
 * otherwise: 1 sample per 10 ms for 500 ms (10 a drain, quiet), then 30
 * (300 a drain, busy: the ring holds 512). Every sample still arrives. */
static uint64_t last_look_ns;
static unsigned quiet_drain, quiet_other, busy_half, busy_other;

static void quiet_then_busy(void)
{
    uint64_t ms = world_ms(), gap = (fake_ns - last_look_ns) / 1000000;
    last_look_ns = fake_ns;
    if (ms > 2 * PROF_STREAM_DRAIN_MS && ms <= 500)
        gap == PROF_STREAM_DRAIN_MS ? quiet_drain++ : quiet_other++;
    if (ms > 600 + PROF_STREAM_DRAIN_MS && ms <= 1000)
        gap == PROF_STREAM_DRAIN_MS / 2 ? busy_half++ : busy_other++;
    while ((ticks_done + 1) * 10ull <= ms) {
        ticks_done++;
        for (int i = ticks_done > 50 ? 30 : 1; i > 0; i--)
            sample(0);
    }
}

TEST(stream_looks_follow_the_rings)
{
    reset();
    memset(tried, 0, sizeof tried);
    world_start();
    last_look_ns = fake_ns;
    start_confirmed("profile stream 5555 1000 all", 5555);
    each_sleep = quiet_then_busy;
    prof_stream_test_task(NULL);
    each_sleep = NULL;
    CHECK_EQ(prof_ring_cap(0), 512);
    CHECK(quiet_drain >= 2);            /* at 300, 400, 500 ms */
    CHECK_EQ(quiet_other, 0);
    CHECK(busy_half >= 5);              /* every 50 ms from 750 ms on */
    CHECK_EQ(busy_other, 0);
    struct decoded d;
    decode_all(&d);
    CHECK_EQ(d.bad, 0);
    CHECK_EQ(d.seq_gaps, 0);
    CHECK_EQ(d.first_gaps, 0);
    CHECK_EQ(d.recs[0], tried[0]);
    CHECK_EQ(d.drops_total[0], 0);
}

/* ---- streams only to whoever asked ---------------------------------------- */

/* The stream's id in a status asked from its destination. */
static uint32_t id_from_destination(uint16_t port)
{
    stream_from(port);
    CHECK_EQ(run_cmd("profile status"), 0);
    return stream_id_in(got());
}

/* A start asked from elsewhere than the destination (as a spoofed one
 * is): its answer names no id, and until a keep-alive from the
 * destination the stream sends its first META and nothing else, however
 * many samples wait; keep-alives from anywhere else, even with the right
 * id, are refused and counted. Never confirmed, it ends after 5 s with no
 * END: one datagram in all reached the destination. */
static void others_keepalive(void)
{
    if (in_world)
        return;
    in_world = true;
    world();
    uint16_t port = fake_requester_port;
    uint32_t ip = fake_requester_ip;
    if (world_ms() >= ka_next_ms) {
        stream_from(40000);                /* the asker's own port */
        CHECK_EQ(stream_keepalive(ka_id), 1);
        fake_requester_ip = 0x0a000203;     /* the right port on another host */
        fake_requester_port = 5555;
        CHECK_EQ(stream_keepalive(ka_id), 1);
        ka_next_ms += 1000;
    }
    fake_requester_ip = ip;
    fake_requester_port = port;
    in_world = false;
}

TEST(stream_unconfirmed_sends_one_datagram)
{
    reset();
    memset(tried, 0, sizeof tried);
    world_start();
    stream_from(40000);
    CHECK_EQ(run_cmd("profile stream 5555 2000 all"), 0);
    CHECK_STR(said(), "profile: streaming to 10.0.2.2:5555 (tick 100Hz, 4 cpus), once a "
                     "keep-alive from there confirms it\n");
    ka_id = id_from_destination(5555);
    CHECK(ka_id != 0);
    ka_next_ms = 0;
    stream_from(40000);
    each_sleep = others_keepalive;
    uint64_t t0 = fake_ns;
    prof_stream_test_task(NULL);
    each_sleep = NULL;
    /* Not by its 2 s length (it never began), but by the 5 s a
     * keep-alive was awaited, the refused ones not counting. */
    CHECK(fake_ns - t0 >= 5000000000ull && fake_ns - t0 < 5050000000ull);
    CHECK(tried[0] > 400);          /* samples were waiting all along */
    CHECK_EQ(fake_ndgrams, 1);
    struct pstr_hdr h;
    CHECK_EQ(pstr_parse(fake_dgrams[0].d, fake_dgrams[0].len, &h), 0);
    CHECK_EQ(h.type, PSTR_META);
    CHECK_EQ(h.stream, ka_id);
    CHECK_EQ(fake_udp_dst, 5555);
    char want[200];
    stream_from(5555);
    CHECK_EQ(run_cmd("profile status"), 0);
    snprintf(want, sizeof want, "profile: no stream running; the last, 0x%08x, ended (never "
             "confirmed: no keep-alive from its destination within 5 s): 0 records in 1 "
             "datagrams, 0 dropped, 0 send failures, 12 keep-alives refused\n", ka_id);
    CHECK_STR(said(), want);
    stream_from(40000);
    CHECK_EQ(run_cmd("profile status"), 0);
    CHECK(strstr(said(), "the last, to 10.0.2.2:5555, ended (never confirmed"));
    CHECK_EQ(run_cmd("profile 100"), 0);    /* the profiler is free again */
}

/* Only (ip, port) == the destination's keeps a stream alive. Anyone else
 * gets one refusal, the same for the right id as for a wrong one: no
 * guess is confirmed, and the id is never named. */
TEST(stream_keepalive_only_from_destination)
{
    reset();
    uint32_t id = start_confirmed("profile stream 5555 0", 5555);
    char id_hex[16];
    snprintf(id_hex, sizeof id_hex, "%08x", id);
    const char *refusal = "profile: keep-alive refused: a stream is kept alive only from its "
                          "destination, 10.0.2.2:5555\n";
    stream_from(5556);
    CHECK_EQ(stream_keepalive(id), 1);
    CHECK_STR(said(), refusal);
    CHECK_EQ(stream_keepalive(id ^ 0x10), 1);
    CHECK_STR(said(), refusal);
    fake_requester_ip = 0x0a000203;
    fake_requester_port = 5555;
    CHECK_EQ(stream_keepalive(id), 1);
    CHECK_STR(said(), refusal);
    fake_requester = false;         /* the serial console */
    CHECK_EQ(stream_keepalive(id), 1);
    CHECK_STR(said(), refusal);
    /* From the destination: a wrong id is named with the right one. */
    stream_from(5555);
    CHECK_EQ(stream_keepalive(id ^ 0x10), 1);
    char want[96];
    snprintf(want, sizeof want, "profile: stream 0x%08x is not running (0x%08x is)\n", id ^ 0x10, id);
    CHECK_STR(said(), want);
    /* The refused ones kept nothing alive: 5 s after the destination's
     * keep-alive it ends, by timeout. */
    uint64_t t0 = fake_ns;
    prof_stream_test_task(NULL);
    CHECK(fake_ns - t0 >= 5000000000ull && fake_ns - t0 < 5050000000ull);
    struct decoded d;
    decode_all(&d);
    CHECK_EQ(d.reason, PSTR_END_TIMEOUT);
    CHECK_EQ(run_cmd("profile status"), 0);
    CHECK(strstr(said(), ", 4 keep-alives refused\n"));
    CHECK(strstr(said(), id_hex));
}

/* The id goes only to the destination's requests: the start's answer, the
 * status, the busy notes, the stop's summary. Everyone else is told the
 * same facts without it. */
static void check_no_id(const char *text, const char *id_hex)
{
    CHECK(strstr(text, id_hex) == NULL);
    CHECK(strstr(text, "0x") == NULL);
}

TEST(stream_id_only_to_destination)
{
    reset();
    uint32_t id = start_confirmed("profile stream 5555 0", 5555);
    char id_hex[16];
    snprintf(id_hex, sizeof id_hex, "%08x", id);
    CHECK(strstr(started, id_hex));
    /* Another port of the same host, then the serial console. */
    for (int k = 0; k < 2; k++) {
        if (k == 0)
            stream_from(40000);
        else
            fake_requester = false;
        CHECK_EQ(run_cmd("profile status"), 0);
        CHECK(strncmp(said(), "profile: streaming to 10.0.2.2:5555, ", 37) == 0);
        check_no_id(said(), id_hex);
        CHECK_EQ(run_cmd("profile 100"), 1);
        CHECK_STR(said(), "profile: busy (streaming to 10.0.2.2:5555)\n");
        CHECK_EQ(run_cmd("profile_cpus"), 1);
        CHECK_STR(said(), "profile_cpus: busy (streaming to 10.0.2.2:5555)\n");
    }
    stream_from(40000);
    CHECK_EQ(run_cmd("profile stream 5556"), 1);
    CHECK_STR(said(), "profile: busy (streaming to 10.0.2.2:5555)\n");
    stream_from(5555);
    char want[96];
    snprintf(want, sizeof want, "profile: busy (streaming id 0x%08x to 10.0.2.2:5555)\n", id);
    CHECK_EQ(run_cmd("profile 100"), 1);
    CHECK_STR(said(), want);
    CHECK_EQ(run_cmd("profile status"), 0);
    snprintf(want, sizeof want, "profile: streaming id 0x%08x to 10.0.2.2:5555, ", id);
    CHECK(strncmp(said(), want, strlen(want)) == 0);
    /* The stop's summary, asked from elsewhere. The task is run first:
     * the stop waits for it to end. */
    stream_from(40000);
    run_cmd("profile stop");        /* no task ends it here: "still ending" */
    CHECK_STR(said(), "profile: stream to 10.0.2.2:5555 asked to stop; still ending\n");
    prof_stream_test_task(NULL);
    CHECK_EQ(run_cmd("profile status"), 0);
    CHECK_STR(said(), "profile: no stream running; the last, to 10.0.2.2:5555, ended (stopped): "
                     "0 records in 4 datagrams, 0 dropped, 0 send failures, 0 keep-alives refused\n");
}

/* Confirmed late (400 ms in, at 100 Hz a ring holds 5 s): nothing was
 * sent before but the META, and nothing sampled is lost: the first drain
 * after the keep-alive sends the rings' every record. A length shorter
 * than the wait does not end a stream before it began. */
static void confirm_at_400(void)
{
    if (in_world)
        return;
    in_world = true;
    world();
    if (world_ms() >= 400 && !ka_next_ms) {
        CHECK_EQ(fake_ndgrams, 1);  /* the META, alone */
        stream_from(5555);
        CHECK_EQ(stream_keepalive(ka_id), 0);
        ka_next_ms = 1;
    }
    in_world = false;
}

TEST(stream_confirmed_late_loses_nothing)
{
    reset();
    memset(tried, 0, sizeof tried);
    burst_at = 0;                   /* no burst: nothing to drop */
    world_start();
    stream_from(5555);
    CHECK_EQ(run_cmd("profile stream 5555 300 all"), 0);
    ka_id = stream_id_in(got());
    ka_next_ms = 0;
    each_sleep = confirm_at_400;
    prof_stream_test_task(NULL);
    each_sleep = NULL;
    burst_at = 40;
    CHECK_EQ(ka_next_ms, 1);
    CHECK(world_ms() >= 400 && world_ms() < 500);
    struct decoded d;
    decode_all(&d);
    CHECK_EQ(d.bad, 0);
    CHECK_EQ(d.seq_gaps, 0);
    CHECK_EQ(d.first_gaps, 0);
    CHECK_EQ(d.reason, PSTR_END_ELAPSED);
    CHECK(tried[0] >= 120);
    for (unsigned c = 0; c < 2; c++) {
        CHECK_EQ(d.recs[c], tried[c]);
        CHECK_EQ(d.drops_total[c], 0);
        CHECK_EQ(d.end_recs[c], tried[c]);
    }
}

/* A stop before any keep-alive sends no END either. */
TEST(stream_stopped_unconfirmed_sends_no_end)
{
    reset();
    stream_from(40000);
    CHECK_EQ(run_cmd("profile stream 5555 0"), 0);
    run_cmd("profile stop");        /* sets the flag; "still ending": the task is not running */
    prof_stream_test_task(NULL);
    CHECK_EQ(fake_ndgrams, 1);
    CHECK_EQ(run_cmd("profile status"), 0);
    CHECK(strstr(said(), "ended (stopped): 0 records in 1 datagrams"));
}

/* ---- tags (uapi/profile_stream.h, "Tagged datagrams") --------------------- */

static const uint8_t shell_key[PSTR_KEY_LEN] = "the shell's key, 32 bytes long.";
#define SHELL_EPOCH 0x0123456789abcdefull

static bool keyed_shell(struct hmac_sha256 *m, uint64_t *epoch)
{
    hmac_sha256_init(m, shell_key, sizeof shell_key);
    *epoch = SHELL_EPOCH;
    return true;
}

/* A kernel whose shell has a key tags every datagram of its streams
 * under that key and its boot epoch: each one verifies, under no other
 * epoch; one without a key tags none. */
TEST(stream_tagged_under_the_shells_key_and_epoch)
{
    reset();
    memset(tried, 0, sizeof tried);
    fake_keyed = keyed_shell;
    cmd_profile_test_reset();
    world_start();
    start_confirmed("profile stream 5555 300 all", 5555);
    each_sleep = world;
    prof_stream_test_task(NULL);
    each_sleep = NULL;
    static struct pstr_tag_key k, other;
    struct hmac_sha256 m;
    hmac_sha256_init(&m, shell_key, sizeof shell_key);
    pstr_tag_begin(&k, &m, SHELL_EPOCH);
    pstr_tag_begin(&other, &m, SHELL_EPOCH + 1);
    CHECK(fake_ndgrams > 5);
    unsigned tagged = 0;
    for (unsigned i = 0; i < fake_ndgrams; i++) {
        struct pstr_hdr h;
        CHECK_EQ(pstr_parse(fake_dgrams[i].d, fake_dgrams[i].len, &h), 0);
        tagged += h.tagged && pstr_verify(&k, fake_dgrams[i].d, fake_dgrams[i].len) &&
                  !pstr_verify(&other, fake_dgrams[i].d, fake_dgrams[i].len);
    }
    CHECK_EQ(tagged, fake_ndgrams);
    struct decoded d;
    decode_all(&d);                 /* and they still read as a whole stream */
    CHECK_EQ(d.bad, 0);
    CHECK_EQ(d.seq_gaps, 0);
    CHECK_EQ(d.reason, PSTR_END_ELAPSED);
    /* No key: no tag. */
    reset();
    cmd_profile_test_reset();
    start_confirmed("profile stream 5555 100 all", 5555);
    prof_stream_test_task(NULL);
    for (unsigned i = 0; i < fake_ndgrams; i++) {
        struct pstr_hdr h;
        CHECK_EQ(pstr_parse(fake_dgrams[i].d, fake_dgrams[i].len, &h), 0);
        CHECK(!h.tagged);
    }
}

/* Where the sink gives a buffer of its own (udp_reserve: the device's
 * transmit buffer), every BATCH is encoded straight into it and
 * committed (a part-filled one stays open to the next drain, its buffer
 * still the stream's, never handed back); only
 * META and END go through udp_send's copy. Every sample is accounted
 * exactly as on the copying path, and under a key every datagram is
 * still tagged (sealed in place). */
TEST(stream_batches_encoded_in_the_sinks_buffer)
{
    for (int keyed = 0; keyed < 2; keyed++) {
        reset();
        memset(tried, 0, sizeof tried);
        fake_keyed = keyed ? keyed_shell : NULL;
        cmd_profile_test_reset();
        fake_inplace = true;
        world_start();
        start_confirmed("profile stream 5555 1500 all", 5555);
        each_sleep = world;
        prof_stream_test_task(NULL);
        each_sleep = NULL;
        struct decoded d;
        decode_all(&d);
        CHECK_EQ(d.bad, 0);
        CHECK_EQ(d.seq_gaps, 0);
        CHECK_EQ(d.first_gaps, 0);
        CHECK_EQ(d.reason, PSTR_END_ELAPSED);
        for (unsigned c = 0; c < 4; c++) {
            CHECK_EQ(d.recs[c] + d.drops_total[c], tried[c]);
            CHECK_EQ(d.end_recs[c], d.recs[c]);
        }
        CHECK_EQ(fake_inplace_misuse, 0);
        CHECK_EQ(fake_commits, d.batches);
        /* A tagged batch goes without a UDP checksum, its tag being the
         * check; an untagged one with it. */
        CHECK_EQ(fake_unsummed, keyed ? d.batches : 0);
        CHECK_EQ(fake_reserves, fake_commits + fake_cancels);
        CHECK_EQ(fake_cancels, 0);                /* a part-filled batch stays open */
        CHECK_EQ(fake_udp_sends, d.metas + d.ends);
        if (keyed) {
            static struct pstr_tag_key k;
            struct hmac_sha256 m;
            hmac_sha256_init(&m, shell_key, sizeof shell_key);
            pstr_tag_begin(&k, &m, SHELL_EPOCH);
            for (unsigned i = 0; i < fake_ndgrams; i++)
                CHECK(pstr_verify(&k, fake_dgrams[i].d, fake_dgrams[i].len));
        }
    }
    fake_keyed = NULL;
    cmd_profile_test_reset();
}

/* ---- off-CPU streams ------------------------------------------------------ */

/* What one CPU's scheduler would emit: every 10 ms, on CPU 1, intervals
 * of pid 7 waiting on "burn-pp", each woken by pid 9 (its chain with it)
 * and runnable a little; once, at 300 ms, more than the ring holds. */
static uint32_t off_tried, off_burst = 3000;
static const uintptr_t off_chain[3] = { 0x3010, 0x2044, 0x1100 };
static const uintptr_t off_wchain[2] = { 0x5010, 0x5044 };

/* One record as the scheduler writes it into a ring (kernel/prof/offcpu.h:
 * the blocked time, the waker's chain behind it, the runnable time). */
static struct prof_record off_rec(int pid, unsigned why, const char *name, int waker,
                                  uint64_t w, const uintptr_t *frames, unsigned depth)
{
    struct prof_record r = { .pr_pid = pid, .pr_depth = (uint8_t)depth, .pr_why = (uint8_t)why,
                             .pr_tag = PROF_TAG(0, PROF_KIND_OFFCPU), .pr_waker = waker,
                             .pr_weight = w };
    for (unsigned i = 0; i < depth; i++)
        r.pr_frames[i] = frames[i];
    r.pr_name = name;
    return r;
}

static void off_interval(void)
{
    struct prof_record recs[PROF_OFF_RECS] = {
        off_rec(7, PROF_WHY_WAITQ, "burn-pp", 9, 1500, off_chain, 3),
        off_rec(7, PROF_WHY_WAKER, NULL, 9, 1500, off_wchain, 2),
        off_rec(7, PROF_WHY_RUNNABLE, NULL, -1, 100, off_chain, 3),
    };
    fake_cpu = 1;
    prof_emit_n(recs, PROF_OFF_RECS);
    fake_cpu = 0;
    off_tried++;
}

static void off_world(void)
{
    while ((ticks_done + 1) * 10ull <= world_ms()) {
        ticks_done++;
        for (int i = 0; i < 20; i++)
            off_interval();
        if (ticks_done == 30)
            for (uint32_t i = 0; i < off_burst; i++)
                off_interval();
    }
}

/* At the end, pid 12 still waiting on its mutex: charged up to the end,
 * nobody's wake. */
static void off_sweep_one(void)
{
    struct prof_record r = off_rec(12, PROF_WHY_MUTEX, "burn-m", -1, 5000000, off_chain, 0);
    r.pr_frames[0] = 0xdead;            /* stale: past its depth */
    prof_emit_n(&r, 1);
}

struct off_seen {
    unsigned blocked, runnable, swept, other;
    uint64_t blocked_ns;
    unsigned cpu_now;
};

static void on_off_rec(void *ctx, const struct pstr_record *r)
{
    struct off_seen *s = ctx;
    if (r->kind != PSTR_KIND_OFFCPU) {
        s->other++;
    } else if (r->pid == 7 && r->why == PSTR_WHY_WAITQ && strcmp(r->name, "burn-pp") == 0 &&
               r->waker == 9 && r->wdepth == 2 && r->wframes[0] == off_wchain[0] &&
               r->wframes[1] == off_wchain[1] && r->depth == 3 &&
               r->frames[0] == off_chain[0] && r->weight == 1500 && s->cpu_now == 1) {
        s->blocked++;
        s->blocked_ns += r->weight;
    } else if (r->pid == 7 && r->why == PSTR_WHY_RUNNABLE && r->waker == PSTR_WAKER_NONE &&
               r->wdepth == 0 && r->name[0] == 0 && r->weight == 100) {
        s->runnable++;
    } else if (r->pid == 12 && r->why == PSTR_WHY_MUTEX && strcmp(r->name, "burn-m") == 0 &&
               r->waker == PSTR_WAKER_NONE && r->wdepth == 0 && r->weight == 5000000 &&
               r->depth == 1 && r->frames[0] == 0) {
        s->swept++;
    } else {
        s->other++;
    }
}

/* `profile off stream`: each interval arrives as one record with its
 * reason, its queue's name, its waker and the waker's chain (two ring
 * records, one stream record: the batches' first indices count stream
 * records, with no gap); a task still waiting at the end is charged by
 * the sweep; every interval is delivered or counted dropped, and the
 * END's totals are what arrived. */
TEST(stream_off_intervals_with_wakers)
{
    reset();
    world_start();
    off_tried = 0;
    uint32_t id = start_confirmed("profile off stream 5555 600 all", 5555);
    char want[96];
    snprintf(want, sizeof want, "profile: streaming id 0x%08x to 10.0.2.2:5555 (off-CPU, 4 cpus)\n", id);
    CHECK_STR(started, want);
    each_sleep = off_world;
    off_sweep_hook = off_sweep_one;
    unsigned sweeps = off_sweeps;
    prof_stream_test_task(NULL);
    each_sleep = NULL;
    off_sweep_hook = NULL;
    CHECK_EQ(off_sweeps, sweeps + 1);

    struct decoded d;
    decode_all(&d);
    CHECK_EQ(d.bad, 0);
    CHECK_EQ(d.seq_gaps, 0);
    CHECK_EQ(d.first_gaps, 0);
    CHECK_EQ(d.ends, 3);
    /* Every record again, by what it says. */
    struct off_seen s = { 0 };
    for (unsigned i = 0; i < fake_ndgrams; i++) {
        struct pstr_hdr h;
        struct pstr_batch b;
        CHECK_EQ(pstr_parse(fake_dgrams[i].d, fake_dgrams[i].len, &h), 0);
        if (h.type == PSTR_META) {
            struct pstr_meta m;
            CHECK_EQ(pstr_meta_parse(&h, &m, NULL, NULL), 0);
            CHECK_STR(m.source, "sched");
        }
        if (h.type != PSTR_BATCH)
            continue;
        s.cpu_now = h.cpu;
        CHECK_EQ(pstr_batch_parse(&h, &b, on_off_rec, &s), 0);
    }
    CHECK_EQ(s.other, 0);
    CHECK_EQ(s.swept, 1);
    CHECK_EQ(s.blocked, s.runnable);
    CHECK(s.blocked > 1000);
    /* An interval dropped is one drop: delivered + dropped = emitted. */
    CHECK_EQ(s.blocked + d.drops_total[1], off_tried);
    CHECK(d.drops_total[1] > 0);
    CHECK_EQ(d.end_recs[1], s.blocked + s.runnable);
    CHECK_EQ(d.recs[1], s.blocked + s.runnable);
    CHECK_EQ(d.end_drops[1], d.drops_total[1]);
    CHECK_EQ(run_cmd("profile status"), 0);
    CHECK(strstr(said(), "ended (length reached)"));
}

/* The words: `profile off|wall stream` take the stream's arguments and
 * say what was wrong as `profile stream` does; latency has no stream. */
TEST(stream_off_words)
{
    reset();
    stream_from(5555);
    CHECK_EQ(run_cmd("profile off stream"), 1);
    CHECK_STR(said(), "profile: stream needs a port (usage: profile [off|wall|allocs|lock] stream <port> [ms|0] [pid|all])\n");
    CHECK_EQ(run_cmd("profile wall stream 70000"), 1);
    CHECK_STR(said(), "profile: port 70000 out of range (1-65535)\n");
    CHECK_EQ(run_cmd("profile off stream 5555 100 99"), 1);
    CHECK_STR(said(), "profile: pid 99: no such task\n");
    CHECK_EQ(run_cmd("profile latency stream"), 1);
    CHECK_EQ(run_cmd("profile wall stream 5555 100 all"), 0);
    CHECK(strstr(said(), "(tick 100Hz and off-CPU, 4 cpus)"));
    CHECK_EQ(run_cmd("profile off stream 5555 100 all"), 1);
    CHECK(strstr(said(), "profile: busy (streaming id 0x"));
}
