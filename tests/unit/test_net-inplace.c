// LINK: net/ether.c net/arp.c net/ipv4.c net/icmp.c net/udp.c lib/printf.c
/* tests/unit/test_net-inplace.c: UDP datagrams built in place, in the
 * device's own transmit buffer (udp_reserve, udp_commit, udp_cancel, and
 * udp_send through them), against a fake netdev with buffers of its own
 * and, when asked, checksum offload. What it commits is parsed back and
 * checked with an independent checksum; where the fake offloads, it
 * completes the checksum as the virtio device does (the sum from
 * csum_start to the end, complemented, at csum_start + csum_offset) and
 * the finished frame must verify. */
#include "test.h"
#include <stdlib.h>
#include "net/net.h"
#include "net/pkt.h"

static uint64_t fake_now_ns = 1000000000ull;
uint64_t time_ns(void) { return fake_now_ns; }
void yield(void) {}

/* ---- the fake device ---- */

#define NBUF 4
static struct {
    uint8_t buf[NBUF][ETH_FRAME_BUF];
    bool held[NBUF];
    bool full;                     /* reserve finds no free buffer */
    int reserves, commits, cancels, xmits;
    uint8_t f[ETH_FRAME_BUF];      /* the last frame sent, offload completed */
    size_t len;
    uint16_t csum_start, csum_off;
} fd;

static int fake_xmit(struct netdev *dev, const void *frame, size_t len)
{
    fd.xmits++;
    memcpy(fd.f, frame, len);
    fd.len = len;
    return 0;
}

static void *fake_reserve(struct netdev *dev)
{
    if (fd.full)
        return NULL;
    for (int i = 0; i < NBUF; i++)
        if (!fd.held[i]) {
            fd.held[i] = true;
            fd.reserves++;
            memset(fd.buf[i], 0xa5, ETH_FRAME_BUF);     /* stale bytes of a last frame */
            return fd.buf[i];
        }
    return NULL;
}

static int slot_of(void *frame)
{
    for (int i = 0; i < NBUF; i++)
        if (frame == fd.buf[i] && fd.held[i])
            return i;
    return -1;
}

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

static struct netdev dev;

/* The device's half of the offload, as virtio 1.x 5.1.6.2 says. */
static int fake_commit(struct netdev *d, void *frame, size_t len, uint16_t start, uint16_t off)
{
    int i = slot_of(frame);
    CHECK(i >= 0);
    if (i < 0)
        return -1;
    fd.held[i] = false;
    fd.commits++;
    fd.csum_start = start;
    fd.csum_off = off;
    memcpy(fd.f, frame, len);
    fd.len = len;
    if (start) {
        CHECK(dev.tx_csum);                       /* asked only of a device that offloads */
        uint16_t c = csum16(fd.f + start, len - start, 0);
        fd.f[start + off] = (uint8_t)(c >> 8);
        fd.f[start + off + 1] = (uint8_t)c;
    }
    return 0;
}

static void fake_cancel(struct netdev *d, void *frame)
{
    int i = slot_of(frame);
    CHECK(i >= 0);
    if (i >= 0)
        fd.held[i] = false;
    fd.cancels++;
}

static struct netdev dev = {
    .mac = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 }, .xmit = fake_xmit,
    .tx_reserve = fake_reserve, .tx_commit = fake_commit, .tx_cancel = fake_cancel,
};

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (b) << 16 | (c) << 8 | (d))
#define OUR_IP  IP(10, 0, 2, 15)
#define GW_IP   IP(10, 0, 2, 2)
#define PEER_IP IP(10, 0, 2, 3)
static const uint8_t peer_mac[6] = { 0x52, 0x55, 0x0a, 0x00, 0x02, 0x03 };

static void w16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = v & 0xff; }
static uint16_t r16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }

/* The peer asks who we are: the stack learns its MAC from the request. */
static void learn_peer(void)
{
    uint8_t f[60] = { 0 };
    memset(f, 0xff, 6);
    memcpy(f + 6, peer_mac, 6);
    w16(f + 12, 0x0806);
    uint8_t *a = f + 14;
    w16(a, 1); w16(a + 2, 0x0800); a[4] = 6; a[5] = 4; w16(a + 6, 1);
    memcpy(a + 8, peer_mac, 6);
    a[14] = 10; a[15] = 0; a[16] = 2; a[17] = 3;
    a[24] = 10; a[25] = 0; a[26] = 2; a[27] = 15;
    net_rx(f, sizeof f);
}

static void setup(bool offload)
{
    memset(&fd, 0, sizeof fd);
    dev.tx_csum = offload;
    net_init(&dev, OUR_IP, IP(255, 255, 255, 0), GW_IP);
    learn_peer();
    fd.xmits = 0;                  /* the ARP reply learn_peer drew */
}

/* The last frame: to the peer from us, IPv4 header sound, UDP from sport
 * to dport with the checksum right over the pseudo header, the payload
 * (n bytes, byte i = seed + i) intact. */
static void check_frame(uint16_t sport, uint16_t dport, size_t n, uint8_t seed)
{
    const uint8_t *f = fd.f;
    CHECK(memcmp(f, peer_mac, 6) == 0);
    CHECK(memcmp(f + 6, dev.mac, 6) == 0);
    CHECK_EQ(r16(f + 12), 0x0800);
    CHECK_EQ(f[14], 0x45);
    CHECK_EQ(r16(f + 16), 20 + 8 + n);
    CHECK_EQ(f[23], 17);
    CHECK_EQ(csum16(f + 14, 20, 0), 0);          /* the IPv4 header's own */
    const uint8_t *u = f + 34;
    CHECK_EQ(r16(u), sport);
    CHECK_EQ(r16(u + 2), dport);
    CHECK_EQ(r16(u + 4), 8 + n);
    CHECK(r16(u + 6) != 0);
    uint32_t ps = (OUR_IP >> 16) + (OUR_IP & 0xffff) + (PEER_IP >> 16) + (PEER_IP & 0xffff) +
                  17 + (uint32_t)(8 + n);
    CHECK_EQ(csum16(u, 8 + n, ps), 0);
    for (size_t i = 0; i < n; i++)
        if (u[8 + i] != (uint8_t)(seed + i)) {
            CHECK(!"payload byte changed");
            break;
        }
    CHECK(fd.len >= ETH_FRAME_MIN && fd.len >= 42 + n);
}

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(seed + i);
}

/* Built in place, summed in software: one commit, nothing copied through
 * xmit, no checksum asked of the device, the frame right. */
TEST(in_place_summed_here)
{
    setup(false);
    uint8_t *p = udp_reserve(PEER_IP);
    CHECK(p != NULL);
    CHECK(p == fd.buf[0] + 42);
    fill(p, 1400, 7);
    CHECK_EQ(udp_commit(p, PEER_IP, 9100, 5555, 1400), 0);
    CHECK_EQ(fd.commits, 1);
    CHECK_EQ(fd.xmits, 0);
    CHECK_EQ(fd.csum_start, 0);
    check_frame(9100, 5555, 1400, 7);
    CHECK_EQ(net_get_stats()->tx_frames, 2);     /* the ARP reply, and this */
}

/* Unsummed (a payload with its own check): checksum 0, "none" (RFC
 * 768), on either device, never asked of the one that offloads; the rest
 * of the frame as ever. */
TEST(in_place_unsummed)
{
    for (int offload = 0; offload < 2; offload++) {
        setup(offload);
        uint8_t *p = udp_reserve(PEER_IP);
        CHECK(p != NULL);
        fill(p, 1400, 3);
        CHECK_EQ(udp_commit_unsummed(p, PEER_IP, 9100, 5555, 1400), 0);
        CHECK_EQ(fd.commits, 1);
        CHECK_EQ(fd.csum_start, 0);
        const uint8_t *f = fd.f, *u = f + 34;
        CHECK_EQ(r16(u + 6), 0);
        CHECK_EQ(r16(u + 4), 8 + 1400);
        CHECK_EQ(csum16(f + 14, 20, 0), 0);
        for (size_t i = 0; i < 1400; i++)
            if (u[8 + i] != (uint8_t)(3 + i)) {
                CHECK(!"payload byte changed");
                break;
            }
        /* A bad port is refused and the buffer given back, as udp_commit. */
        p = udp_reserve(PEER_IP);
        CHECK_EQ(udp_commit_unsummed(p, PEER_IP, 9100, 0, 10), NET_ERR_INVAL);
    }
}

/* Offloaded: the stack leaves the pseudo header's sum in the field and
 * asks the device to finish from the UDP header (34) at offset 6; the
 * field before the device's work is not the final checksum, and the
 * frame the device completes verifies. Odd lengths too (the sum pads). */
TEST(in_place_checksum_offloaded)
{
    static const size_t lens[] = { 1400, 1, 333, 0 };
    for (unsigned k = 0; k < sizeof lens / sizeof lens[0]; k++) {
        setup(true);
        uint8_t *p = udp_reserve(PEER_IP);
        CHECK(p != NULL);
        fill(p, lens[k], (uint8_t)k);
        CHECK_EQ(udp_commit(p, PEER_IP, 9100, 5555, lens[k]), 0);
        CHECK_EQ(fd.csum_start, 34);
        CHECK_EQ(fd.csum_off, 6);
        /* What the stack left: the pseudo header folded, not complemented. */
        uint32_t ps = (OUR_IP >> 16) + (OUR_IP & 0xffff) + (PEER_IP >> 16) + (PEER_IP & 0xffff) +
                      17 + (uint32_t)(8 + lens[k]);
        CHECK_EQ(r16(fd.buf[0] + 40), (uint16_t)~csum16(NULL, 0, ps));
        check_frame(9100, 5555, lens[k], (uint8_t)k);
        if (lens[k] < 18) {
            CHECK_EQ(fd.len, ETH_FRAME_MIN);
            for (size_t i = 42 + lens[k]; i < ETH_FRAME_MIN; i++)
                CHECK_EQ(fd.f[i], 0);             /* padded with zeros, not stale bytes */
        }
    }
}

/* udp_send goes in place too where it can: one copy into the device's
 * buffer, summed on the way or left to the device. */
TEST(udp_send_builds_in_place)
{
    for (int off = 0; off < 2; off++) {
        setup(off);
        uint8_t data[900];
        fill(data, sizeof data, 40);
        CHECK_EQ(udp_send(PEER_IP, 9000, 4444, data, sizeof data), 0);
        CHECK_EQ(fd.commits, 1);
        CHECK_EQ(fd.xmits, 0);
        CHECK_EQ(fd.csum_start, off ? 34 : 0);
        check_frame(9000, 4444, sizeof data, 40);
    }
}

/* Where the frame cannot be built in place the caller is told (NULL) and
 * nothing is held or sent: a next hop whose MAC is not known (no ARP
 * request either: udp_send's path asks), no free buffer, a device without
 * in-place transmit. udp_send then takes the old path. */
TEST(in_place_refused_falls_back)
{
    setup(false);
    CHECK(udp_reserve(IP(10, 0, 2, 77)) == NULL);
    CHECK_EQ(fd.xmits, 0);
    CHECK_EQ(fd.reserves, 0);
    CHECK(udp_reserve(OUR_IP) == NULL);           /* no loopback */
    fd.full = true;
    CHECK(udp_reserve(PEER_IP) == NULL);
    fd.full = false;
    uint8_t data[10];
    fill(data, sizeof data, 1);
    CHECK_EQ(udp_send(IP(10, 0, 2, 77), 9000, 4444, data, sizeof data), NET_QUEUED);
    CHECK_EQ(fd.xmits, 1);                        /* the ARP request, copied through xmit */
    CHECK_EQ(r16(fd.f + 12), 0x0806);

    struct netdev plain = { .mac = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 }, .xmit = fake_xmit };
    memset(&fd, 0, sizeof fd);
    net_init(&plain, OUR_IP, IP(255, 255, 255, 0), GW_IP);
    learn_peer();
    fd.xmits = 0;
    CHECK(udp_reserve(PEER_IP) == NULL);
    CHECK_EQ(udp_send(PEER_IP, 9000, 4444, data, sizeof data), 0);
    CHECK_EQ(fd.xmits, 1);
    CHECK_EQ(fd.commits, 0);
    check_frame(9000, 4444, sizeof data, 1);
}

/* A reservation ends in one commit or one cancel; a bad length or port
 * at commit gives the buffer back unsent; every buffer comes back. */
TEST(in_place_cancel_and_bad_commit_give_the_buffer_back)
{
    setup(false);
    void *p[NBUF];
    for (int i = 0; i < NBUF; i++)
        CHECK((p[i] = udp_reserve(PEER_IP)) != NULL);
    CHECK(udp_reserve(PEER_IP) == NULL);          /* all held */
    udp_cancel(p[0]);
    CHECK_EQ(udp_commit(p[1], PEER_IP, 9100, 5555, UDP_PAYLOAD_MAX + 1), NET_ERR_INVAL);
    CHECK_EQ(udp_commit(p[2], PEER_IP, 9100, 0, 10), NET_ERR_INVAL);
    CHECK_EQ(udp_commit(p[3], PEER_IP, 9100, 5555, UDP_PAYLOAD_MAX), 0);
    CHECK_EQ(fd.cancels, 3);
    CHECK_EQ(fd.commits, 1);
    for (int i = 0; i < NBUF; i++)
        CHECK(!fd.held[i]);
}
