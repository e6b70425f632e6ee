// LINK: uapi/profile_stream.c uapi/profile_stream_meta.c
/* tests/fuzz/fuzz_profile_stream.c: the profile stream's parsers
 * (uapi/profile_stream.c uapi/profile_stream_meta.c), which sonde-prof runs on whatever arrives on
 * its UDP port.
 *
 * Invariants: a refusal is one of the PSTR_E* reasons and hands out no
 * item; a datagram that parses has items within the format's ranges, and
 * encoded again with the encoder it is the same bytes, exactly (the format
 * has one spelling of each datagram, off-CPU records' reasons and wakers
 * included), its tag (unchecked here: fuzz_profile_stream_tag.c) and tag
 * flag aside; but for a BATCH's shared tails: a sender may share fewer
 * frames than it could, the encoder always shares all it can. So a BATCH
 * encoded again is no longer, reads back as the same records, and is
 * its own encoding (the encoder's spelling is one). */
#include <string.h>
#include "fuzz.h"
#include "uapi/profile_stream.h"

static struct pstr_writer re;
static int items;
/* A BATCH's records as the input spelled them: at most one per 8 bytes. */
static struct pstr_record recs[PSTR_DGRAM_MAX / PSTR_REC_FIXED];
static int nrecs;

static void take_rec(void *ctx, const struct pstr_record *r)
{
    /* Frames: 1 or more, but none for a trace event other than a sample. */
    FUZZ_CHECK(r->depth <= PSTR_FRAMES && !(r->flags & ~PSTR_REC_TICK));
    FUZZ_CHECK(r->kind == PSTR_KIND_TRACE ? (r->depth >= 1) == (r->tev == PSTR_TEV_SAMPLE)
                                          : r->depth >= 1);
    FUZZ_CHECK(r->kind <= PSTR_KIND_MAX && (r->kind != PSTR_KIND_CPU || r->weight == 1));
    /* An off-CPU part: within its ranges, a waker only for blocked time. */
    FUZZ_CHECK(r->why <= PSTR_WHY_MAX && r->wdepth <= PSTR_FRAMES &&
               strlen(r->name) <= PSTR_NAME_MAX && r->waker >= PSTR_WAKER_NONE);
    FUZZ_CHECK(!r->why || r->kind == PSTR_KIND_OFFCPU);
    FUZZ_CHECK(pstr_why_blocked(r->why) || (r->wdepth == 0 && r->waker == PSTR_WAKER_NONE));
    /* A lock part: only on a lock record, which always has one. */
    FUZZ_CHECK(r->kind == PSTR_KIND_LOCK ?
               r->waits >= 1 && r->lkind >= PSTR_LOCK_SPIN && r->lkind <= PSTR_LOCK_MAX && !r->why :
               r->waits == 0 && r->lkind == 0);
    /* A trace part: only on a trace record, which always has one. */
    FUZZ_CHECK(r->kind == PSTR_KIND_TRACE ?
               r->tev >= PSTR_TEV_SWITCH && r->tev <= PSTR_TEV_MAX && r->tvec <= PSTR_VEC_MAX &&
               !r->why :
               !r->tev && !r->targ && !r->tother && !r->tvec && !r->twcpu && !r->tdur);
    FUZZ_CHECK(pstr_add_record(&re, r));
    FUZZ_CHECK(nrecs < (int)(sizeof recs / sizeof recs[0]));
    recs[nrecs++] = *r;
    items++;
}

/* The records of BATCH d (len bytes), the same as recs[] in order. */
static int at_rec;

static void same_rec(void *ctx, const struct pstr_record *r)
{
    const struct pstr_record *w = &recs[at_rec++];
    FUZZ_CHECK(r->pid == w->pid && r->depth == w->depth && r->flags == w->flags &&
               r->kind == w->kind && r->weight == w->weight && r->size == w->size &&
               r->why == w->why && r->wdepth == w->wdepth && r->waker == w->waker &&
               r->waits == w->waits && r->lkind == w->lkind && r->tev == w->tev &&
               r->targ == w->targ && r->tother == w->tother && r->tvec == w->tvec &&
               r->twcpu == w->twcpu && r->tdur == w->tdur &&
               strcmp(r->name, w->name) == 0 &&
               memcmp(r->frames, w->frames, sizeof r->frames) == 0 &&
               memcmp(r->wframes, w->wframes, sizeof r->wframes) == 0);
}

static void same_batch(const uint8_t *d, size_t len)
{
    struct pstr_hdr h;
    struct pstr_batch b;
    FUZZ_CHECK(pstr_parse(d, len, &h) == 0);
    at_rec = 0;
    FUZZ_CHECK(pstr_batch_parse(&h, &b, same_rec, 0) == 0 && at_rec == nrecs);
}

static void take_task(void *ctx, uint32_t pid, const char *name)
{
    size_t n = strlen(name);
    FUZZ_CHECK(n >= 1 && n <= PSTR_TASK_MAX);
    FUZZ_CHECK(pstr_add_task(&re, pid, name));
    items++;
}

static void take_cpu(void *ctx, const struct pstr_end_cpu *c)
{
    FUZZ_CHECK(pstr_add_end_cpu(&re, c));
    items++;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    /* A heap copy of exactly n bytes: ASan sees a read past it. */
    uint8_t *in = malloc(n ? n : 1);
    FUZZ_CHECK(in);
    memcpy(in, d, n);
    struct pstr_hdr h;
    int rc = pstr_parse(in, n, &h);
    if (rc != 0) {
        FUZZ_CHECK(rc < 0 && rc >= -PSTR_NREASONS);
        free(in);
        return 0;
    }
    size_t body = n - (h.tagged ? PSTR_TAG_LEN : 0);
    FUZZ_CHECK(h.len + PSTR_HDR_LEN == body && h.payload == in + PSTR_HDR_LEN);
    FUZZ_CHECK(h.tagged == !!(in[28] & PSTR_FLAG_TAGGED));
    pstr_begin(&re, h.type, h.cpu, h.stream, h.seq, h.t_ns);
    items = nrecs = 0;
    if (h.type == PSTR_BATCH) {
        struct pstr_batch b;
        /* The head goes in before the records arrive; fixed after. */
        struct pstr_batch z = { 0 };
        pstr_batch_head(&re, &z);
        rc = pstr_batch_parse(&h, &b, take_rec, 0);
        if (rc == 0) {
            FUZZ_CHECK(b.drops <= b.drops_total);
            struct pstr_writer head;
            pstr_begin(&head, h.type, h.cpu, h.stream, h.seq, h.t_ns);
            pstr_batch_head(&head, &b);
            memcpy(re.buf + PSTR_HDR_LEN, head.buf + PSTR_HDR_LEN, PSTR_BATCH_HDR);
        }
    } else if (h.type == PSTR_META) {
        struct pstr_meta m;
        /* The head must precede the tasks: parse once for it, then again. */
        rc = pstr_meta_parse(&h, &m, 0, 0);
        if (rc == 0) {
            FUZZ_CHECK(strlen(m.build_id) == PSTR_BUILD_ID_HEX && m.cpus >= 1);
            size_t sl = strlen(m.source);
            FUZZ_CHECK(sl >= 1 && sl <= PSTR_SOURCE_MAX);
            pstr_meta_head(&re, &m);
            FUZZ_CHECK(pstr_meta_parse(&h, &m, take_task, 0) == 0);
        }
    } else {
        uint8_t reason = 0;
        rc = pstr_end_parse(&h, &reason, 0, 0);
        if (rc == 0) {
            FUZZ_CHECK(reason >= PSTR_END_STOPPED && reason <= PSTR_END_ELAPSED);
            pstr_end_head(&re, reason);
            FUZZ_CHECK(pstr_end_parse(&h, &reason, take_cpu, 0) == 0);
        }
    }
    if (rc != 0) {
        FUZZ_CHECK(rc < 0 && rc >= -PSTR_NREASONS && items == 0);
        free(in);
        return 0;
    }
    FUZZ_CHECK(items == h.count);
    size_t len = pstr_finish(&re);
    if (h.tagged)
        re.buf[28] |= PSTR_FLAG_TAGGED;     /* pstr_seal's, not the encoder's */
    if (h.type != PSTR_BATCH) {
        FUZZ_CHECK(len == body && memcmp(re.buf, in, body) == 0);
        free(in);
        return 0;
    }
    /* The header and the batch head as they came; the records no longer,
     * the same once read, and spelled the encoder's one way. */
    FUZZ_CHECK(len <= body && memcmp(re.buf, in, 24) == 0 && memcmp(re.buf + 26, in + 26, 2) == 0 &&
               memcmp(re.buf + PSTR_HDR_LEN, in + PSTR_HDR_LEN, PSTR_BATCH_HDR) == 0);
    same_batch(re.buf, len);
    static uint8_t once[PSTR_DGRAM_MAX];
    memcpy(once, re.buf, len);
    pstr_begin(&re, h.type, h.cpu, h.stream, h.seq, h.t_ns);
    pstr_batch_head(&re, &(struct pstr_batch){ 0 });
    memcpy(re.buf + PSTR_HDR_LEN, once + PSTR_HDR_LEN, PSTR_BATCH_HDR);
    for (int i = 0; i < nrecs; i++)
        FUZZ_CHECK(pstr_add_record(&re, &recs[i]));
    FUZZ_CHECK(pstr_finish(&re) == len && memcmp(re.buf, once, len) == 0);
    free(in);
    return 0;
}
