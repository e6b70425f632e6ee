/* net/net.h: the network stack as drivers and commands see it.
 *
 * Ethernet, ARP, IPv4, ICMP echo and UDP for one interface. A driver hands
 * the stack received frames with net_rx() and receives frames to send
 * through its netdev's xmit(). Addresses, ports and masks are host byte
 * order in every call here; the stack converts at the wire.
 *
 * Context: every entry point runs in task context (the driver's receive
 * task or bottom half, a shell command, netload). Shared state (ARP cache,
 * UDP bindings) is under spinlocks; counters are atomic. Nothing here may
 * be called from NMI context.
 *
 * Lock order: the ARP lock is held while frames that waited for an ARP
 * reply are handed to xmit(), so a driver must not call net_rx() (or any
 * other net_ call) while holding the lock its xmit() takes. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct printer;

#define UDP_PAYLOAD_MAX 1472      /* 1500 - 20 (IPv4) - 8 (UDP): no fragments */

/* The driver's half. mac is filled by the driver before net_init. xmit sends
 * one complete Ethernet frame (no FCS, at least 60 bytes) and returns 0, or
 * -1 if its TX ring is full: the stack counts the drop and returns
 * NET_ERR_NOBUF to the sender. xmit must copy the frame (or finish with
 * it) before returning: the buffer is reused at once. */
struct netdev {
    uint8_t mac[6];
    int (*xmit)(struct netdev *dev, const void *frame, size_t len);
    void *priv;
    /* Optional, all three or none: a frame built in place, in the
     * device's own transmit buffer, so that nothing is copied.
     * tx_reserve gives one ETH_FRAME_BUF-byte buffer, or NULL when none
     * is free. tx_commit sends len bytes of it (at least ETH_FRAME_MIN)
     * and gives it back: 0, or -1 for a buffer that was not reserved or a
     * bad length (it is then given back unsent). With csum_start nonzero
     * the device computes the Internet checksum of the bytes from
     * csum_start to the end and stores it at csum_start + csum_off; the
     * stack asks that only of a device with tx_csum set. tx_cancel gives
     * a reserved buffer back unsent. */
    void *(*tx_reserve)(struct netdev *dev);
    int (*tx_commit)(struct netdev *dev, void *frame, size_t len,
                     uint16_t csum_start, uint16_t csum_off);
    void (*tx_cancel)(struct netdev *dev, void *frame);
    bool tx_csum;
};

/* Results of the sending calls. */
#define NET_QUEUED        1   /* parked until ARP resolves the next hop; not an error */
#define NET_ERR_INVAL    -1   /* bad argument (length, port 0, address 0) */
#define NET_ERR_NODEV    -2   /* net_init has not run */
#define NET_ERR_NOBUF    -3   /* driver TX ring full: dropped and counted; retry later */
#define NET_ERR_NOARP    -4   /* next hop unresolved and the ARP queue is full: counted; retry */
#define NET_ERR_NOROUTE  -5   /* off-subnet destination and no gateway */
#define NET_ERR_BUSY     -6   /* udp_bind: port already bound */
#define NET_ERR_FULL     -7   /* udp_bind: binding table full */

/* Bring the stack up on dev (ip/mask/gw host order, gw 0 = none). Empties
 * the ARP cache and UDP bindings. Call once, before the driver's first
 * net_rx. */
void net_init(struct netdev *dev, uint32_t ip, uint32_t mask, uint32_t gw);
/* One received Ethernet frame (without FCS). The frame is only read, and
 * only during the call. Safe against any content and any len. */
void net_rx(const void *frame, size_t len);

/* UDP. A handler runs in net_rx's context, with data pointing into the
 * received frame: copy what you keep, return soon, do not sleep. */
typedef void (*udp_handler)(void *ctx, uint32_t src_ip, uint16_t src_port,
                            const void *data, size_t len);
#define UDP_MAX_BINDINGS 16
/* 0, NET_ERR_INVAL (port 0 or fn NULL), NET_ERR_BUSY, NET_ERR_FULL. The
 * port receives unicast only: a datagram to a broadcast destination is
 * dropped (drop_broadcast), since every host on the wire would answer it.
 * Multicast never reaches UDP at all: the stack joins no group, so IPv4
 * takes a multicast destination for another host's (rx_ignored). */
int udp_bind(uint16_t port, udp_handler fn, void *ctx);
/* udp_bind with options: UDP_BIND_BROADCAST also delivers datagrams sent
 * to a broadcast destination (a protocol built for them); multicast is
 * still never delivered (see udp_bind). */
#define UDP_BIND_BROADCAST 0x1
int udp_bind_opts(uint16_t port, udp_handler fn, void *ctx, unsigned opts);
/* Remove the binding and wait until no handler call for it is still
 * running (so ctx may be freed after). 0, or NET_ERR_INVAL if not bound.
 * Never call it from the port's own handler: it would wait for itself. */
int udp_unbind(uint16_t port);
/* Send len (0..UDP_PAYLOAD_MAX) bytes with a checksum. Returns 0 (handed
 * to the driver), NET_QUEUED (waiting for ARP; sent when the reply comes,
 * dropped and counted under drop_arp if none comes within 3 s), or a
 * NET_ERR_*. Frames are built on the caller's stack (~1.5 KB). */
int udp_send(uint32_t dst_ip, uint16_t src_port, uint16_t dst_port,
             const void *data, size_t len);
/* A datagram built in place, in the device's own transmit buffer: no
 * copy. udp_reserve gives room for UDP_PAYLOAD_MAX bytes of payload to
 * dst_ip, or NULL when that cannot be done now (no device that builds in
 * place, no route, the next hop's MAC not known yet, no free buffer): the
 * caller then uses udp_send, which asks ARP and queues. udp_commit sends
 * len bytes of it (0, or NET_ERR_INVAL for a bad length or port: given
 * back unsent); udp_cancel gives it back unsent. One of the two must
 * follow every reservation: until then a transmit buffer is held. */
void *udp_reserve(uint32_t dst_ip);
int udp_commit(void *payload, uint32_t dst_ip, uint16_t src_port, uint16_t dst_port, size_t len);
/* udp_commit with no UDP checksum (0 on the wire: none computed, RFC 768),
 * for a payload that carries its own, stronger check: a tagged profile
 * stream datagram, whose tag covers every byte and which a collector
 * holding the key verifies before anything else. One listening without
 * the key takes it as an untagged one: its parser's checks, the IPv4
 * header's checksum and the link's own are all that is left then.
 * Summing 1.4 KB is ~700 instructions a datagram on arm64. */
int udp_commit_unsummed(void *payload, uint32_t dst_ip, uint16_t src_port, uint16_t dst_port,
                        size_t len);
void udp_cancel(void *payload);

/* Counters since net_init. Drops are by reason; every received frame that
 * the stack did not consume is in exactly one of them or in rx_ignored. */
struct net_stats {
    uint64_t rx_frames, rx_bytes;
    uint64_t tx_frames, tx_bytes;
    uint64_t rx_ignored;            /* not for us: other MAC/IP (multicast among them),
                                       ICMP other than echo */
    uint64_t drop_bad_csum;         /* IPv4 header, ICMP or UDP checksum wrong */
    uint64_t drop_truncated;        /* shorter than a header, or a length field disagreeing with the frame */
    uint64_t drop_unknown_proto;    /* ethertype, IP version or IP protocol we do not speak */
    uint64_t drop_no_handler;       /* UDP to a port nobody bound */
    uint64_t drop_no_buffer;        /* TX ring full (driver xmit returned -1) or RX buffer shortage (driver) */
    uint64_t drop_fragment;         /* IPv4 fragments (MF set or offset non-zero) */
    uint64_t drop_arp;              /* bad ARP packet, or a frame whose next hop never resolved */
    uint64_t drop_bad_source;       /* a source no reply may go to: broadcast, multicast,
                                       loopback, 0.0.0.0, our own address (RFC 1122
                                       3.2.1.3), or a group Ethernet source */
    uint64_t drop_broadcast;        /* UDP to a broadcast destination, on a port that did
                                       not ask for them (UDP_BIND_BROADCAST); multicast
                                       is rx_ignored, by IPv4 */
};

extern struct net_stats net_stats_live;
/* Count one event: NET_COUNT(drop_bad_csum). Relaxed atomic: counters
 * are statistics, nothing is ordered by them. */
#define NET_COUNT(field) __atomic_fetch_add(&net_stats_live.field, 1, __ATOMIC_RELAXED)
#define NET_COUNT_N(field, n) \
    __atomic_fetch_add(&net_stats_live.field, (uint64_t)(n), __ATOMIC_RELAXED)

const struct net_stats *net_get_stats(void);

/* A destination many hosts receive: 255.255.255.255, our subnet's
 * broadcast, or multicast (224.0.0.0/4). */
bool ipv4_is_group(uint32_t dst);

/* A source address nothing may be sent back to (RFC 1122 3.2.1.3): 0.0.0.0,
 * 255.255.255.255 or our subnet's broadcast, multicast and class E,
 * loopback, or our own address. A datagram or echo from one is dropped:
 * answering it would turn one spoofed request into a broadcast reply. */
bool ipv4_source_unanswerable(uint32_t src);

/* Our configuration (host order); 0 before net_init. */
uint32_t net_ip(void);
uint32_t net_mask(void);
uint32_t net_gw(void);
/* "a.b.c.d" into buf (at least 16 bytes); returns buf. */
char *net_fmt_ip(char *buf, uint32_t ip);

/* An application on UDP that keeps counters of its own (the UDP shell)
 * adds its lines to `net`'s output: what it drops after the stack has
 * delivered a datagram is its business, not the stack's. Register once, in
 * task context; an entry is never removed. print runs in the `net`
 * command's task and writes through that command's printer. */
struct net_app_stats {
    void (*print)(struct printer *p);
    struct net_app_stats *next;
};
void net_app_stats_register(struct net_app_stats *s);

/* The `net` and `arp` commands' output. */
void net_print(struct printer *p);
void arp_print(struct printer *p);
