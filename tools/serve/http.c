/* tools/serve/http.c: libmicrohttpd on its own thread (tools/serve/http.h).
 * Serve layer: prefix sv_. */
#define _GNU_SOURCE
#include "tools/serve/http.h"
#include "lib/parse.h"
#include <microhttpd.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CONN_MAX        64      /* connections at once: a page and a few tools */
#define CONN_TIMEOUT_S  10      /* an idle or stuck connection is closed after this */
#define CONN_MEMORY     (32 * 1024)   /* a request's line and headers: past it, 431 */
#define STALL_ENV       "SONDE_SERVE_TEST_STALL_MS"
#define STALL_MAX_MS    60000

struct sv_http {
    struct MHD_Daemon *d;
    const struct sv_state *st;
    uint16_t port;
    unsigned stall_ms;          /* tests only: each /api/flame this much slower */
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

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_data_size,
                                  void **con_cls)
{
    (void)version, (void)upload_data, (void)con_cls;
    struct sv_http *s = cls;
    struct sv_reply r;
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

struct sv_http *sv_http_start(const struct sockaddr_in *addr, const struct sv_state *st,
                              char *err, size_t errcap)
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
    /* Tests only (tests/tools/check_serve_stall.py): a handler as slow as
     * a request over a long history can be, on demand. No request of a
     * small test's history takes seconds by itself; read once here, never
     * per request. */
    const char *stall = getenv(STALL_ENV);
    unsigned long stall_ms = stall ? strtoul(stall, NULL, 10) : 0;
    s->stall_ms = stall_ms > STALL_MAX_MS ? STALL_MAX_MS : (unsigned)stall_ms;
    /* No MHD_USE_ERROR_LOG: what a client got wrong is its 4xx, not a
     * line on serve's stderr for anyone to provoke. */
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
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)CONN_TIMEOUT_S,
                            MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)CONN_MEMORY,
                            MHD_OPTION_UNESCAPE_CALLBACK, unescape, NULL,
                            /* RFC 9112 strictly: an HTTP/1.1 request without
                             * Host is a 400 */
                            MHD_OPTION_STRICT_FOR_CLIENT, 1,
                            MHD_OPTION_END);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
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
    MHD_stop_daemon(s->d);
    free(s);
}
