/* tools/ushell_client.c: one UDP shell command from the client's side:
 * send, resend, reassemble (docs/udpshell.md, "What a client does").
 *
 * Waiting: the request is sent again (same sequence number: the shell then
 * resends its reply without running the command again) after each second
 * without a new chunk, at most USHC_RETRIES times in all; the client gives
 * up when no new chunk has arrived for timeout_ms. A command that prints
 * nothing for longer (a long `profile`) needs a larger timeout.
 *
 * ushc_run_all runs one command on each of several shells at once with
 * the same steps, waiting on all of them together. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tools/ushell_client.h"
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
};

static bool reply_init(struct reply *r)
{
    r->have = calloc(MAX_CHUNKS, 1);
    r->data = calloc(MAX_CHUNKS, sizeof *r->data);
    r->len = calloc(MAX_CHUNKS, sizeof *r->len);
    r->last = -1;
    r->next_out = 0;
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

/* Take one datagram from the shell. Returns 1 if it was a new chunk of our
 * reply, 0 if ignored (another seq, or a duplicate), -1 on a protocol
 * error (reported). */
static int reply_take(struct ushc *c, struct reply *r, const uint8_t *d, size_t n)
{
    struct ushp_hdr h;
    const uint8_t *pl;
    int e = ushp_parse_reply(d, n, &h, &pl);
    if (e) {
        fprintf(c->err, "%s: protocol error: bad reply datagram (%zu bytes): %s\n",
                c->prog, n, ushp_strerror(e));
        return -1;
    }
    if (h.seq != c->seq)
        return 0;                   /* a late reply to an earlier request */
    bool last = h.flags & USHP_FLAG_LAST;
    if (r->last >= 0 && last && h.chunk != r->last) {
        fprintf(c->err, "%s: protocol error: a second last chunk %u (the last was %ld, "
                "seq %u)\n", c->prog, h.chunk, r->last, h.seq);
        return -1;
    }
    if (r->last >= 0 && h.chunk > r->last) {
        fprintf(c->err, "%s: protocol error: chunk %u after the last chunk %ld "
                "(seq %u)\n", c->prog, h.chunk, r->last, h.seq);
        return -1;
    }
    if (r->have[h.chunk])
        return 0;                   /* duplicate (a retransmitted reply) */
    if (last) {
        for (long i = h.chunk + 1; i < MAX_CHUNKS; i++) {
            if (r->have[i]) {
                fprintf(c->err, "%s: protocol error: last chunk %u but chunk %ld "
                        "received (seq %u)\n", c->prog, h.chunk, i, h.seq);
                return -1;
            }
        }
        r->last = h.chunk;
    }
    r->data[h.chunk] = malloc(h.len ? h.len : 1);
    if (!r->data[h.chunk]) {
        fprintf(c->err, "%s: out of memory\n", c->prog);
        return -1;
    }
    memcpy(r->data[h.chunk], pl, h.len);
    r->len[h.chunk] = h.len;
    r->have[h.chunk] = 1;
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
    uint8_t req[USHP_HDR_LEN + USHP_CMD_MAX];
    size_t reqlen;
    int retries;
    uint64_t last_progress, last_send;
    int rc;                     /* USHC_EXIT_*, or -1 while in flight */
};

/* Send the request; a USHC_EXIT_* status if that ends the command, else -1. */
static int send_request(struct ushc *c, const uint8_t *d, size_t len)
{
    int rc = c->io.send(c->io.ctx, d, len);
    if (rc == USHC_IO_REFUSED) {
        fprintf(c->err, "%s: %s refused the request: nothing listens there\n",
                c->prog, c->peer);
        return USHC_EXIT_REFUSED;
    }
    /* Any other failure is like a loss on the wire: the resend covers it. */
    if (rc < 0)
        fprintf(c->err, "%s: send to %s: %s\n", c->prog, c->peer, strerror(errno));
    return -1;
}

static void call_start(struct ushc *c, struct call *k, const char *cmd, uint64_t now)
{
    size_t n = strlen(cmd);
    k->rc = -1;
    k->retries = 0;
    k->last_progress = k->last_send = now;
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
    k->reqlen = ushp_build(k->req, sizeof k->req, ++c->seq, 0, true, cmd, n);
    k->rc = send_request(c, k->req, k->reqlen);
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
    if (now - k->last_progress >= c->timeout_ms) {
        fprintf(c->err, "%s: timeout: no reply from %s for %.1f s (command sent %d "
                "times)\n", c->prog, c->peer, c->timeout_ms / 1000.0, k->retries + 1);
        k->rc = USHC_EXIT_PROTO;
        return;
    }
    if (now - k->last_send >= USHC_RETRY_MS && k->retries < USHC_RETRIES) {
        k->rc = send_request(c, k->req, k->reqlen);
        k->retries++;
        k->last_send = now;
    }
}

/* What a receive gave: got bytes of d, 0 for nothing, or USHC_IO_*. */
static void call_feed(struct ushc *c, struct call *k, long got, const uint8_t *d)
{
    if (got == USHC_IO_REFUSED) {
        fprintf(c->err, "%s: %s refused the request: nothing listens there\n",
                c->prog, c->peer);
        k->rc = USHC_EXIT_REFUSED;
        return;
    }
    if (got < 0) {
        fprintf(c->err, "%s: receive from %s: %s\n", c->prog, c->peer, strerror(errno));
        k->rc = USHC_EXIT_PROTO;
        return;
    }
    if (got == 0)
        return;
    int taken = reply_take(c, &k->r, d, (size_t)got);
    if (taken < 0) {
        k->rc = USHC_EXIT_PROTO;
    } else if (taken > 0) {
        /* Progress: the silence clock and the resend clock restart. */
        k->last_progress = k->last_send = c->io.now_ms(c->io.ctx);
        if (reply_done(&k->r))
            k->rc = USHC_EXIT_OK;
    }
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
    reply_free(&k.r);
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
        reply_free(&ks[i].r);
    }
    free(ks);
}
