/* uapi/netload.c: building, parsing and sequence accounting of netload
 * datagrams (uapi/netload.h), the same code in the kernel and the host peer. */
#include "uapi/byteorder.h"
#include "uapi/netload.h"

void nl_fill_pattern(uint8_t *buf, size_t size)
{
    for (size_t i = NL_HDR_LEN; i < size; i++)
        buf[i] = (uint8_t)i;
}

void nl_build(uint8_t *buf, uint16_t run, uint32_t seq, uint64_t time_ns)
{
    put_be32(buf + NL_OFF_MAGIC, NL_MAGIC);
    put_be16(buf + NL_OFF_RUN, run);
    put_be32(buf + NL_OFF_SEQ, seq);
    put_be64(buf + NL_OFF_TIME, time_ns);
}

bool nl_parse(const uint8_t *buf, size_t len, struct nl_hdr *h)
{
    if (len < NL_HDR_LEN || get_be32(buf + NL_OFF_MAGIC) != NL_MAGIC)
        return false;
    h->magic = NL_MAGIC;
    h->run = get_be16(buf + NL_OFF_RUN);
    h->seq = get_be32(buf + NL_OFF_SEQ);
    h->time_ns = get_be64(buf + NL_OFF_TIME);
    return true;
}

void nl_track_init(struct nl_track *t, uint8_t *bits, uint32_t nbits)
{
    t->datagrams = t->bytes = t->dup = t->reordered = 0;
    t->max_seq = 0;
    t->bits = bits;
    t->nbits = nbits;
    for (uint32_t i = 0; i < nbits / 8; i++)
        bits[i] = 0;
}

static bool nl_bit_test_set(struct nl_track *t, uint32_t seq)
{
    uint32_t i = seq & (t->nbits - 1);
    uint8_t m = (uint8_t)(1u << (i & 7));
    bool was = t->bits[i / 8] & m;
    t->bits[i / 8] |= m;
    return was;
}

static void nl_bit_clear(struct nl_track *t, uint32_t seq)
{
    uint32_t i = seq & (t->nbits - 1);
    t->bits[i / 8] &= (uint8_t)~(1u << (i & 7));
}

void nl_track_seq(struct nl_track *t, uint32_t seq, size_t len)
{
    t->bytes += len;
    if (t->datagrams++ == 0) {
        t->max_seq = seq;
        nl_bit_test_set(t, seq);
        return;
    }
    if (seq > t->max_seq) {
        /* Slide the window: forget the bits that now stand for seqs ahead. */
        uint32_t gap = seq - t->max_seq;
        if (gap >= t->nbits) {
            for (uint32_t i = 0; i < t->nbits / 8; i++)
                t->bits[i] = 0;
        } else {
            /* Bits up to a byte boundary, then whole bytes, then the rest:
             * a gap of nbits-1 costs nbits/8 stores, not nbits. */
            uint32_t s = t->max_seq + 1;
            for (; s != seq && (s & 7); s++)
                nl_bit_clear(t, s);
            for (; seq - s >= 8; s += 8)
                t->bits[(s & (t->nbits - 1)) / 8] = 0;
            for (; s != seq; s++)
                nl_bit_clear(t, s);
            nl_bit_clear(t, seq);
        }
        t->max_seq = seq;
        nl_bit_test_set(t, seq);
        return;
    }
    if (t->max_seq - seq >= t->nbits) {   /* older than the window */
        t->reordered++;
        return;
    }
    if (nl_bit_test_set(t, seq))
        t->dup++;
    else if (seq != t->max_seq)
        t->reordered++;
}

uint64_t nl_track_lost(const struct nl_track *t)
{
    if (t->datagrams == 0)
        return 0;
    uint64_t expected = (uint64_t)t->max_seq + 1, unique = t->datagrams - t->dup;
    return expected > unique ? expected - unique : 0;
}
