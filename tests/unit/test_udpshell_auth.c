// LINK: uapi/udpshell.c uapi/udpshell_auth.c lib/sha256.c
/* tests/unit/test_udpshell_auth.c: the authenticated datagram layout
 * (uapi/udpshell_auth.c): the documented test vector, parsing of the
 * layout, tags that catch every changed bit, keys, and the chunker's
 * tagged replies. */
#include "test.h"
#include <stdlib.h>
#include "lib/sha256.h"
#include "uapi/byteorder.h"
#include "uapi/udpshell.h"

static void unhex(const char *s, uint8_t *out)
{
    for (size_t i = 0; s[2 * i]; i++)
        sscanf(s + 2 * i, "%2hhx", &out[i]);
}

static const char *vec_key = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

/* docs/udpshell.md's test vectors: `version`, seq 0x102, nonce
 * 0x0123456789abcdef, epoch 0x8877665544332211, key 00 01 .. 1f; its
 * reply; and a challenge and its reply. */
#define VEC_EPOCH 0x8877665544332211ull

static uint8_t vec_out[128];
static size_t vec_len;
static void vec_send(void *ctx, const void *d, size_t n)
{
    vec_len = n <= sizeof vec_out ? n : 0;
    memcpy(vec_out, d, vec_len);
}

TEST(documented_test_vector)
{
    uint8_t key[32], d[128], want[128];
    CHECK_EQ(ushp_parse_key(vec_key, 64, key), 0);
    size_t n = ushp_build_auth(d, sizeof d, key, 0x102, 0, USHP_FLAG_LAST,
                               0x0123456789abcdefull, VEC_EPOCH, "version", 7);
    CHECK_EQ(n, 71);
    unhex("4e4f5348" "00000102" "0000" "0003" "0007" "0000" "0123456789abcdef"
          "8877665544332211" "76657273696f6e"
          "79c5b335077627fb17671fec09bfc75ef2c290e07bcb00e1e25380b6024f92dc", want);
    CHECK(memcmp(d, want, 71) == 0);
    CHECK(ushp_auth_verify(key, d, n));

    /* The reply "ok\n" to it, as the shell's chunker makes it: flags last |
     * auth | reply, reply id 1, the same nonce, the shell's epoch. */
    static struct ushp_chunker ch;
    ushp_chunker_init_auth(&ch, 0x102, 1, 0x0123456789abcdefull, VEC_EPOCH, key, vec_send, NULL);
    ushp_chunker_write(&ch, "ok\n", 3);
    ushp_chunker_finish(&ch);
    CHECK_EQ(vec_len, 67);
    unhex("4e4f5348" "00000102" "0000" "0007" "0003" "0001" "0123456789abcdef"
          "8877665544332211" "6f6b0a"
          "022f30b01b591037d78c86f3715d8c4174854af264725ffa4fb12e6d7d177aa4", want);
    CHECK(memcmp(vec_out, want, 67) == 0);
}

TEST(documented_challenge_vector)
{
    uint8_t key[32], d[128], want[128];
    CHECK_EQ(ushp_parse_key(vec_key, 64, key), 0);
    size_t n = ushp_build_challenge(d, sizeof d, key, 0x102, 0x0123456789abcdf0ull);
    CHECK_EQ(n, USHP_CHALLENGE_DGRAM);
    CHECK_EQ(n, 72);
    unhex("4e4f5348" "00000102" "0000" "000b" "0008" "0000" "0123456789abcdf0"
          "0000000000000000" "0000000000000000"
          "bffdf30ba154d7118d7961ed009987d6492ce106f122691afaca5a24734b0c8a", want);
    CHECK(memcmp(d, want, 72) == 0);
    struct ushp_hdr h;
    const uint8_t *pl;
    CHECK_EQ(ushp_parse(d, n, &h, &pl), 0);
    /* The answer: the shell's epoch and the highest nonce it accepted, in a
     * datagram exactly as long as the challenge. */
    size_t m = ushp_build_challenge_reply(d, sizeof d, key, &h, VEC_EPOCH,
                                          0x0123456789abcdefull);
    CHECK_EQ(m, n);
    unhex("4e4f5348" "00000102" "0000" "000f" "0008" "0000" "0123456789abcdf0"
          "8877665544332211" "0123456789abcdef"
          "c9dd2039abbbef275a492b1c6b4e5cf588031810f909a38bb3f14214fcef8f36", want);
    CHECK(memcmp(d, want, 72) == 0);
    CHECK_EQ(ushp_build_challenge_reply(d, m - 1, key, &h, VEC_EPOCH, 1), 0);
    CHECK_EQ(ushp_build_challenge(d, n - 1, key, 1, 1), 0);
}

/* ushid=: the key an id's tags are made under (docs/udpshell.md, "Kernel
 * ids"), checked against a vector made with Python's hmac module; the
 * challenge of the documented vector tagged under it. */
TEST(kernel_id_key_vector_and_binding)
{
    uint8_t key[32], k_alpha[32], k_beta[32], d[128], want[32];
    CHECK_EQ(ushp_parse_key(vec_key, 64, key), 0);
    ushp_id_key(key, "alpha", k_alpha);
    unhex("cbb611c463483677734b6b0ebc8beca8b224c44fbfb4d6623cca3c63ed839e81", want);
    CHECK(memcmp(k_alpha, want, 32) == 0);
    size_t n = ushp_build_challenge(d, sizeof d, k_alpha, 0x102, 0x0123456789abcdf0ull);
    unhex("2e122ec6229066153f91e51cb3e52a02adba4ab9ba50d2a2ae5dc03e98a61a26", want);
    CHECK(memcmp(d + n - 32, want, 32) == 0);
    /* Tagged for alpha: verifies under alpha only, not beta, not the bare key. */
    ushp_id_key(key, "beta", k_beta);
    CHECK(ushp_auth_verify(k_alpha, d, n));
    CHECK(!ushp_auth_verify(k_beta, d, n));
    CHECK(!ushp_auth_verify(key, d, n));
    /* In place, as the client does it. */
    uint8_t k2[32];
    memcpy(k2, key, 32);
    ushp_id_key(k2, "alpha", k2);
    CHECK(memcmp(k2, k_alpha, 32) == 0);
}

TEST(kernel_id_rule)
{
    static const char *good[] = { "a", "alpha", "node-7.rack_2", "ABCDEFGHIJKLMNOPQRSTUVWXYZ01234" };
    static const char *bad[] = { "", "has space", "slash/", "colon:", "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345",
                                 "\xc3\xa9t\xc3\xa9", "nul" };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        CHECK_EQ(ushp_check_id(good[i], strlen(good[i])), 0);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0] - 1; i++)
        CHECK_EQ(ushp_check_id(bad[i], strlen(bad[i])), -1);
    CHECK_EQ(ushp_check_id("nul\0x", 5), -1);          /* an embedded NUL */
}

/* A challenge is exactly USHP_CHALLENGE_LEN bytes of payload: a longer
 * one would buy a larger answer, a shorter one an answer larger than
 * itself. */
TEST(challenge_of_another_length_is_malformed)
{
    uint8_t key[32], d[128];
    memset(key, 0x42, sizeof key);
    struct ushp_hdr h;
    const uint8_t *pl;
    static const uint8_t zero[16];
    for (size_t len = 0; len <= 16; len++) {
        size_t n = ushp_build_auth(d, sizeof d, key, 1, 0, USHP_FLAG_LAST | USHP_FLAG_CHALLENGE,
                                   5, 0, zero, len);
        CHECK_EQ(ushp_parse(d, n, &h, &pl), len == USHP_CHALLENGE_LEN ? 0 : USHP_ECHALLENGE);
    }
    /* Without the auth flag the bit means nothing (the open protocol
     * ignores unknown flags). */
    size_t n = ushp_build(d, sizeof d, 1, 0, true, "version", 7);
    put_be16(d + USHP_OFF_FLAGS, USHP_FLAG_LAST | USHP_FLAG_CHALLENGE);
    CHECK_EQ(ushp_parse(d, n, &h, &pl), 0);
}

TEST(parse_authenticated_layout)
{
    uint8_t key[32], d[400];
    memset(key, 0x42, sizeof key);
    size_t n = ushp_build_auth(d, sizeof d, key, 7, 0, USHP_FLAG_LAST, 99, 0x5555, "net", 3);
    struct ushp_hdr h;
    const uint8_t *pl;
    CHECK_EQ(ushp_parse(d, n, &h, &pl), 0);
    CHECK_EQ(h.flags, USHP_FLAG_LAST | USHP_FLAG_AUTH);
    CHECK_EQ(h.len, 3);
    CHECK_EQ(h.nonce, 99);
    CHECK_EQ(h.epoch, 0x5555);
    CHECK(pl == d + 32 && memcmp(pl, "net", 3) == 0);
    /* The open layout's size with the auth flag set, and every other size,
     * disagree with len. */
    for (size_t k = 0; k < n; k++)
        CHECK_EQ(ushp_parse(d, k, &h, &pl), k < 16 ? USHP_ESHORT : USHP_ELEN);
    /* The longest request and the longest reply both fit. */
    char cmd[USHP_CMD_MAX + 1], chunk[USHP_CHUNK_MAX];
    memset(cmd, 'x', sizeof cmd);
    memset(chunk, 'y', sizeof chunk);
    static uint8_t big[USHP_AUTH_DGRAM_MAX];
    n = ushp_build_auth(big, sizeof big, key, 1, 0, USHP_FLAG_LAST, 1, 2, cmd, USHP_CMD_MAX);
    CHECK_EQ(ushp_parse(big, n, &h, &pl), 0);
    n = ushp_build_auth(big, sizeof big, key, 1, 0, USHP_FLAG_LAST, 1, 2, cmd, USHP_CMD_MAX + 1);
    CHECK_EQ(ushp_parse(big, n, &h, &pl), USHP_ETOOLONG);
    n = ushp_build_auth(big, sizeof big, key, 1, 0, USHP_FLAG_REPLY, 1, 2, chunk, USHP_CHUNK_MAX);
    CHECK_EQ(n, USHP_AUTH_DGRAM_MAX);
    CHECK_EQ(ushp_parse_reply(big, n, &h, &pl), 0);
    CHECK_EQ(ushp_build_auth(big, sizeof big - 1, key, 1, 0, 0, 1, 2, chunk, USHP_CHUNK_MAX), 0);
}

TEST(every_flipped_bit_fails_the_tag)
{
    uint8_t key[32], other[32], d[128];
    memset(key, 0x5a, sizeof key);
    size_t n = ushp_build_auth(d, sizeof d, key, 0xabcdef, 0, USHP_FLAG_LAST,
                               0x1122334455667788ull, 0x99aabbccddeeff00ull, "lines 3", 7);
    CHECK(ushp_auth_verify(key, d, n));
    int passed = 0;
    for (size_t bit = 0; bit < n * 8; bit++) {
        d[bit / 8] ^= (uint8_t)(1 << bit % 8);
        passed += ushp_auth_verify(key, d, n);
        d[bit / 8] ^= (uint8_t)(1 << bit % 8);
    }
    CHECK_EQ(passed, 0);
    memcpy(other, key, sizeof other);
    other[31] ^= 1;
    CHECK(!ushp_auth_verify(other, d, n));
    CHECK(!ushp_auth_verify(key, d, n - 1));
    CHECK(!ushp_auth_verify(key, d, USHP_HDR_LEN + USHP_AUTH_OVERHEAD - 1));
    CHECK(!ushp_auth_verify(key, d, 0));
}

TEST(key_rule)
{
    uint8_t key[32];
    CHECK_EQ(ushp_parse_key(vec_key, 64, key), 0);
    CHECK_EQ(key[0], 0);
    CHECK_EQ(key[31], 0x1f);
    CHECK_EQ(ushp_parse_key("AbCdEf0123456789abcdef0123456789ABCDEF0123456789abcdef0123456789",
                            64, key), 0);
    CHECK_EQ(key[0], 0xab);
    CHECK_EQ(ushp_parse_key(vec_key, 63, key), -1);
    CHECK_EQ(ushp_parse_key(vec_key, 62, key), -1);
    CHECK_EQ(ushp_parse_key("", 0, key), -1);
    char bad[65];
    memcpy(bad, vec_key, 65);
    bad[40] = 'g';
    CHECK_EQ(ushp_parse_key(bad, 64, key), -1);
    bad[40] = ' ';
    CHECK_EQ(ushp_parse_key(bad, 64, key), -1);
}

/* The chunker's authenticated replies: every chunk tagged, flagged reply,
 * carrying the request's nonce and the shell's epoch, and the payload
 * reassembles. */
static struct { size_t chunks, bad, bytes; uint8_t out[5000]; } got;
static uint8_t ckey[32];

static void cap_send(void *ctx, const void *d, size_t n)
{
    struct ushp_hdr h;
    const uint8_t *pl;
    got.bad += ushp_parse_reply(d, n, &h, &pl) != 0 || !ushp_auth_verify(ckey, d, n) ||
               h.flags != (USHP_FLAG_AUTH | USHP_FLAG_REPLY | (n - 64 < 1400 ? 1 : 0)) ||
               h.nonce != 0xfeedull || h.epoch != 0xe90c || h.seq != 77 || h.id != 0x4242 ||
               h.chunk != got.chunks;
    memcpy(got.out + got.bytes, pl, h.len);
    got.bytes += h.len;
    got.chunks++;
}

TEST(chunker_tags_each_reply_chunk)
{
    static struct ushp_chunker ch;
    char src[3000];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (char)('a' + i % 26);
    memset(ckey, 0x11, sizeof ckey);
    ushp_chunker_init_auth(&ch, 77, 0x4242, 0xfeed, 0xe90c, ckey, cap_send, NULL);
    ushp_chunker_write(&ch, src, sizeof src);
    ushp_chunker_finish(&ch);
    CHECK_EQ(got.chunks, 3);
    CHECK_EQ(got.bad, 0);
    CHECK_EQ(got.bytes, sizeof src);
    CHECK(memcmp(got.out, src, sizeof src) == 0);
    /* The open chunker after it is the open protocol again. */
    ushp_chunker_init(&ch, 77, 1, cap_send, NULL);
    CHECK(ch.key == NULL && ch.seal == NULL);
}
