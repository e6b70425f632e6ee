/* tools/fleet-gen.c: a fleet of simulated Sonde kernels on this host, for
 * the collector's benchmarks and tests (bench/fleet.py drives it).
 *
 *   fleet-gen --kernels N --build-id HEX [--build-id HEX ...] --frames A,B,...
 *             [--rate HZ] [--cpus C] [--stacks S] [--loss P] [--dup P]
 *             [--reorder P] [--seed X]
 *
 * Each kernel (tools/fleet/sim.c) is two UDP sockets on 127.0.0.1, each on
 * an ephemeral port of its own: its shell answers on one, its stream
 * goes out from the other, as a kernel's does. Once every socket is open it prints one line, "ready PORT PORT
 * ...", in kernel order. When stdin closes (or on SIGTERM/SIGINT) it
 * prints one line per kernel and a total:
 *
 *   kernel PORT streams S records R lost_records L batches B lost_dgrams D
 *          dups U reordered O datagrams G stream_ms M
 *   total concurrent_max C ... (the same fields, summed; C the most
 *         kernels streaming at once)
 *
 * and exits 0; 2 on a usage or socket error, said on stderr.
 *
 * With --verify-cost instead, it prints what a collector with a key
 * (record -k) pays to verify one full tagged BATCH of these stacks
 * (pstr_verify, uapi/profile_stream_tag.c), timed over many:
 *   verify ns_per_dgram N records_per_dgram R
 *
 * The stacks: S of them (default 16), depth 2 to 8, drawn from the
 * addresses of --frames (a build's functions), the same for every kernel.
 *
 * Fleet generator: prefix fleet_. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "lib/sha256.h"
#include "tools/fleet/sim.h"
#include "uapi/udpshell.h"

#define KERNELS_MAX 4096
#define BUILDS_MAX  16
#define POOL_MAX    256
#define TICK_NS     2000000ull     /* records are made this often */
#define TXQ_MAX     64             /* datagrams per sendmmsg */
#define SERVE_EVERY 64             /* kernels ticked between looks at the shells */

static const char *prog = "fleet-gen";
static volatile sig_atomic_t quit;

struct gen_kernel {
    struct fleet_kernel k;
    int fd, sfd;                     /* its shell's socket; its stream's */
    uint16_t port;
    uint16_t reply_id;
};

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void on_signal(int sig)
{
    (void)sig;
    quit = 1;
}

static _Noreturn void usage_error(const char *what, const char *arg)
{
    fprintf(stderr, "%s: %s%s\nusage: %s --kernels N --build-id HEX [--build-id HEX ...] "
            "--frames A,B,... [--rate HZ] [--cpus C] [--stacks S] [--loss P] [--dup P] "
            "[--reorder P] [--seed X]\n", prog, what, arg ? arg : "", prog);
    exit(2);
}

static unsigned long num(const char *opt, const char *arg, unsigned long lo, unsigned long hi)
{
    char *end;
    unsigned long v = strtoul(arg, &end, 10);
    if (!*arg || *arg == '-' || *end || v < lo || v > hi) {
        fprintf(stderr, "%s: %s %s out of range (%lu-%lu)\n", prog, opt, arg, lo, hi);
        exit(2);
    }
    return v;
}

static double prob(const char *opt, const char *arg)
{
    char *end;
    double v = strtod(arg, &end);
    if (!*arg || *end || !(v >= 0 && v <= 1)) {
        fprintf(stderr, "%s: %s %s out of range (0-1)\n", prog, opt, arg);
        exit(2);
    }
    return v;
}

static unsigned parse_frames(const char *arg, uint64_t *pool)
{
    unsigned n = 0;
    char *copy = strdup(arg), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        unsigned long long v = strtoull(t, &end, 16);
        if (*end || !*t || v == 0 || n == POOL_MAX) {
            fprintf(stderr, "%s: --frames %s: '%s' is not a hex address, or more than %d "
                    "addresses\n", prog, arg, t, POOL_MAX);
            exit(2);
        }
        pool[n++] = v;
    }
    free(copy);
    if (!n)
        usage_error("--frames names no address", NULL);
    return n;
}

/* S stacks, depth 2 .. 8, from the pool: stack s's leaf is pool[s % n], its
 * callers a walk from there, so the stacks share callers as real ones do. */
static void make_stacks(const uint64_t *pool, unsigned npool, unsigned nstacks,
                        uint64_t (*stacks)[PSTR_FRAMES], uint8_t *depths)
{
    for (unsigned s = 0; s < nstacks; s++) {
        depths[s] = (uint8_t)(2 + s % (PSTR_FRAMES - 1));
        for (unsigned j = 0; j < depths[s]; j++)
            stacks[s][j] = pool[(s + j * (s / npool + 1)) % npool];
    }
}

/* Stream datagrams wait here to go out together, one sendmmsg for many:
 * all from one kernel's stream socket (fd). */
static struct {
    int fd;
    unsigned n;
    struct mmsghdr m[TXQ_MAX];
    struct iovec iov[TXQ_MAX];
    struct sockaddr_in to[TXQ_MAX];
    uint8_t buf[TXQ_MAX][PSTR_TAGGED_MAX];
} txq;

/* Everything queued, sent. A datagram the socket cannot take now (its
 * buffer full) is not retried: the collector sees it lost, as it would
 * one a kernel's full TX ring cost. */
static uint64_t send_failed;        /* datagrams the sockets refused */
static int send_errno;

static void txq_flush(void)
{
    for (unsigned done = 0; done < txq.n;) {
        int r = sendmmsg(txq.fd, txq.m + done, txq.n - done, MSG_DONTWAIT);
        if (r <= 0) {
            send_failed++;
            send_errno = errno;
        }
        done += r > 0 ? (unsigned)r : 1;
    }
    txq.n = 0;
}

static void send_dgram(void *ctx, uint32_t ip, uint16_t port, const void *d, size_t n)
{
    struct gen_kernel *g = ctx;
    if (txq.n && (txq.fd != g->sfd || txq.n == TXQ_MAX))
        txq_flush();
    unsigned i = txq.n++;
    txq.fd = g->sfd;
    txq.to[i] = (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(port),
                                      .sin_addr.s_addr = htonl(ip) };
    memcpy(txq.buf[i], d, n);
    txq.iov[i] = (struct iovec){ txq.buf[i], n };
    txq.m[i].msg_hdr = (struct msghdr){ .msg_name = &txq.to[i], .msg_namelen = sizeof txq.to[i],
                                        .msg_iov = &txq.iov[i], .msg_iovlen = 1 };
}

struct reply_ctx {
    struct gen_kernel *g;
    const struct sockaddr_in *to;
};

static void send_reply(void *ctx, const void *d, size_t n)
{
    struct reply_ctx *r = ctx;
    (void)sendto(r->g->fd, d, n, MSG_DONTWAIT, (const struct sockaddr *)r->to, sizeof *r->to);
}

/* Every request waiting on kernel g's socket, answered. */
static void serve(struct gen_kernel *g)
{
    for (;;) {
        uint8_t buf[USHP_AUTH_DGRAM_MAX];
        struct sockaddr_in from;
        socklen_t flen = sizeof from;
        ssize_t got = recvfrom(g->fd, buf, sizeof buf, MSG_DONTWAIT,
                               (struct sockaddr *)&from, &flen);
        if (got < 0)
            return;
        struct ushp_hdr h;
        const uint8_t *pl;
        /* Open shells only: an authenticated request is not this fleet's. */
        if (ushp_is_reply(buf, (size_t)got) || ushp_parse(buf, (size_t)got, &h, &pl) != 0 ||
            (h.flags & USHP_FLAG_AUTH))
            continue;
        char text[FLEET_REPLY_MAX];
        fleet_shell(&g->k, (const char *)pl, h.len, ntohl(from.sin_addr.s_addr),
                    ntohs(from.sin_port), now_ns(), text, sizeof text);
        struct reply_ctx rc = { g, &from };
        struct ushp_chunker ch;
        if (++g->reply_id == 0)
            g->reply_id = 1;
        ushp_chunker_init(&ch, h.seq, g->reply_id, send_reply, &rc);
        ushp_chunker_write(&ch, text, strlen(text));
        ushp_chunker_finish(&ch);
    }
}

/* A socket on 127.0.0.1 and an ephemeral port: its fd and port, or -1. */
/* The shells with a request waiting, answered now. */
static void serve_ready(int ep, struct gen_kernel *gs, unsigned n)
{
    struct epoll_event evs[64];
    int m = epoll_wait(ep, evs, 64, 0);
    for (int j = 0; j < m; j++)
        if (evs[j].data.u32 < n) {
            serve(&gs[evs[j].data.u32]);
            txq_flush();
        }
}

static int open_udp(uint16_t *port)
{
    struct sockaddr_in me = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof me;
    int buf = 4 << 20, fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof buf) ||
        bind(fd, (const struct sockaddr *)&me, sizeof me) ||
        getsockname(fd, (struct sockaddr *)&me, &len)) {
        fprintf(stderr, "%s: a kernel's socket: %s\n", prog, strerror(errno));
        return -1;
    }
    *port = ntohs(me.sin_port);
    return fd;
}

/* As a kernel does, its stream goes out from a port of its own, not its
 * shell's (kernel/cmd/profile.c, CMD_STREAM_SRC_PORT). */
static int open_kernel(struct gen_kernel *g)
{
    uint16_t sport;
    g->fd = open_udp(&g->port);
    g->sfd = g->fd >= 0 ? open_udp(&sport) : -1;
    return g->sfd >= 0 ? 0 : -1;
}

/* --verify-cost: one full BATCH as kernel 0 would send it, sealed, then
 * verified over and over. */
struct first_batch {
    uint8_t d[PSTR_TAGGED_MAX];
    size_t len;
    uint16_t count;
};

static void keep_batch(void *ctx, uint32_t ip, uint16_t port, const void *d, size_t n)
{
    (void)ip;
    (void)port;
    struct first_batch *fb = ctx;
    struct pstr_hdr h;
    if (!fb->len && pstr_parse(d, n, &h) == 0 && h.type == PSTR_BATCH) {
        memcpy(fb->d, d, n);
        fb->len = n;
        fb->count = h.count;
    }
}

/* CPU time, not wall time: the host may be busy with others. */
static uint64_t cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int verify_cost(const struct fleet_cfg *cfg)
{
    static struct first_batch fb;
    struct fleet_kernel k;
    char out[FLEET_REPLY_MAX], cmd[40];
    struct fleet_cfg fast = *cfg;
    fast.hz = 1000000;              /* a batch fills before the first flush */
    fleet_kernel_init(&k, &fast, 0, keep_batch, &fb);
    fleet_shell(&k, "profile stream 9 0 all", 22, 1, 9, 0, out, sizeof out);
    int n = snprintf(cmd, sizeof cmd, "profile keepalive 0x%08x", k.id);
    fleet_shell(&k, cmd, (size_t)n, 1, 9, 0, out, sizeof out);
    for (uint64_t t = 1000000; !fb.len && t < 4000000000ull; t += 1000000)
        fleet_tick(&k, t);
    if (!fb.len) {
        fprintf(stderr, "%s: --verify-cost: no batch made\n", prog);
        return 2;
    }
    static const uint8_t key[PSTR_KEY_LEN] = { 1, 2, 3 };
    struct hmac_sha256 m;
    static struct pstr_tag_key keyed;
    hmac_sha256_init(&m, key, sizeof key);
    pstr_tag_begin(&keyed, &m, 42);
    size_t sealed = pstr_seal(&keyed, fb.d, fb.len);
    unsigned rounds = 20000, ok = 0;
    uint64_t t0 = cpu_ns();
    for (unsigned i = 0; i < rounds; i++)
        ok += pstr_verify(&keyed, fb.d, sealed);
    uint64_t t1 = cpu_ns();
    if (ok != rounds) {
        fprintf(stderr, "%s: --verify-cost: the sealed batch did not verify\n", prog);
        return 2;
    }
    printf("verify ns_per_dgram %llu records_per_dgram %u bytes %zu\n",
           (unsigned long long)((t1 - t0) / rounds), fb.count, sealed);
    return 0;
}

static void print_counts(const char *what, const struct fleet_counts *c)
{
    printf("%s streams %llu records %llu lost_records %llu batches %llu lost_dgrams %llu "
           "dups %llu reordered %llu datagrams %llu stream_ms %llu unmade %llu\n", what,
           (unsigned long long)c->streams, (unsigned long long)c->records,
           (unsigned long long)c->lost_records, (unsigned long long)c->batches,
           (unsigned long long)c->lost_dgrams, (unsigned long long)c->dups,
           (unsigned long long)c->reordered, (unsigned long long)c->datagrams,
           (unsigned long long)(c->stream_ns / 1000000), (unsigned long long)c->unmade);
}

/* The most kernels streaming at once: a fleet sampled K at a time
 * (record --sample K) must never have more. */
static unsigned concurrent_max;

static void report(struct gen_kernel *gs, unsigned n)
{
    struct fleet_counts t = { 0 };
    for (unsigned i = 0; i < n; i++) {
        const struct fleet_counts *c = &gs[i].k.n;
        char what[32];
        snprintf(what, sizeof what, "kernel %u", gs[i].port);
        print_counts(what, c);
        t.streams += c->streams;
        t.records += c->records;
        t.lost_records += c->lost_records;
        t.batches += c->batches;
        t.lost_dgrams += c->lost_dgrams;
        t.dups += c->dups;
        t.reordered += c->reordered;
        t.datagrams += c->datagrams;
        t.stream_ns += c->stream_ns;
        t.unmade += c->unmade;
    }
    char what[96];
    snprintf(what, sizeof what, "total concurrent_max %u send_failed %llu", concurrent_max,
             (unsigned long long)send_failed);
    if (send_failed)
        fprintf(stderr, "%s: %llu datagrams not sent: %s\n", prog,
                (unsigned long long)send_failed, strerror(send_errno));
    print_counts(what, &t);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "kernels", required_argument, NULL, 'n' }, { "rate", required_argument, NULL, 'r' },
        { "cpus", required_argument, NULL, 'c' }, { "stacks", required_argument, NULL, 's' },
        { "loss", required_argument, NULL, 'l' }, { "dup", required_argument, NULL, 'd' },
        { "reorder", required_argument, NULL, 'o' }, { "seed", required_argument, NULL, 'x' },
        { "build-id", required_argument, NULL, 'b' }, { "frames", required_argument, NULL, 'f' },
        { "verify-cost", no_argument, NULL, 'V' },
        { NULL, 0, NULL, 0 },
    };
    static const char *builds[BUILDS_MAX];
    static uint64_t pool[POOL_MAX], stacks[FLEET_STACKS_MAX][PSTR_FRAMES];
    static uint8_t depths[FLEET_STACKS_MAX];
    struct fleet_cfg cfg = { .cpus = 4, .hz = 100, .build_ids = builds, .stacks = stacks,
                             .depths = depths, .nstacks = 16 };
    unsigned n = 0, npool = 0;
    int c, verify = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
        switch (c) {
        case 'n': n = (unsigned)num("--kernels", optarg, 1, KERNELS_MAX); break;
        case 'r': cfg.hz = (unsigned)num("--rate", optarg, 1, 1000000); break;
        case 'c': cfg.cpus = (unsigned)num("--cpus", optarg, 1, FLEET_CPUS_MAX); break;
        case 's': cfg.nstacks = (unsigned)num("--stacks", optarg, 1, FLEET_STACKS_MAX); break;
        case 'l': cfg.loss = prob("--loss", optarg); break;
        case 'd': cfg.dup = prob("--dup", optarg); break;
        case 'o': cfg.reorder = prob("--reorder", optarg); break;
        case 'x': cfg.seed = num("--seed", optarg, 0, ~0ul); break;
        case 'b':
            if (cfg.nbuilds == BUILDS_MAX)
                usage_error("more than 16 --build-id", NULL);
            builds[cfg.nbuilds++] = optarg;
            break;
        case 'f': npool = parse_frames(optarg, pool); break;
        case 'V': verify = 1; break;
        default: usage_error("unknown option or missing value: ", argv[optind - 1]);
        }
    }
    if (optind != argc)
        usage_error("unexpected argument ", argv[optind]);
    if ((!n && !verify) || !npool)
        usage_error("--kernels (or --verify-cost) and --frames are required", NULL);
    make_stacks(pool, npool, cfg.nstacks, stacks, depths);
    const char *bad = fleet_cfg_check(&cfg);
    if (*bad)
        usage_error(bad, NULL);
    if (verify)
        return verify_cost(&cfg);
    struct gen_kernel *gs = calloc(n, sizeof *gs);
    int ep = epoll_create1(0);
    if (!gs || ep < 0) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return 2;
    }
    for (unsigned i = 0; i < n; i++) {
        if (open_kernel(&gs[i]))
            return 2;
        fleet_kernel_init(&gs[i].k, &cfg, i, send_dgram, &gs[i]);
        struct epoll_event ev = { .events = EPOLLIN, .data.u32 = i };
        if (epoll_ctl(ep, EPOLL_CTL_ADD, gs[i].fd, &ev)) {
            fprintf(stderr, "%s: epoll: %s\n", prog, strerror(errno));
            return 2;
        }
    }
    struct epoll_event ev = { .events = EPOLLIN, .data.u32 = n };
    epoll_ctl(ep, EPOLL_CTL_ADD, STDIN_FILENO, &ev);   /* a file or /dev/null: no EOF watch */
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    signal(SIGPIPE, SIG_IGN);
    printf("ready");
    for (unsigned i = 0; i < n; i++)
        printf(" %u", gs[i].port);
    printf("\n");
    fflush(stdout);
    uint64_t last = now_ns();
    while (!quit) {
        struct epoll_event evs[64];
        int m = epoll_wait(ep, evs, 64, 1);
        for (int j = 0; j < m; j++) {
            if (evs[j].data.u32 == n) {
                char b[256];
                if (read(STDIN_FILENO, b, sizeof b) <= 0)
                    quit = 1;
                continue;
            }
            serve(&gs[evs[j].data.u32]);
            txq_flush();            /* a stop's END */
        }
        uint64_t t = now_ns();
        if (t - last < TICK_NS)
            continue;
        last = t;
        unsigned on = 0;
        for (unsigned i = 0; i < n; i++) {
            fleet_tick(&gs[i].k, t);
            txq_flush();
            on += gs[i].k.on;
            /* A tick that falls behind is long: the shells are answered
             * within it too, so that no keep-alive waits for its end. */
            if (i % SERVE_EVERY == SERVE_EVERY - 1)
                serve_ready(ep, gs, n);
        }
        if (on > concurrent_max)
            concurrent_max = on;
    }
    report(gs, n);
    return 0;
}
