/* tools/sonde-sh.c: the host client of Sonde's UDP shell (docs/udpshell.md).
 *
 *   sonde-sh [-p PORT] [-t SECONDS] [-k KEYFILE [-i ID]] HOST[:PORT] [COMMAND...]
 *
 * With a command: send it, print the reply, exit 0; 1 if the host refused
 * it (nothing listens on the port), 2 on no reply within -t seconds, a
 * protocol error or bad usage. Without: a "> " prompt, one command a line.
 * The protocol (resends, reassembly) is tools/common/ushell_client.c; this
 * file is the socket, the clock and the command line.
 *
 * -k KEYFILE speaks the authenticated mode (a kernel booted with
 * ushkey=): requests tagged, replies verified; -i ID for a kernel booted
 * with ushid=ID, whose tags only that id's key makes. A "port unreachable" is
 * then taken for a lost datagram (anyone can forge one): it exits 1 only
 * if no verified datagram came within -t seconds.
 *
 * HOST is any IPv4 address or name (tools/common/hostaddr.c), so a kernel on a
 * real machine is reached like one under QEMU. Refusing addresses here
 * would protect nothing: anyone can send datagrams with another client;
 * what protects a shell on an untrusted network is its key (ushkey=,
 * docs/udpshell.md). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tools/common/hostaddr.h"
#include "tools/common/toolio.h"
#include "tools/common/ushell_client.h"
#include "uapi/udpshell.h"

static const char *prog = "sonde-sh";

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s [-p PORT] [-t SECONDS] [-k KEYFILE [-i ID]] HOST[:PORT] [COMMAND...]\n"
            "       %s -h | --help\n"
            "  HOST     an IPv4 address or a host name (resolved to IPv4)\n"
            "  -p PORT  UDP port of the shell (1-65535, default %d); :PORT after\n"
            "           HOST says the same\n"
            "  -t SECS  give up after SECS without reply data (0.1-3600, default 5)\n"
            "  -k FILE  the shell's key (the kernel's ushkey=): FILE holds 64 hex digits\n"
            "           and at most a newline; requests are then tagged and every reply\n"
            "           must carry a valid tag. Keeping FILE private (chmod 600) is up\n"
            "           to you: this tool does not check its permissions.\n"
            "  -i ID    with -k: the kernel's ushid= (1-31 of A-Z a-z 0-9 . _ -); a kernel\n"
            "           with another id, or none, does not answer, nor is believed\n"
            "With COMMAND, run it and print the reply; without, read commands\n"
            "from stdin at a \"> \" prompt. Exit status: 0 the reply arrived, 1 the\n"
            "host refused the request (with -k: only refusals, nothing verified, for\n"
            "-t seconds), 2 no reply in time, a protocol error or bad usage.\n",
            prog, prog, USHP_DEFAULT_PORT);
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

/* A connected socket: the kernel then drops datagrams from anyone but the
 * shell, and reports a refused port. */
static int open_socket(const struct sockaddr_in *peer)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0) {
        perror("sonde-sh: socket");
        exit(USHC_EXIT_PROTO);
    }
    if (connect(fd, (const struct sockaddr *)peer, sizeof *peer) < 0) {
        fprintf(stderr, "%s: connect to %s:%d: %s\n", prog, inet_ntoa(peer->sin_addr),
                ntohs(peer->sin_port), strerror(errno));
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
    static const struct option longopts[] = {
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    static uint8_t key[USHP_KEY_LEN];
    const char *keyfile = NULL, *id = NULL;
    while ((opt = getopt_long(argc, argv, "+p:t:k:i:h", longopts, NULL)) != -1) {
        switch (opt) {
        case 'k':
            keyfile = optarg;
            break;
        case 'i':
            id = optarg;
            break;
        case 'p': {
            long v = hostaddr_port(optarg);
            if (v < 0) {
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
        case 'h':
            usage(stdout);
            return USHC_EXIT_OK;
        default:
            usage(stderr);
            return USHC_EXIT_PROTO;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return USHC_EXIT_PROTO;
    }
    if (id && !keyfile) {
        fprintf(stderr, "%s: -i %s names a kernel's ushid=, which only a key (-k) uses\n",
                prog, id);
        return USHC_EXIT_PROTO;
    }
    if (keyfile && ushc_load_key(keyfile, key, stderr, prog) < 0)
        return USHC_EXIT_PROTO;
    if (id && ushc_use_id(key, id, stderr, prog) < 0)
        return USHC_EXIT_PROTO;
    struct sockaddr_in addr;
    char err[HOSTADDR_ERR_MAX];
    if (hostaddr_parse(argv[optind], port, &addr, err, sizeof err) < 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return USHC_EXIT_PROTO;
    }

    static int fd;
    fd = open_socket(&addr);
    char peer[HOSTADDR_NAME_MAX];
    hostaddr_name(argv[optind], port, peer, sizeof peer);
    struct ushc c = {
        .io = { &fd, sock_send, sock_recv, tool_clock_ms },
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
