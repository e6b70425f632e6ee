// LINK: net/udpshell.c uapi/udpshell.c uapi/udpshell_auth.c lib/sha256.c lib/printf.c lib/parse.c tests/unit/fake_net.c
/* tests/unit/test_udpshell_auth_server.c: the real UDP shell started with
 * a key (udpshell_start_auth) against a fake network and a fake shell:
 * tags checked before anything runs, replies tagged, nonces fresh per
 * sender, retransmits still answered from the kept reply, and every
 * refusal silent and counted. (test_udpshell_server.c is the same shell
 * without a key: the open protocol, unchanged.) */
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
struct task *task_spawn(const char *name, task_fn fn, void *arg, int cpu, unsigned flags)
{
    return &fake_task;
}
struct task *task_current(void) { return &fake_task; }
void waitq_wait(struct waitq *wq, bool (*cond)(void *), void *arg) { abort(); }
void waitq_wake_all(struct waitq *wq) {}
void kprintf(const char *fmt, ...) {}
void *kmalloc(size_t size) { return malloc(size); }
void kfree(void *p) { free(p); }

/* "echo WORDS" prints WORDS; "again" delivers `rerun` while it runs (a
 * retransmit arriving mid-command). Every line run is counted. */
static int nrun;
static struct { uint32_t ip; uint16_t port; uint8_t d[400]; size_t len; } rerun;

void shell_run_line(char *line, struct printer *p)
{
    nrun++;
    if (strncmp(line, "echo ", 5) == 0)
        pr_printf(p, "%s\n", line + 5);
    else if (strcmp(line, "again") == 0)
        fake_net_deliver(rerun.ip, rerun.port, rerun.d, rerun.len);
}

/* ---- helpers ---- */

static uint8_t key[32], wrong[32];
static uint32_t next_ip = 0x0a000100;
static uint32_t new_sender(void) { return ++next_ip; }
static uint64_t next_nonce = 1000;     /* rising, like the clock a client uses */

static size_t mkreq(uint8_t *d, const uint8_t *k, uint32_t seq, uint64_t nonce, const char *cmd)
{
    return ushp_build_auth(d, 400, k, seq, 0, USHP_FLAG_LAST, nonce, cmd, strlen(cmd));
}

static void send_raw(uint32_t ip, uint16_t port, const uint8_t *d, size_t n)
{
    fake_net_deliver(ip, port, d, n);
}

static struct udpshell_stats stats(void)
{
    struct udpshell_stats s;
    udpshell_get_stats(&s);
    return s;
}

static void start_once(void)
{
    static bool started;
    if (!started) {
        memset(key, 0xa5, sizeof key);
        memcpy(wrong, key, sizeof wrong);
        wrong[0] ^= 0x80;
        udpshell_set_runner(shell_run_line);
        CHECK_EQ(udpshell_start_auth(9000, key), 0);
        started = true;
    }
    while (udpshell_run_next())
        ;
    fake_net_clear();
}

/* Run everything queued; how many commands ran. */
static int drain(void)
{
    int before = nrun;
    while (udpshell_run_next())
        ;
    return nrun - before;
}

/* The reply captured for (ip, port, seq): every chunk must verify under
 * key, be flagged reply, and carry nonce. */
static bool reply_ok(uint32_t ip, uint16_t port, uint32_t seq, uint64_t nonce,
                     const char *want)
{
    char text[4096] = "";
    size_t len = 0;
    bool ok = true, any = false;
    for (size_t i = 0; i < fake_nsent; i++) {
        struct fake_dgram *g = &fake_sent[i];
        struct ushp_hdr h;
        const uint8_t *pl;
        if (g->ip != ip || g->dport != port)
            continue;
        ok &= ushp_parse_reply(g->data, g->len, &h, &pl) == 0;
        ok &= ushp_auth_verify(key, g->data, g->len);
        ok &= (h.flags & (USHP_FLAG_AUTH | USHP_FLAG_REPLY)) == (USHP_FLAG_AUTH | USHP_FLAG_REPLY);
        ok &= h.seq == seq && h.nonce == nonce && len + h.len < sizeof text;
        if (!ok)
            break;
        memcpy(text + len, pl, h.len);
        len += h.len;
        any = true;
    }
    text[len] = 0;
    return ok && any && strcmp(text, want) == 0;
}

/* ---- tests ---- */

TEST(auth_tagged_request_runs_and_its_reply_is_tagged)
{
    start_once();
    uint8_t d[400];
    uint32_t ip = new_sender();
    uint64_t n = next_nonce++;
    send_raw(ip, 5000, d, mkreq(d, key, 1, n, "echo hi"));
    CHECK_EQ(drain(), 1);
    CHECK(reply_ok(ip, 5000, 1, n, "hi\n"));
    fake_net_clear();
}

TEST(auth_untagged_request_is_refused_without_reply)
{
    start_once();
    uint8_t d[400];
    struct udpshell_stats s0 = stats();
    size_t len = ushp_build(d, sizeof d, 1, 0, true, "echo open", 9);
    send_raw(new_sender(), 5001, d, len);
    CHECK_EQ(drain(), 0);
    CHECK_EQ(fake_nsent, 0);
    CHECK_EQ(stats().unauth, s0.unauth + 1);
    CHECK_EQ(stats().requests, s0.requests);
}

TEST(auth_forged_or_missing_tag_is_refused_without_reply)
{
    start_once();
    uint8_t d[400];
    uint32_t ip = new_sender();
    struct udpshell_stats s0 = stats();
    size_t len = mkreq(d, key, 1, next_nonce++, "echo mine");
    /* The command changed under the captured tag. */
    memcpy(d + 24, "echo evil", 9);
    send_raw(ip, 5002, d, len);
    /* The tag itself changed. */
    len = mkreq(d, key, 2, next_nonce++, "echo mine");
    d[len - 1] ^= 1;
    send_raw(ip, 5002, d, len);
    /* The nonce changed (to dodge the replay window). */
    len = mkreq(d, key, 3, next_nonce++, "echo mine");
    d[23] ^= 1;
    send_raw(ip, 5002, d, len);
    /* The flag says tagged, the tag is missing: malformed. */
    len = mkreq(d, key, 4, next_nonce++, "echo mine");
    send_raw(ip, 5002, d, len - USHP_TAG_LEN);
    CHECK_EQ(drain(), 0);
    CHECK_EQ(fake_nsent, 0);
    CHECK_EQ(stats().bad_tag, s0.bad_tag + 3);
    CHECK_EQ(stats().bad[-1 - USHP_ELEN], s0.bad[-1 - USHP_ELEN] + 1);
}

TEST(auth_wrong_key_is_refused_without_reply)
{
    start_once();
    uint8_t d[400];
    struct udpshell_stats s0 = stats();
    send_raw(new_sender(), 5003, d, mkreq(d, wrong, 1, next_nonce++, "echo x"));
    CHECK_EQ(drain(), 0);
    CHECK_EQ(fake_nsent, 0);
    CHECK_EQ(stats().bad_tag, s0.bad_tag + 1);
}

TEST(auth_reply_sent_back_as_a_request_is_refused)
{
    start_once();
    uint8_t d[400];
    uint32_t ip = new_sender();
    send_raw(ip, 5004, d, mkreq(d, key, 1, next_nonce++, "echo bounce"));
    CHECK_EQ(drain(), 1);
    CHECK_EQ(fake_nsent, 1);
    struct udpshell_stats s0 = stats();
    uint8_t back[400];
    size_t blen = fake_sent[0].len;
    memcpy(back, fake_sent[0].data, blen);
    fake_net_clear();
    send_raw(ip, 5004, back, blen);
    CHECK_EQ(drain(), 0);
    CHECK_EQ(fake_nsent, 0);
    CHECK_EQ(stats().replies, s0.replies + 1);
}

TEST(auth_retransmit_is_answered_from_the_kept_reply_not_run)
{
    start_once();
    uint8_t d[400];
    uint32_t ip = new_sender();
    uint64_t n = next_nonce++;
    size_t len = mkreq(d, key, 7, n, "echo once");
    send_raw(ip, 5005, d, len);
    CHECK_EQ(drain(), 1);
    struct udpshell_stats s0 = stats();
    size_t first = fake_nsent;
    send_raw(ip, 5005, d, len);             /* the client's resend: same bytes */
    CHECK_EQ(drain(), 0);
    CHECK_EQ(stats().resent, s0.resent + 1);
    CHECK_EQ(fake_nsent, 2 * first);
    CHECK(fake_sent[0].len == fake_sent[first].len &&
          memcmp(fake_sent[0].data, fake_sent[first].data, fake_sent[0].len) == 0);
    CHECK(reply_ok(ip, 5005, 7, n, "once\nonce\n"));
    fake_net_clear();
}

TEST(auth_retransmit_while_running_is_in_hand)
{
    start_once();
    uint32_t ip = new_sender();
    rerun.ip = ip;
    rerun.port = 5006;
    rerun.len = mkreq(rerun.d, key, 9, next_nonce++, "again");
    struct udpshell_stats s0 = stats();
    send_raw(ip, 5006, rerun.d, rerun.len);
    CHECK_EQ(drain(), 1);
    CHECK_EQ(stats().in_hand, s0.in_hand + 1);
    fake_net_clear();
}

TEST(auth_replayed_request_is_never_run_twice)
{
    start_once();
    uint8_t d[400], d2[400];
    uint32_t ip = new_sender();
    size_t len = mkreq(d, key, 20, next_nonce++, "echo pay");
    send_raw(ip, 5007, d, len);
    CHECK_EQ(drain(), 1);
    struct udpshell_stats s0 = stats();
    /* After the kept reply expired: the same datagram again is refused. */
    fake_now_ns += USH_KEEP_NS + 1;
    fake_net_clear();
    send_raw(ip, 5007, d, len);
    CHECK_EQ(drain(), 0);
    CHECK_EQ(fake_nsent, 0);
    CHECK_EQ(stats().replayed, s0.replayed + 1);
    /* Once the client moved on, its older request is refused at once. */
    send_raw(ip, 5007, d2, mkreq(d2, key, 21, next_nonce++, "echo next"));
    CHECK_EQ(drain(), 1);
    fake_net_clear();
    send_raw(ip, 5007, d, len);
    CHECK_EQ(drain(), 0);
    CHECK_EQ(fake_nsent, 0);
    CHECK_EQ(stats().replayed, s0.replayed + 2);
    /* A fresh nonce with an old seq is a new request, and runs. */
    send_raw(ip, 5007, d2, mkreq(d2, key, 20, next_nonce++, "echo pay"));
    CHECK_EQ(drain(), 1);
    fake_net_clear();
}

TEST(auth_nonce_window_takes_reordered_refuses_old_and_seen)
{
    start_once();
    uint8_t d[400];
    uint32_t ip = new_sender();
    uint64_t base = next_nonce + 1000;
    next_nonce = base + 1000;
    struct udpshell_stats s0 = stats();
    /* Arriving out of order, inside the window: all run. */
    uint64_t order[] = { base + 100, base + 90, base + 99, base + 38 };
    for (int i = 0; i < 4; i++)
        send_raw(ip, 5008, d, mkreq(d, key, 100 + i, order[i], "echo w"));
    CHECK_EQ(drain(), 4);
    /* Seen (not the last request's), and older than the window: refused. */
    send_raw(ip, 5008, d, mkreq(d, key, 200, base + 90, "echo w"));
    send_raw(ip, 5008, d, mkreq(d, key, 201, base + 100 - USH_NONCE_WINDOW, "echo w"));
    CHECK_EQ(drain(), 0);
    CHECK_EQ(stats().replayed, s0.replayed + 2);
    /* Just inside the window and unseen: runs. */
    send_raw(ip, 5008, d, mkreq(d, key, 202, base + 100 - USH_NONCE_WINDOW + 1, "echo w"));
    /* A jump far ahead, then the one just below the old top: too old now. */
    send_raw(ip, 5008, d, mkreq(d, key, 203, base + 500, "echo w"));
    CHECK_EQ(drain(), 2);
    send_raw(ip, 5008, d, mkreq(d, key, 204, base + 98, "echo w"));
    CHECK_EQ(drain(), 0);
    CHECK_EQ(stats().replayed, s0.replayed + 3);
    fake_net_clear();
}

TEST(auth_evicted_sender_stays_refused)
{
    start_once();
    uint8_t d[400], old[400];
    uint32_t victim = new_sender();
    size_t olen = mkreq(old, key, 1, next_nonce++, "echo first");
    send_raw(victim, 5009, old, olen);
    CHECK_EQ(drain(), 1);
    /* USH_AUTH_CLIENTS newer senders push it out of the table. */
    for (int i = 0; i < USH_AUTH_CLIENTS; i++)
        send_raw(new_sender(), 5009, d, mkreq(d, key, 1, next_nonce++, "echo filler"));
    CHECK_EQ(drain(), USH_AUTH_CLIENTS);
    fake_now_ns += USH_KEEP_NS + 1;
    struct udpshell_stats s0 = stats();
    fake_net_clear();
    send_raw(victim, 5009, old, olen);
    CHECK_EQ(drain(), 0);
    CHECK_EQ(fake_nsent, 0);
    CHECK_EQ(stats().replayed, s0.replayed + 1);
    /* A new sender whose nonce is above every evicted one is welcome. */
    send_raw(new_sender(), 5009, d, mkreq(d, key, 1, next_nonce++, "echo new"));
    CHECK_EQ(drain(), 1);
    /* Nonce 0 never is. */
    send_raw(new_sender(), 5009, d, mkreq(d, key, 1, 0, "echo zero"));
    CHECK_EQ(drain(), 0);
    fake_net_clear();
}

TEST(auth_request_dropped_for_a_full_queue_is_taken_when_resent)
{
    start_once();
    uint8_t d[400], last[400];
    size_t llen = 0;
    uint32_t ip = 0;
    struct udpshell_stats s0 = stats();
    for (int i = 0; i <= USH_QUEUE; i++) {
        ip = new_sender();
        llen = mkreq(last, key, 1, next_nonce++, "echo q");
        memcpy(d, last, llen);
        send_raw(ip, 5010, d, llen);
    }
    CHECK_EQ(stats().queue_full, s0.queue_full + 1);
    CHECK_EQ(drain(), USH_QUEUE);
    fake_net_clear();
    send_raw(ip, 5010, last, llen);          /* the client's resend */
    CHECK_EQ(drain(), 1);
    CHECK_EQ(fake_nsent, 1);
    fake_net_clear();
}

TEST(auth_net_shows_the_refusals)
{
    start_once();
    struct udpshell_stats s = stats();
    struct sbuf b = SBUF_INIT;
    fake_app_stats->print(&b.pr);
    char want[200];
    snprintf(want, sizeof want, "udpshell auth: HMAC-SHA256 key; refused: unauthenticated %lu, "
             "bad tag %lu, replayed %lu, tagged without a key 0\n", (unsigned long)s.unauth,
             (unsigned long)s.bad_tag, (unsigned long)s.replayed);
    CHECK(strstr(b.s, want) != NULL);
    /* The key is nowhere in what `net` prints. */
    CHECK(strstr(b.s, "a5a5") == NULL);
}

/* Same seq and command as the kept reply, but a fresh nonce, at once: a new
 * request (a client that restarted on the same port and seq), which runs;
 * the kept reply is bound to the old nonce and would not verify for it. */
TEST(auth_fresh_nonce_with_kept_seq_and_command_runs)
{
    start_once();
    uint8_t d[400];
    uint32_t ip = new_sender();
    send_raw(ip, 5011, d, mkreq(d, key, 30, next_nonce++, "echo same"));
    CHECK_EQ(drain(), 1);
    fake_net_clear();
    uint64_t n = next_nonce++;
    send_raw(ip, 5011, d, mkreq(d, key, 30, n, "echo same"));
    CHECK_EQ(drain(), 1);
    CHECK(reply_ok(ip, 5011, 30, n, "same\n"));
    fake_net_clear();
}
