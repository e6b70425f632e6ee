// LINK: uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c lib/sha256.c
/* tests/fuzz/fuzz_profile_stream_tag.c: the profile stream's tags
 * (uapi/profile_stream_tag.c), which sonde-prof -k checks on whatever
 * arrives on its UDP port before it believes a byte of it.
 *
 * Invariants, for any input under a fixed key and epoch:
 * - pstr_verify reads nothing past the datagram, and says yes only to a
 *   tagged datagram whose tag is the one the key gives (checked against
 *   a tag computed here from the bytes, the long way: plain NH, HMAC);
 * - a datagram that parses untagged, sealed, parses tagged with the same
 *   header and payload, and verifies; under another epoch or another key
 *   it does not, nor with any one byte of it changed. */
#include <string.h>
#include "fuzz.h"
#include "lib/sha256.h"
#include "uapi/byteorder.h"
#include "uapi/profile_stream.h"

static const uint8_t key[PSTR_KEY_LEN] = "0123456789abcdef0123456789abcde";
static const uint64_t epoch = 0x1122334455667788ull;

static void keyed_for(struct pstr_tag_key *k, const uint8_t *kb, uint64_t e)
{
    struct hmac_sha256 m;
    hmac_sha256_init(&m, kb, PSTR_KEY_LEN);
    pstr_tag_begin(k, &m, e);
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

/* The tag of the datagram's body, from the format's words alone: the NH
 * key's HMAC blocks, NH a word pair at a time over a zero-padded copy,
 * HMAC of label, epoch, length and the two sums. */
static void tag_long_way(const uint8_t *d, size_t body, uint8_t out[PSTR_TAG_LEN])
{
    static uint64_t k[PSTR_NH_KEY_WORDS];
    static bool made;
    for (unsigned j = 0; !made && j * 4 < PSTR_NH_KEY_WORDS; j++) {
        uint8_t msg[20], blk[32];
        memcpy(msg, "SPRS-NHK", 8);
        put_be64(msg + 8, epoch);
        put_be32(msg + 16, j);
        hmac_sha256(key, sizeof key, msg, sizeof msg, blk);
        for (unsigned w = 0; w < 4 && j * 4 + w < PSTR_NH_KEY_WORDS; w++)
            k[j * 4 + w] = le64(blk + 8 * w);
    }
    made = true;
    uint8_t m[PSTR_DGRAM_MAX + 16] = { 0 }, msg[52];
    memcpy(m, d, body);
    memcpy(msg, "SPRS-TAG", 8);
    put_be64(msg + 8, epoch);
    put_be32(msg + 16, (uint32_t)body);
    for (int pass = 0; pass < 2; pass++) {
        unsigned __int128 sum = 0;
        for (size_t i = 0; i < (body + 15) / 16 * 2; i += 2)
            sum += (unsigned __int128)(le64(m + 8 * i) + k[i + 2 * pass]) *
                   (le64(m + 8 * i + 8) + k[i + 1 + 2 * pass]);
        put_be64(msg + 20 + 16 * pass, (uint64_t)(sum >> 64));
        put_be64(msg + 28 + 16 * pass, (uint64_t)sum);
    }
    hmac_sha256(key, sizeof key, msg, sizeof msg, out);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    /* Made once: a key's state is ~45 HMACs. */
    static struct pstr_tag_key keyed, other_epoch, other_key;
    static bool made;
    if (!made) {
        keyed_for(&keyed, key, epoch);
        keyed_for(&other_epoch, key, epoch + 1);
        uint8_t key2[PSTR_KEY_LEN];
        memcpy(key2, key, sizeof key2);
        key2[0] ^= 1;
        keyed_for(&other_key, key2, epoch);
        made = true;
    }

    uint8_t *in = malloc(n ? n : 1);   /* exactly n: ASan sees a read past it */
    FUZZ_CHECK(in);
    memcpy(in, d, n);
    bool ok = pstr_verify(&keyed, in, n);
    if (ok) {
        uint8_t want[PSTR_TAG_LEN];
        FUZZ_CHECK(n >= PSTR_HDR_LEN + PSTR_TAG_LEN && n - PSTR_TAG_LEN <= PSTR_DGRAM_MAX);
        FUZZ_CHECK(in[28] & PSTR_FLAG_TAGGED);
        tag_long_way(in, n - PSTR_TAG_LEN, want);
        FUZZ_CHECK(memcmp(want, in + n - PSTR_TAG_LEN, PSTR_TAG_LEN) == 0);
    }

    struct pstr_hdr h, t;
    if (pstr_parse(in, n, &h) == 0 && !h.tagged) {
        uint8_t sealed[PSTR_TAGGED_MAX];
        FUZZ_CHECK(n <= PSTR_DGRAM_MAX);
        memcpy(sealed, in, n);
        size_t m = pstr_seal(&keyed, sealed, n);
        FUZZ_CHECK(m == n + PSTR_TAG_LEN);
        FUZZ_CHECK(pstr_parse(sealed, m, &t) == 0 && t.tagged);
        FUZZ_CHECK(t.type == h.type && t.cpu == h.cpu && t.stream == h.stream &&
                   t.seq == h.seq && t.t_ns == h.t_ns && t.count == h.count && t.len == h.len);
        FUZZ_CHECK(memcmp(t.payload, in + PSTR_HDR_LEN, h.len) == 0);
        FUZZ_CHECK(pstr_verify(&keyed, sealed, m));
        FUZZ_CHECK(!pstr_verify(&other_epoch, sealed, m));
        FUZZ_CHECK(!pstr_verify(&other_key, sealed, m));
        /* One byte changed, anywhere (the input picks where and how). */
        size_t at = n ? (size_t)in[n - 1] * 7 % m : 0;
        sealed[at] ^= (uint8_t)(n ? (in[0] | 1) : 1);
        FUZZ_CHECK(!pstr_verify(&keyed, sealed, m));
    }
    free(in);
    return 0;
}
