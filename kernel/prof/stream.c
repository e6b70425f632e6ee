/* kernel/profstream.c: `profile stream`, the profiler's samples sent to
 * a collector as they are taken, in uapi/profile_stream.h's datagrams.
 *
 * The sample path does not change: each CPU's sampler writes its own ring
 * (kernel/profiler.c) and knows nothing of the network. One task, spawned
 * per stream, does everything else: every PROFSTREAM_DRAIN_MS it copies
 * each CPU's new records into full BATCH datagrams and sends them (and
 * while a ring is busy it also looks every PS_POLL_MS, draining at once
 * a ring half full); about every second a META with the tasks alive.
 * It ends the stream on `profile stop`, when no keep-alive came for
 * PSTR_KEEPALIVE_MS, or when the length asked for has passed: sampling
 * stops, the samplers are waited out, the rings drained a last time, and
 * an END with each CPU's totals goes out three times.
 *
 * The collector is the UDP-shell client that asked (udpshell_requester):
 * a stream cannot be aimed at a third party, and one whose collector
 * went away ends by itself instead of filling the network.
 *
 * State: the stream's identity (id, destination, length) is written by
 * the starting command before the task exists and not again until the
 * stream is over (ps.running, under ps.lock, says which). The task alone
 * owns the sequence number, the writer and the per-CPU accounting. The
 * keep-alive stamp and the stop request are single words other shell
 * tasks write; the counters are relaxed atomics other tasks read. */
#include "kernel/profstream.h"
#include "hal/cpu.h"
#include "hal/pmu.h"
#include "kernel/buildid.h"
#include "kernel/profiler.h"
#include "kernel/profiler_internal.h"
#include "kernel/sched.h"
#include "kernel/spinlock.h"
#include "kernel/task.h"
#include "kernel/time.h"
#include "kernel/timer.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "net/net.h"
#include "net/udpshell.h"
#include "uapi/profile_stream.h"

/* How often the task looks at the rings while they fill fast: half the
 * drain interval. Each look is a wakeup and two context switches on a
 * CPU that is sampling, so it is the stream's fixed cost; the rings are
 * sized for four drain intervals at the source's rate, so a ring that
 * fills at the rate it was sized for is half full only after two, and one
 * filling four times as fast still has 25 ms of room when a look finds it
 * half full. Every second look is the drain. When no ring held more than
 * an eighth of itself at the last drain, the next look is the next drain:
 * a ring would have to fill four times as fast as it did to be half full
 * by then (see ps_run). */
#define PS_POLL_MS        (PROFSTREAM_DRAIN_MS / 2)
#define PS_META_MS        1000      /* a META about this often */
#define PS_SEND_WAIT_NS   20000000ull   /* a datagram's retries on a full TX ring */
#define PS_STOP_WAIT_MS   3000      /* `profile stop` waits this long for the END */
#define PS_END_COPIES     3
#define PS_TASKS_MAX      64        /* tasks a META lists (what fits, at most) */
#define NS_PER_MS         1000000ull

_Static_assert(PROFILER_FRAMES == PSTR_FRAMES, "a record's frames fit a stream record");
_Static_assert(sizeof(uintptr_t) == sizeof(uint64_t), "a ring record's frames are sent as they are");

struct ps_counters {                /* relaxed atomics: statistics */
    uint64_t records, datagrams, send_failed, drops;
};

struct ps_cpu {                     /* the task's own */
    uint32_t delivered;             /* records drained: the next batch's first */
    uint32_t drops_sent;            /* drops_total as last sent */
    bool held;                      /* a drain kept back records before held_end */
    uint32_t held_end;
};

static struct {
    spinlock_t lock;                /* running and the identity below */
    bool running;
    bool ending;                    /* its END is being sent: over, for
                                       whoever already has it */
    uint32_t id, ip, ms;
    uint16_t port;
    int pid;
    bool pmu;
    unsigned ncpus;
    uint16_t cpus[MAX_CPUS];        /* the CPUs streaming, ncpus of them */
    uint64_t start_ns;
    char note[64];                  /* "streaming id 0x... to ip:port" */
    uint64_t keepalive_ns;          /* atomic: the last keep-alive (or start) */
    unsigned stop;                  /* atomic: `profile stop` asked */
    unsigned serial;                /* streams started since boot */
    struct ps_counters c;
    /* The last stream that ended, as it ended (under lock): what `profile
     * stop` and `profile status` report, even once another has started. */
    uint32_t last_id;
    uint8_t last_reason;
    struct ps_counters last_c;
    /* The task's alone. */
    uint32_t seq;
    struct ps_cpu cpu[MAX_CPUS];
    struct pstr_writer w;           /* 1.4 KB: kept off the task stack */
    struct { uint32_t pid; char name[TASK_NAME_MAX]; } tasks[PS_TASKS_MAX];
    unsigned ntasks;
} ps = { .lock = SPINLOCK_INIT };

#define PS_ADD(field, n) __atomic_fetch_add(&ps.c.field, (uint64_t)(n), __ATOMIC_RELAXED)
#define PS_GET(field) __atomic_load_n(&ps.c.field, __ATOMIC_RELAXED)

static const char *ps_reason_name(uint8_t r)
{
    switch (r) {
    case PSTR_END_STOPPED: return "stopped";
    case PSTR_END_TIMEOUT: return "no keep-alive for 5 s";
    case PSTR_END_ELAPSED: return "length reached";
    default:               return "running";
    }
}

/* ---- sending: the stream task ------------------------------------------ */

/* One datagram to the collector. A full TX ring or an unresolved next hop
 * is retried for PS_SEND_WAIT_NS, then the datagram is counted lost (the
 * collector sees the gap in seq): a stream never blocks on the network. */
static void ps_send(const void *d, size_t len)
{
    uint64_t give_up = time_ns() + PS_SEND_WAIT_NS;
    for (;;) {
        int rc = udp_send(ps.ip, PROFSTREAM_SRC_PORT, ps.port, d, len);
        if (rc == 0 || rc == NET_QUEUED) {  /* queued: sent once ARP answers */
            PS_ADD(datagrams, 1);
            return;
        }
        if ((rc != NET_ERR_NOBUF && rc != NET_ERR_NOARP) || time_ns() > give_up) {
            PS_ADD(send_failed, 1);
            return;
        }
        yield();
    }
}

/* Finish the writer's datagram, send it and count its seq. */
static void ps_send_writer(void)
{
    size_t len = pstr_finish(&ps.w);
    ps_send(ps.w.buf, len);
    ps.seq++;
}

/* Under the task-list lock: only copies. */
static void ps_task_one(struct task *t, void *arg)
{
    if (ps.ntasks == PS_TASKS_MAX)
        return;
    ps.tasks[ps.ntasks].pid = (uint32_t)t->pid;
    memcpy(ps.tasks[ps.ntasks].name, t->name, TASK_NAME_MAX);
    ps.tasks[ps.ntasks].name[TASK_NAME_MAX - 1] = 0;
    ps.ntasks++;
}

static void ps_send_meta(void)
{
    struct pstr_meta m = {
        .pid = ps.pid == PROFILER_ALL ? PSTR_PID_ALL : (uint32_t)ps.pid,
        .ms = ps.ms,
        .period_ns = ps.pmu ? PMU_PERIOD_US * 1000u : 1000000000u / TIMER_HZ,
        .cpus = (uint16_t)ps.ncpus,
    };
    strlcpy(m.build_id, build_id(), sizeof m.build_id);
    strlcpy(m.source, pmu_source_name(), sizeof m.source);
    ps.ntasks = 0;
    task_for_each(ps_task_one, NULL);
    pstr_begin(&ps.w, PSTR_META, 0, ps.id, ps.seq, time_ns());
    pstr_meta_head(&ps.w, &m);
    /* More tasks than one datagram holds: the first ones; a META lists
     * what fits (about 36 tasks of full-length names). */
    for (unsigned i = 0; i < ps.ntasks; i++)
        if (!pstr_add_task(&ps.w, ps.tasks[i].pid, ps.tasks[i].name))
            break;
    ps_send_writer();
}

/* A ring record's depth as sent: always 1..PSTR_FRAMES (frame 0 is the
 * pc), clamped in case it ever is not, so that the encoder never refuses
 * a record and the count of what fits below agrees with it. */
static unsigned ps_depth(const struct prof_record *pr)
{
    unsigned d = pr->pr_depth;
    return d < 1 || d > PSTR_FRAMES ? 1 : d;
}

/* cpu's new records, in as many BATCHes as it takes; an empty batch when
 * only the drop count moved. Datagrams go full: a drain keeps back the
 * records of a last, part-filled one (encoded, but not released: the
 * next drain encodes them again, cheaper than working out beforehand
 * where the datagrams would end), unless the CPU's drops moved or it
 * holds records kept back by the drain before (all: send everything, as
 * the stream ends). So a record is sent at the first drain after it is
 * taken, or at the second, and a CPU sampling at ~100 Hz sends one
 * datagram of ~10 records every second drain, not one of ~5 at every
 * drain: each datagram costs ~2k instructions to send, whatever it holds. Each datagram's records are
 * released as soon as they are encoded (the datagram is the copy),
 * before the send, so the sampler gets the room back early. The ring is
 * read in place (prof_ring_at(cpu, 0) is its first slot; an index is
 * taken modulo its power-of-two capacity), each record encoded straight
 * from its frames. */
static bool ps_drain_cpu(unsigned cpu, bool all)
{
    struct ps_cpu *c = &ps.cpu[cpu];
    uint32_t first;
    uint32_t n = prof_ring_avail(cpu, &first);
    uint32_t drops = prof_ring_drops(cpu);
    bool busy = n > prof_ring_cap(cpu) / 8;
    if (n == 0 && drops == c->drops_sent)
        return busy;
    const struct prof_record *ring = prof_ring_at(cpu, 0);
    uint32_t mask = prof_ring_cap(cpu) - 1;
    bool may_hold = !all && drops == c->drops_sent;
    uint32_t done = 0;
    do {
        pstr_begin(&ps.w, PSTR_BATCH, (uint16_t)cpu, ps.id, ps.seq, time_ns());
        struct pstr_batch b = { first + done, drops - c->drops_sent, drops };
        pstr_batch_head(&ps.w, &b);
        for (; done < n; done++) {
            const struct prof_record *pr = &ring[(first + done) & mask];
            if (!pstr_add_frames(&ps.w, (uint32_t)pr->pr_pid, pr->pr_tick ? PSTR_REC_TICK : 0,
                                 (const uint64_t *)pr->pr_frames, ps_depth(pr)))
                break;              /* full: this one starts the next batch */
        }
        /* Part-filled, last, and none of it kept back before: keep it. */
        if (done == n && may_hold && (!c->held || (int32_t)(c->delivered - c->held_end) >= 0)) {
            c->held = true;
            c->held_end = first + n;
            return busy;
        }
        prof_ring_release(cpu, first + done);
        PS_ADD(records, first + done - c->delivered);
        PS_ADD(drops, drops - c->drops_sent);
        c->delivered = first + done;
        c->drops_sent = drops;
        ps_send_writer();
    } while (done < n);
    c->held = false;
    return busy;
}

/* Every streaming CPU's ring; true if one held more than an eighth of
 * itself. The CPUs streaming are listed once at the start (ps.cpus): a
 * look that walked all MAX_CPUS slots, most of them empty, cost ~700
 * instructions. */
static bool ps_drain_all(bool all)
{
    bool busy = false;
    for (unsigned k = 0; k < ps.ncpus; k++)
        busy |= ps_drain_cpu(ps.cpus[k], all);
    return busy;
}

static bool ps_any_half_full(void)
{
    for (unsigned k = 0; k < ps.ncpus; k++) {
        uint32_t first, i = ps.cpus[k];
        if (prof_ring_avail(i, &first) >= prof_ring_cap(i) / 2)
            return true;
    }
    return false;
}

static void ps_send_end(uint8_t reason)
{
    pstr_begin(&ps.w, PSTR_END, 0, ps.id, ps.seq, time_ns());
    pstr_end_head(&ps.w, reason);
    for (unsigned k = 0; k < ps.ncpus; k++) {
        unsigned i = ps.cpus[k];
        struct pstr_end_cpu e = { (uint16_t)i, ps.cpu[i].delivered, ps.cpu[i].drops_sent };
        if (!pstr_add_end_cpu(&ps.w, &e))
            break;                  /* 115 CPUs fit; MAX_CPUS is 64 */
    }
    size_t len = pstr_finish(&ps.w);
    /* The same seq each time: a copy is not a gap. */
    for (int k = 0; k < PS_END_COPIES; k++)
        ps_send(ps.w.buf, len);
    ps.seq++;
}

/* Why the stream ends now, or 0. Signed differences: a keep-alive that
 * another CPU stamped after this task read now (or by a clock a little
 * ahead of this CPU's) is in the future, not 2^64 ns in the past. */
static uint8_t ps_should_end(uint64_t now)
{
    if (__atomic_load_n(&ps.stop, __ATOMIC_ACQUIRE))
        return PSTR_END_STOPPED;
    if (ps.ms && (int64_t)(now - ps.start_ns) >= (int64_t)ps.ms * (int64_t)NS_PER_MS)
        return PSTR_END_ELAPSED;
    if ((int64_t)(now - __atomic_load_n(&ps.keepalive_ns, __ATOMIC_RELAXED)) >=
        (int64_t)PSTR_KEEPALIVE_MS * (int64_t)NS_PER_MS)
        return PSTR_END_TIMEOUT;
    return 0;
}

static void ps_run(void)
{
    ps_send_meta();
    uint64_t last_drain = time_ns(), last_meta = last_drain;
    uint8_t reason;
    unsigned look_ms = PS_POLL_MS;
    for (;;) {
        sleep_ms(look_ms);
        uint64_t now = time_ns();
        if ((reason = ps_should_end(now)) != 0)
            break;
        /* Half a look of slack: a look that wakes a little early still
         * drains, so the drains stay every second look. */
        if (now - last_drain >= (PROFSTREAM_DRAIN_MS - PS_POLL_MS / 2) * NS_PER_MS ||
            ps_any_half_full()) {
            /* Quiet rings (at most an eighth full at a drain) are looked
             * at again only at the next drain: at 1 kHz into 512-record
             * rings that is 20 wakeups a second instead of 40. */
            look_ms = ps_drain_all(false) ? PS_POLL_MS : PROFSTREAM_DRAIN_MS;
            last_drain = now;
        }
        if (now - last_meta >= PS_META_MS * NS_PER_MS) {
            ps_send_meta();
            last_meta = now;
        }
    }
    unsigned long f = spin_lock(&ps.lock);
    ps.ending = true;
    spin_unlock(&ps.lock, f);
    prof_stream_stop();             /* no ring grows after this */
    ps_drain_all(true);
    ps_send_end(reason);
    f = spin_lock(&ps.lock);
    ps.last_id = ps.id;
    ps.last_reason = reason;
    ps.last_c.records = PS_GET(records);
    ps.last_c.datagrams = PS_GET(datagrams);
    ps.last_c.send_failed = PS_GET(send_failed);
    ps.last_c.drops = PS_GET(drops);
    ps.running = false;
    spin_unlock(&ps.lock, f);
    prof_stream_end();
}

static void ps_task(void *arg)
{
    ps_run();
    task_exit();
}

#ifdef SONDE_HOST_TEST
void profstream_test_task(void *arg) { ps_run(); }
#endif

/* ---- the commands: shell tasks -------------------------------------------- */

#define PS_USAGE "profile stream <port> [ms|0] [pid|all]"

/* Unpredictable enough that a rebooted kernel's stream, or the next one,
 * has another id: the cycle counter, a count of streams and the build id,
 * mixed (murmur3's finalizer). Never 0. */
static uint32_t ps_new_id(void)
{
    uint32_t h = 2166136261u;
    for (const char *s = build_id(); *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    uint64_t c = cycles_now();
    h ^= (uint32_t)c ^ (uint32_t)(c >> 32) * 0x9e3779b9u ^ ++ps.serial * 0x85ebca6bu;
    h ^= h >> 16;
    h *= 0x85ebca6bu;
    h ^= h >> 13;
    h *= 0xc2b2ae35u;
    h ^= h >> 16;
    return h ? h : 1;
}

static bool ps_parse_args(int argc, char **argv, uint16_t *port, uint32_t *ms, int *pid,
                          struct printer *p)
{
    uint64_t v;
    if (argc < 3) {
        pr_puts(p, "profile: stream needs a port (usage: " PS_USAGE ")\n");
        return false;
    }
    if (argc > 5) {
        pr_puts(p, "profile: too many arguments (usage: " PS_USAGE ")\n");
        return false;
    }
    if (!parse_u64(argv[2], &v)) {
        pr_printf(p, "profile: '%s' is not a port (1-65535)\n", argv[2]);
        return false;
    }
    if (v < 1 || v > 65535) {
        pr_printf(p, "profile: port %lu out of range (1-65535)\n", (unsigned long)v);
        return false;
    }
    *port = (uint16_t)v;
    *ms = 0;
    if (argc > 3) {
        if (!parse_u64(argv[3], &v)) {
            pr_printf(p, "profile: '%s' is not a stream length (0: until stopped, "
                      "or 1-%u ms)\n", argv[3], PROFSTREAM_MS_MAX);
            return false;
        }
        if (v > PROFSTREAM_MS_MAX) {
            pr_printf(p, "profile: stream length %lu out of range (0: until stopped, "
                      "or 1-%u ms)\n", (unsigned long)v, PROFSTREAM_MS_MAX);
            return false;
        }
        *ms = (uint32_t)v;
    }
    *pid = PROFILER_ALL;
    if (argc > 4 && strcmp(argv[4], "all") != 0) {
        if (!parse_u64(argv[4], &v)) {
            pr_printf(p, "profile: '%s' is not a pid or all\n", argv[4]);
            return false;
        }
        if (v > INT32_MAX || !task_exists((int)v)) {
            pr_printf(p, "profile: pid %lu: no such task\n", (unsigned long)v);
            return false;
        }
        *pid = (int)v;
    }
    return true;
}

static void ps_print_counters(const struct ps_counters *c, struct printer *p)
{
    pr_printf(p, "%lu records in %lu datagrams, %lu dropped, %lu send failures",
              (unsigned long)c->records, (unsigned long)c->datagrams,
              (unsigned long)c->drops, (unsigned long)c->send_failed);
}

/* The running (or last) stream's counters as they stand. */
static void ps_print_counts(struct printer *p)
{
    struct ps_counters c = { PS_GET(records), PS_GET(datagrams), PS_GET(send_failed),
                             PS_GET(drops) };
    ps_print_counters(&c, p);
}

/* `net`'s line for the stream, registered at the first stream. */
static void ps_net_print(struct printer *p)
{
    pr_puts(p, "profile stream: ");
    ps_print_counts(p);
    pr_puts(p, ps.running ? " (running)\n" : " (the last stream)\n");
}

static struct net_app_stats ps_net_stats = { ps_net_print, 0 };

static int ps_cmd_stream(int argc, char **argv, struct printer *p)
{
    uint16_t port;
    uint32_t ms, ip;
    int pid;
    if (!ps_parse_args(argc, argv, &port, &ms, &pid, p))
        return 1;
    if (!udpshell_requester(&ip)) {
        pr_puts(p, "profile: stream goes to the UDP shell client that asks; "
                "use it over the UDP shell\n");
        return 1;
    }
    return profstream_start(ip, port, ms, pid, p);
}

int profstream_start(uint32_t ip, uint16_t port, uint32_t ms, int pid, struct printer *p)
{
    bool pmu;
    if (prof_stream_begin(pid, PROFSTREAM_DRAIN_MS, &pmu, p) != PROFILER_OK)
        return 1;                   /* busy or no memory: said */
    /* The profiler is ours: no other stream can be starting or running,
     * and the last one's task has let go of everything below. */
    unsigned ncpus = 0;
    uint16_t cpus[MAX_CPUS];
    for (unsigned i = 0; i < MAX_CPUS; i++)
        if (prof_ring_in_stream(i))
            cpus[ncpus++] = (uint16_t)i;
    char ipb[16];
    net_fmt_ip(ipb, ip);
    unsigned long f = spin_lock(&ps.lock);
    ps.id = ps_new_id();
    ps.ip = ip;
    ps.port = port;
    ps.ms = ms;
    ps.pid = pid;
    ps.pmu = pmu;
    ps.ncpus = ncpus;
    memcpy(ps.cpus, cpus, sizeof cpus);
    ps.start_ns = time_ns();
    ps.seq = 0;
    memset(&ps.cpu, 0, sizeof ps.cpu);
    memset(&ps.c, 0, sizeof ps.c);
    __atomic_store_n(&ps.keepalive_ns, ps.start_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&ps.stop, 0, __ATOMIC_RELAXED);
    fmt_snprintf(ps.note, sizeof ps.note, "streaming id 0x%08x to %s:%u", ps.id, ipb, port);
    ps.running = true;
    ps.ending = false;
    spin_unlock(&ps.lock, f);
    prof_set_busy_note(ps.note);
    if (!task_spawn("profstream", ps_task, NULL, TASK_ANY_CPU, 0)) {
        prof_stream_stop();
        f = spin_lock(&ps.lock);
        ps.running = false;         /* last_*: still the last stream that ran */
        spin_unlock(&ps.lock, f);
        prof_stream_end();
        pr_puts(p, "profile: no memory for the stream's task: not started\n");
        return 1;
    }
    static bool stats_registered;   /* starts are serialised by the profiler */
    if (!stats_registered) {
        net_app_stats_register(&ps_net_stats);
        stats_registered = true;
    }
    pr_printf(p, "profile: streaming id 0x%08x to %s:%u (%s, %u cpus)\n", ps.id, ipb, port,
              pmu_source_name(), ncpus);
    return 0;
}

static int ps_cmd_stop(int argc, struct printer *p)
{
    if (argc != 2) {
        pr_puts(p, "profile: stop takes no arguments\n");
        return 1;
    }
    return profstream_stop(p);
}

/* Wait, at most PS_STOP_WAIT_MS, until stream id is no longer running;
 * true once it is not. */
static bool ps_wait_ended(uint32_t id)
{
    for (unsigned waited = 0;; waited += PS_POLL_MS) {
        unsigned long f = spin_lock(&ps.lock);
        bool running = ps.running && ps.id == id;
        spin_unlock(&ps.lock, f);
        if (!running)
            return true;
        if (waited >= PS_STOP_WAIT_MS)
            return false;
        sleep_ms(PS_POLL_MS);
    }
}

int profstream_stop(struct printer *p)
{
    /* The flag is set under the lock, for the stream seen running: a stop
     * that raced with that stream's end must not stop the next one. */
    unsigned long f = spin_lock(&ps.lock);
    bool running = ps.running;
    uint32_t id = ps.id;
    if (running)
        __atomic_store_n(&ps.stop, 1, __ATOMIC_RELEASE);
    spin_unlock(&ps.lock, f);
    if (!running) {
        pr_puts(p, "profile: no stream running\n");
        return 1;
    }
    /* The task notices at its next look, within PROFSTREAM_DRAIN_MS; the
     * final drain and the END take a moment more. The summary waits for
     * them. */
    running = !ps_wait_ended(id);
    if (running) {
        pr_printf(p, "profile: stream 0x%08x asked to stop; still ending\n", id);
        return 1;
    }
    f = spin_lock(&ps.lock);
    bool ours = ps.last_id == id;
    uint8_t reason = ps.last_reason;
    struct ps_counters c = ps.last_c;
    spin_unlock(&ps.lock, f);
    if (!ours) {
        pr_printf(p, "profile: stream 0x%08x ended\n", id);
        return 0;
    }
    pr_printf(p, "profile: stream 0x%08x ended (%s): ", id, ps_reason_name(reason));
    ps_print_counters(&c, p);
    pr_puts(p, "\n");
    return 0;
}

static int ps_cmd_keepalive(int argc, char **argv, struct printer *p)
{
    uint64_t v;
    if (argc != 3) {
        pr_puts(p, "profile: usage: profile keepalive <id>\n");
        return 1;
    }
    if (!parse_u64(argv[2], &v) || v > UINT32_MAX) {
        pr_printf(p, "profile: '%s' is not a stream id (0x00000001-0xffffffff)\n", argv[2]);
        return 1;
    }
    unsigned long f = spin_lock(&ps.lock);
    bool running = ps.running;
    uint32_t id = ps.id;
    if (running && id == v)
        __atomic_store_n(&ps.keepalive_ns, time_ns(), __ATOMIC_RELAXED);
    spin_unlock(&ps.lock, f);
    if (!running) {
        pr_puts(p, "profile: no stream running\n");
        return 1;
    }
    if (id != v) {
        pr_printf(p, "profile: stream 0x%08lx is not running (0x%08x is)\n",
                  (unsigned long)v, id);
        return 1;
    }
    pr_printf(p, "profile: stream 0x%08x kept alive\n", id);
    return 0;
}

static int ps_cmd_status(int argc, struct printer *p)
{
    if (argc != 2) {
        pr_puts(p, "profile: status takes no arguments\n");
        return 1;
    }
    unsigned long f = spin_lock(&ps.lock);
    bool ending = ps.running && ps.ending;
    uint32_t id = ps.id;
    spin_unlock(&ps.lock, f);
    /* A stream whose END is on its way is over for whoever received it
     * (a collector asks right after): the answer waits for its summary. */
    if (ending)
        ps_wait_ended(id);
    f = spin_lock(&ps.lock);
    bool running = ps.running;
    int64_t age = (int64_t)(time_ns() - __atomic_load_n(&ps.keepalive_ns, __ATOMIC_RELAXED));
    uint32_t last_id = ps.last_id;
    uint8_t reason = ps.last_reason;
    struct ps_counters last = ps.last_c;
    spin_unlock(&ps.lock, f);
    if (running) {
        pr_printf(p, "profile: %s, %lu ms, last keep-alive %lu ms ago: ", ps.note,
                  (unsigned long)((time_ns() - ps.start_ns) / NS_PER_MS),
                  (unsigned long)(age > 0 ? age / (int64_t)NS_PER_MS : 0));
        ps_print_counts(p);
    } else if (!last_id) {
        pr_puts(p, "profile: no stream since boot\n");
        return 0;
    } else {
        pr_printf(p, "profile: no stream running; the last, 0x%08x, ended (%s): ", last_id,
                  ps_reason_name(reason));
        ps_print_counters(&last, p);
    }
    pr_puts(p, "\n");
    return 0;
}

bool profstream_command(int argc, char **argv, struct printer *p, int *rc)
{
    if (argc < 2)
        return false;
    const char *w = argv[1];
    if (strcmp(w, "stream") == 0)
        *rc = ps_cmd_stream(argc, argv, p);
    else if (strcmp(w, "stop") == 0)
        *rc = ps_cmd_stop(argc, p);
    else if (strcmp(w, "keepalive") == 0)
        *rc = ps_cmd_keepalive(argc, argv, p);
    else if (strcmp(w, "status") == 0)
        *rc = ps_cmd_status(argc, p);
    else
        return false;
    return true;
}
