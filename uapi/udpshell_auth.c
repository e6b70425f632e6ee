/* uapi/udpshell_auth.c: the UDP shell's authenticated mode on the wire
 * (docs/udpshell.md, "Authentication"): keys, tags, and the reply chunker's
 * sealing. Kept apart from uapi/udpshell.c so that code speaking only the
 * open protocol does not link SHA-256. Freestanding, like its sibling. */
#include "lib/parse.h"
#include "lib/sha256.h"
#include "uapi/byteorder.h"
#include "uapi/udpshell.h"

int ushp_parse_key(const char *s, size_t n, uint8_t key[USHP_KEY_LEN])
{
    if (n != 2 * USHP_KEY_LEN)
        return -1;
    for (size_t i = 0; i < USHP_KEY_LEN; i++) {
        int hi = parse_hex_digit(s[2 * i]), lo = parse_hex_digit(s[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            secure_zero(key, USHP_KEY_LEN);   /* no half-parsed key left behind */
            return -1;
        }
        key[i] = (uint8_t)(hi << 4 | lo);
    }
    return 0;
}

int ushp_check_id(const char *s, size_t n)
{
    if (n < 1 || n > USHP_ID_MAX)
        return -1;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
        if (!ok)
            return -1;
    }
    return 0;
}

/* A key of its own per id: the label keeps these keys apart from anything
 * else made from the shell's key. */
void ushp_id_key(const uint8_t key[USHP_KEY_LEN], const char *id, uint8_t out[USHP_KEY_LEN])
{
    static const char label[] = "sonde ushid ";
    struct hmac_sha256 m;
    uint8_t k[USHP_TAG_LEN];
    size_t n = 0;
    while (id[n])
        n++;
    hmac_sha256_init(&m, key, USHP_KEY_LEN);
    hmac_sha256_update(&m, label, sizeof label - 1);
    hmac_sha256_update(&m, id, n);
    hmac_sha256_final(&m, k);
    __builtin_memcpy(out, k, USHP_KEY_LEN);
    secure_zero(k, sizeof k);
    secure_zero(&m, sizeof m);
}

void ushp_auth_seal(const uint8_t *key, uint8_t *dgram, size_t n)
{
    hmac_sha256(key, USHP_KEY_LEN, dgram, n, dgram + n);
}

size_t ushp_build_auth(void *buf, size_t cap, const uint8_t key[USHP_KEY_LEN],
                       uint32_t seq, uint16_t chunk, uint16_t flags, uint64_t nonce,
                       uint64_t epoch, const void *payload, size_t len)
{
    uint8_t *d = buf;
    size_t body = USHP_AUTH_PAYLOAD_OFF + len;
    if (len > USHP_CHUNK_MAX || cap < body + USHP_TAG_LEN)
        return 0;
    put_be32(d + USHP_OFF_MAGIC, USHP_MAGIC);
    put_be32(d + USHP_OFF_SEQ, seq);
    put_be16(d + USHP_OFF_CHUNK, chunk);
    put_be16(d + USHP_OFF_FLAGS, flags | USHP_FLAG_AUTH);
    put_be16(d + USHP_OFF_LEN, (uint16_t)len);
    put_be16(d + USHP_OFF_ID, 0);
    put_be64(d + USHP_HDR_LEN, nonce);
    put_be64(d + USHP_HDR_LEN + USHP_NONCE_LEN, epoch);
    if (len)
        __builtin_memcpy(d + USHP_AUTH_PAYLOAD_OFF, payload, len);
    ushp_auth_seal(key, d, body);
    return body + USHP_TAG_LEN;
}

size_t ushp_build_challenge(void *buf, size_t cap, const uint8_t key[USHP_KEY_LEN],
                            uint32_t seq, uint64_t nonce)
{
    static const uint8_t zero[USHP_CHALLENGE_LEN];
    return ushp_build_auth(buf, cap, key, seq, 0, USHP_FLAG_LAST | USHP_FLAG_CHALLENGE,
                           nonce, 0, zero, sizeof zero);
}

size_t ushp_build_challenge_reply(void *buf, size_t cap, const uint8_t key[USHP_KEY_LEN],
                                  const struct ushp_hdr *h, uint64_t epoch,
                                  uint64_t highest)
{
    uint8_t pl[USHP_CHALLENGE_LEN];
    put_be64(pl, highest);
    return ushp_build_auth(buf, cap, key, h->seq, 0,
                           USHP_FLAG_LAST | USHP_FLAG_CHALLENGE | USHP_FLAG_REPLY,
                           h->nonce, epoch, pl, sizeof pl);
}

bool ushp_auth_verify(const uint8_t key[USHP_KEY_LEN], const void *dgram, size_t len)
{
    uint8_t want[USHP_TAG_LEN];
    if (len < USHP_HDR_LEN + USHP_AUTH_OVERHEAD)
        return false;
    size_t body = len - USHP_TAG_LEN;
    hmac_sha256(key, USHP_KEY_LEN, dgram, body, want);
    return ct_equal(want, (const uint8_t *)dgram + body, USHP_TAG_LEN);
}

void ushp_chunker_init_auth(struct ushp_chunker *c, uint32_t seq, uint16_t id, uint64_t nonce,
                            uint64_t epoch, const uint8_t *key, ushp_send_fn send,
                            void *ctx)
{
    ushp_chunker_init(c, seq, id, send, ctx);
    c->key = key;
    c->nonce = nonce;
    c->epoch = epoch;
    c->seal = ushp_auth_seal;
}
