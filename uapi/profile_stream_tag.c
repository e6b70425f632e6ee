/* uapi/profile_stream_tag.c: the profile stream's tags (uapi/profile_stream.h,
 * "Tagged datagrams"): NH over the datagram, HMAC-SHA256 over NH's short
 * digest. Kept apart from uapi/profile_stream.c, as the UDP shell's are
 * from uapi/udpshell.c, so that code that only reads untagged streams
 * does not link SHA-256. Freestanding: the kernel builds it as it is.
 *
 * Wire format: prefix pstr_ and PSTR_. */
#include "lib/sha256.h"
#include "uapi/byteorder.h"
#include "uapi/profile_stream.h"

#define OFF_FLAGS 28
#define NH_STEP   16                /* bytes a step of NH takes: two words */
#define MSG_MAX   55                /* the most one padded SHA-256 block holds */

_Static_assert(PSTR_TAG_LEN == SHA256_LEN, "the tag is an HMAC-SHA256");
/* The tag's HMAC input: label, epoch, n and H. */
_Static_assert(8 + 8 + 4 + 32 <= MSG_MAX, "the tag's HMAC input fits one block");

/* Unaligned little-endian 64-bit load: one load instruction on the
 * little-endian targets (uapi/byteorder.h's put_be64 says why memcpy). */
static inline uint64_t get_le64(const uint8_t *p)
{
    uint64_t v;
    __builtin_memcpy(&v, p, sizeof v);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

/* A SHA-256 state as its digest's bytes: a byte swap and a store a word
 * (put_be32 stores byte by byte). */
static void put_be32s(uint8_t *out, const uint32_t h[8])
{
    for (int i = 0; i < 8; i++) {
        uint32_t v = h[i];
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        v = __builtin_bswap32(v);
#endif
        __builtin_memcpy(out + 4 * i, &v, sizeof v);
    }
}

/* HMAC-SHA256 of the n <= MSG_MAX bytes at the start of blk (64 bytes,
 * overwritten) from k's two states: one inner block, one outer, the
 * length counting the key's block that each state has taken already.
 * Inlined: n is then a constant, and the padding a few stores, not a
 * call to memset. */
static inline __attribute__((always_inline)) void
tag_hmac(const struct pstr_tag_key *k, uint8_t blk[SHA256_BLOCK], size_t n, uint8_t out[SHA256_LEN])
{
    uint32_t h[8];
    __builtin_memset(blk + n, 0, SHA256_BLOCK - 8 - n);
    blk[n] = 0x80;
    put_be64(blk + 56, (SHA256_BLOCK + n) * 8);
    for (int i = 0; i < 8; i++)
        h[i] = k->inner[i];
    sha256_blocks(h, blk, 1);
    put_be32s(blk, h);                                  /* the inner digest */
    put_be64(blk + 32, 0x80ull << 56);                  /* its padding: 4 stores */
    put_be64(blk + 40, 0);
    put_be64(blk + 48, 0);
    put_be64(blk + 56, (SHA256_BLOCK + SHA256_LEN) * 8);
    for (int i = 0; i < 8; i++)
        h[i] = k->outer[i];
    sha256_blocks(h, blk, 1);
    put_be32s(out, h);
}

/* One step of both passes: the message pair m0, m1 with the key pair
 * (a, b) for the first pass and (c, d) for the second, which is the next
 * step's first. 64x64->128 products: mul and umulh on arm64, mul on
 * x86-64, no library call. */
static inline void nh_step(unsigned __int128 *s0, unsigned __int128 *s1, uint64_t m0,
                           uint64_t m1, uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    *s0 += (unsigned __int128)(m0 + a) * (m1 + b);
    *s1 += (unsigned __int128)(m0 + c) * (m1 + d);
}

/* The last n % 16 bytes' words, zero-padded, from the 16 bytes at p, of
 * which those past the datagram are never looked at: a load and a mask,
 * not a copy byte by byte. */
static void nh_last(const uint8_t *p, size_t r, uint64_t *m0, uint64_t *m1)
{
    *m0 = get_le64(p);
    *m1 = r > 8 ? get_le64(p + 8) & (~0ull >> (128 - 8 * r)) : 0;
    if (r < 8)
        *m0 &= ~0ull >> (64 - 8 * r);
}

/* H of the n bytes at d (n <= PSTR_DGRAM_MAX: k's words cover them) into
 * out: both passes in one loop, four steps a turn (~16 instructions a
 * step on arm64, each key pair loaded once and used by both passes, as
 * against ~22 a step one at a time), then the steps left one at a time,
 * then the last, zero-padded. Reads up to 15 bytes past n when n is not
 * a multiple of 16 (ignoring them): the datagram's tag, or the room for
 * it. */
static void tag_nh(const uint64_t *k, const uint8_t *d, size_t n, uint8_t out[32])
{
    unsigned __int128 s0 = 0, s1 = 0;
    const uint8_t *end = d + n / NH_STEP * NH_STEP;
    for (; end - d >= 4 * NH_STEP; d += 4 * NH_STEP, k += 8) {
        nh_step(&s0, &s1, get_le64(d), get_le64(d + 8), k[0], k[1], k[2], k[3]);
        nh_step(&s0, &s1, get_le64(d + 16), get_le64(d + 24), k[2], k[3], k[4], k[5]);
        nh_step(&s0, &s1, get_le64(d + 32), get_le64(d + 40), k[4], k[5], k[6], k[7]);
        nh_step(&s0, &s1, get_le64(d + 48), get_le64(d + 56), k[6], k[7], k[8], k[9]);
    }
    for (; d < end; d += NH_STEP, k += 2)
        nh_step(&s0, &s1, get_le64(d), get_le64(d + 8), k[0], k[1], k[2], k[3]);
    if (n % NH_STEP) {
        uint64_t m0, m1;
        nh_last(d, n % NH_STEP, &m0, &m1);
        nh_step(&s0, &s1, m0, m1, k[0], k[1], k[2], k[3]);
    }
    put_be64(out, (uint64_t)(s0 >> 64));
    put_be64(out + 8, (uint64_t)s0);
    put_be64(out + 16, (uint64_t)(s1 >> 64));
    put_be64(out + 24, (uint64_t)s1);
}

void pstr_tag_begin(struct pstr_tag_key *k, const struct hmac_sha256 *keyed, uint64_t epoch)
{
    /* keyed->inner has taken the key ^ ipad block and nothing else; the
     * outer state is SHA-256 after the key ^ opad block. */
    struct sha256 o;
    sha256_init(&o);
    sha256_update(&o, keyed->okey, sizeof keyed->okey);
    for (int i = 0; i < 8; i++) {
        k->inner[i] = keyed->inner.h[i];
        k->outer[i] = o.h[i];
    }
    secure_zero(&o, sizeof o);
    k->epoch = epoch;
    uint8_t blk[SHA256_BLOCK], words[SHA256_LEN];
    for (uint32_t j = 0; j * 4 < PSTR_NH_KEY_WORDS; j++) {
        __builtin_memcpy(blk, PSTR_NHK_LABEL, 8);
        put_be64(blk + 8, epoch);
        put_be32(blk + 16, j);
        tag_hmac(k, blk, 20, words);
        for (uint32_t w = 0; w < 4 && j * 4 + w < PSTR_NH_KEY_WORDS; w++)
            k->nh[j * 4 + w] = get_le64(words + 8 * w);
    }
    secure_zero(blk, sizeof blk);
    secure_zero(words, sizeof words);
}

/* The tag of the n-byte datagram at d, flags as they are. */
static void tag_of(const struct pstr_tag_key *k, const uint8_t *d, size_t n,
                   uint8_t tag[PSTR_TAG_LEN])
{
    uint8_t blk[SHA256_BLOCK];
    __builtin_memcpy(blk, PSTR_TAG_LABEL, 8);
    put_be64(blk + 8, k->epoch);
    put_be32(blk + 16, (uint32_t)n);
    tag_nh(k->nh, d, n, blk + 20);
    tag_hmac(k, blk, 52, tag);
}

size_t pstr_seal(const struct pstr_tag_key *k, uint8_t *d, size_t n)
{
    if (n < PSTR_HDR_LEN || n > PSTR_DGRAM_MAX)
        return 0;
    d[OFF_FLAGS] |= PSTR_FLAG_TAGGED;
    tag_of(k, d, n, d + n);
    return n + PSTR_TAG_LEN;
}

bool pstr_verify(const struct pstr_tag_key *k, const void *dgram, size_t len)
{
    const uint8_t *d = dgram;
    uint8_t want[PSTR_TAG_LEN];
    if (len < PSTR_HDR_LEN + PSTR_TAG_LEN || len > PSTR_TAGGED_MAX ||
        !(d[OFF_FLAGS] & PSTR_FLAG_TAGGED))
        return false;
    tag_of(k, d, len - PSTR_TAG_LEN, want);
    return ct_equal(want, d + len - PSTR_TAG_LEN, PSTR_TAG_LEN);
}
