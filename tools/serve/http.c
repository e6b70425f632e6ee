/* tools/serve/http.c: libmicrohttpd on its own thread (tools/serve/http.h).
 * Serve layer: prefix sv_. */
#define _GNU_SOURCE
#include "tools/serve/http.h"
#include "lib/parse.h"
#include "tools/common/toolio.h"
#include <arpa/inet.h>
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CONN_MAX        64      /* connections at once: a page and a few tools */
#define CONN_TIMEOUT_S  10      /* an idle connection is closed after this */
#define CONN_MEMORY     (32 * 1024)   /* a request's line and headers: past it, 431 */
#define REAP_MS         250     /* how often requests' deadlines are looked at */
#define STALL_ENV       "SONDE_SERVE_TEST_STALL_MS"
#define STALL_MAX_MS    60000

/* One connection as serve keeps it, beside libmicrohttpd's: its socket
 * and when its request began, for the deadline. */
struct conn {
    struct MHD_Connection *c;   /* NULL: a free slot */
    int fd;
    uint64_t start_ms;          /* accepted, or its last request answered */
    bool cut;                   /* shut down past the deadline */
};

struct sv_http {
    struct MHD_Daemon *d;
    const struct sv_state *st;
    struct sv_http_opts o;
    uint16_t port;
    char bound[INET_ADDRSTRLEN];    /* the address listened on */
    struct conn conns[CONN_MAX];
    unsigned stall_ms;          /* tests only: each /api/flame this much slower */
    /* The deadline's (below): conns is written by libmicrohttpd's thread
     * (a connection's open, answer and close) and read by the reaper's,
     * under lock; the reaper wakes every REAP_MS, or at once to stop. */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t reaper;
    bool reaping, stopping;
};

struct args {
    struct sv_arg v[SV_API_ARGS_MAX];
    unsigned n;
    bool too_many;
};

static enum MHD_Result take_arg(void *cls, enum MHD_ValueKind kind, const char *key,
                                const char *value)
{
    (void)kind;
    struct args *a = cls;
    if (a->n == SV_API_ARGS_MAX) {
        a->too_many = true;
        return MHD_NO;
    }
    a->v[a->n++] = (struct sv_arg){ key, value };
    return MHD_YES;
}

/* libmicrohttpd's unescaping, except that "%00" stays as it is: a NUL in
 * the middle would cut the path or a value short, and "/api/status%00x"
 * must not be taken for "/api/status". */
static size_t unescape(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls, (void)c;
    char *w = s;
    for (const char *r = s; *r; r++) {
        int hi, lo;
        if (r[0] == '%' && (hi = parse_hex_digit(r[1])) >= 0 && (lo = parse_hex_digit(r[2])) >= 0 &&
            (hi | lo)) {
            *w++ = (char)(hi << 4 | lo);
            r += 2;
        } else {
            *w++ = *r;
        }
    }
    *w = 0;
    return (size_t)(w - s);
}

static enum MHD_Result queue(struct MHD_Connection *conn, struct sv_reply *r)
{
    struct MHD_Response *resp = MHD_create_response_from_buffer(
        r->len, r->body, r->body_static ? MHD_RESPMEM_PERSISTENT : MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        sv_reply_free(r);
        return MHD_NO;
    }
    r->body = NULL;             /* the response owns it now */
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, r->type);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    /* The page runs its own inline script and style, and reads serve's
     * API; nothing else, wherever its data came from. */
    if (strncmp(r->type, "text/html", 9) == 0)
        MHD_add_response_header(resp, "Content-Security-Policy",
                                "default-src 'none'; script-src 'unsafe-inline'; "
                                "style-src 'unsafe-inline'; connect-src 'self'; img-src data:");
    if (r->status == 405)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    if (r->filename) {
        char cd[128];
        snprintf(cd, sizeof cd, "attachment; filename=\"%s\"", r->filename);
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_DISPOSITION, cd);
    }
    enum MHD_Result ok = MHD_queue_response(conn, r->status, resp);
    MHD_destroy_response(resp);
    return ok;
}

/* ---- the Host header ------------------------------------------------------
 *
 * A page anywhere can make a browser ask serve for a name that an
 * attacker's DNS points at 127.0.0.1 (DNS rebinding); the browser then
 * sends that name as Host, and reads the answer as the attacker's own
 * origin. So a request is answered only when its Host is a name serve
 * goes by: the address it listens on, localhost or 127.0.0.1, each with
 * its port (none only where that port is 80), and with --public the
 * --allow-host names (with the port or none: a proxy in front may serve
 * them on its own). Anything else is a 421. */

static bool name_is(const char *name, size_t n, const char *want)
{
    return strlen(want) == n && strncasecmp(name, want, n) == 0;
}

static bool host_allowed(const struct sv_http *s, const char *host)
{
    const char *colon = strrchr(host, ':');
    size_t n = colon ? (size_t)(colon - host) : strlen(host);
    bool port_ok = false, no_port = !colon;
    if (colon) {
        char *end;
        unsigned long port = strtoul(colon + 1, &end, 10);
        port_ok = colon[1] >= '0' && colon[1] <= '9' && !*end && port == s->port;
    }
    if ((port_ok || (no_port && s->port == 80)) &&
        (name_is(host, n, "localhost") || name_is(host, n, "127.0.0.1") ||
         (strcmp(s->bound, "0.0.0.0") != 0 && name_is(host, n, s->bound))))
        return true;
    for (unsigned i = 0; s->o.public_ && i < s->o.nallow; i++)
        if ((port_ok || no_port) && name_is(host, n, s->o.allow_hosts[i]))
            return true;
    return false;
}

/* snprintf at buf's end, never past cap (a long name is cut). */
static void append(char *buf, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t cap, const char *fmt, ...)
{
    size_t len = strlen(buf);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + len, cap - len, fmt, ap);
    va_end(ap);
}

static void misdirected(const struct sv_http *s, const char *host, struct sv_reply *r)
{
    char msg[SV_API_ERROR_MAX];
    snprintf(msg, sizeof msg, "Host '%.100s' is not this server's: it answers to "
             "127.0.0.1:%u and localhost:%u", host, s->port, s->port);
    if (strcmp(s->bound, "127.0.0.1") != 0 && strcmp(s->bound, "0.0.0.0") != 0)
        append(msg, sizeof msg, ", %s:%u", s->bound, s->port);
    for (unsigned i = 0; s->o.public_ && i < s->o.nallow; i++)
        append(msg, sizeof msg, ", %.60s", s->o.allow_hosts[i]);
    if (!s->o.public_ || !s->o.nallow)
        append(msg, sizeof msg, " (with --public, --allow-host NAME adds a name)");
    sv_api_error(r, 421, msg);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)upload_data, (void)con_cls;
    struct sv_http *s = cls;
    struct sv_reply r;
    /* HTTP/1.1 without Host is libmicrohttpd's 400 already; an HTTP/1.0
     * client may send none, and no browser is one. */
    const char *host = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST);
    if (host ? !host_allowed(s, host) : strcmp(version, MHD_HTTP_VERSION_1_0) != 0) {
        misdirected(s, host ? host : "", &r);
        *upload_data_size = 0;
        return queue(conn, &r);
    }
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
        sv_api_error(&r, 405, "only GET and HEAD are served");
        *upload_data_size = 0;  /* a body is not read: the connection closes */
        return queue(conn, &r);
    }
    struct args a = { .n = 0 };
    MHD_get_connection_values(conn, MHD_GET_ARGUMENT_KIND, take_arg, &a);
    if (a.too_many) {
        char msg[96];
        snprintf(msg, sizeof msg, "too many arguments (at most %u)", SV_API_ARGS_MAX);
        sv_api_error(&r, 400, msg);
    } else {
        if (s->stall_ms && strcmp(url, "/api/flame") == 0)
            usleep(s->stall_ms * 1000u);
        sv_api_get(s->st, url, a.v, a.n, &r);
    }
    return queue(conn, &r);
}

/* ---- the deadline -----------------------------------------------------------
 *
 * libmicrohttpd's timeout is for an idle connection: a client that sends
 * a header byte every few seconds is never idle, and CONN_MAX of them
 * lock every other client out for as long as they like. So every
 * request has a deadline as a whole (SV_HTTP_DEADLINE_MS from its
 * connection's accept, or from the last answer on a kept-alive one);
 * past it serve shuts the socket down, and libmicrohttpd, reading its
 * end, closes the connection as any a client closed. */

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
    struct sv_http *s = cls;
    pthread_mutex_lock(&s->lock);
    if (toe == MHD_CONNECTION_NOTIFY_CLOSED) {
        /* Before libmicrohttpd closes the socket: the reaper never shuts
         * down a descriptor that may be another's by then. */
        struct conn *k = *socket_context;
        if (k)
            memset(k, 0, sizeof *k);
    } else {
        const union MHD_ConnectionInfo *i =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        for (unsigned n = 0; n < CONN_MAX && i; n++)
            if (!s->conns[n].c) {
                s->conns[n] = (struct conn){ c, i->connect_fd, tool_mono_ms(), false };
                *socket_context = &s->conns[n];
                break;
            }
    }
    pthread_mutex_unlock(&s->lock);
}

/* An answer went out: a kept-alive connection's next request has a
 * deadline of its own. */
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)con_cls, (void)toe;
    struct sv_http *s = cls;
    const union MHD_ConnectionInfo *i = MHD_get_connection_info(c,
                                                                MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    pthread_mutex_lock(&s->lock);
    struct conn *k = i ? i->socket_context : NULL;
    if (k && k->c == c)
        k->start_ms = tool_mono_ms();
    pthread_mutex_unlock(&s->lock);
}

/* Under s->lock. */
static void cut_late(struct sv_http *s)
{
    uint64_t now = tool_mono_ms();
    for (unsigned n = 0; n < CONN_MAX; n++) {
        struct conn *k = &s->conns[n];
        if (k->c && !k->cut && now - k->start_ms >= SV_HTTP_DEADLINE_MS) {
            shutdown(k->fd, SHUT_RDWR);
            k->cut = true;
        }
    }
}

/* The reaper: cut_late every REAP_MS until sv_http_stop. */
static void *reap(void *arg)
{
    struct sv_http *s = arg;
    pthread_mutex_lock(&s->lock);
    while (!s->stopping) {
        cut_late(s);
        struct timespec t;
        clock_gettime(CLOCK_MONOTONIC, &t);
        t.tv_nsec += REAP_MS * 1000000L;
        t.tv_sec += t.tv_nsec / 1000000000L;
        t.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&s->wake, &s->lock, &t);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

static void reaper_stop(struct sv_http *s)
{
    if (s->reaping) {
        pthread_mutex_lock(&s->lock);
        s->stopping = true;
        pthread_cond_signal(&s->wake);
        pthread_mutex_unlock(&s->lock);
        pthread_join(s->reaper, NULL);
        s->reaping = false;
    }
}

struct sv_http *sv_http_start(const struct sockaddr_in *addr, const struct sv_state *st,
                              const struct sv_http_opts *o, char *err, size_t errcap)
{
    if (MHD_is_feature_supported(MHD_FEATURE_EPOLL) != MHD_YES) {
        snprintf(err, errcap, "this libmicrohttpd has no epoll support");
        return NULL;
    }
    struct sv_http *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errcap, "out of memory");
        return NULL;
    }
    s->st = st;
    pthread_mutex_init(&s->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&s->wake, &ca);
    pthread_condattr_destroy(&ca);
    /* Tests only (tests/tools/check_serve_stall.py): a handler as slow as
     * a request over a long history can be, on demand. No request of a
     * small test's history takes seconds by itself; read once here, never
     * per request. */
    s->o = *o;
    inet_ntop(AF_INET, &addr->sin_addr, s->bound, sizeof s->bound);
    const char *stall = getenv(STALL_ENV);
    unsigned long stall_ms = stall ? strtoul(stall, NULL, 10) : 0;
    s->stall_ms = stall_ms > STALL_MAX_MS ? STALL_MAX_MS : (unsigned)stall_ms;
    /* No MHD_USE_ERROR_LOG: what a client got wrong is its 4xx, not a
     * line on serve's stderr for anyone to provoke. Where anyone may
     * connect (--public), one address holds SV_HTTP_PER_ADDR of the
     * CONN_MAX connections at most; on loopback every client is one
     * address. */
    /* Its own thread (epoll inside), which never sees SIGINT or SIGTERM:
     * those wake serve's collector loop. */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    s->d = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD, ntohs(addr->sin_port),
                            NULL, NULL, on_request, s,
                            MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)addr,
                            MHD_OPTION_CONNECTION_LIMIT, (unsigned)CONN_MAX,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT,
                            (unsigned)(o->public_ ? SV_HTTP_PER_ADDR : 0),
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONN_TIMEOUT_S,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY,
                            MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
                            MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
                            MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
                            /* RFC 9112 strictly: an HTTP/1.1 request without
                             * Host is a 400 */
                            MHD_OPTION_STRICT_FOR_CLIENT, 1,
                            MHD_OPTION_END);
    /* The reaper blocks the signals too: it is created under the same mask. */
    if (s->d)
        s->reaping = pthread_create(&s->reaper, NULL, reap, s) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (s->d && !s->reaping) {
        MHD_stop_daemon(s->d);
        s->d = NULL;
        snprintf(err, errcap, "cannot start the thread that keeps requests' deadlines");
        free(s);
        return NULL;
    }
    if (!s->d) {
        snprintf(err, errcap, "cannot listen there (in use, or not an address of this "
                 "machine)");
        free(s);
        return NULL;
    }
    const union MHD_DaemonInfo *i = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = i ? i->port : ntohs(addr->sin_port);
    return s;
}

uint16_t sv_http_port(const struct sv_http *s) { return s->port; }

void sv_http_stop(struct sv_http *s)
{
    if (!s)
        return;
    MHD_stop_daemon(s->d);      /* no callback after it: the reaper's conns are its own */
    reaper_stop(s);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->wake);
    free(s);
}
