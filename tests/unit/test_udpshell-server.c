// LINK: net/udpshell.c net/udpshell_fresh.c uapi/udpshell.c uapi/udpshell_auth.c lib/sha256.c lib/printf.c lib/parse.c tests/unit/fake_net.c
/* tests/unit/test_udpshell-server.c: the real UDP shell (net/udpshell.c)
 * against a fake network (fake_net.c) and a fake shell: requests go in
 * through the bound handler, the test plays the shell's task with
 * udpshell_run_next, and the reply datagrams are reassembled from what
 * udp_send captured.
 *
 * The shell's state is static and lives for the whole run, so each test
 * uses senders of its own (a fresh address) and never assumes the queue or
 * the kept replies start empty, except where it empties them itself. */
#include "test.h"
#include "sbuf.h"
#include <stdlib.h>
#include "fake_net.h"
#include "kernel/console.h"
#include "kernel/sched.h"
#include "kernel/shell.h"
#include "mm/heap.h"
#include "net/udpshell.h"
#include "uapi/byteorder.h"

/* ---- fakes of the scheduler, heap, console and shell ---- */

static struct task fake_task;
static task_fn spawned_fn;
struct task *task_spawn(const char *name, task_fn fn, void *arg, int cpu, unsigned flags)
{
    spawned_fn = fn;
    return &fake_task;
}
struct task *task_current(void) { return &fake_task; }
void waitq_wait(struct waitq *wq, bool (*cond)(void *), void *arg) { abort(); }
void waitq_wake_all(struct waitq *wq) {}
void kprintf(const char *fmt, ...) {}

static long heap_live;                 /* kmalloc'd and not freed */
void *kmalloc(size_t size) { heap_live++; return malloc(size); }
void kfree(void *p) { if (p) heap_live--; free(p); }

/* The fake shell: "echo WORDS" prints WORDS and a newline, "big N" prints
 * N bytes of a pattern, "again" delivers the request being run once more
 * (a retransmit arriving while the command runs). Every line run is
 * counted by its first letter. */
static int runs[128];
static char last_line[300];
static struct { uint32_t ip; uint16_t port; uint8_t d[300]; size_t len; } rerun;

static char pattern_byte(size_t i) { return (char)('a' + (i * 7 + i / 1400) % 26); }

void shell_run_line(char *line, struct printer *p)
{
    runs[(unsigned char)line[0] & 127]++;
    snprintf(last_line, sizeof last_line, "%s", line);
    if (strncmp(line, "echo ", 5) == 0) {
        pr_printf(p, "%s\n", line + 5);
    } else if (strncmp(line, "big ", 4) == 0) {
        size_t n = strtoul(line + 4, NULL, 10);
        char block[4096];
        for (size_t off = 0; off < n;) {
            size_t k = n - off < sizeof block ? n - off : sizeof block;
            for (size_t i = 0; i < k; i++)
                block[i] = pattern_byte(off + i);
            pr_write(p, block, k);
            off += k;
        }
    } else if (strcmp(line, "again") == 0) {
        fake_net_deliver(rerun.ip, rerun.port, rerun.d, rerun.len);
        pr_puts(p, "ran\n");
    }
}

/* ---- helpers ---- */

static uint32_t next_ip = 0x0a000100;  /* a fresh sender per call */
static uint32_t new_sender(void) { return ++next_ip; }

static size_t mkreq(uint8_t *d, uint32_t seq, const char *cmd)
{
    return ushp_build(d, USHP_HDR_LEN + USHP_CMD_MAX, seq, 0, true, cmd, strlen(cmd));
}

static void send_req(uint32_t ip, uint16_t port, uint32_t seq, const char *cmd)
{
    uint8_t d[USHP_HDR_LEN + USHP_CMD_MAX];
    fake_net_deliver(ip, port, d, mkreq(d, seq, cmd));
}

static void start_once(void)
{
    static bool started;
    if (!started) {
        udpshell_set_runner(shell_run_line);
        CHECK_EQ(udpshell_start(9000), 0);
        started = true;
    }
    while (udpshell_run_next())         /* whatever an earlier test left */
        ;
    fake_net_clear();
}

struct reply {
    char *text;                        /* reassembled payload, NUL-terminated */
    size_t len;
    int chunks;
    bool whole;                        /* chunks 0..last in order, one last, all to ip:port,
                                          one reply id, never 0 */
    uint16_t id;
};

/* Reassemble the captured datagrams for (ip, port, seq). */
static struct reply reply_of(uint32_t ip, uint16_t port, uint32_t seq)
{
    struct reply r = { malloc(1), 0, 0, true, 0 };
    bool seen_last = false;
    for (size_t i = 0; i < fake_nsent; i++) {
        struct fake_dgram *g = &fake_sent[i];
        struct ushp_hdr h;
        const uint8_t *pl;
        if (ushp_parse_reply(g->data, g->len, &h, &pl) != 0) {
            r.whole = false;
            continue;
        }
        if (h.seq != seq || g->ip != ip || g->dport != port)
            continue;
        /* Every chunk says it is a reply, so no shell takes it for a request. */
        if (g->sport != 9000 || h.chunk != r.chunks || seen_last ||
            !(h.flags & USHP_FLAG_REPLY) || h.id == 0 || (r.chunks && h.id != r.id))
            r.whole = false;
        r.id = h.id;
        seen_last = h.flags & USHP_FLAG_LAST;
        r.text = realloc(r.text, r.len + h.len + 1);
        memcpy(r.text + r.len, pl, h.len);
        r.len += h.len;
        r.chunks++;
    }
    r.text[r.len] = 0;
    r.whole = r.whole && seen_last;
    return r;
}

static struct udpshell_stats stats(void)
{
    struct udpshell_stats s;
    udpshell_get_stats(&s);
    return s;
}

/* ---- tests ---- */

TEST(ush_start_binds_spawns_and_registers)
{
    start_once();
    CHECK_EQ(fake_bound_port, 9000);
    CHECK(fake_bound_fn != NULL);
    CHECK(spawned_fn != NULL);
    CHECK(fake_app_stats != NULL && fake_app_stats->print != NULL);
}

TEST(ush_runs_a_request_and_replies_to_its_sender)
{
    start_once();
    uint32_t ip = new_sender();
    int before = runs['e'];
    send_req(ip, 4000, 77, "echo hello");
    CHECK(udpshell_run_next());
    CHECK(!udpshell_run_next());
    CHECK_EQ(runs['e'], before + 1);
    struct reply r = reply_of(ip, 4000, 77);
    CHECK(r.whole);
    CHECK_EQ(r.chunks, 1);
    CHECK_STR(r.text, "hello\n");
    free(r.text);
    /* A line typed with its newline (nc, echo) is the same command. */
    send_req(ip, 4000, 78, "echo hi\r\n");
    CHECK(udpshell_run_next());
    CHECK_STR(last_line, "echo hi");
    fake_net_clear();
}

TEST(ush_retransmit_after_reply_is_answered_from_the_copy)
{
    start_once();
    uint32_t ip = new_sender();
    struct udpshell_stats s0 = stats();
    int before = runs['b'];
    send_req(ip, 4001, 5, "big 5000");
    CHECK(udpshell_run_next());
    size_t first = fake_nsent;
    CHECK_EQ(first, 4);                       /* 1400 * 3 + 800 */
    send_req(ip, 4001, 5, "big 5000");
    CHECK(udpshell_run_next());
    CHECK_EQ(runs['b'], before + 1);          /* not run again */
    CHECK_EQ(stats().resent, s0.resent + 1);
    /* Chunk for chunk the same datagrams. */
    CHECK_EQ(fake_nsent, 2 * first);
    for (size_t i = 0; i < first && i + first < fake_nsent; i++) {
        CHECK_EQ(fake_sent[i].len, fake_sent[i + first].len);
        CHECK(memcmp(fake_sent[i].data, fake_sent[i + first].data, fake_sent[i].len) == 0);
        CHECK_EQ(fake_sent[i + first].ip, ip);
        CHECK_EQ(fake_sent[i + first].dport, 4001);
    }
    /* The same seq from another port of the same host is another sender. */
    send_req(ip, 4002, 5, "big 10");
    CHECK(udpshell_run_next());
    CHECK_EQ(runs['b'], before + 2);
    /* A new seq runs the command again. */
    send_req(ip, 4001, 6, "big 10");
    CHECK(udpshell_run_next());
    CHECK_EQ(runs['b'], before + 3);
    fake_net_clear();
}

/* A client that starts at seq 0 on a port a previous client used must get
 * its own answer: once the cache replayed the old client's `uptime` output
 * in answer to `version`, without running anything. */
TEST(ush_same_seq_other_command_runs_not_replays)
{
    start_once();
    uint32_t ip = new_sender();
    struct udpshell_stats s0 = stats();
    send_req(ip, 4101, 0, "echo old client");
    CHECK(udpshell_run_next());
    fake_net_clear();
    int before = runs['e'];
    send_req(ip, 4101, 0, "echo new client");
    CHECK(udpshell_run_next());
    CHECK_EQ(runs['e'], before + 1);          /* run, not replayed */
    struct reply r = reply_of(ip, 4101, 0);
    CHECK(r.whole);
    CHECK_STR(r.text, "new client\n");
    free(r.text);
    CHECK_EQ(stats().resent, s0.resent);
    CHECK_EQ(stats().stale, s0.stale + 1);
    fake_net_clear();
}

/* The same request after the kept reply has expired is a new client's: it
 * runs. Just before the expiry it is still a retransmit. */
TEST(ush_kept_reply_expires)
{
    start_once();
    uint32_t ip = new_sender();
    send_req(ip, 4102, 7, "echo once");
    CHECK(udpshell_run_next());
    int before = runs['e'];
    fake_now_ns += USH_KEEP_NS - 1000;
    send_req(ip, 4102, 7, "echo once");
    CHECK(udpshell_run_next());
    CHECK_EQ(runs['e'], before);              /* still a retransmit */
    fake_now_ns += 2000;
    send_req(ip, 4102, 7, "echo once");
    CHECK(udpshell_run_next());
    CHECK_EQ(runs['e'], before + 1);          /* expired: run again */
    fake_net_clear();
}

TEST(ush_retransmit_while_queued_or_running_is_not_run_twice)
{
    start_once();
    uint32_t ip = new_sender();
    struct udpshell_stats s0 = stats();
    int before = runs['a'];
    rerun.ip = ip;
    rerun.port = 4010;
    rerun.len = mkreq(rerun.d, 900, "again");
    /* Twice while queued: queued once. */
    fake_net_deliver(ip, 4010, rerun.d, rerun.len);
    fake_net_deliver(ip, 4010, rerun.d, rerun.len);
    /* And once more while it runs (the fake shell delivers it). */
    CHECK(udpshell_run_next());
    CHECK(!udpshell_run_next());
    CHECK_EQ(runs['a'], before + 1);
    CHECK_EQ(stats().in_hand, s0.in_hand + 2);
    struct reply r = reply_of(ip, 4010, 900);
    CHECK(r.whole);
    CHECK_STR(r.text, "ran\n");
    free(r.text);
    fake_net_clear();
}

TEST(ush_keeps_the_last_reply_of_the_last_senders_only)
{
    start_once();
    uint32_t ip[USH_SENDERS + 1];
    long heap0 = heap_live;
    for (int i = 0; i < USH_SENDERS; i++) {
        ip[i] = new_sender();
        send_req(ip[i], 5000, 1, "echo kept");
        CHECK(udpshell_run_next());
    }
    /* Sender 0 is touched again (answered from its copy): sender 1 is now
     * the least recently used. */
    int before = runs['e'];
    send_req(ip[0], 5000, 1, "echo kept");
    CHECK(udpshell_run_next());
    CHECK_EQ(runs['e'], before);
    /* One sender more than there are slots: sender 1's copy goes. */
    ip[USH_SENDERS] = new_sender();
    send_req(ip[USH_SENDERS], 5000, 1, "echo kept");
    CHECK(udpshell_run_next());
    CHECK_EQ(runs['e'], before + 1);
    /* Its memory went back: never more buffers than slots. */
    CHECK(heap_live - heap0 <= USH_SENDERS);
    CHECK(heap_live <= USH_SENDERS);
    int r0 = runs['e'];
    send_req(ip[0], 5000, 1, "echo kept");        /* still kept */
    CHECK(udpshell_run_next());
    CHECK_EQ(runs['e'], r0);
    for (int i = 2; i <= USH_SENDERS; i++) {      /* so are these */
        send_req(ip[i], 5000, 1, "echo kept");
        CHECK(udpshell_run_next());
    }
    CHECK_EQ(runs['e'], r0);
    send_req(ip[1], 5000, 1, "echo kept");        /* forgotten: runs again */
    CHECK(udpshell_run_next());
    CHECK_EQ(runs['e'], r0 + 1);
    fake_net_clear();
}

TEST(ush_reply_over_the_keep_limit_is_resent_cut_with_a_note)
{
    start_once();
    uint32_t ip = new_sender();
    size_t n = USH_KEEP_MAX + 5000;
    char cmd[32];
    snprintf(cmd, sizeof cmd, "big %zu", n);
    send_req(ip, 6000, 3, cmd);
    CHECK(udpshell_run_next());
    struct reply a = reply_of(ip, 6000, 3);
    CHECK(a.whole);
    CHECK_EQ(a.len, n);                       /* the first answer is whole */
    bool same = true;
    for (size_t i = 0; i < a.len && same; i++)
        same = a.text[i] == pattern_byte(i);
    CHECK(same);
    free(a.text);
    fake_net_clear();

    int before = runs['b'];
    send_req(ip, 6000, 3, cmd);
    CHECK(udpshell_run_next());
    CHECK_EQ(runs['b'], before);
    struct reply b = reply_of(ip, 6000, 3);
    CHECK(b.whole);
    char note[160];
    int k = snprintf(note, sizeof note, "\nudpshell: reply was %zu bytes; only the first %u "
                     "are kept for retransmission\n", n, USH_KEEP_MAX);
    CHECK_EQ(b.len, USH_KEEP_MAX + (size_t)k);
    same = true;
    for (size_t i = 0; i < USH_KEEP_MAX && i < b.len && same; i++)
        same = b.text[i] == pattern_byte(i);
    CHECK(same);
    CHECK(b.len >= (size_t)k && strcmp(b.text + b.len - k, note) == 0);
    free(b.text);
    fake_net_clear();
}

TEST(ush_reply_of_exactly_the_keep_limit_is_resent_whole)
{
    start_once();
    uint32_t ip = new_sender();
    char cmd[32];
    snprintf(cmd, sizeof cmd, "big %u", USH_KEEP_MAX);
    send_req(ip, 6001, 4, cmd);
    CHECK(udpshell_run_next());
    fake_net_clear();
    send_req(ip, 6001, 4, cmd);
    CHECK(udpshell_run_next());
    struct reply b = reply_of(ip, 6001, 4);
    CHECK(b.whole);
    CHECK_EQ(b.len, USH_KEEP_MAX);
    CHECK(strstr(b.text, "udpshell:") == NULL);
    free(b.text);
    fake_net_clear();
}

TEST(ush_queue_full_drops_are_counted)
{
    start_once();
    struct udpshell_stats s0 = stats();
    int before = runs['e'];
    uint32_t ip = new_sender();
    for (int i = 0; i < USH_QUEUE; i++)
        send_req(ip, 7000, 100 + i, "echo queued");
    send_req(ip, 7000, 200, "echo dropped");
    send_req(ip, 7000, 201, "echo dropped");
    CHECK_EQ(stats().queue_full, s0.queue_full + 2);
    CHECK_EQ(stats().requests, s0.requests + USH_QUEUE);
    int ran = 0;
    while (udpshell_run_next())
        ran++;
    CHECK_EQ(ran, USH_QUEUE);
    CHECK_EQ(runs['e'], before + USH_QUEUE);
    CHECK_STR(last_line, "echo queued");
    /* Room again: the client's retransmit of a dropped one now runs. */
    send_req(ip, 7000, 200, "echo dropped");
    CHECK(udpshell_run_next());
    CHECK_STR(last_line, "echo dropped");
    fake_net_clear();
}

TEST(ush_malformed_datagrams_are_counted_by_kind)
{
    start_once();
    uint32_t ip = new_sender();
    uint8_t d[USHP_HDR_LEN + 300];
    size_t n = mkreq(d, 1, "echo x");
    struct { int reason; size_t len; int field; uint16_t value; } kinds[] = {
        { USHP_ESHORT, 0, -1, 0 },
        { USHP_ESHORT, 15, -1, 0 },
        { USHP_EMAGIC, n, USHP_OFF_MAGIC, 0x4E4E },         /* "NNSH" */
        { USHP_ELEN, n, USHP_OFF_LEN, 200 },           /* beyond the datagram */
        { USHP_ELEN, n, USHP_OFF_LEN, 2 },             /* short of it */
        { USHP_ERESERVED, n, USHP_OFF_RESERVED, 1 },
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        struct udpshell_stats s0 = stats();
        uint8_t c[sizeof d];
        memcpy(c, d, n);
        if (kinds[i].field >= 0)
            put_be16(c + kinds[i].field, kinds[i].value);
        fake_net_deliver(ip, 8000, c, kinds[i].len);
        struct udpshell_stats s1 = stats();
        int r = -1 - kinds[i].reason;
        CHECK_EQ(s1.bad[r], s0.bad[r] + 1);
        CHECK_EQ(udpshell_bad_total(&s1), udpshell_bad_total(&s0) + 1);
        CHECK_EQ(s1.requests, s0.requests);
    }
    /* 256 bytes of command: one more than a line holds. */
    char big[257];
    memset(big, 'x', 256);
    big[256] = 0;
    struct udpshell_stats s0 = stats();
    n = ushp_build(d, sizeof d, 1, 0, true, big, 256);
    fake_net_deliver(ip, 8000, d, n);
    CHECK_EQ(stats().bad[-1 - USHP_ETOOLONG], s0.bad[-1 - USHP_ETOOLONG] + 1);
    CHECK(!udpshell_run_next());
    CHECK_EQ(fake_nsent, 0);                          /* no reply to any of them */

    /* `net` shows them under the name scripts grep for. */
    struct udpshell_stats s = stats();
    struct sbuf b = SBUF_INIT;
    fake_app_stats->print(&b.pr);
    char want[64];
    snprintf(want, sizeof want, "bad udpshell %lu ", (unsigned long)udpshell_bad_total(&s));
    CHECK(strstr(b.s, want) != NULL);
    snprintf(want, sizeof want, "queue full %lu, ", (unsigned long)s.queue_full);
    CHECK(strstr(b.s, want) != NULL);
}

TEST(ush_full_tx_ring_is_waited_out_not_a_lost_chunk)
{
    start_once();
    uint32_t ip = new_sender();
    fake_send_fail = 3;
    fake_send_fail_rc = NET_ERR_NOBUF;
    send_req(ip, 9000, 1, "echo through");
    CHECK(udpshell_run_next());
    CHECK_EQ(fake_send_fail, 0);
    struct reply r = reply_of(ip, 9000, 1);
    CHECK(r.whole);
    CHECK_STR(r.text, "through\n");
    free(r.text);
    fake_net_clear();
}

/* Without a key the shell speaks the open protocol only: a tagged request
 * (a client given a key, talking to a shell without one) gets no reply,
 * and is counted on `net`'s auth line. */
TEST(ush_open_shell_refuses_tagged_requests)
{
    start_once();
    uint8_t d[400], key[32] = { 1 };
    struct udpshell_stats s0 = stats();
    int before = runs['e'];
    fake_net_deliver(new_sender(), 4100, d,
             ushp_build_auth(d, sizeof d, key, 1, 0, USHP_FLAG_LAST, 5, 9, "echo t", 6));
    CHECK(!udpshell_run_next());
    CHECK_EQ(runs['e'], before);
    CHECK_EQ(fake_nsent, 0);
    CHECK_EQ(stats().no_key, s0.no_key + 1);
    struct sbuf b = SBUF_INIT;
    fake_app_stats->print(&b.pr);
    CHECK(strstr(b.s, "udpshell auth: none (open); refused: unauthenticated 0, bad tag 0, "
                      "wrong epoch 0, replayed 0, tagged without a key ") != NULL);
}

/* A datagram flagged as a reply is never run, whatever it says: one shell's
 * reply, forged or bounced to another shell's port, must not start a
 * ping-pong between them ("unknown command 'unknown'" back and forth). */
TEST(ush_reply_flag_is_never_run)
{
    start_once();
    uint32_t ip = new_sender();
    struct udpshell_stats s0 = stats();
    int before = runs['e'];
    uint8_t d[USHP_HDR_LEN + USHP_CMD_MAX];
    size_t n = mkreq(d, 31, "echo loop");
    put_be16(d + USHP_OFF_FLAGS, USHP_FLAG_LAST | USHP_FLAG_REPLY);
    fake_net_deliver(ip, 9000, d, n);
    CHECK(!udpshell_run_next());
    CHECK_EQ(runs['e'], before);
    CHECK_EQ(fake_nsent, 0);
    CHECK_EQ(stats().replies, s0.replies + 1);
    CHECK_EQ(stats().requests, s0.requests);
    /* The shell's own reply sent back at it: the same. */
    send_req(ip, 9000, 32, "echo bounce");
    CHECK(udpshell_run_next());
    CHECK_EQ(fake_nsent, 1);
    uint8_t back[USHP_DGRAM_MAX];
    size_t blen = fake_sent[0].len;
    memcpy(back, fake_sent[0].data, blen);
    fake_net_clear();
    fake_net_deliver(ip, 9000, back, blen);
    CHECK(!udpshell_run_next());
    CHECK_EQ(fake_nsent, 0);
    CHECK_EQ(runs['e'], before + 1);
    CHECK_EQ(stats().replies, s0.replies + 2);
    struct sbuf b = SBUF_INIT;
    fake_app_stats->print(&b.pr);
    char want[64];
    snprintf(want, sizeof want, ", replies %lu\n", (unsigned long)stats().replies);
    CHECK(strstr(b.s, want) != NULL);
}

/* A flood of copies of one request after its reply: the kept reply goes
 * out USH_RESENDS more times, the rest are counted and draw nothing (50
 * copies of `lines 2000` drew 50 whole replies). A new request from the
 * same sender has its own budget. */
TEST(ush_kept_reply_is_resent_at_most_three_times)
{
    start_once();
    uint32_t ip = new_sender();
    struct udpshell_stats s0 = stats();
    int before = runs['b'];
    send_req(ip, 4200, 8, "big 3000");
    CHECK(udpshell_run_next());
    size_t one = fake_nsent;
    CHECK_EQ(one, 3);
    for (int i = 0; i < 50; i++) {
        send_req(ip, 4200, 8, "big 3000");
        CHECK(udpshell_run_next());
    }
    CHECK_EQ(runs['b'], before + 1);
    CHECK_EQ(fake_nsent, (1 + USH_RESENDS) * one);
    CHECK_EQ(stats().resent, s0.resent + USH_RESENDS);
    CHECK_EQ(stats().resends_spent, s0.resends_spent + 50 - USH_RESENDS);
    fake_net_clear();
    send_req(ip, 4200, 9, "big 3000");
    CHECK(udpshell_run_next());
    send_req(ip, 4200, 9, "big 3000");
    CHECK(udpshell_run_next());
    CHECK_EQ(runs['b'], before + 2);
    CHECK_EQ(fake_nsent, 2 * one);
    struct sbuf b = SBUF_INIT;
    fake_app_stats->print(&b.pr);
    char want[64];
    snprintf(want, sizeof want, "resends spent %lu,", (unsigned long)stats().resends_spent);
    CHECK(strstr(b.s, want) != NULL);
    fake_net_clear();
}

/* Each run of a command has its own reply id, in every chunk; a resend of
 * the kept reply repeats it; a copy cut at the keep limit, which ends
 * otherwise, has its own. A client then never mixes two runs' chunks. */
TEST(ush_reply_id_per_run_repeated_by_resends)
{
    start_once();
    uint32_t ip = new_sender();
    send_req(ip, 4300, 1, "big 5000");
    CHECK(udpshell_run_next());
    struct reply a = reply_of(ip, 4300, 1);
    CHECK(a.whole && a.chunks == 4);
    fake_net_clear();
    send_req(ip, 4300, 1, "big 5000");            /* a retransmit: the kept reply */
    CHECK(udpshell_run_next());
    struct reply b = reply_of(ip, 4300, 1);
    CHECK(b.whole && b.id == a.id);
    fake_net_clear();
    fake_now_ns += USH_KEEP_NS + 1;               /* expired: it runs again */
    send_req(ip, 4300, 1, "big 5000");
    CHECK(udpshell_run_next());
    struct reply c = reply_of(ip, 4300, 1);
    CHECK(c.whole && c.id != a.id);
    fake_net_clear();
    free(a.text);
    free(b.text);
    free(c.text);
    /* Cut at the keep limit: the copy is another reply. */
    char cmd[32];
    snprintf(cmd, sizeof cmd, "big %u", USH_KEEP_MAX + 10);
    send_req(ip, 4301, 2, cmd);
    CHECK(udpshell_run_next());
    struct reply d = reply_of(ip, 4301, 2);
    fake_net_clear();
    send_req(ip, 4301, 2, cmd);
    CHECK(udpshell_run_next());
    struct reply e = reply_of(ip, 4301, 2);
    CHECK(d.whole && e.whole && e.id != d.id);
    fake_net_clear();
    /* Every cut copy of that one kept reply is the same reply: one id
     * (before, each resend drew a new id, and the client would have said
     * the command ran again). */
    send_req(ip, 4301, 2, cmd);
    CHECK(udpshell_run_next());
    struct reply g = reply_of(ip, 4301, 2);
    CHECK(g.whole && g.id == e.id);
    free(d.text);
    free(e.text);
    free(g.text);
    fake_net_clear();
}

/* Reply ids are never 0 and come back only after 65535 other runs. */
TEST(ush_reply_ids_skip_0_and_repeat_after_65535_runs)
{
    start_once();
    uint32_t ip = new_sender();
    uint16_t first = 0;
    bool zero = false, early = false;
    for (uint32_t i = 0; i <= 65535; i++) {
        send_req(ip, 4400, 1000 + i, "");
        CHECK(udpshell_run_next());
        CHECK_EQ(fake_nsent, 1);
        uint16_t id = get_be16(fake_sent[0].data + USHP_OFF_ID);
        zero |= id == 0;
        if (i == 0)
            first = id;
        else if (i < 65535)
            early |= id == first;
        else
            CHECK_EQ(id, first);
        fake_net_clear();
    }
    CHECK(!zero);
    CHECK(!early);
}
