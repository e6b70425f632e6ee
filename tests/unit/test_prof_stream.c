// LINK: kernel/prof/sample.c kernel/prof/ring.c kernel/prof/session.c kernel/prof/offcpu.c kernel/prof/offreport.c kernel/prof/wall.c kernel/prof/stream.c kernel/prof/report.c kernel/prof/export.c kernel/prof/fold.c kernel/cmd/profile.c uapi/profile_stream.c kernel/symtab.c tests/unit/fake_profiler.c kernel/stacks.c kernel/stacktrace.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c lib/printf.c lib/parse.c uapi/profile_raw.c
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
#include "kernel/cmd/profile.h"
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

static uint32_t stream_id(void)
{
    const char *s = strstr(got(), "streaming id 0x");
    return s ? (uint32_t)strtoul(s + 15, NULL, 16) : 0;
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
    fake_requester = true;
    world_start();
    CHECK_EQ(run_cmd("profile stream 5555 1500 all"), 0);
    CHECK(strstr(got(), "profile: streaming id 0x") && strstr(got(), " to 10.0.2.2:5555 (tick 100Hz, 4 cpus)"));
    uint32_t id = stream_id();
    CHECK(fake_spawned != NULL);
    each_sleep = world;
    uint64_t t0 = fake_ns;
    prof_stream_test_task(NULL);
    each_sleep = NULL;
    CHECK(fake_ns - t0 >= 1500000000ull && fake_ns - t0 < 1550000000ull);
    CHECK_EQ(fake_udp_ip, 0x0a000202);
    CHECK_EQ(fake_udp_dst, 5555);
    CHECK_EQ(fake_udp_src, PROF_STREAM_SRC_PORT);

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
    CHECK(strstr(got(), "ended (length reached)"));
    CHECK(strstr(got(), "0 send failures"));
    /* `net` has the same counters. */
    CHECK(fake_app_stats != NULL);
    buf_printer_init(&bp, out, sizeof out);
    fake_app_stats->print(&bp.pr);
    char line[96];
    snprintf(line, sizeof line, "profile stream: %u records in ", d.recs[0] + d.recs[1] + d.recs[2]);
    CHECK(strncmp(got(), line, strlen(line)) == 0);
    /* The profiler is free again, and a window is a window. */
    CHECK_EQ(run_cmd("profile 100"), 0);
    CHECK(strncmp(got(), "profiled 100 ms", 15) == 0);
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
    fake_requester = true;
    world_start();
    CHECK_EQ(run_cmd("profile stream 6000 300"), 0);
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
    CHECK(strstr(got(), want));
    /* END's totals still count every record the rings delivered. */
    for (unsigned c = 0; c < 2; c++)
        CHECK_EQ(d.end_recs[c] + d.end_drops[c], tried[c]);
}

TEST(stream_ends_without_keepalive)
{
    reset();
    fake_requester = true;
    CHECK_EQ(run_cmd("profile stream 5555 0"), 0);
    uint64_t t0 = fake_ns;
    prof_stream_test_task(NULL);
    uint64_t took = fake_ns - t0;
    CHECK(took >= 5000000000ull && took < 5050000000ull);
    struct decoded d;
    decode_all(&d);
    CHECK_EQ(d.reason, PSTR_END_TIMEOUT);
    CHECK_EQ(run_cmd("profile keepalive 0x1"), 1);
    CHECK_STR(got(), "profile: no stream running\n");
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
        snprintf(busy_seen, sizeof busy_seen, "%s", got());
    }
    if (ms >= 8000 && stop_rc == -1)
        stop_rc = run_cmd("profile stop");   /* the task is us: it cannot end meanwhile */
    in_world = false;
}

TEST(stream_keepalive_busy_stop)
{
    reset();
    fake_requester = true;
    world_start();
    CHECK_EQ(run_cmd("profile stream 5555 0 all"), 0);
    ka_id = stream_id();
    char wrong[64];
    snprintf(wrong, sizeof wrong, "profile keepalive 0x%08x", ka_id ^ 1);
    CHECK_EQ(run_cmd(wrong), 1);
    CHECK(strstr(got(), "is not running"));
    CHECK_EQ(run_cmd("profile stream 5556"), 1);
    char busy[128];
    snprintf(busy, sizeof busy, "profile: busy (streaming id 0x%08x to 10.0.2.2:5555)\n", ka_id);
    CHECK_STR(got(), busy);
    CHECK_EQ(run_cmd("profile_cpus"), 1);
    CHECK(strstr(got(), "profile_cpus: busy (streaming id"));
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
    CHECK_STR(got(), "profile: no stream running\n");
    CHECK_EQ(run_cmd("profile status"), 0);
    CHECK(strstr(got(), "ended (stopped)"));
}

TEST(stream_refusals)
{
    reset();
    CHECK_EQ(run_cmd("profile stream 5555"), 1);
    CHECK_STR(got(), "profile: stream goes to the UDP shell client that asks; use it over the UDP shell\n");
    fake_requester = true;
    CHECK_EQ(run_cmd("profile stream 0"), 1);
    CHECK_STR(got(), "profile: port 0 out of range (1-65535)\n");
    CHECK_EQ(run_cmd("profile stream 70000"), 1);
    CHECK_STR(got(), "profile: port 70000 out of range (1-65535)\n");
    CHECK_EQ(run_cmd("profile stream 5555 86400001"), 1);
    CHECK(strstr(got(), "out of range (0: until stopped, or 1-86400000 ms)"));
    CHECK_EQ(run_cmd("profile stream 5555 10 99"), 1);
    CHECK_STR(got(), "profile: pid 99: no such task\n");
    CHECK_EQ(run_cmd("profile stream 5555 10 12"), 0);      /* a pid that exists */
    prof_stream_test_task(NULL);
    /* No task to be had: nothing left holding the profiler. */
    fake_spawn_fail = 1;
    CHECK_EQ(run_cmd("profile stream 5555"), 1);
    CHECK(strstr(got(), "no memory for the stream's task"));
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
    fake_requester = true;
    world_start();
    CHECK_EQ(run_cmd("profile stream 5555 1000 all"), 0);
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
        /* The first record here is the oldest. */
        CHECK(sent_ms[i] <= 25 * (b.first + 1) + 100);
    }
    CHECK_EQ(next, tried[0]);       /* all of them, the last at the END's drain */
    CHECK(tried[0] >= 39);          /* 40 samples */
    CHECK(batches <= tried[0] / 4 + 2);
    CHECK(two_drains + 1 >= batches);
}

/* The task looks every 25 ms while a ring held more than an eighth of
 * itself at the last drain, and only at the drains (50 ms) otherwise:
 * 1 sample per 10 ms for 500 ms (5 a drain, quiet), then 30 (150 a
 * drain, busy: the ring holds 512). Every sample still arrives. */
static uint64_t last_look_ns;
static unsigned quiet_50, quiet_other, busy_25, busy_other;

static void quiet_then_busy(void)
{
    uint64_t ms = world_ms(), gap = (fake_ns - last_look_ns) / 1000000;
    last_look_ns = fake_ns;
    if (ms > 100 && ms <= 500)
        gap == 50 ? quiet_50++ : quiet_other++;
    if (ms > 600 && ms <= 1000)
        gap == 25 ? busy_25++ : busy_other++;
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
    fake_requester = true;
    world_start();
    last_look_ns = fake_ns;
    CHECK_EQ(run_cmd("profile stream 5555 1000 all"), 0);
    each_sleep = quiet_then_busy;
    prof_stream_test_task(NULL);
    each_sleep = NULL;
    CHECK_EQ(prof_ring_cap(0), 512);
    CHECK(quiet_50 >= 7);
    CHECK_EQ(quiet_other, 0);
    CHECK(busy_25 >= 15);
    CHECK_EQ(busy_other, 0);
    struct decoded d;
    decode_all(&d);
    CHECK_EQ(d.bad, 0);
    CHECK_EQ(d.seq_gaps, 0);
    CHECK_EQ(d.first_gaps, 0);
    CHECK_EQ(d.recs[0], tried[0]);
    CHECK_EQ(d.drops_total[0], 0);
}
