// LINK: tools/common/ushell_client.c uapi/udpshell.c uapi/udpshell_auth.c lib/sha256.c
/* tests/fuzz/fuzz_ushell_client.c: sonde-sh's reply reassembly
 * (tools/common/ushell_client.c) against a shell that answers with whatever
 * datagrams the input holds (fuzz.h's length-prefixed pieces), in order,
 * then falls silent.
 *
 * Invariants: the client sends only its request (same bytes each time);
 * and when it reports success, what it wrote is exactly the payloads of
 * chunks 0..L of its sequence number, each taken from the first datagram
 * that carried that chunk, where L is the chunk flagged last, all of one
 * reply id (two runs' chunks are never mixed). */
#include <string.h>
#include "fuzz.h"
#include "tools/common/ushell_client.h"
#include "uapi/udpshell.h"

#define SEQ 1

struct shell {
    struct fuzz_cur in;
    uint64_t now;
    unsigned sends;
    uint8_t req[USHP_DGRAM_MAX];
    size_t reqlen;
};

static int fs_send(void *ctx, const void *d, size_t n)
{
    struct shell *s = ctx;
    FUZZ_CHECK(n <= sizeof s->req);
    if (s->sends++ == 0) {
        memcpy(s->req, d, n);
        s->reqlen = n;
    } else {
        FUZZ_CHECK(n == s->reqlen && memcmp(d, s->req, n) == 0);
    }
    return 0;
}

static long fs_recv(void *ctx, void *buf, size_t cap, uint64_t timeout_ms)
{
    struct shell *s = ctx;
    const uint8_t *p;
    size_t n;
    if (!fuzz_next(&s->in, &p, &n)) {
        s->now += timeout_ms;      /* silence: the whole wait passes */
        return 0;
    }
    s->now += 1;
    if (n > cap)
        n = cap;
    memcpy(buf, p, n);
    return (long)n;
}

static uint64_t fs_now(void *ctx) { return ((struct shell *)ctx)->now; }

/* The reply a correct client reassembles from these datagrams: chunks of
 * our seq, first copy wins. Returns the flagged chunk's index, or -1. */
static long model(const uint8_t *d, size_t n, const uint8_t **pl, uint16_t *len, uint8_t *have,
                  uint16_t *id)
{
    struct fuzz_cur c = { d, n };
    const uint8_t *p;
    size_t m;
    long last = -1;
    while (fuzz_next(&c, &p, &m)) {
        struct ushp_hdr h;
        const uint8_t *q;
        if (ushp_parse_reply(p, m, &h, &q) != 0 || h.seq != SEQ || have[h.chunk])
            continue;
        have[h.chunk] = 1;
        pl[h.chunk] = q;
        len[h.chunk] = h.len;
        id[h.chunk] = h.id;
        if ((h.flags & USHP_FLAG_LAST) && last < 0)
            last = h.chunk;
    }
    return last;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    static struct shell s;
    memset(&s, 0, sizeof s);
    s.in.p = d;
    s.in.n = n;
    char *out = NULL, *errs = NULL;
    size_t outlen = 0, errlen = 0;
    FILE *fo = open_memstream(&out, &outlen), *fe = open_memstream(&errs, &errlen);
    FUZZ_CHECK(fo && fe);
    struct ushc c = {
        .io = { &s, fs_send, fs_recv, fs_now },
        .seq = SEQ - 1, .timeout_ms = 3000, .peer = "fuzz", .prog = "sonde-sh",
        .out = fo, .err = fe,
    };
    int rc = ushc_run(&c, "help");
    fclose(fo);
    fclose(fe);
    FUZZ_CHECK(rc == USHC_EXIT_OK || rc == USHC_EXIT_PROTO);
    FUZZ_CHECK(s.sends >= 1 && s.sends <= 1 + USHC_RETRIES);
    FUZZ_CHECK(rc == USHC_EXIT_OK || errlen > 0);
    if (rc == USHC_EXIT_OK) {
        static const uint8_t *pl[65536];
        static uint16_t len[65536], id[65536];
        static uint8_t have[65536];
        memset(have, 0, sizeof have);
        long last = model(d, n, pl, len, have, id);
        FUZZ_CHECK(last >= 0);
        size_t at = 0;
        for (long i = 0; i <= last; i++) {
            /* One reply: every chunk written carries the same reply id. */
            FUZZ_CHECK(have[i] && at + len[i] <= outlen && id[i] == id[0]);
            FUZZ_CHECK(memcmp(out + at, pl[i], len[i]) == 0);
            at += len[i];
        }
        FUZZ_CHECK(at == outlen);
    }
    free(out);
    free(errs);
    return 0;
}
