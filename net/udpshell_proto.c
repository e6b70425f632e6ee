/* net/udpshell_proto.c: parsing and building UDP shell datagrams, and the
 * chunker that turns a command's printer output into reply datagrams.
 *
 * Compiled into the kernel, into host unit tests, and (by #include) into
 * tools/sonde-sh: so only freestanding headers, and the C library's
 * string.h wherever there is a C library. */
#include "net/udpshell_proto.h"
#if __STDC_HOSTED__
#include <string.h>
#else
#include "lib/string.h"
#endif

static int ushp_parse_max(const void *dgram, size_t len, struct ushp_hdr *out,
                          const uint8_t **payload, size_t max)
{
    const uint8_t *d = dgram;
    if (len < USHP_HDR_LEN)
        return USHP_ESHORT;
    out->magic = ushp_get32(d);
    out->seq = ushp_get32(d + 4);
    out->chunk = ushp_get16(d + 8);
    out->flags = ushp_get16(d + 10);
    out->len = ushp_get16(d + 12);
    out->reserved = ushp_get16(d + 14);
    if (out->magic != USHP_MAGIC)
        return USHP_EMAGIC;
    /* Exact: a len beyond the datagram would read past it; one short of it
     * means the sender and we disagree on the format. */
    if ((size_t)out->len != len - USHP_HDR_LEN)
        return USHP_ELEN;
    if (out->reserved != 0)
        return USHP_ERESERVED;
    if (out->len > max)
        return USHP_ETOOLONG;
    *payload = d + USHP_HDR_LEN;
    return 0;
}

int ushp_parse(const void *dgram, size_t len, struct ushp_hdr *out,
               const uint8_t **payload)
{
    return ushp_parse_max(dgram, len, out, payload, USHP_CMD_MAX);
}

int ushp_parse_reply(const void *dgram, size_t len, struct ushp_hdr *out,
                     const uint8_t **payload)
{
    return ushp_parse_max(dgram, len, out, payload, USHP_CHUNK_MAX);
}

const char *ushp_strerror(int reason)
{
    switch (reason) {
    case 0:              return "ok";
    case USHP_ESHORT:    return "shorter than the 16-byte header";
    case USHP_EMAGIC:    return "bad magic (want 0x4E4F5348)";
    case USHP_ELEN:      return "length field does not match the datagram";
    case USHP_ERESERVED: return "reserved field not zero";
    case USHP_ETOOLONG:  return "payload too long";
    default:             return "unknown error";
    }
}

static void ushp_put_hdr(uint8_t *d, uint32_t seq, uint16_t chunk, bool last, size_t len)
{
    ushp_put32(d, USHP_MAGIC);
    ushp_put32(d + 4, seq);
    ushp_put16(d + 8, chunk);
    ushp_put16(d + 10, last ? USHP_FLAG_LAST : 0);
    ushp_put16(d + 12, (uint16_t)len);
    ushp_put16(d + 14, 0);
}

size_t ushp_build(void *buf, size_t cap, uint32_t seq, uint16_t chunk, bool last,
                  const void *payload, size_t len)
{
    if (len > USHP_CHUNK_MAX || cap < USHP_HDR_LEN + len)
        return 0;
    ushp_put_hdr(buf, seq, chunk, last, len);
    if (len)
        memcpy((uint8_t *)buf + USHP_HDR_LEN, payload, len);
    return USHP_HDR_LEN + len;
}

/* Send what dgram holds as chunk next_chunk; the payload is already in place. */
static void ushp_chunker_emit(struct ushp_chunker *c, bool last)
{
    ushp_put_hdr(c->dgram, c->seq, c->next_chunk, last, c->fill);
    c->send(c->ctx, c->dgram, USHP_HDR_LEN + c->fill);
    c->next_chunk++;
    c->fill = 0;
}

static void ushp_chunker_write(struct printer *p, const char *s, size_t n)
{
    struct ushp_chunker *c = (struct ushp_chunker *)p;
    while (n > 0 && !c->finished) {
        size_t room = USHP_CHUNK_MAX - c->fill;
        if (room == 0) {
            /* Full and the index space exhausted: cut the output here, keep
             * chunk 65535 for ushp_chunker_finish. */
            c->truncated = true;
            return;
        }
        size_t k = n < room ? n : room;
        memcpy(c->dgram + USHP_HDR_LEN + c->fill, s, k);
        c->fill += k;
        c->total += k;
        s += k;
        n -= k;
        if (c->fill == USHP_CHUNK_MAX && c->next_chunk < 0xffff)
            ushp_chunker_emit(c, false);
    }
}

void ushp_chunker_init(struct ushp_chunker *c, uint32_t seq, ushp_send_fn send, void *ctx)
{
    c->pr.write = ushp_chunker_write;
    c->send = send;
    c->ctx = ctx;
    c->seq = seq;
    c->next_chunk = 0;
    c->finished = false;
    c->truncated = false;
    c->fill = 0;
    c->total = 0;
}

void ushp_chunker_finish(struct ushp_chunker *c)
{
    if (c->finished)
        return;
    ushp_chunker_emit(c, true);
    c->finished = true;
}
