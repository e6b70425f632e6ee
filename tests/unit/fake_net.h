/* tests/unit/fake_net.h: net/net.h's UDP calls and kernel/time.h's clock
 * on the host, for tests of applications on UDP (the UDP shell): sent
 * datagrams are captured, the bound handler is kept so a test can deliver
 * datagrams to it. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "net/net.h"

struct fake_dgram {
    uint32_t ip;
    uint16_t sport, dport;
    size_t len;
    uint8_t *data;
};

extern struct fake_dgram *fake_sent;   /* every udp_send that returned 0, in order */
extern size_t fake_nsent;
extern int fake_send_fail;             /* this many udp_send calls fail first ... */
extern int fake_send_fail_rc;          /* ... with this NET_ERR_* */
extern uint64_t fake_now_ns;           /* time_ns(); sleep_ms and yield advance it */

extern udp_handler fake_bound_fn;      /* the last udp_bind's */
extern void *fake_bound_ctx;
extern uint16_t fake_bound_port;
extern struct net_app_stats *fake_app_stats;   /* the last registered */

/* Forget the captured datagrams (and free them). */
void fake_net_clear(void);
/* Hand the bound handler a datagram, from a heap copy of exactly len
 * bytes (ASan sees any read past it). */
void fake_net_deliver(uint32_t ip, uint16_t port, const void *data, size_t len);
