/* tools/sonde-sh.c: the host client of Sonde's UDP shell (docs/udpshell.md).
 *
 *   sonde-sh [-p PORT] [-t SECONDS] HOST [COMMAND...]
 *
 * With a command: send it, print the reply, exit 0; 1 on timeout, 2 on a
 * protocol error or bad usage. Without: a "> " prompt, one command a line.
 *
 * Waiting: the request is sent again (same sequence number: the shell then
 * resends its reply without running the command again) after each second
 * without a new chunk, at most RETRIES times in all; the client gives up
 * when no new chunk has arrived for -t seconds (default 5). A command that
 * prints nothing for longer (a long `profile`) needs a larger -t.
 *
 * Only loopback: this workplace allows nothing else, and the shell has no
 * authentication, so the client refuses any other address. */
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

#include "../net/udpshell_proto.c"

#define RETRY_MS   1000
#define RETRIES    3            /* re-sends per command, after the first send */
#define MAX_CHUNKS 65536

enum { EXIT_OK = 0, EXIT_TIMEOUT = 1, EXIT_PROTO = 2 };

static const char *prog = "sonde-sh";

struct client {
    int fd;
    struct sockaddr_in peer;
    double timeout_s;
    uint32_t seq;
};

/* One reply being reassembled. Chunks may arrive out of order or twice:
 * they are kept by index and written out as soon as they are contiguous. */
struct reply {
    uint8_t *have;              /* per chunk: received */
    uint8_t **data;             /* per chunk: payload copy until printed */
    uint16_t *len;
    long last;                  /* index of the flagged chunk, -1 until seen */
    long next_out;              /* first chunk not yet printed */
};

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: %s [-p PORT] [-t SECONDS] HOST [COMMAND...]\n"
            "  HOST     a loopback address (127.0.0.0/8) or localhost\n"
            "  -p PORT  UDP port of the shell (1-65535, default %d)\n"
            "  -t SECS  give up after SECS without reply data (0.1-3600, default 5)\n"
            "With COMMAND, run it and print the reply; without, read commands\n"
            "from stdin at a \"> \" prompt.\n", prog, USHP_DEFAULT_PORT);
    exit(EXIT_PROTO);
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

static void client_open(struct client *c, struct in_addr addr, int port)
{
    c->fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (c->fd < 0) {
        perror("sonde-sh: socket");
        exit(EXIT_PROTO);
    }
    /* Bind our end to loopback too, on any free port. */
    struct sockaddr_in me = { .sin_family = AF_INET };
    me.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(c->fd, (struct sockaddr *)&me, sizeof me) < 0) {
        perror("sonde-sh: bind 127.0.0.1");
        exit(EXIT_PROTO);
    }
    memset(&c->peer, 0, sizeof c->peer);
    c->peer.sin_family = AF_INET;
    c->peer.sin_addr = addr;
    c->peer.sin_port = htons((uint16_t)port);
    if (getrandom(&c->seq, sizeof c->seq, 0) != sizeof c->seq)
        c->seq = (uint32_t)time(NULL) ^ (uint32_t)getpid() << 16;
}

static void send_request(struct client *c, const char *cmd, size_t n)
{
    uint8_t d[USHP_HDR_LEN + USHP_CMD_MAX];
    size_t len = ushp_build(d, sizeof d, c->seq, 0, true, cmd, n);
    /* A loss here is like a loss on the wire: the retry covers it. A
     * refused port (ECONNREFUSED) is not reported on unconnected sockets. */
    if (sendto(c->fd, d, len, 0, (struct sockaddr *)&c->peer, sizeof c->peer) < 0)
        fprintf(stderr, "%s: send: %s\n", prog, strerror(errno));
}

static void reply_init(struct reply *r)
{
    r->have = calloc(MAX_CHUNKS, 1);
    r->data = calloc(MAX_CHUNKS, sizeof *r->data);
    r->len = calloc(MAX_CHUNKS, sizeof *r->len);
    if (!r->have || !r->data || !r->len) {
        fprintf(stderr, "%s: out of memory\n", prog);
        exit(EXIT_PROTO);
    }
    r->last = -1;
    r->next_out = 0;
}

static void reply_free(struct reply *r)
{
    for (long i = 0; i < MAX_CHUNKS; i++)
        free(r->data[i]);
    free(r->have);
    free(r->data);
    free(r->len);
}

static void reply_flush(struct reply *r)
{
    while (r->next_out < MAX_CHUNKS && r->have[r->next_out]) {
        long i = r->next_out++;
        fwrite(r->data[i], 1, r->len[i], stdout);
        free(r->data[i]);
        r->data[i] = NULL;
    }
    fflush(stdout);
}

/* Take one datagram from the shell. Returns 1 if it was a new chunk of our
 * reply, 0 if ignored (stale or duplicate), -1 on a protocol error. */
static int reply_take(struct client *c, struct reply *r, const uint8_t *d, size_t n)
{
    struct ushp_hdr h;
    const uint8_t *pl;
    int e = ushp_parse_reply(d, n, &h, &pl);
    if (e) {
        fprintf(stderr, "%s: protocol error: bad reply datagram (%zu bytes): %s\n",
                prog, n, ushp_strerror(e));
        return -1;
    }
    if (h.seq != c->seq)
        return 0;                   /* a late reply to an earlier request */
    bool last = h.flags & USHP_FLAG_LAST;
    if (r->last >= 0 && (h.chunk > r->last || (last && h.chunk != r->last))) {
        fprintf(stderr, "%s: protocol error: chunk %u after the last chunk %ld "
                "(seq %u)\n", prog, h.chunk, r->last, h.seq);
        return -1;
    }
    if (r->have[h.chunk])
        return 0;                   /* duplicate (a retransmitted reply) */
    if (last) {
        for (long i = h.chunk + 1; i < MAX_CHUNKS; i++) {
            if (r->have[i]) {
                fprintf(stderr, "%s: protocol error: last chunk %u but chunk %ld "
                        "received (seq %u)\n", prog, h.chunk, i, h.seq);
                return -1;
            }
        }
        r->last = h.chunk;
    }
    r->data[h.chunk] = malloc(h.len ? h.len : 1);
    if (!r->data[h.chunk]) {
        fprintf(stderr, "%s: out of memory\n", prog);
        exit(EXIT_PROTO);
    }
    memcpy(r->data[h.chunk], pl, h.len);
    r->len[h.chunk] = h.len;
    r->have[h.chunk] = 1;
    reply_flush(r);
    return 1;
}

static bool reply_done(const struct reply *r)
{
    return r->last >= 0 && r->next_out > r->last;
}

/* Run one command; returns an exit status. */
static int run_command(struct client *c, const char *cmd)
{
    size_t n = strlen(cmd);
    if (n > USHP_CMD_MAX) {
        fprintf(stderr, "%s: command is %zu bytes; the shell takes at most %d\n",
                prog, n, USHP_CMD_MAX);
        return EXIT_PROTO;
    }
    c->seq++;
    struct reply r;
    reply_init(&r);
    send_request(c, cmd, n);
    int retries = 0, rc = EXIT_TIMEOUT;
    uint64_t last_progress = now_ms(), last_send = last_progress;
    uint64_t timeout_ms = (uint64_t)(c->timeout_s * 1000);

    for (;;) {
        uint64_t t = now_ms();
        if (t - last_progress >= timeout_ms) {
            fprintf(stderr, "%s: timeout: no reply from %s:%u for %.1f s "
                    "(command sent %d times)\n", prog, inet_ntoa(c->peer.sin_addr),
                    ntohs(c->peer.sin_port), c->timeout_s, retries + 1);
            break;
        }
        if (t - last_send >= RETRY_MS && retries < RETRIES) {
            send_request(c, cmd, n);
            retries++;
            last_send = t;
        }
        uint64_t wait = timeout_ms - (t - last_progress);
        if (retries < RETRIES && RETRY_MS - (t - last_send) < wait)
            wait = RETRY_MS - (t - last_send);
        struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
        int pr = poll(&pfd, 1, (int)wait + 1);
        if (pr < 0 && errno != EINTR) {
            perror("sonde-sh: poll");
            rc = EXIT_PROTO;
            break;
        }
        if (pr <= 0)
            continue;
        uint8_t d[65536];
        struct sockaddr_in from;
        socklen_t fl = sizeof from;
        ssize_t got = recvfrom(c->fd, d, sizeof d, 0, (struct sockaddr *)&from, &fl);
        if (got < 0)
            continue;           /* e.g. ECONNREFUSED from an earlier send */
        if (from.sin_addr.s_addr != c->peer.sin_addr.s_addr ||
            from.sin_port != c->peer.sin_port)
            continue;           /* not the shell */
        int k = reply_take(c, &r, d, (size_t)got);
        if (k < 0) {
            rc = EXIT_PROTO;
            break;
        }
        if (k > 0) {
            /* Progress: the silence clock and the retry clock restart. */
            last_progress = last_send = now_ms();
            if (reply_done(&r)) {
                rc = EXIT_OK;
                break;
            }
        }
    }
    reply_free(&r);
    return rc;
}

static int interactive(struct client *c)
{
    char line[4096];
    for (;;) {
        fputs("> ", stdout);
        fflush(stdout);
        if (!fgets(line, sizeof line, stdin)) {
            putchar('\n');
            return EXIT_OK;
        }
        line[strcspn(line, "\r\n")] = 0;
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s)
            continue;
        if (strcmp(s, "exit") == 0 || strcmp(s, "quit") == 0)
            return EXIT_OK;
        run_command(c, s);      /* errors are reported; the prompt goes on */
    }
}

int main(int argc, char **argv)
{
    int port = USHP_DEFAULT_PORT, opt;
    double timeout_s = 5;
    char *end;
    while ((opt = getopt(argc, argv, "+p:t:h")) != -1) {
        switch (opt) {
        case 'p': {
            long v = strtol(optarg, &end, 10);
            if (*optarg == 0 || *end || v < 1 || v > 65535) {
                fprintf(stderr, "%s: port '%s' out of range (1-65535)\n", prog, optarg);
                return EXIT_PROTO;
            }
            port = (int)v;
            break;
        }
        case 't':
            timeout_s = strtod(optarg, &end);
            if (*optarg == 0 || *end || !(timeout_s >= 0.1 && timeout_s <= 3600)) {
                fprintf(stderr, "%s: timeout '%s' out of range (0.1-3600 s)\n", prog, optarg);
                return EXIT_PROTO;
            }
            break;
        default:
            usage();
        }
    }
    if (optind >= argc)
        usage();
    struct in_addr addr;
    if (resolve_loopback(argv[optind], &addr) < 0)
        return EXIT_PROTO;

    struct client c;
    client_open(&c, addr, port);
    c.timeout_s = timeout_s;
    if (optind + 1 == argc)
        return interactive(&c);

    /* The words joined by single spaces are the command line. */
    char cmd[USHP_CMD_MAX + 2];
    size_t n = 0;
    for (int i = optind + 1; i < argc; i++) {
        size_t w = strlen(argv[i]);
        if (n + (n > 0) + w > USHP_CMD_MAX) {
            fprintf(stderr, "%s: command longer than %d bytes\n", prog, USHP_CMD_MAX);
            return EXIT_PROTO;
        }
        if (n)
            cmd[n++] = ' ';
        memcpy(cmd + n, argv[i], w);
        n += w;
    }
    cmd[n] = 0;
    return run_command(&c, cmd);
}
