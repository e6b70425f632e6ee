/* tools/ingest/stream.c: one kernel's profile stream received, and its loss
 * accounting (tools/ingest/stream.h).
 * Host pipeline: prefix sp_. */
#include "tools/ingest/stream.h"
#include <stdlib.h>
#include <string.h>
#include "uapi/profile_raw.h"

/* A CPU's state is made when its number first comes: a fleet of 4-CPU
 * kernels must not cost SP_STREAM_CPUS entries per kernel. */
#define SP_STREAM_CPUS_FIRST 8

int sp_stream_init(struct sp_stream *s, uint32_t id)
{
    memset(s, 0, sizeof *s);
    s->id = id;
    s->jump_left = SP_STREAM_JUMP_MAX;
    s->cpus = calloc(SP_STREAM_CPUS_FIRST, sizeof *s->cpus);
    s->capcpus = SP_STREAM_CPUS_FIRST;
    return s->cpus ? 0 : -1;
}

/* CPU cpu's state (cpu < SP_STREAM_CPUS), made on first use; NULL out of
 * memory. */
static struct sp_stream_cpu *cpu_at(struct sp_stream *s, uint16_t cpu)
{
    if (cpu >= s->capcpus) {
        size_t cap = s->capcpus ? s->capcpus : SP_STREAM_CPUS_FIRST;
        while (cap <= cpu)
            cap *= 2;
        struct sp_stream_cpu *c = realloc(s->cpus, cap * sizeof *c);
        if (!c)
            return NULL;
        memset(c + s->capcpus, 0, (cap - s->capcpus) * sizeof *c);
        s->cpus = c;
        s->capcpus = cap;
    }
    return &s->cpus[cpu];
}

/* The same for reading: a CPU not seen yet is a fresh one. */
static const struct sp_stream_cpu *cpu_peek(const struct sp_stream *s, uint16_t cpu)
{
    static const struct sp_stream_cpu fresh;
    return cpu < s->capcpus ? &s->cpus[cpu] : &fresh;
}

void sp_stream_free(struct sp_stream *s)
{
    free(s->cpus);
    free(s->tasks);
    s->cpus = NULL;
    s->tasks = NULL;
}

/* ---- datagrams: seq ---------------------------------------------------
 *
 * seq_seen holds one bit per seq in [seq_next - WIN, seq_next): taken or
 * not. A seq at or past seq_next counts every one it skips as lost; one
 * inside the window either is a copy (bit set) or fills a gap (bit clear:
 * one datagram less lost). */

static bool seen_bit(const struct sp_stream *s, uint32_t seq)
{
    uint32_t i = seq % SP_STREAM_SEQ_WIN;
    return s->seq_seen[i / 8] >> (i % 8) & 1;
}

static void set_bit(struct sp_stream *s, uint32_t seq, bool on)
{
    uint32_t i = seq % SP_STREAM_SEQ_WIN;
    if (on)
        s->seq_seen[i / 8] |= (uint8_t)(1u << (i % 8));
    else
        s->seq_seen[i / 8] &= (uint8_t)~(1u << (i % 8));
}

/* The jump budget refilled to now_ms: SP_STREAM_JUMP_RATE a whole
 * second, never past SP_STREAM_JUMP_MAX. */
static void jump_refill(struct sp_stream *s, uint64_t now_ms)
{
    if (now_ms <= s->jump_ms)
        return;
    uint64_t secs = (now_ms - s->jump_ms) / 1000;
    if (secs >= SP_STREAM_JUMP_MAX / SP_STREAM_JUMP_RATE)
        s->jump_left = SP_STREAM_JUMP_MAX;
    else if (secs)
        s->jump_left = s->jump_left + secs * SP_STREAM_JUMP_RATE > SP_STREAM_JUMP_MAX
                           ? SP_STREAM_JUMP_MAX
                           : s->jump_left + (uint32_t)(secs * SP_STREAM_JUMP_RATE);
    s->jump_ms += secs * 1000;
}

/* A SP_STREAM_* code: TAKEN when the datagram is new. */
static int seq_take(struct sp_stream *s, uint32_t seq, uint64_t now_ms)
{
    /* Serial-number order (RFC 1982): seq and the record indexes below
     * wrap after 2^32, which a 1 kHz stream reaches in 49 days, and a
     * datagram from half the space ahead is not taken for the newest.
     * Nor is one a window or more ahead: believed, it would make every
     * real datagram after it late. */
    if ((int32_t)(seq - s->seq_next) >= 0) {
        uint32_t skip = seq - s->seq_next;
        if (skip >= SP_STREAM_SEQ_WIN)
            return SP_STREAM_FAR;
        /* Believed only as far as the budget (SP_STREAM_JUMP_MAX): the
         * seq alone cannot tell a forged jump from real loss; a tag can. */
        if (!s->verified) {
            jump_refill(s, now_ms);
            if (skip > s->jump_left)
                return SP_STREAM_FAR;
            s->jump_left -= skip;
        }
        for (uint32_t q = s->seq_next; q != seq; q++)
            set_bit(s, q, false);
        s->lost_dgrams += skip;
        s->seq_next = seq + 1;
        set_bit(s, seq, true);
        return SP_STREAM_TAKEN;
    }
    if (s->seq_next - seq > SP_STREAM_SEQ_WIN)
        return SP_STREAM_LATE;
    if (seen_bit(s, seq))
        return SP_STREAM_DUP;
    set_bit(s, seq, true);
    s->lost_dgrams--;
    return SP_STREAM_TAKEN;
}

/* ---- records ----------------------------------------------------------- */

struct batch_ctx {
    struct sp_stream *s;
    sp_stream_record_fn fn;
    void *ctx;
    uint16_t cpu;
};

/* A record the raw profile could not carry costs that record: counted,
 * not delivered, and the rest of its batch still is. */
static void deliver(void *ctx, const struct pstr_record *r)
{
    struct batch_ctx *b = ctx;
    if (r->pid > PRAW_PID_MAX) {
        b->s->bad_records++;
        return;
    }
    if (b->fn)
        b->fn(b->ctx, b->cpu, r);
}

/* True when index is so far past what cpu c expects next that no loss
 * explains it (SP_STREAM_REC_JUMP). */
static bool index_far(const struct sp_stream_cpu *c, uint32_t index)
{
    return (int32_t)(index - c->next) > 0 && index - c->next >= SP_STREAM_REC_JUMP;
}

static void note_cpu(struct sp_stream *s, uint16_t cpu)
{
    s->cpus[cpu].seen = true;
    if (cpu + 1u > s->ncpus)
        s->ncpus = cpu + 1u;
}

/* Records [first, first + count) of one CPU: past its next, the skipped
 * ones are lost; before it, a late batch fills a gap counted earlier. */
static void count_records(struct sp_stream *s, struct sp_stream_cpu *c,
                          uint32_t first, uint32_t count)
{
    uint32_t end = first + count;
    if ((int32_t)(first - c->next) >= 0) {
        c->lost += first - c->next;
        s->lost_records += first - c->next;
        c->next = end;
    } else {
        /* Only the part before next was counted lost; a part past it
         * (a batch that straddles next cannot come from the encoder,
         * but a reader takes what it is given) moves next on. */
        uint32_t filled = ((int32_t)(end - c->next) <= 0 ? end : c->next) - first;
        if (filled > c->lost)
            filled = (uint32_t)c->lost;
        c->lost -= filled;
        s->lost_records -= filled;
        if ((int32_t)(end - c->next) > 0)
            c->next = end;
    }
    c->received += count;
    s->records += count;
}

static int take_batch(struct sp_stream *s, const struct pstr_hdr *h, uint64_t now_ms,
                      sp_stream_record_fn fn, void *ctx)
{
    struct pstr_batch b;
    if (h->cpu >= SP_STREAM_CPUS)
        return SP_STREAM_MALFORMED;
    struct batch_ctx bc = { s, fn, ctx, h->cpu };
    if (pstr_batch_parse(h, &b, NULL, NULL) != 0)
        return SP_STREAM_MALFORMED;
    if (index_far(cpu_peek(s, h->cpu), b.first))
        return SP_STREAM_FAR;
    struct sp_stream_cpu *c = cpu_at(s, h->cpu);
    if (!c)
        return SP_STREAM_MALFORMED;     /* out of memory: not taken, counted */
    int r = seq_take(s, h->seq, now_ms);
    if (r != SP_STREAM_TAKEN)
        return r;
    pstr_batch_parse(h, &b, deliver, &bc);
    note_cpu(s, h->cpu);
    count_records(s, c, b.first, h->count);
    if (b.drops_total > c->drops_total)
        c->drops_total = b.drops_total;
    return SP_STREAM_TAKEN;
}

/* ---- META and END ------------------------------------------------------ */

static void put_task(void *ctx, uint32_t pid, const char *name)
{
    struct sp_stream *s = ctx;
    size_t i = 0;
    while (i < s->ntasks && s->tasks[i].pid != pid)
        i++;
    if (i == s->ntasks) {
        if (s->ntasks == SP_STREAM_TASKS_MAX)
            return;                 /* the name stays unknown: the records count */
        if (s->ntasks == s->captasks) {
            size_t cap = s->captasks ? s->captasks * 2 : 32;
            struct sp_stream_task *t = realloc(s->tasks, cap * sizeof *t);
            if (!t)
                return;             /* the name stays unknown: harmless */
            s->tasks = t;
            s->captasks = cap;
        }
        s->ntasks++;
        s->tasks[i].pid = pid;
    }
    strncpy(s->tasks[i].name, name, PSTR_TASK_MAX);
    s->tasks[i].name[PSTR_TASK_MAX] = 0;
}

static int take_meta(struct sp_stream *s, const struct pstr_hdr *h, uint64_t now_ms)
{
    struct pstr_meta m;
    if (pstr_meta_parse(h, &m, NULL, NULL) != 0)
        return SP_STREAM_MALFORMED;
    /* The raw profile's header ends its source at " samples=": a source
     * holding it could not be written out. */
    if (strstr(m.source, " samples="))
        return SP_STREAM_MALFORMED;
    /* Another build id under the same stream id is another kernel, or a
     * forgery: nothing is taken, and the caller finds out which. */
    if (s->have_meta && strcmp(m.build_id, s->meta.build_id) != 0) {
        s->other_builds++;
        memcpy(s->other_build_id, m.build_id, sizeof s->other_build_id);
        return SP_STREAM_OTHER_BUILD;
    }
    int r = seq_take(s, h->seq, now_ms);
    if (r != SP_STREAM_TAKEN)
        return r;
    if (!s->have_meta) {
        s->meta = m;
        s->have_meta = true;
    }
    pstr_meta_parse(h, &m, put_task, s);
    return SP_STREAM_TAKEN;
}

struct end_ctx {
    struct sp_stream *s;
    bool far;
};

static void end_check(void *ctx, const struct pstr_end_cpu *e)
{
    struct end_ctx *x = ctx;
    if (e->cpu < SP_STREAM_CPUS && index_far(cpu_peek(x->s, e->cpu), e->records))
        x->far = true;
}

static void end_cpu(void *ctx, const struct pstr_end_cpu *e)
{
    struct sp_stream *s = ((struct end_ctx *)ctx)->s;
    struct sp_stream_cpu *c = e->cpu < SP_STREAM_CPUS ? cpu_at(s, e->cpu) : NULL;
    if (!c)
        return;
    note_cpu(s, e->cpu);
    /* Records the CPU sent after its last batch that came. */
    if ((int32_t)(e->records - c->next) > 0) {
        c->lost += e->records - c->next;
        s->lost_records += e->records - c->next;
        c->next = e->records;
    }
    c->drops_total = e->drops_total;
}

static int take_end(struct sp_stream *s, const struct pstr_hdr *h, uint64_t now_ms)
{
    uint8_t reason;
    struct end_ctx e = { s, false };
    if (pstr_end_parse(h, &reason, end_check, &e) != 0)
        return SP_STREAM_MALFORMED;
    if (e.far)
        return SP_STREAM_FAR;
    int r = seq_take(s, h->seq, now_ms);
    if (r != SP_STREAM_TAKEN)
        return r;
    pstr_end_parse(h, &reason, end_cpu, &e);
    s->ended = true;
    s->end_reason = reason;
    s->end_seq = h->seq;
    /* Nothing real is numbered past the END: the gaps counted there were
     * opened by something else (a forged seq ahead), not lost. */
    for (uint32_t q = h->seq + 1; q != s->seq_next; q++)
        if (!seen_bit(s, q))
            s->lost_dgrams--;
    return SP_STREAM_TAKEN;
}

int sp_stream_take(struct sp_stream *s, const struct pstr_hdr *h, uint64_t now_ms,
                 sp_stream_record_fn fn, void *ctx)
{
    /* The END is the stream's last datagram: anything numbered after it
     * belongs to no stream this one knows (a late one before it counts). */
    if (s->ended && (int32_t)(h->seq - s->end_seq) > 0)
        return SP_STREAM_AFTER_END;
    int r;
    switch (h->type) {
    case PSTR_BATCH: r = take_batch(s, h, now_ms, fn, ctx); break;
    case PSTR_META: r = take_meta(s, h, now_ms); break;
    case PSTR_END: r = take_end(s, h, now_ms); break;
    default: r = SP_STREAM_MALFORMED; break;
    }
    if (r == SP_STREAM_MALFORMED)
        s->malformed++;
    else if (r == SP_STREAM_DUP)
        s->dups++, s->end_dups += h->type == PSTR_END;
    else if (r == SP_STREAM_LATE)
        s->late++;
    else if (r == SP_STREAM_FAR)
        s->far++;
    if (r != SP_STREAM_TAKEN)
        return r;
    if (!s->datagrams++) {
        s->first_ms = now_ms;
        s->first_t_ns = s->last_t_ns = h->t_ns;
    }
    s->last_ms = now_ms;
    if (h->t_ns > s->last_t_ns)
        s->last_t_ns = h->t_ns;
    if (h->t_ns < s->first_t_ns)
        s->first_t_ns = h->t_ns;
    return SP_STREAM_TAKEN;
}

void sp_stream_finish(struct sp_stream *s)
{
    if (!s->ended)
        s->end_missing = true;
}

uint64_t sp_stream_kernel_ms(const struct sp_stream *s)
{
    return (s->last_t_ns - s->first_t_ns) / 1000000;
}

uint64_t sp_stream_drops(const struct sp_stream *s)
{
    uint64_t d = 0;
    for (unsigned i = 0; i < s->ncpus; i++)
        d += s->cpus[i].drops_total;
    return d;
}

const char *sp_stream_task(const struct sp_stream *s, uint32_t pid)
{
    for (size_t i = 0; i < s->ntasks; i++)
        if (s->tasks[i].pid == pid)
            return s->tasks[i].name;
    return NULL;
}

const char *sp_stream_end_reason(uint8_t reason)
{
    switch (reason) {
    case PSTR_END_STOPPED: return "stopped";
    case PSTR_END_TIMEOUT: return "timeout (no keep-alive)";
    case PSTR_END_ELAPSED: return "elapsed";
    default: return "an unknown reason";
    }
}
