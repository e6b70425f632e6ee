// LINK: uapi/trace_raw.c
/* tests/fuzz/fuzz_trace_raw.c: the raw trace's parser (uapi/trace_raw.c),
 * which sonde-prof record --trace runs on whatever a kernel hands it over
 * a lossy UDP shell.
 *
 * Invariants: a trace that parses has as many events as its events=,
 * each within the grammar's ranges (CPUs below cpus=, idle pid 0 alone
 * named <idle>, an irq's exit not before its entry), in time order; and
 * written back in the grammar's canonical form it parses again to the
 * same header and the same events, in order. A refusal says why,
 * terminated in its buffer. */
#include <stdarg.h>
#include <string.h>
#include "fuzz.h"
#include "uapi/trace_raw.h"

#define MAX_EVENTS 4096

struct seen {
    struct traw_event e[MAX_EVENTS];
    size_t n;
    uint32_t cpus;
    uint64_t last;
};

static void check_name(const char *s, size_t max)
{
    size_t n = strnlen(s, max + 1);
    FUZZ_CHECK(n >= 1 && n <= max);
    for (size_t i = 0; i < n; i++)
        FUZZ_CHECK(s[i] >= '!' && s[i] <= '~' && s[i] != ';');
}

static int take(void *ctx, const struct traw_event *e, unsigned line, char *err, size_t cap)
{
    struct seen *s = ctx;
    FUZZ_CHECK(e->te_type >= TRAW_SWITCH && e->te_type <= TRAW_SAMPLE);
    FUZZ_CHECK(e->te_cpu < s->cpus && e->te_ns >= s->last);
    s->last = e->te_ns;
    FUZZ_CHECK(e->te_pid <= TRAW_PID_MAX && e->te_pid2 <= TRAW_PID_MAX);
    if (e->te_type != TRAW_IRQ) {
        check_name(e->te_task, TRAW_TASK_MAX);
        FUZZ_CHECK((e->te_pid == 0) == (strcmp(e->te_task, TRAW_IDLE_TASK) == 0));
    }
    if (e->te_type == TRAW_SWITCH || e->te_type == TRAW_WAKE) {
        check_name(e->te_task2, TRAW_TASK_MAX);
        FUZZ_CHECK((e->te_pid2 == 0) == (strcmp(e->te_task2, TRAW_IDLE_TASK) == 0));
    }
    if (e->te_type == TRAW_SWITCH)
        FUZZ_CHECK(traw_left_name(e->te_left) && (e->te_left == TRAW_LEFT_NONE) == (e->te_pid == 0));
    if (e->te_type == TRAW_WAKE)
        FUZZ_CHECK(e->te_wcpu < s->cpus);
    if (e->te_type == TRAW_IRQ || e->te_in_irq)
        FUZZ_CHECK(traw_class_name(e->te_class) && e->te_vec <= TRAW_VEC_MAX);
    if (e->te_type == TRAW_IRQ)
        FUZZ_CHECK(e->te_end >= e->te_ns);
    if (e->te_type == TRAW_SAMPLE)
        FUZZ_CHECK(e->te_depth >= 1 && e->te_depth <= TRAW_FRAMES);
    if (s->n < MAX_EVENTS)
        s->e[s->n] = *e;
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

/* An event in the grammar's canonical form. */
static void put_event(const struct traw_event *e)
{
    static const char type[] = "?SWIP";
    put("%c %llu %u", type[e->te_type], (unsigned long long)e->te_ns, e->te_cpu);
    if (e->te_type == TRAW_IRQ) {
        put(" %llu %u %s", (unsigned long long)e->te_end, e->te_vec, traw_class_name(e->te_class));
        if (e->te_irq[0])
            put(" %s", e->te_irq);
        put(" %u\n", e->te_pid);
        return;
    }
    put(" %u %s", e->te_pid, e->te_task);
    if (e->te_type == TRAW_SWITCH) {
        put(" %s", traw_left_name(e->te_left));
        if (e->te_name[0])
            put(":%s", e->te_name);
        put(" %u %s", e->te_pid2, e->te_task2);
    } else if (e->te_type == TRAW_WAKE) {
        put(" %u %s %u", e->te_pid2, e->te_task2, e->te_wcpu);
        if (e->te_in_irq) {
            put(" irq=%u:%s", e->te_vec, traw_class_name(e->te_class));
            if (e->te_irq[0])
                put(":%s", e->te_irq);
        }
    } else {
        for (unsigned k = 0; k < e->te_depth; k++)
            put(" %llx", (unsigned long long)e->te_frames[k]);
    }
    put("\n");
}

/* Field by field: the struct's padding is no field. */
static int same_event(const struct traw_event *a, const struct traw_event *b)
{
    return a->te_type == b->te_type && a->te_cpu == b->te_cpu && a->te_ns == b->te_ns &&
           a->te_pid == b->te_pid && strcmp(a->te_task, b->te_task) == 0 &&
           a->te_pid2 == b->te_pid2 && strcmp(a->te_task2, b->te_task2) == 0 &&
           a->te_left == b->te_left && strcmp(a->te_name, b->te_name) == 0 &&
           a->te_wcpu == b->te_wcpu && a->te_in_irq == b->te_in_irq &&
           a->te_end == b->te_end && a->te_vec == b->te_vec && a->te_class == b->te_class &&
           strcmp(a->te_irq, b->te_irq) == 0 && a->te_depth == b->te_depth &&
           memcmp(a->te_frames, b->te_frames, a->te_depth * sizeof a->te_frames[0]) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    static struct seen a, b;
    static struct traw_header ha, hb;
    char err[TRAW_ERR_MAX];
    /* A heap copy of exactly n bytes: ASan sees a read past it. */
    char *in = malloc(n ? n : 1);
    FUZZ_CHECK(in);
    memcpy(in, d, n);
    /* The header comes first: the callback checks CPUs against it. */
    a.n = 0;
    a.last = 0;
    a.cpus = TRAW_CPUS;
    memset(err, 'x', sizeof err);
    int rc = traw_parse(in, n, &ha, take, &a, err, sizeof err);
    free(in);
    if (rc != 0) {
        FUZZ_CHECK(rc == -1 && memchr(err, 0, sizeof err) && strlen(err) > 0);
        return 0;
    }
    FUZZ_CHECK(a.n == ha.th_events);
    FUZZ_CHECK(strlen(ha.th_build_id) == TRAW_BUILD_ID_HEX);
    FUZZ_CHECK(ha.th_cpus >= 1 && ha.th_cpus <= TRAW_CPUS && ha.th_ms >= 1 &&
               ha.th_ms <= TRAW_MS_MAX);
    for (size_t i = 0; i < a.n && i < MAX_EVENTS; i++)
        FUZZ_CHECK(a.e[i].te_cpu < ha.th_cpus);
    if (a.n > MAX_EVENTS)
        return 0;
    tlen = 0;
    put("# sonde trace build-id=%s cpus=%u ms=%u events=%llu dropped=", ha.th_build_id,
        ha.th_cpus, ha.th_ms, (unsigned long long)ha.th_events);
    for (uint32_t i = 0; i < ha.th_cpus; i++)
        put("%s%u", i ? "," : "", ha.th_dropped[i]);
    put("\n");
    for (size_t i = 0; i < a.n; i++)
        put_event(&a.e[i]);
    b.n = 0;
    b.last = 0;
    b.cpus = TRAW_CPUS;
    rc = traw_parse(text, tlen, &hb, take, &b, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "canonical form refused: %s\n%.*s", err, (int)tlen, text);
    FUZZ_CHECK(rc == 0);
    FUZZ_CHECK(strcmp(ha.th_build_id, hb.th_build_id) == 0 && ha.th_cpus == hb.th_cpus &&
               ha.th_ms == hb.th_ms && ha.th_events == hb.th_events &&
               memcmp(ha.th_dropped, hb.th_dropped, sizeof ha.th_dropped) == 0);
    FUZZ_CHECK(b.n == a.n);
    for (size_t i = 0; i < a.n; i++)
        FUZZ_CHECK(same_event(&a.e[i], &b.e[i]));
    return 0;
}
