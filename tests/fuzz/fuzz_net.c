// LINK: net/ether.c net/arp.c net/ipv4.c net/icmp.c net/udp.c lib/printf.c
/* tests/fuzz/fuzz_net.c: the receive path, Ethernet -> ARP / IPv4 ->
 * ICMP / UDP (net_rx with the real net/ sources), against a fake device that
 * captures what the stack sends and a fake clock. An input is a sequence
 * of frames (fuzz.h's length-prefixed pieces) given to one freshly
 * initialised stack, so ARP state carries from frame to frame; a UDP echo
 * service on port 9000 answers every datagram, as the UDP shell does.
 *
 * Invariants, per frame: rx_frames counts it; it lands in at most one
 * drop counter or rx_ignored, and in none when the echo service ran (bar
 * drop_arp, which parked frames that aged out add to: at most 8); the
 * stack sends at most 1 + ARP_QUEUE_MAX frames in answer (a reply, or an
 * ARP reply and the frames parked for that address); and every frame sent
 * comes from our MAC, fits the wire, goes to no group MAC unless it is an
 * ARP request, and carries IPv4 with a correct header checksum to an
 * address a reply may go to; an ICMP frame is an echo reply with a
 * correct checksum that, sent while its request is being handled, mirrors
 * the request's identifier, sequence and data; a UDP frame's length and
 * checksum are right. tx_frames counts every frame sent. */
#include <string.h>
#include "fuzz.h"
#include "net/net.h"
#include "net/pkt.h"

#define ARP_QUEUE_MAX 8            /* net/arp.c's parked frames */
#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (b) << 16 | (c) << 8 | (d))

static uint64_t now_ns;
uint64_t time_ns(void) { return now_ns; }
void yield(void) {}

static unsigned sent, echoes;

static uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t be32(const uint8_t *p) { return (uint32_t)be16(p) << 16 | be16(p + 2); }

static uint32_t sum16(const uint8_t *p, size_t n, uint32_t s)
{
    for (size_t i = 0; i + 1 < n; i += 2)
        s += be16(p + i);
    if (n & 1)
        s += (uint32_t)p[n - 1] << 8;
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return s;
}

/* The frame net_rx is handling now: a reply sent during it answers it
 * (one sent later was parked for ARP and answers an older frame). */
static const uint8_t *cur;
static size_t cur_len;

static void check_icmp(const uint8_t *ip, size_t ihl, size_t tot)
{
    const uint8_t *icmp = ip + ihl;
    size_t n = tot - ihl;
    FUZZ_CHECK(n >= 8 && icmp[0] == 0 && icmp[1] == 0);
    FUZZ_CHECK(sum16(icmp, n, 0) == 0xffff);
    if (cur_len < ETH_HLEN + 20 || be16(cur + 12) != ETHERTYPE_IPV4)
        return;
    const uint8_t *qip = cur + ETH_HLEN;
    size_t qihl = (size_t)(qip[0] & 15) * 4;
    FUZZ_CHECK(qip[9] == 1 && ETH_HLEN + qihl + n <= cur_len);
    FUZZ_CHECK(memcmp(icmp + 4, qip + qihl + 4, n - 4) == 0);
    FUZZ_CHECK(memcmp(ip + 16, qip + 12, 4) == 0);      /* back to its source */
}

static void check_udp(const uint8_t *ip, size_t ihl, size_t tot)
{
    const uint8_t *u = ip + ihl;
    size_t n = tot - ihl;
    FUZZ_CHECK(n >= 8 && be16(u + 4) == n);
    if (be16(u + 6) == 0)
        return;                    /* no checksum: allowed in IPv4 */
    uint8_t ph[12];
    memcpy(ph, ip + 12, 8);
    ph[8] = 0;
    ph[9] = 17;
    ph[10] = (uint8_t)(n >> 8);
    ph[11] = (uint8_t)n;
    FUZZ_CHECK(sum16(u, n, sum16(ph, 12, 0)) == 0xffff);
}

static int fake_xmit(struct netdev *dev, const void *frame, size_t len)
{
    const uint8_t *f = frame;
    FUZZ_CHECK(len >= ETH_HLEN && len <= ETH_FRAME_MAX);
    FUZZ_CHECK(memcmp(f + 6, dev->mac, 6) == 0);
    uint16_t type = be16(f + 12);
    FUZZ_CHECK(type == ETHERTYPE_ARP || type == ETHERTYPE_IPV4);
    if (type == ETHERTYPE_ARP) {
        FUZZ_CHECK(len >= ETH_HLEN + 28);
        uint16_t op = be16(f + ETH_HLEN + 6);
        FUZZ_CHECK(op == 1 || op == 2);
        FUZZ_CHECK(op == 1 || !(f[0] & 1));      /* a reply is unicast */
    } else {
        const uint8_t *ip = f + ETH_HLEN;
        FUZZ_CHECK(!(f[0] & 1));
        FUZZ_CHECK(len >= ETH_HLEN + 20 && (ip[0] >> 4) == 4);
        size_t ihl = (size_t)(ip[0] & 15) * 4;
        FUZZ_CHECK(ihl >= 20 && len >= ETH_HLEN + ihl);
        uint32_t s = 0;
        for (size_t i = 0; i < ihl; i += 2)
            s += be16(ip + i);
        while (s >> 16)
            s = (s & 0xffff) + (s >> 16);
        FUZZ_CHECK(s == 0xffff);
        size_t tot = be16(ip + 2);
        FUZZ_CHECK(tot >= ihl && tot + ETH_HLEN <= len);
        FUZZ_CHECK(!ipv4_source_unanswerable(be32(ip + 16)));
        FUZZ_CHECK(ip[9] == 1 || ip[9] == 17);
        if (ip[9] == 1)
            check_icmp(ip, ihl, tot);
        else
            check_udp(ip, ihl, tot);
    }
    sent++;
    return 0;
}

static void echo(void *ctx, uint32_t src_ip, uint16_t src_port, const void *data, size_t len)
{
    echoes++;
    udp_send(src_ip, 9000, src_port, data, len);
}

static struct netdev dev = { .mac = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 }, .xmit = fake_xmit };

/* Every drop counter but drop_arp, which also counts parked frames that
 * aged out: those are frames we sent, not the one received. */
static uint64_t drops(const struct net_stats *s)
{
    return s->rx_ignored + s->drop_bad_csum + s->drop_truncated + s->drop_unknown_proto +
           s->drop_no_handler + s->drop_no_buffer + s->drop_fragment + s->drop_bad_source +
           s->drop_broadcast;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    now_ns = 1000000000ull;
    sent = 0;
    net_init(&dev, IP(10, 0, 2, 15), IP(255, 255, 255, 0), IP(10, 0, 2, 2));
    FUZZ_CHECK(udp_bind(9000, echo, NULL) == 0);
    const struct net_stats *s = net_get_stats();
    struct fuzz_cur c = { d, n };
    const uint8_t *p;
    size_t len;
    uint64_t frames = 0;
    while (fuzz_next(&c, &p, &len)) {
        /* A heap copy of exactly len bytes: ASan sees a read past it. */
        uint8_t *f = malloc(len ? len : 1);
        FUZZ_CHECK(f);
        memcpy(f, p, len);
        uint64_t before = drops(s), arp_before = s->drop_arp;
        unsigned sent_before = sent;
        echoes = 0;
        cur = f;
        cur_len = len;
        net_rx(f, len);
        cur = NULL;
        cur_len = 0;
        free(f);
        frames++;
        FUZZ_CHECK(s->rx_frames == frames);
        uint64_t dropped = drops(s) - before, arp = s->drop_arp - arp_before;
        FUZZ_CHECK(dropped + (arp > ARP_QUEUE_MAX) <= 1 && arp <= 1 + ARP_QUEUE_MAX);
        FUZZ_CHECK(echoes == 0 || dropped == 0);
        FUZZ_CHECK(sent - sent_before <= 1 + ARP_QUEUE_MAX);
        FUZZ_CHECK(s->tx_frames == sent);
        /* Let time pass so that ARP entries and parked frames age. */
        now_ns += (uint64_t)(len ? p[0] : 1) * 50000000ull;
    }
    return 0;
}
