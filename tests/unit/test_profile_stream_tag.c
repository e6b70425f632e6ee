// LINK: uapi/profile_stream_tag.c lib/sha256.c
// LIBS: -lcrypto
/* tests/unit/test_profile_stream_tag.c: the profile stream's tags
 * (uapi/profile_stream.h, "Tagged datagrams"; uapi/profile_stream_tag.c)
 * against a reference written here the plain way: NH a word pair at a
 * time over a zero-padded copy, with unsigned __int128, and HMAC-SHA256
 * from OpenSSL's libcrypto; against known answers from the Python
 * implementation (tests/tools/fake_stream_kernel.py, stream_tag); and
 * every change a forger could try: a bit anywhere, another key or epoch,
 * a zero byte more (the same padded NH input), a length out of range.
 * pstr_verify reads heap copies of exactly the datagram, so ASan sees a
 * read past it. */
#include "test.h"
#include "lib/sha256.h"
#include "uapi/profile_stream.h"
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdlib.h>
#include <string.h>

static const uint8_t tkey[PSTR_KEY_LEN] = "a key of thirty-two bytes, here.";

static void make_key(struct pstr_tag_key *k, const uint8_t *key, uint64_t epoch)
{
    struct hmac_sha256 m;
    hmac_sha256_init(&m, key, PSTR_KEY_LEN);
    pstr_tag_begin(k, &m, epoch);
}

static void be(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static void ref_hmac(const uint8_t *key, const uint8_t *msg, size_t n, uint8_t out[32])
{
    unsigned int len = 32;
    CHECK(HMAC(EVP_sha256(), key, PSTR_KEY_LEN, msg, n, out, &len) != NULL);
    CHECK_EQ(len, 32);
}

/* The NH key, word by word, from its HMAC blocks. */
static void ref_nh_key(const uint8_t *key, uint64_t epoch, uint64_t k[PSTR_NH_KEY_WORDS])
{
    for (unsigned j = 0; j * 4 < PSTR_NH_KEY_WORDS; j++) {
        uint8_t msg[20], blk[32];
        memcpy(msg, "SPRS-NHK", 8);
        be(msg + 8, epoch, 8);
        be(msg + 16, j, 4);
        ref_hmac(key, msg, sizeof msg, blk);
        for (unsigned w = 0; w < 4 && j * 4 + w < PSTR_NH_KEY_WORDS; w++)
            k[j * 4 + w] = le64(blk + 8 * w);
    }
}

/* The tag of the n-byte datagram d, flags as they are. */
static void ref_tag(const uint8_t *key, uint64_t epoch, const uint8_t *d, size_t n,
                    uint8_t tag[32])
{
    static uint64_t k[PSTR_NH_KEY_WORDS];
    ref_nh_key(key, epoch, k);
    uint8_t m[PSTR_DGRAM_MAX + 16] = { 0 };
    memcpy(m, d, n);
    size_t words = (n + 15) / 16 * 2;
    uint8_t msg[52];
    memcpy(msg, "SPRS-TAG", 8);
    be(msg + 8, epoch, 8);
    be(msg + 16, n, 4);
    for (int pass = 0; pass < 2; pass++) {
        unsigned __int128 s = 0;
        for (size_t i = 0; i < words; i += 2) {
            uint64_t a = le64(m + 8 * i) + k[i + 2 * pass];
            uint64_t b = le64(m + 8 * i + 8) + k[i + 1 + 2 * pass];
            s += (unsigned __int128)a * b;
        }
        be(msg + 20 + 16 * pass, (uint64_t)(s >> 64), 8);
        be(msg + 28 + 16 * pass, (uint64_t)s, 8);
    }
    ref_hmac(key, msg, sizeof msg, tag);
}

/* pstr_verify of a heap copy of exactly len bytes. */
static bool verify(const struct pstr_tag_key *k, const uint8_t *d, size_t len)
{
    uint8_t *c = malloc(len ? len : 1);
    memcpy(c, d, len);
    bool ok = pstr_verify(k, c, len);
    free(c);
    return ok;
}

static void fill(uint8_t *d, size_t n, unsigned seed)
{
    srand(seed);
    for (size_t i = 0; i < n; i++)
        d[i] = (uint8_t)rand();
}

static struct pstr_tag_key k42;

/* The NH key is the HMAC blocks', all PSTR_NH_KEY_WORDS of them. */
TEST(stream_tag_nh_key_is_the_hmac_blocks)
{
    static uint64_t want[PSTR_NH_KEY_WORDS];
    CHECK_EQ(PSTR_NH_KEY_WORDS, 178);           /* 1400 bytes: 176 words, + 2 */
    make_key(&k42, tkey, 42);
    ref_nh_key(tkey, 42, want);
    CHECK(memcmp(k42.nh, want, sizeof want) == 0);
    CHECK_EQ(k42.epoch, 42);
}

/* Every datagram length, header alone to the largest: the reference's tag,
 * the flag set, and it verifies. */
TEST(stream_tag_matches_the_reference_at_every_length)
{
    make_key(&k42, tkey, 42);
    static uint8_t d[PSTR_TAGGED_MAX], want[32];
    unsigned bad = 0;
    for (size_t n = PSTR_HDR_LEN; n <= PSTR_DGRAM_MAX; n++) {
        fill(d, n, (unsigned)n);
        d[28] &= (uint8_t)~PSTR_FLAG_TAGGED;
        CHECK(!verify(&k42, d, n));             /* untagged */
        CHECK_EQ(pstr_seal(&k42, d, n), n + PSTR_TAG_LEN);
        CHECK(d[28] & PSTR_FLAG_TAGGED);
        ref_tag(tkey, 42, d, n, want);
        bad += memcmp(d + n, want, 32) != 0 || !verify(&k42, d, n + PSTR_TAG_LEN);
    }
    CHECK_EQ(bad, 0);
}

/* Known answers from the Python implementation (stream_tag in
 * tests/tools/fake_stream_kernel.py): byte i of the datagram is
 * (i * mul + add) mod 256, the flag set. */
TEST(stream_tag_known_answers)
{
    static const struct { size_t n; uint64_t epoch; unsigned mul, add; const char *tag; } v[] = {
        { 32, 0x0123456789abcdefull, 5, 3,
          "649ca11407505def773e3f0c518b7381c19fdf8f219ae8f2b70ee288364d4783" },
        { 45, 42, 37, 11, "e9144ac763989be98cdef77e02db1147f30fd419a2cdeba1884c113e6d2dd157" },
        { 1400, 42, 37, 11, "1c702fb97557faf68350392c1145c4a25f72d98865cfd5dc210f5569d8424361" },
    };
    for (size_t t = 0; t < sizeof v / sizeof v[0]; t++) {
        struct pstr_tag_key k;
        static uint8_t d[PSTR_TAGGED_MAX];
        make_key(&k, tkey, v[t].epoch);
        for (size_t i = 0; i < v[t].n; i++)
            d[i] = (uint8_t)(i * v[t].mul + v[t].add);
        CHECK_EQ(pstr_seal(&k, d, v[t].n), v[t].n + PSTR_TAG_LEN);
        char hex[65];
        for (int i = 0; i < 32; i++)
            snprintf(hex + 2 * i, 3, "%02x", d[v[t].n + i]);
        CHECK_STR(hex, v[t].tag);
    }
}

/* Any one bit flipped, in the header, the payload, the last byte before
 * the padding or the tag, and the datagram no longer verifies: with no
 * payload, an odd length and the largest. */
TEST(stream_tag_refuses_any_flipped_bit)
{
    make_key(&k42, tkey, 42);
    static const size_t lens[] = { PSTR_HDR_LEN, 45, 1399, PSTR_DGRAM_MAX };
    static uint8_t d[PSTR_TAGGED_MAX];
    for (size_t t = 0; t < sizeof lens / sizeof lens[0]; t++) {
        fill(d, lens[t], 7);
        size_t n = pstr_seal(&k42, d, lens[t]);
        CHECK(verify(&k42, d, n));
        unsigned passed = 0;
        for (size_t i = 0; i < n; i++)
            for (int b = 0; b < 8; b++) {
                if (i == 28 && b == 0)
                    continue;                   /* the flag: untagged, below */
                d[i] ^= (uint8_t)(1 << b);
                passed += pstr_verify(&k42, d, n);
                d[i] ^= (uint8_t)(1 << b);
            }
        CHECK_EQ(passed, 0);
        d[28] ^= PSTR_FLAG_TAGGED;
        CHECK(!verify(&k42, d, n));
        d[28] ^= PSTR_FLAG_TAGGED;
        CHECK(verify(&k42, d, n));
    }
}

/* Another boot's epoch, or another key, makes another tag. */
TEST(stream_tag_is_the_key_and_epochs_alone)
{
    struct pstr_tag_key k43, kkey;
    uint8_t key2[PSTR_KEY_LEN];
    memcpy(key2, tkey, sizeof key2);
    key2[31] ^= 0x80;
    make_key(&k42, tkey, 42);
    make_key(&k43, tkey, 43);
    make_key(&kkey, key2, 42);
    static uint8_t d[PSTR_TAGGED_MAX];
    fill(d, 200, 3);
    size_t n = pstr_seal(&k42, d, 200);
    CHECK(verify(&k42, d, n));
    CHECK(!verify(&k43, d, n));
    CHECK(!verify(&kkey, d, n));
    CHECK(memcmp(k42.nh, k43.nh, sizeof k42.nh) != 0);   /* NH's key is the epoch's too */
    CHECK(memcmp(k42.nh, kkey.nh, sizeof k42.nh) != 0);
}

/* A datagram whose length is not a multiple of 16, a zero byte appended:
 * NH sees the same padded words, but the length is in the HMAC's input,
 * so the old tag does not pass for the longer datagram, nor the longer
 * one's for it cut back. */
TEST(stream_tag_binds_the_length)
{
    make_key(&k42, tkey, 42);
    static uint8_t d[PSTR_TAGGED_MAX], e[PSTR_TAGGED_MAX];
    for (size_t n = 45; n <= PSTR_DGRAM_MAX - 1; n += 97) {
        if (n % 16 == 0)
            continue;
        fill(d, n, (unsigned)n);
        size_t tn = pstr_seal(&k42, d, n);
        memcpy(e, d, n);
        e[n] = 0;                               /* a zero byte more, the same tag */
        memcpy(e + n + 1, d + n, PSTR_TAG_LEN);
        CHECK(verify(&k42, d, tn));
        CHECK(!verify(&k42, e, tn + 1));
        CHECK_EQ(pstr_seal(&k42, e, n + 1), tn + 1);
        CHECK(memcmp(e + n + 1, d + n, PSTR_TAG_LEN) != 0);
        memcpy(d + n, e + n + 1, PSTR_TAG_LEN);  /* the longer's tag on the shorter */
        CHECK(!verify(&k42, d, tn));
    }
}

/* Lengths out of a datagram's range: nothing sealed, nothing verified. */
TEST(stream_tag_lengths_out_of_range)
{
    make_key(&k42, tkey, 42);
    static uint8_t d[PSTR_TAGGED_MAX + 64];
    fill(d, sizeof d, 9);
    uint8_t before[sizeof d];
    memcpy(before, d, sizeof d);
    CHECK_EQ(pstr_seal(&k42, d, PSTR_HDR_LEN - 1), 0);
    CHECK_EQ(pstr_seal(&k42, d, PSTR_DGRAM_MAX + 1), 0);
    CHECK(memcmp(d, before, sizeof d) == 0);
    d[28] |= PSTR_FLAG_TAGGED;
    CHECK(!verify(&k42, d, PSTR_HDR_LEN + PSTR_TAG_LEN - 1));
    CHECK(!verify(&k42, d, PSTR_TAGGED_MAX + 1));
    CHECK(!verify(&k42, d, 0));
    /* The largest verifies; one byte more than that is never looked at. */
    CHECK_EQ(pstr_seal(&k42, d, PSTR_DGRAM_MAX), PSTR_TAGGED_MAX);
    CHECK(verify(&k42, d, PSTR_TAGGED_MAX));
}
