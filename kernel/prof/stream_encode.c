/* kernel/prof/stream_encode.c: a ring's records as the profile stream's
 * BATCH records (uapi/profile_stream.h), encoded straight from the ring
 * into the stream's writer, for kernel/prof/stream.c's drains. Nothing
 * here owns state: the ring, the writer and the indices are the caller's.
 *
 * Profiler core: prefix prof_ and PROF_. */
#include "kernel/prof/stream_encode.h"
#include "kernel/prof/offcpu.h"
#include "kernel/prof/record.h"
#include "kernel/prof/trace.h"
#include "uapi/profile_stream.h"

_Static_assert(PROF_FRAMES == PSTR_FRAMES, "a record's frames fit a stream record");
/* The kinds the kernel streams are a prefix of those the format has: the
 * format may know a kind (lock) before the kernel sends it. */
_Static_assert((int)PROF_KIND_CPU == (int)PSTR_KIND_CPU && (int)PROF_KIND_STREAMED <= (int)PSTR_KIND_MAX,
               "a record's kind is the stream's");
_Static_assert((int)PROF_KIND_LOCK == (int)PSTR_KIND_LOCK, "a lock record's kind is the stream's");
_Static_assert(sizeof(uintptr_t) == sizeof(uint64_t), "a ring record's frames are sent as they are");

/* A ring record's depth as sent: always 1..PSTR_FRAMES (frame 0 is the
 * pc), clamped in case it ever is not, so that the encoder never refuses
 * a record and the count of what fits below agrees with it. */
static unsigned prof_stream_depth(const struct prof_record *pr)
{
    unsigned d = pr->pr_depth;
    return d < 1 || d > PSTR_FRAMES ? 1 : d;
}

_Static_assert((int)PROF_WHY_SLEEP == (int)PSTR_WHY_SLEEP &&
               (int)PROF_WHY_WAITQ == (int)PSTR_WHY_WAITQ &&
               (int)PROF_WHY_MUTEX == (int)PSTR_WHY_MUTEX &&
               (int)PROF_WHY_PREEMPTED == (int)PSTR_WHY_PREEMPTED &&
               (int)PROF_WHY_RUNNABLE == (int)PSTR_WHY_RUNNABLE, "a record's why is the stream's");

/* A queue's or lock's name into out, cleaned as task names are ('_' for
 * a character the format refuses), cut to PSTR_NAME_MAX. */
static void prof_stream_name(const char *name, char *out)
{
    unsigned i = 0;
    for (; name && i < PSTR_NAME_MAX && name[i]; i++) {
        char c = name[i];
        out[i] = c >= '!' && c <= '~' && c != ';' && c != ':' ? c : '_';
    }
    out[i] = 0;
}

/* An off-CPU record's why, its queue's name and its waker into r; the
 * waker's chain from wr, the ring's record right after it, when that is
 * the chain (NULL: none there). A name the format cannot carry is sent
 * cleaned, as task names are ('_' for a character it refuses). */
static void prof_stream_off_part(const struct prof_record *pr, const struct prof_record *wr,
                                 struct pstr_record *r)
{
    if (pr->pr_why < PROF_WHY_SLEEP || pr->pr_why > PROF_WHY_RUNNABLE)
        return;                     /* no reason known: sent without the part */
    r->why = pr->pr_why;
    r->waker = PSTR_WAKER_NONE;
    r->name[0] = 0;
    if (pr->pr_why == PROF_WHY_WAITQ || pr->pr_why == PROF_WHY_MUTEX)
        prof_stream_name(pr->pr_name, r->name);
    if (!pstr_why_blocked(pr->pr_why) || pr->pr_waker < 0)
        return;
    r->waker = pr->pr_waker;
    if (!wr)
        return;
    r->wdepth = wr->pr_depth > PSTR_FRAMES ? PSTR_FRAMES : wr->pr_depth;
    for (unsigned i = 0; i < r->wdepth; i++)
        r->wframes[i] = wr->pr_frames[i];
}

uint32_t prof_stream_add(struct pstr_writer *w, const struct prof_record *ring,
                         uint32_t mask, uint32_t at, uint32_t left)
{
    const struct prof_record *pr = &ring[at & mask];
    uint8_t flags = pr->pr_tick ? PSTR_REC_TICK : 0;
    if (pr->pr_kind == PROF_KIND_CPU)
        return pstr_add_frames(w, (uint32_t)pr->pr_pid, flags,
                               (const uint64_t *)pr->pr_frames, prof_stream_depth(pr));
    /* A waker's chain goes with its record; spun time has no reason the
     * stream's format knows yet, and is not sent. */
    if (pr->pr_kind == PROF_KIND_OFFCPU &&
        (pr->pr_why == PROF_WHY_WAKER || pr->pr_why == PROF_WHY_SPIN))
        return 1;
    struct pstr_record r = {
        .pid = (uint32_t)pr->pr_pid, .depth = (uint8_t)prof_stream_depth(pr),
        .flags = flags, .kind = pr->pr_kind, .weight = pr->pr_weight,
        .size = pr->pr_kind == PROF_KIND_HEAP ? pr->pr_size : 0,
    };
    for (unsigned i = 0; i < r.depth; i++)
        r.frames[i] = pr->pr_frames[i];
    /* An off-CPU chain the walk could not take (depth 0; the slot's frames
     * are stale) goes as one frame, 0, as the raw profile prints it. */
    if (pr->pr_depth == 0)
        r.frames[0] = 0;
    uint32_t took = 1;
    if (pr->pr_kind == PROF_KIND_LOCK) {
        /* The lock's name cleaned as a queue's; a record of no wait (it
         * never is one) still counts one, as the weight is at least 1. */
        r.waits = pr->pr_waits ? pr->pr_waits : 1;
        r.lkind = pr->pr_why == PROF_WHY_MUTEX ? PSTR_LOCK_MUTEX : PSTR_LOCK_SPIN;
        prof_stream_name(pr->pr_name, r.name);
    }
    if (pr->pr_kind == PROF_KIND_OFFCPU) {
        const struct prof_record *wr = left > 1 ? &ring[(at + 1) & mask] : NULL;
        if (wr && (wr->pr_kind != PROF_KIND_OFFCPU || wr->pr_why != PROF_WHY_WAKER ||
                   wr->pr_pid != pr->pr_pid))
            wr = NULL;
        prof_stream_off_part(pr, wr, &r);
        took += wr != NULL;
    }
    return pstr_add_record(w, &r) ? took : 0;
}

/* The stream's steady state, a loop sampled again and again: the n
 * ring records from pr on (none of them past the ring's end) while each
 * is a CPU sample of the last record's depth D whose outer frames are
 * the last's, so that it is a header and at most its pc (8 or 16 bytes).
 * How many it took. D is a constant in each of its callers, one loop per
 * depth, so that the outer frames stay in registers, unrolled, and are
 * compared without a branch: on arm64 a record of depth 6 costs ~36
 * instructions in this loop (~42 a record in all, with the records that
 * start a chain), where the same records took ~80 each through
 * pstr_run_add's same-chain path. pr_tag <= 1 is the kind cpu with a
 * tick flag of 0 or 1, which is PSTR_REC_TICK's bit. */
_Static_assert(PSTR_REC_TICK == 1 && PROF_KIND_CPU == 0 &&
               __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "a CPU sample's pr_tag is its stream flags");
static inline __attribute__((always_inline)) uint32_t
prof_stream_steady(struct pstr_run *run, const struct prof_record *pr, uint32_t n,
                   const unsigned D)
{
    /* As many as surely fit: the record after them, if it is one of
     * these too, is the general path's, which fits it exactly. */
    uint32_t fit = (uint32_t)((run->end - run->p) / PSTR_REC_SAME_MAX);
    const struct prof_record *start = pr, *stop = pr + (n < fit ? n : fit);
    uint64_t outer[PSTR_FRAMES];
#pragma GCC unroll 8
    for (unsigned i = 1; i < D; i++)
        outer[i] = run->last[i];
    for (; pr < stop; pr++) {
        if (pr->pr_tag > 1 || pr->pr_depth != D)
            break;
        uint64_t diff = 0;
#pragma GCC unroll 8
        for (unsigned i = 1; i < D; i++)
            diff |= pr->pr_frames[i] ^ outer[i];
        if (diff)
            break;
        pstr_run_put_same(run, (uint32_t)pr->pr_pid, (uint8_t)pr->pr_tag, pr->pr_frames[0], D);
    }
    return (uint32_t)(pr - start);
}

/* The stream's hot loop (see the header): the writer's place is kept in
 * registers (struct pstr_run). */
uint32_t prof_stream_add_cpu_run(struct pstr_writer *w, const struct prof_record *ring,
                                 uint32_t mask, uint32_t at, uint32_t left)
{
    const struct prof_record *pr = &ring[at & mask], *end = &ring[mask + 1];
    struct pstr_run run;
    uint32_t took = 0;
    pstr_run_begin(w, &run);
    while (took < left && pr->pr_kind == PROF_KIND_CPU &&
           pstr_run_add(&run, (uint32_t)pr->pr_pid, pr->pr_tick ? PSTR_REC_TICK : 0,
                        (const uint64_t *)pr->pr_frames, prof_stream_depth(pr))) {
        took++;
        if (++pr == end)
            pr = ring;
        uint32_t n = left - took, s = 0;
        if (n > (uint32_t)(end - pr))
            n = (uint32_t)(end - pr);
        switch (run.last_depth) {
        case 1: s = prof_stream_steady(&run, pr, n, 1); break;
        case 2: s = prof_stream_steady(&run, pr, n, 2); break;
        case 3: s = prof_stream_steady(&run, pr, n, 3); break;
        case 4: s = prof_stream_steady(&run, pr, n, 4); break;
        case 5: s = prof_stream_steady(&run, pr, n, 5); break;
        case 6: s = prof_stream_steady(&run, pr, n, 6); break;
        case 7: s = prof_stream_steady(&run, pr, n, 7); break;
        case 8: s = prof_stream_steady(&run, pr, n, 8); break;
        }
        took += s;
        if ((pr += s) == end)
            pr = ring;
    }
    pstr_run_end(w, &run);
    return took;
}


/* ---- a trace stream ------------------------------------------------------ */

_Static_assert((int)PROF_TRACE_LEFT_MAX == PSTR_LEFT_MAX &&
               (int)PROF_TRACE_LEFT_WAITQ == PSTR_LEFT_WAITQ &&
               (int)PROF_TRACE_LEFT_MUTEX == PSTR_LEFT_MUTEX &&
               (int)PROF_TRACE_IRQ_MAX == PSTR_IRQ_CLASS_MAX,
               "a trace record's reasons and classes are the stream's");

/* A trace time on the wire: ns since the trace's start, at least 1 (a
 * weight of 0 is no record). */
static uint64_t prof_stream_trace_ns(uint64_t raw)
{
    uint64_t ns = prof_trace_ns(raw);
    return ns ? ns : 1;
}

/* A pid as the stream names it: 0 for a CPU's idle task. */
static uint32_t prof_stream_trace_pid(int pid, const struct prof_stream_trace_names *n)
{
    return pid <= 0 || n->idle(pid) ? 0 : (uint32_t)pid;
}

/* An interrupt's vector, class and name into r (a vector out of the
 * format's range, or a class it does not know, never came from the entry
 * hooks: sent as vector 0, class device, rather than refused). */
static void prof_stream_trace_irq(struct pstr_record *r, unsigned vec, unsigned class,
                                  const struct prof_stream_trace_names *n)
{
    r->targ = (uint8_t)(class >= 1 && class <= PSTR_IRQ_CLASS_MAX ? class : PROF_TRACE_IRQ_DEVICE);
    r->tvec = (uint16_t)(vec <= PSTR_VEC_MAX ? vec : 0);
    char name[PSTR_NAME_MAX + 1];
    if (r->targ != PROF_TRACE_IRQ_NMI && n->vec_name(r->tvec, name, sizeof name))
        prof_stream_name(name, r->name);
}

uint32_t prof_stream_add_trace(struct pstr_writer *w, const struct prof_record *pr,
                               const struct prof_stream_trace_names *n)
{
    struct pstr_record r = { .kind = PSTR_KIND_TRACE };
    if (pr->pr_kind == PROF_KIND_CPU) {
        r.tev = PSTR_TEV_SAMPLE;
        r.pid = prof_stream_trace_pid(pr->pr_pid, n);
        r.flags = pr->pr_tick ? PSTR_REC_TICK : 0;
        r.weight = prof_stream_trace_ns(pr->pr_weight);
        r.depth = (uint8_t)prof_stream_depth(pr);
        for (unsigned i = 0; i < r.depth; i++)
            r.frames[i] = pr->pr_frames[i];
        return pstr_add_record(w, &r);
    }
    if (pr->pr_kind != PROF_KIND_TRACE)
        return 1;                   /* no other kind is a trace's: skipped */
    r.weight = prof_stream_trace_ns(pr->pr_weight);
    switch (pr->pr_why) {
    case PROF_TRACE_SWITCH:
        r.tev = PSTR_TEV_SWITCH;
        r.pid = prof_stream_trace_pid(pr->pr_pid, n);
        r.tother = prof_stream_trace_pid(pr->pr_waker, n);
        r.targ = (uint8_t)(pr->pr_cost <= PSTR_LEFT_MAX ? pr->pr_cost : PROF_TRACE_LEFT_NONE);
        if (r.targ == PSTR_LEFT_WAITQ || r.targ == PSTR_LEFT_MUTEX)
            prof_stream_name(pr->pr_name, r.name);
        break;
    case PROF_TRACE_WAKE:
        r.tev = PSTR_TEV_WAKE;
        r.pid = prof_stream_trace_pid(pr->pr_waker, n);
        r.tother = prof_stream_trace_pid(pr->pr_pid, n);
        r.twcpu = (uint16_t)pr->pr_cost;
        if (pr->pr_frames[0])
            prof_stream_trace_irq(&r, (unsigned)(pr->pr_frames[0] - 1),
                                  (unsigned)pr->pr_frames[1], n);
        break;
    case PROF_TRACE_IRQ: {
        r.tev = PSTR_TEV_IRQ;
        r.pid = prof_stream_trace_pid(pr->pr_pid, n);
        uint64_t in = prof_stream_trace_ns(pr->pr_frames[0]), out = prof_trace_ns(pr->pr_weight);
        r.weight = in;
        r.tdur = out <= in ? 0 : out - in > UINT32_MAX ? UINT32_MAX : (uint32_t)(out - in);
        prof_stream_trace_irq(&r, (unsigned)pr->pr_waker, (unsigned)pr->pr_cost, n);
        break;
    }
    default:
        return 1;
    }
    return pstr_add_record(w, &r);
}
