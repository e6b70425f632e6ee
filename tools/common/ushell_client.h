/* tools/common/ushell_client.h: the UDP shell client's protocol
 * (docs/udpshell.md, "What a client does"), apart from sockets and clocks so
 * that host tests can drive it with a fake shell and a fake clock.
 * tools/sonde-sh.c is its main() over a real UDP socket.
 * Shared by the host tools: prefix ushc_ (USHC_ for constants). */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "uapi/udpshell.h"

/* Exit statuses, as sonde-sh returns them. */
#define USHC_EXIT_OK      0
#define USHC_EXIT_REFUSED 1    /* the remote said no: nothing listens on the port
                                  (with a key: only refusals until the timeout) */
#define USHC_EXIT_PROTO   2    /* bad usage, a protocol error, or no reply in time */

#define USHC_RETRY_MS     1000 /* send again after this long without a new chunk */
#define USHC_RETRIES      3    /* re-sends since the last new chunk (or the first send) */

/* What ushc_io's calls return besides a length. */
#define USHC_IO_ERROR   -1     /* errno says why */
#define USHC_IO_REFUSED -2     /* the host answered "port unreachable" */

struct ushc_io {
    void *ctx;
    /* Send one datagram to the shell: 0, or USHC_IO_*. */
    int (*send)(void *ctx, const void *dgram, size_t len);
    /* Wait up to timeout_ms for one datagram from the shell: its length,
     * 0 if none came in time, or USHC_IO_*. A datagram longer than cap is
     * cut to cap (and then found malformed). */
    long (*recv)(void *ctx, void *buf, size_t cap, uint64_t timeout_ms);
    /* A monotonic clock. */
    uint64_t (*now_ms)(void *ctx);
};

struct ushc {
    struct ushc_io io;
    uint32_t seq;              /* the last request's; each command takes seq + 1 */
    uint64_t timeout_ms;       /* give up after this long without a new chunk */
    const char *peer;          /* "127.0.0.1:9000", for messages */
    const char *prog;          /* prefix of every message on err */
    FILE *out, *err;           /* the reply; errors */
    /* Authenticated mode (docs/udpshell.md, "Authentication"): the shell's
     * key, or NULL for the open protocol. With a key every request is
     * tagged with a fresh nonce and the shell's boot epoch (learnt from a
     * challenge), and a datagram that is untagged, wrongly tagged or bound
     * to another nonce is counted in ignored and otherwise ignored. */
    const uint8_t *key;
    uint64_t nonce;            /* the last request's; set by ushc_build_request */
    uint64_t epoch;            /* the shell's boot epoch; 0 until a challenge told it.
                                  Requests are tagged for it, and a reply for
                                  another epoch is refused (USHC_REPLY_EPOCH) */
    uint64_t nonce_shift;      /* added to the clock: nonces above the shell's highest */
    uint64_t challenge;        /* the nonce of the challenge awaiting its answer, or 0 */
    unsigned long ignored;     /* datagrams that did not verify, in the last command */
};

/* Send cmd (at most USHP_CMD_MAX bytes), write the reply to c->out as it
 * arrives, in order; returns a USHC_EXIT_* status, with the reason on
 * c->err for any but USHC_EXIT_OK. */
int ushc_run(struct ushc *c, const char *cmd);

/* Waiting on several shells at once, for ushc_run_all. */
struct ushc_mux {
    void *ctx;
    /* Wait up to timeout_ms for one datagram from any of the shells: its
     * length with *which set to the shell's index, 0 if none came in
     * time, or USHC_IO_* with *which naming the shell it concerns. */
    long (*recv_any)(void *ctx, unsigned *which, void *buf, size_t cap,
                     uint64_t timeout_ms);
    uint64_t (*now_ms)(void *ctx);
};

/* Runs cmds[i] on shell cs[i] for every i < n, all at once: every request
 * is sent first, then the replies are collected as they come, each shell
 * resent to and timed out on its own, exactly as ushc_run does (each
 * cs[i]'s io.send and io.now_ms are used, not its io.recv). rcs[i] is
 * cs[i]'s USHC_EXIT_* status, with its reason on cs[i]->err. */
void ushc_run_all(const struct ushc_mux *m, struct ushc **cs, const char **cmds,
                  unsigned n, int *rcs);

/* ---- authenticated mode, for every client of the shell ----
 *
 * A tool that takes -k KEYFILE (sonde-sh; sonde-prof the same way):
 *
 *     static uint8_t key[USHP_KEY_LEN];
 *     if (ushc_load_key(path, key, stderr, prog) < 0)
 *         exit(USHC_EXIT_PROTO);        // the reason is on stderr
 *     c.key = key;                      // ushc_run then tags and verifies
 *
 * A tool with its own send/receive loop builds each request with
 * ushc_build_request (tags it when c->key is set) and checks each reply
 * datagram with ushc_verify_reply before using it. */

/* Read a key file: 64 hex digits, optionally one trailing newline (\n or
 * \r\n), nothing else. 0 and key filled, or -1 with the reason on err
 * (never the file's contents). Permissions are the caller's business. */
int ushc_load_key(const char *path, uint8_t key[USHP_KEY_LEN], FILE *err, const char *prog);
/* For a kernel booted with ushid=ID (sonde-sh -i ID): turn key, in place,
 * into the key that kernel tags with (ushp_id_key). 0, or -1 with the
 * reason on err (id not USHP_ID_RULE), key then untouched. */
int ushc_use_id(uint8_t key[USHP_KEY_LEN], const char *id, FILE *err, const char *prog);

/* The request datagram for cmd (n bytes, at most USHP_CMD_MAX) under the
 * next seq (c->seq + 1, stored back), and with c->key a fresh nonce (the
 * wall clock in ns plus c->nonce_shift, above c->nonce; stored back),
 * c->epoch and its tag. Its length, or 0 if it does not fit cap.
 * Resending those same bytes is the protocol's retransmission. */
size_t ushc_build_request(struct ushc *c, uint8_t *buf, size_t cap, const char *cmd, size_t n);
/* A challenge asking the shell for its epoch (c->key set), with a fresh
 * nonce stored in c->challenge; its length, or 0 if it does not fit cap. */
size_t ushc_build_challenge(struct ushc *c, uint8_t *buf, size_t cap);
/* Take the epoch and the nonce shift from the answer to c->challenge (a
 * datagram ushc_verify_reply called USHC_REPLY_CHALLENGE). */
void ushc_take_challenge(struct ushc *c, const struct ushp_hdr *h, const uint8_t *payload);

/* What ushc_verify_reply found. */
#define USHC_REPLY_OK        0
#define USHC_REPLY_MALFORMED -1  /* ushp_parse_reply refused it */
#define USHC_REPLY_UNTAGGED  -2  /* c->key set, the reply carries no tag */
#define USHC_REPLY_BADTAG    -3  /* the tag does not verify under c->key */
#define USHC_REPLY_NONCE     -4  /* tagged for c->seq but another nonce */
#define USHC_REPLY_EPOCH     -5  /* tagged for another epoch than c->epoch */
#define USHC_REPLY_OTHER     1   /* valid, but for another seq: ignore it */
#define USHC_REPLY_CHALLENGE 2   /* the tagged answer to c->challenge */
/* Check one reply datagram against the last request built from c: parse
 * it (into *h, *payload) and, with c->key, verify its tag, its reply flag,
 * and that it carries c->epoch and c->nonce (or, for a challenge's answer,
 * c->challenge, and then any epoch but 0).
 * A USHC_REPLY_* code; ushc_reply_strerror says it in words. */
int ushc_verify_reply(const struct ushc *c, const void *dgram, size_t len,
                      struct ushp_hdr *h, const uint8_t **payload);
const char *ushc_reply_strerror(int code);
