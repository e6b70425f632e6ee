// LINK: uapi/profile_raw.c
/* tests/fuzz/fuzz_profile_raw.c: the raw profile parser
 * (uapi/profile_raw.c), which sonde-prof runs on whatever a kernel, a
 * file or a network peer hands it.
 *
 * Invariants: a profile that parses has chains whose counts add up to the
 * header's samples=, each within the grammar's ranges, a CPU chain
 * weighing its count and any other kind's carrying a weight; and written back
 * in the grammar's canonical form it parses again to the same header and
 * the same chains, in order. A refusal says why, terminated in its
 * buffer. */
#include <stdarg.h>
#include <string.h>
#include "fuzz.h"
#include "uapi/profile_raw.h"

#define MAX_CHAINS 4096

struct seen {
    struct praw_chain c[MAX_CHAINS];
    size_t n;
    uint64_t sum;
};

static int take(void *ctx, const struct praw_chain *c, unsigned line, char *err, size_t cap)
{
    struct seen *s = ctx;
    FUZZ_CHECK(c->pc_count >= 1 && c->pc_pid <= PRAW_PID_MAX && c->pc_cpu <= PRAW_CPU_MAX);
    FUZZ_CHECK(c->pc_depth >= 1 && c->pc_depth <= PRAW_FRAMES);
    size_t tl = strnlen(c->pc_task, sizeof c->pc_task);
    FUZZ_CHECK(tl >= 1 && tl <= PRAW_TASK_MAX);
    for (size_t i = 0; i < tl; i++)
        FUZZ_CHECK(c->pc_task[i] >= '!' && c->pc_task[i] <= '~' && c->pc_task[i] != ';');
    s->sum += c->pc_count;
    if (s->n < MAX_CHAINS)
        s->c[s->n] = *c;
    s->n++;
    return 0;
}

static char text[1 << 20];
static size_t tlen;

static void put(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(text + tlen, sizeof text - tlen, fmt, ap);
    va_end(ap);
    FUZZ_CHECK(k >= 0 && (size_t)k < sizeof text - tlen);
    tlen += (size_t)k;
}

static int same_chain(const struct praw_chain *a, const struct praw_chain *b)
{
    if (a->pc_count != b->pc_count || a->pc_weight != b->pc_weight ||
        a->pc_pid != b->pc_pid || a->pc_cpu != b->pc_cpu ||
        a->pc_objects != b->pc_objects ||
        a->pc_depth != b->pc_depth || strcmp(a->pc_task, b->pc_task) != 0)
        return 0;
    if (a->pc_why != b->pc_why || strcmp(a->pc_name, b->pc_name) != 0 ||
        a->pc_waker != b->pc_waker || a->pc_wdepth != b->pc_wdepth ||
        strcmp(a->pc_wtask, b->pc_wtask) != 0 ||
        memcmp(a->pc_wframes, b->pc_wframes, a->pc_wdepth * sizeof a->pc_wframes[0]) != 0)
        return 0;
    return memcmp(a->pc_frames, b->pc_frames, a->pc_depth * sizeof a->pc_frames[0]) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    static struct seen a, b;
    struct praw_header ha, hb;
    char err[PRAW_ERR_MAX];
    /* A heap copy of exactly n bytes: ASan sees a read past it. */
    char *in = malloc(n ? n : 1);
    FUZZ_CHECK(in);
    memcpy(in, d, n);
    a.n = 0;
    a.sum = 0;
    memset(err, 'x', sizeof err);
    int rc = praw_parse(in, n, &ha, take, &a, err, sizeof err);
    free(in);
    if (rc != 0) {
        FUZZ_CHECK(rc == -1 && memchr(err, 0, sizeof err) && strlen(err) > 0);
        return 0;
    }
    FUZZ_CHECK(a.sum == ha.ph_samples);
    FUZZ_CHECK(strlen(ha.ph_build_id) == PRAW_BUILD_ID_HEX);
    FUZZ_CHECK(ha.ph_cpus <= PRAW_CPU_MAX + 1);
    if (a.n > MAX_CHAINS)
        return 0;
    tlen = 0;
    FUZZ_CHECK(praw_kind_name(ha.ph_kind) != NULL);
    put("# sonde raw build-id=%s source=%s samples=%llu dropped=%llu cpus=%u ms=%u",
        ha.ph_build_id, ha.ph_source, (unsigned long long)ha.ph_samples,
        (unsigned long long)ha.ph_dropped, ha.ph_cpus, ha.ph_ms);
    if (ha.ph_kind != PRAW_KIND_CPU)
        put(" kind=%s", praw_kind_name(ha.ph_kind));
    put("\n");
    for (size_t i = 0; i < a.n; i++) {
        const struct praw_chain *c = &a.c[i];
        /* A CPU chain weighs its count; every other kind's has a weight. */
        FUZZ_CHECK(ha.ph_kind != PRAW_KIND_CPU ? c->pc_weight >= 1 : c->pc_weight == c->pc_count);
        put("%u", c->pc_count);
        if (ha.ph_kind != PRAW_KIND_CPU)
            put(":%llu", (unsigned long long)c->pc_weight);
        put(" %u %s %u", c->pc_pid, c->pc_task, c->pc_cpu);
        /* An off-CPU chain: its reason, its waker, and the waker's chain. */
        FUZZ_CHECK((ha.ph_kind == PRAW_KIND_OFFCPU || ha.ph_kind == PRAW_KIND_LOCK) ==
                   (c->pc_why != PRAW_WHY_NONE));
        /* A lock chain: its lock's type and name, and the waits it ended. */
        if (ha.ph_kind == PRAW_KIND_LOCK) {
            FUZZ_CHECK((c->pc_why == PRAW_WHY_SPIN || c->pc_why == PRAW_WHY_MUTEX) &&
                       c->pc_name[0] && c->pc_objects >= 1 && c->pc_wdepth == 0 &&
                       c->pc_waker == PRAW_WAKER_NONE);
            put(" lock=%s:%s waits=%llu", praw_why_name(c->pc_why), c->pc_name,
                (unsigned long long)c->pc_objects);
        }
        FUZZ_CHECK(c->pc_wdepth <= PRAW_FRAMES && (!c->pc_wdepth || c->pc_waker >= 0));
        if (c->pc_why && ha.ph_kind == PRAW_KIND_OFFCPU) {
            put(" why=%s", praw_why_name(c->pc_why));
            if (c->pc_name[0])
                put(":%s", c->pc_name);
            if (praw_why_blocked(c->pc_why))
                put(" waker=%d", c->pc_waker);
            else
                FUZZ_CHECK(c->pc_waker == PRAW_WAKER_NONE && c->pc_wdepth == 0);
            if (c->pc_wtask[0])
                put(":%s", c->pc_wtask);
        }
        for (unsigned k = 0; k < c->pc_depth; k++)
            put(" %llx", (unsigned long long)c->pc_frames[k]);
        if (c->pc_wdepth)
            put(" |");
        for (unsigned k = 0; k < c->pc_wdepth; k++)
            put(" %llx", (unsigned long long)c->pc_wframes[k]);
        put("\n");
    }
    b.n = 0;
    b.sum = 0;
    rc = praw_parse(text, tlen, &hb, take, &b, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "canonical form refused: %s\n%.*s", err, (int)tlen, text);
    FUZZ_CHECK(rc == 0);
    FUZZ_CHECK(ha.ph_kind == hb.ph_kind);
    FUZZ_CHECK(strcmp(ha.ph_build_id, hb.ph_build_id) == 0 &&
               strcmp(ha.ph_source, hb.ph_source) == 0 && ha.ph_samples == hb.ph_samples &&
               ha.ph_dropped == hb.ph_dropped && ha.ph_cpus == hb.ph_cpus && ha.ph_ms == hb.ph_ms);
    FUZZ_CHECK(b.n == a.n);
    for (size_t i = 0; i < a.n; i++)
        FUZZ_CHECK(same_chain(&a.c[i], &b.c[i]));
    return 0;
}
