/* tools/common/toolio.h: what every host tool does the same way with clocks,
 * sockets and numeric options (sonde-prof, netload, sonde-switch).
 * Shared by the host tools: prefix tool_. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* CLOCK_MONOTONIC, in ns and in ms. */
uint64_t tool_mono_ns(void);
uint64_t tool_mono_ms(void);
/* tool_mono_ms as the clock a callback table wants (ushc_io.now_ms,
 * ushc_mux.now_ms): ctx is not used. */
uint64_t tool_clock_ms(void *ctx);

/* Wait up to timeout_ms for a datagram on any of the n sockets fds: its
 * length with *which the socket's index, 0 if none came in time, or
 * USHC_IO_ERROR (errno says why) / USHC_IO_REFUSED (ICMP port
 * unreachable) with *which naming the socket. The scan starts after the
 * socket served last (*next, kept by the caller), so a chatty peer cannot
 * starve the others. A datagram longer than cap is cut to cap. */
long tool_recv_any(const int *fds, unsigned n, unsigned *next, unsigned *which,
                   void *buf, size_t cap, uint64_t timeout_ms);

/* A decimal option value in lo..hi, or exit 2 with "PROG: WHAT 'S' out
 * of range (LO-HI)" on stderr. */
long tool_parse_long(const char *prog, const char *what, const char *s, long lo, long hi);

/* Append arg to v (holding *n of at most max) for a repeatable option:
 * 0, or -1 with "PROG: more than MAX WHAT" on stderr. */
int tool_push_arg(const char *prog, const char **v, unsigned *n, unsigned max,
                  const char *arg, const char *what);
