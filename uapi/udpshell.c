/* uapi/udpshell.c: parsing and building UDP shell datagrams, and the
 * chunker that turns a command's output into reply datagrams.
 *
 * Linked into the kernel, the host tools and the host unit tests alike:
 * freestanding, so copies go through __builtin_memcpy, which the compiler
 * turns into whichever memcpy the image it lands in provides. */
#include "uapi/byteorder.h"
#include "uapi/udpshell.h"

static int ushp_parse_max(const void *dgram, size_t len, struct ushp_hdr *out,
                          const uint8_t **payload, size_t max, bool reply)
{
    const uint8_t *d = dgram;
    if (len < USHP_HDR_LEN)
        return USHP_ESHORT;
    out->magic = get_be32(d + USHP_OFF_MAGIC);
    out->seq = get_be32(d + USHP_OFF_SEQ);
    out->chunk = get_be16(d + USHP_OFF_CHUNK);
    out->flags = get_be16(d + USHP_OFF_FLAGS);
    out->len = get_be16(d + USHP_OFF_LEN);
    out->id = get_be16(d + USHP_OFF_ID);
    out->nonce = out->epoch = 0;
    if (out->magic != USHP_MAGIC)
        return USHP_EMAGIC;
    /* Exact: a len beyond the datagram would read past it; one short of it
     * means the sender and we disagree on the format. */
    size_t extra = out->flags & USHP_FLAG_AUTH ? USHP_AUTH_OVERHEAD : 0;
    if (len < USHP_HDR_LEN + extra || (size_t)out->len != len - USHP_HDR_LEN - extra)
        return USHP_ELEN;
    if (!reply && out->id != 0)
        return USHP_ERESERVED;      /* a reply's id; a request has none */
    if (out->len > max)
        return USHP_ETOOLONG;
    /* A challenge is exactly as long as its answer (no amplification). */
    if (extra && (out->flags & USHP_FLAG_CHALLENGE) && out->len != USHP_CHALLENGE_LEN)
        return USHP_ECHALLENGE;
    if (extra) {
        out->nonce = get_be64(d + USHP_HDR_LEN);
        out->epoch = get_be64(d + USHP_HDR_LEN + USHP_NONCE_LEN);
    }
    *payload = d + (extra ? USHP_AUTH_PAYLOAD_OFF : USHP_HDR_LEN);
    return 0;
}

int ushp_parse(const void *dgram, size_t len, struct ushp_hdr *out,
               const uint8_t **payload)
{
    return ushp_parse_max(dgram, len, out, payload, USHP_CMD_MAX, false);
}

int ushp_parse_reply(const void *dgram, size_t len, struct ushp_hdr *out,
                     const uint8_t **payload)
{
    return ushp_parse_max(dgram, len, out, payload, USHP_CHUNK_MAX, true);
}

bool ushp_is_reply(const void *dgram, size_t len)
{
    const uint8_t *d = dgram;
    return len >= USHP_HDR_LEN && get_be32(d + USHP_OFF_MAGIC) == USHP_MAGIC &&
           (get_be16(d + USHP_OFF_FLAGS) & USHP_FLAG_REPLY);
}

const char *ushp_strerror(int reason)
{
    switch (reason) {
    case 0:              return "ok";
    case USHP_ESHORT:    return "shorter than the 16-byte header";
    case USHP_EMAGIC:    return "bad magic (want 0x4E4F5348)";
    case USHP_ELEN:      return "length field does not match the datagram";
    case USHP_ERESERVED: return "reserved field not zero";
    case USHP_ETOOLONG:  return "payload too long (at most 255 bytes in a request, "
                                "1400 in a reply)";
    case USHP_ECHALLENGE: return "challenge payload not 8 bytes";
    default:             return "unknown error";
    }
}

static void ushp_put_hdr(uint8_t *d, uint32_t seq, uint16_t chunk, uint16_t flags, size_t len,
                         uint16_t id)
{
    put_be32(d + USHP_OFF_MAGIC, USHP_MAGIC);
    put_be32(d + USHP_OFF_SEQ, seq);
    put_be16(d + USHP_OFF_CHUNK, chunk);
    put_be16(d + USHP_OFF_FLAGS, flags);
    put_be16(d + USHP_OFF_LEN, (uint16_t)len);
    put_be16(d + USHP_OFF_ID, id);
}

size_t ushp_build(void *buf, size_t cap, uint32_t seq, uint16_t chunk, bool last,
                  const void *payload, size_t len)
{
    if (len > USHP_CHUNK_MAX || cap < USHP_HDR_LEN + len)
        return 0;
    ushp_put_hdr(buf, seq, chunk, last ? USHP_FLAG_LAST : 0, len, 0);
    if (len)
        __builtin_memcpy((uint8_t *)buf + USHP_HDR_LEN, payload, len);
    return USHP_HDR_LEN + len;
}

/* Where the payload starts in dgram: after the nonce if authenticated. */
static size_t ushp_chunker_off(const struct ushp_chunker *c)
{
    return c->key ? USHP_AUTH_PAYLOAD_OFF : USHP_HDR_LEN;
}

/* Send what dgram holds as chunk next_chunk; the payload is already in place. */
static void ushp_chunker_emit(struct ushp_chunker *c, bool last)
{
    uint16_t flags = USHP_FLAG_REPLY | (last ? USHP_FLAG_LAST : 0);
    size_t n = ushp_chunker_off(c) + c->fill;
    if (c->key)
        flags |= USHP_FLAG_AUTH;
    ushp_put_hdr(c->dgram, c->seq, c->next_chunk, flags, c->fill, c->id);
    if (c->key) {
        put_be64(c->dgram + USHP_HDR_LEN, c->nonce);
        put_be64(c->dgram + USHP_HDR_LEN + USHP_NONCE_LEN, c->epoch);
        c->seal(c->key, c->dgram, n);
        n += USHP_TAG_LEN;
    }
    c->send(c->ctx, c->dgram, n);
    c->next_chunk++;
    c->fill = 0;
}

void ushp_chunker_write(struct ushp_chunker *c, const void *out, size_t n)
{
    const uint8_t *s = out;
    while (n > 0 && !c->finished) {
        size_t room = USHP_CHUNK_MAX - c->fill;
        if (room == 0) {
            /* Full and the index space exhausted: cut the output here, keep
             * chunk 65535 for ushp_chunker_finish. */
            c->truncated = true;
            return;
        }
        size_t k = n < room ? n : room;
        __builtin_memcpy(c->dgram + ushp_chunker_off(c) + c->fill, s, k);
        c->fill += k;
        c->total += k;
        s += k;
        n -= k;
        if (c->fill == USHP_CHUNK_MAX && c->next_chunk < 0xffff)
            ushp_chunker_emit(c, false);
    }
}

void ushp_chunker_init(struct ushp_chunker *c, uint32_t seq, uint16_t id, ushp_send_fn send,
                       void *ctx)
{
    c->send = send;
    c->ctx = ctx;
    c->seq = seq;
    c->id = id;
    c->next_chunk = 0;
    c->finished = false;
    c->truncated = false;
    c->fill = 0;
    c->total = 0;
    c->key = 0;
    c->nonce = c->epoch = 0;
    c->seal = 0;
}

void ushp_chunker_finish(struct ushp_chunker *c)
{
    if (c->finished)
        return;
    ushp_chunker_emit(c, true);
    c->finished = true;
}
