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

/* docs/udpshell.md's test vector: `version`, seq 0x102, nonce
 * 0x0123456789abcdef, key 00 01 .. 1f. */
TEST(documented_test_vector)
{
    uint8_t key[32], d[128], want[128];
    CHECK_EQ(ushp_parse_key(vec_key, 64, key), 0);
    size_t n = ushp_build_auth(d, sizeof d, key, 0x102, 0, USHP_FLAG_LAST,
                               0x0123456789abcdefull, "version", 7);
    CHECK_EQ(n, 63);
    unhex("4e4f5348" "00000102" "0000" "0003" "0007" "0000" "0123456789abcdef"
          "76657273696f6e"
          "ac7635eafdf5702126da34982e9a32ffcdad04c26682803a0058e540482f8367", want);
    CHECK(memcmp(d, want, 63) == 0);
    CHECK(ushp_auth_verify(key, d, n));

    /* The reply "ok\n" to it: flags last | auth | reply, the same nonce. */
    n = ushp_build_auth(d, sizeof d, key, 0x102, 0, USHP_FLAG_LAST | USHP_FLAG_REPLY,
                        0x0123456789abcdefull, "ok\n", 3);
    CHECK_EQ(n, 59);
    unhex("4e4f5348" "00000102" "0000" "0007" "0003" "0000" "0123456789abcdef" "6f6b0a"
          "742e40c49f9e753d2966752969465a3ee1f349cdb7dad8c146dbfb7e0f0d06d7", want);
    CHECK(memcmp(d, want, 59) == 0);
}

TEST(parse_authenticated_layout)
{
    uint8_t key[32], d[400];
    memset(key, 0x42, sizeof key);
    size_t n = ushp_build_auth(d, sizeof d, key, 7, 0, USHP_FLAG_LAST, 99, "net", 3);
    struct ushp_hdr h;
    const uint8_t *pl;
    CHECK_EQ(ushp_parse(d, n, &h, &pl), 0);
    CHECK_EQ(h.flags, USHP_FLAG_LAST | USHP_FLAG_AUTH);
    CHECK_EQ(h.len, 3);
    CHECK_EQ(h.nonce, 99);
    CHECK(pl == d + 24 && memcmp(pl, "net", 3) == 0);
    /* The open layout's size with the auth flag set, and every other size,
     * disagree with len. */
    for (size_t k = 0; k < n; k++)
        CHECK_EQ(ushp_parse(d, k, &h, &pl), k < 16 ? USHP_ESHORT : USHP_ELEN);
    /* The longest request and the longest reply both fit. */
    char cmd[USHP_CMD_MAX + 1], chunk[USHP_CHUNK_MAX];
    memset(cmd, 'x', sizeof cmd);
    memset(chunk, 'y', sizeof chunk);
    static uint8_t big[USHP_AUTH_DGRAM_MAX];
    n = ushp_build_auth(big, sizeof big, key, 1, 0, USHP_FLAG_LAST, 1, cmd, USHP_CMD_MAX);
    CHECK_EQ(ushp_parse(big, n, &h, &pl), 0);
    n = ushp_build_auth(big, sizeof big, key, 1, 0, USHP_FLAG_LAST, 1, cmd, USHP_CMD_MAX + 1);
    CHECK_EQ(ushp_parse(big, n, &h, &pl), USHP_ETOOLONG);
    n = ushp_build_auth(big, sizeof big, key, 1, 0, USHP_FLAG_REPLY, 1, chunk, USHP_CHUNK_MAX);
    CHECK_EQ(n, USHP_AUTH_DGRAM_MAX);
    CHECK_EQ(ushp_parse_reply(big, n, &h, &pl), 0);
    CHECK_EQ(ushp_build_auth(big, sizeof big - 1, key, 1, 0, 0, 1, chunk, USHP_CHUNK_MAX), 0);
}

TEST(every_flipped_bit_fails_the_tag)
{
    uint8_t key[32], other[32], d[128];
    memset(key, 0x5a, sizeof key);
    size_t n = ushp_build_auth(d, sizeof d, key, 0xabcdef, 0, USHP_FLAG_LAST,
                               0x1122334455667788ull, "lines 3", 7);
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
    CHECK(!ushp_auth_verify(key, d, 55));
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
 * carrying the request's nonce, and the payload reassembles. */
static struct { size_t chunks, bad, bytes; uint8_t out[5000]; } got;
static uint8_t ckey[32];

static void cap_send(void *ctx, const void *d, size_t n)
{
    struct ushp_hdr h;
    const uint8_t *pl;
    got.bad += ushp_parse_reply(d, n, &h, &pl) != 0 || !ushp_auth_verify(ckey, d, n) ||
               h.flags != (USHP_FLAG_AUTH | USHP_FLAG_REPLY | (n - 56 < 1400 ? 1 : 0)) ||
               h.nonce != 0xfeedull || h.seq != 77 || h.chunk != got.chunks;
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
    ushp_chunker_init_auth(&ch, 77, 0xfeed, ckey, cap_send, NULL);
    ushp_chunker_write(&ch, src, sizeof src);
    ushp_chunker_finish(&ch);
    CHECK_EQ(got.chunks, 3);
    CHECK_EQ(got.bad, 0);
    CHECK_EQ(got.bytes, sizeof src);
    CHECK(memcmp(got.out, src, sizeof src) == 0);
    /* The open chunker after it is the open protocol again. */
    ushp_chunker_init(&ch, 77, cap_send, NULL);
    CHECK(ch.key == NULL && ch.seal == NULL);
}
