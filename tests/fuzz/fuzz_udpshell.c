// LINK: uapi/udpshell.c
/* tests/fuzz/fuzz_udpshell.c: the UDP shell's header (uapi/udpshell.c),
 * which the kernel parses from any datagram and the client from any reply.
 *
 * Invariants: a datagram either parses both ways or is refused for a
 * reason ushp_strerror names; one that parses has exactly 16 + len bytes
 * and is rebuilt byte for byte by ushp_build from its fields (when its
 * flags are ones the builder writes); and the chunker, fed the input as a
 * command's output in pieces, sends datagrams that each parse as a reply,
 * numbered 0, 1, 2, ..., only the last flagged, whose payloads put back
 * together are the output. An authenticated datagram has its nonce and
 * epoch where the layout says, and a challenge (or its answer) is exactly
 * USHP_CHALLENGE_DGRAM bytes. */
#include <string.h>
#include "fuzz.h"
#include "uapi/byteorder.h"
#include "uapi/udpshell.h"

static void check_parse(const uint8_t *d, size_t n)
{
    struct ushp_hdr h;
    const uint8_t *pl = NULL;
    int e = ushp_parse(d, n, &h, &pl);
    int er = ushp_parse_reply(d, n, &h, &pl);
    FUZZ_CHECK(e <= 0 && e >= -USHP_NREASONS && er <= 0 && er >= -USHP_NREASONS);
    FUZZ_CHECK(strcmp(ushp_strerror(e), "unknown error") != 0);
    /* A request is a reply with a smaller payload limit and no id: what
     * parses as a request parses as a reply, and a reply that is no
     * request is one for those two reasons alone. */
    FUZZ_CHECK(e != 0 || er == 0);
    FUZZ_CHECK(er != 0 || e == 0 || e == USHP_ETOOLONG || e == USHP_ERESERVED);
    if (er != 0)
        return;
    /* The authenticated layout carries a nonce before the payload and a
     * tag after it; the open one neither. */
    if (h.flags & USHP_FLAG_AUTH) {
        FUZZ_CHECK(n == USHP_HDR_LEN + USHP_AUTH_OVERHEAD + (size_t)h.len &&
                   pl == d + USHP_AUTH_PAYLOAD_OFF);
        FUZZ_CHECK(h.nonce == get_be64(d + 16) && h.epoch == get_be64(d + 24));
        /* A challenge and its answer are exactly one size: no amplification. */
        FUZZ_CHECK(!(h.flags & USHP_FLAG_CHALLENGE) || n == USHP_CHALLENGE_DGRAM);
        return;
    }
    FUZZ_CHECK(n == USHP_HDR_LEN + (size_t)h.len && pl == d + USHP_HDR_LEN);
    FUZZ_CHECK(h.magic == USHP_MAGIC && h.len <= USHP_CHUNK_MAX);
    /* Only a reply may carry an id there. */
    FUZZ_CHECK(h.id == 0 || e == USHP_ERESERVED);
    if ((h.flags != 0 && h.flags != USHP_FLAG_LAST) || h.id != 0)
        return;
    uint8_t b[USHP_DGRAM_MAX];
    size_t m = ushp_build(b, sizeof b, h.seq, h.chunk, h.flags == USHP_FLAG_LAST, pl, h.len);
    FUZZ_CHECK(m == n && memcmp(b, d, n) == 0);
}

static struct {
    uint8_t out[1 << 16];
    size_t len;
    unsigned next_chunk;
    int saw_last;
    uint32_t seq;
    uint16_t id;
} got;

static void collect(void *ctx, const void *dgram, size_t len)
{
    struct ushp_hdr h;
    const uint8_t *pl;
    FUZZ_CHECK(ushp_parse_reply(dgram, len, &h, &pl) == 0);
    FUZZ_CHECK(!got.saw_last);
    FUZZ_CHECK(h.seq == got.seq && h.chunk == got.next_chunk && h.id == got.id);
    FUZZ_CHECK(h.flags & USHP_FLAG_REPLY);
    /* Only the last chunk may be short. */
    FUZZ_CHECK((h.flags & USHP_FLAG_LAST) || h.len == USHP_CHUNK_MAX);
    FUZZ_CHECK(got.len + h.len <= sizeof got.out);
    memcpy(got.out + got.len, pl, h.len);
    got.len += h.len;
    got.next_chunk++;
    got.saw_last = h.flags & USHP_FLAG_LAST;
}

static void check_chunker(const uint8_t *d, size_t n)
{
    static struct ushp_chunker c;
    memset(&got, 0, sizeof got);
    got.seq = n ? d[0] * 0x01010101u : 7;
    got.id = n ? (uint16_t)(d[0] << 8 | 1) : 1;
    ushp_chunker_init(&c, got.seq, got.id, collect, NULL);
    /* Piece sizes from the input itself, so pieces straddle chunk ends. */
    size_t i = 0, k = 0;
    while (i < n) {
        size_t piece = 1 + (d[k++ % n] * 13u) % 1500;
        if (piece > n - i)
            piece = n - i;
        ushp_chunker_write(&c, d + i, piece);
        i += piece;
    }
    ushp_chunker_finish(&c);
    ushp_chunker_write(&c, d, n);          /* ignored once finished */
    ushp_chunker_finish(&c);
    FUZZ_CHECK(got.saw_last && got.len == n && memcmp(got.out, d, n) == 0);
    FUZZ_CHECK(c.total == n && !c.truncated);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    check_parse(d, n);
    if (n <= 4 * USHP_CHUNK_MAX)
        check_chunker(d, n);
    return 0;
}
