/* net/netload.h: the kernel's end of the UDP load test (net/netload.c,
 * docs/netload.md). The command (kernel/cmd/netload.c) checks the
 * arguments; these run it. One run at a time, as a killable task; each
 * returns 0, or 1 with the reason printed to p. Task context. */
#pragma once
#include <stdint.h>

struct printer;

#define NL_MS_MAX     600000         /* a run's length, ms */
#define NL_PPS_MAX    1000000        /* send's rate limit, datagrams/s */

/* Send size-byte datagrams to ip:port for ms (pps 0: as fast as the ring
 * takes them). */
int netload_send(uint32_t ip, uint16_t port, uint64_t ms, uint64_t size, uint64_t pps,
                 struct printer *p);
/* Bind port and count what arrives for ms. */
int netload_recv(uint16_t port, uint64_t ms, struct printer *p);
/* End the current run and print its figures. */
int netload_stop(struct printer *p);
/* The current (or last) run's state and figures. */
int netload_status(struct printer *p);
