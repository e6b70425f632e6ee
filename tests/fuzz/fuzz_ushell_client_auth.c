// LINK: tools/common/ushell_client.c uapi/udpshell.c uapi/udpshell_auth.c lib/sha256.c
/* tests/fuzz/fuzz_ushell_client_auth.c: sonde-sh -k's side of the
 * authenticated shell (tools/common/ushell_client.c): the challenge and
 * its answer, the epoch, and the filtering of what arrives, against a
 * shell the input scripts.
 *
 * Each piece of the input (fuzz.h) is one thing the client receives while
 * it waits: raw bytes; the shell's tagged answer to the client's latest
 * challenge (the epoch from the input); a tagged chunk of the reply to its
 * latest request (index, last flag and payload from the input); a chunk
 * tagged under another key or for another nonce (forged); or silence.
 *
 * Invariants: every datagram the client sends is tagged under its key; no
 * request goes out before an answer told the epoch, and each one carries
 * the epoch told last; every datagram that does not verify is counted in
 * ignored, and nothing else is; and when the client reports success, what
 * it wrote is exactly chunks 0..L of its last request, first copy wins. */
#include <string.h>
#include "fuzz.h"
#include "tools/common/ushell_client.h"
#include "uapi/byteorder.h"
#include "uapi/udpshell.h"

static const uint8_t key[USHP_KEY_LEN] = { 7, 7, 7 }, other[USHP_KEY_LEN] = { 8 };

struct shell {
    struct fuzz_cur in;
    uint64_t now;
    uint64_t chal_nonce, told_epoch;  /* the latest challenge; the epoch last told */
    uint32_t req_seq;
    uint64_t req_nonce;
    bool have_req;
    unsigned forged;                  /* datagrams delivered that cannot verify */
    /* The model of the reply to the latest request. */
    uint8_t have[64];
    uint8_t data[64][64];
    uint8_t len[64];
    int last;
};

static int fs_send(void *ctx, const void *d, size_t n)
{
    struct shell *s = ctx;
    struct ushp_hdr h;
    const uint8_t *pl;
    FUZZ_CHECK(ushp_parse(d, n, &h, &pl) == 0);
    FUZZ_CHECK(ushp_auth_verify(key, d, n));
    FUZZ_CHECK(!(h.flags & USHP_FLAG_REPLY));
    if (h.flags & USHP_FLAG_CHALLENGE) {
        FUZZ_CHECK(n == USHP_CHALLENGE_DGRAM && h.epoch == 0);
        s->chal_nonce = h.nonce;
        return 0;
    }
    FUZZ_CHECK(s->told_epoch != 0 && h.epoch == s->told_epoch);
    if (!s->have_req || h.seq != s->req_seq || h.nonce != s->req_nonce) {
        memset(s->have, 0, sizeof s->have);
        s->last = -1;
    }
    s->have_req = true;
    s->req_seq = h.seq;
    s->req_nonce = h.nonce;
    return 0;
}

static long fs_recv(void *ctx, void *buf, size_t cap, uint64_t timeout_ms)
{
    struct shell *s = ctx;
    const uint8_t *p;
    size_t n;
    if (!fuzz_next(&s->in, &p, &n) || n == 0 || p[0] % 5 == 4) {
        s->now += timeout_ms;         /* silence: the whole wait passes */
        return 0;
    }
    s->now += 1;
    uint8_t op = p[0] % 5;
    const uint8_t *a = p + 1;
    size_t k = n - 1;
    uint8_t *d = buf;
    FUZZ_CHECK(cap >= USHP_AUTH_DGRAM_MAX);
    switch (op) {
    case 0:                           /* raw bytes: they cannot carry our tag */
        if (k == 0)
            return 0;                 /* no datagram (ushc_io: 0 is "none came") */
        if (k > USHP_AUTH_DGRAM_MAX)
            k = USHP_AUTH_DGRAM_MAX;
        memcpy(d, a, k);
        s->forged++;
        return (long)k;
    case 1: {                         /* the answer to the latest challenge */
        if (!s->chal_nonce)
            return 0;
        struct ushp_hdr h = { .seq = 0, .nonce = s->chal_nonce };
        uint64_t epoch = k >= 2 ? (uint64_t)get_be16(a) + 1 : 1;
        s->told_epoch = epoch;
        s->chal_nonce = 0;            /* answered: the client takes one answer */
        return (long)ushp_build_challenge_reply(d, cap, key, &h, epoch, 0);
    }
    case 2:                           /* a chunk of the reply */
    case 3: {                         /* ... forged: another key, or another nonce */
        if (!s->have_req)
            return 0;
        unsigned chunk = k ? a[0] % 8 : 0;
        bool last = k > 1 && (a[1] & 1);
        size_t len = k > 2 ? k - 2 : 0;
        if (len > 64)
            len = 64;
        bool forge_key = op == 3 && k > 1 && (a[1] & 2);
        uint64_t nonce = op == 3 && !forge_key ? s->req_nonce + 1 : s->req_nonce;
        size_t m = ushp_build_auth(d, cap, forge_key ? other : key, s->req_seq, (uint16_t)chunk,
                                   USHP_FLAG_REPLY | (last ? USHP_FLAG_LAST : 0), nonce,
                                   s->told_epoch, a + 2 * (k > 2), len);
        if (op == 3) {
            s->forged++;
        } else if (!s->have[chunk]) {
            s->have[chunk] = 1;
            memcpy(s->data[chunk], a + 2 * (k > 2), len);
            s->len[chunk] = (uint8_t)len;
            if (last && s->last < 0)
                s->last = (int)chunk;
        }
        return (long)m;
    }
    }
    return 0;
}

static uint64_t fs_now(void *ctx) { return ((struct shell *)ctx)->now; }

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    static struct shell s;
    memset(&s, 0, sizeof s);
    s.in.p = d;
    s.in.n = n;
    s.last = -1;
    char *out = NULL, *errs = NULL;
    size_t outlen = 0, errlen = 0;
    FILE *fo = open_memstream(&out, &outlen), *fe = open_memstream(&errs, &errlen);
    FUZZ_CHECK(fo && fe);
    struct ushc c = {
        .io = { &s, fs_send, fs_recv, fs_now },
        .seq = 100, .timeout_ms = 3000, .peer = "fuzz", .prog = "sonde-sh",
        .out = fo, .err = fe, .key = key,
    };
    int rc = ushc_run(&c, "help");
    fclose(fo);
    fclose(fe);
    FUZZ_CHECK(rc == USHC_EXIT_OK || rc == USHC_EXIT_PROTO);
    FUZZ_CHECK(rc == USHC_EXIT_OK || errlen > 0);
    FUZZ_CHECK(c.ignored == s.forged);
    if (rc == USHC_EXIT_OK) {
        FUZZ_CHECK(s.have_req && s.last >= 0);
        size_t at = 0;
        for (int i = 0; i <= s.last; i++) {
            FUZZ_CHECK(s.have[i] && at + s.len[i] <= outlen);
            FUZZ_CHECK(memcmp(out + at, s.data[i], s.len[i]) == 0);
            at += s.len[i];
        }
        FUZZ_CHECK(at == outlen);
    }
    free(out);
    free(errs);
    return 0;
}
