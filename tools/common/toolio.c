/* tools/common/toolio.c: clocks, a fair wait on several sockets, and numeric
 * options, shared by the host tools (tools/common/toolio.h).
 * Shared by the host tools: prefix tool_. */
#include "tools/common/toolio.h"
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>
#include "tools/common/ushell_client.h"

uint64_t tool_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t tool_mono_ms(void)
{
    return tool_mono_ns() / 1000000;
}

uint64_t tool_clock_ms(void *ctx)
{
    (void)ctx;
    return tool_mono_ms();
}

long tool_recv_any(const int *fds, unsigned n, unsigned *next, unsigned *which,
                   void *buf, size_t cap, uint64_t timeout_ms)
{
    struct pollfd pfd[n ? n : 1];
    for (unsigned i = 0; i < n; i++)
        pfd[i] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
    int pr = poll(pfd, n, (int)timeout_ms + 1);
    if (pr <= 0)
        return pr < 0 && errno != EINTR ? (*which = 0, USHC_IO_ERROR) : 0;
    for (unsigned k = 0; k < n; k++) {
        unsigned i = (*next + k) % n;
        if (!pfd[i].revents)
            continue;
        *next = i + 1;
        *which = i;
        ssize_t got = recv(fds[i], buf, cap, MSG_DONTWAIT);
        if (got >= 0)
            return (long)got;
        if (errno == ECONNREFUSED)
            return USHC_IO_REFUSED;
        return errno == EINTR || errno == EAGAIN ? 0 : USHC_IO_ERROR;
    }
    return 0;
}

long tool_parse_long(const char *prog, const char *what, const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*s == 0 || *end || errno || v < lo || v > hi) {
        fprintf(stderr, "%s: %s '%s' out of range (%ld-%ld)\n", prog, what, s, lo, hi);
        exit(2);
    }
    return v;
}

int tool_push_arg(const char *prog, const char **v, unsigned *n, unsigned max,
                  const char *arg, const char *what)
{
    if (*n == max) {
        fprintf(stderr, "%s: more than %u %s\n", prog, max, what);
        return -1;
    }
    v[(*n)++] = arg;
    return 0;
}
