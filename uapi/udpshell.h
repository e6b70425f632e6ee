/* uapi/udpshell.h: the UDP shell's wire format (docs/udpshell.md), spoken
 * by the kernel's UDP shell (net/udpshell.c) and the host client
 * (tools/sonde-sh, tools/common/ushell_client.c). Both link uapi/udpshell.c, so
 * this header and that file use nothing but freestanding headers.
 *
 * Every datagram, request or reply, is a 16-byte header and a payload:
 *
 *   offset size field
 *        0    4 magic      0x4E4F5348 ("NOSH")
 *        4    4 seq        chosen by the client; a reply carries its request's
 *        8    2 chunk      reply chunk index 0, 1, 2, ...; 0 in a request
 *       10    2 flags      bit 0: last chunk of the reply (set in a request);
 *                          bit 2 (USHP_FLAG_REPLY): set in every reply
 *       12    2 len        payload bytes; the datagram is exactly 16 + len
 *       14    2 id         0 in a request; in a reply, the reply id: the
 *                          same, never 0, in every chunk of one run's output
 *
 * all big-endian (network order).
 *
 * Authenticated datagrams (flags bit 1, USHP_FLAG_AUTH; docs/udpshell.md,
 * "Authentication") carry a nonce and the shell's boot epoch after the
 * header and an HMAC-SHA256 tag after the payload; len still counts the
 * payload alone:
 *
 *   offset      size field
 *        0        16 header     flags has USHP_FLAG_AUTH (and, in a reply,
 *                               USHP_FLAG_REPLY)
 *       16         8 nonce      big-endian; a reply carries its request's
 *       24         8 epoch      big-endian; the shell's boot epoch (0 in a
 *                               challenge)
 *       32       len payload
 *   32+len        32 tag        HMAC-SHA256(key, bytes 0 .. 32+len-1)
 *
 * so the datagram is exactly 64 + len bytes.
 *
 * A challenge (USHP_FLAG_CHALLENGE with USHP_FLAG_AUTH) asks the shell for
 * its epoch: its payload is USHP_CHALLENGE_LEN zero bytes, its reply's the
 * highest nonce the shell has accepted this boot, so the reply (64 + 8
 * bytes) is exactly as large as the request: no amplification. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define USHP_MAGIC        0x4E4F5348u
#define USHP_HDR_LEN      16
#define USHP_FLAG_LAST    0x0001
#define USHP_FLAG_AUTH    0x0002   /* nonce and tag present (authenticated mode) */
#define USHP_FLAG_REPLY   0x0004   /* every reply, in both modes: a shell never
                                      runs a datagram that carries it */
#define USHP_FLAG_CHALLENGE 0x0008 /* with AUTH: asks for (or, with REPLY,
                                      tells) the shell's boot epoch */
#define USHP_NONCE_LEN    8
#define USHP_EPOCH_LEN    8
#define USHP_TAG_LEN      32       /* HMAC-SHA256 */
#define USHP_KEY_LEN      32       /* ushkey=: 64 hex digits */
#define USHP_AUTH_OVERHEAD (USHP_NONCE_LEN + USHP_EPOCH_LEN + USHP_TAG_LEN)
#define USHP_AUTH_PAYLOAD_OFF (USHP_HDR_LEN + USHP_NONCE_LEN + USHP_EPOCH_LEN)
#define USHP_CHALLENGE_LEN 8       /* a challenge's payload, and its reply's */
#define USHP_CHALLENGE_DGRAM (USHP_HDR_LEN + USHP_AUTH_OVERHEAD + USHP_CHALLENGE_LEN)
#define USHP_CMD_MAX      255      /* request payload limit (the shell's LINE_MAX) */
#define USHP_CHUNK_MAX    1400     /* reply payload limit per datagram */
#define USHP_DGRAM_MAX    (USHP_HDR_LEN + USHP_CHUNK_MAX)
#define USHP_AUTH_DGRAM_MAX (USHP_DGRAM_MAX + USHP_AUTH_OVERHEAD)
#define USHP_DEFAULT_PORT 9000

/* Field offsets in the header. */
#define USHP_OFF_MAGIC    0
#define USHP_OFF_SEQ      4
#define USHP_OFF_CHUNK    8
#define USHP_OFF_FLAGS    10
#define USHP_OFF_LEN      12
#define USHP_OFF_RESERVED 14      /* a request's; a reply's reply id */
#define USHP_OFF_ID       USHP_OFF_RESERVED

_Static_assert(USHP_OFF_RESERVED + 2 == USHP_HDR_LEN, "UDP shell header is 16 bytes");
/* One Ethernet frame carries any datagram (1500 - 20 IPv4 - 8 UDP): no
 * fragments, which the kernel's stack drops. */
_Static_assert(USHP_AUTH_DGRAM_MAX <= 1472, "a reply datagram fits one frame");
_Static_assert(USHP_HDR_LEN + USHP_CMD_MAX <= USHP_DGRAM_MAX, "a request fits one frame");
_Static_assert(USHP_AUTH_PAYLOAD_OFF == 32, "nonce at 16, epoch at 24, payload at 32");

/* ushp_parse's reasons for refusing a datagram. */
#define USHP_ESHORT     -1   /* shorter than the 16-byte header */
#define USHP_EMAGIC     -2   /* magic is not 0x4E4F5348 */
#define USHP_ELEN       -3   /* len field disagrees with the datagram's size */
#define USHP_ERESERVED  -4   /* reserved field not zero (a request) */
#define USHP_ETOOLONG   -5   /* payload above the limit (255 request, 1400 reply) */
#define USHP_ECHALLENGE -6   /* a challenge whose payload is not USHP_CHALLENGE_LEN bytes */
#define USHP_NREASONS   6

struct ushp_hdr {              /* host byte order */
    uint32_t magic, seq;
    uint16_t chunk, flags, len;
    uint16_t id;               /* 0 in a request; a reply's reply id */
    uint64_t nonce, epoch;     /* authenticated datagrams only; else 0 */
};

/* Parse a request: 0 and *out, *payload (pointing into dgram) filled, or a
 * USHP_E* reason. Never reads past len. With USHP_FLAG_AUTH in flags the
 * datagram must have the authenticated layout (64 + len bytes), and a
 * challenge's len must be USHP_CHALLENGE_LEN (else USHP_ECHALLENGE); the
 * tag is not checked here
 * (ushp_auth_verify). */
int ushp_parse(const void *dgram, size_t len, struct ushp_hdr *out,
               const uint8_t **payload);
/* The same for a reply chunk (payload limit USHP_CHUNK_MAX; the id field
 * is the reply id, any value). */
int ushp_parse_reply(const void *dgram, size_t len, struct ushp_hdr *out,
                     const uint8_t **payload);
/* True if dgram says it is a reply: at least a header, the magic, and
 * USHP_FLAG_REPLY. Nothing else is checked: a shell drops such a datagram
 * before parsing it, malformed or not, so that no reply (one of its own
 * bounced back, or another shell's) is ever taken for a request. */
bool ushp_is_reply(const void *dgram, size_t len);
/* What a USHP_E* reason means, as a phrase for an error message. */
const char *ushp_strerror(int reason);

/* Build header + payload into buf; returns the datagram's length, or 0 if
 * cap is too small or len > USHP_CHUNK_MAX. */
size_t ushp_build(void *buf, size_t cap, uint32_t seq, uint16_t chunk, bool last,
                  const void *payload, size_t len);

/* The reply chunker: cuts a command's output into datagrams.
 * Every USHP_CHUNK_MAX bytes of output, it calls send() with one complete
 * datagram (header included, chunk 0, 1, 2, ...); ushp_chunker_finish sends
 * what is left as the last chunk, flagged. Output of 0 bytes gives one empty
 * last chunk, and output ending exactly on a USHP_CHUNK_MAX boundary also
 * ends with an empty last chunk: a full chunk is sent as soon as it fills,
 * before the chunker can know whether more will come.
 *
 * Chunk indexes are 16 bits: past 65535 chunks (about 91 MB) the output is
 * cut off and `truncated` is set; chunk 65535 is kept for the last one. */
typedef void (*ushp_send_fn)(void *ctx, const void *dgram, size_t len);

struct ushp_chunker {
    ushp_send_fn send;
    void *ctx;
    uint32_t seq;
    uint16_t id;                 /* the reply id every chunk carries */
    uint16_t next_chunk;
    bool finished, truncated;
    size_t fill;                 /* payload bytes in dgram */
    uint64_t total;              /* payload bytes sent (and buffered) so far */
    /* Authenticated replies (ushp_chunker_init_auth): the key, else NULL;
     * the request's nonce; seal appends the tag to a datagram of n bytes.
     * A pointer so that this file needs no SHA-256: only users of the
     * authenticated mode link uapi/udpshell_auth.c and lib/sha256.c. */
    const uint8_t *key;
    uint64_t nonce, epoch;
    void (*seal)(const uint8_t *key, uint8_t *dgram, size_t n);
    uint8_t dgram[USHP_AUTH_DGRAM_MAX];
};

/* id: the reply id (docs/udpshell.md, "Reply"): one per run of a
 * command, never 0, so that a client never mixes two runs' chunks. */
void ushp_chunker_init(struct ushp_chunker *c, uint32_t seq, uint16_t id, ushp_send_fn send,
                       void *ctx);
/* Add n bytes of output (any n). Ignored once finished. */
void ushp_chunker_write(struct ushp_chunker *c, const void *s, size_t n);
/* Send the last chunk. Further output is ignored. */
void ushp_chunker_finish(struct ushp_chunker *c);

/* ---- authenticated mode: uapi/udpshell_auth.c (links lib/sha256.c) ---- */

/* A key as written on the command line or in a key file: exactly 64 hex
 * digits (either case), nothing else. 0, or -1 if s is not that. */
int ushp_parse_key(const char *s, size_t n, uint8_t key[USHP_KEY_LEN]);
/* The rule ushp_parse_key enforces, for error messages. */
#define USHP_KEY_RULE "64 hex digits (32 bytes), e.g. from: head -c 32 /dev/urandom | xxd -p -c 64"

/* A kernel's identity (ushid=; sonde-sh -i): with it, a fleet sharing one
 * key is not interchangeable. Every tag, the challenge's answer included,
 * is then made under ushp_id_key(key, id) instead of the key itself, so a
 * datagram tagged for one id verifies under no other, nor under the bare
 * key (docs/udpshell.md, "Kernel ids"). */
#define USHP_ID_MAX  31
#define USHP_ID_RULE "1-31 characters, each a letter, a digit, '.', '_' or '-'"
/* 0 if s (n bytes) is an id by USHP_ID_RULE, else -1. */
int ushp_check_id(const char *s, size_t n);
/* The key tags are made under for id (a valid id, NUL-terminated):
 * HMAC-SHA256(key, "sonde ushid " || id). out may be key itself. */
void ushp_id_key(const uint8_t key[USHP_KEY_LEN], const char *id, uint8_t out[USHP_KEY_LEN]);

/* Build an authenticated datagram: header (flags | USHP_FLAG_AUTH), nonce,
 * epoch, payload, tag. Its length, or 0 if cap is too small or len >
 * USHP_CHUNK_MAX. Requests: flags USHP_FLAG_LAST; replies:
 * USHP_FLAG_REPLY, and USHP_FLAG_LAST on the last chunk. */
size_t ushp_build_auth(void *buf, size_t cap, const uint8_t key[USHP_KEY_LEN],
                       uint32_t seq, uint16_t chunk, uint16_t flags, uint64_t nonce,
                       uint64_t epoch, const void *payload, size_t len);
/* A challenge (USHP_CHALLENGE_DGRAM bytes): epoch 0, zero payload. Its
 * length, or 0 if cap is too small. */
size_t ushp_build_challenge(void *buf, size_t cap, const uint8_t key[USHP_KEY_LEN],
                            uint32_t seq, uint64_t nonce);
/* The shell's answer to the challenge h: its seq and nonce, the shell's
 * epoch, and highest (the highest nonce it has accepted this boot) as
 * payload. Exactly as long as the challenge; 0 if cap is too small. */
size_t ushp_build_challenge_reply(void *buf, size_t cap, const uint8_t key[USHP_KEY_LEN],
                                  const struct ushp_hdr *h, uint64_t epoch,
                                  uint64_t highest);
/* The tag of the first n bytes of dgram, written to dgram + n. */
void ushp_auth_seal(const uint8_t *key, uint8_t *dgram, size_t n);
/* True if the last USHP_TAG_LEN bytes of the len-byte dgram are the tag of
 * the rest under key; compared in constant time. False if len cannot hold
 * an authenticated datagram. */
bool ushp_auth_verify(const uint8_t key[USHP_KEY_LEN], const void *dgram, size_t len);
/* ushp_chunker_init for an authenticated reply to the request with nonce,
 * from the shell of boot epoch: every chunk is flagged USHP_FLAG_AUTH |
 * USHP_FLAG_REPLY and tagged. key must outlive the chunker. */
void ushp_chunker_init_auth(struct ushp_chunker *c, uint32_t seq, uint16_t id, uint64_t nonce,
                            uint64_t epoch, const uint8_t *key, ushp_send_fn send,
                            void *ctx);
