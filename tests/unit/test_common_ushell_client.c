// LINK: tools/common/ushell_client.c uapi/udpshell.c uapi/udpshell_auth.c lib/sha256.c
/* tests/unit/test_common_ushell_client.c: the UDP shell client's protocol
 * (tools/common/ushell_client.c) against a fake shell and a fake clock.
 *
 * The fake's clock only moves while the client waits in recv: a datagram
 * scheduled for time T is delivered when the client's wait reaches T, so
 * every resend and timeout happens at an exact, checkable time. */
#include "test.h"
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "tools/common/ushell_client.h"
#include "uapi/byteorder.h"
#include "uapi/udpshell.h"

#define MAXQ 64

struct fake {
    uint64_t now;
    int sends;
    uint64_t send_at[16];
    uint32_t seq;                     /* of the last request sent */
    char cmd[300];
    struct { uint64_t at; uint8_t d[USHP_AUTH_DGRAM_MAX]; size_t len; } q[MAXQ];
    int nq, next;
    long waits;                       /* recv calls: a spinning client is a failure */
    bool refuse, recv_error;
    int refuse_sends;                 /* refuse this many sends, then deliver */
    int recv_refusals;                /* recv reports this many refusals first */
    /* Authenticated mode: the shell's key (NULL: open); the last request's
     * nonce, and every request's bytes must be the first's on a resend. */
    const uint8_t *key;
    uint64_t nonce;
    uint8_t first[400];
    size_t firstlen;
    bool resend_differs;
    /* The shell's epoch and the highest nonce it has seen, told to each
     * challenge (none answered while answer_challenges is false); a
     * request for another epoch is refused in silence and counted. */
    uint64_t epoch, highest;
    bool answer_challenges;
    const uint8_t *answer_key;        /* answers made under this key instead (another kernel's) */
    int challenges, stale;
    /* Called on every request: may schedule the reply. */
    void (*on_request)(struct fake *f);
};

static int f_send(void *ctx, const void *d, size_t len)
{
    struct fake *f = ctx;
    struct ushp_hdr h;
    const uint8_t *pl;
    if (f->refuse)
        return USHC_IO_REFUSED;
    if (f->refuse_sends > 0) {
        f->refuse_sends--;
        return USHC_IO_REFUSED;
    }
    CHECK_EQ(ushp_parse(d, len, &h, &pl), 0);
    CHECK(h.flags & USHP_FLAG_LAST);
    CHECK_EQ(h.chunk, 0);
    if (f->key && (h.flags & USHP_FLAG_CHALLENGE)) {
        CHECK(ushp_auth_verify(f->key, d, len));
        CHECK_EQ(len, USHP_CHALLENGE_DGRAM);
        f->challenges++;
        if (f->answer_challenges && f->nq < MAXQ) {
            f->q[f->nq].at = f->now + 3;
            f->q[f->nq].len = ushp_build_challenge_reply(f->q[f->nq].d, sizeof f->q[f->nq].d,
                                                         f->answer_key ? f->answer_key : f->key,
                                                         &h, f->epoch, f->highest);
            f->nq++;
        }
        return 0;
    }
    if (f->key && h.epoch != f->epoch) {
        f->stale++;
        return 0;
    }
    if (f->sends < 16)
        f->send_at[f->sends] = f->now;
    f->sends++;
    f->seq = h.seq;
    if (f->key) {
        CHECK(h.flags & USHP_FLAG_AUTH);
        CHECK(!(h.flags & USHP_FLAG_REPLY));
        CHECK(ushp_auth_verify(f->key, d, len));
        f->nonce = h.nonce;
        if (f->sends == 1) {
            memcpy(f->first, d, len);
            f->firstlen = len;
        } else {
            f->resend_differs |= len != f->firstlen || memcmp(d, f->first, len) != 0;
        }
    }
    memcpy(f->cmd, pl, h.len);
    f->cmd[h.len] = 0;
    if (f->on_request)
        f->on_request(f);
    return 0;
}

static long f_recv(void *ctx, void *buf, size_t cap, uint64_t timeout_ms)
{
    struct fake *f = ctx;
    if (++f->waits > 100000) {
        test_fail(__FILE__, __LINE__, "the client keeps polling without giving up");
        errno = ELOOP;
        return USHC_IO_ERROR;
    }
    if (f->recv_error) {
        errno = EIO;
        return USHC_IO_ERROR;
    }
    if (f->recv_refusals > 0) {
        f->recv_refusals--;
        return USHC_IO_REFUSED;
    }
    if (f->next < f->nq && f->q[f->next].at <= f->now + timeout_ms) {
        if (f->q[f->next].at > f->now)
            f->now = f->q[f->next].at;
        size_t n = f->q[f->next].len < cap ? f->q[f->next].len : cap;
        memcpy(buf, f->q[f->next].d, n);
        f->next++;
        return (long)n;
    }
    f->now += timeout_ms;
    return 0;
}

static uint64_t f_now(void *ctx) { return ((struct fake *)ctx)->now; }

/* Schedule a reply datagram at time at (after those already scheduled). */
static void put(struct fake *f, uint64_t at, uint32_t seq, uint16_t chunk, bool last,
                const char *text)
{
    CHECK(f->nq < MAXQ);
    f->q[f->nq].at = at;
    f->q[f->nq].len = ushp_build(f->q[f->nq].d, sizeof f->q[f->nq].d, seq, chunk, last,
                                 text, strlen(text));
    f->nq++;
}

/* The same, tagged under key for the request with nonce; reply sets the
 * reply flag (a request echoed back would not). */
static void put_auth(struct fake *f, uint64_t at, const uint8_t *key, uint32_t seq,
                     uint16_t chunk, uint16_t flags, uint64_t nonce, const char *text)
{
    CHECK(f->nq < MAXQ);
    f->q[f->nq].at = at;
    f->q[f->nq].len = ushp_build_auth(f->q[f->nq].d, sizeof f->q[f->nq].d, key, seq, chunk,
                                      flags, nonce, f->epoch, text, strlen(text));
    f->nq++;
}

struct run {
    int rc;
    char *out, *err;
    size_t outlen, errlen;
};

static const uint8_t *run_key;           /* the client's key for run_cmd, or NULL */

static struct run run_cmd(struct fake *f, const char *cmd, uint64_t timeout_ms)
{
    struct run r;
    FILE *out = open_memstream(&r.out, &r.outlen);
    FILE *err = open_memstream(&r.err, &r.errlen);
    struct ushc c = { .io = { f, f_send, f_recv, f_now }, .seq = 1000, .timeout_ms = timeout_ms,
                      .peer = "127.0.0.1:9000", .prog = "sonde-sh", .out = out, .err = err,
                      .key = run_key };
    r.rc = ushc_run(&c, cmd);
    fclose(out);
    fclose(err);
    return r;
}

static void run_free(struct run *r) { free(r->out); free(r->err); }

/* Reply "hello\n" 10 ms after each request. */
static void answer_hello(struct fake *f) { put(f, f->now + 10, f->seq, 0, true, "hello\n"); }
/* Reply "hello\n", tagged, 10 ms after each request (authenticated mode). */
static void answer_hello_auth(struct fake *f)
{
    put_auth(f, f->now + 10, f->key, f->seq, 0, USHP_FLAG_REPLY | USHP_FLAG_LAST, f->nonce,
             "hello\n");
}
/* Answer only the second request. */
static void answer_second(struct fake *f)
{
    if (f->sends == 2)
        answer_hello(f);
}

TEST(ushc_reply_in_one_datagram)
{
    struct fake f = { .now = 5000, .on_request = answer_hello };
    struct run r = run_cmd(&f, "version", 5000);
    CHECK_EQ(r.rc, USHC_EXIT_OK);
    CHECK_STR(r.out, "hello\n");
    CHECK_STR(r.err, "");
    CHECK_EQ(f.sends, 1);
    CHECK_EQ(f.seq, 1001);                    /* the next sequence number */
    CHECK_STR(f.cmd, "version");
    run_free(&r);
}

TEST(ushc_resends_after_one_second)
{
    struct fake f = { .on_request = answer_second };
    struct run r = run_cmd(&f, "version", 5000);
    CHECK_EQ(r.rc, USHC_EXIT_OK);
    CHECK_STR(r.out, "hello\n");
    CHECK_EQ(f.sends, 2);
    CHECK_EQ(f.send_at[1] - f.send_at[0], USHC_RETRY_MS);
    run_free(&r);
}

TEST(ushc_gives_up_after_three_resends)
{
    struct fake f = { 0 };
    struct run r = run_cmd(&f, "version", 5000);
    CHECK_EQ(r.rc, USHC_EXIT_PROTO);
    CHECK_EQ(f.sends, 1 + USHC_RETRIES);
    for (int i = 1; i < f.sends && i < 16; i++)
        CHECK_EQ(f.send_at[i] - f.send_at[i - 1], USHC_RETRY_MS);
    CHECK_EQ(f.now, 5000);                    /* -t's silence, not a moment less */
    CHECK(strstr(r.err, "timeout") != NULL);
    CHECK(strstr(r.err, "127.0.0.1:9000") != NULL);
    CHECK(strstr(r.err, "sent 4 times") != NULL);
    CHECK_STR(r.out, "");
    run_free(&r);
}

/* A long reply: a chunk every 900 ms, never 1 s of silence, and longer in
 * all than the timeout. */
static void answer_slowly(struct fake *f)
{
    if (f->sends > 1)
        return;
    char text[16];
    for (int i = 0; i < 8; i++) {
        snprintf(text, sizeof text, "c%d ", i);
        put(f, f->now + 900 * (uint64_t)(i + 1), f->seq, (uint16_t)i, i == 7, text);
    }
}

TEST(ushc_progress_restarts_the_resend_and_silence_clocks)
{
    struct fake f = { .on_request = answer_slowly };
    struct run r = run_cmd(&f, "profile 7000", 2000);
    CHECK_EQ(r.rc, USHC_EXIT_OK);
    CHECK_EQ(f.sends, 1);
    CHECK_STR(r.out, "c0 c1 c2 c3 c4 c5 c6 c7 ");
    run_free(&r);
}

/* A long command: the shell ignores the resends at 1, 2 and 3 s (it is
 * still running), its first chunk comes at 4.5 s, the second is lost. The
 * chunk gives the resend budget back: the resend a second later brings the
 * rest from the kept reply. A budget spent for good would end in a timeout. */
static void answer_late_then_lose(struct fake *f)
{
    if (f->sends == 1)
        put(f, f->now + 4500, f->seq, 0, false, "first ");
    else if (f->sends == 5)
        put(f, f->now + 10, f->seq, 1, true, "second\n");
}

TEST(ushc_progress_gives_the_resends_back)
{
    struct fake f = { .on_request = answer_late_then_lose };
    struct run r = run_cmd(&f, "profile 4000", 6000);
    CHECK_EQ(r.rc, USHC_EXIT_OK);
    CHECK_STR(r.out, "first second\n");
    CHECK_EQ(f.sends, 5);
    CHECK_EQ(f.send_at[4] - f.send_at[3], 4500 - 3 * USHC_RETRY_MS + USHC_RETRY_MS);
    run_free(&r);
}

/* Chunks out of order and twice, with a stale reply to another seq mixed in. */
static void answer_shuffled(struct fake *f)
{
    uint32_t s = f->seq;
    put(f, 10, s - 1, 0, true, "stale\n");
    put(f, 10, s, 2, true, "C");
    put(f, 11, s, 0, false, "A");
    put(f, 12, s, 0, false, "A");
    put(f, 13, s, 2, true, "C");
    put(f, 14, s + 1, 1, false, "wrong seq");
    put(f, 15, s, 1, false, "B");
    put(f, 16, s, 1, false, "B");
}

TEST(ushc_reassembles_out_of_order_and_duplicate_chunks)
{
    struct fake f = { .on_request = answer_shuffled };
    struct run r = run_cmd(&f, "lines 3", 5000);
    CHECK_EQ(r.rc, USHC_EXIT_OK);
    CHECK_STR(r.out, "ABC");
    CHECK_STR(r.err, "");
    CHECK_EQ(f.sends, 1);
    run_free(&r);
}

TEST(ushc_ignores_replies_to_another_seq)
{
    struct fake f = { 0 };
    /* Only replies to the previous command ever come: a timeout, and none
     * of them printed. */
    for (int i = 0; i < 5; i++)
        put(&f, 100 + 500 * (uint64_t)i, 1000, 0, true, "old\n");
    struct run r = run_cmd(&f, "version", 3000);
    CHECK_EQ(r.rc, USHC_EXIT_PROTO);
    CHECK_STR(r.out, "");
    CHECK(strstr(r.err, "timeout") != NULL);
    run_free(&r);
}

/* Protocol errors: each one scheduled after a good first chunk. */
static int proto_case;
static void answer_badly(struct fake *f)
{
    uint32_t s = f->seq;
    put(f, 10, s, 0, false, "A");
    switch (proto_case) {
    case 0:                                   /* bad magic */
        put(f, 20, s, 1, true, "B");
        put_be32(f->q[f->nq - 1].d, 0x4E4F5349);
        break;
    case 1:                                   /* len disagrees with the size */
        put(f, 20, s, 1, true, "B");
        f->q[f->nq - 1].len++;
        break;
    case 2:                                   /* shorter than a header */
        put(f, 20, s, 1, true, "B");
        f->q[f->nq - 1].len = 10;
        break;
    case 3:                                   /* another reply id: another run */
        put(f, 20, s, 1, true, "B");
        put_be16(f->q[f->nq - 1].d + USHP_OFF_ID, 1);
        break;
    case 4:                                   /* a chunk after the last */
        put(f, 20, s, 2, true, "C");
        put(f, 30, s, 3, false, "D");
        break;
    case 5:                                   /* a second, different last chunk */
        put(f, 20, s, 2, true, "C");
        put(f, 30, s, 1, true, "B");
        break;
    case 7:                                   /* a last chunk below one received */
        put(f, 20, s, 2, false, "C");
        put(f, 30, s, 1, true, "B");
        break;
    case 6:                                   /* payload over 1400 */
        f->q[f->nq].at = 20;
        f->q[f->nq].len = USHP_HDR_LEN + USHP_CHUNK_MAX + 1;
        memset(f->q[f->nq].d, 'x', f->q[f->nq].len);
        ushp_build(f->q[f->nq].d, sizeof f->q[f->nq].d, s, 1, true, "", 0);
        put_be16(f->q[f->nq].d + USHP_OFF_LEN, USHP_CHUNK_MAX + 1);
        f->nq++;
        break;
    }
}

TEST(ushc_protocol_errors_exit_2)
{
    const char *want[] = { "bad magic", "length field", "shorter than", "two different replies",
                           "chunk 3 after the last chunk 2", "a second last chunk 1",
                           "too long", "last chunk 1 but chunk 2 received" };
    for (proto_case = 0; proto_case < 8; proto_case++) {
        struct fake f = { .on_request = answer_badly };
        struct run r = run_cmd(&f, "version", 5000);
        CHECK_EQ(r.rc, USHC_EXIT_PROTO);
        CHECK(strstr(r.err, "protocol error") != NULL);
        CHECK(strstr(r.err, want[proto_case]) != NULL);
        CHECK_EQ(f.sends, 1);                 /* reported, not retried */
        if (r.rc != USHC_EXIT_PROTO || !strstr(r.err, want[proto_case]))
            printf("  case %d: rc %d err %s", proto_case, r.rc, r.err);
        run_free(&r);
    }
}

/* No splicing: the shell lost its kept reply and ran the command again
 * (a new reply id); chunks of the two runs are never put together, even
 * where the text would look whole. The same chunk index again under
 * another id is refused too, not taken for a duplicate. */
static int splice_case;
static void answer_twice(struct fake *f)
{
    if (f->sends != 1)
        return;
    uint32_t s = f->seq;
    put(f, 10, s, 0, false, "first run, chunk 0\n");
    put_be16(f->q[f->nq - 1].d + USHP_OFF_ID, 7);
    put(f, 20, s, splice_case ? 0 : 1, true, "second run\n");
    put_be16(f->q[f->nq - 1].d + USHP_OFF_ID, 9);
}

TEST(ushc_refuses_to_splice_two_replies)
{
    for (splice_case = 0; splice_case < 2; splice_case++) {
        struct fake f = { .on_request = answer_twice };
        struct run r = run_cmd(&f, "lines 3", 5000);
        CHECK_EQ(r.rc, USHC_EXIT_PROTO);
        CHECK_STR(r.out, "first run, chunk 0\n");
        CHECK(strstr(r.err, "chunks of two different replies (ids 7 and 9)") != NULL);
        run_free(&r);
    }
}

TEST(ushc_refused_exits_1)
{
    struct fake f = { .refuse = true };
    struct run r = run_cmd(&f, "version", 5000);
    CHECK_EQ(r.rc, USHC_EXIT_REFUSED);
    CHECK(strstr(r.err, "refused") != NULL);
    run_free(&r);
}

TEST(ushc_receive_error_exits_2)
{
    struct fake f = { .recv_error = true };
    struct run r = run_cmd(&f, "version", 5000);
    CHECK_EQ(r.rc, USHC_EXIT_PROTO);
    CHECK(strstr(r.err, "receive from 127.0.0.1:9000") != NULL);
    run_free(&r);
}

TEST(ushc_command_too_long_is_not_sent)
{
    char cmd[USHP_CMD_MAX + 2];
    memset(cmd, 'x', sizeof cmd - 1);
    cmd[sizeof cmd - 1] = 0;
    struct fake f = { .on_request = answer_hello };
    struct run r = run_cmd(&f, cmd, 5000);
    CHECK_EQ(r.rc, USHC_EXIT_PROTO);
    CHECK_EQ(f.sends, 0);
    CHECK(strstr(r.err, "at most 255") != NULL);
    run_free(&r);
    cmd[USHP_CMD_MAX] = 0;                    /* exactly the limit: sent */
    r = run_cmd(&f, cmd, 5000);
    CHECK_EQ(r.rc, USHC_EXIT_OK);
    CHECK_EQ(f.sends, 1);
    run_free(&r);
}

TEST(ushc_empty_reply)
{
    struct fake f = { 0 };
    put(&f, 5, 1001, 0, true, "");
    struct run r = run_cmd(&f, "", 5000);
    CHECK_EQ(r.rc, USHC_EXIT_OK);
    CHECK_EQ(r.outlen, 0);
    run_free(&r);
}

/* ---- authenticated mode ---- */

static uint8_t ckey[USHP_KEY_LEN] = { 1, 2, 3 }, okey[USHP_KEY_LEN] = { 9 };
static int auth_case;

/* A keyed fake shell: its epoch, and challenges answered. */
static struct fake auth_fake(void (*on_request)(struct fake *f))
{
    return (struct fake){ .on_request = on_request, .key = ckey, .epoch = 0xe90c0001,
                          .answer_challenges = true };
}

/* Replies in two chunks, the second one after the first resend. */
static void answer_auth(struct fake *f)
{
    uint16_t R = USHP_FLAG_REPLY;
    switch (auth_case) {
    case 0:                                   /* good, over a resend */
        if (f->sends == 1)
            put_auth(f, f->now + 10, ckey, f->seq, 0, R, f->nonce, "hel");
        else
            put_auth(f, f->now + 10, ckey, f->seq, 1, R | USHP_FLAG_LAST, f->nonce, "lo\n");
        break;
    case 6:                                   /* a valid late reply to seq - 1, then ours */
        put_auth(f, f->now + 5, ckey, f->seq - 1, 0, R | USHP_FLAG_LAST, f->nonce - 7, "old\n");
        put_auth(f, f->now + 10, ckey, f->seq, 0, R | USHP_FLAG_LAST, f->nonce, "new\n");
        break;
    }
}

static struct run run_c(struct ushc *c, const char *cmd)
{
    struct run r;
    c->out = open_memstream(&r.out, &r.outlen);
    c->err = open_memstream(&r.err, &r.errlen);
    r.rc = ushc_run(c, cmd);
    fclose(c->out);
    fclose(c->err);
    return r;
}

static struct ushc auth_client(struct fake *f)
{
    return (struct ushc){ .io = { f, f_send, f_recv, f_now }, .seq = 1000, .timeout_ms = 5000,
                          .peer = "127.0.0.1:9000", .prog = "sonde-sh", .key = ckey };
}

static uint64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A first command asks for the epoch, then sends the request tagged for
 * it with a nonce above the shell's highest; the one extra challenge of a
 * call goes out with the first resend. */
TEST(ushc_auth_challenge_then_request_tagged_for_the_epoch)
{
    struct fake f = auth_fake(answer_auth);
    auth_case = 0;
    f.highest = wall_ns() + 3600ull * 1000000000u;      /* a client an hour ahead */
    struct ushc c = auth_client(&f);
    struct run r = run_c(&c, "version");
    CHECK_EQ(r.rc, USHC_EXIT_OK);
    CHECK_STR(r.out, "hello\n");
    CHECK_EQ(f.sends, 2);
    CHECK_EQ(f.challenges, 2);                /* before the request, and at its resend */
    CHECK_EQ(f.stale, 0);
    CHECK(!f.resend_differs);                 /* a resend is the same datagram */
    CHECK_EQ(c.epoch, f.epoch);
    CHECK(f.nonce > f.highest);               /* shifted above the shell's highest */
    CHECK(f.nonce < f.highest + 60ull * 1000000000u);
    run_free(&r);
    /* The next command knows the epoch: no challenge before it. */
    auth_case = 6;
    f.sends = 0;
    r = run_c(&c, "version");
    CHECK_EQ(r.rc, USHC_EXIT_OK);
    CHECK_STR(r.out, "new\n");
    CHECK_EQ(f.challenges, 2);
    run_free(&r);
}

/* Datagrams that do not verify, before the real reply: each is counted
 * and ignored, and the command completes (before, the first one made it a
 * protocol error: one forged datagram stopped any command). */
static void answer_after_forgeries(struct fake *f)
{
    uint16_t R = USHP_FLAG_REPLY;
    put_auth(f, f->now + 1, okey, f->seq, 0, R | USHP_FLAG_LAST, f->nonce, "wrong key\n");
    put(f, f->now + 2, f->seq, 0, true, "untagged\n");
    put_auth(f, f->now + 3, ckey, f->seq, 0, R | USHP_FLAG_LAST, f->nonce - 1, "other nonce\n");
    memcpy(f->q[f->nq].d, f->first, f->firstlen);          /* the request echoed back */
    f->q[f->nq].len = f->firstlen;
    f->q[f->nq++].at = f->now + 4;
    put_auth(f, f->now + 5, ckey, f->seq, 0, R | USHP_FLAG_LAST, f->nonce, "changed\n");
    f->q[f->nq - 1].d[USHP_AUTH_PAYLOAD_OFF] ^= 1;
    put(f, f->now + 6, f->seq, 0, true, "x");
    f->q[f->nq - 1].len = 7;                                /* malformed */
    put_auth(f, f->now + 7, ckey, f->seq, 0, R, f->nonce, "real ");
    put_auth(f, f->now + 8, okey, f->seq, 1, R | USHP_FLAG_LAST, f->nonce, "forged end\n");
    put_auth(f, f->now + 9, ckey, f->seq, 1, R | USHP_FLAG_LAST, f->nonce, "reply\n");
}

TEST(ushc_auth_forged_datagrams_are_counted_and_ignored)
{
    struct fake f = auth_fake(answer_after_forgeries);
    struct ushc c = auth_client(&f);
    struct run r = run_c(&c, "version");
    CHECK_EQ(r.rc, USHC_EXIT_OK);
    CHECK_STR(r.out, "real reply\n");
    CHECK_EQ(c.ignored, 7);
    CHECK(strstr(r.err, "ignored 7 datagrams") != NULL);
    CHECK(strstr(r.err, "protocol error") == NULL);
    CHECK_EQ(f.sends, 1);
    run_free(&r);
}

/* Forged answers to the challenge are ignored too: one under another key
 * (counted), one to another challenge's nonce (not ours: passed over);
 * the real answer, behind them, counts. */
TEST(ushc_auth_forged_challenge_answer_is_ignored)
{
    struct fake f = auth_fake(answer_hello_auth);
    struct ushc c = auth_client(&f);
    struct ushp_hdr h = { .seq = c.seq, .nonce = 12345 };
    f.q[0].at = 1;
    f.q[0].len = ushp_build_challenge_reply(f.q[0].d, sizeof f.q[0].d, okey, &h, 0xbad, 0);
    f.q[1].at = 2;
    f.q[1].len = ushp_build_challenge_reply(f.q[1].d, sizeof f.q[1].d, ckey, &h, 0xbad, 0);
    f.nq = 2;
    struct run r = run_c(&c, "version");
    CHECK_EQ(r.rc, USHC_EXIT_OK);
    CHECK_STR(r.out, "hello\n");
    CHECK_EQ(c.epoch, f.epoch);
    CHECK_EQ(c.ignored, 1);
    run_free(&r);
}

TEST(ushc_auth_late_reply_to_an_earlier_request_is_ignored)
{
    struct fake f = auth_fake(answer_auth);
    auth_case = 6;
    struct ushc c = auth_client(&f);
    struct run r = run_c(&c, "version");
    CHECK_EQ(r.rc, USHC_EXIT_OK);
    CHECK_STR(r.out, "new\n");
    CHECK_EQ(c.ignored, 0);
    run_free(&r);
}

/* No answer to the challenge: the timeout says so. */
TEST(ushc_auth_unanswered_challenge_times_out)
{
    struct fake f = auth_fake(answer_hello_auth);
    f.answer_challenges = false;
    struct ushc c = auth_client(&f);
    struct run r = run_c(&c, "version");
    CHECK_EQ(r.rc, USHC_EXIT_PROTO);
    CHECK(strstr(r.err, "no answer to the challenge") != NULL);
    CHECK_EQ(f.challenges, 1 + USHC_RETRIES);
    CHECK_EQ(f.sends, 0);
    run_free(&r);
}

/* The shell rebooted between two commands: the request under the old
 * epoch is refused in silence; the challenge at the first resend tells
 * the new epoch, and the command goes again under it, once. */
TEST(ushc_auth_shell_restarted_between_commands)
{
    struct fake f = auth_fake(answer_hello_auth);
    struct ushc c = auth_client(&f);
    struct run r = run_c(&c, "version");
    CHECK_EQ(r.rc, USHC_EXIT_OK);
    run_free(&r);
    uint64_t old = c.epoch;
    f.epoch = 0xe90c0002;                      /* a new boot */
    f.highest = 0;
    f.sends = 0;
    r = run_c(&c, "version");
    CHECK_EQ(r.rc, USHC_EXIT_OK);
    CHECK_STR(r.out, "hello\n");
    CHECK(c.epoch == f.epoch && c.epoch != old);
    CHECK_EQ(f.stale, 2);                      /* the request and its one resend */
    CHECK_EQ(f.sends, 1);                      /* run once in the new boot */
    CHECK(strstr(r.err, "restarted (new boot epoch) before answering") != NULL);
    run_free(&r);
}

/* It rebooted in the middle of a reply: the rest cannot come; the client
 * says so and does not send the command again. */
static void half_then_reboot(struct fake *f)
{
    put_auth(f, f->now + 10, ckey, f->seq, 0, USHP_FLAG_REPLY, f->nonce, "first half ");
    f->epoch = 0xe90c0003;
}

TEST(ushc_auth_shell_restarted_mid_reply)
{
    struct fake f = auth_fake(half_then_reboot);
    struct ushc c = auth_client(&f);
    struct run r = run_c(&c, "version");
    CHECK_EQ(r.rc, USHC_EXIT_PROTO);
    CHECK_STR(r.out, "first half ");
    CHECK(strstr(r.err, "in the middle of the reply") != NULL);
    CHECK_EQ(f.sends, 1);
    run_free(&r);
}

/* A "port unreachable" is ICMP, which anyone can forge: with a key it is
 * a lost datagram. The resends go on and the command completes (before,
 * one forged ICMP ended the command with exit 1). */
TEST(ushc_auth_forged_refusal_does_not_end_the_command)
{
    struct fake f = auth_fake(answer_hello_auth);
    f.refuse_sends = 1;                       /* the challenge is "refused" */
    struct ushc c = auth_client(&f);
    struct run r = run_c(&c, "version");
    CHECK_EQ(r.rc, USHC_EXIT_OK);
    CHECK_STR(r.out, "hello\n");
    CHECK(strstr(r.err, "refused") == NULL);
    CHECK_EQ(f.challenges, 1);                /* the resend got through */
    run_free(&r);
    /* Reported on the receive side (a connected socket's ECONNREFUSED):
     * ignored the same way. */
    struct fake g = auth_fake(answer_hello_auth);
    g.recv_refusals = 2;
    struct ushc c2 = auth_client(&g);
    r = run_c(&c2, "version");
    CHECK_EQ(r.rc, USHC_EXIT_OK);
    CHECK_STR(r.out, "hello\n");
    CHECK_EQ(g.recv_refusals, 0);             /* both were seen */
    run_free(&r);
}

/* With a key, a shell that only ever refuses (really nothing there, or
 * every datagram lost to forged refusals) is reported refused, exit 1,
 * after the timeout, not at the first refusal. */
TEST(ushc_auth_refused_throughout_exits_1_at_the_timeout)
{
    struct fake f = auth_fake(answer_hello_auth);
    f.refuse = true;
    struct ushc c = auth_client(&f);
    struct run r = run_c(&c, "version");
    CHECK_EQ(r.rc, USHC_EXIT_REFUSED);
    CHECK(strstr(r.err, "refused the request") != NULL);
    CHECK(f.now >= c.timeout_ms);             /* it kept trying until -t */
    run_free(&r);
}

/* A tagged reply to our seq and nonce but for another epoch than the one
 * our request carries (another kernel sharing the key) is refused,
 * counted, and the command waits for the real one. */
static void answer_other_epoch_first(struct fake *f)
{
    uint64_t e = f->epoch;
    f->epoch = e ^ 0x5a5a;
    put_auth(f, f->now + 5, ckey, f->seq, 0, USHP_FLAG_REPLY | USHP_FLAG_LAST, f->nonce,
             "kernel B\n");
    f->epoch = e;
    put_auth(f, f->now + 10, ckey, f->seq, 0, USHP_FLAG_REPLY | USHP_FLAG_LAST, f->nonce,
             "kernel A\n");
}

TEST(ushc_auth_reply_for_another_epoch_is_refused)
{
    struct fake f = auth_fake(answer_other_epoch_first);
    struct ushc c = auth_client(&f);
    struct run r = run_c(&c, "version");
    CHECK_EQ(r.rc, USHC_EXIT_OK);
    CHECK_STR(r.out, "kernel A\n");
    CHECK_EQ(c.ignored, 1);
    run_free(&r);
    /* The code itself, on one datagram. */
    uint8_t d[200];
    struct ushp_hdr h;
    const uint8_t *pl;
    size_t n = ushp_build_auth(d, sizeof d, ckey, c.seq, 0, USHP_FLAG_REPLY | USHP_FLAG_LAST,
                               c.nonce, c.epoch + 1, "x", 1);
    CHECK_EQ(ushc_verify_reply(&c, d, n, &h, &pl), USHC_REPLY_EPOCH);
    n = ushp_build_auth(d, sizeof d, ckey, c.seq, 0, USHP_FLAG_REPLY | USHP_FLAG_LAST,
                        c.nonce, c.epoch, "x", 1);
    CHECK_EQ(ushc_verify_reply(&c, d, n, &h, &pl), USHC_REPLY_OK);
}

/* Kernel ids (ushid=): the client's -i turns its key into that id's, and
 * talks to the kernel of that id; an answer made under another id's key
 * (kernel beta's, redirected to a client of alpha) is ignored and counted,
 * never taken for alpha's epoch. */
TEST(ushc_auth_kernel_id)
{
    uint8_t k_alpha[USHP_KEY_LEN], k_beta[USHP_KEY_LEN], mine[USHP_KEY_LEN];
    ushp_id_key(ckey, "alpha", k_alpha);
    ushp_id_key(ckey, "beta", k_beta);
    char *e = NULL;
    size_t elen = 0;
    FILE *err = open_memstream(&e, &elen);
    memcpy(mine, ckey, sizeof mine);
    CHECK_EQ(ushc_use_id(mine, "al pha", err, "sonde-sh"), -1);
    fclose(err);
    CHECK(strstr(e, "kernel id 'al pha' must be 1-31 characters") != NULL);
    free(e);
    CHECK(memcmp(mine, ckey, sizeof mine) == 0);          /* untouched */
    CHECK_EQ(ushc_use_id(mine, "alpha", stderr, "sonde-sh"), 0);
    CHECK(memcmp(mine, k_alpha, sizeof mine) == 0);
    /* The kernel alpha answers. */
    struct fake f = auth_fake(answer_hello_auth);
    f.key = k_alpha;
    struct ushc c = auth_client(&f);
    c.key = mine;
    struct run r = run_c(&c, "version");
    CHECK_EQ(r.rc, USHC_EXIT_OK);
    CHECK_STR(r.out, "hello\n");
    run_free(&r);
    /* Beta's answer to our challenge is nobody's word for alpha. */
    struct fake g = auth_fake(answer_hello_auth);
    g.key = k_alpha;
    g.answer_key = k_beta;
    struct ushc c2 = auth_client(&g);
    c2.key = mine;
    r = run_c(&c2, "version");
    CHECK_EQ(r.rc, USHC_EXIT_PROTO);
    CHECK_EQ(c2.epoch, 0);
    CHECK_EQ(c2.ignored, 1 + USHC_RETRIES);
    CHECK(strstr(r.err, "no answer to the challenge") != NULL);
    CHECK(strstr(r.err, "ushid=") != NULL);
    CHECK_EQ(g.sends, 0);
    run_free(&r);
}

TEST(ushc_auth_nonces_rise)
{
    struct ushc c = { .key = ckey };
    uint8_t d[400];
    uint64_t last = 0;
    bool rising = true;
    for (int i = 0; i < 1000; i++) {
        CHECK(ushc_build_request(&c, d, sizeof d, "x", 1) > 0);
        rising &= c.nonce > last;
        last = c.nonce;
    }
    CHECK(rising);
    CHECK_EQ(c.seq, 1000);
}

static int load(const char *content, size_t n, uint8_t *key, char *err, size_t errcap)
{
    char path[] = "/tmp/ushkey-test-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fwrite(content, 1, n, f);
    fclose(f);
    FILE *e = fmemopen(err, errcap, "w");
    int rc = ushc_load_key(path, key, e, "sonde-sh");
    fclose(e);
    unlink(path);
    return rc;
}

TEST(ushc_load_key_takes_64_hex_digits_and_a_newline)
{
    const char *hex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    uint8_t key[USHP_KEY_LEN];
    char err[512], buf[80];
    CHECK_EQ(load(hex, 64, key, err, sizeof err), 0);
    CHECK_EQ(key[31], 0x1f);
    snprintf(buf, sizeof buf, "%s\n", hex);
    CHECK_EQ(load(buf, 65, key, err, sizeof err), 0);
    snprintf(buf, sizeof buf, "%s\r\n", hex);
    CHECK_EQ(load(buf, 66, key, err, sizeof err), 0);
    /* Refused, each with the rule in the message and none of the file. */
    const char *bad[] = { "0001\n", "", NULL, NULL, NULL };
    char two_nl[80], extra[80], nonhex[80];
    snprintf(two_nl, sizeof two_nl, "%s\n\n", hex);
    snprintf(extra, sizeof extra, "%s00", hex);
    snprintf(nonhex, sizeof nonhex, "%s", hex);
    nonhex[10] = 'z';
    bad[2] = two_nl;
    bad[3] = extra;
    bad[4] = nonhex;
    for (int i = 0; i < 5; i++) {
        memset(err, 0, sizeof err);
        CHECK_EQ(load(bad[i], strlen(bad[i]), key, err, sizeof err), -1);
        CHECK(strstr(err, "64 hex digits") != NULL);
        CHECK(strstr(err, "0a0b0c0d") == NULL);
    }
    FILE *e = fmemopen(err, sizeof err, "w");
    CHECK_EQ(ushc_load_key("/nonexistent/key", key, e, "sonde-sh"), -1);
    fclose(e);
    CHECK(strstr(err, "/nonexistent/key") != NULL);
}
