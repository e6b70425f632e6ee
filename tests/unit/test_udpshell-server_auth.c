// LINK: net/udpshell.c net/udpshell_fresh.c uapi/udpshell.c uapi/udpshell_auth.c lib/sha256.c lib/printf.c lib/parse.c tests/unit/fake_net.c
/* tests/unit/test_udpshell-server_auth.c: the real UDP shell started with
 * a key (udpshell_start_auth) against a fake network and a fake shell:
 * tags checked before anything runs, replies tagged, the boot epoch told
 * by a challenge and required in every request, nonces fresh once per
 * boot whoever sends them, retransmits still answered from the kept
 * reply, and every refusal silent and counted. (test_udpshell-server.c is the same shell
 * without a key: the open protocol, unchanged.) */
#include "test.h"
#include "sbuf.h"
#include <stdlib.h>
#include "fake_net.h"
#include "fake_hal.h"
#include "kernel/console.h"
#include "kernel/sched.h"
#include "kernel/shell.h"
#include "lib/sha256.h"
#include "mm/heap.h"
#include "net/udpshell.h"
#include "net/udpshell_fresh.h"
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
static uint64_t epoch;                 /* the shell's, from a challenge */
static bool refused_without_entropy;
static bool unkeyed_after_failed_start;

static size_t mkreq_e(uint8_t *d, const uint8_t *k, uint32_t seq, uint64_t nonce, uint64_t ep,
                      const char *cmd)
{
    return ushp_build_auth(d, 400, k, seq, 0, USHP_FLAG_LAST, nonce, ep, cmd, strlen(cmd));
}

static size_t mkreq(uint8_t *d, const uint8_t *k, uint32_t seq, uint64_t nonce, const char *cmd)
{
    return mkreq_e(d, k, seq, nonce, epoch, cmd);
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

/* Ask for the epoch as a client does; the answer's epoch and highest
 * nonce, after checking it is a tagged challenge reply to our nonce. */
static bool challenge(uint32_t ip, uint16_t port, uint64_t nonce, uint64_t *ep, uint64_t *highest)
{
    uint8_t d[USHP_CHALLENGE_DGRAM];
    size_t n = ushp_build_challenge(d, sizeof d, key, 77, nonce);
    size_t before = fake_nsent;
    send_raw(ip, port, d, n);
    if (fake_nsent != before + 1)
        return false;
    struct fake_dgram *g = &fake_sent[before];
    struct ushp_hdr h;
    const uint8_t *pl;
    uint16_t want = USHP_FLAG_LAST | USHP_FLAG_AUTH | USHP_FLAG_CHALLENGE | USHP_FLAG_REPLY;
    if (g->len != n || g->ip != ip || g->dport != port ||
        ushp_parse_reply(g->data, g->len, &h, &pl) != 0 || h.flags != want ||
        h.nonce != nonce || h.seq != 77 || h.len != USHP_CHALLENGE_LEN ||
        !ushp_auth_verify(key, g->data, g->len))
        return false;
    *ep = h.epoch;
    *highest = get_be64(pl);
    return true;
}

static void start_once(void)
{
    static bool started;
    if (!started) {
        memset(key, 0xa5, sizeof key);
        memcpy(wrong, key, sizeof wrong);
        wrong[0] ^= 0x80;
        udpshell_set_runner(shell_run_line);
        /* No entropy source: no epoch, so no shell at all (never an open
         * one, never a predictable epoch). */
        fake_entropy_name = NULL;
        refused_without_entropy = udpshell_start_auth(9000, key, NULL) == -1 && !fake_bound_fn;
        fake_entropy_name = "fake";
        /* A start that fails after the key was taken (here: no line
         * runner) leaves nothing keyed: udpshell_keyed would otherwise
         * hand out the wiped, all-zero key. */
        udpshell_set_runner(NULL);
        struct hmac_sha256 m;
        uint64_t ep = 1;
        unkeyed_after_failed_start = udpshell_start_auth(9000, key, NULL) == -1 &&
                                     !udpshell_keyed(&m, &ep) && ep == 1;
        udpshell_set_runner(shell_run_line);
        CHECK_EQ(udpshell_start_auth(9000, key, NULL), 0);
        uint64_t highest = 1;
        CHECK(challenge(new_sender(), 4999, 1, &epoch, &highest));
        CHECK(epoch != 0 && highest == 0);
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
 * key, be flagged reply, and carry nonce and the shell's epoch. */
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
        ok &= h.seq == seq && h.nonce == nonce && h.epoch == epoch && len + h.len < sizeof text;
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

TEST(auth_start_refuses_without_entropy)
{
    start_once();
    CHECK(refused_without_entropy);
}

TEST(auth_failed_start_leaves_nothing_keyed)
{
    start_once();
    CHECK(unkeyed_after_failed_start);
    struct hmac_sha256 m;
    uint64_t ep = 0;
    CHECK(udpshell_keyed(&m, &ep) && ep == epoch);      /* the started shell is */
}

TEST(auth_challenge_tells_the_epoch_and_the_highest_nonce)
{
    start_once();
    uint8_t d[400];
    struct udpshell_stats s0 = stats();
    uint64_t n = next_nonce++;
    send_raw(new_sender(), 5100, d, mkreq(d, key, 1, n, "echo x"));
    CHECK_EQ(drain(), 1);
    fake_net_clear();
    uint64_t ep = 0, highest = 0;
    uint32_t ip = new_sender();
    CHECK(challenge(ip, 5101, 3, &ep, &highest));
    CHECK_EQ(ep, epoch);
    CHECK(highest >= n);
    /* Answered again when replayed (it runs nothing), never larger. */
    CHECK(challenge(ip, 5101, 3, &ep, &highest));
    CHECK_EQ(stats().challenges, s0.challenges + 2);
    CHECK_EQ(stats().requests, s0.requests + 1);
    /* A challenge whose payload is not 8 bytes: malformed for that reason
     * of its own, and unanswered. */
    static const uint8_t zero[16];
    fake_net_clear();
    send_raw(ip, 5101, d, ushp_build_auth(d, sizeof d, key, 4, 0,
                                          USHP_FLAG_LAST | USHP_FLAG_CHALLENGE, 9, 0, zero, 16));
    CHECK_EQ(fake_nsent, 0);
    CHECK_EQ(stats().bad[-1 - USHP_ECHALLENGE], s0.bad[-1 - USHP_ECHALLENGE] + 1);
    /* Under another key: silence, counted as a bad tag. */
    fake_net_clear();
    uint8_t c[USHP_CHALLENGE_DGRAM];
    send_raw(ip, 5101, c, ushp_build_challenge(c, sizeof c, wrong, 1, 4));
    CHECK_EQ(fake_nsent, 0);
    CHECK_EQ(stats().bad_tag, s0.bad_tag + 1);
    fake_net_clear();
}

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

/* A request tagged for another epoch: a previous boot's (or another
 * kernel's with the same key) is refused, counted, never run; the same
 * command under this boot's epoch runs. */
TEST(auth_wrong_epoch_is_refused)
{
    start_once();
    uint8_t d[400];
    uint32_t ip = new_sender();
    struct udpshell_stats s0 = stats();
    uint64_t n = next_nonce++;
    send_raw(ip, 5012, d, mkreq_e(d, key, 1, n, epoch ^ 1, "echo old boot"));
    send_raw(ip, 5012, d, mkreq_e(d, key, 2, next_nonce++, 0, "echo no epoch"));
    CHECK_EQ(drain(), 0);
    CHECK_EQ(fake_nsent, 0);
    CHECK_EQ(stats().wrong_epoch, s0.wrong_epoch + 2);
    /* Refused before the window: the nonce is still fresh for this boot. */
    send_raw(ip, 5012, d, mkreq(d, key, 1, n, "echo this boot"));
    CHECK_EQ(drain(), 1);
    CHECK(reply_ok(ip, 5012, 1, n, "this boot\n"));
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
    memcpy(d + USHP_AUTH_PAYLOAD_OFF, "echo evil", 9);
    send_raw(ip, 5002, d, len);
    /* The tag itself changed. */
    len = mkreq(d, key, 2, next_nonce++, "echo mine");
    d[len - 1] ^= 1;
    send_raw(ip, 5002, d, len);
    /* The nonce changed (to dodge the replay window). */
    len = mkreq(d, key, 3, next_nonce++, "echo mine");
    d[23] ^= 1;
    send_raw(ip, 5002, d, len);
    /* The epoch changed (to pass for this boot). */
    len = mkreq_e(d, key, 5, next_nonce++, epoch ^ 0x100, "echo mine");
    d[30] ^= 1;
    send_raw(ip, 5002, d, len);
    /* The flag says tagged, the tag is missing: malformed. */
    len = mkreq(d, key, 4, next_nonce++, "echo mine");
    send_raw(ip, 5002, d, len - USHP_TAG_LEN);
    CHECK_EQ(drain(), 0);
    CHECK_EQ(fake_nsent, 0);
    CHECK_EQ(stats().bad_tag, s0.bad_tag + 4);
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
    CHECK_EQ(stats().requests, s0.requests + 1);      /* answered: a request */
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
    CHECK_EQ(stats().requests, s0.requests);          /* refused: not a request */
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

/* One window for the boot, whoever sends: a captured request sent again
 * from 20 new ports (and from new hosts) runs 0 more times; before, a
 * sender the shell had not seen only had to beat a floor that stayed at 0
 * until some sender was evicted, and such a replay ran 8 more times. */
TEST(auth_replay_from_new_ports_and_hosts_never_runs)
{
    start_once();
    uint8_t d[400];
    uint32_t ip = new_sender();
    uint64_t n = next_nonce++;
    size_t len = mkreq(d, key, 40, n, "echo pay");
    send_raw(ip, 5020, d, len);
    CHECK_EQ(drain(), 1);
    struct udpshell_stats s0 = stats();
    fake_net_clear();
    for (int port = 0; port < 20; port++)
        send_raw(ip, (uint16_t)(6000 + port), d, len);
    for (int host = 0; host < 20; host++)
        send_raw(new_sender(), 5020, d, len);
    CHECK_EQ(drain(), 0);
    CHECK_EQ(fake_nsent, 0);
    CHECK_EQ(stats().replayed, s0.replayed + 40);
    CHECK_EQ(stats().requests, s0.requests);
    /* Its own sender's retransmit is still answered from the kept reply. */
    send_raw(ip, 5020, d, len);
    CHECK_EQ(drain(), 0);
    CHECK(reply_ok(ip, 5020, 40, n, "pay\n"));
    fake_net_clear();
}

/* The window itself: out of order within it runs, seen or under the
 * floor does not (net/udpshell_fresh.c; test_udpshell_fresh.c has the
 * model). */
TEST(auth_nonce_window_takes_reordered_refuses_old_and_seen)
{
    start_once();
    uint8_t d[400];
    uint32_t ip = new_sender();
    uint64_t base = next_nonce + 1000;
    next_nonce = base + 1000;
    struct udpshell_stats s0 = stats();
    /* Arriving out of order: all run. */
    uint64_t order[] = { base + 100, base + 90, base + 99, base + 38 };
    for (int i = 0; i < 4; i++)
        send_raw(ip, 5008, d, mkreq(d, key, 100 + i, order[i], "echo w"));
    CHECK_EQ(drain(), 4);
    /* Seen, not the same request: refused, from this sender or any. */
    send_raw(ip, 5008, d, mkreq(d, key, 200, base + 90, "echo w"));
    send_raw(new_sender(), 5008, d, mkreq(d, key, 100, base + 100, "echo w"));
    CHECK_EQ(drain(), 0);
    CHECK_EQ(stats().replayed, s0.replayed + 2);
    /* USHF_NONCES higher ones push the lowest under the floor. */
    int ran = 0;
    for (int i = 0; i < USHF_NONCES; i++) {
        send_raw(new_sender(), 5008, d, mkreq(d, key, 300, base + 200 + (uint64_t)i, "echo w"));
        ran += drain();
    }
    CHECK_EQ(ran, USHF_NONCES);
    send_raw(ip, 5008, d, mkreq(d, key, 400, base + 37, "echo w"));   /* never seen, too old */
    send_raw(ip, 5008, d, mkreq(d, key, 401, 0, "echo zero"));         /* 0 never is */
    CHECK_EQ(drain(), 0);
    CHECK_EQ(stats().replayed, s0.replayed + 4);
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
    char want[300];
    snprintf(want, sizeof want, "udpshell auth: HMAC-SHA256 key, boot epoch %016lx; refused: "
             "unauthenticated %lu, bad tag %lu, wrong epoch %lu, replayed %lu, tagged without a "
             "key 0; challenges answered %lu\n", (unsigned long)epoch, (unsigned long)s.unauth,
             (unsigned long)s.bad_tag, (unsigned long)s.wrong_epoch, (unsigned long)s.replayed,
             (unsigned long)s.challenges);
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

/* The same bound with a key: a captured request resent by anyone draws the
 * kept reply (to its own sender) at most USH_RESENDS times. */
TEST(auth_kept_reply_is_resent_at_most_three_times)
{
    start_once();
    uint8_t d[400];
    uint32_t ip = new_sender();
    size_t len = mkreq(d, key, 50, next_nonce++, "echo flood");
    send_raw(ip, 5030, d, len);
    CHECK_EQ(drain(), 1);
    struct udpshell_stats s0 = stats();
    for (int i = 0; i < 20; i++) {
        send_raw(ip, 5030, d, len);
        CHECK_EQ(drain(), 0);
    }
    CHECK_EQ(fake_nsent, 1 + USH_RESENDS);
    CHECK_EQ(stats().resent, s0.resent + USH_RESENDS);
    CHECK_EQ(stats().resends_spent, s0.resends_spent + 20 - USH_RESENDS);
    fake_net_clear();
}
