/* uapi/profile_stream_tag.c: the profile stream's tags (uapi/profile_stream.h,
 * "Tagged datagrams"). Kept apart from uapi/profile_stream.c, as the UDP
 * shell's are from uapi/udpshell.c, so that code that only reads untagged
 * streams does not link SHA-256. Freestanding: the kernel builds it as it
 * is.
 *
 * Wire format: prefix pstr_ and PSTR_. */
#include "lib/sha256.h"
#include "uapi/byteorder.h"
#include "uapi/profile_stream.h"

#define OFF_FLAGS 28

void pstr_tag_begin(struct hmac_sha256 *m, uint64_t epoch)
{
    uint8_t e[8];
    put_be64(e, epoch);
    hmac_sha256_update(m, PSTR_TAG_LABEL, sizeof PSTR_TAG_LABEL - 1);
    hmac_sha256_update(m, e, sizeof e);
}

size_t pstr_seal(const struct hmac_sha256 *keyed, uint8_t *d, size_t n)
{
    struct hmac_sha256 m = *keyed;
    d[OFF_FLAGS] |= PSTR_FLAG_TAGGED;
    hmac_sha256_update(&m, d, n);
    hmac_sha256_final(&m, d + n);
    return n + PSTR_TAG_LEN;
}

bool pstr_verify(const struct hmac_sha256 *keyed, const void *dgram, size_t len)
{
    const uint8_t *d = dgram;
    uint8_t want[PSTR_TAG_LEN];
    if (len < PSTR_HDR_LEN + PSTR_TAG_LEN || !(d[OFF_FLAGS] & PSTR_FLAG_TAGGED))
        return false;
    struct hmac_sha256 m = *keyed;
    hmac_sha256_update(&m, d, len - PSTR_TAG_LEN);
    hmac_sha256_final(&m, want);
    return ct_equal(want, d + len - PSTR_TAG_LEN, PSTR_TAG_LEN);
}
