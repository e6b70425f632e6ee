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

/* ---- error text: a tiny appender, since there is no snprintf here ---- */

struct praw_msg {
    char *buf;
    size_t cap, len;
};

static void msg_put(struct praw_msg *m, const char *s)
{
    if (!m->cap)
        return;
    for (; *s && m->len + 1 < m->cap; s++)
        m->buf[m->len++] = *s;
    m->buf[m->len] = 0;
}

static void msg_num(struct praw_msg *m, uint64_t v)
{
    char d[21];
    int i = 20;
    d[i] = 0;
    do {
        d[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    msg_put(m, d + i);
}

static int fail(char *err, size_t cap, const char *a, const char *b)
{
    struct praw_msg m = { err, cap, 0 };
    msg_put(&m, a);
    if (b)
        msg_put(&m, b);
    return -1;
}

/* ---- fields ---------------------------------------------------------- */

/* A cursor over one line. */
struct praw_cur {
    const char *p, *end;
    char stop;                  /* a field also ends here (0: only at ' ') */
};

/* The field at the cursor: up to the next space (or, when the cursor
 * has a stop, that character), or the end. */
static size_t field_len(const struct praw_cur *c)
{
    size_t n = 0;
    while (c->p + n < c->end && c->p[n] != ' ' && c->p[n] != c->stop)
        n++;
    return n;
}

/* DEC at the cursor up to the next space or the end, within max. */
static int take_dec(struct praw_cur *c, uint64_t max, uint64_t *out,
                    const char *what, char *err, size_t cap)
{
    size_t n = field_len(c);
    if (n == 0)
        return fail(err, cap, what, " is missing");
    if (n > 1 && c->p[0] == '0')
        return fail(err, cap, what, " has a leading zero");
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = c->p[i];
        if (ch < '0' || ch > '9')
            return fail(err, cap, what, " is not a decimal number");
        unsigned d = (unsigned)(ch - '0');
        if (v > (max - d) / 10)
            return fail(err, cap, what, " is out of range");
        v = v * 10 + d;
    }
    c->p += n;
    *out = v;
    return 0;
}

static int take_hex(struct praw_cur *c, uint64_t *out, const char *what,
                    char *err, size_t cap)
{
    size_t n = field_len(c);
    if (n == 0)
        return fail(err, cap, what, " is missing");
    if (n > 16)
        return fail(err, cap, what, " has more than 16 hex digits");
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        char ch = c->p[i];
        unsigned d;
        if (ch >= '0' && ch <= '9')
            d = (unsigned)(ch - '0');
        else if (ch >= 'a' && ch <= 'f')
            d = (unsigned)(ch - 'a' + 10);
        else
            return fail(err, cap, what,
                        " is not lowercase hex (no 0x, digits 0-9a-f)");
        v = v << 4 | d;
    }
    c->p += n;
    *out = v;
    return 0;
}

/* Whether the literal s is at the cursor (nothing taken). */
static int at_lit(const struct praw_cur *c, const char *s)
{
    const char *p = c->p;
    for (; *s; s++, p++)
        if (p == c->end || *p != *s)
            return 0;
    return 1;
}

/* The literal s at the cursor. */
static int take_lit(struct praw_cur *c, const char *s, char *err, size_t cap)
{
    const char *p = c->p;
    for (const char *q = s; *q; q++, p++) {
        if (p == c->end || *p != *q) {
            struct praw_msg m = { err, cap, 0 };
            msg_put(&m, "expected \"");
            msg_put(&m, s);
            msg_put(&m, "\"");
            return -1;
        }
    }
    c->p = p;
    return 0;
}

static int take_sep(struct praw_cur *c, const char *next, char *err, size_t cap)
{
    if (c->p < c->end && *c->p == ' ') {
        c->p++;
        return 0;
    }
    return fail(err, cap, "missing space before ", next);
}

/* ---- the header ------------------------------------------------------ */

static int take_build_id(struct praw_cur *c, struct praw_header *h,
                         char *err, size_t cap)
{
    size_t n = field_len(c);
    if (n != PRAW_BUILD_ID_HEX)
        return fail(err, cap, "build-id is not 40 hex digits", 0);
    for (size_t i = 0; i < n; i++) {
        char ch = c->p[i];
        if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f')))
            return fail(err, cap, "build-id is not lowercase hex", 0);
        h->ph_build_id[i] = ch;
    }
    h->ph_build_id[n] = 0;
    c->p += n;
    return 0;
}

/* SOURCE runs to the first " samples=". */
static int take_source(struct praw_cur *c, struct praw_header *h,
                       char *err, size_t cap)
{
    static const char stop[] = " samples=";
    size_t n = 0;
    for (;; n++) {
        const char *p = c->p + n;
        if (p == c->end)
            return fail(err, cap, "no \" samples=\" after the source", 0);
        size_t k = 0;
        while (stop[k] && p + k < c->end && p[k] == stop[k])
            k++;
        if (!stop[k])
            break;
        if (*p < ' ' || *p > '~')
            return fail(err, cap, "source has a non-printable character", 0);
    }
    if (n == 0)
        return fail(err, cap, "source is empty", 0);
    if (n > PRAW_SOURCE_MAX)
        return fail(err, cap, "source is longer than 63 characters", 0);
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
static int take_kind(struct praw_cur *c, struct praw_header *h, char *err, size_t cap)
{
    if (take_lit(c, " kind=", err, cap) < 0)
        return -1;
    size_t n = field_len(c);
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
    return fail(err, cap, "kind is not cpu, offcpu, heap or lock", 0);
}

int praw_parse_header(const char *s, size_t len, struct praw_header *h,
                      char *err, size_t cap)
{
    struct praw_cur c = { s, s + len, 0 };
    uint64_t v;
    if (take_lit(&c, PRAW_MAGIC "build-id=", err, cap) < 0)
        return -1;
    if (take_build_id(&c, h, err, cap) < 0 ||
        take_lit(&c, " source=", err, cap) < 0 ||
        take_source(&c, h, err, cap) < 0 ||
        take_lit(&c, " samples=", err, cap) < 0 ||
        take_dec(&c, UINT64_MAX, &h->ph_samples, "samples", err, cap) < 0 ||
        take_lit(&c, " dropped=", err, cap) < 0 ||
        take_dec(&c, UINT64_MAX, &h->ph_dropped, "dropped", err, cap) < 0 ||
        take_lit(&c, " cpus=", err, cap) < 0 ||
        take_dec(&c, PRAW_CPU_MAX + 1, &v, "cpus", err, cap) < 0)
        return -1;
    h->ph_cpus = (uint32_t)v;
    if (take_lit(&c, " ms=", err, cap) < 0 ||
        take_dec(&c, UINT32_MAX, &v, "ms", err, cap) < 0)
        return -1;
    h->ph_ms = (uint32_t)v;
    h->ph_kind = PRAW_KIND_CPU;
    if (at_lit(&c, " kind=") && take_kind(&c, h, err, cap) < 0)
        return -1;
    if (c.p != c.end)
        return fail(err, cap, "unexpected text after ms=", 0);
    return 0;
}

/* ---- a chain line ---------------------------------------------------- */

/* A task name field into out (PRAW_TASK_MAX + 1 bytes). */
static int take_name(struct praw_cur *c, char *out, char *err, size_t cap)
{
    size_t n = field_len(c);
    if (n == 0)
        return fail(err, cap, "task is missing", 0);
    if (n > PRAW_TASK_MAX)
        return fail(err, cap, "task is longer than 31 characters", 0);
    for (size_t i = 0; i < n; i++) {
        char t = c->p[i];
        if (t < '!' || t > '~' || t == ';')
            return fail(err, cap, "task has a character outside '!'..'~' "
                        "or a ';'", 0);
        out[i] = t;
    }
    out[n] = 0;
    c->p += n;
    return 0;
}

static int take_task(struct praw_cur *c, struct praw_chain *ch,
                     char *err, size_t cap)
{
    return take_name(c, ch->pc_task, err, cap);
}

/* Frames up to the line's end, or (bar) up to " |". */
static int take_addrs(struct praw_cur *c, uint64_t *frames, unsigned *depth, int bar,
                      const char *first, char *err, size_t cap)
{
    *depth = 0;
    if (take_hex(c, &frames[0], first, err, cap) < 0)
        return -1;
    *depth = 1;
    while (c->p < c->end && !(bar && at_lit(c, " |"))) {
        if (take_sep(c, "a return address", err, cap) < 0)
            return -1;
        if (*depth == PRAW_FRAMES)
            return fail(err, cap, "more than 8 frames (pc and at most 7 "
                        "return addresses)", 0);
        if (take_hex(c, &frames[*depth], "return address", err, cap) < 0)
            return -1;
        (*depth)++;
    }
    return 0;
}

static int take_frames(struct praw_cur *c, struct praw_chain *ch,
                       char *err, size_t cap)
{
    return take_addrs(c, ch->pc_frames, &ch->pc_depth, 0, "pc", err, cap);
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
static int take_wait_name(struct praw_cur *c, struct praw_chain *ch, const char *what,
                          char *err, size_t cap)
{
    size_t n = field_len(c);
    if (n == 0)
        return fail(err, cap, what, " after ':' is missing");
    if (n > PRAW_NAME_MAX)
        return fail(err, cap, what, " is longer than 31 characters");
    for (size_t i = 0; i < n; i++) {
        char t = c->p[i];
        if (t < '!' || t > '~' || t == ';' || t == ':')
            return fail(err, cap, what, " has a character outside '!'..'~', a ';' or a ':'");
        ch->pc_name[i] = t;
    }
    ch->pc_name[n] = 0;
    c->p += n;
    return 0;
}

/* " why=REASON[:NAME]" at the cursor. */
static int take_why(struct praw_cur *c, struct praw_chain *ch, char *err, size_t cap)
{
    if (take_lit(c, " why=", err, cap) < 0)
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
        return fail(err, cap, "why is not sleep, waitq, mutex, preempted, runnable or spin", 0);
    c->p += n;
    ch->pc_name[0] = 0;
    if (c->p == c->end || *c->p != ':')
        return 0;
    if (ch->pc_why != PRAW_WHY_WAITQ && ch->pc_why != PRAW_WHY_MUTEX &&
        ch->pc_why != PRAW_WHY_SPIN)
        return fail(err, cap, "only a waitq, mutex or spin reason has a :NAME", 0);
    c->p++;
    return take_wait_name(c, ch, "the wait's name", err, cap);
}

/* " waker=-1|DEC", exactly for blocked reasons. */
static int take_waker(struct praw_cur *c, struct praw_chain *ch, char *err, size_t cap)
{
    ch->pc_waker = PRAW_WAKER_NONE;
    int has = at_lit(c, " waker=");
    if (has != praw_why_blocked(ch->pc_why))
        return fail(err, cap, has ? "waker= on a reason that is not blocked time"
                                  : "waker= is missing (sleep, waitq and mutex have one)", 0);
    if (!has)
        return 0;
    c->p += 7;
    if (at_lit(c, "-1") && (c->p + 2 == c->end || c->p[2] == ' ')) {
        c->p += 2;
        return 0;
    }
    uint64_t v;
    c->stop = ':';
    int rc = take_dec(c, PRAW_PID_MAX, &v, "waker", err, cap);
    c->stop = 0;
    if (rc < 0)
        return -1;
    ch->pc_waker = (int32_t)v;
    if (c->p == c->end || *c->p != ':')
        return 0;
    if (v == 0)
        return fail(err, cap, "the tick (waker=0) has no task name", 0);
    c->p++;
    return take_name(c, ch->pc_wtask, err, cap);
}

/* The off-CPU part after CPU: why, waker, the task's chain, and after
 * " |" the waker's. */
static int take_off(struct praw_cur *c, struct praw_chain *ch, char *err, size_t cap)
{
    if (take_why(c, ch, err, cap) < 0 || take_waker(c, ch, err, cap) < 0 ||
        take_sep(c, "the chain", err, cap) < 0 ||
        take_addrs(c, ch->pc_frames, &ch->pc_depth, 1, "the chain", err, cap) < 0)
        return -1;
    if (c->p == c->end)
        return 0;
    c->p += 2;                  /* " |" */
    if (ch->pc_waker < 0)
        return fail(err, cap, "a waker's chain (after \" |\") with no waker", 0);
    if (take_sep(c, "the waker's chain", err, cap) < 0)
        return -1;
    return take_addrs(c, ch->pc_wframes, &ch->pc_wdepth, 0, "the waker's chain", err, cap);
}

/* ---- a lock chain's lock and waits ------------------------------------ */

/* The part after CPU: " lock=LOCK:NAME waits=WAITS", then the holder's chain. */
static int take_lock(struct praw_cur *c, struct praw_chain *ch, char *err, size_t cap)
{
    if (take_lit(c, " lock=", err, cap) < 0)
        return -1;
    if (at_lit(c, "spin:")) {
        ch->pc_why = PRAW_WHY_SPIN;
        c->p += 5;
    } else if (at_lit(c, "mutex:")) {
        ch->pc_why = PRAW_WHY_MUTEX;
        c->p += 6;
    } else {
        return fail(err, cap, "lock is not spin:NAME or mutex:NAME", 0);
    }
    uint64_t v;
    if (take_wait_name(c, ch, "the lock's name", err, cap) < 0 ||
        take_lit(c, " waits=", err, cap) < 0 ||
        take_dec(c, UINT64_MAX, &v, "waits", err, cap) < 0)
        return -1;
    if (v == 0)
        return fail(err, cap, "waits is 0 (a release charged ended at least 1 wait)", 0);
    ch->pc_objects = v;
    if (take_sep(c, "the holder's chain", err, cap) < 0)
        return -1;
    return take_addrs(c, ch->pc_frames, &ch->pc_depth, 0, "the holder's chain", err, cap);
}

int praw_parse_chain(const char *s, size_t len, struct praw_chain *ch,
                     char *err, size_t cap)
{
    return praw_parse_chain_kind(s, len, PRAW_KIND_CPU, ch, err, cap);
}

int praw_parse_chain_kind(const char *s, size_t len, unsigned kind,
                          struct praw_chain *ch, char *err, size_t cap)
{
    struct praw_cur c = { s, s + len, ':' };
    uint64_t v;
    if (take_dec(&c, PRAW_COUNT_MAX, &v, "count", err, cap) < 0)
        return -1;
    if (v == 0)
        return fail(err, cap, "count is 0 (a chain has at least 1 sample)", 0);
    ch->pc_count = (uint32_t)v;
    ch->pc_weight = v;
    int weighed = c.p < c.end && *c.p == ':';
    if (weighed != (kind != PRAW_KIND_CPU))
        return fail(err, cap, weighed ? "a CPU chain has no weight (count:weight)"
                                      : "weight is missing (count:weight)", 0);
    if (weighed) {
        c.p++;
        if (take_dec(&c, UINT64_MAX, &v, "weight", err, cap) < 0)
            return -1;
        if (v == 0)
            return fail(err, cap, "weight is 0", 0);
        ch->pc_weight = v;
    }
    ch->pc_objects = ch->pc_count;
    if (kind == PRAW_KIND_HEAP) {
        if (c.p >= c.end || *c.p != ':')
            return fail(err, cap, "objects are missing (count:bytes:objects)", 0);
        c.p++;
        if (take_dec(&c, UINT64_MAX, &v, "objects", err, cap) < 0)
            return -1;
        if (v == 0)
            return fail(err, cap, "objects is 0", 0);
        ch->pc_objects = v;
    }
    c.stop = 0;
    if (take_sep(&c, "pid", err, cap) < 0 ||
        take_dec(&c, PRAW_PID_MAX, &v, "pid", err, cap) < 0)
        return -1;
    ch->pc_pid = (uint32_t)v;
    if (take_sep(&c, "task", err, cap) < 0 ||
        take_task(&c, ch, err, cap) < 0 ||
        take_sep(&c, "cpu", err, cap) < 0 ||
        take_dec(&c, PRAW_CPU_MAX, &v, "cpu", err, cap) < 0)
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
    if (take_sep(&c, "pc", err, cap) < 0)
        return -1;
    return take_frames(&c, ch, err, cap);
}

/* ---- the whole text -------------------------------------------------- */

/* "line N: " + what the line parser said. */
static int fail_line(char *err, size_t cap, unsigned line, const char *what)
{
    char tmp[PRAW_ERR_MAX];
    size_t i = 0;
    for (; what[i] && i + 1 < sizeof tmp; i++)
        tmp[i] = what[i];
    tmp[i] = 0;
    struct praw_msg m = { err, cap, 0 };
    msg_put(&m, "line ");
    msg_num(&m, line);
    msg_put(&m, ": ");
    msg_put(&m, tmp);
    return -1;
}

/* The next line [*s, *e) of text; -1 (err set) if it is cut or has a
 * character no line may hold. */
static int next_line(const char *text, size_t len, size_t *pos, unsigned line,
                     size_t *start, size_t *end, char *err, size_t cap)
{
    size_t i = *pos;
    *start = i;
    for (; i < len && text[i] != '\n'; i++) {
        if (text[i] == '\r')
            return fail_line(err, cap, line, "carriage return (lines end "
                             "with \\n alone)");
        if (text[i] == 0)
            return fail_line(err, cap, line, "NUL byte");
    }
    if (i == len)
        return fail_line(err, cap, line, "truncated: the last line has no "
                         "newline");
    *end = i;
    *pos = i + 1;
    return 0;
}

int praw_parse(const char *text, size_t len, struct praw_header *h,
               praw_chain_fn fn, void *ctx, char *err, size_t cap)
{
    char why[PRAW_ERR_MAX];
    size_t pos = 0, s, e;
    unsigned line = 1;
    if (len == 0)
        return fail(err, cap, "line 1: empty input (no raw header)", 0);
    if (next_line(text, len, &pos, line, &s, &e, err, cap) < 0)
        return -1;
    if (praw_parse_header(text + s, e - s, h, why, sizeof why) < 0)
        return fail_line(err, cap, line, why);
    uint64_t sum = 0;
    while (pos < len) {
        struct praw_chain c;
        line++;
        if (next_line(text, len, &pos, line, &s, &e, err, cap) < 0)
            return -1;
        if (praw_parse_chain_kind(text + s, e - s, h->ph_kind, &c, why, sizeof why) < 0)
            return fail_line(err, cap, line, why);
        sum += c.pc_count;      /* < 2^32 lines of < 2^32: cannot wrap */
        if (sum > h->ph_samples)
            return fail_line(err, cap, line, "chain counts exceed the "
                             "header's samples=");
        int rc = fn ? fn(ctx, &c, line, err, cap) : 0;
        if (rc)
            return rc;
    }
    if (sum != h->ph_samples) {
        struct praw_msg m = { err, cap, 0 };
        msg_put(&m, "line ");
        msg_num(&m, line);
        msg_put(&m, ": chain counts add up to ");
        msg_num(&m, sum);
        msg_put(&m, " but the header says samples=");
        msg_num(&m, h->ph_samples);
        msg_put(&m, " (lines missing?)");
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
