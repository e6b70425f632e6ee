/* tools/sonde-sh.c: the host client of Sonde's UDP shell (docs/udpshell.md).
 *
 *   sonde-sh [-p PORT] [-t SECONDS] [-k KEYFILE] HOST [COMMAND...]
 *
 * With a command: send it, print the reply, exit 0; 1 if the host refused
 * it (nothing listens on the port), 2 on no reply within -t seconds, a
 * protocol error or bad usage. Without: a "> " prompt, one command a line.
 * The protocol (resends, reassembly) is tools/ushell_client.c; this file is
 * the socket, the clock and the command line.
 *
 * -k KEYFILE speaks the authenticated mode (a kernel booted with
 * ushkey=): requests tagged, replies verified.
 *
 * Only loopback: this workplace allows nothing else, and a shell without a
 * key has no authentication, so the client refuses any other address. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tools/ushell_client.h"
#include "uapi/udpshell.h"

static const char *prog = "sonde-sh";

static void usage(void)
{
    fprintf(stderr,
            "usage: %s [-p PORT] [-t SECONDS] [-k KEYFILE] HOST [COMMAND...]\n"
            "  HOST     a loopback address (127.0.0.0/8) or localhost\n"
            "  -p PORT  UDP port of the shell (1-65535, default %d)\n"
            "  -t SECS  give up after SECS without reply data (0.1-3600, default 5)\n"
            "  -k FILE  the shell's key (the kernel's ushkey=): FILE holds 64 hex digits\n"
            "           and at most a newline; requests are then tagged and every reply\n"
            "           must carry a valid tag. Keeping FILE private (chmod 600) is up\n"
            "           to you: this tool does not check its permissions.\n"
            "With COMMAND, run it and print the reply; without, read commands\n"
            "from stdin at a \"> \" prompt. Exit status: 0 the reply arrived, 1 the\n"
            "host refused the request, 2 no reply in time, a protocol error or bad usage.\n",
            prog, USHP_DEFAULT_PORT);
    exit(USHC_EXIT_PROTO);
}

static int resolve_loopback(const char *host, struct in_addr *out)
{
    if (strcmp(host, "localhost") == 0) {
        out->s_addr = htonl(INADDR_LOOPBACK);
        return 0;
    }
    if (inet_pton(AF_INET, host, out) != 1) {
        fprintf(stderr, "%s: '%s' is not an IPv4 address or localhost\n", prog, host);
        return -1;
    }
    if ((ntohl(out->s_addr) >> 24) != 127) {
        fprintf(stderr, "%s: refusing %s: only loopback addresses (127.0.0.0/8) "
                "are allowed\n", prog, host);
        return -1;
    }
    return 0;
}

/* ---- the socket and the clock under ushc_io ---- */

static int sock_send(void *ctx, const void *d, size_t n)
{
    int fd = *(int *)ctx;
    if (send(fd, d, n, 0) >= 0)
        return 0;
    return errno == ECONNREFUSED ? USHC_IO_REFUSED : USHC_IO_ERROR;
}

static long sock_recv(void *ctx, void *buf, size_t cap, uint64_t timeout_ms)
{
    int fd = *(int *)ctx;
    struct pollfd pfd = { .fd = fd, .events = POLLIN };
    int pr = poll(&pfd, 1, (int)timeout_ms + 1);
    if (pr < 0)
        return errno == EINTR ? 0 : USHC_IO_ERROR;
    if (pr == 0)
        return 0;
    ssize_t got = recv(fd, buf, cap, 0);
    if (got >= 0)
        return (long)got;
    if (errno == ECONNREFUSED)
        return USHC_IO_REFUSED;
    return errno == EINTR || errno == EAGAIN ? 0 : USHC_IO_ERROR;
}

static uint64_t mono_ms(void *ctx)
{
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A socket bound to loopback and connected to the shell: the kernel then
 * drops datagrams from anyone else, and reports a refused port. */
static int open_socket(struct in_addr addr, int port)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) {
        perror("sonde-sh: socket");
        exit(USHC_EXIT_PROTO);
    }
    struct sockaddr_in me = { .sin_family = AF_INET };
    me.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&me, sizeof me) < 0) {
        perror("sonde-sh: bind 127.0.0.1");
        exit(USHC_EXIT_PROTO);
    }
    struct sockaddr_in peer = { .sin_family = AF_INET, .sin_addr = addr,
                                .sin_port = htons((uint16_t)port) };
    if (connect(fd, (struct sockaddr *)&peer, sizeof peer) < 0) {
        perror("sonde-sh: connect");
        exit(USHC_EXIT_PROTO);
    }
    return fd;
}

static int interactive(struct ushc *c)
{
    char line[4096];
    for (;;) {
        fputs("> ", stdout);
        fflush(stdout);
        if (!fgets(line, sizeof line, stdin)) {
            putchar('\n');
            return USHC_EXIT_OK;
        }
        line[strcspn(line, "\r\n")] = 0;
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s)
            continue;
        if (strcmp(s, "exit") == 0 || strcmp(s, "quit") == 0)
            return USHC_EXIT_OK;
        ushc_run(c, s);         /* errors are reported; the prompt goes on */
    }
}

int main(int argc, char **argv)
{
    int port = USHP_DEFAULT_PORT, opt;
    double timeout_s = 5;
    char *end;
    static uint8_t key[USHP_KEY_LEN];
    const char *keyfile = NULL;
    while ((opt = getopt(argc, argv, "+p:t:k:h")) != -1) {
        switch (opt) {
        case 'k':
            keyfile = optarg;
            break;
        case 'p': {
            long v = strtol(optarg, &end, 10);
            if (*optarg == 0 || *end || v < 1 || v > 65535) {
                fprintf(stderr, "%s: port '%s' out of range (1-65535)\n", prog, optarg);
                return USHC_EXIT_PROTO;
            }
            port = (int)v;
            break;
        }
        case 't':
            timeout_s = strtod(optarg, &end);
            if (*optarg == 0 || *end || !(timeout_s >= 0.1 && timeout_s <= 3600)) {
                fprintf(stderr, "%s: timeout '%s' out of range (0.1-3600 s)\n", prog, optarg);
                return USHC_EXIT_PROTO;
            }
            break;
        default:
            usage();
        }
    }
    if (optind >= argc)
        usage();
    if (keyfile && ushc_load_key(keyfile, key, stderr, prog) < 0)
        return USHC_EXIT_PROTO;
    struct in_addr addr;
    if (resolve_loopback(argv[optind], &addr) < 0)
        return USHC_EXIT_PROTO;

    static int fd;
    fd = open_socket(addr, port);
    char peer[32];
    snprintf(peer, sizeof peer, "%s:%d", inet_ntoa(addr), port);
    struct ushc c = {
        .io = { &fd, sock_send, sock_recv, mono_ms },
        .timeout_ms = (uint64_t)(timeout_s * 1000),
        .peer = peer, .prog = prog, .out = stdout, .err = stderr,
        .key = keyfile ? key : NULL,
    };
    /* Random start: replies to another client's earlier run with the same
     * port cannot pass for ours. */
    if (getrandom(&c.seq, sizeof c.seq, 0) != sizeof c.seq)
        c.seq = (uint32_t)time(NULL) ^ (uint32_t)getpid() << 16;
    if (optind + 1 == argc)
        return interactive(&c);

    /* The words joined by single spaces are the command line. */
    char cmd[USHP_CMD_MAX + 2];
    size_t n = 0;
    for (int i = optind + 1; i < argc; i++) {
        size_t w = strlen(argv[i]);
        if (n + (n > 0) + w > USHP_CMD_MAX) {
            fprintf(stderr, "%s: command longer than %d bytes\n", prog, USHP_CMD_MAX);
            return USHC_EXIT_PROTO;
        }
        if (n)
            cmd[n++] = ' ';
        memcpy(cmd + n, argv[i], w);
        n += w;
    }
    cmd[n] = 0;
    return ushc_run(&c, cmd);
}
