// LINK: lib/sha256.c
// LIBS: -lcrypto
/* tests/unit/test_sha256.c: lib/sha256.c against the published vectors
 * (FIPS 180-4's examples, RFC 4231's HMAC-SHA256 cases 1-7) and against
 * OpenSSL's libcrypto on random inputs of random lengths, fed in random
 * pieces, with every length around the 64-byte block and the 56-byte
 * padding boundary. libcrypto is the reference here only; the kernel and
 * the tools never link it. Also the block entry point: whole blocks in
 * one call from sha256_update, and an installed block function used by
 * every hash until it is replaced. */
#include "test.h"
#include <stdlib.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include "lib/sha256.h"

static void hex(const uint8_t *b, size_t n, char *out)
{
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", b[i]);
}

static void check_sha(const void *d, size_t n, const char *want)
{
    uint8_t md[SHA256_LEN];
    char h[2 * SHA256_LEN + 1];
    sha256(d, n, md);
    hex(md, sizeof md, h);
    CHECK_STR(h, want);
}

TEST(fips_180_4_examples)
{
    check_sha("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    check_sha("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const char *m2 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    check_sha(m2, strlen(m2), "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    const char *m3 = "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
                     "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu";
    check_sha(m3, strlen(m3), "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(million_a_in_pieces)
{
    struct sha256 s;
    uint8_t a[1000], md[SHA256_LEN];
    char h[2 * SHA256_LEN + 1];
    memset(a, 'a', sizeof a);
    sha256_init(&s);
    for (int i = 0; i < 1000; i++)
        sha256_update(&s, a, 1000);
    sha256_final(&s, md);
    hex(md, sizeof md, h);
    CHECK_STR(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

static void check_hmac(const void *key, size_t kl, const void *d, size_t n,
                       const char *want)
{
    uint8_t md[SHA256_LEN];
    char h[2 * SHA256_LEN + 1];
    hmac_sha256(key, kl, d, n, md);
    hex(md, sizeof md, h);
    h[strlen(want)] = 0;                 /* case 5 checks a 128-bit truncation */
    CHECK_STR(h, want);
}

TEST(rfc4231_cases_1_to_7)
{
    uint8_t k[131], d[50];
    memset(k, 0x0b, 20);
    check_hmac(k, 20, "Hi There", 8,
               "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    check_hmac("Jefe", 4, "what do ya want for nothing?", 28,
               "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    memset(k, 0xaa, 20);
    memset(d, 0xdd, 50);
    check_hmac(k, 20, d, 50,
               "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe");
    for (int i = 0; i < 25; i++)
        k[i] = (uint8_t)(i + 1);
    memset(d, 0xcd, 50);
    check_hmac(k, 25, d, 50,
               "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b");
    memset(k, 0x0c, 20);
    check_hmac(k, 20, "Test With Truncation", 20, "a3b6167473100ee06e0c796c2955552b");
    memset(k, 0xaa, 131);
    const char *m6 = "Test Using Larger Than Block-Size Key - Hash Key First";
    check_hmac(k, 131, m6, strlen(m6),
               "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    const char *m7 = "This is a test using a larger than block-size key and a larger "
                     "than block-size data. The key needs to be hashed before being "
                     "used by the HMAC algorithm.";
    check_hmac(k, 131, m7, strlen(m7),
               "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2");
}

/* A length to test: mostly around the boundaries where padding changes
 * (55/56 bytes into a block, 63/64/65), else anything up to 3000. */
static size_t pick_len(void)
{
    static const size_t edge[] = { 0, 1, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129,
                                   183, 184, 191, 192, 255, 256, 1456, 1471, 1472 };
    if (rand() % 2)
        return edge[rand() % (sizeof edge / sizeof edge[0])];
    return (size_t)(rand() % 3000);
}

static void fill(uint8_t *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        b[i] = (uint8_t)rand();
}

/* Feed d to update in random pieces, some of them empty. */
static void hmac_in_pieces(const uint8_t *key, size_t kl, const uint8_t *d, size_t n,
                           uint8_t out[SHA256_LEN])
{
    struct hmac_sha256 m;
    hmac_sha256_init(&m, key, kl);
    for (size_t off = 0; off < n;) {
        size_t k = (size_t)rand() % (n - off + 1);
        hmac_sha256_update(&m, d + off, k);
        off += k;
    }
    hmac_sha256_final(&m, out);
}

TEST(random_against_libcrypto)
{
    static uint8_t d[3000], key[200];
    srand(4231);
    int bad_sha = 0, bad_hmac = 0;
    for (int i = 0; i < 3000; i++) {
        size_t n = pick_len(), kl = (size_t)(rand() % 3 ? 32 : rand() % 200);
        fill(d, n);
        fill(key, kl);
        uint8_t mine[SHA256_LEN], ref[SHA256_LEN];
        unsigned rl = 0;
        sha256(d, n, mine);
        EVP_Digest(d, n, ref, &rl, EVP_sha256(), NULL);
        bad_sha += rl != SHA256_LEN || memcmp(mine, ref, SHA256_LEN) != 0;
        hmac_in_pieces(key, kl, d, n, mine);
        HMAC(EVP_sha256(), key, (int)kl, d, n, ref, &rl);
        bad_hmac += rl != SHA256_LEN || memcmp(mine, ref, SHA256_LEN) != 0;
    }
    CHECK_EQ(bad_sha, 0);
    CHECK_EQ(bad_hmac, 0);
}

TEST(ct_equal_compares_every_byte)
{
    uint8_t a[32], b[32];
    memset(a, 7, sizeof a);
    memcpy(b, a, sizeof b);
    CHECK(ct_equal(a, b, 32));
    for (int i = 0; i < 32; i++) {
        b[i] ^= 1;
        CHECK(!ct_equal(a, b, 32));
        b[i] ^= 1;
    }
    CHECK(ct_equal(a, b, 0));
}

/* A block function that records its calls, then runs the C: what
 * sha256_update hands the block function, and whether hashes use it. */
static size_t rec_calls, rec_blocks[64];
static void recording_blocks(uint32_t h[8], const uint8_t *p, size_t nblocks)
{
    if (rec_calls < 64)
        rec_blocks[rec_calls] = nblocks;
    rec_calls++;
    sha256_blocks_c(h, p, nblocks);
}

TEST(blocks_many_equal_one_at_a_time)
{
    static uint8_t d[64 * 23];
    srand(180);
    fill(d, sizeof d);
    for (size_t n = 0; n <= 23; n++) {
        uint32_t a[8], b[8];
        for (int i = 0; i < 8; i++)
            a[i] = b[i] = 0x01010101u * (uint32_t)(i + 1);
        sha256_blocks(a, d, n);
        for (size_t k = 0; k < n; k++)
            sha256_blocks_c(b, d + 64 * k, 1);
        CHECK(memcmp(a, b, sizeof a) == 0);
    }
}

/* Lengths that cross block boundaries, fed as a head and the rest: the
 * head tops up the partial block (one call of one block), every whole
 * block of the rest goes in one call, the tail waits for final. */
TEST(update_hands_whole_blocks_in_one_call)
{
    static uint8_t d[1600];
    srand(64);
    fill(d, sizeof d);
    static const size_t head[] = { 0, 1, 10, 63, 64, 65 };
    static const size_t len[] = { 0, 55, 56, 63, 64, 65, 127, 128, 129, 1432, 1471, 1472, 1600 };
    int bad_digest = 0, bad_calls = 0;
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++) {
        for (size_t j = 0; j < sizeof len / sizeof len[0]; j++) {
            size_t h = head[i], n = len[j];
            if (h > n)
                continue;
            struct sha256 s;
            uint8_t mine[SHA256_LEN], ref[SHA256_LEN];
            unsigned rl = 0;
            sha256_blocks_install(recording_blocks);
            sha256_init(&s);
            sha256_update(&s, d, h);
            size_t first = rec_calls;
            rec_calls = 0;
            sha256_update(&s, d + h, n - h);
            /* What the second update must do, from where the first left off. */
            size_t fill = h % 64, rest = n - h, want_calls = 0, want[2] = { 0, 0 };
            if (fill && rest >= 64 - fill) {
                want[want_calls++] = 1;
                rest -= 64 - fill;
            } else if (fill) {
                rest = 0;
            }
            if (rest / 64)
                want[want_calls++] = rest / 64;
            bad_calls += first != h / 64 || rec_calls != want_calls ||
                         (want_calls > 0 && rec_blocks[0] != want[0]) ||
                         (want_calls > 1 && rec_blocks[1] != want[1]);
            sha256_final(&s, mine);
            sha256_blocks_install(sha256_blocks_c);
            rec_calls = 0;
            EVP_Digest(d, n, ref, &rl, EVP_sha256(), NULL);
            bad_digest += memcmp(mine, ref, SHA256_LEN) != 0;
        }
    }
    CHECK_EQ(bad_calls, 0);
    CHECK_EQ(bad_digest, 0);
}

/* An installed block function is what sha256 and HMAC use, and
 * sha256_with uses the one it is given whatever is installed. */
TEST(installed_blocks_serve_every_hash)
{
    static uint8_t d[1432], key[32];
    srand(2104);
    fill(d, sizeof d);
    fill(key, sizeof key);
    uint8_t mine[SHA256_LEN], ref[SHA256_LEN];
    unsigned rl = 0;
    CHECK(sha256_blocks_installed() == sha256_blocks_c);
    sha256_blocks_install(recording_blocks);
    CHECK(sha256_blocks_installed() == recording_blocks);
    rec_calls = 0;
    hmac_sha256(key, sizeof key, d, sizeof d, mine);
    /* ipad block; 22 whole blocks; the inner final; opad block; the outer final. */
    CHECK_EQ(rec_calls, 5);
    CHECK_EQ(rec_blocks[1], 22);
    HMAC(EVP_sha256(), key, (int)sizeof key, d, sizeof d, ref, &rl);
    CHECK(memcmp(mine, ref, SHA256_LEN) == 0);
    sha256_blocks_install(0);                /* NULL puts the C back */
    CHECK(sha256_blocks_installed() == sha256_blocks_c);
    rec_calls = 0;
    sha256_with(recording_blocks, d, sizeof d, mine);
    CHECK_EQ(rec_calls, 2);
    EVP_Digest(d, sizeof d, ref, &rl, EVP_sha256(), NULL);
    CHECK(memcmp(mine, ref, SHA256_LEN) == 0);
    rec_calls = 0;
    sha256(d, sizeof d, mine);
    CHECK_EQ(rec_calls, 0);
    CHECK(memcmp(mine, ref, SHA256_LEN) == 0);
}

/* secure_zero stores words where it can: exactly the n bytes asked for
 * are zeroed, from any alignment, and not one byte either side. */
TEST(secure_zero_exact_bytes_any_alignment)
{
    uint8_t b[64];
    int bad = 0;
    for (size_t off = 0; off < 16; off++)
        for (size_t n = 0; n + off <= 48; n++) {
            memset(b, 0xa5, sizeof b);
            secure_zero(b + off, n);
            for (size_t i = 0; i < sizeof b; i++)
                bad += b[i] != (i >= off && i < off + n ? 0 : 0xa5);
        }
    CHECK_EQ(bad, 0);
}
