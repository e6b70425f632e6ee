/* tools/serve/http.h: `sonde-prof serve`'s HTTP side: libmicrohttpd, run
 * from serve's own loop (no thread of its own, so the history is never
 * read while the collector writes it), every GET answered by the API
 * (tools/serve/api.h). What libmicrohttpd refuses by itself (a request
 * line or headers past its memory limit, a malformed request) it answers
 * with a 4xx of its own; a method other than GET or HEAD is a 405; a Host
 * that is none of serve's names a 421 (DNS rebinding: http.c says which
 * names). A request not answered within SV_HTTP_DEADLINE_MS, however
 * slowly its bytes came, has its connection closed; with --public one
 * address holds SV_HTTP_PER_ADDR connections at most.
 * Serve layer: prefix sv_. */
#pragma once
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tools/serve/api.h"

#define SV_HTTP_DEADLINE_MS 10000u  /* a request, as a whole */
#define SV_HTTP_PER_ADDR    16u     /* --public: connections of one address */
#define SV_HTTP_ALLOW_MAX   16u     /* --allow-host names */

struct sv_http;

struct sv_http_opts {
    bool public_;                   /* --public: anyone may connect */
    const char *const *allow_hosts; /* --allow-host: Host names taken with --public */
    unsigned nallow;
};

/* Listens on addr (port 0: one the system picks). NULL with err on
 * failure (the address in use, not this machine's). */
struct sv_http *sv_http_start(const struct sockaddr_in *addr, const struct sv_state *st,
                              const struct sv_http_opts *o, char *err, size_t errcap);
/* The port listened on. */
uint16_t sv_http_port(const struct sv_http *s);
/* The file descriptor to poll for input (epoll's: every connection's). */
int sv_http_fd(const struct sv_http *s);
/* The most ms to wait before sv_http_run is due anyway (-1: no limit). */
int sv_http_timeout_ms(const struct sv_http *s);
/* Serves whatever is ready, without waiting. */
void sv_http_run(struct sv_http *s);
void sv_http_stop(struct sv_http *s);
