/* uapi/udpshell.h: the UDP shell's wire format (docs/udpshell.md), spoken
 * by the kernel's UDP shell (net/udpshell.c) and the host client
 * (tools/sonde-sh, tools/ushell_client.c). Both link uapi/udpshell.c, so
 * this header and that file use nothing but freestanding headers.
 *
 * Every datagram, request or reply, is a 16-byte header and a payload:
 *
 *   offset size field
 *        0    4 magic      0x4E4F5348 ("NOSH")
 *        4    4 seq        chosen by the client; a reply carries its request's
 *        8    2 chunk      reply chunk index 0, 1, 2, ...; 0 in a request
 *       10    2 flags      bit 0: last chunk of the reply (set in a request)
 *       12    2 len        payload bytes; the datagram is exactly 16 + len
 *       14    2 reserved   zero
 *
 * all big-endian (network order). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define USHP_MAGIC        0x4E4F5348u
#define USHP_HDR_LEN      16
#define USHP_FLAG_LAST    0x0001
#define USHP_CMD_MAX      255      /* request payload limit (the shell's LINE_MAX) */
#define USHP_CHUNK_MAX    1400     /* reply payload limit per datagram */
#define USHP_DGRAM_MAX    (USHP_HDR_LEN + USHP_CHUNK_MAX)
#define USHP_DEFAULT_PORT 9000

/* Field offsets in the header. */
#define USHP_OFF_MAGIC    0
#define USHP_OFF_SEQ      4
#define USHP_OFF_CHUNK    8
#define USHP_OFF_FLAGS    10
#define USHP_OFF_LEN      12
#define USHP_OFF_RESERVED 14

_Static_assert(USHP_OFF_RESERVED + 2 == USHP_HDR_LEN, "UDP shell header is 16 bytes");
/* One Ethernet frame carries any datagram (1500 - 20 IPv4 - 8 UDP): no
 * fragments, which the kernel's stack drops. */
_Static_assert(USHP_DGRAM_MAX <= 1472, "a reply datagram fits one frame");
_Static_assert(USHP_HDR_LEN + USHP_CMD_MAX <= USHP_DGRAM_MAX, "a request fits one frame");

/* ushp_parse's reasons for refusing a datagram. */
#define USHP_ESHORT     -1   /* shorter than the 16-byte header */
#define USHP_EMAGIC     -2   /* magic is not 0x4E4F5348 */
#define USHP_ELEN       -3   /* len field disagrees with the datagram's size */
#define USHP_ERESERVED  -4   /* reserved field not zero */
#define USHP_ETOOLONG   -5   /* payload above the limit (255 request, 1400 reply) */
#define USHP_NREASONS   5

struct ushp_hdr {              /* host byte order */
    uint32_t magic, seq;
    uint16_t chunk, flags, len, reserved;
};

/* Parse a request: 0 and *out, *payload (pointing into dgram) filled, or a
 * USHP_E* reason. Never reads past len. */
int ushp_parse(const void *dgram, size_t len, struct ushp_hdr *out,
               const uint8_t **payload);
/* The same for a reply chunk (payload limit USHP_CHUNK_MAX). */
int ushp_parse_reply(const void *dgram, size_t len, struct ushp_hdr *out,
                     const uint8_t **payload);
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
    uint16_t next_chunk;
    bool finished, truncated;
    size_t fill;                 /* payload bytes in dgram */
    uint64_t total;              /* payload bytes sent (and buffered) so far */
    uint8_t dgram[USHP_DGRAM_MAX];
};

void ushp_chunker_init(struct ushp_chunker *c, uint32_t seq, ushp_send_fn send, void *ctx);
/* Add n bytes of output (any n). Ignored once finished. */
void ushp_chunker_write(struct ushp_chunker *c, const void *s, size_t n);
/* Send the last chunk. Further output is ignored. */
void ushp_chunker_finish(struct ushp_chunker *c);
