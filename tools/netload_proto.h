/* tools/netload_proto.h: the netload payload, shared by the kernel side
 * (net/netload.c) and the host peer (tools/netload.c).
 *
 * Plain constants, byte-order helpers and a sequence tracker: no C library,
 * no kernel headers, nothing but <stdint.h> <stddef.h> <stdbool.h>, so the
 * freestanding kernel and the host build the very same code.
 *
 * Every netload datagram starts with an 18-byte header, big-endian:
 *
 *   offset size field
 *        0    4 magic    0x4E4C4F44 ("NLOD")
 *        4    2 run id   chosen by the sender per run; the receiver locks onto
 *                        the first run it sees and counts others as foreign
 *        6    4 seq      0, 1, 2, ... within the run
 *       10    8 time_ns  the sender's clock when it built the datagram
 *
 * and is padded to the run's size (18..1472 bytes) with a fixed pattern
 * (byte i of the datagram = i & 0xff) that the receiver does not check. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NL_MAGIC     0x4E4C4F44u
#define NL_HDR_LEN   18
#define NL_SIZE_MIN  NL_HDR_LEN
#define NL_SIZE_MAX  1472              /* one Ethernet frame: 1500 - 20 - 8 */
#define NL_SIZE_DEF  1024

struct nl_hdr {                        /* host byte order */
    uint32_t magic;
    uint16_t run;
    uint32_t seq;
    uint64_t time_ns;
};

static inline uint16_t nl_get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t nl_get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t nl_get64(const uint8_t *p)
{
    return (uint64_t)nl_get32(p) << 32 | nl_get32(p + 4);
}
static inline void nl_put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void nl_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);  p[3] = (uint8_t)v;
}
static inline void nl_put64(uint8_t *p, uint64_t v)
{
    nl_put32(p, (uint32_t)(v >> 32));
    nl_put32(p + 4, (uint32_t)v);
}

/* Fill the padding once per run (it does not change between datagrams). */
static inline void nl_fill_pattern(uint8_t *buf, size_t size)
{
    for (size_t i = NL_HDR_LEN; i < size; i++)
        buf[i] = (uint8_t)i;
}

/* Write the header into buf (at least NL_HDR_LEN bytes). */
static inline void nl_build(uint8_t *buf, uint16_t run, uint32_t seq, uint64_t time_ns)
{
    nl_put32(buf, NL_MAGIC);
    nl_put16(buf + 4, run);
    nl_put32(buf + 6, seq);
    nl_put64(buf + 10, time_ns);
}

/* True, with *h filled, if buf is a netload datagram: long enough, right magic. */
static inline bool nl_parse(const uint8_t *buf, size_t len, struct nl_hdr *h)
{
    if (len < NL_HDR_LEN || nl_get32(buf) != NL_MAGIC)
        return false;
    h->magic = NL_MAGIC;
    h->run = nl_get16(buf + 4);
    h->seq = nl_get32(buf + 6);
    h->time_ns = nl_get64(buf + 10);
    return true;
}

/* The receiver's accounting of one run's sequence numbers.
 *
 * A bitmap window (the caller's memory, nbits a power of two) remembers
 * which of the last nbits sequence numbers arrived, to tell a duplicate
 * from a late (reordered) datagram. A datagram older than the window is
 * counted as reordered and assumed not a duplicate.
 *
 *   unique   = datagrams - dup
 *   lost     = (highest seq + 1) - unique     (senders start at 0; a
 *              datagram still in flight at the end counts as lost)
 *   reordered: arrived after a higher sequence number had. */
struct nl_track {
    uint64_t datagrams, bytes, dup, reordered;
    uint32_t max_seq;                  /* valid when datagrams > 0 */
    uint8_t *bits;
    uint32_t nbits;
};

static inline void nl_track_init(struct nl_track *t, uint8_t *bits, uint32_t nbits)
{
    t->datagrams = t->bytes = t->dup = t->reordered = 0;
    t->max_seq = 0;
    t->bits = bits;
    t->nbits = nbits;
    for (uint32_t i = 0; i < nbits / 8; i++)
        bits[i] = 0;
}

static inline bool nl_bit_test_set(struct nl_track *t, uint32_t seq)
{
    uint32_t i = seq & (t->nbits - 1);
    uint8_t m = (uint8_t)(1u << (i & 7));
    bool was = t->bits[i / 8] & m;
    t->bits[i / 8] |= m;
    return was;
}

static inline void nl_bit_clear(struct nl_track *t, uint32_t seq)
{
    uint32_t i = seq & (t->nbits - 1);
    t->bits[i / 8] &= (uint8_t)~(1u << (i & 7));
}

/* Account one datagram of the run (len = its size in bytes). */
static inline void nl_track_seq(struct nl_track *t, uint32_t seq, size_t len)
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

static inline uint64_t nl_track_lost(const struct nl_track *t)
{
    if (t->datagrams == 0)
        return 0;
    uint64_t expected = (uint64_t)t->max_seq + 1, unique = t->datagrams - t->dup;
    return expected > unique ? expected - unique : 0;
}
