/* uapi/trace_raw.c: the strict parser of the raw scheduling trace
 * (grammar in uapi/trace_raw.h).
 *
 * Strict for the reason uapi/profile_raw.c is: the text crosses a lossy
 * UDP shell, and a trace that lost a line or took a garbled time would
 * draw a timeline that never happened. Every rule is checked (ranges,
 * CPUs below cpus=, time order, events=) and the first broken one is
 * named with its line. No library calls, no allocation.
 *
 * Wire format: prefix traw_. */
#include "uapi/trace_raw.h"
#include "uapi/rawtext.h"

static const char *const traw_left_names[TRAW_LEFT_MAX + 1] = {
    "-", "sleep", "waitq", "mutex", "preempted", "exit", "yield",
};

static const char *const traw_class_names[TRAW_CLASS_MAX + 1] = {
    0, "tick", "device", "ipi", "nmi",
};

const char *traw_left_name(unsigned left)
{
    return left <= TRAW_LEFT_MAX ? traw_left_names[left] : 0;
}

const char *traw_class_name(unsigned cls)
{
    return cls >= 1 && cls <= TRAW_CLASS_MAX ? traw_class_names[cls] : 0;
}

/* ---- the header ------------------------------------------------------ */

/* DROPS: exactly cpus numbers, comma-separated, to the line's end. */
static int take_drops(struct rawtext_cur *c, struct traw_header *h, char *err, size_t cap)
{
    c->stop = ',';
    for (uint32_t i = 0; i < h->th_cpus; i++) {
        uint64_t v;
        if (i > 0) {
            if (c->p == c->end || *c->p != ',') {
                struct rawtext_msg m = { err, cap, 0 };
                rawtext_put(&m, "dropped= has ");
                rawtext_num(&m, i);
                rawtext_put(&m, " numbers but cpus=");
                rawtext_num(&m, h->th_cpus);
                return -1;
            }
            c->p++;
        }
        if (rawtext_take_dec(c, UINT32_MAX, &v, "dropped", err, cap) < 0)
            return -1;
        h->th_dropped[i] = (uint32_t)v;
    }
    c->stop = 0;
    if (c->p != c->end && *c->p == ',')
        return rawtext_fail(err, cap, "dropped= has more numbers than cpus=", 0);
    if (c->p != c->end)
        return rawtext_fail(err, cap, "unexpected text after dropped=", 0);
    return 0;
}

int traw_parse_header(const char *s, size_t len, struct traw_header *h, char *err,
                      size_t cap)
{
    struct rawtext_cur c = { s, s + len, 0 };
    uint64_t v;
    for (unsigned i = 0; i < TRAW_CPUS; i++)
        h->th_dropped[i] = 0;
    if (rawtext_take_lit(&c, TRAW_MAGIC "build-id=", err, cap) < 0 ||
        rawtext_take_build_id(&c, h->th_build_id, err, cap) < 0 ||
        rawtext_take_lit(&c, " cpus=", err, cap) < 0 ||
        rawtext_take_dec(&c, UINT32_MAX, &v, "cpus", err, cap) < 0)
        return -1;
    if (v < 1 || v > TRAW_CPUS)
        return rawtext_fail(err, cap, "cpus is out of range (1-64)", 0);
    h->th_cpus = (uint32_t)v;
    if (rawtext_take_lit(&c, " ms=", err, cap) < 0 ||
        rawtext_take_dec(&c, UINT32_MAX, &v, "ms", err, cap) < 0)
        return -1;
    if (v < 1 || v > TRAW_MS_MAX)
        return rawtext_fail(err, cap, "ms is out of range (1-2000)", 0);
    h->th_ms = (uint32_t)v;
    if (rawtext_take_lit(&c, " events=", err, cap) < 0 ||
        rawtext_take_dec(&c, UINT64_MAX, &h->th_events, "events", err, cap) < 0 ||
        rawtext_take_lit(&c, " dropped=", err, cap) < 0)
        return -1;
    return take_drops(&c, h, err, cap);
}

/* ---- an event's fields ----------------------------------------------- */

static int take_ns(struct rawtext_cur *c, uint64_t *ns, const char *what, char *err,
                   size_t cap)
{
    return rawtext_take_sep(c, what, err, cap) < 0 ||
           rawtext_take_dec(c, UINT64_MAX, ns, what, err, cap) < 0 ? -1 : 0;
}

static int take_cpu(struct rawtext_cur *c, uint32_t cpus, uint32_t *cpu, const char *what,
                    char *err, size_t cap)
{
    uint64_t v;
    if (rawtext_take_sep(c, what, err, cap) < 0 ||
        rawtext_take_dec(c, UINT32_MAX, &v, what, err, cap) < 0)
        return -1;
    if (v >= cpus) {
        struct rawtext_msg m = { err, cap, 0 };
        rawtext_put(&m, what);
        rawtext_put(&m, " ");
        rawtext_num(&m, v);
        rawtext_put(&m, " is not below cpus=");
        rawtext_num(&m, cpus);
        return -1;
    }
    *cpu = (uint32_t)v;
    return 0;
}

static int take_pid(struct rawtext_cur *c, uint32_t *pid, const char *what, char *err,
                    size_t cap)
{
    uint64_t v;
    if (rawtext_take_sep(c, what, err, cap) < 0 ||
        rawtext_take_dec(c, TRAW_PID_MAX, &v, what, err, cap) < 0)
        return -1;
    *pid = (uint32_t)v;
    return 0;
}

static int same(const char *a, const char *b)
{
    for (; *a && *a == *b; a++, b++)
        ;
    return *a == *b;
}

/* " PID TASK": pid 0 is idle, and idle alone is "<idle>". */
static int take_task(struct rawtext_cur *c, uint32_t *pid, char *task, char *err, size_t cap)
{
    if (take_pid(c, pid, "pid", err, cap) < 0 ||
        rawtext_take_sep(c, "task", err, cap) < 0 ||
        rawtext_take_name(c, task, TRAW_TASK_MAX, 0, "task", err, cap) < 0)
        return -1;
    if ((*pid == 0) != same(task, TRAW_IDLE_TASK))
        return rawtext_fail(err, cap, *pid ? "task <idle> with a pid other than 0"
                                           : "pid 0 (idle) with a task other than <idle>", 0);
    return 0;
}

/* The field at the cursor is exactly one of names[lo..hi]: its index. */
static int take_word(struct rawtext_cur *c, const char *const *names, unsigned lo,
                     unsigned hi, unsigned *out)
{
    size_t n = rawtext_field_len(c);
    for (unsigned k = lo; k <= hi; k++) {
        const char *w = names[k];
        size_t i = 0;
        while (i < n && w[i] && c->p[i] == w[i])
            i++;
        if (i == n && !w[i]) {
            c->p += n;
            *out = k;
            return 0;
        }
    }
    return -1;
}

/* IRQNAME: 1-31 of a-z 0-9 . _ - +, up to the field's end. */
static int take_irqname(struct rawtext_cur *c, char *out, char *err, size_t cap)
{
    size_t n = rawtext_field_len(c);
    if (n == 0)
        return rawtext_fail(err, cap, "the interrupt's name is missing", 0);
    if (n > TRAW_NAME_MAX)
        return rawtext_fail(err, cap, "the interrupt's name is longer than 31 characters", 0);
    for (size_t i = 0; i < n; i++) {
        char t = c->p[i];
        if (!((t >= 'a' && t <= 'z') || (t >= '0' && t <= '9') || t == '.' || t == '_' ||
              t == '-' || t == '+'))
            return rawtext_fail(err, cap, "the interrupt's name has a character outside "
                                "a-z, 0-9, '.', '_', '-', '+'", 0);
        out[i] = t;
    }
    out[n] = 0;
    c->p += n;
    return 0;
}

/* VEC ":"? CLASS: the vector, then its class. */
static int take_vec_class(struct rawtext_cur *c, struct traw_event *e, char sep, char *err,
                          size_t cap)
{
    uint64_t v;
    c->stop = ':';
    int rc = rawtext_take_dec(c, TRAW_VEC_MAX, &v, "vector", err, cap);
    c->stop = 0;
    if (rc < 0)
        return -1;
    e->te_vec = (uint32_t)v;
    if (c->p == c->end || *c->p != sep)
        return rawtext_fail(err, cap, sep == ' ' ? "missing space before the class"
                                                 : "missing ':' before the class", 0);
    c->p++;
    unsigned k;
    c->stop = ':';
    rc = take_word(c, traw_class_names, 1, TRAW_CLASS_MAX, &k);
    c->stop = 0;
    if (rc < 0)
        return rawtext_fail(err, cap, "class is not tick, device, ipi or nmi", 0);
    e->te_class = (uint8_t)k;
    return 0;
}

/* ---- the events ------------------------------------------------------ */

/* " LEFT[:NAME] PID TASK" of a switch, after the leaving task. */
static int take_switch(struct rawtext_cur *c, struct traw_event *e, char *err, size_t cap)
{
    unsigned k;
    if (rawtext_take_sep(c, "left", err, cap) < 0)
        return -1;
    c->stop = ':';
    int rc = take_word(c, traw_left_names, 0, TRAW_LEFT_MAX, &k);
    c->stop = 0;
    if (rc < 0)
        return rawtext_fail(err, cap, "left is not -, sleep, waitq, mutex, preempted, exit "
                            "or yield", 0);
    e->te_left = (uint8_t)k;
    if ((e->te_pid == 0) != (k == TRAW_LEFT_NONE))
        return rawtext_fail(err, cap, k ? "idle (pid 0) left for a reason other than -"
                                        : "left - is idle's alone (pid 0)", 0);
    if (c->p < c->end && *c->p == ':') {
        if (k != TRAW_LEFT_WAITQ && k != TRAW_LEFT_MUTEX)
            return rawtext_fail(err, cap, "only a waitq or mutex reason has a :NAME", 0);
        c->p++;
        if (rawtext_take_name(c, e->te_name, TRAW_NAME_MAX, 1, "the wait's name", err,
                              cap) < 0)
            return -1;
    }
    return take_task(c, &e->te_pid2, e->te_task2, err, cap);
}

/* " PID TASK CPU [irq=VEC:CLASS[:IRQNAME]]" of a wake, after the waker. */
static int take_wake(struct rawtext_cur *c, uint32_t cpus, struct traw_event *e, char *err,
                     size_t cap)
{
    if (take_task(c, &e->te_pid2, e->te_task2, err, cap) < 0 ||
        take_cpu(c, cpus, &e->te_wcpu, "the wakee's cpu", err, cap) < 0)
        return -1;
    if (c->p == c->end)
        return 0;
    if (rawtext_take_lit(c, " irq=", err, cap) < 0 || take_vec_class(c, e, ':', err, cap) < 0)
        return -1;
    e->te_in_irq = 1;
    if (c->p < c->end && *c->p == ':') {
        c->p++;
        if (take_irqname(c, e->te_irq, err, cap) < 0)
            return -1;
    }
    return 0;
}

/* Whether another field follows the one at the cursor. */
static int field_follows(const struct rawtext_cur *c)
{
    const char *p = c->p + rawtext_field_len(c);
    return p < c->end && *p == ' ';
}

/* " END VEC CLASS [IRQNAME] PID" of an irq, after its entry. */
static int take_irq(struct rawtext_cur *c, struct traw_event *e, char *err, size_t cap)
{
    if (take_ns(c, &e->te_end, "the exit", err, cap) < 0)
        return -1;
    if (e->te_end < e->te_ns)
        return rawtext_fail(err, cap, "the exit is before the entry", 0);
    if (rawtext_take_sep(c, "vector", err, cap) < 0 || take_vec_class(c, e, ' ', err, cap) < 0)
        return -1;
    /* IRQNAME may be digits alone: it is there when two fields follow. */
    struct rawtext_cur next = *c;
    if (next.p < next.end && *next.p == ' ') {
        next.p++;
        if (field_follows(&next)) {
            c->p = next.p;
            if (take_irqname(c, e->te_irq, err, cap) < 0)
                return -1;
        }
    }
    return take_pid(c, &e->te_pid, "pid", err, cap);
}

int traw_parse_event(const char *s, size_t len, uint32_t cpus, struct traw_event *e,
                     char *err, size_t cap)
{
    struct rawtext_cur c = { s, s + len, 0 };
    /* Field by field: a struct's zeroing may be a memset call, and this
     * file calls nothing. A string is "" by its first byte. */
    e->te_type = 0;
    e->te_cpu = e->te_pid = e->te_pid2 = e->te_wcpu = e->te_vec = 0;
    e->te_ns = e->te_end = 0;
    e->te_task[0] = e->te_task2[0] = e->te_name[0] = e->te_irq[0] = 0;
    e->te_left = e->te_in_irq = e->te_class = 0;
    e->te_depth = 0;
    if (len < 2 || s[1] != ' ')
        return rawtext_fail(err, cap, "an event is S, W, I or P then a space", 0);
    switch (s[0]) {
    case 'S': e->te_type = TRAW_SWITCH; break;
    case 'W': e->te_type = TRAW_WAKE; break;
    case 'I': e->te_type = TRAW_IRQ; break;
    case 'P': e->te_type = TRAW_SAMPLE; break;
    default: return rawtext_fail(err, cap, "an event is S, W, I or P then a space", 0);
    }
    c.p = s + 1;
    if (take_ns(&c, &e->te_ns, "time", err, cap) < 0 ||
        take_cpu(&c, cpus, &e->te_cpu, "cpu", err, cap) < 0)
        return -1;
    int rc;
    if (e->te_type == TRAW_IRQ) {
        rc = take_irq(&c, e, err, cap);
    } else {
        if (take_task(&c, &e->te_pid, e->te_task, err, cap) < 0)
            return -1;
        if (e->te_type == TRAW_SWITCH)
            rc = take_switch(&c, e, err, cap);
        else if (e->te_type == TRAW_WAKE)
            rc = take_wake(&c, cpus, e, err, cap);
        else
            rc = rawtext_take_sep(&c, "pc", err, cap) < 0 ? -1 :
                 rawtext_take_addrs(&c, e->te_frames, TRAW_FRAMES, &e->te_depth, 0, "pc",
                                    err, cap);
    }
    if (rc < 0)
        return -1;
    if (c.p != c.end)
        return rawtext_fail(err, cap, "unexpected text at the line's end", 0);
    return 0;
}

/* ---- the whole text -------------------------------------------------- */

int traw_parse(const char *text, size_t len, struct traw_header *h, traw_event_fn fn,
               void *ctx, char *err, size_t cap)
{
    char why[TRAW_ERR_MAX];
    size_t pos = 0, s = 0, e = 0;
    unsigned line = 1;
    if (len == 0)
        return rawtext_fail(err, cap, "line 1: empty input (no trace header)", 0);
    if (rawtext_next_line(text, len, &pos, line, &s, &e, err, cap) < 0)
        return -1;
    if (traw_parse_header(text + s, e - s, h, why, sizeof why) < 0)
        return rawtext_fail_line(err, cap, line, why);
    uint64_t n = 0, last = 0;
    while (pos < len) {
        struct traw_event ev;
        line++;
        if (rawtext_next_line(text, len, &pos, line, &s, &e, err, cap) < 0)
            return -1;
        if (traw_parse_event(text + s, e - s, h->th_cpus, &ev, why, sizeof why) < 0)
            return rawtext_fail_line(err, cap, line, why);
        if (ev.te_ns < last)
            return rawtext_fail_line(err, cap, line, "out of time order (before the line "
                                     "above)");
        last = ev.te_ns;
        if (++n > h->th_events)
            return rawtext_fail_line(err, cap, line, "more event lines than the header's "
                                     "events=");
        int rc = fn ? fn(ctx, &ev, line, err, cap) : 0;
        if (rc)
            return rc;
    }
    if (n != h->th_events) {
        struct rawtext_msg m = { err, cap, 0 };
        rawtext_put(&m, "line ");
        rawtext_num(&m, line);
        rawtext_put(&m, ": ");
        rawtext_num(&m, n);
        rawtext_put(&m, " event lines but the header says events=");
        rawtext_num(&m, h->th_events);
        rawtext_put(&m, " (lines missing?)");
        return -1;
    }
    return 0;
}
