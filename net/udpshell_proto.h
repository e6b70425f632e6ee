/* net/udpshell_proto.h: the UDP shell's wire format (docs/udpshell.md).
 *
 * Shared by the kernel's UDP shell and the host client tools/sonde-sh, so
 * this header and udpshell_proto.c use nothing but the C freestanding
 * headers and lib/printf.h's struct printer.
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
#include "lib/printf.h"

#define USHP_MAGIC        0x4E4F5348u
#define USHP_HDR_LEN      16
#define USHP_FLAG_LAST    0x0001
#define USHP_CMD_MAX      255      /* request payload limit (the shell's LINE_MAX) */
#define USHP_CHUNK_MAX    1400     /* reply payload limit per datagram */
#define USHP_DGRAM_MAX    (USHP_HDR_LEN + USHP_CHUNK_MAX)
#define USHP_DEFAULT_PORT 9000

/* ushp_parse's reasons for refusing a datagram. */
#define USHP_ESHORT     -1   /* shorter than the 16-byte header */
#define USHP_EMAGIC     -2   /* magic is not 0x4E4F5348 */
#define USHP_ELEN       -3   /* len field disagrees with the datagram's size */
#define USHP_ERESERVED  -4   /* reserved field not zero */
#define USHP_ETOOLONG   -5   /* payload above the limit (255 request, 1400 reply) */

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
/* A short name for a USHP_E* reason ("short", "magic", ...). */
const char *ushp_strerror(int reason);

/* Build header + payload into buf; returns the datagram's length, or 0 if
 * cap is too small or len > USHP_CHUNK_MAX. */
size_t ushp_build(void *buf, size_t cap, uint32_t seq, uint16_t chunk, bool last,
                  const void *payload, size_t len);

/* The reply chunker: a printer that cuts the output into datagrams.
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
    struct printer pr;           /* first: a struct printer * is a chunker * */
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
/* Send the last chunk. Further output is ignored. */
void ushp_chunker_finish(struct ushp_chunker *c);

/* Byte-order helpers of the format (the host tools have no net/pkt.h). */
static inline uint16_t ushp_get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t ushp_get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void ushp_put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void ushp_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);  p[3] = (uint8_t)v;
}
