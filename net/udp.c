/* net/udp.c: UDP (RFC 768): receive by destination port to a registered
 * handler, send with a checksum.
 *
 * Handlers are called without udp_lock held (a handler may well send), so
 * each binding counts the calls in progress, and udp_unbind waits for that
 * count to reach zero: after it returns, the handler is not running and
 * will not run again, and its ctx may be freed. */
#include "net/net.h"
#include "net/pkt.h"
#include "kernel/spinlock.h"
#include "kernel/task.h"
#include <stddef.h>

struct udp_binding {
    uint16_t port;
    udp_handler fn;              /* NULL: slot free */
    void *ctx;
    unsigned opts;               /* UDP_BIND_* */
    unsigned active;             /* handler calls in progress (atomic) */
};

static spinlock_t udp_lock = SPINLOCK_INIT("udp-binds");
static struct udp_binding udp_binds[UDP_MAX_BINDINGS];

void udp_reset(void)
{
    unsigned long f = spin_lock(&udp_lock);
    for (int i = 0; i < UDP_MAX_BINDINGS; i++) {
        udp_binds[i].fn = NULL;
        udp_binds[i].port = 0;
    }
    spin_unlock(&udp_lock, f);
}

static struct udp_binding *udp_find(uint16_t port)
{
    for (int i = 0; i < UDP_MAX_BINDINGS; i++)
        if (udp_binds[i].fn && udp_binds[i].port == port)
            return &udp_binds[i];
    return NULL;
}

int udp_bind(uint16_t port, udp_handler fn, void *ctx)
{
    return udp_bind_opts(port, fn, ctx, 0);
}

int udp_bind_opts(uint16_t port, udp_handler fn, void *ctx, unsigned opts)
{
    if (port == 0 || !fn)
        return NET_ERR_INVAL;
    int rc = NET_ERR_FULL;
    unsigned long f = spin_lock(&udp_lock);
    if (udp_find(port)) {
        rc = NET_ERR_BUSY;
    } else {
        for (int i = 0; i < UDP_MAX_BINDINGS; i++) {
            struct udp_binding *b = &udp_binds[i];
            if (!b->fn) {
                b->port = port;
                b->ctx = ctx;
                b->opts = opts;
                b->fn = fn;
                rc = 0;
                break;
            }
        }
    }
    spin_unlock(&udp_lock, f);
    return rc;
}

int udp_unbind(uint16_t port)
{
    unsigned long f = spin_lock(&udp_lock);
    struct udp_binding *b = udp_find(port);
    if (b)
        b->fn = NULL;            /* no new call starts after this */
    spin_unlock(&udp_lock, f);
    if (!b)
        return NET_ERR_INVAL;
    /* Wait out calls already started. yield, not spin: the receive task
     * running the handler may need this CPU to finish. (If the slot is
     * reused meanwhile we may also wait out the new owner's calls: only
     * slower, never wrong.) */
    while (__atomic_load_n(&b->active, __ATOMIC_ACQUIRE))
        yield();
    return 0;
}

/* The sum over the pseudo header (RFC 768): addresses, protocol, length. */
static uint64_t udp_pseudo_sum(uint32_t src, uint32_t dst, size_t ulen)
{
    return (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) +
           IP_PROTO_UDP + ulen;
}

void udp_input(uint32_t src, uint32_t dst, const uint8_t *pkt, size_t len)
{
    if (len < UDP_HLEN) {
        NET_COUNT(drop_truncated);
        return;
    }
    const struct udp_hdr *uh = (const struct udp_hdr *)pkt;
    size_t ulen = ntohs(uh->len);
    if (ulen < UDP_HLEN || ulen > len) {
        NET_COUNT(drop_truncated);
        return;
    }
    /* Checksum 0 means the sender did not compute one (allowed in IPv4). */
    if (uh->csum != 0 &&
        inet_fold(inet_sum(pkt, ulen, udp_pseudo_sum(src, dst, ulen))) != 0) {
        NET_COUNT(drop_bad_csum);
        return;
    }

    unsigned long f = spin_lock(&udp_lock);
    struct udp_binding *b = udp_find(ntohs(uh->dport));
    udp_handler fn = NULL;
    void *ctx = NULL;
    /* Only a port that asked for them hears datagrams sent to many hosts:
     * otherwise one datagram to the broadcast address draws an answer
     * from every shell on the wire. */
    bool refused = b && ipv4_is_group(dst) && !(b->opts & UDP_BIND_BROADCAST);
    if (b && !refused) {
        fn = b->fn;
        ctx = b->ctx;
        __atomic_fetch_add(&b->active, 1, __ATOMIC_RELAXED);
    }
    spin_unlock(&udp_lock, f);
    if (!b) {
        NET_COUNT(drop_no_handler);
        return;
    }
    if (refused) {
        NET_COUNT(drop_broadcast);
        return;
    }
    fn(ctx, src, ntohs(uh->sport), pkt + UDP_HLEN, ulen - UDP_HLEN);
    __atomic_fetch_sub(&b->active, 1, __ATOMIC_RELEASE);
}

/* ---- transmit ---- */

/* The frame around a payload from udp_reserve. */
static uint8_t *udp_frame_of(void *payload)
{
    return (uint8_t *)payload - TX_L4_OFF - UDP_HLEN;
}

void *udp_reserve(uint32_t dst_ip)
{
    struct netdev *dev = __atomic_load_n(&net_dev, __ATOMIC_ACQUIRE);
    uint32_t hop;
    uint8_t mac[ETH_ALEN];
    if (!dev || !dev->tx_reserve || ipv4_route(dst_ip, UDP_HLEN, &hop) != 0 ||
        !arp_lookup(hop, mac))
        return NULL;
    uint8_t *frame = dev->tx_reserve(dev);
    if (!frame)
        return NULL;
    ether_fill(frame, mac, ETHERTYPE_IPV4);
    return frame + TX_L4_OFF + UDP_HLEN;
}

void udp_cancel(void *payload)
{
    net_dev->tx_cancel(net_dev, udp_frame_of(payload));
}

/* The UDP and IPv4 headers of a frame built in place, and its send. The
 * checksum: none (0, RFC 768) where the caller says its payload carries a
 * stronger check of its own (unsummed); where the device computes it
 * (tx_csum), the field holds the pseudo header's sum, folded but not
 * complemented, and the device sums from the UDP header on over that
 * (virtio 1.x 5.1.6.2, VIRTIO_NET_HDR_F_NEEDS_CSUM); else it is summed
 * here, in place, from psum (the payload's sum with the pseudo header's,
 * when the caller made it while copying) or from the payload itself. */
static int udp_finish(uint8_t *frame, uint32_t dst_ip, uint16_t src_port, uint16_t dst_port,
                      size_t len, const uint64_t *psum, bool unsummed)
{
    struct netdev *dev = net_dev;
    struct udp_hdr *uh = (struct udp_hdr *)(frame + TX_L4_OFF);
    size_t ulen = UDP_HLEN + len;
    uint64_t pseudo = udp_pseudo_sum(net_ip_addr, dst_ip, ulen);
    uh->sport = htons(src_port);
    uh->dport = htons(dst_port);
    uh->len = htons((uint16_t)ulen);
    uint16_t start = 0;
    if (unsummed) {
        uh->csum = 0;
    } else if (dev->tx_csum) {
        uh->csum = htons((uint16_t)~inet_fold(pseudo));
        start = TX_L4_OFF;
    } else {
        uh->csum = 0;
        uint64_t sum = psum ? *psum : inet_sum(frame + TX_L4_OFF + UDP_HLEN, len, pseudo);
        uint16_t c = inet_fold(inet_sum(uh, UDP_HLEN, sum));
        uh->csum = htons(c ? c : 0xffff);    /* 0 on the wire would mean "none" */
    }
    ipv4_fill(frame, dst_ip, IP_PROTO_UDP, ulen);
    size_t flen = TX_L4_OFF + ulen;
    if (flen < ETH_FRAME_MIN) {
        memset(frame + flen, 0, ETH_FRAME_MIN - flen);
        flen = ETH_FRAME_MIN;
    }
    if (dev->tx_commit(dev, frame, flen, start, (uint16_t)offsetof(struct udp_hdr, csum)) != 0)
        return NET_ERR_INVAL;
    NET_COUNT(tx_frames);
    NET_COUNT_N(tx_bytes, flen);
    return 0;
}

static int udp_commit_as(void *payload, uint32_t dst_ip, uint16_t src_port, uint16_t dst_port,
                         size_t len, bool unsummed)
{
    if (len > UDP_PAYLOAD_MAX || dst_port == 0) {
        udp_cancel(payload);
        return NET_ERR_INVAL;
    }
    return udp_finish(udp_frame_of(payload), dst_ip, src_port, dst_port, len, NULL, unsummed);
}

int udp_commit(void *payload, uint32_t dst_ip, uint16_t src_port, uint16_t dst_port, size_t len)
{
    return udp_commit_as(payload, dst_ip, src_port, dst_port, len, false);
}

int udp_commit_unsummed(void *payload, uint32_t dst_ip, uint16_t src_port, uint16_t dst_port,
                        size_t len)
{
    return udp_commit_as(payload, dst_ip, src_port, dst_port, len, true);
}

int udp_send(uint32_t dst_ip, uint16_t src_port, uint16_t dst_port,
             const void *data, size_t len)
{
    if (!__atomic_load_n(&net_dev, __ATOMIC_ACQUIRE))
        return NET_ERR_NODEV;
    if (len > UDP_PAYLOAD_MAX || dst_port == 0 || (len && !data))
        return NET_ERR_INVAL;
    size_t ulen = UDP_HLEN + len;
    uint64_t pseudo = udp_pseudo_sum(net_ip_addr, dst_ip, ulen);

    /* Straight into the device's buffer where it can be: one copy, not
     * two. Summed while copied unless the device sums. */
    uint8_t *pl = udp_reserve(dst_ip);
    if (pl) {
        if (net_dev->tx_csum) {
            memcpy(pl, data, len);
            return udp_finish(udp_frame_of(pl), dst_ip, src_port, dst_port, len, NULL, false);
        }
        uint64_t sum = inet_sum_copy(pl, data, len, pseudo);
        return udp_finish(udp_frame_of(pl), dst_ip, src_port, dst_port, len, &sum, false);
    }

    /* Else on the stack, through ARP's queue if the next hop is not
     * known yet. */
    uint8_t frame[ETH_FRAME_BUF];
    struct udp_hdr *uh = (struct udp_hdr *)(frame + TX_L4_OFF);
    uh->sport = htons(src_port);
    uh->dport = htons(dst_port);
    uh->len = htons((uint16_t)ulen);
    uh->csum = 0;
    /* The payload is copied and summed in one pass; the header (8 bytes,
     * an even length) is summed on its own. */
    uint64_t sum = inet_sum_copy(frame + TX_L4_OFF + UDP_HLEN, data, len, pseudo);
    uint16_t c = inet_fold(inet_sum(uh, UDP_HLEN, sum));
    uh->csum = htons(c ? c : 0xffff);    /* 0 on the wire would mean "none" */
    return ipv4_output(frame, dst_ip, IP_PROTO_UDP, ulen);
}
