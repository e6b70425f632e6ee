/* tools/serve/http.h: `sonde-prof serve`'s HTTP side: libmicrohttpd on a
 * thread of its own (one: requests are answered one at a time, and the
 * ELFs' libdw handles are never used by two threads), so that no request
 * holds up the collector; every GET answered by the API
 * (tools/serve/api.h), which takes the state's lock to read. What
 * libmicrohttpd refuses by itself (a request
 * line or headers past its memory limit, a malformed request) it answers
 * with a 4xx of its own; a method other than GET or HEAD is a 405; a Host
 * that is none of serve's names a 421 (DNS rebinding: http.c says which
 * names). A request not answered within SV_HTTP_DEADLINE_MS, however
 * slowly its bytes came, has its connection closed; with --public one
 * address holds SV_HTTP_PER_ADDR connections at most.
 * For tests only, SONDE_SERVE_TEST_STALL_MS=N in the environment (read
 * once, at the start; 0-60000) makes every /api/flame take N ms longer,
 * as a slow request would.
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
/* Stops the thread, the requests in flight answered first. */
void sv_http_stop(struct sv_http *s);
