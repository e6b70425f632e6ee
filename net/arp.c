/* net/arp.c: IPv4 to Ethernet address resolution (RFC 826).
 *
 * A 32-entry cache. An entry is RESOLVED (we know the MAC, valid for 60 s
 * after we last heard from it) or INCOMPLETE (we asked and wait). Sending to
 * a next hop that is not RESOLVED broadcasts a request (again at most once a
 * second per address) and parks the frame in a small queue (8 frames in
 * all, whatever their destination); the reply sends them in the order they
 * were queued. A frame still parked after 3 s is dropped and counted under
 * drop_arp, as is one that finds the queue full: the sender gets
 * NET_ERR_NOARP and may retry. Expiry is lazy: checked whenever the cache
 * is used, so no timer is needed.
 *
 * We learn a mapping from a reply, and from a request when the sender
 * already had an entry or was asking for us (RFC 826's merge rule), never
 * from gratuitous chatter about others, so the cache holds only hosts we
 * talk to. And only a mapping that can be true: a unicast MAC that is not
 * all zeros and not ours, for a unicast address on our subnet that is not
 * ours (or the gateway's, wherever the mask puts it). Anything else is refused (counted, shown by `arp`): a forged
 * mapping would redirect our replies, or turn them into broadcasts. All state is under arp_lock, which is held while parked frames
 * go to the driver (see the lock order in net/net.h). */
#include "net/net.h"
#include "net/pkt.h"
#include "kernel/spinlock.h"
#include "kernel/time.h"
#include "lib/printf.h"

#define ARP_ENTRIES     32
#define ARP_PENDING     8
#define NS_PER_S        1000000000ull
#define ARP_EXPIRE_NS   (60 * NS_PER_S)
#define ARP_RETRY_NS    (1 * NS_PER_S)
#define ARP_PENDING_NS  (3 * NS_PER_S)

enum arp_state { ARP_FREE, ARP_INCOMPLETE, ARP_RESOLVED };

struct arp_entry {
    uint32_t ip;
    uint8_t mac[ETH_ALEN];
    uint8_t state;
    uint64_t when_ns;        /* RESOLVED: last heard; INCOMPLETE: last asked */
};

struct arp_pending {
    bool used;
    uint16_t len;
    uint32_t next_hop;
    uint64_t queued_ns;
    uint64_t order;          /* FIFO order among parked frames */
    uint8_t frame[ETH_FRAME_BUF];
};

/* now - t >= age, tolerating a t slightly ahead of now (clocks read on
 * different CPUs): such a t is young, not 2^64 ns old. */
static bool arp_aged(uint64_t now, uint64_t t, uint64_t age)
{
    return now >= t && now - t >= age;
}

static spinlock_t arp_lock = SPINLOCK_INIT("arp-cache");
static struct arp_entry arp_cache[ARP_ENTRIES];
static struct arp_pending arp_pending[ARP_PENDING];
static uint64_t arp_order;
static uint64_t arp_refused;          /* mappings not learnt (see the top) */

void arp_reset(void)
{
    unsigned long f = spin_lock(&arp_lock);
    memset(arp_cache, 0, sizeof arp_cache);
    arp_refused = 0;
    for (int i = 0; i < ARP_PENDING; i++)
        arp_pending[i].used = false;
    spin_unlock(&arp_lock, f);
}

/* The live entry for ip, or NULL. Ages out RESOLVED entries on the way. */
static struct arp_entry *arp_find(uint32_t ip, uint64_t now)
{
    for (int i = 0; i < ARP_ENTRIES; i++) {
        struct arp_entry *e = &arp_cache[i];
        if (e->state == ARP_FREE || e->ip != ip)
            continue;
        if (e->state == ARP_RESOLVED && arp_aged(now, e->when_ns, ARP_EXPIRE_NS)) {
            e->state = ARP_FREE;
            return NULL;
        }
        return e;
    }
    return NULL;
}

/* A slot for a new entry: a free one, else the one unused the longest. */
static struct arp_entry *arp_alloc(void)
{
    struct arp_entry *old = &arp_cache[0];
    for (int i = 0; i < ARP_ENTRIES; i++) {
        if (arp_cache[i].state == ARP_FREE)
            return &arp_cache[i];
        if (arp_cache[i].when_ns < old->when_ns)
            old = &arp_cache[i];
    }
    return old;
}

static void arp_expire_pending(uint64_t now)
{
    for (int i = 0; i < ARP_PENDING; i++) {
        if (arp_pending[i].used && arp_aged(now, arp_pending[i].queued_ns, ARP_PENDING_NS)) {
            arp_pending[i].used = false;
            NET_COUNT(drop_arp);
        }
    }
}

/* Send the frames parked for ip, oldest first. */
static void arp_flush(uint32_t ip, const uint8_t *mac)
{
    for (;;) {
        struct arp_pending *first = NULL;
        for (int i = 0; i < ARP_PENDING; i++) {
            struct arp_pending *q = &arp_pending[i];
            if (q->used && q->next_hop == ip && (!first || q->order < first->order))
                first = q;
        }
        if (!first)
            return;
        ether_fill(first->frame, mac, ETHERTYPE_IPV4);
        ether_xmit(first->frame, first->len);    /* a full ring counts the drop */
        first->used = false;
    }
}

static void arp_send(uint16_t op, const uint8_t *dst_mac, const uint8_t *tha, uint32_t tpa)
{
    uint8_t frame[ETH_FRAME_MIN];
    struct arp_pkt *a = (struct arp_pkt *)(frame + ETH_HLEN);

    ether_fill(frame, dst_mac, ETHERTYPE_ARP);
    a->htype = htons(ARP_HTYPE_ETH);
    a->ptype = htons(ETHERTYPE_IPV4);
    a->hlen = ETH_ALEN;
    a->plen = 4;
    a->op = htons(op);
    memcpy(a->sha, net_dev->mac, ETH_ALEN);
    put_be32(a->spa, net_ip_addr);
    memcpy(a->tha, tha, ETH_ALEN);
    put_be32(a->tpa, tpa);
    /* ether_xmit pads to ETH_FRAME_MIN, which is exactly this buffer. */
    ether_xmit(frame, ETH_HLEN + ARP_LEN);
}

static void arp_request(uint32_t ip)
{
    static const uint8_t zero[ETH_ALEN];
    arp_send(ARP_OP_REQUEST, eth_broadcast, zero, ip);
}

static bool arp_mac_ok(const uint8_t *mac)
{
    static const uint8_t zero[ETH_ALEN];
    return memcmp(mac, zero, ETH_ALEN) != 0 && memcmp(mac, net_dev->mac, ETH_ALEN) != 0;
}

static bool arp_mapping_ok(uint32_t ip, const uint8_t *mac)
{
    if (!arp_mac_ok(mac))
        return false;
    /* The gateway too, wherever the mask puts it (a /32 has no subnet). */
    bool near = (ip & net_netmask) == (net_ip_addr & net_netmask) ||
                (net_gateway != 0 && ip == net_gateway);
    return near && !ipv4_source_unanswerable(ip);
}

/* Record ip -> mac and release what waited for it. Lock held. */
static void arp_learn(uint32_t ip, const uint8_t *mac, uint64_t now)
{
    struct arp_entry *e = arp_find(ip, now);
    if (!e) {
        e = arp_alloc();
        e->ip = ip;
    }
    memcpy(e->mac, mac, ETH_ALEN);
    e->state = ARP_RESOLVED;
    e->when_ns = now;
    arp_flush(ip, mac);
}

void arp_input(const uint8_t *pkt, size_t len)
{
    if (len < ARP_LEN) {
        NET_COUNT(drop_truncated);
        return;
    }
    const struct arp_pkt *a = (const struct arp_pkt *)pkt;
    uint16_t op = ntohs(a->op);
    if (ntohs(a->htype) != ARP_HTYPE_ETH || ntohs(a->ptype) != ETHERTYPE_IPV4 ||
        a->hlen != ETH_ALEN || a->plen != 4 ||
        (op != ARP_OP_REQUEST && op != ARP_OP_REPLY) ||
        (a->sha[0] & 1)) {               /* a group MAC never owns an address */
        NET_COUNT(drop_arp);
        return;
    }
    uint32_t spa = get_be32(a->spa), tpa = get_be32(a->tpa);
    bool for_us = net_ip_addr != 0 && tpa == net_ip_addr;
    uint64_t now = time_ns();

    unsigned long f = spin_lock(&arp_lock);
    arp_expire_pending(now);
    bool mapping_ok = arp_mapping_ok(spa, a->sha);
    /* spa 0 is a probe (RFC 5227): answer it, learn nothing from it. */
    if (spa != 0 && (for_us || arp_find(spa, now))) {
        if (mapping_ok)
            arp_learn(spa, a->sha, now);
        else
            __atomic_fetch_add(&arp_refused, 1, __ATOMIC_RELAXED);
    }
    /* The reply goes to sha itself, so only to a mapping that can be true
     * (a probe's spa 0 aside: its sender has no address yet). */
    if (for_us && op == ARP_OP_REQUEST && (mapping_ok || (spa == 0 && arp_mac_ok(a->sha))))
        arp_send(ARP_OP_REPLY, a->sha, a->sha, spa);
    spin_unlock(&arp_lock, f);
    if (!for_us)
        NET_COUNT(rx_ignored);
}

bool arp_lookup(uint32_t ip, uint8_t mac[ETH_ALEN])
{
    if (ipv4_is_broadcast(ip)) {
        memcpy(mac, eth_broadcast, ETH_ALEN);
        return true;
    }
    unsigned long f = spin_lock(&arp_lock);
    struct arp_entry *e = arp_find(ip, time_ns());
    bool known = e && e->state == ARP_RESOLVED;
    if (known)
        memcpy(mac, e->mac, ETH_ALEN);
    spin_unlock(&arp_lock, f);
    return known;
}

int arp_output(uint8_t *frame, size_t len, uint32_t next_hop)
{
    if (ipv4_is_broadcast(next_hop)) {
        ether_fill(frame, eth_broadcast, ETHERTYPE_IPV4);
        return ether_xmit(frame, len);
    }

    uint64_t now = time_ns();
    unsigned long f = spin_lock(&arp_lock);
    arp_expire_pending(now);
    struct arp_entry *e = arp_find(next_hop, now);
    if (e && e->state == ARP_RESOLVED) {
        uint8_t mac[ETH_ALEN];
        memcpy(mac, e->mac, ETH_ALEN);
        spin_unlock(&arp_lock, f);
        ether_fill(frame, mac, ETHERTYPE_IPV4);
        return ether_xmit(frame, len);
    }
    if (!e) {
        e = arp_alloc();
        e->ip = next_hop;
        e->state = ARP_INCOMPLETE;
        arp_request(next_hop);
        e->when_ns = now;
    } else if (arp_aged(now, e->when_ns, ARP_RETRY_NS)) {
        arp_request(next_hop);
        e->when_ns = now;
    }

    struct arp_pending *q = NULL;
    for (int i = 0; i < ARP_PENDING && !q; i++)
        if (!arp_pending[i].used)
            q = &arp_pending[i];
    if (q) {
        q->used = true;
        q->len = (uint16_t)len;
        q->next_hop = next_hop;
        q->queued_ns = now;
        q->order = arp_order++;
        memcpy(q->frame, frame, len);
    }
    spin_unlock(&arp_lock, f);
    if (!q) {
        NET_COUNT(drop_arp);
        return NET_ERR_NOARP;
    }
    return NET_QUEUED;
}

void arp_print(struct printer *p)
{
    /* Copy under the lock, print after: printing may send (the UDP shell's
     * printer calls udp_send, which takes arp_lock). */
    struct arp_entry snap[ARP_ENTRIES];
    int parked = 0;
    uint64_t now = time_ns();
    unsigned long f = spin_lock(&arp_lock);
    arp_expire_pending(now);
    for (int i = 0; i < ARP_ENTRIES; i++)
        arp_find(arp_cache[i].ip, now);          /* ages out stale entries */
    memcpy(snap, arp_cache, sizeof snap);
    for (int i = 0; i < ARP_PENDING; i++)
        parked += arp_pending[i].used;
    spin_unlock(&arp_lock, f);

    int shown = 0;
    pr_puts(p, "ip               mac                state       age(s)\n");
    for (int i = 0; i < ARP_ENTRIES; i++) {
        const struct arp_entry *e = &snap[i];
        if (e->state == ARP_FREE)
            continue;
        char ip[16];
        const uint8_t *m = e->mac;
        pr_printf(p, "%-16s %02x:%02x:%02x:%02x:%02x:%02x  %-10s  %lu\n",
                  net_fmt_ip(ip, e->ip), m[0], m[1], m[2], m[3], m[4], m[5],
                  e->state == ARP_RESOLVED ? "resolved" : "incomplete",
                  (unsigned long)(now > e->when_ns ? (now - e->when_ns) / NS_PER_S : 0));
        shown++;
    }
    pr_printf(p, "%d entries (max %d), %d frames waiting for a reply (max %d)\n",
              shown, ARP_ENTRIES, parked, ARP_PENDING);
    pr_printf(p, "refused %lu mappings (off-subnet, broadcast or own address, zero or own MAC)\n",
              (unsigned long)__atomic_load_n(&arp_refused, __ATOMIC_RELAXED));
}
