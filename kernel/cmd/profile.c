/* kernel/cmd/profile.c: `profile` and `profile_cpus`, the shell's face of
 * the profiler core (kernel/prof/): every argument checked, in order, the
 * first bad one named with its allowed range, before anything starts.
 *
 * This is also where a stream meets the network: `profile stream` binds
 * the core's sink to UDP and to the UDP shell client that asked
 * (udpshell_requester), from CMD_STREAM_SRC_PORT; the sink's peer is
 * whoever sends UDP shell requests from the very address and port the
 * stream goes to (udpshell_requester_addr).
 *
 * Commands: prefix cmd_. */
#include "kernel/cmd/profile.h"
#include "kernel/prof/session.h"
#include "kernel/prof/stream.h"
#include "kernel/shell.h"
#include "kernel/task.h"
#include "lib/parse.h"
#include "lib/sha256.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "mm/heapprof.h"
#include "net/net.h"
#include "net/udpshell.h"
#include "uapi/profile_stream.h"

#define STREAM_USAGE "profile [off|wall|allocs] stream <port> [ms|0] [pid|all]"

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

/* `net`'s line for the stream, registered at the first stream. */
static struct net_app_stats cmd_stream_net = { prof_stream_print_net, 0 };

/* argv[1] is "stream"; what: PROF_STREAM_CPU, _OFF, both, or _HEAP. */
static int cmd_stream_start(int argc, char **argv, unsigned what, struct printer *p)
{
    uint16_t port;
    uint32_t ms, ip;
    int pid;
    if (!cmd_stream_args(argc, argv, &port, &ms, &pid, p))
        return 1;
    if (!udpshell_requester(&ip)) {
        pr_puts(p, "profile: stream goes to the UDP shell client that asks; "
                "use it over the UDP shell\n");
        return 1;
    }
    struct prof_sink sink;
    cmd_profile_udp_sink(&sink, ip, port);
    static bool stats_registered;   /* starts are serialised by the profiler */
    struct prof_err e = { 0 };
    int rc = prof_stream_start_what(&sink, ms, pid, what,
                                    __atomic_load_n(&heapprof_rate, __ATOMIC_RELAXED), &e, p);
    if (rc != 0 && e.pe_why != PROF_NOT_NONE)
        cmd_profile_say("profile", &e, p);
    if (rc == 0 && !stats_registered) {
        net_app_stats_register(&cmd_stream_net);
        stats_registered = true;
    }
    return rc;
}

int cmd_profile_stream_start(int argc, char **argv, unsigned what, struct printer *p)
{
    return cmd_stream_start(argc, argv, what, p);
}

static int cmd_stream_keepalive(int argc, char **argv, struct printer *p)
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
    return prof_stream_keepalive((uint32_t)v, p);
}

/* stream, stop, keepalive, status (argv[1]): true with *rc the command's
 * exit status; false for any other word, which the windowed `profile`
 * parses. */
static bool cmd_profile_stream(int argc, char **argv, struct printer *p, int *rc)
{
    if (argc < 2)
        return false;
    const char *w = argv[1];
    if (strcmp(w, "stream") == 0) {
        *rc = cmd_stream_start(argc, argv, PROF_STREAM_CPU, p);
    } else if (strcmp(w, "keepalive") == 0) {
        *rc = cmd_stream_keepalive(argc, argv, p);
    } else if (strcmp(w, "stop") == 0 || strcmp(w, "status") == 0) {
        if (argc != 2) {
            pr_printf(p, "profile: %s takes no arguments\n", w);
            *rc = 1;
        } else {
            *rc = strcmp(w, "stop") == 0 ? prof_stream_stop(p) : prof_stream_status(p);
        }
    } else {
        return false;
    }
    return true;
}

/* ---- the windowed profile --------------------------------------------- */

static bool cmd_profile_is_all(const char *s)
{
    return s[0] == 'a' && s[1] == 'l' && s[2] == 'l' && s[3] == '\0';
}

/* PROF_FOLDED or PROF_RAW for the output words, else -1. */
static int cmd_profile_format_word(const char *s)
{
    if (strcmp(s, "folded") == 0)
        return PROF_FOLDED;
    if (strcmp(s, "raw") == 0)
        return PROF_RAW;
    return -1;
}

#define PROF_OFF_USAGE "profile off|wall [ms] [pid|all] [chains|folded|raw]"

struct cmd_prof_args {
    uint64_t ms, chains;
    int pid, fmt;
};

/* [ms] [pid|all] [chains|folded|raw] from argv[b]: positional, every
 * argument checked before anything starts, in order, and the first bad
 * one named. An output word (folded, raw) takes the chain count's place,
 * and may also come early, in place of the window or the pid, which then
 * take their defaults: `profile raw` is `profile 1000 all raw`, `profile
 * 500 folded` is `profile 500 all folded`. It is always the last
 * argument, so no word means two things. */
static bool cmd_profile_args(int argc, char **argv, int b, const char *usage,
                             struct cmd_prof_args *a, struct printer *p)
{
    uint64_t v;
    a->ms = PROF_WINDOW_DEF;
    a->chains = PROF_CHAINS_DEF;
    a->pid = PROF_ALL;
    a->fmt = PROF_TEXT;
    if (argc - b > 3) {
        pr_printf(p, "profile: too many arguments (usage: %s)\n", usage);
        return false;
    }
    for (int i = b; i < argc; i++) {
        const char *w = argv[i];
        int f = cmd_profile_format_word(w);
        if (f >= 0) {
            if (i != argc - 1) {
                pr_printf(p, "profile: '%s' must be the last argument "
                          "(usage: %s)\n", w, usage);
                return false;
            }
            a->fmt = f;
        } else if (i == b) {
            if (!parse_u64(w, &a->ms)) {
                pr_printf(p, "profile: '%s' is not a window (%u-%u ms), "
                          "folded or raw\n", w, PROF_WINDOW_MIN,
                          PROF_WINDOW_MAX);
                return false;
            }
            if (a->ms < PROF_WINDOW_MIN || a->ms > PROF_WINDOW_MAX) {
                pr_printf(p, "profile: window %lu out of range (%u-%u ms)\n",
                          (unsigned long)a->ms, PROF_WINDOW_MIN, PROF_WINDOW_MAX);
                return false;
            }
        } else if (i == b + 1) {
            if (cmd_profile_is_all(w))
                continue;
            if (!parse_u64(w, &v)) {
                pr_printf(p, "profile: '%s' is not a pid, all, folded or "
                          "raw\n", w);
                return false;
            }
            if (v > INT32_MAX || !task_exists((int)v)) {
                pr_printf(p, "profile: pid %lu: no such task\n", (unsigned long)v);
                return false;
            }
            a->pid = (int)v;
        } else {
            if (!parse_u64(w, &a->chains)) {
                pr_printf(p, "profile: '%s' is not a chain count (1-%u), "
                          "folded or raw\n", w, PROF_CHAINS);
                return false;
            }
            if (a->chains < 1 || a->chains > PROF_CHAINS) {
                pr_printf(p, "profile: chains %lu out of range (1-%u)\n",
                          (unsigned long)a->chains, PROF_CHAINS);
                return false;
            }
        }
    }
    return true;
}

/* profile off|wall [ms] [pid|all] [chains|folded|raw], profile latency
 * [ms]: true with *rc the status for those words, false for others. */
static bool cmd_profile_off(int argc, char **argv, struct printer *p, int *rc)
{
    if (argc < 2)
        return false;
    struct cmd_prof_args a;
    enum prof_view view;
    if (strcmp(argv[1], "off") == 0) {
        view = PROF_VIEW_OFF;
    } else if (strcmp(argv[1], "wall") == 0) {
        view = PROF_VIEW_WALL;
    } else if (strcmp(argv[1], "latency") == 0) {
        view = PROF_VIEW_LATENCY;
        if (argc > 3) {
            pr_puts(p, "profile: too many arguments (usage: profile latency [ms])\n");
            *rc = 1;
            return true;
        }
        if (argc == 3 && cmd_profile_format_word(argv[2]) >= 0) {
            pr_printf(p, "profile: '%s' is not a window (%u-%u ms)\n", argv[2],
                      PROF_WINDOW_MIN, PROF_WINDOW_MAX);
            *rc = 1;
            return true;
        }
    } else {
        return false;
    }
    /* profile off|wall stream <port> [ms|0] [pid|all]: argv[1] the word
     * `stream` sees as its own first. */
    if (view != PROF_VIEW_LATENCY && argc >= 3 && strcmp(argv[2], "stream") == 0) {
        *rc = cmd_stream_start(argc - 1, argv + 1,
                               view == PROF_VIEW_WALL ? PROF_STREAM_CPU | PROF_STREAM_OFF
                                                      : PROF_STREAM_OFF, p);
        return true;
    }
    if (!cmd_profile_args(argc, argv, 2, PROF_OFF_USAGE, &a, p)) {
        *rc = 1;
        return true;
    }
    struct prof_window_spec ws = {
        .ws_kind = PROF_KIND_OFFCPU, .ws_view = view, .ws_ms = (unsigned)a.ms, .ws_pid = a.pid,
        .ws_chains = (unsigned)a.chains, .ws_format = (enum prof_format)a.fmt,
    };
    *rc = cmd_profile_window(&ws, p);
    return true;
}
#define CMD_PROFILE_USAGE "profile [ms] [pid|all] [chains|folded|raw]"

/* profile [ms] [pid|all] [chains|folded|raw]: positional, every argument
 * checked before anything starts, in order, and the first bad one named.
 * An output word (folded, raw) takes the chain count's place, and may
 * also come early, in place of the window or the pid, which then take
 * their defaults: `profile raw` is `profile 1000 all raw`, `profile 500
 * folded` is `profile 500 all folded`. It is always the last argument,
 * so no word means two things. */
static int cmd_profile(int argc, char **argv, struct printer *p)
{
    uint64_t ms = PROF_WINDOW_DEF, chains = PROF_CHAINS_DEF, v;
    int pid = PROF_ALL, fmt = PROF_TEXT, rc;

    /* stream, stop, keepalive, status: the stream's. */
    if (cmd_profile_stream(argc, argv, p, &rc))
        return rc;
    /* heap, allocs: heap profiling's (kernel/cmd/profile_heap.c). */
    if (cmd_profile_heap(argc, argv, p, &rc))
        return rc;
    /* off, wall, latency: off-CPU windows. */
    if (cmd_profile_off(argc, argv, p, &rc))
        return rc;

    if (argc > 4) {
        pr_puts(p, "profile: too many arguments (usage: " CMD_PROFILE_USAGE ")\n");
        return 1;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int f = cmd_profile_format_word(a);
        if (f >= 0) {
            if (i != argc - 1) {
                pr_printf(p, "profile: '%s' must be the last argument "
                          "(usage: " CMD_PROFILE_USAGE ")\n", a);
                return 1;
            }
            fmt = f;
        } else if (i == 1) {
            if (!parse_u64(a, &ms)) {
                pr_printf(p, "profile: '%s' is not a window (%u-%u ms), "
                          "folded or raw\n", a, PROF_WINDOW_MIN,
                          PROF_WINDOW_MAX);
                return 1;
            }
            if (!prof_window_ok(ms))
                return cmd_profile_refuse(PROF_NOT_WINDOW, ms, p);
        } else if (i == 2) {
            if (cmd_profile_is_all(a))
                continue;
            if (!parse_u64(a, &v)) {
                pr_printf(p, "profile: '%s' is not a pid, all, folded or "
                          "raw\n", a);
                return 1;
            }
            if (v > INT32_MAX || !task_exists((int)v)) {
                pr_printf(p, "profile: pid %lu: no such task\n", (unsigned long)v);
                return 1;
            }
            pid = (int)v;
        } else {
            if (!parse_u64(a, &chains)) {
                pr_printf(p, "profile: '%s' is not a chain count (1-%u), "
                          "folded or raw\n", a, PROF_CHAINS);
                return 1;
            }
            if (!prof_chains_ok(chains))
                return cmd_profile_refuse(PROF_NOT_CHAINS, chains, p);
        }
    }
    struct prof_window_spec ws = {
        .ws_kind = PROF_KIND_CPU, .ws_ms = (unsigned)ms, .ws_pid = pid,
        .ws_chains = (unsigned)chains, .ws_format = (enum prof_format)fmt,
    };
    return cmd_profile_window(&ws, p);
}

SHELL_COMMAND(profile, "profile", CMD_PROFILE_USAGE "  sample; the hottest chains, or every chain folded or raw"
              " (also: profile [off|wall|allocs] stream <port> [ms|0] [pid|all], stop, keepalive <id>, status;"
              " profile heap [chains|folded|raw], profile heap rate <bytes>|off,"
              " profile allocs [ms] [pid|all] [chains|folded|raw];"
              " profile off|wall [ms] [pid|all] [chains|folded|raw], profile latency [ms])",
              cmd_profile);

/* profile_cpus: which source took each CPU's samples in the last run (the
 * report prints the same line itself only when the sources were mixed). */
static int cmd_profile_cpus(int argc, char **argv, struct printer *p)
{
    if (argc != 1) {
        pr_puts(p, "profile_cpus: takes no arguments\n");
        return 1;
    }
    struct prof_err e;
    if (prof_print_last_sources(p, &e) == PROF_OK)
        return 0;
    cmd_profile_say("profile_cpus", &e, p);
    return 1;
}

SHELL_COMMAND(profile_cpus, "profile_cpus", "profile_cpus  the last profile's samples per cpu, by source",
              cmd_profile_cpus);
