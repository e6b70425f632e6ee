// LINK: net/ether.c net/arp.c net/ipv4.c net/icmp.c net/udp.c lib/printf.c
/* tests/unit/test_net.c: the network stack on the host, against a fake
 * netdev that captures what it would send and a fake clock.
 *
 * Frames are built here with an independent checksum routine, fed to
 * net_rx from heap buffers of exactly their length (so ASan sees any read
 * past the end), and what the stack sends is parsed back and checked. */
#include "test.h"
#include "sbuf.h"
#include <stdlib.h>
#include "net/net.h"
#include "net/pkt.h"
#include "lib/printf.h"

/* ---- fakes ---- */

static uint64_t fake_now_ns = 1000000000ull;
uint64_t time_ns(void) { return fake_now_ns; }
void yield(void) {}

#define MAXCAP 64
static struct {
    int n;
    size_t len[MAXCAP];
    uint8_t f[MAXCAP][ETH_FRAME_MAX];
    bool full;                     /* make xmit report a full TX ring */
} cap;

static int fake_xmit(struct netdev *dev, const void *frame, size_t len)
{
    (void)dev;
    if (cap.full)
        return -1;
    if (cap.n < MAXCAP && len <= ETH_FRAME_MAX) {
        memcpy(cap.f[cap.n], frame, len);
        cap.len[cap.n] = len;
    }
    cap.n++;
    return 0;
}

static struct netdev dev = { .mac = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 }, .xmit = fake_xmit };
static const uint8_t gw_mac[6] = { 0x52, 0x55, 0x0a, 0x00, 0x02, 0x02 };
static const uint8_t peer_mac[6] = { 0x52, 0x55, 0x0a, 0x00, 0x02, 0x03 };

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (b) << 16 | (c) << 8 | (d))
#define OUR_IP  IP(10, 0, 2, 15)
#define GW_IP   IP(10, 0, 2, 2)
#define PEER_IP IP(10, 0, 2, 3)
#define FAR_IP  IP(192, 168, 1, 5)

static void setup(void)
{
    memset(&cap, 0, sizeof cap);
    fake_now_ns = 1000000000ull;
    net_init(&dev, OUR_IP, IP(255, 255, 255, 0), GW_IP);
}

/* Feed a frame from a heap copy of exactly len bytes. */
static void rx(const uint8_t *f, size_t len)
{
    uint8_t *c = malloc(len ? len : 1);
    memcpy(c, f, len);
    net_rx(c, len);
    free(c);
}

static uint64_t drops_and_ignored(void)
{
    const struct net_stats *s = net_get_stats();
    return s->rx_ignored + s->drop_bad_csum + s->drop_truncated + s->drop_unknown_proto +
           s->drop_no_handler + s->drop_no_buffer + s->drop_fragment + s->drop_arp +
           s->drop_broadcast;
}

/* ---- an independent Internet checksum and frame builders ---- */

static uint16_t csum16(const uint8_t *p, size_t n, uint32_t start)
{
    uint32_t s = start;
    for (size_t i = 0; i + 1 < n; i += 2)
        s += (uint32_t)p[i] << 8 | p[i + 1];
    if (n & 1)
        s += (uint32_t)p[n - 1] << 8;
    while (s >> 16)
        s = (s & 0xffff) + (s >> 16);
    return (uint16_t)~s;
}

static void w16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = v & 0xff; }
static void w32(uint8_t *p, uint32_t v) { w16(p, v >> 16); w16(p + 2, v & 0xffff); }
static uint16_t r16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t r32(const uint8_t *p) { return (uint32_t)r16(p) << 16 | r16(p + 2); }

static size_t mk_eth(uint8_t *f, const uint8_t *dst, const uint8_t *src, uint16_t type)
{
    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    w16(f + 12, type);
    return 14;
}

static size_t mk_arp(uint8_t *f, uint16_t op, const uint8_t *sha, uint32_t spa,
                     const uint8_t *tha, uint32_t tpa)
{
    static const uint8_t bc[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    mk_eth(f, op == 1 ? bc : dev.mac, sha, 0x0806);
    uint8_t *a = f + 14;
    w16(a, 1); w16(a + 2, 0x0800); a[4] = 6; a[5] = 4; w16(a + 6, op);
    memcpy(a + 8, sha, 6); w32(a + 14, spa);
    memcpy(a + 18, tha, 6); w32(a + 24, tpa);
    return 42;
}

/* IPv4 header at f+14 for l4len bytes of protocol proto already at f+34. */
static size_t mk_ip(uint8_t *f, const uint8_t *src_mac, uint32_t src, uint32_t dst,
                    uint8_t proto, size_t l4len)
{
    mk_eth(f, dev.mac, src_mac, 0x0800);
    uint8_t *ip = f + 14;
    ip[0] = 0x45; ip[1] = 0;
    w16(ip + 2, (uint16_t)(20 + l4len));
    w16(ip + 4, 0x1234); w16(ip + 6, 0x4000);
    ip[8] = 64; ip[9] = proto;
    w16(ip + 10, 0);
    w32(ip + 12, src); w32(ip + 16, dst);
    w16(ip + 10, csum16(ip, 20, 0));
    return 34 + l4len;
}

static void ip_fix_csum(uint8_t *f)
{
    size_t hl = (f[14] & 0xf) * 4;
    w16(f + 24, 0);
    w16(f + 24, csum16(f + 14, hl, 0));
}

static uint32_t pseudo(uint32_t src, uint32_t dst, size_t ulen)
{
    return (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + 17 + (uint32_t)ulen;
}

static size_t mk_udp(uint8_t *f, uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport,
                     const void *data, size_t len)
{
    uint8_t *u = f + 34;
    w16(u, sport); w16(u + 2, dport); w16(u + 4, (uint16_t)(8 + len)); w16(u + 6, 0);
    memcpy(u + 8, data, len);
    uint16_t c = csum16(u, 8 + len, pseudo(src, dst, 8 + len));
    w16(u + 6, c ? c : 0xffff);
    return mk_ip(f, peer_mac, src, dst, 17, 8 + len);
}

static size_t mk_ping(uint8_t *f, uint32_t src, uint32_t dst, uint16_t id, uint16_t seq,
                      const char *data, size_t len)
{
    uint8_t *ic = f + 34;
    ic[0] = 8; ic[1] = 0; w16(ic + 2, 0); w16(ic + 4, id); w16(ic + 6, seq);
    memcpy(ic + 8, data, len);
    w16(ic + 2, csum16(ic, 8 + len, 0));
    return mk_ip(f, gw_mac, src, dst, 1, 8 + len);
}

/* Teach the stack a neighbour the way the wire would: it asks for us. */
static void learn(const uint8_t *mac, uint32_t ip)
{
    uint8_t f[64];
    static const uint8_t zero[6];
    rx(f, mk_arp(f, 1, mac, ip, zero, OUR_IP));
}

/* ---- a UDP handler that records its calls ---- */

static struct {
    int calls;
    uint32_t src;
    uint16_t sport;
    size_t len;
    uint8_t data[1500];
    void *ctx;
} got;

static void handler(void *ctx, uint32_t src, uint16_t sport, const void *data, size_t len)
{
    got.calls++;
    got.ctx = ctx;
    got.src = src;
    got.sport = sport;
    got.len = len;
    memcpy(got.data, data, len < sizeof got.data ? len : sizeof got.data);
}

/* ---- Ethernet ---- */

TEST(net_eth_truncated_and_foreign)
{
    setup();
    uint8_t f[64] = { 0 };
    for (size_t len = 0; len < 14; len++)
        rx(f, len);
    CHECK_EQ(net_get_stats()->drop_truncated, 14);
    CHECK_EQ(net_get_stats()->rx_frames, 14);

    static const uint8_t other[6] = { 2, 0, 0, 0, 0, 9 };
    mk_eth(f, other, peer_mac, 0x0800);
    rx(f, 60);
    CHECK_EQ(net_get_stats()->rx_ignored, 1);
    mk_eth(f, dev.mac, peer_mac, 0x86dd);          /* IPv6 */
    rx(f, 60);
    CHECK_EQ(net_get_stats()->drop_unknown_proto, 1);
    CHECK_EQ(net_get_stats()->rx_bytes, 13 * 14 / 2 + 120);
    CHECK_EQ(cap.n, 0);
}

/* ---- ARP ---- */

TEST(net_arp_reply_to_request_for_us)
{
    setup();
    uint8_t f[64];
    static const uint8_t zero[6];
    rx(f, mk_arp(f, 1, peer_mac, PEER_IP, zero, OUR_IP));
    CHECK_EQ(cap.n, 1);
    const uint8_t *r = cap.f[0];
    CHECK(cap.len[0] >= 42);
    CHECK(memcmp(r, peer_mac, 6) == 0);             /* unicast back */
    CHECK(memcmp(r + 6, dev.mac, 6) == 0);
    CHECK_EQ(r16(r + 12), 0x0806);
    const uint8_t *a = r + 14;
    CHECK_EQ(r16(a), 1);
    CHECK_EQ(r16(a + 2), 0x0800);
    CHECK_EQ(a[4], 6);
    CHECK_EQ(a[5], 4);
    CHECK_EQ(r16(a + 6), 2);                         /* reply */
    CHECK(memcmp(a + 8, dev.mac, 6) == 0);
    CHECK_EQ(r32(a + 14), OUR_IP);
    CHECK(memcmp(a + 18, peer_mac, 6) == 0);
    CHECK_EQ(r32(a + 24), PEER_IP);

    /* And the requester was learnt: a send goes out at once, no ARP. */
    cap.n = 0;
    CHECK_EQ(udp_send(PEER_IP, 1000, 2000, "hi", 2), 0);
    CHECK_EQ(cap.n, 1);
    CHECK(memcmp(cap.f[0], peer_mac, 6) == 0);
}

TEST(net_arp_request_for_other_ignored)
{
    setup();
    uint8_t f[64];
    static const uint8_t zero[6];
    rx(f, mk_arp(f, 1, peer_mac, PEER_IP, zero, IP(10, 0, 2, 99)));
    CHECK_EQ(cap.n, 0);
    CHECK_EQ(net_get_stats()->rx_ignored, 1);
    /* Not learnt either: a send to the peer has to ask. */
    CHECK_EQ(udp_send(PEER_IP, 1, 2, "x", 1), NET_QUEUED);
    CHECK_EQ(cap.n, 1);
    CHECK_EQ(r16(cap.f[0] + 12), 0x0806);
}

TEST(net_arp_truncated_and_bad)
{
    setup();
    uint8_t f[64];
    static const uint8_t zero[6];
    size_t n = mk_arp(f, 1, peer_mac, PEER_IP, zero, OUR_IP);
    for (size_t len = 0; len < n; len++)
        rx(f, len);
    CHECK_EQ(net_get_stats()->drop_truncated, n);
    CHECK_EQ(cap.n, 0);

    f[14 + 4] = 8;                                    /* hlen 8 */
    rx(f, n);
    mk_arp(f, 3, peer_mac, PEER_IP, zero, OUR_IP);    /* op 3 */
    rx(f, n);
    static const uint8_t mcast[6] = { 1, 0, 0x5e, 0, 0, 1 };
    mk_arp(f, 1, mcast, PEER_IP, zero, OUR_IP);       /* group sender MAC */
    memcpy(f + 6, peer_mac, 6);                       /* from a unicast frame */
    rx(f, n);
    CHECK_EQ(net_get_stats()->drop_arp, 3);
    CHECK_EQ(cap.n, 0);
}

/* RFC 1122 3.2.1.3: nothing goes back to a source that cannot be
 * answered. Before, a UDP-shell request or an echo spoofed from the subnet
 * broadcast got its reply broadcast (a 26-byte request, ~290x in frames). */
TEST(net_unanswerable_sources_dropped)
{
    setup();
    CHECK_EQ(udp_bind(9000, handler, NULL), 0);
    memset(&got, 0, sizeof got);
    learn(gw_mac, GW_IP);
    cap.n = 0;
    static const uint32_t bad[] = {
        IP(10, 0, 2, 255), 0xffffffffu, 0, IP(224, 0, 0, 1), IP(239, 1, 2, 3),
        IP(240, 0, 0, 1), IP(127, 0, 0, 1), OUR_IP,
    };
    uint8_t f[ETH_FRAME_MAX];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rx(f, mk_udp(f, bad[i], 4321, OUR_IP, 9000, "lines 2000", 10));
        rx(f, mk_ping(f, bad[i], OUR_IP, 1, 2, "ping", 4));
    }
    CHECK_EQ(got.calls, 0);                           /* nothing delivered */
    CHECK_EQ(cap.n, 0);                               /* nothing sent */
    CHECK_EQ(net_get_stats()->drop_bad_source, 2 * (sizeof bad / sizeof bad[0]));
    /* A group Ethernet source is forged whatever its IP says. */
    size_t n = mk_udp(f, PEER_IP, 4321, OUR_IP, 9000, "version", 7);
    f[6] = 0x01;
    rx(f, n);
    CHECK_EQ(got.calls, 0);
    CHECK_EQ(net_get_stats()->drop_bad_source, 2 * (sizeof bad / sizeof bad[0]) + 1);
    /* The same from a real peer is delivered: the rule is not "drop all". */
    rx(f, mk_udp(f, PEER_IP, 4321, OUR_IP, 9000, "version", 7));
    CHECK_EQ(got.calls, 1);
    CHECK_EQ(udp_unbind(9000), 0);
}

/* UDP to a broadcast or multicast destination reaches only a port that
 * opted in (UDP_BIND_BROADCAST): one datagram to the subnet's broadcast
 * must not draw an answer from every shell on the wire. */
TEST(net_udp_to_broadcast_only_where_opted_in)
{
    setup();
    CHECK_EQ(udp_bind(9000, handler, NULL), 0);
    CHECK_EQ(udp_bind_opts(9100, handler, NULL, UDP_BIND_BROADCAST), 0);
    memset(&got, 0, sizeof got);
    uint8_t f[ETH_FRAME_MAX];
    static const uint32_t group[] = { IP(10, 0, 2, 255), 0xffffffffu };
    for (size_t i = 0; i < sizeof group / sizeof group[0]; i++)
        rx(f, mk_udp(f, PEER_IP, 4321, group[i], 9000, "lines 2000", 10));
    CHECK_EQ(got.calls, 0);
    CHECK_EQ(cap.n, 0);
    CHECK_EQ(net_get_stats()->drop_broadcast, 2);
    /* The port that asked for them gets them. */
    for (size_t i = 0; i < sizeof group / sizeof group[0]; i++)
        rx(f, mk_udp(f, PEER_IP, 4321, group[i], 9100, "hello", 5));
    CHECK_EQ(got.calls, 2);
    CHECK_EQ(net_get_stats()->drop_broadcast, 2);
    /* Unicast to the shell's port still arrives. */
    rx(f, mk_udp(f, PEER_IP, 4321, OUR_IP, 9000, "version", 7));
    CHECK_EQ(got.calls, 3);
    /* `net` names the drop. */
    struct sbuf b = SBUF_INIT;
    net_print(&b.pr);
    CHECK(strstr(b.s, "broadcast 2") != NULL);
    CHECK_EQ(udp_unbind(9000), 0);
    CHECK_EQ(udp_unbind(9100), 0);
}

/* Multicast never reaches a port, even one that opted in to broadcasts:
 * the stack joins no group, so IPv4 ignores the destination (rx_ignored),
 * whether the frame came to our MAC or to the group's. */
TEST(net_udp_to_multicast_is_ignored_by_ipv4)
{
    setup();
    CHECK_EQ(udp_bind(9000, handler, NULL), 0);
    CHECK_EQ(udp_bind_opts(9100, handler, NULL, UDP_BIND_BROADCAST), 0);
    memset(&got, 0, sizeof got);
    uint8_t f[ETH_FRAME_MAX];
    uint64_t ign0 = net_get_stats()->rx_ignored;
    rx(f, mk_udp(f, PEER_IP, 4321, IP(224, 0, 0, 1), 9000, "lines 2000", 10));
    rx(f, mk_udp(f, PEER_IP, 4321, IP(224, 0, 0, 1), 9100, "hello", 5));
    static const uint8_t group_mac[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };
    size_t n = mk_udp(f, PEER_IP, 4321, IP(224, 0, 0, 1), 9100, "hello", 5);
    memcpy(f, group_mac, 6);
    rx(f, n);
    CHECK_EQ(got.calls, 0);
    CHECK_EQ(cap.n, 0);
    CHECK_EQ(net_get_stats()->rx_ignored, ign0 + 3);
    CHECK_EQ(net_get_stats()->drop_broadcast, 0);
    /* The opted-in port does hear a broadcast: the rule is about groups. */
    rx(f, mk_udp(f, PEER_IP, 4321, 0xffffffffu, 9100, "hello", 5));
    CHECK_EQ(got.calls, 1);
    CHECK_EQ(udp_unbind(9000), 0);
    CHECK_EQ(udp_unbind(9100), 0);
}

/* The ARP cache learns only unicast, on-subnet, non-self mappings. */
TEST(net_arp_learns_only_true_mappings)
{
    setup();
    uint8_t f[64];
    static const uint8_t zero[6];
    struct { uint32_t ip; const uint8_t *mac; } bad[] = {
        { FAR_IP, peer_mac },                 /* off-subnet */
        { IP(10, 0, 2, 255), peer_mac },      /* the subnet broadcast */
        { OUR_IP, peer_mac },                 /* our own address */
        { PEER_IP, zero },                    /* the all-zero MAC */
        { PEER_IP, dev.mac },                 /* our own MAC */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        size_t n = mk_arp(f, 1, bad[i].mac, bad[i].ip, zero, OUR_IP);
        memcpy(f + 6, peer_mac, 6);           /* the frame itself from a unicast MAC */
        rx(f, n);
    }
    CHECK_EQ(cap.n, 0);                       /* no reply to any of them */
    /* Nothing was learnt: a send to the peer still has to ask. */
    CHECK_EQ(udp_send(PEER_IP, 1, 2, "x", 1), NET_QUEUED);
    CHECK_EQ(r16(cap.f[0] + 12), 0x0806);
    struct sbuf b = SBUF_INIT;
    arp_print(&b.pr);
    CHECK(strstr(b.s, "refused 5 mappings") != NULL);
}

/* ---- IPv4 ---- */

TEST(net_ipv4_udp_truncated_at_every_length)
{
    setup();
    CHECK_EQ(udp_bind(7, handler, NULL), 0);
    memset(&got, 0, sizeof got);
    uint8_t f[ETH_FRAME_MAX];
    size_t n = mk_udp(f, PEER_IP, 5555, OUR_IP, 7, "hello, world", 12);
    for (size_t len = 0; len < n; len++) {
        uint64_t before = drops_and_ignored();
        rx(f, len);
        CHECK_EQ(drops_and_ignored(), before + 1);   /* each counted exactly once */
    }
    CHECK_EQ(got.calls, 0);
    CHECK_EQ(net_get_stats()->drop_truncated, n);
    rx(f, n);
    CHECK_EQ(got.calls, 1);
    /* Ethernet padding after the datagram is ignored. */
    memset(f + n, 0xee, 20);
    rx(f, n + 20);
    CHECK_EQ(got.calls, 2);
    CHECK_EQ(got.len, 12);
}

TEST(net_ipv4_bad_checksum)
{
    setup();
    udp_bind(7, handler, NULL);
    memset(&got, 0, sizeof got);
    uint8_t f[ETH_FRAME_MAX];
    size_t n = mk_udp(f, PEER_IP, 5555, OUR_IP, 7, "abc", 3);
    f[14 + 10] ^= 0x01;
    rx(f, n);
    CHECK_EQ(net_get_stats()->drop_bad_csum, 1);
    CHECK_EQ(got.calls, 0);
}

TEST(net_ipv4_bad_lengths)
{
    setup();
    udp_bind(7, handler, NULL);
    memset(&got, 0, sizeof got);
    uint8_t f[ETH_FRAME_MAX], g[ETH_FRAME_MAX];
    size_t n = mk_udp(f, PEER_IP, 5555, OUR_IP, 7, "abcdefgh", 8);

    struct { int off; uint8_t val; } ihl[] = { { 0, 0x44 }, { 0, 0x40 }, { 0, 0x4f } };
    for (unsigned i = 0; i < 3; i++) {               /* IHL 4, 0, 15 (60 > frame) */
        memcpy(g, f, n);
        g[14 + ihl[i].off] = ihl[i].val;
        ip_fix_csum(g);
        rx(g, 14 + 20 + 8);                          /* IHL 15 exceeds this */
    }
    uint16_t totals[] = { 0, 19, 0xffff, (uint16_t)(n - 14 + 1) };
    for (unsigned i = 0; i < 4; i++) {
        memcpy(g, f, n);
        w16(g + 16, totals[i]);
        ip_fix_csum(g);
        rx(g, n);
    }
    CHECK_EQ(net_get_stats()->drop_truncated, 7);
    memcpy(g, f, n);
    g[14] = 0x65;                                     /* version 6 */
    rx(g, n);
    CHECK_EQ(net_get_stats()->drop_unknown_proto, 1);
    memcpy(g, f, n);
    g[14 + 9] = 6;                                    /* TCP */
    ip_fix_csum(g);
    rx(g, n);
    CHECK_EQ(net_get_stats()->drop_unknown_proto, 2);
    CHECK_EQ(got.calls, 0);
}

TEST(net_ipv4_options_skipped)
{
    setup();
    udp_bind(7, handler, NULL);
    memset(&got, 0, sizeof got);
    /* IHL 6: a 4-byte option (NOPs) between the header and UDP. */
    uint8_t f[ETH_FRAME_MAX], g[ETH_FRAME_MAX];
    size_t n = mk_udp(f, PEER_IP, 5555, OUR_IP, 7, "opt", 3);
    memcpy(g, f, 34);
    memset(g + 34, 1, 4);
    memcpy(g + 38, f + 34, n - 34);
    g[14] = 0x46;
    w16(g + 16, (uint16_t)(n - 14 + 4));
    ip_fix_csum(g);
    rx(g, n + 4);
    CHECK_EQ(got.calls, 1);
    CHECK(memcmp(got.data, "opt", 3) == 0);
}

TEST(net_ipv4_fragments_dropped)
{
    setup();
    udp_bind(7, handler, NULL);
    memset(&got, 0, sizeof got);
    uint8_t f[ETH_FRAME_MAX];
    size_t n = mk_udp(f, PEER_IP, 5555, OUR_IP, 7, "frag", 4);
    w16(f + 20, 0x2000);                              /* MF */
    ip_fix_csum(f);
    rx(f, n);
    w16(f + 20, 0x0010);                              /* offset 16 */
    ip_fix_csum(f);
    rx(f, n);
    w16(f + 20, 0x4000);                              /* DF only: fine */
    ip_fix_csum(f);
    rx(f, n);
    CHECK_EQ(net_get_stats()->drop_fragment, 2);
    CHECK_EQ(got.calls, 1);
}

TEST(net_ipv4_not_our_address)
{
    setup();
    /* IPv4 takes broadcasts as ours; a port that asked for them gets them
     * (net_udp_to_broadcast_only_where_opted_in: the others do not). */
    udp_bind_opts(7, handler, NULL, UDP_BIND_BROADCAST);
    memset(&got, 0, sizeof got);
    uint8_t f[ETH_FRAME_MAX];
    size_t n = mk_udp(f, PEER_IP, 5555, IP(10, 0, 2, 16), 7, "x", 1);
    rx(f, n);
    CHECK_EQ(net_get_stats()->rx_ignored, 1);
    n = mk_udp(f, PEER_IP, 5555, IP(10, 0, 2, 255), 7, "b", 1);   /* subnet broadcast */
    rx(f, n);
    n = mk_udp(f, PEER_IP, 5555, 0xffffffffu, 7, "b", 1);
    rx(f, n);
    CHECK_EQ(got.calls, 2);
}

/* ---- ICMP ---- */

TEST(net_icmp_echo_reply)
{
    setup();
    learn(gw_mac, GW_IP);
    cap.n = 0;
    uint8_t f[ETH_FRAME_MAX];
    const char data[] = "0123456789abcdefghijklmnopqrstuvwxyz!";   /* odd length: 37 */
    size_t dl = sizeof data - 1;
    size_t n = mk_ping(f, FAR_IP, OUR_IP, 0xbeef, 7, data, dl);
    rx(f, n);
    CHECK_EQ(cap.n, 1);
    const uint8_t *r = cap.f[0];
    CHECK(memcmp(r, gw_mac, 6) == 0);                /* off-subnet: via the gateway */
    CHECK_EQ(r16(r + 12), 0x0800);
    const uint8_t *ip = r + 14;
    CHECK_EQ(ip[0], 0x45);
    CHECK_EQ(r16(ip + 2), 20 + 8 + dl);
    CHECK_EQ(ip[8], 64);
    CHECK_EQ(ip[9], 1);
    CHECK_EQ(csum16(ip, 20, 0), 0);                   /* header checksum right */
    CHECK_EQ(r32(ip + 12), OUR_IP);
    CHECK_EQ(r32(ip + 16), FAR_IP);
    const uint8_t *ic = ip + 20;
    CHECK_EQ(ic[0], 0);
    CHECK_EQ(ic[1], 0);
    CHECK_EQ(r16(ic + 4), 0xbeef);
    CHECK_EQ(r16(ic + 6), 7);
    CHECK(memcmp(ic + 8, data, dl) == 0);
    CHECK_EQ(csum16(ic, 8 + dl, 0), 0);              /* ICMP checksum right */
}

TEST(net_icmp_bad_and_truncated)
{
    setup();
    learn(gw_mac, GW_IP);
    cap.n = 0;
    uint8_t f[ETH_FRAME_MAX];
    size_t n = mk_ping(f, FAR_IP, OUR_IP, 1, 1, "ab", 2);
    f[34 + 9] ^= 0xff;                                /* data changed, checksum not */
    rx(f, n);
    CHECK_EQ(net_get_stats()->drop_bad_csum, 1);
    /* An ICMP message shorter than its header, in a consistent IP datagram. */
    n = mk_ping(f, FAR_IP, OUR_IP, 1, 1, "", 0);
    w16(f + 16, 20 + 4);
    ip_fix_csum(f);
    rx(f, n - 4);
    CHECK_EQ(net_get_stats()->drop_truncated, 1);
    n = mk_ping(f, FAR_IP, OUR_IP, 1, 1, "ab", 2);
    f[34] = 13;                                       /* timestamp request */
    w16(f + 36, 0);
    w16(f + 36, csum16(f + 34, 10, 0));
    rx(f, n);
    CHECK_EQ(net_get_stats()->rx_ignored, 1);
    CHECK_EQ(cap.n, 0);
}

/* ---- UDP ---- */

TEST(net_udp_dispatch_and_no_handler)
{
    setup();
    int token;
    CHECK_EQ(udp_bind(9000, handler, &token), 0);
    CHECK_EQ(udp_bind(9000, handler, NULL), NET_ERR_BUSY);
    CHECK_EQ(udp_bind(0, handler, NULL), NET_ERR_INVAL);
    memset(&got, 0, sizeof got);
    uint8_t f[ETH_FRAME_MAX];
    size_t n = mk_udp(f, PEER_IP, 4321, OUR_IP, 9000, "version", 7);
    rx(f, n);
    CHECK_EQ(got.calls, 1);
    CHECK(got.ctx == &token);
    CHECK_EQ(got.src, PEER_IP);
    CHECK_EQ(got.sport, 4321);
    CHECK_EQ(got.len, 7);
    CHECK(memcmp(got.data, "version", 7) == 0);

    n = mk_udp(f, PEER_IP, 4321, OUR_IP, 9001, "x", 1);
    rx(f, n);
    CHECK_EQ(net_get_stats()->drop_no_handler, 1);
    CHECK_EQ(udp_unbind(9000), 0);
    CHECK_EQ(udp_unbind(9000), NET_ERR_INVAL);
    n = mk_udp(f, PEER_IP, 4321, OUR_IP, 9000, "version", 7);
    rx(f, n);
    CHECK_EQ(net_get_stats()->drop_no_handler, 2);
    CHECK_EQ(got.calls, 1);
}

TEST(net_udp_binding_table_full)
{
    setup();
    for (int i = 0; i < UDP_MAX_BINDINGS; i++)
        CHECK_EQ(udp_bind((uint16_t)(100 + i), handler, NULL), 0);
    CHECK_EQ(udp_bind(99, handler, NULL), NET_ERR_FULL);
    CHECK_EQ(udp_unbind(105), 0);
    CHECK_EQ(udp_bind(99, handler, NULL), 0);
}

TEST(net_udp_checksum)
{
    setup();
    udp_bind(7, handler, NULL);
    memset(&got, 0, sizeof got);
    uint8_t f[ETH_FRAME_MAX];
    size_t n = mk_udp(f, PEER_IP, 5555, OUR_IP, 7, "payload", 7);
    f[34 + 8] ^= 0x20;                                /* 'p' -> 'P' */
    rx(f, n);
    CHECK_EQ(net_get_stats()->drop_bad_csum, 1);
    CHECK_EQ(got.calls, 0);
    w16(f + 34 + 6, 0);                               /* no checksum: accepted */
    rx(f, n);
    CHECK_EQ(got.calls, 1);
    CHECK(memcmp(got.data, "Payload", 7) == 0);
}

TEST(net_udp_bad_length_field)
{
    setup();
    udp_bind(7, handler, NULL);
    memset(&got, 0, sizeof got);
    uint8_t f[ETH_FRAME_MAX];
    uint16_t lens[] = { 0, 7, 8 + 5 + 1, 0xffff };
    for (unsigned i = 0; i < 4; i++) {
        size_t n = mk_udp(f, PEER_IP, 5555, OUR_IP, 7, "hello", 5);
        w16(f + 34 + 4, lens[i]);
        w16(f + 34 + 6, 0);
        rx(f, n);
    }
    CHECK_EQ(net_get_stats()->drop_truncated, 4);
    /* A UDP length shorter than the IP payload is legal: the rest is ignored. */
    size_t n = mk_udp(f, PEER_IP, 5555, OUR_IP, 7, "hello", 5);
    w16(f + 34 + 4, 8 + 3);
    w16(f + 34 + 6, 0);
    rx(f, n);
    CHECK_EQ(got.calls, 1);
    CHECK_EQ(got.len, 3);
}

/* Check a captured frame is a correct UDP datagram and return its payload. */
static const uint8_t *check_udp_frame(int i, const uint8_t *mac, uint32_t dst,
                                      uint16_t sport, uint16_t dport, size_t len)
{
    const uint8_t *r = cap.f[i];
    CHECK(memcmp(r, mac, 6) == 0);
    CHECK(memcmp(r + 6, dev.mac, 6) == 0);
    CHECK_EQ(r16(r + 12), 0x0800);
    const uint8_t *ip = r + 14;
    CHECK_EQ(ip[0], 0x45);
    CHECK_EQ(r16(ip + 2), 28 + len);
    CHECK_EQ(r16(ip + 6) & 0x3fff, 0);               /* not a fragment */
    CHECK_EQ(ip[8], 64);
    CHECK_EQ(ip[9], 17);
    CHECK_EQ(csum16(ip, 20, 0), 0);
    CHECK_EQ(r32(ip + 12), OUR_IP);
    CHECK_EQ(r32(ip + 16), dst);
    const uint8_t *u = ip + 20;
    CHECK_EQ(r16(u), sport);
    CHECK_EQ(r16(u + 2), dport);
    CHECK_EQ(r16(u + 4), 8 + len);
    CHECK(r16(u + 6) != 0);
    CHECK_EQ(csum16(u, 8 + len, pseudo(OUR_IP, dst, 8 + len)), 0);
    CHECK(cap.len[i] >= 60 && cap.len[i] >= 42 + len);
    return u + 8;
}

TEST(net_udp_send_unresolved_then_arp_reply)
{
    setup();
    CHECK_EQ(udp_send(PEER_IP, 9000, 40000, "first", 5), NET_QUEUED);
    CHECK_EQ(udp_send(PEER_IP, 9000, 40000, "second", 6), NET_QUEUED);
    CHECK_EQ(cap.n, 1);                               /* one ARP request, not two */
    const uint8_t *r = cap.f[0];
    CHECK(memcmp(r, eth_broadcast, 6) == 0);
    CHECK_EQ(r16(r + 12), 0x0806);
    CHECK_EQ(r16(r + 14 + 6), 1);
    CHECK_EQ(r32(r + 14 + 14), OUR_IP);
    CHECK_EQ(r32(r + 14 + 24), PEER_IP);
    CHECK_EQ(cap.len[0], 60);                         /* padded */

    uint8_t f[64];
    rx(f, mk_arp(f, 2, peer_mac, PEER_IP, dev.mac, OUR_IP));
    CHECK_EQ(cap.n, 3);                               /* both, in order */
    const uint8_t *p1 = check_udp_frame(1, peer_mac, PEER_IP, 9000, 40000, 5);
    const uint8_t *p2 = check_udp_frame(2, peer_mac, PEER_IP, 9000, 40000, 6);
    CHECK(memcmp(p1, "first", 5) == 0);
    CHECK(memcmp(p2, "second", 6) == 0);

    CHECK_EQ(udp_send(PEER_IP, 9000, 40000, "third", 5), 0);
    CHECK_EQ(cap.n, 4);
    CHECK_EQ(net_get_stats()->tx_frames, 4);
}

TEST(net_udp_send_off_subnet_via_gateway)
{
    setup();
    CHECK_EQ(udp_send(FAR_IP, 1, 53, "q", 1), NET_QUEUED);
    CHECK_EQ(cap.n, 1);
    CHECK_EQ(r32(cap.f[0] + 14 + 24), GW_IP);          /* asks for the gateway */
    uint8_t f[64];
    rx(f, mk_arp(f, 2, gw_mac, GW_IP, dev.mac, OUR_IP));
    CHECK_EQ(cap.n, 2);
    check_udp_frame(1, gw_mac, FAR_IP, 1, 53, 1);
    /* Another far host reuses the gateway's entry. */
    CHECK_EQ(udp_send(IP(8, 8, 8, 8), 1, 53, "q", 1), 0);
    check_udp_frame(2, gw_mac, IP(8, 8, 8, 8), 1, 53, 1);
}

TEST(net_udp_send_sizes_and_errors)
{
    setup();
    learn(peer_mac, PEER_IP);
    cap.n = 0;
    static uint8_t big[UDP_PAYLOAD_MAX + 1];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)(i * 31);
    CHECK_EQ(udp_send(PEER_IP, 1, 2, big, UDP_PAYLOAD_MAX), 0);
    CHECK_EQ(cap.len[0], ETH_FRAME_MAX);
    const uint8_t *pl = check_udp_frame(0, peer_mac, PEER_IP, 1, 2, UDP_PAYLOAD_MAX);
    CHECK(memcmp(pl, big, UDP_PAYLOAD_MAX) == 0);
    CHECK_EQ(udp_send(PEER_IP, 1, 2, big, UDP_PAYLOAD_MAX + 1), NET_ERR_INVAL);
    CHECK_EQ(udp_send(PEER_IP, 1, 0, big, 1), NET_ERR_INVAL);
    CHECK_EQ(udp_send(0, 1, 2, big, 1), NET_ERR_INVAL);
    CHECK_EQ(udp_send(OUR_IP, 1, 2, big, 1), NET_ERR_NOROUTE);
    CHECK_EQ(udp_send(PEER_IP, 1, 2, NULL, 0), 0);      /* empty datagram */
    check_udp_frame(1, peer_mac, PEER_IP, 1, 2, 0);
    CHECK_EQ(udp_send(0xffffffffu, 68, 67, "d", 1), 0); /* broadcast: no ARP */
    check_udp_frame(2, eth_broadcast, 0xffffffffu, 68, 67, 1);

    cap.full = true;
    CHECK_EQ(udp_send(PEER_IP, 1, 2, "x", 1), NET_ERR_NOBUF);
    CHECK_EQ(net_get_stats()->drop_no_buffer, 1);
    CHECK_EQ(net_get_stats()->tx_frames, 1 + 3);       /* learn()'s ARP reply + 3 */

    net_init(&dev, OUR_IP, IP(255, 255, 255, 0), 0);     /* no gateway */
    CHECK_EQ(udp_send(FAR_IP, 1, 2, "x", 1), NET_ERR_NOROUTE);
}

TEST(net_arp_queue_full_retry_and_expiry)
{
    setup();
    int queued = 0;
    for (int i = 0; i < 9; i++)
        queued += udp_send(PEER_IP, 1, 2, "x", 1) == NET_QUEUED;
    CHECK_EQ(queued, 8);
    CHECK_EQ(udp_send(PEER_IP, 1, 2, "x", 1), NET_ERR_NOARP);
    CHECK_EQ(net_get_stats()->drop_arp, 2);
    CHECK_EQ(cap.n, 1);

    /* A second later the next send asks again (the queue is still full). */
    fake_now_ns += 1100000000ull;
    CHECK_EQ(udp_send(PEER_IP, 1, 2, "x", 1), NET_ERR_NOARP);
    CHECK_EQ(cap.n, 2);
    CHECK_EQ(r16(cap.f[1] + 12), 0x0806);

    /* After 3 s unanswered, the parked frames are dropped and counted. */
    fake_now_ns += 3100000000ull;
    uint8_t f[64];
    rx(f, mk_arp(f, 2, peer_mac, PEER_IP, dev.mac, OUR_IP));
    CHECK_EQ(net_get_stats()->drop_arp, 3 + 8);
    CHECK_EQ(cap.n, 2);                                /* nothing stale went out */
    CHECK_EQ(udp_send(PEER_IP, 1, 2, "y", 1), 0);     /* resolved now */
}

TEST(net_arp_entry_expires)
{
    setup();
    learn(peer_mac, PEER_IP);
    cap.n = 0;
    CHECK_EQ(udp_send(PEER_IP, 1, 2, "x", 1), 0);
    fake_now_ns += 61000000000ull;
    CHECK_EQ(udp_send(PEER_IP, 1, 2, "x", 1), NET_QUEUED);
    CHECK_EQ(r16(cap.f[1] + 12), 0x0806);
}

TEST(net_arp_cache_replacement)
{
    setup();
    /* More neighbours than entries: the oldest go, nothing breaks. */
    for (int i = 0; i < 40; i++) {
        uint8_t mac[6] = { 2, 0, 0, 0, 0, (uint8_t)i };
        fake_now_ns += 1000;
        learn(mac, IP(10, 0, 2, 100 + i));
    }
    cap.n = 0;
    CHECK_EQ(udp_send(IP(10, 0, 2, 139), 1, 2, "x", 1), 0);   /* newest kept */
    CHECK_EQ(udp_send(IP(10, 0, 2, 100), 1, 2, "x", 1), NET_QUEUED);  /* oldest gone */
}

/* ---- printing ---- */


TEST(net_print_and_arp_print)
{
    setup();
    learn(gw_mac, GW_IP);
    udp_send(PEER_IP, 1, 2, "x", 1);
    uint8_t f[8] = { 0 };
    rx(f, 5);
    struct sbuf b = SBUF_INIT;
    net_print(&b.pr);
    CHECK(strstr(b.s, "mac 52:54:00:12:34:56") != NULL);
    CHECK(strstr(b.s, "ip 10.0.2.15") != NULL);
    CHECK(strstr(b.s, "mask 255.255.255.0") != NULL);
    CHECK(strstr(b.s, "gw 10.0.2.2") != NULL);
    CHECK(strstr(b.s, "rx frames 2 bytes 47") != NULL);
    CHECK(strstr(b.s, "truncated 1") != NULL);
    b.n = 0;
    arp_print(&b.pr);
    CHECK(strstr(b.s, "10.0.2.2") != NULL);
    CHECK(strstr(b.s, "52:55:0a:00:02:02  resolved") != NULL);
    CHECK(strstr(b.s, "10.0.2.3") != NULL);
    CHECK(strstr(b.s, "incomplete") != NULL);
    CHECK(strstr(b.s, "2 entries") != NULL);
    CHECK(strstr(b.s, "1 frames waiting") != NULL);
}

static void app_a_print(struct printer *p) { pr_puts(p, "app a: drops 3\n"); }
static void app_b_print(struct printer *p) { pr_puts(p, "app b: drops 4\n"); }

TEST(net_print_shows_each_registered_application_once)
{
    static struct net_app_stats a = { app_a_print, NULL }, b = { app_b_print, NULL };
    setup();
    struct sbuf out = SBUF_INIT;
    net_print(&out.pr);
    CHECK(strstr(out.s, "app a:") == NULL);
    net_app_stats_register(&a);
    net_app_stats_register(&b);
    out.n = 0;
    net_print(&out.pr);
    char *pa = strstr(out.s, "app a: drops 3\n"), *pb = strstr(out.s, "app b: drops 4\n");
    CHECK(pa != NULL && pb != NULL);
    CHECK(pa && strstr(pa + 1, "app a:") == NULL);
    CHECK(pb && strstr(pb + 1, "app b:") == NULL);
    /* After the stack's own lines. */
    char *drops = strstr(out.s, "drops: ");
    CHECK(drops != NULL && pa > drops && pb > drops);
}

/* ---- garbage ---- */

TEST(net_fuzz_random_frames)
{
    setup();
    udp_bind(9000, handler, NULL);
    memset(&got, 0, sizeof got);
    srand(1234);
    uint8_t f[ETH_FRAME_MAX + 64], good[ETH_FRAME_MAX];
    size_t gn = mk_udp(good, PEER_IP, 1, OUR_IP, 9000, "0123456789", 10);
    int n = 20000;
    for (int i = 0; i < n; i++) {
        size_t len = (size_t)rand() % sizeof f;
        if (i % 2) {
            /* Mutate a valid frame: a few random bytes, random length. */
            memcpy(f, good, gn);
            memset(f + gn, 0, sizeof f - gn);
            for (int k = rand() % 4; k >= 0; k--)
                f[rand() % (gn + 8)] = (uint8_t)rand();
            len = (size_t)rand() % (gn + 9);
        } else {
            for (size_t k = 0; k < len; k++)
                f[k] = (uint8_t)rand();
            if (i % 4 == 0)
                memcpy(f, dev.mac, 6);
            if (i % 8 == 0 && len >= 14)
                w16(f + 12, i % 16 ? 0x0800 : 0x0806);
        }
        rx(f, len);
    }
    const struct net_stats *s = net_get_stats();
    CHECK_EQ(s->rx_frames, (uint64_t)n);
    /* Every frame was either delivered, answered, or counted once. */
    CHECK(drops_and_ignored() + (uint64_t)got.calls <= (uint64_t)n);
    CHECK(drops_and_ignored() > (uint64_t)n / 2);
    CHECK(s->drop_truncated > 0 && s->drop_bad_csum > 0 && s->rx_ignored > 0);
}

/* inet_sum adds 32-bit words in the CPU's order and swaps once: against
 * the byte-pair reference above, at every length up to past a datagram,
 * every offset in a word (the loads are unaligned), random bytes and
 * start sums, and the all-zero and all-0xff edges where ones'-complement
 * sums tell 0 from 0xffff. */
TEST(net_inet_sum_matches_reference)
{
    static uint8_t buf[1600];
    srand(7);
    for (unsigned round = 0; round < 3; round++) {
        for (size_t i = 0; i < sizeof buf; i++)
            buf[i] = round == 0 ? 0 : round == 1 ? 0xff : (uint8_t)rand();
        for (size_t len = 0; len <= 1480; len++) {
            size_t off = len % 8;
            uint32_t start = round == 2 ? (uint32_t)rand() % 0x40000 : 0;
            uint16_t want = csum16(buf + off, len, start);
            uint16_t got = inet_fold(inet_sum(buf + off, len, start));
            if (want != got) {
                fprintf(stderr, "round %u len %zu off %zu start %u: %04x, want %04x\n",
                        round, len, off, start, got, want);
                CHECK(want == got);
                return;
            }
        }
    }
}

/* inet_sum_copy: the same sum as inet_sum, and exactly the bytes copied,
 * nothing written past them, at every length and source/destination
 * offset in a word; two pieces' sums add up when the first is even. */
TEST(net_inet_sum_copy_matches_sum)
{
    static uint8_t src[1600], dst[1600];
    srand(9);
    for (size_t i = 0; i < sizeof src; i++)
        src[i] = (uint8_t)rand();
    for (size_t len = 0; len <= 1480; len++) {
        size_t so = len % 8, dof = (len / 8) % 8;
        memset(dst, 0xa5, sizeof dst);
        uint64_t got = inet_sum_copy(dst + dof, src + so, len, 77);
        if (inet_fold(got) != inet_fold(inet_sum(src + so, len, 77)) ||
            memcmp(dst + dof, src + so, len) != 0 || dst[dof + len] != 0xa5 ||
            (dof && dst[dof - 1] != 0xa5)) {
            fprintf(stderr, "len %zu src +%zu dst +%zu\n", len, so, dof);
            CHECK(0);
            return;
        }
        size_t half = (len / 2) & ~(size_t)1;
        uint64_t two = inet_sum(src + so + half, len - half, inet_sum(src + so, half, 0));
        CHECK_EQ(inet_fold(two), csum16(src + so, len, 0));
    }
}
