/* net/ipv4.c: IPv4 input checks and output (RFC 791), and the checksum.
 *
 * We are a host, not a router: datagrams for other addresses are ignored,
 * options are skipped, fragments are dropped and counted (nothing we speak
 * needs them: UDP_PAYLOAD_MAX keeps our own datagrams within one frame, and
 * we set Don't Fragment on everything we send). */
#include "net/net.h"
#include "net/pkt.h"

static uint16_t ipv4_next_id;

/* RFC 1071's sum, a 32-bit word at a time: the ones'-complement sum of
 * 16-bit words does not depend on the byte order they are added in (the
 * carries wrap around either way), so the words are added as the CPU
 * loads them and the folded result is swapped into network order once.
 * A 1400-byte profile stream datagram takes ~45 rounds of four 8-byte
 * loads instead of 700 16-bit loads, swaps and adds (docs/profiling.md,
 * Streaming). The loads (and stores) are __builtin_memcpy, one
 * instruction each at any alignment (the kernel's -ffreestanding would
 * otherwise make them calls). The result is congruent to the reference
 * sum (16-bit big-endian words, an odd last byte as the high byte)
 * modulo 0xffff, and 0 exactly when it is: inet_fold gives the same
 * answer for both. With dst, the bytes are also copied there, in the
 * same pass: a datagram sent is read once, not once to copy it into its
 * frame and again to sum it. */
static inline __attribute__((always_inline)) uint64_t
inet_sum_words(uint8_t *dst, const uint8_t *b, size_t len, uint64_t sum)
{
    uint64_t acc = 0;
    for (; len >= 32; b += 32, len -= 32) {
        uint64_t x, y, z, v;
        __builtin_memcpy(&x, b, 8);
        __builtin_memcpy(&y, b + 8, 8);
        __builtin_memcpy(&z, b + 16, 8);
        __builtin_memcpy(&v, b + 24, 8);
        if (dst) {
            __builtin_memcpy(dst, &x, 8);
            __builtin_memcpy(dst + 8, &y, 8);
            __builtin_memcpy(dst + 16, &z, 8);
            __builtin_memcpy(dst + 24, &v, 8);
            dst += 32;
        }
        acc += (x >> 32) + (uint32_t)x + (y >> 32) + (uint32_t)y +
               (z >> 32) + (uint32_t)z + (v >> 32) + (uint32_t)v;
    }
    for (; len >= 16; b += 16, len -= 16) {
        uint64_t x, y;
        __builtin_memcpy(&x, b, 8);
        __builtin_memcpy(&y, b + 8, 8);
        if (dst) {
            __builtin_memcpy(dst, &x, 8);
            __builtin_memcpy(dst + 8, &y, 8);
            dst += 16;
        }
        acc += (x >> 32) + (uint32_t)x + (y >> 32) + (uint32_t)y;
    }
    for (; len >= 4; b += 4, len -= 4) {
        uint32_t w;
        __builtin_memcpy(&w, b, 4);
        if (dst) {
            __builtin_memcpy(dst, &w, 4);
            dst += 4;
        }
        acc += w;
    }
    if (len >= 2) {
        uint16_t h;
        __builtin_memcpy(&h, b, 2);
        if (dst) {
            __builtin_memcpy(dst, &h, 2);
            dst += 2;
        }
        acc += h;
        b += 2;
        len -= 2;
    }
    if (len) {
        uint8_t last[2] = { b[0], 0 };  /* the high byte of a word of its own */
        uint16_t h;
        __builtin_memcpy(&h, last, 2);
        if (dst)
            dst[0] = b[0];
        acc += h;
    }
    while (acc >> 16)
        acc = (acc & 0xffff) + (acc >> 16);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    acc = (uint16_t)(acc << 8 | acc >> 8);
#endif
    return sum + acc;
}

uint64_t inet_sum(const void *p, size_t len, uint64_t sum)
{
    return inet_sum_words(NULL, p, len, sum);
}

uint64_t inet_sum_copy(void *dst, const void *src, size_t len, uint64_t sum)
{
    return inet_sum_words(dst, src, len, sum);
}

uint16_t inet_fold(uint64_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

bool ipv4_is_broadcast(uint32_t dst)
{
    if (dst == 0xffffffffu)
        return true;
    /* A /32 or /31 has no broadcast address of its own. */
    if (net_netmask == 0 || (~net_netmask & (~net_netmask - 1)) == 0)
        return false;
    return (dst & net_netmask) == (net_ip_addr & net_netmask) &&
           (dst & ~net_netmask) == ~net_netmask;
}

bool ipv4_is_group(uint32_t dst)
{
    return ipv4_is_broadcast(dst) || (dst >> 28) == 0xe;
}

bool ipv4_source_unanswerable(uint32_t src)
{
    uint8_t top = (uint8_t)(src >> 24);
    return src == 0 || ipv4_is_broadcast(src) || top >= 224 || top == 127 ||
           (net_ip_addr != 0 && src == net_ip_addr);
}

/* Ours, or a broadcast. Not multicast: the stack joins no group, so a
 * multicast destination is some other host's business (rx_ignored), and no
 * port ever hears one, UDP_BIND_BROADCAST or not. */
bool ipv4_is_local(uint32_t dst)
{
    return (net_ip_addr != 0 && dst == net_ip_addr) || ipv4_is_broadcast(dst);
}

void ipv4_input(const uint8_t *pkt, size_t len)
{
    if (len < IP_HLEN) {
        NET_COUNT(drop_truncated);
        return;
    }
    const struct ipv4_hdr *ip = (const struct ipv4_hdr *)pkt;
    if (ip->ver_ihl >> 4 != 4) {
        NET_COUNT(drop_unknown_proto);
        return;
    }
    /* Every length is checked against the one below it before use: the
     * header against the frame, the total against the header and the
     * frame. Bytes past total_len are Ethernet padding. */
    size_t hlen = (size_t)(ip->ver_ihl & 0xf) * 4;
    size_t total = ntohs(ip->total_len);
    if (hlen < IP_HLEN || hlen > len || total < hlen || total > len) {
        NET_COUNT(drop_truncated);
        return;
    }
    if (inet_fold(inet_sum(pkt, hlen, 0)) != 0) {
        NET_COUNT(drop_bad_csum);
        return;
    }
    if (ntohs(ip->frag) & (IP_FLAG_MF | IP_FRAG_OFFSET)) {
        NET_COUNT(drop_fragment);
        return;
    }
    uint32_t src = get_be32(ip->src), dst = get_be32(ip->dst);
    if (!ipv4_is_local(dst)) {
        NET_COUNT(rx_ignored);
        return;
    }
    if (ipv4_source_unanswerable(src)) {
        NET_COUNT(drop_bad_source);
        return;
    }
    switch (ip->proto) {
    case IP_PROTO_ICMP:
        icmp_input(src, dst, pkt + hlen, total - hlen);
        break;
    case IP_PROTO_UDP:
        udp_input(src, dst, pkt + hlen, total - hlen);
        break;
    default:
        NET_COUNT(drop_unknown_proto);
        break;
    }
}

/* Where a datagram for dst goes first: dst itself when on our subnet (or
 * a broadcast), else the gateway. 0 when there is no way. */
static uint32_t ipv4_next_hop(uint32_t dst)
{
    if (ipv4_is_broadcast(dst) || ((dst ^ net_ip_addr) & net_netmask) == 0)
        return dst;
    return net_gateway;
}

int ipv4_route(uint32_t dst, size_t l4len, uint32_t *hop)
{
    if (!__atomic_load_n(&net_dev, __ATOMIC_ACQUIRE))
        return NET_ERR_NODEV;
    if (l4len > IP_PAYLOAD_MAX || dst == 0)
        return NET_ERR_INVAL;
    *hop = ipv4_next_hop(dst);
    if (*hop == 0 || dst == net_ip_addr)     /* no gateway; no loopback device */
        return NET_ERR_NOROUTE;
    return 0;
}

void ipv4_fill(uint8_t *frame, uint32_t dst, uint8_t proto, size_t l4len)
{
    struct ipv4_hdr *ip = (struct ipv4_hdr *)(frame + TX_IP_OFF);
    ip->ver_ihl = 4 << 4 | IP_HLEN / 4;
    ip->tos = 0;
    ip->total_len = htons((uint16_t)(IP_HLEN + l4len));
    ip->id = htons(__atomic_fetch_add(&ipv4_next_id, 1, __ATOMIC_RELAXED));
    ip->frag = htons(0x4000);                 /* Don't Fragment */
    ip->ttl = IP_TTL;
    ip->proto = proto;
    ip->csum = 0;
    put_be32(ip->src, net_ip_addr);
    put_be32(ip->dst, dst);
    ip->csum = htons(inet_fold(inet_sum(ip, IP_HLEN, 0)));
}

int ipv4_output(uint8_t *frame, uint32_t dst, uint8_t proto, size_t l4len)
{
    uint32_t hop;
    int rc = ipv4_route(dst, l4len, &hop);
    if (rc)
        return rc;
    ipv4_fill(frame, dst, proto, l4len);
    return arp_output(frame, ETH_HLEN + IP_HLEN + l4len, hop);
}
