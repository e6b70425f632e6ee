/* net/ether.c: the bottom of the stack. Configuration, Ethernet framing,
 * receive dispatch by ethertype, the counters and the `net` command. */
#include "net/net.h"
#include "net/pkt.h"
#include "lib/printf.h"

const uint8_t eth_broadcast[ETH_ALEN] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

/* Set once by net_init before the driver delivers frames, then only read. */
struct netdev *net_dev;
uint32_t net_ip_addr, net_netmask, net_gateway;

struct net_stats net_stats_live;
static struct net_app_stats *net_apps;

void net_app_stats_register(struct net_app_stats *s)
{
    /* Published whole: net_print may walk the list on another CPU. */
    struct net_app_stats *head = __atomic_load_n(&net_apps, __ATOMIC_RELAXED);
    do
        s->next = head;
    while (!__atomic_compare_exchange_n(&net_apps, &head, s, false, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED));
}

void net_init(struct netdev *dev, uint32_t ip, uint32_t mask, uint32_t gw)
{
    memset(&net_stats_live, 0, sizeof net_stats_live);
    net_ip_addr = ip;
    net_netmask = mask;
    net_gateway = gw;
    arp_reset();
    udp_reset();
    /* Last: a sender that sees net_dev set sees the addresses too. */
    __atomic_store_n(&net_dev, dev, __ATOMIC_RELEASE);
}

uint32_t net_ip(void) { return net_ip_addr; }
uint32_t net_mask(void) { return net_netmask; }
uint32_t net_gw(void) { return net_gateway; }

const struct net_stats *net_get_stats(void) { return &net_stats_live; }

char *net_fmt_ip(char *buf, uint32_t ip)
{
    fmt_snprintf(buf, 16, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 0xff,
                 (ip >> 8) & 0xff, ip & 0xff);
    return buf;
}

static bool ether_for_us(const uint8_t *dst)
{
    return memcmp(dst, net_dev->mac, ETH_ALEN) == 0 ||
           memcmp(dst, eth_broadcast, ETH_ALEN) == 0;
}

void net_rx(const void *frame, size_t len)
{
    const uint8_t *f = frame;

    NET_COUNT(rx_frames);
    NET_COUNT_N(rx_bytes, len);
    if (!net_dev) {                   /* a driver racing net_init */
        NET_COUNT(rx_ignored);
        return;
    }
    if (len < ETH_HLEN) {
        NET_COUNT(drop_truncated);
        return;
    }
    const struct eth_hdr *eh = frame;
    if (!ether_for_us(eh->dst)) {      /* multicast, or promiscuous leftovers */
        NET_COUNT(rx_ignored);
        return;
    }
    if (eh->src[0] & 1) {              /* a group address never sends: forged */
        NET_COUNT(drop_bad_source);
        return;
    }
    switch (ntohs(eh->type)) {
    case ETHERTYPE_ARP:
        arp_input(f + ETH_HLEN, len - ETH_HLEN);
        break;
    case ETHERTYPE_IPV4:
        ipv4_input(f + ETH_HLEN, len - ETH_HLEN);
        break;
    default:                           /* IPv6, VLAN tags, LLDP, ... */
        NET_COUNT(drop_unknown_proto);
        break;
    }
}

void ether_fill(uint8_t *frame, const uint8_t *dst, uint16_t type)
{
    struct eth_hdr *eh = (struct eth_hdr *)frame;
    memcpy(eh->dst, dst, ETH_ALEN);
    memcpy(eh->src, net_dev->mac, ETH_ALEN);
    eh->type = htons(type);
}

int ether_xmit(uint8_t *frame, size_t len)
{
    /* Ethernet's minimum frame is 64 bytes with the FCS the device adds;
     * pad with zeros rather than leak whatever the buffer held before. */
    if (len < ETH_FRAME_MIN) {
        memset(frame + len, 0, ETH_FRAME_MIN - len);
        len = ETH_FRAME_MIN;
    }
    if (net_dev->xmit(net_dev, frame, len) != 0) {
        NET_COUNT(drop_no_buffer);
        return NET_ERR_NOBUF;
    }
    NET_COUNT(tx_frames);
    NET_COUNT_N(tx_bytes, len);
    return 0;
}

static unsigned long stat(const uint64_t *field)
{
    return (unsigned long)__atomic_load_n(field, __ATOMIC_RELAXED);
}

void net_print(struct printer *p)
{
    const struct net_stats *s = &net_stats_live;
    struct netdev *dev = __atomic_load_n(&net_dev, __ATOMIC_ACQUIRE);
    char ip[16], mask[16], gw[16];

    if (!dev) {
        pr_puts(p, "net: no network device\n");
        return;
    }
    const uint8_t *m = dev->mac;
    pr_printf(p, "mac %02x:%02x:%02x:%02x:%02x:%02x  ip %s  mask %s  gw %s\n",
              m[0], m[1], m[2], m[3], m[4], m[5], net_fmt_ip(ip, net_ip_addr),
              net_fmt_ip(mask, net_netmask), net_fmt_ip(gw, net_gateway));
    pr_printf(p, "rx frames %lu bytes %lu\n", stat(&s->rx_frames), stat(&s->rx_bytes));
    pr_printf(p, "tx frames %lu bytes %lu\n", stat(&s->tx_frames), stat(&s->tx_bytes));
    pr_printf(p, "ignored (not for us) %lu\n", stat(&s->rx_ignored));
    pr_printf(p, "drops: bad checksum %lu, truncated %lu, unknown protocol %lu, "
              "no handler %lu, no buffer %lu, fragment %lu, arp %lu, bad source %lu, "
              "broadcast %lu\n",
              stat(&s->drop_bad_csum), stat(&s->drop_truncated),
              stat(&s->drop_unknown_proto), stat(&s->drop_no_handler),
              stat(&s->drop_no_buffer), stat(&s->drop_fragment), stat(&s->drop_arp),
              stat(&s->drop_bad_source), stat(&s->drop_broadcast));
    for (struct net_app_stats *a = __atomic_load_n(&net_apps, __ATOMIC_ACQUIRE); a; a = a->next)
        a->print(p);
}
