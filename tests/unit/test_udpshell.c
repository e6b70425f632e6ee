// LINK: uapi/udpshell.c
/* tests/unit/test_udpshell.c: the UDP shell's header parser and builder,
 * and the reply chunker, checked by reassembling what it sends. */
#include "test.h"
#include <stdlib.h>
#include "uapi/byteorder.h"
#include "uapi/udpshell.h"

static size_t mk(uint8_t *d, uint32_t magic, uint32_t seq, uint16_t chunk,
                 uint16_t flags, uint16_t len, uint16_t rsv, const char *payload,
                 size_t plen)
{
    put_be32(d, magic);
    put_be32(d + 4, seq);
    put_be16(d + 8, chunk);
    put_be16(d + 10, flags);
    put_be16(d + 12, len);
    put_be16(d + 14, rsv);
    memcpy(d + 16, payload, plen);
    return 16 + plen;
}

TEST(ushp_parse_good)
{
    uint8_t d[64];
    size_t n = mk(d, USHP_MAGIC, 0xdeadbeef, 0, 1, 7, 0, "version", 7);
    struct ushp_hdr h;
    const uint8_t *pl = NULL;
    CHECK_EQ(ushp_parse(d, n, &h, &pl), 0);
    CHECK_EQ(h.magic, USHP_MAGIC);
    CHECK_EQ(h.seq, 0xdeadbeef);
    CHECK_EQ(h.chunk, 0);
    CHECK_EQ(h.flags, USHP_FLAG_LAST);
    CHECK_EQ(h.len, 7);
    CHECK(pl == d + 16);
    CHECK(memcmp(pl, "version", 7) == 0);
    /* The magic is "NOSH" in ASCII on the wire. */
    CHECK(memcmp(d, "NOSH", 4) == 0);
}

TEST(ushp_parse_empty_payload)
{
    uint8_t d[16];
    size_t n = mk(d, USHP_MAGIC, 5, 3, 0, 0, 0, "", 0);
    struct ushp_hdr h;
    const uint8_t *pl = NULL;
    CHECK_EQ(ushp_parse(d, n, &h, &pl), 0);
    CHECK_EQ(h.len, 0);
    CHECK_EQ(h.chunk, 3);
}

TEST(ushp_parse_truncated_every_length)
{
    uint8_t d[64];
    size_t n = mk(d, USHP_MAGIC, 1, 0, 1, 4, 0, "help", 4);
    struct ushp_hdr h;
    const uint8_t *pl;
    for (size_t len = 0; len < USHP_HDR_LEN; len++) {
        /* A copy of exactly len bytes on the heap: ASan catches any read past it. */
        uint8_t *c = malloc(len ? len : 1);
        memcpy(c, d, len);
        CHECK_EQ(ushp_parse(c, len, &h, &pl), USHP_ESHORT);
        free(c);
    }
    /* Header whole but payload cut: the length field is beyond the datagram. */
    for (size_t len = USHP_HDR_LEN; len < n; len++) {
        uint8_t *c = malloc(len);
        memcpy(c, d, len);
        CHECK_EQ(ushp_parse(c, len, &h, &pl), USHP_ELEN);
        free(c);
    }
}

TEST(ushp_parse_each_malformed_kind)
{
    uint8_t d[600];
    struct ushp_hdr h;
    const uint8_t *pl;
    size_t n;

    n = mk(d, 0x4E4F5349, 1, 0, 1, 4, 0, "help", 4);
    CHECK_EQ(ushp_parse(d, n, &h, &pl), USHP_EMAGIC);
    n = mk(d, USHP_MAGIC, 1, 0, 1, 5, 0, "help", 4);           /* len 5, 4 there */
    CHECK_EQ(ushp_parse(d, n, &h, &pl), USHP_ELEN);
    n = mk(d, USHP_MAGIC, 1, 0, 1, 0xffff, 0, "help", 4);
    CHECK_EQ(ushp_parse(d, n, &h, &pl), USHP_ELEN);
    n = mk(d, USHP_MAGIC, 1, 0, 1, 3, 0, "help", 4);           /* trailing byte */
    CHECK_EQ(ushp_parse(d, n, &h, &pl), USHP_ELEN);
    n = mk(d, USHP_MAGIC, 1, 0, 1, 4, 1, "help", 4);
    CHECK_EQ(ushp_parse(d, n, &h, &pl), USHP_ERESERVED);
    n = mk(d, USHP_MAGIC, 1, 0, 1, 4, 0x8000, "help", 4);
    CHECK_EQ(ushp_parse(d, n, &h, &pl), USHP_ERESERVED);

    char big[300];
    memset(big, 'a', sizeof big);
    n = mk(d, USHP_MAGIC, 1, 0, 1, 255, 0, big, 255);
    CHECK_EQ(ushp_parse(d, n, &h, &pl), 0);                  /* 255: the limit */
    n = mk(d, USHP_MAGIC, 1, 0, 1, 256, 0, big, 256);
    CHECK_EQ(ushp_parse(d, n, &h, &pl), USHP_ETOOLONG);
    /* A reply may carry up to 1400. */
    CHECK_EQ(ushp_parse_reply(d, n, &h, &pl), 0);

    for (int r = -USHP_NREASONS; r <= USHP_ESHORT; r++)
        CHECK(strcmp(ushp_strerror(r), "unknown error") != 0);
    CHECK(strstr(ushp_strerror(USHP_ETOOLONG), "255") != NULL);
    CHECK(strstr(ushp_strerror(USHP_ETOOLONG), "1400") != NULL);
}

TEST(ushp_build_round_trip)
{
    uint8_t d[USHP_DGRAM_MAX];
    size_t n = ushp_build(d, sizeof d, 42, 7, true, "abc", 3);
    CHECK_EQ(n, 19);
    struct ushp_hdr h;
    const uint8_t *pl;
    CHECK_EQ(ushp_parse(d, n, &h, &pl), 0);
    CHECK_EQ(h.seq, 42);
    CHECK_EQ(h.chunk, 7);
    CHECK_EQ(h.flags, USHP_FLAG_LAST);
    CHECK(memcmp(pl, "abc", 3) == 0);
    CHECK_EQ(ushp_build(d, 18, 42, 7, false, "abc", 3), 0);     /* cap too small */
    CHECK_EQ(ushp_build(d, sizeof d, 1, 0, false, d, USHP_CHUNK_MAX + 1), 0);
    n = ushp_build(d, sizeof d, 1, 0, false, NULL, 0);
    CHECK_EQ(n, 16);
    CHECK_EQ(ushp_parse(d, n, &h, &pl), 0);
    CHECK_EQ(h.flags, 0);
}

/* ---- the chunker ---- */

struct capture {
    uint8_t *data;            /* reassembled by chunk index */
    size_t cap;
    int chunks, lasts, bad;
    int max_index, last_index;
    size_t lens[512];
    uint32_t seq;
    uint16_t id;              /* every chunk must carry it (0: not checked) */
};

static void cap_send(void *ctx, const void *dgram, size_t len)
{
    struct capture *c = ctx;
    struct ushp_hdr h;
    const uint8_t *pl;
    /* In order, nothing after the last, and every chunk says it is a
     * reply: a shell that receives it must not take it for a request. */
    if (ushp_parse_reply(dgram, len, &h, &pl) != 0 || h.seq != c->seq ||
        h.chunk != c->chunks || c->lasts || !(h.flags & USHP_FLAG_REPLY) ||
        (c->id && h.id != c->id)) {
        c->bad++;
        return;
    }
    memcpy(c->data + (size_t)h.chunk * USHP_CHUNK_MAX, pl, h.len);
    if (h.chunk < 512)
        c->lens[h.chunk] = h.len;
    c->max_index = h.chunk;
    if (h.flags & USHP_FLAG_LAST) {
        c->lasts++;
        c->last_index = h.chunk;
    }
    c->chunks++;
}

/* Print n bytes of a known pattern in uneven pieces, then check the
 * reassembly. Returns the capture for further checks. */
static void run_chunker(size_t n, struct capture *cap)
{
    static char src[100000];
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (char)('A' + (i * 7 + i / 13) % 26);
    memset(cap, 0, sizeof *cap);
    cap->cap = n + USHP_CHUNK_MAX;
    cap->data = calloc(1, cap->cap);
    cap->seq = 0x12345678;
    cap->id = 0x1d05;
    cap->last_index = -1;

    struct ushp_chunker ch;
    ushp_chunker_init(&ch, cap->seq, 0x1d05, cap_send, cap);
    size_t off = 0, step = 1;
    while (off < n) {
        size_t k = step < n - off ? step : n - off;
        ushp_chunker_write(&ch, src + off, k);
        off += k;
        step = step * 3 % 2011 + 1;            /* 1, 4, 13, ... uneven */
    }
    ushp_chunker_finish(&ch);
    ushp_chunker_write(&ch, "late", 4);          /* ignored after finish */
    ushp_chunker_finish(&ch);                    /* idempotent */
    CHECK_EQ(cap->bad, 0);
    CHECK_EQ(cap->lasts, 1);
    CHECK_EQ(cap->last_index, cap->chunks - 1);
    CHECK(memcmp(cap->data, src, n) == 0);
    CHECK_EQ(ch.total, n);
    CHECK(!ch.truncated);
}

TEST(ushp_chunker_empty)
{
    struct capture c;
    run_chunker(0, &c);
    CHECK_EQ(c.chunks, 1);
    CHECK_EQ(c.lens[0], 0);
    free(c.data);
}

TEST(ushp_chunker_one_byte)
{
    struct capture c;
    run_chunker(1, &c);
    CHECK_EQ(c.chunks, 1);
    CHECK_EQ(c.lens[0], 1);
    free(c.data);
}

TEST(ushp_chunker_exactly_one_chunk)
{
    struct capture c;
    run_chunker(1400, &c);
    /* Documented: a full chunk goes out when it fills, so the last is empty. */
    CHECK_EQ(c.chunks, 2);
    CHECK_EQ(c.lens[0], 1400);
    CHECK_EQ(c.lens[1], 0);
    free(c.data);
}

TEST(ushp_chunker_1401)
{
    struct capture c;
    run_chunker(1401, &c);
    CHECK_EQ(c.chunks, 2);
    CHECK_EQ(c.lens[0], 1400);
    CHECK_EQ(c.lens[1], 1);
    free(c.data);
}

TEST(ushp_chunker_100000)
{
    struct capture c;
    run_chunker(100000, &c);
    CHECK_EQ(c.chunks, 100000 / 1400 + 1);      /* 71 full + 600 bytes */
    for (int i = 0; i < c.chunks - 1; i++)
        CHECK_EQ(c.lens[i], 1400);
    CHECK_EQ(c.lens[c.chunks - 1], 100000 % 1400);
    free(c.data);
}

TEST(ushp_chunker_many_small_writes)
{
    struct capture c;
    memset(&c, 0, sizeof c);
    c.cap = 200000;
    c.data = calloc(1, c.cap);
    c.seq = 9;
    struct ushp_chunker ch;
    ushp_chunker_init(&ch, 9, 1, cap_send, &c);
    for (int i = 0; i < 10000; i++) {
        char line[24];
        snprintf(line, sizeof line, "line %05d\n", i);
        ushp_chunker_write(&ch, line, 11);       /* 11 bytes each */
    }
    ushp_chunker_finish(&ch);
    CHECK_EQ(c.bad, 0);
    CHECK_EQ(ch.total, 110000);
    char want[16];
    snprintf(want, sizeof want, "line %05d\n", 9999);
    CHECK(memcmp(c.data + 110000 - 11, want, 11) == 0);
    CHECK(memcmp(c.data, "line 00000\nline 00001\n", 22) == 0);
    free(c.data);
}

static int count_only;
static void count_send(void *ctx, const void *dgram, size_t len)
{
    struct ushp_hdr h;
    const uint8_t *pl;
    if (ushp_parse_reply(dgram, len, &h, &pl) == 0 && (h.flags & USHP_FLAG_LAST))
        *(int *)ctx = h.chunk;
    count_only++;
}

TEST(ushp_chunker_index_space_exhausted)
{
    /* 65536 chunks is the most a reply can have: more output is cut off and
     * the last chunk keeps index 65535. */
    static char block[USHP_CHUNK_MAX];
    memset(block, 'x', sizeof block);
    int last = -1;
    count_only = 0;
    struct ushp_chunker ch;
    ushp_chunker_init(&ch, 1, 1, count_send, &last);
    for (int i = 0; i < 65537; i++)
        ushp_chunker_write(&ch, block, sizeof block);
    ushp_chunker_finish(&ch);
    CHECK(ch.truncated);
    CHECK_EQ(last, 65535);
    CHECK_EQ(count_only, 65536);
}

/* ushp_is_reply: a datagram that says it is a reply (magic and the flag),
 * whatever else it holds; anything shorter than a header, with another
 * magic or without the flag is not. */
TEST(ushp_is_reply_reads_magic_and_flag_only)
{
    uint8_t d[64];
    size_t n = mk(d, USHP_MAGIC, 1, 0, USHP_FLAG_LAST | USHP_FLAG_REPLY, 2, 0, "ok", 2);
    CHECK(ushp_is_reply(d, n));
    CHECK(ushp_is_reply(d, USHP_HDR_LEN));           /* len disagrees: still a reply */
    CHECK(!ushp_is_reply(d, USHP_HDR_LEN - 1));
    n = mk(d, USHP_MAGIC, 1, 0, USHP_FLAG_LAST, 2, 0, "ok", 2);
    CHECK(!ushp_is_reply(d, n));
    n = mk(d, USHP_MAGIC ^ 1, 1, 0, USHP_FLAG_REPLY, 2, 0, "ok", 2);
    CHECK(!ushp_is_reply(d, n));
}

/* The reply id: the chunker writes it into every chunk; a reply parses
 * with any id, a request only with 0 there (its reserved field). */
TEST(ushp_reply_id_in_every_chunk_and_never_in_a_request)
{
    struct capture c;
    run_chunker(5000, &c);                     /* run_chunker checks the id */
    CHECK_EQ(c.chunks, 4);
    free(c.data);
    uint8_t d[64];
    struct ushp_hdr h;
    const uint8_t *pl;
    size_t n = mk(d, USHP_MAGIC, 1, 0, USHP_FLAG_LAST | USHP_FLAG_REPLY, 2, 0xbeef, "ok", 2);
    CHECK_EQ(ushp_parse_reply(d, n, &h, &pl), 0);
    CHECK_EQ(h.id, 0xbeef);
    CHECK_EQ(ushp_parse(d, n, &h, &pl), USHP_ERESERVED);
}
