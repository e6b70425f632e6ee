/* net/pkt.h: wire formats and the calls between the layers of the stack.
 *
 * Everything here is internal to net/: drivers and commands use net/net.h.
 * Frames are byte arrays; a header is read through a packed struct laid
 * over them only after the length has been checked, so alignment never
 * matters and no parser reads past the length it was given.
 *
 * Transmit builds a frame in one ETH_FRAME_BUF-byte buffer from the inside
 * out: UDP/ICMP write their header and payload at ETH_HLEN + IP_HLEN, IPv4
 * writes its header at ETH_HLEN, and the ARP layer fills the Ethernet header
 * once it knows the next hop's MAC (or parks the whole frame until it does). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/string.h"
#include "uapi/byteorder.h"     /* get_be16/32, put_be16/32: fields at any alignment */

/* ---- byte order (the wire is big-endian, x86 and arm64 are little) ----
 * The socket API's names for a whole aligned field; the host tools get
 * them from <arpa/inet.h>, so they live here and not in uapi/. */

static inline uint16_t htons(uint16_t v) { return __builtin_bswap16(v); }
static inline uint16_t ntohs(uint16_t v) { return __builtin_bswap16(v); }
static inline uint32_t htonl(uint32_t v) { return __builtin_bswap32(v); }
static inline uint32_t ntohl(uint32_t v) { return __builtin_bswap32(v); }

/* ---- Ethernet ---- */

#define ETH_ALEN        6
#define ETH_HLEN        14
#define ETH_MTU         1500
#define ETH_FRAME_MAX   (ETH_HLEN + ETH_MTU)      /* 1514, no FCS */
#define ETH_FRAME_MIN   60                         /* padded to this on send */
#define ETH_FRAME_BUF   ETH_FRAME_MAX              /* every TX buffer's size */
#define ETHERTYPE_IPV4  0x0800
#define ETHERTYPE_ARP   0x0806

struct eth_hdr {
    uint8_t dst[ETH_ALEN];
    uint8_t src[ETH_ALEN];
    uint16_t type;                /* network order */
} __attribute__((packed));
_Static_assert(sizeof(struct eth_hdr) == ETH_HLEN, "Ethernet header is 14 bytes");

extern const uint8_t eth_broadcast[ETH_ALEN];

/* ---- ARP (RFC 826, Ethernet + IPv4 only) ---- */

#define ARP_LEN         28
#define ARP_HTYPE_ETH   1
#define ARP_OP_REQUEST  1
#define ARP_OP_REPLY    2

struct arp_pkt {
    uint16_t htype, ptype;        /* 1, 0x0800 */
    uint8_t hlen, plen;           /* 6, 4 */
    uint16_t op;
    uint8_t sha[ETH_ALEN];        /* sender MAC */
    uint8_t spa[4];               /* sender IP (byte array: unaligned on the wire) */
    uint8_t tha[ETH_ALEN];
    uint8_t tpa[4];
} __attribute__((packed));
_Static_assert(sizeof(struct arp_pkt) == ARP_LEN, "ARP packet is 28 bytes");

/* ---- IPv4 (RFC 791) ---- */

#define IP_HLEN         20        /* we send no options */
#define IP_TTL          64
#define IP_PROTO_ICMP   1
#define IP_PROTO_UDP    17
#define IP_FLAG_MF      0x2000
#define IP_FRAG_OFFSET  0x1fff
#define IP_PAYLOAD_MAX  (ETH_MTU - IP_HLEN)       /* 1480 */

struct ipv4_hdr {
    uint8_t ver_ihl;              /* version 4 << 4 | header length in words */
    uint8_t tos;
    uint16_t total_len;
    uint16_t id;
    uint16_t frag;                /* flags (3 bits) | fragment offset (13) */
    uint8_t ttl, proto;
    uint16_t csum;
    uint8_t src[4], dst[4];
} __attribute__((packed));
_Static_assert(sizeof(struct ipv4_hdr) == IP_HLEN, "IPv4 header is 20 bytes");

/* ---- ICMP (RFC 792) ---- */

#define ICMP_HLEN       8
#define ICMP_ECHO_REPLY   0
#define ICMP_ECHO_REQUEST 8

struct icmp_hdr {
    uint8_t type, code;
    uint16_t csum;
    uint16_t id, seq;             /* echo only */
} __attribute__((packed));
_Static_assert(sizeof(struct icmp_hdr) == ICMP_HLEN, "ICMP echo header is 8 bytes");

/* ---- UDP (RFC 768) ---- */

#define UDP_HLEN        8
/* UDP_PAYLOAD_MAX (1472) is in net/net.h: callers size datagrams by it. */

struct udp_hdr {
    uint16_t sport, dport, len, csum;
} __attribute__((packed));
_Static_assert(sizeof(struct udp_hdr) == UDP_HLEN, "UDP header is 8 bytes");

/* Offsets of each layer in a transmit buffer. */
#define TX_IP_OFF       ETH_HLEN
#define TX_L4_OFF       (ETH_HLEN + IP_HLEN)

/* ---- the Internet checksum (RFC 1071) ---- */

/* Add len bytes at p to a running one's-complement sum (64-bit, so no
 * overflow for any frame). Odd lengths are padded with a zero byte. */
uint64_t inet_sum(const void *p, size_t len, uint64_t sum);
/* The same, copying the len bytes from src to dst in the same pass. The
 * sums of two pieces add up when the first has an even length. */
uint64_t inet_sum_copy(void *dst, const void *src, size_t len, uint64_t sum);
/* Fold and complement: the value to store in a checksum field. A buffer
 * whose stored checksum is right sums to 0xffff, i.e. folds to 0. */
uint16_t inet_fold(uint64_t sum);

/* ---- between the layers (all lengths in bytes) ---- */

struct netdev;
extern struct netdev *net_dev;     /* NULL until net_init */
extern uint32_t net_ip_addr, net_netmask, net_gateway;   /* host order */

/* Hand a complete frame to the driver, padding it to ETH_FRAME_MIN
 * (frame must be an ETH_FRAME_BUF buffer). 0, or NET_ERR_NOBUF (counted). */
int ether_xmit(uint8_t *frame, size_t len);
/* Fill the Ethernet header of frame: dst, our MAC, type. */
void ether_fill(uint8_t *frame, const uint8_t *dst, uint16_t type);

void arp_input(const uint8_t *pkt, size_t len);
/* Send frame (IPv4, headers from TX_IP_OFF on) to the next hop: fills the
 * Ethernet header if its MAC is known, else queues it and asks (see arp.c).
 * Returns 0 sent, NET_QUEUED, or a NET_ERR_*. */
int arp_output(uint8_t *frame, size_t len, uint32_t next_hop);
/* Empty the cache and the pending queue (net_init). */
void arp_reset(void);
/* The MAC of next hop ip, if known now (broadcast's for a broadcast
 * address): true and mac filled, or false, asking nothing. For a frame
 * built in place, which cannot be parked: the caller falls back to
 * arp_output's path, which asks and parks. */
bool arp_lookup(uint32_t ip, uint8_t mac[ETH_ALEN]);

void ipv4_input(const uint8_t *pkt, size_t len);
/* L4 header and payload (l4len bytes) already sit at frame + TX_L4_OFF;
 * write the IPv4 header and route it. Returns as arp_output. */
int ipv4_output(uint8_t *frame, uint32_t dst, uint8_t proto, size_t l4len);
/* ipv4_output's two halves for a frame built in place: whether dst can
 * be reached with l4len bytes (0 and *hop, the next hop, or a NET_ERR_*),
 * and the IPv4 header written at frame + TX_IP_OFF. */
int ipv4_route(uint32_t dst, size_t l4len, uint32_t *hop);
void ipv4_fill(uint8_t *frame, uint32_t dst, uint8_t proto, size_t l4len);
/* True for addresses we accept as destination: ours, 255.255.255.255,
 * and our subnet's broadcast address. */
bool ipv4_is_local(uint32_t dst);
/* 255.255.255.255 or our subnet's broadcast address. */
bool ipv4_is_broadcast(uint32_t dst);

/* Header and payload of the IP datagram; src and dst in host order. */
void icmp_input(uint32_t src, uint32_t dst, const uint8_t *pkt, size_t len);
void udp_input(uint32_t src, uint32_t dst, const uint8_t *pkt, size_t len);
void udp_reset(void);
