/* kernel/cmd/profile_stream.c: the stream's commands, `profile [off|wall|
 * allocs|lock] stream <port> [ms|0] [pid|all]`, `profile stop`, `profile
 * keepalive <id>` and `profile status`: every argument checked, and every
 * answer worded here from what the core returns (kernel/prof/stream.h,
 * struct prof_stream_facts). Each answer is its control line first
 * (uapi/stream_ctl.h, formatted by uapi/stream_ctl.c), the one line a
 * program reads, then the text for people, which no program reads.
 *
 * This is also where a stream meets the network: `profile stream` binds
 * the core's sink to UDP and to the UDP shell client that asked
 * (udpshell_requester), from CMD_STREAM_SRC_PORT; the sink's peer is
 * whoever sends UDP shell requests from the very address and port the
 * stream goes to (udpshell_requester_addr).
 *
 * Commands: prefix cmd_. */
#include "kernel/cmd/profile.h"
#include "hal/pmu.h"
#include "kernel/prof/session.h"
#include "kernel/prof/stream.h"
#include "kernel/task.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/sha256.h"
#include "lib/string.h"
#include "mm/heapprof.h"
#include "net/net.h"
#include "net/udpshell.h"
#include "uapi/profile_stream.h"
#include "uapi/stream_ctl.h"

_Static_assert((int)SCTL_END_STOPPED == (int)PSTR_END_STOPPED &&
               (int)SCTL_END_TIMEOUT == (int)PSTR_END_TIMEOUT &&
               (int)SCTL_END_ELAPSED == (int)PSTR_END_ELAPSED,
               "the control line's reasons are the END's");

#define STREAM_USAGE "profile [off|wall|allocs|lock] stream <port> [ms|0] [pid|all]"

/* ---- the stream's subcommands ----------------------------------------- */

static bool cmd_stream_args(int argc, char **argv, uint16_t *port, uint32_t *ms, int *pid,
                          struct printer *p)
{
    uint64_t v;
    if (argc < 3) {
        pr_puts(p, "profile: stream needs a port (usage: " STREAM_USAGE ")\n");
        return false;
    }
    if (argc > 5) {
        pr_puts(p, "profile: too many arguments (usage: " STREAM_USAGE ")\n");
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
                      "or 1-%u ms)\n", argv[3], PROF_STREAM_MS_MAX);
            return false;
        }
        if (v > PROF_STREAM_MS_MAX) {
            pr_printf(p, "profile: stream length %lu out of range (0: until stopped, "
                      "or 1-%u ms)\n", (unsigned long)v, PROF_STREAM_MS_MAX);
            return false;
        }
        *ms = (uint32_t)v;
    }
    *pid = PROF_ALL;
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

/* A shell with a key tags every stream datagram under it and this boot's
 * epoch (uapi/profile_stream.h, "Tagged datagrams"). The keyed state is
 * made once, by the first sink: the key and the epoch never change, and
 * sinks are made by the UDP shell's one task. Only the stream's task
 * sends, so one buffer for the tagged copy does. */
static struct {
    bool made, on;
    struct pstr_tag_key keyed;
    uint8_t buf[PSTR_TAGGED_MAX];
} cmd_stream_tag;

#ifdef SONDE_HOST_TEST
void cmd_profile_test_reset(void)
{
    cmd_stream_tag.made = false;
}
#endif

/* The sink of a stream to the UDP shell client that asked: sk_addr holds
 * its address (high 32 bits) and the port it named (low 16). */
static int cmd_stream_send(const struct prof_sink *sk, const void *d, size_t len)
{
    uint32_t ip = (uint32_t)(sk->sk_addr >> 32);
    uint16_t port = (uint16_t)sk->sk_addr;
    if (cmd_stream_tag.on) {
        if (len > PSTR_DGRAM_MAX)
            return PROF_SINK_LOST;      /* never untagged; the core never makes one */
        memcpy(cmd_stream_tag.buf, d, len);
        len = pstr_seal(&cmd_stream_tag.keyed, cmd_stream_tag.buf, len);
        d = cmd_stream_tag.buf;
    }
    int rc = udp_send(ip, CMD_STREAM_SRC_PORT, port, d, len);
    if (rc == 0 || rc == NET_QUEUED)    /* queued: sent once ARP answers */
        return PROF_SINK_SENT;
    if (rc == NET_ERR_NOBUF || rc == NET_ERR_NOARP)
        return PROF_SINK_AGAIN;
    return PROF_SINK_LOST;
}

/* The in-place path: the datagram is encoded straight into the network
 * device's transmit buffer (udp_reserve), tagged there where the shell
 * has a key (the buffer holds a whole frame: PSTR_TAGGED_MAX fits), and
 * sent without a copy. NULL when the device cannot (the next hop's MAC
 * not known yet, no free buffer): the core then uses cmd_stream_send,
 * which asks ARP and waits for room. */
static void *cmd_stream_reserve(const struct prof_sink *sk)
{
    _Static_assert(PSTR_TAGGED_MAX <= UDP_PAYLOAD_MAX, "a tagged datagram fits udp_reserve's room");
    return udp_reserve((uint32_t)(sk->sk_addr >> 32));
}

static int cmd_stream_commit(const struct prof_sink *sk, void *buf, size_t len)
{
    if (len > PSTR_DGRAM_MAX) {
        udp_cancel(buf);
        return PROF_SINK_LOST;
    }
    uint32_t ip = (uint32_t)(sk->sk_addr >> 32);
    uint16_t port = (uint16_t)sk->sk_addr;
    int rc;
    if (cmd_stream_tag.on) {
        /* The tag covers every byte and the collector checks it before
         * anything else: no UDP checksum (net.h). */
        len = pstr_seal(&cmd_stream_tag.keyed, buf, len);
        rc = udp_commit_unsummed(buf, ip, CMD_STREAM_SRC_PORT, port, len);
    } else {
        rc = udp_commit(buf, ip, CMD_STREAM_SRC_PORT, port, len);
    }
    return rc == 0 ? PROF_SINK_SENT : PROF_SINK_LOST;
}

static void cmd_stream_cancel(const struct prof_sink *sk, void *buf)
{
    udp_cancel(buf);
}

/* The request running now came from the stream's destination, its
 * address and its port. */
static bool cmd_stream_is_peer(const struct prof_sink *sk)
{
    uint32_t ip;
    uint16_t port;
    return udpshell_requester_addr(&ip, &port) && ((uint64_t)ip << 32 | port) == sk->sk_addr;
}

void cmd_profile_udp_sink(struct prof_sink *sk, uint32_t ip, uint16_t port)
{
    char ipb[16];
    if (!cmd_stream_tag.made) {
        uint64_t epoch;
        struct hmac_sha256 m;
        cmd_stream_tag.on = udpshell_keyed(&m, &epoch);
        if (cmd_stream_tag.on)
            pstr_tag_begin(&cmd_stream_tag.keyed, &m, epoch);
        secure_zero(&m, sizeof m);
        cmd_stream_tag.made = true;
    }
    sk->sk_send = cmd_stream_send;
    sk->sk_reserve = cmd_stream_reserve;
    sk->sk_commit = cmd_stream_commit;
    sk->sk_cancel = cmd_stream_cancel;
    sk->sk_is_peer = cmd_stream_is_peer;
    sk->sk_confirmed = false;
    sk->sk_addr = (uint64_t)ip << 32 | port;
    fmt_snprintf(sk->sk_name, sizeof sk->sk_name, "%s:%u", net_fmt_ip(ipb, ip), port);
}

/* ---- the control line ------------------------------------------------- */

static uint8_t cmd_stream_kind(unsigned what)
{
    if (what == (PROF_STREAM_CPU | PROF_STREAM_OFF))
        return SCTL_KIND_WALL;
    return what & PROF_STREAM_CPU ? SCTL_KIND_CPU : what & PROF_STREAM_OFF ? SCTL_KIND_OFF
         : what & PROF_STREAM_LOCK ? SCTL_KIND_LOCK : what & PROF_STREAM_TRACE ? SCTL_KIND_TRACE
         : SCTL_KIND_ALLOCS;
}

/* The control line of op's answer res about the stream of f: its id only
 * to its destination (sf_peer), as the text. */
static struct sctl_line cmd_stream_line(unsigned op, unsigned res, const struct prof_stream_facts *f)
{
    struct sctl_line l = { .sl_op = (uint8_t)op, .sl_result = (uint8_t)res };
    static const uint8_t states[] = {
        [PROF_STREAM_NEVER] = SCTL_ST_NONE, [PROF_STREAM_RUNNING] = SCTL_ST_STREAMING,
        [PROF_STREAM_ENDING_NOW] = SCTL_ST_ENDING, [PROF_STREAM_ENDED] = SCTL_ST_ENDED,
    };
    l.sl_state = states[f->sf_state];
    if (f->sf_state == PROF_STREAM_NEVER)
        return l;
    bool ended = f->sf_state == PROF_STREAM_ENDED;
    if (f->sf_peer && f->sf_id) {
        /* A stop's stream has just ended: it is still the one asked about. */
        l.sl_have |= ended && !(op == SCTL_OP_STOP && res == SCTL_OK) ? SCTL_HAVE_LAST
                                                                       : SCTL_HAVE_ID;
        l.sl_id = l.sl_last = f->sf_id;
    }
    if ((uint16_t)f->sf_addr) {
        l.sl_have |= SCTL_HAVE_TO;
        l.sl_to_ip = (uint32_t)(f->sf_addr >> 32);
        l.sl_to_port = (uint16_t)f->sf_addr;
    }
    if (f->sf_what) {
        l.sl_have |= SCTL_HAVE_KIND;
        l.sl_kind = cmd_stream_kind(f->sf_what);
    }
    if (!ended) {
        l.sl_have |= SCTL_HAVE_CPUS | SCTL_HAVE_LEN | SCTL_HAVE_AGE | SCTL_HAVE_CONFIRMED;
        l.sl_cpus = (uint16_t)f->sf_ncpus;
        l.sl_len = f->sf_ms;
        l.sl_age = f->sf_age_ms;
        l.sl_confirmed = f->sf_confirmed;
        if (f->sf_confirmed) {
            l.sl_have |= SCTL_HAVE_KA;
            l.sl_ka = f->sf_ka_ms;
        }
    } else if (f->sf_counted) {
        l.sl_have |= SCTL_HAVE_REASON;
        l.sl_reason = f->sf_reason == PROF_STREAM_UNCONFIRMED ? SCTL_END_UNCONFIRMED
                                                              : f->sf_reason;
    }
    if (f->sf_counted) {
        l.sl_have |= SCTL_HAVE_COUNTS;
        l.sl_records = f->sf_c.records;
        l.sl_datagrams = f->sf_c.datagrams;
        l.sl_drops = f->sf_c.drops;
        l.sl_sendfail = f->sf_c.send_failed;
        l.sl_karefused = f->sf_c.ka_refused;
    }
    return l;
}

/* An answer: its control line, then the text for people (t, gathered
 * first so that the line comes before it). */
#define CMD_STREAM_TEXT_MAX 512
static void cmd_stream_answer(struct printer *p, const struct sctl_line *l,
                              const struct buf_printer *t)
{
    char line[SCTL_LINE_MAX + 1];       /* and its NUL */
    if (sctl_format(line, sizeof line, l))
        pr_puts(p, line);
    pr_write(p, t->buf, t->len);
}

/* ---- the text for people ----------------------------------------------- */

static const char *cmd_stream_reason_name(uint8_t r)
{
    switch (r) {
    case PSTR_END_STOPPED: return "stopped";
    case PSTR_END_TIMEOUT: return "no keep-alive for 5 s";
    case PSTR_END_ELAPSED: return "length reached";
    case PROF_STREAM_UNCONFIRMED:
        return "never confirmed: no keep-alive from its destination within 5 s";
    default:               return "running";
    }
}

static void cmd_stream_print_counters(const struct prof_stream_counters *c, struct printer *p)
{
    pr_printf(p, "%lu records in %lu datagrams, %lu dropped, %lu send failures",
              (unsigned long)c->records, (unsigned long)c->datagrams,
              (unsigned long)c->drops, (unsigned long)c->send_failed);
}

/* "stream 0x... to DEST" to the destination's requests, "stream to DEST"
 * to anyone else's: the id is what a keep-alive names. */
static void cmd_stream_print_name(const struct prof_stream_facts *f, struct printer *p)
{
    if (f->sf_peer)
        pr_printf(p, "stream 0x%08x to %s", f->sf_id, f->sf_to);
    else
        pr_printf(p, "stream to %s", f->sf_to);
}

/* `net`'s line for the stream: the running (or last) stream's counts. */
static void cmd_stream_print_net(struct printer *p)
{
    struct prof_stream_facts f;
    prof_stream_now(&f);
    pr_puts(p, "profile stream: ");
    cmd_stream_print_counters(&f.sf_c, p);
    pr_puts(p, f.sf_state == PROF_STREAM_RUNNING || f.sf_state == PROF_STREAM_ENDING_NOW
                   ? " (running)\n" : " (the last stream)\n");
}

/* The busy messages' note (prof_session_set_busy_note), while a stream
 * holds the profiler: "streaming id 0x... to DEST", without the id for
 * anyone but DEST. */
static void cmd_stream_busy_note(struct printer *p)
{
    struct prof_stream_facts f;
    prof_stream_now(&f);
    if (f.sf_peer)
        pr_printf(p, "streaming id 0x%08x to %s", f.sf_id, f.sf_to);
    else
        pr_printf(p, "streaming to %s", f.sf_to);
}

/* `net`'s line for the stream, registered at the first stream. */
static struct net_app_stats cmd_stream_net = { cmd_stream_print_net, 0 };

/* ---- start ----------------------------------------------------------- */

/* The start's text for a stream that started (f), of the heap at rate. */
static void cmd_stream_print_started(const struct prof_stream_facts *f, uint32_t rate,
                                     struct printer *p)
{
    unsigned what = f->sf_what;
    pr_puts(p, "profile: streaming ");
    if (f->sf_peer)
        pr_printf(p, "id 0x%08x ", f->sf_id);
    char heap[40];
    prof_heap_source(heap, sizeof heap, false, rate);
    pr_printf(p, "to %s (%s%s, %u cpus)%s\n", f->sf_to,
              what & PROF_STREAM_CPU ? pmu_source_name()
              : what & PROF_STREAM_HEAP ? heap
              : what & PROF_STREAM_LOCK ? "lock waits by holder"
              : what & PROF_STREAM_TRACE ? "trace" : "off-CPU",
              what == (PROF_STREAM_CPU | PROF_STREAM_OFF) ? " and off-CPU" : "", f->sf_ncpus,
              f->sf_peer ? "" : ", once a keep-alive from there confirms it");
}

/* A stream into sink: the core's start, worded; its text into t. */
static int cmd_stream_start_into(const struct prof_sink *sink, uint32_t ms, int pid,
                                 unsigned what, struct buf_printer *t, struct sctl_line *l)
{
    /* mm owns the heap's rate: read here, handed in. */
    uint32_t rate = __atomic_load_n(&heapprof_rate, __ATOMIC_RELAXED);
    struct prof_stream_ask a = { sink, ms, pid, what, cmd_stream_busy_note, rate };
    struct prof_stream_facts f;
    struct prof_err e = { 0 };
    int rc = prof_stream_start(&a, &f, &e);
    static const uint8_t results[] = {
        [PROF_STREAM_DONE] = SCTL_OK, [PROF_STREAM_BUSY] = SCTL_BUSY,
        [PROF_STREAM_REFUSED_START] = SCTL_FAILED, [PROF_STREAM_NO_WRITERS] = SCTL_FAILED,
        [PROF_STREAM_NO_TASK] = SCTL_FAILED,
    };
    *l = cmd_stream_line(SCTL_OP_START, results[f.sf_answer], &f);
    if (f.sf_answer == PROF_STREAM_DONE)
        cmd_stream_print_started(&f, rate, &t->pr);
    else if (f.sf_answer == PROF_STREAM_BUSY || f.sf_answer == PROF_STREAM_REFUSED_START)
        cmd_profile_say("profile", &e, &t->pr);
    else if (f.sf_answer == PROF_STREAM_NO_WRITERS)
        pr_printf(&t->pr, "profile: no memory for the stream's %u batch writers: not started\n",
                  f.sf_ncpus);
    else if (f.sf_answer == PROF_STREAM_NO_TASK)
        pr_puts(&t->pr, "profile: no memory for the stream's task: not started\n");
    return rc;
}

int cmd_profile_stream_sink(const struct prof_sink *sink, uint32_t ms, int pid, unsigned what,
                            struct printer *p)
{
    char text[CMD_STREAM_TEXT_MAX];
    struct buf_printer t;
    struct sctl_line l;
    buf_printer_init(&t, text, sizeof text);
    int rc = cmd_stream_start_into(sink, ms, pid, what, &t, &l);
    cmd_stream_answer(p, &l, &t);
    return rc;
}

/* An answer to op with result res about the stream as it stands (the
 * refusals before the core is asked: bad arguments, no UDP client). */
static void cmd_stream_line_now(unsigned op, unsigned res, struct sctl_line *l)
{
    struct prof_stream_facts f;
    prof_stream_now(&f);
    *l = cmd_stream_line(op, res, &f);
}

/* argv[1] is "stream"; what: PROF_STREAM_CPU, _OFF, both, _HEAP, _LOCK or _TRACE. */
static int cmd_stream_start(int argc, char **argv, unsigned what, struct buf_printer *t,
                            struct sctl_line *l)
{
    uint16_t port;
    uint32_t ms, ip;
    int pid;
    if (!cmd_stream_args(argc, argv, &port, &ms, &pid, &t->pr)) {
        cmd_stream_line_now(SCTL_OP_START, SCTL_INVALID, l);
        return 1;
    }
    if (!udpshell_requester(&ip)) {
        pr_puts(&t->pr, "profile: stream goes to the UDP shell client that asks; "
                "use it over the UDP shell\n");
        cmd_stream_line_now(SCTL_OP_START, SCTL_FAILED, l);
        return 1;
    }
    struct prof_sink sink;
    cmd_profile_udp_sink(&sink, ip, port);
    static bool stats_registered;   /* starts are serialised by the profiler */
    int rc = cmd_stream_start_into(&sink, ms, pid, what, t, l);
    if (rc == 0 && !stats_registered) {
        net_app_stats_register(&cmd_stream_net);
        stats_registered = true;
    }
    return rc;
}

/* ---- stop, keepalive, status --------------------------------------------- */

static int cmd_stream_stop(struct printer *p, struct sctl_line *l)
{
    struct prof_stream_facts f;
    int rc = prof_stream_stop(&f);
    static const uint8_t results[] = {
        [PROF_STREAM_DONE] = SCTL_OK, [PROF_STREAM_NONE] = SCTL_NONE,
        [PROF_STREAM_ENDING] = SCTL_ENDING,
    };
    *l = cmd_stream_line(SCTL_OP_STOP, results[f.sf_answer], &f);
    if (f.sf_answer == PROF_STREAM_NONE) {
        pr_puts(p, "profile: no stream running\n");
        return rc;
    }
    pr_puts(p, "profile: ");
    cmd_stream_print_name(&f, p);
    if (f.sf_answer == PROF_STREAM_ENDING) {
        pr_puts(p, " asked to stop; still ending\n");
    } else if (!f.sf_counted) {
        pr_puts(p, " ended\n");
    } else {
        pr_printf(p, " ended (%s): ", cmd_stream_reason_name(f.sf_reason));
        cmd_stream_print_counters(&f.sf_c, p);
        pr_puts(p, "\n");
    }
    return rc;
}

int cmd_profile_stream_stop(struct printer *p)
{
    char text[CMD_STREAM_TEXT_MAX];
    struct buf_printer t;
    struct sctl_line l;
    buf_printer_init(&t, text, sizeof text);
    int rc = cmd_stream_stop(&t.pr, &l);
    cmd_stream_answer(p, &l, &t);
    return rc;
}

static int cmd_stream_keepalive(int argc, char **argv, struct printer *p, struct sctl_line *l)
{
    uint64_t v;
    if (argc != 3) {
        pr_puts(p, "profile: usage: profile keepalive <id>\n");
        cmd_stream_line_now(SCTL_OP_KEEPALIVE, SCTL_INVALID, l);
        return 1;
    }
    if (!parse_u64(argv[2], &v) || v > UINT32_MAX) {
        pr_printf(p, "profile: '%s' is not a stream id (0x00000001-0xffffffff)\n", argv[2]);
        cmd_stream_line_now(SCTL_OP_KEEPALIVE, SCTL_INVALID, l);
        return 1;
    }
    struct prof_stream_facts f;
    int rc = prof_stream_keepalive((uint32_t)v, &f);
    static const uint8_t results[] = {
        [PROF_STREAM_DONE] = SCTL_OK, [PROF_STREAM_NONE] = SCTL_NONE,
        [PROF_STREAM_NOT_PEER] = SCTL_REFUSED, [PROF_STREAM_OTHER] = SCTL_OTHER,
        [PROF_STREAM_ENDING] = SCTL_ENDING,
    };
    *l = cmd_stream_line(SCTL_OP_KEEPALIVE, results[f.sf_answer], &f);
    switch (f.sf_answer) {
    case PROF_STREAM_NONE:
        pr_puts(p, "profile: no stream running\n");
        break;
    case PROF_STREAM_NOT_PEER:
        pr_printf(p, "profile: keep-alive refused: a stream is kept alive only from "
                  "its destination, %s\n", f.sf_to);
        break;
    case PROF_STREAM_OTHER:
        pr_printf(p, "profile: stream 0x%08x is not running (0x%08x is)\n", (uint32_t)v,
                  f.sf_id);
        break;
    case PROF_STREAM_ENDING:
        pr_printf(p, "profile: stream 0x%08x is ending\n", f.sf_id);
        break;
    default:
        pr_printf(p, "profile: stream 0x%08x kept alive\n", f.sf_id);
    }
    return rc;
}

static int cmd_stream_status(struct printer *p, struct sctl_line *l)
{
    struct prof_stream_facts f;
    prof_stream_status(&f);
    *l = cmd_stream_line(SCTL_OP_STATUS, SCTL_OK, &f);
    if (f.sf_state == PROF_STREAM_NEVER) {
        pr_puts(p, "profile: no stream since boot\n");
        return 0;
    }
    if (f.sf_state != PROF_STREAM_ENDED) {
        pr_puts(p, "profile: streaming ");
        if (f.sf_peer)
            pr_printf(p, "id 0x%08x ", f.sf_id);
        pr_printf(p, "to %s, %lu ms, ", f.sf_to, (unsigned long)f.sf_age_ms);
        if (f.sf_confirmed)
            pr_printf(p, "last keep-alive %lu ms ago: ", (unsigned long)f.sf_ka_ms);
        else
            pr_puts(p, "not confirmed yet (no keep-alive from there): ");
    } else if (f.sf_peer) {
        pr_printf(p, "profile: no stream running; the last, 0x%08x, ended (%s): ", f.sf_id,
                  cmd_stream_reason_name(f.sf_reason));
    } else {
        pr_printf(p, "profile: no stream running; the last, to %s, ended (%s): ", f.sf_to,
                  cmd_stream_reason_name(f.sf_reason));
    }
    cmd_stream_print_counters(&f.sf_c, p);
    pr_printf(p, ", %lu keep-alives refused\n", (unsigned long)f.sf_c.ka_refused);
    return 0;
}

/* ---- the words ------------------------------------------------------------ */

int cmd_profile_stream_start(int argc, char **argv, unsigned what, struct printer *p)
{
    char text[CMD_STREAM_TEXT_MAX];
    struct buf_printer t;
    struct sctl_line l;
    buf_printer_init(&t, text, sizeof text);
    int rc = cmd_stream_start(argc, argv, what, &t, &l);
    cmd_stream_answer(p, &l, &t);
    return rc;
}

bool cmd_profile_stream(int argc, char **argv, struct printer *p, int *rc)
{
    if (argc < 2)
        return false;
    const char *w = argv[1];
    unsigned op;
    if (strcmp(w, "stream") == 0) {
        *rc = cmd_profile_stream_start(argc, argv, PROF_STREAM_CPU, p);
        return true;
    } else if (strcmp(w, "stop") == 0) {
        op = SCTL_OP_STOP;
    } else if (strcmp(w, "status") == 0) {
        op = SCTL_OP_STATUS;
    } else if (strcmp(w, "keepalive") == 0) {
        op = SCTL_OP_KEEPALIVE;
    } else {
        return false;
    }
    char text[CMD_STREAM_TEXT_MAX];
    struct buf_printer t;
    struct sctl_line l;
    buf_printer_init(&t, text, sizeof text);
    if (op == SCTL_OP_KEEPALIVE) {
        *rc = cmd_stream_keepalive(argc, argv, &t.pr, &l);
    } else if (argc != 2) {
        pr_printf(&t.pr, "profile: %s takes no arguments\n", w);
        cmd_stream_line_now(op, SCTL_INVALID, &l);
        *rc = 1;
    } else {
        *rc = op == SCTL_OP_STOP ? cmd_stream_stop(&t.pr, &l) : cmd_stream_status(&t.pr, &l);
    }
    cmd_stream_answer(p, &l, &t);
    return true;
}
