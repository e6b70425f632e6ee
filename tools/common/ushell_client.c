/* tools/common/ushell_client.c: one UDP shell command from the client's side:
 * send, resend, reassemble (docs/udpshell.md, "What a client does").
 *
 * Waiting: the request is sent again (same sequence number: the shell then
 * resends its reply without running the command again) after each second
 * without a new chunk, at most USHC_RETRIES times in all; the client gives
 * up when no new chunk has arrived for timeout_ms. A command that prints
 * nothing for longer (a long `profile`) needs a larger timeout.
 *
 * With a key (the authenticated mode) a call first asks the shell for its
 * boot epoch with a challenge, unless an earlier call learnt it, and tags
 * the request for that epoch. At the first resend of a call it asks once
 * more: a shell that rebooted since refuses the request in silence, and
 * only a new epoch tells why. Datagrams that do not verify are counted
 * and ignored, never taken for the shell's word nor allowed to end the
 * command.
 *
 * ushc_run_all runs one command on each of several shells at once with
 * the same steps, waiting on all of them together.
 *
 * Shared by the host tools: prefix ushc_ (USHC_ for constants). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/sha256.h"
#include "tools/common/ushell_client.h"
#include "uapi/byteorder.h"
#include "uapi/udpshell.h"

#define MAX_CHUNKS 65536

/* One reply being reassembled. Chunks may arrive out of order or twice:
 * they are kept by index and written out as soon as they are contiguous. */
struct reply {
    uint8_t *have;              /* per chunk: received */
    uint8_t **data;             /* per chunk: payload copy until written */
    uint16_t *len;
    long last;                  /* index of the flagged chunk, -1 until seen */
    long next_out;              /* first chunk not yet written */
    long id;                    /* the reply id of its chunks, -1 until the first */
};

static bool reply_init(struct reply *r)
{
    r->have = calloc(MAX_CHUNKS, 1);
    r->data = calloc(MAX_CHUNKS, sizeof *r->data);
    r->len = calloc(MAX_CHUNKS, sizeof *r->len);
    r->last = -1;
    r->next_out = 0;
    r->id = -1;
    return r->have && r->data && r->len;
}

static void reply_free(struct reply *r)
{
    for (long i = 0; r->data && i < MAX_CHUNKS; i++)
        free(r->data[i]);
    free(r->have);
    free(r->data);
    free(r->len);
}

static void reply_flush(struct ushc *c, struct reply *r)
{
    while (r->next_out < MAX_CHUNKS && r->have[r->next_out]) {
        long i = r->next_out++;
        fwrite(r->data[i], 1, r->len[i], c->out);
        free(r->data[i]);
        r->data[i] = NULL;
    }
    fflush(c->out);
}

/* Take one verified chunk of our reply (seq and, with a key, tag and
 * nonce checked: ushc_verify_reply). Returns 1 if it was a new chunk, 0
 * if a duplicate, -1 on a protocol error (reported). */
static int reply_take(struct ushc *c, struct reply *r, const struct ushp_hdr *h,
                      const uint8_t *pl)
{
    bool last = h->flags & USHP_FLAG_LAST;
    /* One reply's chunks only: another id is another reply (the command
     * ran again because its kept reply was gone when we resent, or the
     * shell resent a copy cut at 1 MiB), and the two may differ anywhere.
     * Checked before the duplicate test: the same index from the other
     * reply is no duplicate. */
    if (r->id >= 0 && h->id != r->id) {
        fprintf(c->err, "%s: protocol error: chunks of two different replies (ids %ld and "
                "%u) for seq %u: not mixing them\n", c->prog, r->id, h->id, h->seq);
        return -1;
    }
    r->id = h->id;
    if (r->last >= 0 && last && h->chunk != r->last) {
        fprintf(c->err, "%s: protocol error: a second last chunk %u (the last was %ld, "
                "seq %u)\n", c->prog, h->chunk, r->last, h->seq);
        return -1;
    }
    if (r->last >= 0 && h->chunk > r->last) {
        fprintf(c->err, "%s: protocol error: chunk %u after the last chunk %ld "
                "(seq %u)\n", c->prog, h->chunk, r->last, h->seq);
        return -1;
    }
    if (r->have[h->chunk])
        return 0;                   /* duplicate (a retransmitted reply) */
    if (last) {
        for (long i = h->chunk + 1; i < MAX_CHUNKS; i++) {
            if (r->have[i]) {
                fprintf(c->err, "%s: protocol error: last chunk %u but chunk %ld "
                        "received (seq %u)\n", c->prog, h->chunk, i, h->seq);
                return -1;
            }
        }
        r->last = h->chunk;
    }
    r->data[h->chunk] = malloc(h->len ? h->len : 1);
    if (!r->data[h->chunk]) {
        fprintf(c->err, "%s: out of memory\n", c->prog);
        return -1;
    }
    memcpy(r->data[h->chunk], pl, h->len);
    r->len[h->chunk] = h->len;
    r->have[h->chunk] = 1;
    reply_flush(c, r);
    return 1;
}

static bool reply_done(const struct reply *r)
{
    return r->last >= 0 && r->next_out > r->last;
}

/* ---- one command in flight -------------------------------------------
 *
 * A call is driven by three events: time passing (call_tick: resend or
 * give up), a datagram or a receive error (call_feed), and nothing else.
 * ushc_run waits on one socket between events, ushc_run_all on several;
 * the protocol is the same code either way. */

struct call {
    struct reply r;
    const char *cmd;            /* the caller's, alive for the whole call */
    uint8_t req[USHP_HDR_LEN + USHP_AUTH_OVERHEAD + USHP_CMD_MAX];
    size_t reqlen;
    uint64_t req_epoch;         /* the epoch req is tagged for */
    uint8_t chal[USHP_CHALLENGE_DGRAM];
    size_t challen;
    bool challenging;           /* waiting for the epoch before the request */
    bool rechallenged;          /* the one check for a restarted shell is out */
    bool refused;               /* a "port unreachable" came (authenticated mode) */
    bool verified;              /* a datagram from the shell verified (idem) */
    unsigned chunks;            /* new chunks taken */
    int retries;
    uint64_t last_progress, last_send;
    int rc;                     /* USHC_EXIT_*, or -1 while in flight */
};

static void say_refused(const struct ushc *c)
{
    fprintf(c->err, "%s: %s refused the request: nothing listens there\n", c->prog, c->peer);
}

/* "Port unreachable" (ICMP, so unauthenticated): the end of the command in
 * the open mode. With a key anyone could forge it to stop any command, so
 * it counts as a lost datagram: the resends go on, and the call ends
 * "refused" only if nothing verified came before the timeout. The
 * USHC_EXIT_* status if the command ends, else -1. */
static int call_refused(struct ushc *c, struct call *k)
{
    if (c->key) {
        k->refused = true;
        return -1;
    }
    say_refused(c);
    return USHC_EXIT_REFUSED;
}

/* Send the request; a USHC_EXIT_* status if that ends the command, else -1. */
static int send_request(struct ushc *c, struct call *k, const uint8_t *d, size_t len)
{
    int rc = c->io.send(c->io.ctx, d, len);
    if (rc == USHC_IO_REFUSED)
        return call_refused(c, k);
    /* Any other failure is like a loss on the wire: the resend covers it. */
    if (rc < 0)
        fprintf(c->err, "%s: send to %s: %s\n", c->prog, c->peer, strerror(errno));
    return -1;
}

/* Build the request for k->cmd (tagged for c->epoch) and send it. */
static void call_send_request(struct ushc *c, struct call *k)
{
    k->reqlen = ushc_build_request(c, k->req, sizeof k->req, k->cmd, strlen(k->cmd));
    k->req_epoch = c->epoch;
    k->rc = send_request(c, k, k->req, k->reqlen);
}

/* Ask the shell for its epoch (a new challenge nonce each time). */
static int call_send_challenge(struct ushc *c, struct call *k)
{
    k->challen = ushc_build_challenge(c, k->chal, sizeof k->chal);
    return send_request(c, k, k->chal, k->challen);
}

static void call_start(struct ushc *c, struct call *k, const char *cmd, uint64_t now)
{
    size_t n = strlen(cmd);
    memset(k, 0, sizeof *k);
    k->cmd = cmd;
    k->rc = -1;
    k->last_progress = k->last_send = now;
    c->ignored = 0;
    if (!reply_init(&k->r)) {
        fprintf(c->err, "%s: out of memory\n", c->prog);
        k->rc = USHC_EXIT_PROTO;
        return;
    }
    if (n > USHP_CMD_MAX) {
        fprintf(c->err, "%s: command is %zu bytes; the shell takes at most %d\n",
                c->prog, n, USHP_CMD_MAX);
        k->rc = USHC_EXIT_PROTO;
        return;
    }
    if (c->key && c->epoch == 0) {
        k->challenging = true;
        k->rc = call_send_challenge(c, k);
    } else {
        call_send_request(c, k);
    }
}

/* When the call next needs the clock: its resend or its give-up time. */
static uint64_t call_due(const struct ushc *c, const struct call *k)
{
    uint64_t due = k->last_progress + c->timeout_ms;
    if (k->retries < USHC_RETRIES && k->last_send + USHC_RETRY_MS < due)
        due = k->last_send + USHC_RETRY_MS;
    return due;
}

/* The clock reads now: give up after timeout_ms of silence, or resend
 * after each second of it, at most USHC_RETRIES times. */
static void call_tick(struct ushc *c, struct call *k, uint64_t now)
{
    /* A resend that fell due is sent even when the silence has also run
     * out by the time this looks: a late wake-up must not cost the
     * request its retransmission. */
    if (now - k->last_send >= USHC_RETRY_MS && k->retries < USHC_RETRIES) {
        if (k->challenging) {
            k->rc = send_request(c, k, k->chal, k->challen);
        } else {
            k->rc = send_request(c, k, k->req, k->reqlen);
            /* Silence may be a shell that restarted and refuses our epoch:
             * ask for its epoch once per call (the answer is handled in
             * call_challenged). */
            if (k->rc < 0 && c->key && !k->rechallenged) {
                k->rechallenged = true;
                k->rc = call_send_challenge(c, k);
            }
        }
        k->retries++;
        k->last_send = now;
        if (k->rc >= 0)
            return;
    }
    if (now - k->last_progress >= c->timeout_ms) {
        if (k->refused && !k->verified) {
            say_refused(c);
            k->rc = USHC_EXIT_REFUSED;
            return;
        }
        /* A shell refuses without a word both a request without its key
         * and one with the wrong key: say so, it is the likely cause. */
        fprintf(c->err, "%s: timeout: no %s from %s for %.1f s (%s sent %d times)%s\n",
                c->prog, k->challenging ? "answer to the challenge" : "reply", c->peer,
                c->timeout_ms / 1000.0, k->challenging ? "challenge" : "command",
                k->retries + 1,
                c->key ? "; a shell without this key (or this kernel id, ushid=) does not "
                         "answer tagged requests"
                       : "; a shell started with ushkey= answers only its key (-k)");
        k->rc = USHC_EXIT_PROTO;
        return;
    }
}

/* Progress: the silence clock, the resend clock and the resend budget
 * restart. The shell drops resends that arrive while the command still
 * runs, so a long command spends the budget before its first chunk; a
 * datagram lost after that must still be recoverable. */
static void call_progress(struct ushc *c, struct call *k)
{
    k->last_progress = k->last_send = c->io.now_ms(c->io.ctx);
    k->retries = 0;
}

/* The shell told its epoch (ushc_take_challenge has stored it). */
static void call_challenged(struct ushc *c, struct call *k)
{
    if (k->challenging) {
        k->challenging = false;
        call_progress(c, k);
        call_send_request(c, k);
        return;
    }
    if (c->epoch == k->req_epoch)
        return;                     /* the same boot: the request stands */
    if (k->chunks == 0) {
        /* It restarted before answering: our request cannot run under the
         * new epoch, so sending it again under that one runs it at most
         * once in this boot. Whether it ran before the restart, nobody
         * can say: tell the user. */
        fprintf(c->err, "%s: %s restarted (new boot epoch) before answering; the command "
                "is sent again to the new boot (it may have run before the restart)\n",
                c->prog, c->peer);
        call_progress(c, k);
        call_send_request(c, k);
        return;
    }
    fprintf(c->err, "%s: %s restarted (new boot epoch) in the middle of the reply: what "
            "was printed is incomplete, and the command is not sent again\n", c->prog, c->peer);
    k->rc = USHC_EXIT_PROTO;
}

/* What a receive gave: got bytes of d, 0 for nothing, or USHC_IO_*. */
static void call_feed(struct ushc *c, struct call *k, long got, const uint8_t *d)
{
    if (got == USHC_IO_REFUSED) {
        k->rc = call_refused(c, k);
        return;
    }
    if (got < 0) {
        fprintf(c->err, "%s: receive from %s: %s\n", c->prog, c->peer, strerror(errno));
        k->rc = USHC_EXIT_PROTO;
        return;
    }
    if (got == 0)
        return;
    struct ushp_hdr h;
    const uint8_t *pl;
    int v = ushc_verify_reply(c, d, (size_t)got, &h, &pl);
    if (v < 0 && c->key) {
        /* Anyone can send us a datagram; only a tag says the shell did. */
        c->ignored++;
        return;
    }
    if (v == USHC_REPLY_MALFORMED) {
        fprintf(c->err, "%s: protocol error: bad reply datagram (%ld bytes): %s\n",
                c->prog, got, ushp_strerror(ushp_parse_reply(d, (size_t)got, &h, &pl)));
        k->rc = USHC_EXIT_PROTO;
        return;
    }
    if (v >= 0)
        k->verified = true;
    if (v == USHC_REPLY_CHALLENGE) {
        ushc_take_challenge(c, &h, pl);
        call_challenged(c, k);
        return;
    }
    if (v != USHC_REPLY_OK || k->challenging)
        return;                     /* a late reply to an earlier request */
    int taken = reply_take(c, &k->r, &h, pl);
    if (taken < 0) {
        k->rc = USHC_EXIT_PROTO;
    } else if (taken > 0) {
        k->chunks++;
        call_progress(c, k);
        if (reply_done(&k->r))
            k->rc = USHC_EXIT_OK;
    }
}

/* The call is over: what it ignored, then its memory. */
static void call_end(struct ushc *c, struct call *k)
{
    if (c->ignored)
        fprintf(c->err, "%s: ignored %lu datagram%s from %s that did not verify (untagged, "
                "another key's or another request's: forged?)\n", c->prog, c->ignored,
                c->ignored == 1 ? "" : "s", c->peer);
    reply_free(&k->r);
}

static uint8_t dgram[65536];    /* one datagram at a time, whoever it is for */

int ushc_run(struct ushc *c, const char *cmd)
{
    struct call k;
    call_start(c, &k, cmd, c->io.now_ms(c->io.ctx));
    while (k.rc < 0) {
        uint64_t t = c->io.now_ms(c->io.ctx);
        call_tick(c, &k, t);
        if (k.rc >= 0)
            break;
        uint64_t due = call_due(c, &k);
        long got = c->io.recv(c->io.ctx, dgram, sizeof dgram, due > t ? due - t : 0);
        call_feed(c, &k, got, dgram);
    }
    call_end(c, &k);
    return k.rc;
}

void ushc_run_all(const struct ushc_mux *m, struct ushc **cs, const char **cmds,
                  unsigned n, int *rcs)
{
    struct call *ks = calloc(n ? n : 1, sizeof *ks);
    if (!ks) {
        for (unsigned i = 0; i < n; i++) {
            fprintf(cs[i]->err, "%s: out of memory\n", cs[i]->prog);
            rcs[i] = USHC_EXIT_PROTO;
        }
        return;
    }
    /* Every request goes out before any reply is awaited: the kernels
     * then sample the same window, give or take a round trip. */
    for (unsigned i = 0; i < n; i++)
        call_start(cs[i], &ks[i], cmds[i], m->now_ms(m->ctx));
    for (;;) {
        uint64_t t = m->now_ms(m->ctx), due = UINT64_MAX;
        for (unsigned i = 0; i < n; i++) {
            if (ks[i].rc < 0)
                call_tick(cs[i], &ks[i], t);
            if (ks[i].rc < 0 && call_due(cs[i], &ks[i]) < due)
                due = call_due(cs[i], &ks[i]);
        }
        if (due == UINT64_MAX)
            break;              /* every call has ended */
        unsigned which = 0;
        long got = m->recv_any(m->ctx, &which, dgram, sizeof dgram,
                               due > t ? due - t : 0);
        if (got != 0 && which < n && ks[which].rc < 0)
            call_feed(cs[which], &ks[which], got, dgram);
    }
    for (unsigned i = 0; i < n; i++) {
        rcs[i] = ks[i].rc;
        call_end(cs[i], &ks[i]);
    }
    free(ks);
}

/* ---- authenticated mode ---- */

int ushc_load_key(const char *path, uint8_t key[USHP_KEY_LEN], FILE *err, const char *prog)
{
    char buf[2 * USHP_KEY_LEN + 3];
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(err, "%s: key file %s: %s\n", prog, path, strerror(errno));
        return -1;
    }
    size_t n = fread(buf, 1, sizeof buf, f);
    bool rerr = ferror(f);
    fclose(f);
    if (rerr) {
        fprintf(err, "%s: key file %s: read error\n", prog, path);
        return -1;
    }
    size_t k = n;
    if (k > 0 && buf[k - 1] == '\n')
        k--;
    if (k > 0 && buf[k - 1] == '\r')
        k--;
    int rc = ushp_parse_key(buf, k, key);
    secure_zero(buf, sizeof buf);
    if (rc < 0) {
        fprintf(err, "%s: key file %s: want %s, and at most a newline after them (the "
                "file has %zu%s bytes)\n", prog, path, USHP_KEY_RULE, n,
                n == sizeof buf ? " or more" : "");
        return -1;
    }
    return 0;
}

int ushc_use_id(uint8_t key[USHP_KEY_LEN], const char *id, FILE *err, const char *prog)
{
    if (ushp_check_id(id, strlen(id)) < 0) {
        fprintf(err, "%s: kernel id '%s' must be %s (the kernel's ushid=)\n", prog, id,
                USHP_ID_RULE);
        return -1;
    }
    ushp_id_key(key, id, key);
    return 0;
}

/* Nonces: the wall clock in nanoseconds, shifted above the highest nonce
 * the shell had seen when it told us its epoch, and kept rising. The
 * shell keeps one window for everybody (docs/udpshell.md, "Freshness"):
 * a client whose clock is behind the others' would see its requests
 * refused; the shift puts it level with them. */
static uint64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t next_nonce(const struct ushc *c)
{
    uint64_t t = wall_ns() + c->nonce_shift;
    uint64_t last = c->nonce > c->challenge ? c->nonce : c->challenge;
    return t > last ? t : last + 1;
}

size_t ushc_build_request(struct ushc *c, uint8_t *buf, size_t cap, const char *cmd, size_t n)
{
    if (n > USHP_CMD_MAX)
        return 0;
    ++c->seq;
    if (!c->key)
        return ushp_build(buf, cap, c->seq, 0, true, cmd, n);
    c->nonce = next_nonce(c);
    return ushp_build_auth(buf, cap, c->key, c->seq, 0, USHP_FLAG_LAST, c->nonce, c->epoch,
                           cmd, n);
}

size_t ushc_build_challenge(struct ushc *c, uint8_t *buf, size_t cap)
{
    /* Not c->nonce: that one names the request whose reply we await. */
    c->challenge = next_nonce(c);
    return ushp_build_challenge(buf, cap, c->key, c->seq, c->challenge);
}

void ushc_take_challenge(struct ushc *c, const struct ushp_hdr *h, const uint8_t *payload)
{
    /* The answer's payload is the shell's highest nonce (uapi/udpshell.h). */
    _Static_assert(USHP_CHALLENGE_LEN == sizeof(uint64_t), "a challenge answer is one be64");
    uint64_t t = wall_ns(), highest = get_be64(payload);
    c->epoch = h->epoch;
    c->nonce_shift = highest >= t ? highest + 1 - t : 0;
    c->challenge = 0;
}

int ushc_verify_reply(const struct ushc *c, const void *dgram, size_t len,
                      struct ushp_hdr *h, const uint8_t **payload)
{
    if (ushp_parse_reply(dgram, len, h, payload) != 0)
        return USHC_REPLY_MALFORMED;
    if (c->key) {
        /* Tag first: nothing in an unverified datagram (not even its seq)
         * is the shell's word. */
        uint16_t want = USHP_FLAG_AUTH | USHP_FLAG_REPLY;
        if ((h->flags & want) != want)
            return h->flags & USHP_FLAG_AUTH ? USHC_REPLY_BADTAG : USHC_REPLY_UNTAGGED;
        if (!ushp_auth_verify(c->key, dgram, len))
            return USHC_REPLY_BADTAG;
        if (h->flags & USHP_FLAG_CHALLENGE)
            return c->challenge && h->nonce == c->challenge && h->epoch != 0 ?
                   USHC_REPLY_CHALLENGE : USHC_REPLY_OTHER;
        /* Bound to the epoch our requests are tagged for: a reply from
         * another kernel sharing the key (and no ushid=) must not pass
         * for this one's. */
        if (h->epoch != c->epoch)
            return USHC_REPLY_EPOCH;
        if (h->seq == c->seq && h->nonce != c->nonce)
            return USHC_REPLY_NONCE;
    }
    return h->seq == c->seq ? USHC_REPLY_OK : USHC_REPLY_OTHER;
}

const char *ushc_reply_strerror(int code)
{
    switch (code) {
    case USHC_REPLY_OK:        return "ok";
    case USHC_REPLY_OTHER:     return "a reply to another request";
    case USHC_REPLY_CHALLENGE: return "the shell's answer to our challenge";
    case USHC_REPLY_MALFORMED: return "malformed reply datagram";
    case USHC_REPLY_UNTAGGED:  return "untagged reply (the shell has no key, or someone "
                                      "else answered)";
    case USHC_REPLY_BADTAG:    return "reply tag does not verify (another key, or forged)";
    case USHC_REPLY_NONCE:     return "reply tagged for another request's nonce";
    case USHC_REPLY_EPOCH:     return "reply tagged for another boot epoch than our request";
    default:                   return "unknown";
    }
}
