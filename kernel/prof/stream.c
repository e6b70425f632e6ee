/* kernel/prof/stream.c: the profiler's samples sent to a collector as
 * they are taken, in uapi/profile_stream.h's datagrams, through the sink
 * the caller gave (kernel/prof/stream.h).
 *
 * The sample path does not change: each CPU's sampler writes its own
 * ring (kernel/prof/ring.h). One task, spawned per stream, does
 * everything else: every drain interval (stream.drain_ms) it copies each CPU's new
 * records into full BATCH datagrams and hands them to the sink (and while
 * a ring is busy it also looks every half interval, draining at
 * once a ring half full); about every second a META with the tasks
 * alive. It ends the stream on `profile stop`, when no keep-alive came
 * for PSTR_KEEPALIVE_MS, or when the length asked for has passed: the
 * gate closes, the samplers are waited out, the rings drained a last
 * time, and an END with each CPU's totals goes out three times.
 *
 * This file knows no network and says nothing: the command layer
 * (kernel/cmd/profile_stream.c) binds the sink to the UDP shell client
 * that asked, and words what the control calls return (struct
 * prof_stream_facts) for the collector and for people. A stream cannot be
 * aimed at a third party: until its destination's first keep-alive
 * confirms it (sk_is_peer: asked from the very address the datagrams go
 * to), it sends its first META and nothing else, and one never confirmed
 * ends without an END. Keep-alives from anywhere else are refused, and
 * the stream's id is named only to its destination, so no one else can
 * hold a stream on someone. One whose collector went away ends by itself
 * instead of filling the network.
 *
 * State: the stream's identity (id, sink, length) is written by the
 * starting command before the task exists and not again until the stream
 * is over (stream.running, under stream.lock, says which). The task
 * alone owns the sequence number, the writer and the per-CPU accounting.
 * The keep-alive stamp, the confirmation and the stop request are single
 * words other shell tasks write; the counters are relaxed atomics other
 * tasks read.
 *
 * Profiler core: prefix prof_ and PROF_. */
#include "kernel/prof/stream.h"
#include "hal/cpu.h"
#include "hal/entropy.h"
#include "hal/pmu.h"
#include "kernel/buildid.h"
#include "kernel/irqname.h"
#include "kernel/prof/ring.h"
#include "kernel/prof/session.h"
#include "kernel/prof/stream_encode.h"
#include "kernel/spinlock.h"
#include "kernel/task.h"
#include "kernel/time.h"
#include "kernel/timer.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "mm/heap.h"
#include "uapi/profile_stream.h"

/* How often the task looks at the rings while they fill fast: half the
 * drain interval (stream.drain_ms, kernel/prof/stream.h). Each look is a
 * wakeup and two context switches on a CPU that is sampling, so it is the
 * stream's fixed cost; the rings are sized for four drain intervals at
 * the source's rate, so a ring that fills at the rate it was sized for is
 * half full only after two, and one filling four times as fast still has
 * half an interval of room when a look finds it half full. Every second
 * look is the drain. When no ring held more than an eighth of itself at
 * the last drain, the next look is the next drain: a ring would have to
 * fill four times as fast as it did to be half full by then (see
 * prof_stream_run). Waiting for a stream to end, `profile stop` looks
 * every PROF_STREAM_STOP_POLL_MS. */
#define PROF_STREAM_STOP_POLL_MS   25
#define PROF_STREAM_META_MS        1000      /* a META about this often */
#define PROF_STREAM_SEND_WAIT_NS   20000000ull   /* a datagram's retries on a full TX ring */
#define PROF_STREAM_STOP_WAIT_MS   3000      /* `profile stop` waits this long for the END */
#define PROF_STREAM_END_COPIES     3
#define PROF_STREAM_TASKS_MAX      64        /* tasks a META lists (what fits, at most) */
#define NS_PER_MS         1000000ull

/* What a trace stream's records are named with (stream_encode.h). */
static const struct prof_stream_trace_names prof_stream_tn = { task_is_idle, irqname_get };
struct prof_stream_cpu {                     /* the task's own */
    uint32_t sent;                  /* stream records put in batches: the next
                                       batch's first (an off-CPU interval and
                                       its waker's chain, two in the ring, are
                                       one) */
    uint32_t drops_sent;            /* drops_total as last sent */
    struct pstr_writer *w;          /* its batch: stream.writers' */
    void *reserved;                 /* the sink's buffer w encodes into, or NULL */
    bool open;                      /* w holds a batch begun and not sent */
    uint32_t opened;                /* the drain (stream.drains) that began it */
};

static struct {
    spinlock_t lock;                /* running and the identity below */
    bool running;
    bool ending;                    /* its END is being sent: over, for
                                       whoever already has it */
    uint32_t id, ms;
    unsigned drain_ms;              /* PROF_STREAM_DRAIN_MS, or _OFF_MS */
    struct prof_sink sink;          /* where the datagrams go */
    int pid;
    bool pmu;
    unsigned what;                  /* PROF_STREAM_CPU | _OFF; _HEAP, _LOCK or _TRACE alone */
    uint32_t heap_rate;             /* _HEAP: the allocator's rate, as the start was given */
    unsigned ncpus;
    uint16_t cpus[MAX_CPUS];        /* the CPUs streaming, ncpus of them */
    uint64_t start_ns;
    uint64_t keepalive_ns;          /* atomic: the last keep-alive (or start) */
    bool confirmed;                 /* atomic: a keep-alive from the destination came */
    unsigned stop;                  /* atomic: `profile stop` asked */
    unsigned serial;                /* streams started since boot */
    struct prof_stream_counters c;
    /* The last stream that ended, as it ended (under lock): what `profile
     * stop` and `profile status` report, even once another has started. */
    struct prof_stream_facts last;  /* sf_state NEVER before the first */
    struct prof_sink last_sink;     /* whom its id may be shown to */
    /* The task's alone. */
    uint32_t seq;
    uint32_t drains;                /* drains so far */
    struct prof_stream_cpu cpu[MAX_CPUS];
    struct pstr_writer *writers;    /* one per CPU streaming, kmalloc'd by the start */
    struct pstr_writer w;           /* META and END: 1.4 KB, kept off the task stack */
    struct { uint32_t pid; char name[TASK_NAME_MAX]; } tasks[PROF_STREAM_TASKS_MAX];
    unsigned ntasks;
} stream = { .lock = SPINLOCK_INIT("prof-stream") };

#define PROF_STREAM_ADD(field, n) __atomic_fetch_add(&stream.c.field, (uint64_t)(n), __ATOMIC_RELAXED)
#define PROF_STREAM_GET(field) __atomic_load_n(&stream.c.field, __ATOMIC_RELAXED)

/* The running (or last) stream's counters as they stand. */
static struct prof_stream_counters prof_stream_counts(void)
{
    struct prof_stream_counters c = {
        PROF_STREAM_GET(records), PROF_STREAM_GET(datagrams), PROF_STREAM_GET(send_failed),
        PROF_STREAM_GET(drops), PROF_STREAM_GET(ka_refused),
    };
    return c;
}

/* ---- facts, for the control calls and the stream's own end ------------ */

/* Whether the command running now was asked by sk's destination. */
static bool prof_stream_is_peer(const struct prof_sink *sk)
{
    return sk->sk_is_peer && sk->sk_is_peer(sk);
}

/* f about the stream of sink sk, id. */
static void prof_stream_facts_of(struct prof_stream_facts *f, uint8_t state, uint32_t id,
                                 const struct prof_sink *sk)
{
    f->sf_state = state;
    f->sf_id = id;
    f->sf_addr = sk->sk_addr;
    strlcpy(f->sf_to, sk->sk_name, sizeof f->sf_to);
    f->sf_peer = prof_stream_is_peer(sk);
}

/* f: the running stream as it stands; under stream.lock. */
static void prof_stream_facts_running(struct prof_stream_facts *f)
{
    uint64_t now = time_ns();
    int64_t ka = (int64_t)(now - __atomic_load_n(&stream.keepalive_ns, __ATOMIC_RELAXED));
    prof_stream_facts_of(f, stream.ending ? PROF_STREAM_ENDING_NOW : PROF_STREAM_RUNNING,
                         stream.id, &stream.sink);
    f->sf_counted = true;
    f->sf_what = stream.what;
    f->sf_ncpus = stream.ncpus;
    f->sf_ms = stream.ms;
    f->sf_age_ms = (now - stream.start_ns) / NS_PER_MS;
    f->sf_confirmed = __atomic_load_n(&stream.confirmed, __ATOMIC_RELAXED);
    f->sf_ka_ms = ka > 0 ? (uint64_t)ka / NS_PER_MS : 0;
    f->sf_c = prof_stream_counts();
}

/* f: the last stream as it ended, or none since boot; under stream.lock. */
static void prof_stream_facts_last(struct prof_stream_facts *f)
{
    *f = stream.last;
    f->sf_peer = f->sf_state == PROF_STREAM_ENDED && prof_stream_is_peer(&stream.last_sink);
}

/* ---- sending: the stream task ------------------------------------------ */

/* One datagram to the collector, through the sink. A sink with no room
 * right now (a full TX ring, a next hop not yet resolved) is retried for
 * PROF_STREAM_SEND_WAIT_NS, then the datagram is counted lost (the collector sees
 * the gap in seq): a stream never blocks on its sink. */
static void prof_stream_send(const void *d, size_t len)
{
    uint64_t give_up = time_ns() + PROF_STREAM_SEND_WAIT_NS;
    for (;;) {
        int rc = stream.sink.sk_send(&stream.sink, d, len);
        if (rc == PROF_SINK_SENT) {
            PROF_STREAM_ADD(datagrams, 1);
            return;
        }
        if (rc != PROF_SINK_AGAIN || time_ns() > give_up) {
            PROF_STREAM_ADD(send_failed, 1);
            return;
        }
        yield();
    }
}

/* Finish w's datagram as it stands and send it, numbered now. A
 * reserved buffer is committed once: no retry, it is the sink's again
 * either way. */
static void prof_stream_send_writer(struct pstr_writer *w, void *reserved)
{
    pstr_stamp(w, stream.seq, time_ns());
    size_t len = pstr_finish(w);
    if (!reserved)
        prof_stream_send(w->buf, len);
    else if (stream.sink.sk_commit(&stream.sink, reserved, len) == PROF_SINK_SENT)
        PROF_STREAM_ADD(datagrams, 1);
    else
        PROF_STREAM_ADD(send_failed, 1);
    stream.seq++;
}

/* A CPU's BATCH is encoded straight into the sink's own buffer where it
 * gives one (sk_reserve: for UDP, the device's transmit buffer), so that
 * it is never copied on its way out; else into the CPU's writer, and
 * sk_send copies it. Its first record is the CPU's next; seq, time and
 * drop counts are written as it goes (prof_stream_send_batch), so that
 * it may stay open from one drain to the next. */
static void prof_stream_begin_batch(struct prof_stream_cpu *c, uint16_t cpu)
{
    uint8_t *b = stream.sink.sk_reserve ? stream.sink.sk_reserve(&stream.sink) : NULL;
    c->reserved = b;
    if (b)
        pstr_begin_in(c->w, b, PSTR_BATCH, cpu, stream.id, 0, 0);
    else
        pstr_begin(c->w, PSTR_BATCH, cpu, stream.id, 0, 0);
    struct pstr_batch head = { c->sent, 0, 0 };
    pstr_batch_head(c->w, &head);
    c->open = true;
    c->opened = stream.drains;
}

/* The CPU's open batch goes, with the drops up to drops (the ring's count
 * since the stream's start) as its head's. */
static void prof_stream_send_batch(struct prof_stream_cpu *c, uint32_t drops)
{
    pstr_batch_drops(c->w, drops - c->drops_sent, drops);
    c->sent += c->w->count;
    PROF_STREAM_ADD(records, c->w->count);
    PROF_STREAM_ADD(drops, drops - c->drops_sent);
    c->drops_sent = drops;
    c->open = false;
    void *b = c->reserved;
    c->reserved = NULL;
    prof_stream_send_writer(c->w, b);
}

/* Under the task-list lock: only copies. */
static void prof_stream_task_one(int pid, const char *name, void *arg)
{
    if (stream.ntasks == PROF_STREAM_TASKS_MAX)
        return;
    stream.tasks[stream.ntasks].pid = (uint32_t)pid;
    strlcpy(stream.tasks[stream.ntasks].name, name, TASK_NAME_MAX);
    stream.ntasks++;
}

/* The META's source, as the windowed run's raw header says it: off-CPU
 * records alone come from the scheduler; heap records from the
 * allocator, at the rate now ("heap allocs rate R", uapi/profile_raw.h:
 * the reader's pprof period; each record's weight was scaled at the rate
 * of its own sample); with CPU samples, the samples' source. */
static void prof_stream_source(char *buf, size_t cap)
{
    if (stream.what & (PROF_STREAM_CPU | PROF_STREAM_TRACE))
        strlcpy(buf, pmu_source_name(), cap);
    else if (stream.what & PROF_STREAM_HEAP)
        prof_heap_source(buf, cap, false, stream.heap_rate);
    else if (stream.what & PROF_STREAM_LOCK)
        strlcpy(buf, "locks", cap);
    else
        strlcpy(buf, "sched", cap);
}

static void prof_stream_send_meta(void)
{
    struct pstr_meta m = {
        .pid = stream.pid == PROF_ALL ? PSTR_PID_ALL : (uint32_t)stream.pid,
        .ms = stream.ms,
        .period_ns = stream.pmu ? PMU_PERIOD_US * 1000u : 1000000000u / TIMER_HZ,
        .cpus = (uint16_t)stream.ncpus,
    };
    strlcpy(m.build_id, build_id(), sizeof m.build_id);
    prof_stream_source(m.source, sizeof m.source);
    stream.ntasks = 0;
    task_for_each_id(prof_stream_task_one, NULL);
    pstr_begin(&stream.w, PSTR_META, 0, stream.id, stream.seq, time_ns());
    pstr_meta_head(&stream.w, &m);
    /* More tasks than one datagram holds: the first ones; a META lists
     * what fits (about 36 tasks of full-length names). */
    for (unsigned i = 0; i < stream.ntasks; i++)
        if (!pstr_add_task(&stream.w, stream.tasks[i].pid, stream.tasks[i].name))
            break;
    prof_stream_send_writer(&stream.w, NULL);
}

/* cpu's new records, into its open batch and as many more as it takes.
 * Batches go full: one that is not stays open until the next drain (or
 * the CPU's drops move, or the stream ends: all), so that a record is
 * sent at the first drain after it is taken, or at the second, and a
 * CPU sampling at 1 kHz sends full datagrams of ~85 records, not one
 * part-filled one a drain: each costs ~1.5k instructions to send,
 * whatever it holds, and more to tag. The ring is read in place
 * (prof_ring_at(cpu, 0) is its first slot; an index is taken modulo its
 * power-of-two capacity), each record encoded straight from its frames,
 * and released once encoded (the datagram is the copy), so that the
 * sampler gets the room back early. A batch is begun for drops alone,
 * so that they are told at this drain, as records are. */
static bool prof_stream_drain_cpu(unsigned k, bool all)
{
    unsigned cpu = stream.cpus[k];
    struct prof_stream_cpu *c = &stream.cpu[cpu];
    uint32_t first;
    uint32_t n = prof_ring_avail(cpu, &first);
    uint32_t drops = prof_ring_drops(cpu);
    bool busy = n > prof_ring_cap(cpu) / 8;
    const struct prof_record *ring = prof_ring_at(cpu, 0);
    uint32_t mask = prof_ring_cap(cpu) - 1;
    uint32_t done = 0;
    bool moved = drops != c->drops_sent;
    if (!c->open && (n || moved))
        prof_stream_begin_batch(c, (uint16_t)cpu);
    bool trace = stream.what & PROF_STREAM_TRACE;
    while (done < n) {
        uint32_t took = trace ? 0 : prof_stream_add_cpu_run(c->w, ring, mask, first + done, n - done);
        if (took) {
            done += took;
            continue;
        }
        took = trace ? prof_stream_add_trace(c->w, &ring[(first + done) & mask], &prof_stream_tn)
                     : prof_stream_add(c->w, ring, mask, first + done, n - done);
        if (took) {
            done += took;
            continue;
        }
        if (c->w->count == 0) {
            /* A record that does not fit even an empty batch (the ring
             * never holds one): skipped, so that the loop ends. */
            done++;
            continue;
        }
        /* Full: its records are the sampler's room again before it is
         * sent (a send may wait for the network), and this record starts
         * the next. */
        prof_ring_release(cpu, first + done);
        prof_stream_send_batch(c, drops);
        prof_stream_begin_batch(c, (uint16_t)cpu);
    }
    prof_ring_release(cpu, first + done);
    if (c->open && (all || moved || c->opened != stream.drains))
        prof_stream_send_batch(c, drops);
    return busy;
}

/* Every streaming CPU's ring; true if one held more than an eighth of
 * itself. The CPUs streaming are listed once at the start (stream.cpus): a
 * look that walked all MAX_CPUS slots, most of them empty, cost ~700
 * instructions. */
static bool prof_stream_drain_all(bool all)
{
    bool busy = false;
    for (unsigned k = 0; k < stream.ncpus; k++)
        busy |= prof_stream_drain_cpu(k, all);
    stream.drains++;
    return busy;
}

static bool prof_stream_any_half_full(void)
{
    for (unsigned k = 0; k < stream.ncpus; k++) {
        uint32_t first, i = stream.cpus[k];
        if (prof_ring_avail(i, &first) >= prof_ring_cap(i) / 2)
            return true;
    }
    return false;
}

static void prof_stream_send_end(uint8_t reason)
{
    pstr_begin(&stream.w, PSTR_END, 0, stream.id, stream.seq, time_ns());
    pstr_end_head(&stream.w, reason);
    for (unsigned k = 0; k < stream.ncpus; k++) {
        unsigned i = stream.cpus[k];
        struct pstr_end_cpu e = { (uint16_t)i, stream.cpu[i].sent, stream.cpu[i].drops_sent };
        if (!pstr_add_end_cpu(&stream.w, &e))
            break;                  /* 113 CPUs fit; MAX_CPUS is 64 */
    }
    size_t len = pstr_finish(&stream.w);
    /* The same seq each time: a copy is not a gap. */
    for (int k = 0; k < PROF_STREAM_END_COPIES; k++)
        prof_stream_send(stream.w.buf, len);
    stream.seq++;
}

/* Why the stream ends now, or 0; under stream.lock, so that a keep-alive
 * either came before (and counts) or finds the stream ending. An
 * unconfirmed stream does not end by its length: once confirmed, a short
 * one still sends what it sampled. Signed differences: a keep-alive that
 * another CPU stamped after this task read now (or by a clock a little
 * ahead of this CPU's) is in the future, not 2^64 ns in the past. */
static uint8_t prof_stream_should_end(uint64_t now)
{
    bool confirmed = __atomic_load_n(&stream.confirmed, __ATOMIC_RELAXED);
    if (__atomic_load_n(&stream.stop, __ATOMIC_ACQUIRE))
        return PSTR_END_STOPPED;
    if (confirmed && stream.ms &&
        (int64_t)(now - stream.start_ns) >= (int64_t)stream.ms * (int64_t)NS_PER_MS)
        return PSTR_END_ELAPSED;
    if ((int64_t)(now - __atomic_load_n(&stream.keepalive_ns, __ATOMIC_RELAXED)) >=
        (int64_t)PSTR_KEEPALIVE_MS * (int64_t)NS_PER_MS)
        return confirmed ? PSTR_END_TIMEOUT : PROF_STREAM_UNCONFIRMED;
    return 0;
}

/* At each look: 0 and *confirmed, or why the stream ends now (and it is
 * marked ending: a keep-alive from here on is not taken). */
static uint8_t prof_stream_look(uint64_t now, bool *confirmed)
{
    unsigned long f = spin_lock(&stream.lock);
    uint8_t reason = prof_stream_should_end(now);
    if (reason)
        stream.ending = true;
    *confirmed = __atomic_load_n(&stream.confirmed, __ATOMIC_RELAXED);
    spin_unlock(&stream.lock, f);
    return reason;
}

static void prof_stream_run(void)
{
    /* The one datagram an unconfirmed stream sends: it tells the
     * destination what is on offer (build id, source) before it asks. */
    prof_stream_send_meta();
    uint64_t last_drain = time_ns(), last_meta = last_drain;
    uint8_t reason;
    bool confirmed;
    const unsigned drain_ms = stream.drain_ms, poll_ms = drain_ms / 2;
    unsigned look_ms = poll_ms;
    for (;;) {
        sleep_ms(look_ms);
        uint64_t now = time_ns();
        if ((reason = prof_stream_look(now, &confirmed)) != 0)
            break;
        /* Until the destination confirms, nothing more goes out: the
         * rings keep the samples (and count the ones they cannot keep)
         * for the first drain after it does. */
        if (!confirmed)
            continue;
        /* Half a look of slack: a look that wakes a little early still
         * drains, so the drains stay every second look. */
        if (now - last_drain >= (uint64_t)(drain_ms - poll_ms / 2) * NS_PER_MS ||
            prof_stream_any_half_full()) {
            /* Quiet rings (at most an eighth full at a drain) are looked
             * at again only at the next drain: at 1 kHz into 512-record
             * rings that is 20 wakeups a second instead of 40. */
            look_ms = prof_stream_drain_all(false) ? poll_ms : drain_ms;
            last_drain = now;
        }
        if (now - last_meta >= PROF_STREAM_META_MS * NS_PER_MS) {
            prof_stream_send_meta();
            last_meta = now;
        }
    }
    prof_session_stream_stop();             /* no ring grows after this */
    /* A stream no one confirmed sends no END either: the samples it
     * kept stay in the rings, which the next run starts afresh. */
    if (confirmed) {
        prof_stream_drain_all(true);
        prof_stream_send_end(reason);
    }
    unsigned long f = spin_lock(&stream.lock);
    prof_stream_facts_running(&stream.last);     /* as it ended */
    stream.last.sf_state = PROF_STREAM_ENDED;
    stream.last.sf_reason = reason;
    stream.last_sink = stream.sink;
    stream.running = false;
    spin_unlock(&stream.lock, f);
    /* Every batch went with the last drain: no writer is open. */
    kfree(stream.writers);
    stream.writers = NULL;
    prof_session_stream_end();
}

static void prof_stream_task(void *arg)
{
    prof_stream_run();
    task_exit();
}

#ifdef SONDE_HOST_TEST
void prof_stream_test_task(void *arg) { prof_stream_run(); }
#endif

/* ---- control: shell tasks, through kernel/cmd/profile_stream.c --------- */
/* A new stream's id: from the entropy source where the machine has one
 * (hal/entropy.h), so that no one can guess it; else unpredictable enough
 * that a rebooted kernel's stream, or the next one, has another: the
 * cycle counter, a count of streams and the build id, mixed (murmur3's
 * finalizer). Never 0. Task context, no lock held (virtio-rng may wait). */
static uint32_t prof_stream_new_id(void)
{
    uint32_t h;
    if (entropy_get(&h, sizeof h) && h)
        return h;
    h = 2166136261u;
    for (const char *s = build_id(); *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    uint64_t c = cycles_now();
    h ^= (uint32_t)c ^ (uint32_t)(c >> 32) * 0x9e3779b9u ^ ++stream.serial * 0x85ebca6bu;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h ? h : 1;
}

void prof_stream_now(struct prof_stream_facts *f)
{
    *f = (struct prof_stream_facts){ 0 };
    unsigned long fl = spin_lock(&stream.lock);
    if (stream.running)
        prof_stream_facts_running(f);
    else
        prof_stream_facts_last(f);
    spin_unlock(&stream.lock, fl);
}

int prof_stream_start(const struct prof_stream_ask *a, struct prof_stream_facts *f,
                      struct prof_err *e)
{
    bool pmu;
    const struct prof_sink *sink = a->sa_sink;
    unsigned what = a->sa_what;
    unsigned drain_ms = what & PROF_STREAM_OFF ? PROF_STREAM_DRAIN_OFF_MS : PROF_STREAM_DRAIN_MS;
    int rc = prof_session_stream_begin_what(a->sa_pid, drain_ms, what, a->sa_heap_rate, &pmu, e);
    if (rc != PROF_OK) {
        prof_stream_now(f);         /* busy: the stream that holds it, if one does */
        f->sf_answer = rc == PROF_EBUSY ? PROF_STREAM_BUSY : PROF_STREAM_REFUSED_START;
        return 1;
    }
    stream.heap_rate = a->sa_heap_rate;
    /* The profiler is ours: no other stream can be starting or running,
     * and the last one's task has let go of everything below. */
    unsigned ncpus = 0;
    uint16_t cpus[MAX_CPUS];
    for (unsigned i = 0; i < MAX_CPUS; i++)
        if (prof_ring_in_window(i))
            cpus[ncpus++] = (uint16_t)i;
    /* A batch writer per CPU: each CPU's batch stays open from one drain
     * to the next (prof_stream_drain_cpu). The last stream's task freed
     * its own before it let go of the profiler. */
    struct pstr_writer *writers = kmalloc((ncpus ? ncpus : 1) * sizeof *writers);
    if (!writers) {
        prof_session_stream_stop();
        prof_session_stream_end();
        prof_stream_now(f);
        f->sf_answer = PROF_STREAM_NO_WRITERS;
        f->sf_ncpus = ncpus;
        return 1;
    }
    uint32_t id = prof_stream_new_id();
    unsigned long fl = spin_lock(&stream.lock);
    stream.id = id;
    stream.sink = *sink;
    stream.ms = a->sa_ms;
    stream.drain_ms = drain_ms;
    stream.pid = a->sa_pid;
    stream.pmu = pmu;
    stream.what = what;
    stream.ncpus = ncpus;
    memcpy(stream.cpus, cpus, sizeof cpus);
    stream.start_ns = time_ns();
    stream.seq = 0;
    memset(&stream.cpu, 0, sizeof stream.cpu);
    stream.writers = writers;
    stream.drains = 0;
    for (unsigned k = 0; k < ncpus; k++)
        stream.cpu[cpus[k]].w = &writers[k];
    memset(&stream.c, 0, sizeof stream.c);
    __atomic_store_n(&stream.keepalive_ns, stream.start_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&stream.confirmed, sink->sk_confirmed, __ATOMIC_RELAXED);
    __atomic_store_n(&stream.stop, 0, __ATOMIC_RELAXED);
    stream.running = true;
    stream.ending = false;
    *f = (struct prof_stream_facts){ 0 };
    prof_stream_facts_running(f);
    spin_unlock(&stream.lock, fl);
    prof_session_set_busy_note(a->sa_note);
    if (!task_spawn("profstream", prof_stream_task, NULL, TASK_ANY_CPU, 0)) {
        prof_session_stream_stop();
        fl = spin_lock(&stream.lock);
        stream.running = false;         /* last_*: still the last stream that ran */
        stream.writers = NULL;
        spin_unlock(&stream.lock, fl);
        kfree(writers);
        prof_session_stream_end();
        prof_stream_now(f);
        f->sf_answer = PROF_STREAM_NO_TASK;
        return 1;
    }
    /* Asked from elsewhere than the destination (another port of the same
     * host): f->sf_peer is false, the id is not told, and the stream
     * waits for the destination's keep-alive as any other does. */
    return 0;
}

/* Wait, at most PROF_STREAM_STOP_WAIT_MS, until stream id is no longer running;
 * true once it is not. */
static bool prof_stream_wait_ended(uint32_t id)
{
    for (unsigned waited = 0;; waited += PROF_STREAM_STOP_POLL_MS) {
        unsigned long f = spin_lock(&stream.lock);
        bool running = stream.running && stream.id == id;
        spin_unlock(&stream.lock, f);
        if (!running)
            return true;
        if (waited >= PROF_STREAM_STOP_WAIT_MS)
            return false;
        sleep_ms(PROF_STREAM_STOP_POLL_MS);
    }
}

int prof_stream_stop(struct prof_stream_facts *f)
{
    *f = (struct prof_stream_facts){ 0 };
    /* The flag is set under the lock, for the stream seen running: a stop
     * that raced with that stream's end must not stop the next one. */
    unsigned long fl = spin_lock(&stream.lock);
    bool running = stream.running;
    uint32_t id = stream.id;
    struct prof_sink sk = stream.sink;
    if (running)
        __atomic_store_n(&stream.stop, 1, __ATOMIC_RELEASE);
    else
        prof_stream_facts_last(f);
    spin_unlock(&stream.lock, fl);
    if (!running) {
        f->sf_answer = PROF_STREAM_NONE;
        return 1;
    }
    /* The task notices at its next look, within a drain interval; the
     * final drain and the END take a moment more. The answer waits for
     * them. */
    if (!prof_stream_wait_ended(id)) {
        prof_stream_now(f);
        f->sf_answer = PROF_STREAM_ENDING;
        return 1;
    }
    fl = spin_lock(&stream.lock);
    if (stream.last.sf_id == id)
        prof_stream_facts_last(f);
    else                            /* another ended it and one more ran since */
        prof_stream_facts_of(f, PROF_STREAM_ENDED, id, &sk);
    spin_unlock(&stream.lock, fl);
    return 0;
}

int prof_stream_keepalive(uint32_t v, struct prof_stream_facts *f)
{
    *f = (struct prof_stream_facts){ 0 };
    unsigned long fl = spin_lock(&stream.lock);
    bool running = stream.running, ending = stream.ending;
    uint32_t id = stream.id;
    /* Only the destination keeps a stream alive: anyone else who learnt
     * (or guessed) the id would otherwise hold it on the destination. */
    bool peer = running && prof_stream_is_peer(&stream.sink);
    if (running && !peer)
        PROF_STREAM_ADD(ka_refused, 1);
    if (peer && !ending && id == v) {
        __atomic_store_n(&stream.keepalive_ns, time_ns(), __ATOMIC_RELAXED);
        __atomic_store_n(&stream.confirmed, true, __ATOMIC_RELAXED);
    }
    if (running)
        prof_stream_facts_running(f);
    else
        prof_stream_facts_last(f);
    spin_unlock(&stream.lock, fl);
    f->sf_answer = !running ? PROF_STREAM_NONE : !peer ? PROF_STREAM_NOT_PEER
                 : id != v ? PROF_STREAM_OTHER : ending ? PROF_STREAM_ENDING : PROF_STREAM_DONE;
    return f->sf_answer != PROF_STREAM_DONE;
}

int prof_stream_status(struct prof_stream_facts *f)
{
    unsigned long fl = spin_lock(&stream.lock);
    bool ending = stream.running && stream.ending;
    uint32_t id = stream.id;
    spin_unlock(&stream.lock, fl);
    /* A stream whose END is on its way is over for whoever received it
     * (a collector asks right after): the answer waits for its summary. */
    if (ending)
        prof_stream_wait_ended(id);
    prof_stream_now(f);
    return 0;
}
