/* tools/netload.c: the host end of netload (docs/netload.md).
 *
 *   netload sink [-H ADDR] -p PORT -t SECONDS
 *       Bind ADDR:PORT (default 127.0.0.1) for SECONDS and count the netload
 *       datagrams that arrive: loss, duplicates and reordering from their
 *       sequence numbers.
 *   netload blast -H HOST[:PORT] [-p PORT] -t SECONDS [-s SIZE] [-r PPS]
 *       Send SIZE-byte (18-1472, default 1024) netload datagrams to HOST:PORT
 *       for SECONDS, as fast as possible or PPS a second.
 *
 * Each prints one result line of "key value" pairs, e.g.
 *   sink: datagrams 12345 bytes 12641280 seconds 1.00 dps 12345 mbps 101.1
 *         lost 0 dup 0 reordered 0 malformed 0 foreign 0 run 4242
 *   blast: datagrams 1000 bytes 1024000 seconds 1.00 dps 1000 mbps 8.2
 *         errors 0 run 4242
 * (each on one line). mbps counts UDP payload bytes. The sink's seconds are
 * from its first datagram to its last, the time the traffic took.
 *
 * HOST and ADDR are IPv4 addresses or names (tools/common/hostaddr.c). Every
 * run stops at its time limit. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tools/common/hostaddr.h"
#include "tools/common/toolio.h"
#include "uapi/netload.h"

#define SEQ_WINDOW_BITS (1u << 22)     /* dup/reorder memory: 4M datagrams */

static const char *prog = "netload";

static void usage_to(FILE *f)
{
    fprintf(f,
            "usage: %s sink [-H ADDR] -p PORT -t SECONDS\n"
            "       %s blast -H HOST[:PORT] [-p PORT] -t SECONDS [-s SIZE] [-r PPS]\n"
            "       %s -h | --help\n"
            "  sink counts the netload datagrams arriving on ADDR:PORT (ADDR\n"
            "  default 127.0.0.1); blast sends them to HOST:PORT.\n"
            "  HOST, ADDR  an IPv4 address or a host name (resolved to IPv4)\n"
            "  PORT     1-65535; SECONDS 0.1-3600; SIZE %d-%d (default %d);\n"
            "  PPS      datagrams a second, 1-10000000 (default: as fast as possible)\n"
            "Each prints one result line; exit status 0, or 2 on bad usage.\n",
            prog, prog, prog, NL_SIZE_MIN, NL_SIZE_MAX, NL_SIZE_DEF);
}

static void usage(void)
{
    usage_to(stderr);
    exit(2);
}

static bool wants_help(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0)
            return true;
    return false;
}


static double parse_seconds(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (*s == 0 || *end || !(v >= 0.1 && v <= 3600)) {
        fprintf(stderr, "%s: seconds '%s' out of range (0.1-3600)\n", prog, s);
        exit(2);
    }
    return v;
}

static struct sockaddr_in addr_or_die(const char *arg, long port)
{
    struct sockaddr_in a;
    char err[HOSTADDR_ERR_MAX];
    if (hostaddr_parse(arg, (int)port, &a, err, sizeof err) < 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        exit(2);
    }
    return a;
}

static int udp_socket(struct sockaddr_in me)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) {
        perror("netload: socket");
        exit(2);
    }
    int big = 4 << 20;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);   /* best effort */
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    if (bind(fd, (struct sockaddr *)&me, sizeof me) < 0) {
        fprintf(stderr, "%s: bind %s:%u: %s\n", prog, inet_ntoa(me.sin_addr),
                ntohs(me.sin_port), strerror(errno));
        exit(2);
    }
    return fd;
}

static void rates(uint64_t datagrams, uint64_t bytes, double secs, double *dps, double *mbps)
{
    *dps = secs > 0 ? (double)datagrams / secs : 0;
    *mbps = secs > 0 ? (double)bytes * 8 / secs / 1e6 : 0;
}

static int sink(int argc, char **argv)
{
    const char *bind_to = "127.0.0.1";
    long port = -1;
    double secs = -1;
    int opt;
    while ((opt = getopt(argc, argv, "H:p:t:")) != -1) {
        switch (opt) {
        case 'H': bind_to = optarg; break;
        case 'p': port = tool_parse_long(prog, "port", optarg, 1, 65535); break;
        case 't': secs = parse_seconds(optarg); break;
        default: usage();
        }
    }
    if (port < 0 || secs < 0 || optind != argc)
        usage();

    struct sockaddr_in me = addr_or_die(bind_to, port);
    int fd = udp_socket(me);
    uint8_t *bits = malloc(SEQ_WINDOW_BITS / 8);
    if (!bits) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return 2;
    }
    struct nl_track t;
    nl_track_init(&t, bits, SEQ_WINDOW_BITS);
    uint64_t malformed = 0, foreign = 0, first = 0, last = 0;
    bool have_run = false;
    uint16_t run = 0;
    uint64_t start = tool_mono_ns(), end = start + (uint64_t)(secs * 1e9);
    fprintf(stderr, "sink: listening on %s:%u for %.1f s\n", inet_ntoa(me.sin_addr),
            ntohs(me.sin_port), secs);

    for (uint64_t now = start; now < end; now = tool_mono_ns()) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        int ms = (int)((end - now + 999999) / 1000000);
        if (poll(&pfd, 1, ms) <= 0)
            continue;
        /* Drain everything queued before looking at the clock again. */
        uint8_t d[65536];
        ssize_t n;
        while ((n = recv(fd, d, sizeof d, MSG_DONTWAIT)) >= 0) {
            struct nl_hdr h;
            if (!nl_parse(d, (size_t)n, &h)) {
                malformed++;
                continue;
            }
            if (!have_run) {
                have_run = true;
                run = h.run;
            } else if (h.run != run) {
                foreign++;              /* another run's stragglers */
                continue;
            }
            last = tool_mono_ns();
            if (t.datagrams == 0)
                first = last;
            nl_track_seq(&t, h.seq, (size_t)n);
        }
    }

    double span = t.datagrams > 1 ? (double)(last - first) / 1e9 : 0, dps, mbps;
    rates(t.datagrams, t.bytes, span, &dps, &mbps);
    printf("sink: datagrams %llu bytes %llu seconds %.2f dps %.0f mbps %.1f "
           "lost %llu dup %llu reordered %llu malformed %llu foreign %llu run %u\n",
           (unsigned long long)t.datagrams, (unsigned long long)t.bytes, span, dps, mbps,
           (unsigned long long)nl_track_lost(&t), (unsigned long long)t.dup,
           (unsigned long long)t.reordered, (unsigned long long)malformed,
           (unsigned long long)foreign, run);
    free(bits);
    close(fd);
    return 0;
}

static void sleep_until(uint64_t when_ns)
{
    struct timespec ts = { (time_t)(when_ns / 1000000000ull), (long)(when_ns % 1000000000ull) };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static int blast(int argc, char **argv)
{
    const char *host = NULL;
    long port = -1, size = NL_SIZE_DEF, pps = 0;
    double secs = -1;
    int opt;
    while ((opt = getopt(argc, argv, "H:p:t:s:r:")) != -1) {
        switch (opt) {
        case 'H': host = optarg; break;
        case 'p': port = tool_parse_long(prog, "port", optarg, 1, 65535); break;
        case 't': secs = parse_seconds(optarg); break;
        case 's': size = tool_parse_long(prog, "size", optarg, NL_SIZE_MIN, NL_SIZE_MAX); break;
        case 'r': pps = tool_parse_long(prog, "rate", optarg, 1, 10000000); break;
        default: usage();
        }
    }
    /* The port comes from -p or from HOST:PORT; one of them is needed. */
    if (!host || secs < 0 || optind != argc || (port < 0 && !strchr(host, ':')))
        usage();

    struct sockaddr_in to = addr_or_die(host, port < 0 ? 1 : port);
    struct sockaddr_in me = { .sin_family = AF_INET };
    me.sin_addr.s_addr = htonl(INADDR_ANY);
    int fd = udp_socket(me);
    uint16_t run;
    if (getrandom(&run, sizeof run, 0) != sizeof run)
        run = (uint16_t)(getpid() ^ time(NULL));

    uint8_t buf[NL_SIZE_MAX];
    nl_fill_pattern(buf, (size_t)size);
    uint64_t sent = 0, errors = 0;
    uint64_t start = tool_mono_ns(), end = start + (uint64_t)(secs * 1e9), now = start;
    while (now < end) {
        if (pps) {
            /* An absolute schedule: a late datagram does not shift the rest. */
            uint64_t due = start + (uint64_t)((double)sent * 1e9 / (double)pps);
            if (due >= end)
                break;
            if (due > now)
                sleep_until(due);
        }
        nl_build(buf, run, (uint32_t)sent, tool_mono_ns());
        if (sendto(fd, buf, (size_t)size, 0, (struct sockaddr *)&to, sizeof to) == size) {
            sent++;
        } else {
            errors++;              /* ENOBUFS and the like: the datagram is lost */
            if (errno == ENOBUFS || errno == EAGAIN)
                sleep_until(tool_mono_ns() + 100000);
        }
        now = tool_mono_ns();
    }

    double span = (double)(tool_mono_ns() - start) / 1e9, dps, mbps;
    rates(sent, sent * (uint64_t)size, span, &dps, &mbps);
    printf("blast: datagrams %llu bytes %llu seconds %.2f dps %.0f mbps %.1f "
           "errors %llu run %u\n", (unsigned long long)sent,
           (unsigned long long)(sent * (uint64_t)size), span, dps, mbps,
           (unsigned long long)errors, run);
    close(fd);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        usage();
    if (wants_help(argc, argv)) {
        usage_to(stdout);
        return 0;
    }
    if (strcmp(argv[1], "sink") == 0)
        return sink(argc - 1, argv + 1);
    if (strcmp(argv[1], "blast") == 0)
        return blast(argc - 1, argv + 1);
    fprintf(stderr, "%s: unknown mode '%s' (sink or blast)\n", prog, argv[1]);
    usage();
}
