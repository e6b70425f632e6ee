/* uapi/profile_raw.c: the strict parser of the raw profile (grammar in
 * uapi/profile_raw.h).
 *
 * Strict on purpose: the text crosses a serial line or a lossy UDP shell,
 * and a profile that silently lost a line or took a garbled address would
 * be believed. Every rule of the grammar is checked and the first broken
 * one is named with its line. No library calls, no allocation: the kernel
 * can build this file as it is.
 *
 * Wire format: prefix praw_. */
#include "uapi/profile_raw.h"
#include "uapi/rawtext.h"

/* ---- the header ------------------------------------------------------ */

/* SOURCE runs to the first " samples=". */
static int take_source(struct rawtext_cur *c, struct praw_header *h,
                       char *err, size_t cap)
{
    static const char stop[] = " samples=";
    size_t n = 0;
    for (;; n++) {
        const char *p = c->p + n;
        if (p == c->end)
            return rawtext_fail(err, cap, "no \" samples=\" after the source", 0);
        size_t k = 0;
        while (stop[k] && p + k < c->end && p[k] == stop[k])
            k++;
        if (!stop[k])
            break;
        if (*p < ' ' || *p > '~')
            return rawtext_fail(err, cap, "source has a non-printable character", 0);
    }
    if (n == 0)
        return rawtext_fail(err, cap, "source is empty", 0);
    if (n > PRAW_SOURCE_MAX)
        return rawtext_fail(err, cap, "source is longer than 63 characters", 0);
    for (size_t i = 0; i < n; i++)
        h->ph_source[i] = c->p[i];
    h->ph_source[n] = 0;
    c->p += n;
    return 0;
}

const char *praw_kind_name(unsigned kind)
{
    static const char *const names[] = { "cpu", "offcpu", "heap", "lock" };
    return kind <= PRAW_KIND_MAX ? names[kind] : 0;
}

/* " kind=KIND" at the cursor. Written only for kinds other than cpu, but
 * " kind=cpu" is read too. */
static int take_kind(struct rawtext_cur *c, struct praw_header *h, char *err, size_t cap)
{
    if (rawtext_take_lit(c, " kind=", err, cap) < 0)
        return -1;
    size_t n = rawtext_field_len(c);
    for (unsigned k = 0; k <= PRAW_KIND_MAX; k++) {
        const char *name = praw_kind_name(k);
        size_t i = 0;
        while (i < n && name[i] && c->p[i] == name[i])
            i++;
        if (i == n && !name[i]) {
            c->p += n;
            h->ph_kind = (uint8_t)k;
            return 0;
        }
    }
    return rawtext_fail(err, cap, "kind is not cpu, offcpu, heap or lock", 0);
}

int praw_parse_header(const char *s, size_t len, struct praw_header *h,
                      char *err, size_t cap)
{
    struct rawtext_cur c = { s, s + len, 0 };
    uint64_t v;
    if (rawtext_take_lit(&c, PRAW_MAGIC "build-id=", err, cap) < 0)
        return -1;
    if (rawtext_take_build_id(&c, h->ph_build_id, err, cap) < 0 ||
        rawtext_take_lit(&c, " source=", err, cap) < 0 ||
        take_source(&c, h, err, cap) < 0 ||
        rawtext_take_lit(&c, " samples=", err, cap) < 0 ||
        rawtext_take_dec(&c, UINT64_MAX, &h->ph_samples, "samples", err, cap) < 0 ||
        rawtext_take_lit(&c, " dropped=", err, cap) < 0 ||
        rawtext_take_dec(&c, UINT64_MAX, &h->ph_dropped, "dropped", err, cap) < 0 ||
        rawtext_take_lit(&c, " cpus=", err, cap) < 0 ||
        rawtext_take_dec(&c, PRAW_CPU_MAX + 1, &v, "cpus", err, cap) < 0)
        return -1;
    h->ph_cpus = (uint32_t)v;
    if (rawtext_take_lit(&c, " ms=", err, cap) < 0 ||
        rawtext_take_dec(&c, UINT32_MAX, &v, "ms", err, cap) < 0)
        return -1;
    h->ph_ms = (uint32_t)v;
    h->ph_kind = PRAW_KIND_CPU;
    if (rawtext_at(&c, " kind=") && take_kind(&c, h, err, cap) < 0)
        return -1;
    if (c.p != c.end)
        return rawtext_fail(err, cap, "unexpected text after ms=", 0);
    return 0;
}

/* ---- a chain line ---------------------------------------------------- */

static int take_task(struct rawtext_cur *c, struct praw_chain *ch,
                     char *err, size_t cap)
{
    return rawtext_take_name(c, ch->pc_task, PRAW_TASK_MAX, 0, "task", err, cap);
}

static int take_frames(struct rawtext_cur *c, struct praw_chain *ch,
                       char *err, size_t cap)
{
    return rawtext_take_addrs(c, ch->pc_frames, PRAW_FRAMES, &ch->pc_depth, 0, "pc", err, cap);
}

/* ---- an off-CPU chain's reason and waker ------------------------------ */

static const char *const praw_why_names[PRAW_WHY_MAX + 1] = {
    0, "sleep", "waitq", "mutex", "preempted", "runnable", "spin",
};

const char *praw_why_name(unsigned why)
{
    return why <= PRAW_WHY_MAX ? praw_why_names[why] : 0;
}

int praw_why_blocked(unsigned why)
{
    return why == PRAW_WHY_SLEEP || why == PRAW_WHY_WAITQ || why == PRAW_WHY_MUTEX;
}

/* NAME (a wait queue's, mutex's or spinlock's) at the cursor, after its ':'. */
static int take_wait_name(struct rawtext_cur *c, struct praw_chain *ch, const char *what,
                          char *err, size_t cap)
{
    return rawtext_take_name(c, ch->pc_name, PRAW_NAME_MAX, 1, what, err, cap);
}

/* " why=REASON[:NAME]" at the cursor. */
static int take_why(struct rawtext_cur *c, struct praw_chain *ch, char *err, size_t cap)
{
    if (rawtext_take_lit(c, " why=", err, cap) < 0)
        return -1;
    size_t n = 0;
    while (c->p + n < c->end && c->p[n] != ' ' && c->p[n] != ':')
        n++;
    ch->pc_why = PRAW_WHY_NONE;
    for (unsigned w = 1; w <= PRAW_WHY_MAX; w++) {
        const char *name = praw_why_names[w];
        size_t i = 0;
        while (i < n && name[i] && c->p[i] == name[i])
            i++;
        if (i == n && !name[i])
            ch->pc_why = (uint8_t)w;
    }
    if (ch->pc_why == PRAW_WHY_NONE)
        return rawtext_fail(err, cap, "why is not sleep, waitq, mutex, preempted, runnable or spin", 0);
    c->p += n;
    ch->pc_name[0] = 0;
    if (c->p == c->end || *c->p != ':')
        return 0;
    if (ch->pc_why != PRAW_WHY_WAITQ && ch->pc_why != PRAW_WHY_MUTEX &&
        ch->pc_why != PRAW_WHY_SPIN)
        return rawtext_fail(err, cap, "only a waitq, mutex or spin reason has a :NAME", 0);
    c->p++;
    return take_wait_name(c, ch, "the wait's name", err, cap);
}

/* " waker=-1|DEC", exactly for blocked reasons. */
static int take_waker(struct rawtext_cur *c, struct praw_chain *ch, char *err, size_t cap)
{
    ch->pc_waker = PRAW_WAKER_NONE;
    int has = rawtext_at(c, " waker=");
    if (has != praw_why_blocked(ch->pc_why))
        return rawtext_fail(err, cap, has ? "waker= on a reason that is not blocked time"
                                  : "waker= is missing (sleep, waitq and mutex have one)", 0);
    if (!has)
        return 0;
    c->p += 7;
    if (rawtext_at(c, "-1") && (c->p + 2 == c->end || c->p[2] == ' ')) {
        c->p += 2;
        return 0;
    }
    uint64_t v;
    c->stop = ':';
    int rc = rawtext_take_dec(c, PRAW_PID_MAX, &v, "waker", err, cap);
    c->stop = 0;
    if (rc < 0)
        return -1;
    ch->pc_waker = (int32_t)v;
    if (c->p == c->end || *c->p != ':')
        return 0;
    if (v == 0)
        return rawtext_fail(err, cap, "the tick (waker=0) has no task name", 0);
    c->p++;
    return rawtext_take_name(c, ch->pc_wtask, PRAW_TASK_MAX, 0, "task", err, cap);
}

/* The off-CPU part after CPU: why, waker, the task's chain, and after
 * " |" the waker's. */
static int take_off(struct rawtext_cur *c, struct praw_chain *ch, char *err, size_t cap)
{
    if (take_why(c, ch, err, cap) < 0 || take_waker(c, ch, err, cap) < 0 ||
        rawtext_take_sep(c, "the chain", err, cap) < 0 ||
        rawtext_take_addrs(c, ch->pc_frames, PRAW_FRAMES, &ch->pc_depth, 1, "the chain", err, cap) < 0)
        return -1;
    if (c->p == c->end)
        return 0;
    c->p += 2;                  /* " |" */
    if (ch->pc_waker < 0)
        return rawtext_fail(err, cap, "a waker's chain (after \" |\") with no waker", 0);
    if (rawtext_take_sep(c, "the waker's chain", err, cap) < 0)
        return -1;
    return rawtext_take_addrs(c, ch->pc_wframes, PRAW_FRAMES, &ch->pc_wdepth, 0, "the waker's chain", err, cap);
}

/* ---- a lock chain's lock and waits ------------------------------------ */

/* The part after CPU: " lock=LOCK:NAME waits=WAITS", then the holder's chain. */
static int take_lock(struct rawtext_cur *c, struct praw_chain *ch, char *err, size_t cap)
{
    if (rawtext_take_lit(c, " lock=", err, cap) < 0)
        return -1;
    if (rawtext_at(c, "spin:")) {
        ch->pc_why = PRAW_WHY_SPIN;
        c->p += 5;
    } else if (rawtext_at(c, "mutex:")) {
        ch->pc_why = PRAW_WHY_MUTEX;
        c->p += 6;
    } else {
        return rawtext_fail(err, cap, "lock is not spin:NAME or mutex:NAME", 0);
    }
    uint64_t v;
    if (take_wait_name(c, ch, "the lock's name", err, cap) < 0 ||
        rawtext_take_lit(c, " waits=", err, cap) < 0 ||
        rawtext_take_dec(c, UINT64_MAX, &v, "waits", err, cap) < 0)
        return -1;
    if (v == 0)
        return rawtext_fail(err, cap, "waits is 0 (a release charged ended at least 1 wait)", 0);
    ch->pc_objects = v;
    if (rawtext_take_sep(c, "the holder's chain", err, cap) < 0)
        return -1;
    return rawtext_take_addrs(c, ch->pc_frames, PRAW_FRAMES, &ch->pc_depth, 0, "the holder's chain", err, cap);
}

int praw_parse_chain(const char *s, size_t len, struct praw_chain *ch,
                     char *err, size_t cap)
{
    return praw_parse_chain_kind(s, len, PRAW_KIND_CPU, ch, err, cap);
}

int praw_parse_chain_kind(const char *s, size_t len, unsigned kind,
                          struct praw_chain *ch, char *err, size_t cap)
{
    struct rawtext_cur c = { s, s + len, ':' };
    uint64_t v;
    if (rawtext_take_dec(&c, PRAW_COUNT_MAX, &v, "count", err, cap) < 0)
        return -1;
    if (v == 0)
        return rawtext_fail(err, cap, "count is 0 (a chain has at least 1 sample)", 0);
    ch->pc_count = (uint32_t)v;
    ch->pc_weight = v;
    int weighed = c.p < c.end && *c.p == ':';
    if (weighed != (kind != PRAW_KIND_CPU))
        return rawtext_fail(err, cap, weighed ? "a CPU chain has no weight (count:weight)"
                                      : "weight is missing (count:weight)", 0);
    if (weighed) {
        c.p++;
        if (rawtext_take_dec(&c, UINT64_MAX, &v, "weight", err, cap) < 0)
            return -1;
        if (v == 0)
            return rawtext_fail(err, cap, "weight is 0", 0);
        ch->pc_weight = v;
    }
    ch->pc_objects = ch->pc_count;
    if (kind == PRAW_KIND_HEAP) {
        if (c.p >= c.end || *c.p != ':')
            return rawtext_fail(err, cap, "objects are missing (count:bytes:objects)", 0);
        c.p++;
        if (rawtext_take_dec(&c, UINT64_MAX, &v, "objects", err, cap) < 0)
            return -1;
        if (v == 0)
            return rawtext_fail(err, cap, "objects is 0", 0);
        ch->pc_objects = v;
    }
    c.stop = 0;
    if (rawtext_take_sep(&c, "pid", err, cap) < 0 ||
        rawtext_take_dec(&c, PRAW_PID_MAX, &v, "pid", err, cap) < 0)
        return -1;
    ch->pc_pid = (uint32_t)v;
    if (rawtext_take_sep(&c, "task", err, cap) < 0 ||
        take_task(&c, ch, err, cap) < 0 ||
        rawtext_take_sep(&c, "cpu", err, cap) < 0 ||
        rawtext_take_dec(&c, PRAW_CPU_MAX, &v, "cpu", err, cap) < 0)
        return -1;
    ch->pc_cpu = (uint32_t)v;
    ch->pc_why = PRAW_WHY_NONE;
    ch->pc_name[0] = 0;
    ch->pc_waker = PRAW_WAKER_NONE;
    ch->pc_wtask[0] = 0;
    ch->pc_wdepth = 0;
    if (kind == PRAW_KIND_OFFCPU)
        return take_off(&c, ch, err, cap);
    if (kind == PRAW_KIND_LOCK)
        return take_lock(&c, ch, err, cap);
    if (rawtext_take_sep(&c, "pc", err, cap) < 0)
        return -1;
    return take_frames(&c, ch, err, cap);
}

/* ---- the whole text -------------------------------------------------- */

int praw_parse(const char *text, size_t len, struct praw_header *h,
               praw_chain_fn fn, void *ctx, char *err, size_t cap)
{
    char why[PRAW_ERR_MAX];
    size_t pos = 0, s = 0, e = 0;
    unsigned line = 1;
    if (len == 0)
        return rawtext_fail(err, cap, "line 1: empty input (no raw header)", 0);
    if (rawtext_next_line(text, len, &pos, line, &s, &e, err, cap) < 0)
        return -1;
    if (praw_parse_header(text + s, e - s, h, why, sizeof why) < 0)
        return rawtext_fail_line(err, cap, line, why);
    uint64_t sum = 0;
    while (pos < len) {
        struct praw_chain c;
        line++;
        if (rawtext_next_line(text, len, &pos, line, &s, &e, err, cap) < 0)
            return -1;
        if (praw_parse_chain_kind(text + s, e - s, h->ph_kind, &c, why, sizeof why) < 0)
            return rawtext_fail_line(err, cap, line, why);
        sum += c.pc_count;      /* < 2^32 lines of < 2^32: cannot wrap */
        if (sum > h->ph_samples)
            return rawtext_fail_line(err, cap, line, "chain counts exceed the "
                             "header's samples=");
        int rc = fn ? fn(ctx, &c, line, err, cap) : 0;
        if (rc)
            return rc;
    }
    if (sum != h->ph_samples) {
        struct rawtext_msg m = { err, cap, 0 };
        rawtext_put(&m, "line ");
        rawtext_num(&m, line);
        rawtext_put(&m, ": chain counts add up to ");
        rawtext_num(&m, sum);
        rawtext_put(&m, " but the header says samples=");
        rawtext_num(&m, h->ph_samples);
        rawtext_put(&m, " (lines missing?)");
        return -1;
    }
    return 0;
}

uint64_t praw_source_period_ns(const char *s)
{
    if (s[0] == 'p' && s[1] == 'm' && s[2] == 'u' && s[3] == '/')
        return 1000000;
    static const char tick[] = "tick ";
    for (unsigned i = 0; tick[i]; i++)
        if (s[i] != tick[i])
            return 0;
    uint64_t hz = 0;
    const char *p = s + 5;
    for (; *p >= '0' && *p <= '9' && hz < 1000000000; p++)
        hz = hz * 10 + (uint64_t)(*p - '0');
    if (p == s + 5 || p[0] != 'H' || p[1] != 'z' || p[2] || hz == 0 ||
        hz > 1000000000)
        return 0;
    return 1000000000 / hz;
}
