// LINK: tools/fleet/sim.c tools/ingest/stream.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/stream_ctl.c
/* tests/unit/test_fleet_sim.c: the fleet generator's simulated kernel
 * (tools/fleet/sim.c), on a fake clock: what it sends parses with the
 * stream's own parsers (uapi/profile_stream.c uapi/profile_stream_meta.c), every field in range;
 * it answers the shell as a kernel does (one META until its destination
 * confirms, keep-alives from there only, the id to the destination only,
 * END on stop, timeout and elapsed); and the loss, copies and reordering
 * it injects are each counted exactly, by it and by the host's own
 * accounting (tools/ingest/stream.c) fed what it sent. */
#include "test.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/fleet/sim.h"
#include "tools/ingest/stream.h"

#define BID "0123456789abcdef0123456789abcdef01234567"
#define HOST 0x7f000001u
#define PORT 40000
#define MS   1000000ull

static const char *builds[] = { BID };
static const uint64_t stacks[3][PSTR_FRAMES] = {
    { 0xffffffff80101004, 0xffffffff80102008 },
    { 0xffffffff80103000, 0xffffffff80104000, 0xffffffff80105000, 0xffffffff80106000,
      0xffffffff80107000, 0xffffffff80108000, 0xffffffff80109000, 0xffffffff8010a000 },
    { 0xffffffff8010b000 },
};
static const uint8_t depths[3] = { 2, 8, 1 };

/* What the fake network carried, checked as it went. */
struct wire {
    struct sp_stream s;
    uint64_t dgrams, metas, batches, ends, late, bad, delivered, records_in_dups;
    uint32_t max_seq;
    bool any;
    uint32_t dest_ip;
    uint16_t dest_port;
    uint8_t end_reason;
    char build_id[PSTR_BUILD_ID_HEX + 1];
};

static void on_record(void *ctx, uint16_t cpu, const struct pstr_record *r)
{
    struct wire *w = ctx;
    if (cpu >= 4 || r->pid > FLEET_TASKS || r->depth < 1 || r->depth > PSTR_FRAMES ||
        r->flags != PSTR_REC_TICK || r->kind != PSTR_KIND_CPU || r->frames[0] == 0)
        w->bad++;
    w->delivered++;
}

static void on_task(void *ctx, uint32_t pid, const char *name)
{
    char want[32];
    fleet_task_name(3, pid, want, sizeof want);
    if (strcmp(name, want) != 0)
        ((struct wire *)ctx)->bad++;
}

static void no_record(void *ctx, const struct pstr_record *r)
{
    (void)ctx;
    (void)r;
}

static void on_end_cpu(void *ctx, const struct pstr_end_cpu *c)
{
    (void)ctx;
    (void)c;
}

static void capture(void *ctx, uint32_t ip, uint16_t port, const void *d, size_t n)
{
    struct wire *w = ctx;
    struct pstr_hdr h;
    w->dgrams++;
    w->dest_ip = ip;
    w->dest_port = port;
    if (pstr_parse(d, n, &h) != 0) {
        w->bad++;
        return;
    }
    if (w->any && (int32_t)(h.seq - w->max_seq) < 0 && h.type == PSTR_BATCH)
        w->late++;                  /* came after one numbered past it */
    if (!w->any || (int32_t)(h.seq - w->max_seq) > 0)
        w->max_seq = h.seq;
    w->any = true;
    if (h.type == PSTR_META) {
        struct pstr_meta m;
        w->metas++;
        if (pstr_meta_parse(&h, &m, on_task, w) != 0 || m.cpus != 4 || m.period_ns != 1000000)
            w->bad++;
        memcpy(w->build_id, m.build_id, sizeof w->build_id);
    } else if (h.type == PSTR_BATCH) {
        struct pstr_batch b;
        w->batches++;
        if (pstr_batch_parse(&h, &b, no_record, NULL) != 0 || h.count == 0)
            w->bad++;
    } else {
        w->ends++;
        if (pstr_end_parse(&h, &w->end_reason, on_end_cpu, NULL) != 0 || h.count != 4)
            w->bad++;
    }
    uint64_t before = w->s.records;
    int r = sp_stream_take(&w->s, &h, 0, on_record, w);
    if (r == SP_STREAM_DUP && h.type == PSTR_BATCH)
        w->records_in_dups += h.count;
    (void)before;
}

static struct fleet_cfg cfg(double loss, double dup, double reorder)
{
    return (struct fleet_cfg){ .cpus = 4, .hz = 1000, .loss = loss, .dup = dup,
                               .reorder = reorder, .seed = 42, .build_ids = builds,
                               .nbuilds = 1, .stacks = stacks, .depths = depths,
                               .nstacks = 3 };
}

static void shell(struct fleet_kernel *k, const char *cmd, uint16_t from_port, uint64_t now,
                  char *out, size_t cap)
{
    fleet_shell(k, cmd, strlen(cmd), HOST, from_port, now, out, cap);
}

/* The reply's text for people: past its control line. */
static const char *human(const char *out)
{
    const char *nl = strncmp(out, "stream v=1 ", 11) == 0 ? strchr(out, '\n') : NULL;
    CHECK(nl != NULL);
    return nl ? nl + 1 : out;
}

/* A stream of ms started and confirmed at t = 0, ticked every 2 ms to its
 * end. */
static void run_stream(struct fleet_kernel *k, struct wire *w, unsigned ms)
{
    char out[FLEET_REPLY_MAX], cmd[64];
    uint32_t id = 0;
    sp_stream_init(&w->s, 0);
    snprintf(cmd, sizeof cmd, "profile stream %u %u all", PORT, ms);
    shell(k, cmd, PORT, 0, out, sizeof out);
    struct sctl_line l;
    CHECK_EQ(sctl_find(out, strlen(out), &l), 0);
    CHECK_EQ(l.sl_result, SCTL_OK);
    CHECK(l.sl_have & SCTL_HAVE_ID);
    CHECK(sscanf(human(out), "profile: streaming id 0x%x to 127.0.0.1:40000", &id) == 1);
    CHECK_EQ(l.sl_id, id);
    w->s.id = id;
    snprintf(cmd, sizeof cmd, "profile keepalive 0x%08x", id);
    shell(k, cmd, PORT, 0, out, sizeof out);
    for (uint64_t t = 2 * MS; k->on; t += 2 * MS) {
        if (t % (1000 * MS) == 0)
            shell(k, cmd, PORT, t, out, sizeof out);
        fleet_tick(k, t);
    }
}

TEST(a_stream_parses_with_the_streams_own_parsers_and_is_exact_without_injection)
{
    struct fleet_cfg c = cfg(0, 0, 0);
    struct fleet_kernel k;
    struct wire w = { .bad = 0 };
    CHECK_STR(fleet_cfg_check(&c), "");
    fleet_kernel_init(&k, &c, 3, capture, &w);
    run_stream(&k, &w, 2000);
    CHECK_EQ(w.bad, 0);
    CHECK_EQ(w.dest_ip, HOST);
    CHECK_EQ(w.dest_port, PORT);
    CHECK_STR(w.build_id, BID);
    CHECK_EQ(w.ends, 3);
    CHECK_EQ(w.end_reason, PSTR_END_ELAPSED);
    CHECK(w.metas >= 2);            /* the first, then about every second */
    /* 2 s at 1000 Hz on 4 CPUs, every one sent and taken. */
    CHECK_EQ(k.n.records, 8000);
    CHECK_EQ(w.delivered, 8000);
    CHECK_EQ(w.s.lost_records, 0);
    CHECK_EQ(w.s.lost_dgrams, 0);
    CHECK_EQ(w.s.dups, 2);          /* the END's second and third copies */
    CHECK(w.s.ended);
    CHECK_EQ(k.n.stream_ns, 2000 * MS);
    sp_stream_free(&w.s);
}

/* Each injection alone, then all three: the generator's count and the
 * host's accounting agree exactly, and each injection happened. */
static void injected(double loss, double dup, double reorder)
{
    struct fleet_cfg c = cfg(loss, dup, reorder);
    struct fleet_kernel k;
    struct wire w = { .bad = 0 };
    fleet_kernel_init(&k, &c, 3, capture, &w);
    run_stream(&k, &w, 3000);
    CHECK_EQ(w.bad, 0);
    CHECK_EQ(k.n.records, 12000);
    CHECK(w.s.ended);
    CHECK_EQ(w.s.lost_records, k.n.lost_records);
    CHECK_EQ(w.s.lost_dgrams, k.n.lost_dgrams);
    CHECK_EQ(w.delivered, k.n.records - k.n.lost_records);
    CHECK_EQ(w.s.dups, k.n.dups + 2);
    CHECK_EQ(w.s.end_dups, 2);      /* the END's copies, told apart */
    CHECK_EQ(w.late, k.n.reordered);
    CHECK_EQ(w.records_in_dups > 0, k.n.dups > 0);
    CHECK_EQ(w.dgrams, k.n.datagrams);
    CHECK_EQ(k.n.lost_dgrams > 0, loss > 0);
    CHECK_EQ(k.n.dups > 0, dup > 0);
    CHECK_EQ(k.n.reordered > 0, reorder > 0);
    CHECK_EQ(k.n.lost_records > 0, loss > 0);
    sp_stream_free(&w.s);
}

TEST(loss_alone_is_accounted_exactly) { injected(0.1, 0, 0); }
TEST(copies_alone_are_accounted_exactly) { injected(0, 0.1, 0); }
TEST(reordering_alone_loses_nothing) { injected(0, 0, 0.2); }
TEST(all_three_together_are_accounted_exactly) { injected(0.1, 0.05, 0.1); }

TEST(one_meta_until_the_destination_confirms_and_keepalives_from_there_only)
{
    struct fleet_cfg c = cfg(0, 0, 0);
    struct fleet_kernel k;
    struct wire w = { .bad = 0 };
    char out[FLEET_REPLY_MAX];
    sp_stream_init(&w.s, 0);
    fleet_kernel_init(&k, &c, 3, capture, &w);
    /* Asked from another port than the destination: the id is not told. */
    shell(&k, "profile stream 40000 0 all", 41000, 0, out, sizeof out);
    CHECK(strncmp(human(out), "profile: streaming to 127.0.0.1:40000, once", 43) == 0);
    CHECK(strncmp(out, "stream v=1 op=start result=ok state=streaming to=127.0.0.1:40000 ", 65) == 0);
    for (uint64_t t = 0; t < 500 * MS; t += 10 * MS)
        fleet_tick(&k, t);
    CHECK_EQ(w.dgrams, 1);
    CHECK_EQ(w.metas, 1);
    char cmd[64];
    snprintf(cmd, sizeof cmd, "profile keepalive 0x%08x", k.id);
    shell(&k, cmd, 41000, 500 * MS, out, sizeof out);
    CHECK(strncmp(human(out), "profile: keep-alive refused", 27) == 0);
    CHECK(strncmp(out, "stream v=1 op=keepalive result=refused state=streaming to=", 58) == 0);
    CHECK(!k.confirmed);
    shell(&k, "profile keepalive 0x1", PORT, 500 * MS, out, sizeof out);
    CHECK(strstr(human(out), "is not running") != NULL);
    CHECK(strstr(out, " result=other ") != NULL);
    shell(&k, "profile stream 40001 0 all", PORT, 500 * MS, out, sizeof out);
    CHECK(strncmp(human(out), "profile: busy", 13) == 0);
    CHECK(strncmp(out, "stream v=1 op=start result=busy ", 32) == 0);
    /* Never confirmed: it ends at 5 s without an END. */
    for (uint64_t t = 500 * MS; t <= 5100 * MS; t += 10 * MS)
        fleet_tick(&k, t);
    CHECK(!k.on);
    CHECK_EQ(w.ends, 0);
    CHECK_EQ(w.dgrams, 1);
    shell(&k, "profile status", 41000, 6000 * MS, out, sizeof out);
    CHECK(strncmp(human(out), "profile: no stream running; the last, to 127.0.0.1:40000", 56) == 0);
    CHECK(strstr(out, " reason=unconfirmed\n") != NULL);
    CHECK(strstr(out, "last=") == NULL);        /* asked from elsewhere: no id */
    sp_stream_free(&w.s);
}

TEST(status_stop_and_timeout_are_worded_as_the_collector_reads_them)
{
    struct fleet_cfg c = cfg(0, 0, 0);
    struct fleet_kernel k;
    struct wire w = { .bad = 0 };
    char out[FLEET_REPLY_MAX], want[200], cmd[64];
    sp_stream_init(&w.s, 0);
    fleet_kernel_init(&k, &c, 3, capture, &w);
    shell(&k, "profile status", PORT, 0, out, sizeof out);
    CHECK_STR(out, "stream v=1 op=status result=ok state=none\nprofile: no stream since boot\n");
    shell(&k, "profile stream 40000 0 all", PORT, 0, out, sizeof out);
    snprintf(cmd, sizeof cmd, "profile keepalive 0x%08x", k.id);
    shell(&k, cmd, PORT, 0, out, sizeof out);
    snprintf(want, sizeof want, "stream v=1 op=status result=ok state=streaming id=0x%08x "
             "to=127.0.0.1:40000 kind=cpu cpus=4 len=0 age=10 confirmed=1 ka=10\n", k.id);
    shell(&k, "profile status", PORT, 10 * MS, out, sizeof out);
    CHECK(strncmp(out, want, strlen(want)) == 0);
    snprintf(want, sizeof want, "profile: streaming id 0x%08x to 127.0.0.1:40000, ", k.id);
    CHECK(strncmp(human(out), want, strlen(want)) == 0);
    fleet_tick(&k, 150 * MS);
    shell(&k, "profile stop", PORT, 200 * MS, out, sizeof out);
    snprintf(want, sizeof want, "profile: stream 0x%08x stopped\n", k.id);
    CHECK_STR(human(out), want);
    snprintf(want, sizeof want, "stream v=1 op=stop result=ok state=ended id=0x%08x "
             "to=127.0.0.1:40000 kind=cpu cpus=4 reason=stopped\n", k.id);
    CHECK(strncmp(out, want, strlen(want)) == 0);
    CHECK_EQ(w.ends, 3);
    CHECK_EQ(w.end_reason, PSTR_END_STOPPED);
    snprintf(want, sizeof want, "profile: no stream running; the last, 0x%08x, ended", k.id);
    shell(&k, "profile status", PORT, 300 * MS, out, sizeof out);
    CHECK(strncmp(human(out), want, strlen(want)) == 0);
    snprintf(want, sizeof want, " state=ended last=0x%08x ", k.id);
    CHECK(strstr(out, want) != NULL);
    /* A confirmed stream without keep-alives ends itself, with its END. */
    shell(&k, "profile stream 40000 0 all", PORT, 1000 * MS, out, sizeof out);
    snprintf(cmd, sizeof cmd, "profile keepalive 0x%08x", k.id);
    shell(&k, cmd, PORT, 1000 * MS, out, sizeof out);
    for (uint64_t t = 1000 * MS; k.on; t += 10 * MS)
        fleet_tick(&k, t);
    CHECK_EQ(w.ends, 6);
    CHECK_EQ(w.end_reason, PSTR_END_TIMEOUT);
    CHECK_EQ(k.n.streams, 2);
    CHECK_EQ(w.bad, 0);
    sp_stream_free(&w.s);
}

TEST(bad_commands_and_configurations_say_what_is_allowed)
{
    struct fleet_cfg c = cfg(0, 0, 0);
    struct fleet_kernel k;
    struct wire w = { .bad = 0 };
    char out[FLEET_REPLY_MAX];
    fleet_kernel_init(&k, &c, 0, capture, &w);
    shell(&k, "profile stream 0", PORT, 0, out, sizeof out);
    CHECK(strstr(out, "PORT 1-65535") != NULL);
    CHECK(strncmp(out, "stream v=1 op=start result=invalid state=none\n", 46) == 0);
    shell(&k, "profile stream 40000 -5", PORT, 0, out, sizeof out);
    CHECK(strstr(out, "MS 0-86400000") != NULL);
    shell(&k, "profile keepalive zz", PORT, 0, out, sizeof out);
    CHECK(strstr(out, "usage: profile keepalive ID") != NULL);
    shell(&k, "help", PORT, 0, out, sizeof out);
    CHECK(strstr(out, "only `profile") != NULL);
    CHECK_EQ(w.dgrams, 0);
    c.cpus = 9;
    CHECK_STR(fleet_cfg_check(&c), "cpus out of range (1-8)");
    c = cfg(0.6, 0.3, 0.2);
    CHECK(strstr(fleet_cfg_check(&c), "together at most 1") != NULL);
    c = cfg(0, 0, 0);
    c.hz = 0;
    CHECK(strstr(fleet_cfg_check(&c), "rate out of range") != NULL);
    static const char *upper[] = { "0123456789ABCDEF0123456789abcdef01234567" };
    c = cfg(0, 0, 0);
    c.build_ids = upper;
    CHECK(strstr(fleet_cfg_check(&c), "40 lowercase hex") != NULL);
}

/* The generator reads its clock once per tick and answers shells within
 * it: a request may stamp a kernel later than the tick's clock. */
TEST(a_tick_older_than_the_last_request_changes_nothing)
{
    struct fleet_cfg c = cfg(0, 0, 0);
    struct fleet_kernel k;
    struct wire w = { .bad = 0 };
    char out[FLEET_REPLY_MAX], cmd[64];
    sp_stream_init(&w.s, 0);
    fleet_kernel_init(&k, &c, 3, capture, &w);
    shell(&k, "profile stream 40000 1000 all", PORT, 100 * MS, out, sizeof out);
    snprintf(cmd, sizeof cmd, "profile keepalive 0x%08x", k.id);
    shell(&k, cmd, PORT, 120 * MS, out, sizeof out);
    fleet_tick(&k, 90 * MS);
    fleet_tick(&k, 110 * MS);
    CHECK(k.on);
    CHECK_EQ(w.ends, 0);
    CHECK_EQ(w.dgrams, 1);          /* the first META alone */
    for (uint64_t t = 120 * MS; k.on; t += 5 * MS)
        fleet_tick(&k, t);
    CHECK_EQ(w.end_reason, PSTR_END_ELAPSED);
    CHECK_EQ(k.n.records, 4 * 980);   /* 980 ms confirmed, 1000 Hz, 4 CPUs */
    CHECK_EQ(w.delivered, 4 * 980);
    sp_stream_free(&w.s);
}

/* A generator that fell a second behind makes FLEET_LAG_NS of records (or
 * a full batch) a tick, not the second's at once: no burst, and what it never made is
 * counted apart, not sent nor lost. */
TEST(a_generator_behind_its_schedule_slows_down_without_a_burst)
{
    struct fleet_cfg c = cfg(0, 0, 0);
    struct fleet_kernel k;
    struct wire w = { .bad = 0 };
    char out[FLEET_REPLY_MAX], cmd[64];
    sp_stream_init(&w.s, 0);
    fleet_kernel_init(&k, &c, 3, capture, &w);
    shell(&k, "profile stream 40000 2000 all", PORT, 0, out, sizeof out);
    snprintf(cmd, sizeof cmd, "profile keepalive 0x%08x", k.id);
    shell(&k, cmd, PORT, 0, out, sizeof out);
    /* 50 ms at 1000 Hz a CPU, or a full batch where that is more. */
    const uint32_t tick = FLEET_BATCH_MOST > 50 ? FLEET_BATCH_MOST : 50;
    fleet_tick(&k, 1000 * MS);          /* the first tick, a second late */
    CHECK_EQ(k.n.records, 4 * tick);
    fleet_tick(&k, 2000 * MS);          /* and the last, as late */
    CHECK(!k.on);
    CHECK_EQ(w.end_reason, PSTR_END_ELAPSED);
    CHECK_EQ(k.n.records, 4 * 2 * tick);
    CHECK_EQ(k.n.unmade, 4 * (2000 - 2 * tick));
    CHECK_EQ(w.delivered, 4 * 2 * tick);
    CHECK_EQ(w.s.lost_records, 0);      /* the END says what was made */
    CHECK_EQ(w.bad, 0);
    sp_stream_free(&w.s);
}
