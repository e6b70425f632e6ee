/* tools/sonde-switch.c: a learning Ethernet switch between QEMUs, on
 * 127.0.0.1 (docs/netload.md, "Two kernels on one wire").
 *
 *   sonde-switch -t SECONDS PORT:PEER [PORT:PEER ...]
 *
 * Each PORT:PEER is one switch port, the other end of a QEMU
 *   -netdev socket,id=X,udp=127.0.0.1:PORT,localaddr=127.0.0.1:PEER
 * (one Ethernet frame per UDP datagram): the switch receives on
 * 127.0.0.1:PORT and sends to 127.0.0.1:PEER. Frames go where their
 * destination was last heard from (tools/switch/table.c), and only
 * broadcasts, multicasts and unknown destinations to every other port.
 *
 * Why not QEMU's own hub: a hub repeats every frame on every port, and a
 * user-networking (slirp) backend on one forwards each IPv4 datagram it
 * is handed to the real destination address from the host, whatever the
 * frame's destination MAC. Two kernels loading each other next to the
 * slirp that forwards their UDP shells would send all the load out of the
 * host. Behind a learning switch, slirp hears only what is addressed to
 * it and broadcasts.
 *
 * Prints "switch: ready ..." on stdout once every port is bound, and the
 * per-port counters when it ends: at SECONDS, or on SIGINT/SIGTERM. Exit
 * status 0, 2 on bad usage or a port that cannot be bound. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tools/switch/table.h"
#include "tools/common/toolio.h"

#define BATCH 64                     /* frames taken from one port per turn */
#define FRAME_MAX 65536

static const char *prog = "sonde-switch";
static volatile sig_atomic_t stop;

struct port {
    int fd;
    struct sockaddr_in peer;
    unsigned long long rx, tx, flooded, dropped, send_errors;
};

static void usage(FILE *f, int rc)
{
    fprintf(f,
            "usage: %s -t SECONDS PORT:PEER [PORT:PEER ...]\n"
            "       %s -h | --help\n"
            "  A learning Ethernet switch for QEMU's UDP socket netdevs, on 127.0.0.1.\n"
            "  PORT:PEER  one switch port: frames arrive on 127.0.0.1:PORT and leave\n"
            "             to 127.0.0.1:PEER, the QEMU started with\n"
            "             -netdev socket,udp=127.0.0.1:PORT,localaddr=127.0.0.1:PEER\n"
            "             (1-65535 each; 2-%d ports)\n"
            "  SECONDS    how long to run, 1-86400; SIGINT or SIGTERM end it sooner\n"
            "Prints 'switch: ready' once bound and per-port counters at the end.\n"
            "Exit status 0, or 2 on bad usage or a port that cannot be bound.\n",
            prog, prog, SWT_PORTS_MAX);
    exit(rc);
}

static struct sockaddr_in loopback(long port)
{
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

static void port_open(struct port *p, const char *arg)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%s", arg);
    char *colon = strchr(buf, ':');
    if (!colon) {
        fprintf(stderr, "%s: '%s' is not PORT:PEER\n", prog, arg);
        exit(2);
    }
    *colon = 0;
    struct sockaddr_in me = loopback(tool_parse_long(prog, "port", buf, 1, 65535));
    p->peer = loopback(tool_parse_long(prog, "peer port", colon + 1, 1, 65535));
    p->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);
    if (p->fd < 0) {
        fprintf(stderr, "%s: socket: %s\n", prog, strerror(errno));
        exit(2);
    }
    int big = 4 << 20;               /* best effort: absorbs a burst */
    setsockopt(p->fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    setsockopt(p->fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    if (bind(p->fd, (struct sockaddr *)&me, sizeof me) < 0) {
        fprintf(stderr, "%s: bind 127.0.0.1:%s: %s\n", prog, buf, strerror(errno));
        exit(2);
    }
}

static void port_send(struct port *p, const uint8_t *f, size_t n)
{
    /* A QEMU that is not reading (still starting, or gone) costs the
     * frame, as a cable to a powered-off machine would. */
    if (sendto(p->fd, f, n, 0, (struct sockaddr *)&p->peer, sizeof p->peer) < 0)
        p->send_errors++;
    else
        p->tx++;
}

/* Take up to BATCH frames from port i and pass each on. */
static void port_drain(struct swt *t, struct port *ports, int n, int i)
{
    static uint8_t f[FRAME_MAX];
    for (int k = 0; k < BATCH; k++) {
        ssize_t len = recv(ports[i].fd, f, sizeof f, 0);
        if (len < 0)
            return;
        ports[i].rx++;
        int out = swt_frame(t, i, f, (unsigned)len);
        if (out == SWT_DROP) {
            ports[i].dropped++;
        } else if (out == SWT_FLOOD) {
            ports[i].flooded++;
            for (int j = 0; j < n; j++)
                if (j != i)
                    port_send(&ports[j], f, (size_t)len);
        } else {
            port_send(&ports[out], f, (size_t)len);
        }
    }
}

static void on_signal(int sig) { (void)sig; stop = 1; }

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    long secs = -1;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            usage(stdout, 0);
    int opt;
    while ((opt = getopt(argc, argv, "t:")) != -1) {
        if (opt != 't')
            usage(stderr, 2);
        secs = tool_parse_long(prog, "seconds", optarg, 1, 86400);
    }
    int n = argc - optind;
    if (secs < 0 || n < 2 || n > SWT_PORTS_MAX)
        usage(stderr, 2);

    struct port ports[SWT_PORTS_MAX] = { 0 };
    struct pollfd pfd[SWT_PORTS_MAX];
    for (int i = 0; i < n; i++) {
        port_open(&ports[i], argv[optind + i]);
        pfd[i] = (struct pollfd){ .fd = ports[i].fd, .events = POLLIN };
    }
    struct swt t;
    swt_init(&t, n);
    struct sigaction sa = { .sa_handler = on_signal };
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    printf("switch: ready, %d ports, %ld s\n", n, secs);
    fflush(stdout);

    double end = now_s() + (double)secs;
    while (!stop) {
        double left = end - now_s();
        if (left <= 0)
            break;
        int ms = left > 1 ? 1000 : (int)(left * 1000) + 1;
        if (poll(pfd, (nfds_t)n, ms) <= 0)
            continue;                /* a timeout, or a signal: check both */
        for (int i = 0; i < n; i++)
            if (pfd[i].revents & POLLIN)
                port_drain(&t, ports, n, i);
    }
    for (int i = 0; i < n; i++)
        printf("switch: port %d (%s) rx %llu tx %llu flooded %llu dropped %llu "
               "send-errors %llu\n", i, argv[optind + i],
               ports[i].rx, ports[i].tx, ports[i].flooded, ports[i].dropped,
               ports[i].send_errors);
    return 0;
}
