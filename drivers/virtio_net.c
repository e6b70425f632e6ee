/* drivers/virtio_net.c: the virtio network device, over any transport
 * (drivers/virtio.h): the legacy PCI I/O ports on x86 (QEMU's
 * transitional virtio-net-pci 1af4:1000), virtio-mmio on arm64's QEMU
 * virt (legacy version 1 or modern version 2).
 *
 * Two split virtqueues: 0 receive, 1 transmit. Every frame uses a chain of
 * two descriptors, the virtio_net_hdr and then the frame: without
 * VIRTIO_F_ANY_LAYOUT a legacy device may insist on the header standing
 * alone, and the chains are fixed at setup (slot i = descriptors 2i, 2i+1,
 * both pointing into slot i's 2 KiB buffer), so a frame costs no
 * descriptor bookkeeping. The header is 10 bytes for a legacy device and
 * 12 for a modern one (VIRTIO_F_VERSION_1 adds num_buffers even without
 * MRG_RXBUF). MRG_RXBUF is not negotiated, so each receive buffer must
 * hold a whole frame: 12 + 1514 bytes fit in a slot.
 *
 * Receive: the interrupt handler only reads the ISR register (which acks
 * the interrupt and drops the level-triggered line) and wakes the receive
 * task; the task hands frames to net_rx and reposts each buffer as soon as
 * the stack is done with it. The stack takes spinlocks and UDP handlers do
 * real work, none of which belongs in an interrupt.
 *
 * Transmit: the stack reserves a free slot (tx_reserve) and builds its
 * frame there, in place; tx_commit writes the slot's virtio_net_hdr,
 * publishes it and notifies. xmit, for frames built elsewhere, is a
 * reserve, a copy and a commit. Completions are reclaimed from the used
 * ring at the next reserve (the TX queue asks for no interrupts at all).
 *
 * Checksum offload: VIRTIO_NET_F_CSUM is negotiated where the device
 * offers it (QEMU does only when its backend takes the header along, a
 * tap; user networking and socket netdevs do not), and a commit that asks
 * for a checksum sets VIRTIO_NET_HDR_F_NEEDS_CSUM with csum_start and
 * csum_offset (virtio 1.x 5.1.6.2): the device sums from csum_start to
 * the end of the frame and stores the result at csum_start + csum_offset. */
#include "drivers/virtio_net.h"
#include "drivers/virtio.h"
#include "drivers/virtqueue.h"
#include "hal/cpu.h"
#include "hal/mem.h"
#include "kernel/console.h"
#include "kernel/sched.h"
#include "lib/printf.h"
#include "kernel/spinlock.h"
#include "lib/string.h"
#include "mm/pmm.h"

#define VIO_NET_MAC        0      /* device config: 6 bytes */
#define VIRTIO_NET_F_CSUM  (1u << 0)  /* device completes partial checksums */
#define VIRTIO_NET_F_MAC   (1u << 5)

#define VNET_HDR_LEGACY 10        /* legacy virtio_net_hdr without num_buffers */
#define VNET_HDR_MODERN 12        /* virtio 1.0: num_buffers always there */

/* virtio 1.x 5.1.6. Little-endian, as both the legacy device (the guest's
 * own order, and Sonde's CPUs are little-endian) and a modern one read it. */
struct virtio_net_hdr {
    uint8_t flags;
    uint8_t gso_type;
    uint16_t hdr_len;
    uint16_t gso_size;
    uint16_t csum_start;
    uint16_t csum_offset;
    uint16_t num_buffers;         /* modern only: 0 on transmit */
} __attribute__((packed));
_Static_assert(sizeof(struct virtio_net_hdr) == VNET_HDR_MODERN,
               "virtio_net_hdr is 12 bytes with num_buffers, 10 without");
#define VIRTIO_NET_HDR_F_NEEDS_CSUM 1
#define VIRTIO_NET_HDR_GSO_NONE     0
#define SLOT_SIZE     2048        /* header + a 1514-byte frame, rounded */
#define MAX_SLOTS     128         /* per queue; 2 descriptors each */

#define Q_RX 0
#define Q_TX 1

/* A queue and the frame buffers its fixed chains point into. */
struct vnq {
    struct vq q;
    uint16_t nslots;              /* frames in use: min(size / 2, MAX_SLOTS) */
    uint8_t *buf;                 /* nslots * SLOT_SIZE */
};

static struct {
    struct virtio_transport *t;
    uint16_t hdr_len;             /* VNET_HDR_LEGACY or VNET_HDR_MODERN */
    bool csum;                    /* VIRTIO_NET_F_CSUM negotiated */
    struct vnq rx, tx;
    struct netdev nd;
    struct waitq rx_wq;
    spinlock_t tx_lock;
    uint16_t tx_free[MAX_SLOTS];  /* stack of free TX slots, under tx_lock */
    bool tx_busy[MAX_SLOTS];      /* slot handed to the device, under tx_lock */
    bool tx_held[MAX_SLOTS];      /* slot reserved, its frame being built, under tx_lock */
    unsigned tx_nfree;
    /* Statistics (relaxed atomics). */
    uint64_t irqs, rx_frames, tx_frames, tx_copied, tx_full, tx_waits;
} vn = { .rx_wq = WAITQ_INIT("virtio-rx"), .tx_lock = SPINLOCK_INIT("virtio-tx") };

static size_t align_up(size_t v, size_t a) { return (v + a - 1) & ~(a - 1); }

/* Set up queue `index` and its buffers; fill its fixed chains. */
static const char *vnq_setup(struct vnq *n, uint16_t index, bool device_writes)
{
    struct vq *q = &n->q;
    const char *err = vq_setup(q, vn.t, index);
    if (err)
        return err;
    n->nslots = q->size / 2 < MAX_SLOTS ? q->size / 2 : MAX_SLOTS;
    n->buf = page_alloc(align_up((size_t)n->nslots * SLOT_SIZE, PAGE_SIZE) / PAGE_SIZE);
    if (!n->buf)
        return "out of memory for the buffers";
    uint16_t wflag = device_writes ? VQ_DESC_F_WRITE : 0;
    for (uint16_t s = 0; s < n->nslots; s++) {
        uint64_t b = va_to_pa(n->buf + (size_t)s * SLOT_SIZE);
        struct vq_desc *h = &q->desc[2 * s], *d = &q->desc[2 * s + 1];
        h->addr = b;
        h->len = vn.hdr_len;
        h->flags = VQ_DESC_F_NEXT | wflag;
        h->next = (uint16_t)(2 * s + 1);
        d->addr = b + vn.hdr_len;
        d->len = SLOT_SIZE - vn.hdr_len;     /* TX: set per frame */
        d->flags = wflag;
        d->next = 0;
    }
    return NULL;
}

/* ---- transmit ---- */

/* Take back the slots the device has finished with. Under tx_lock. */
static void tx_reclaim(void)
{
    uint16_t idx = vq_used_idx(&vn.tx.q);
    while (vn.tx.q.used_seen != idx) {
        struct vq_used_elem e = vq_used_elem(&vn.tx.q, vn.tx.q.used_seen++);
        uint32_t slot = e.id / 2;
        /* A device returning nonsense (an id that heads no chain, a slot
         * it already returned) must not put a slot on the free stack
         * twice: two frames would then share one buffer. */
        if ((e.id & 1) || slot >= vn.tx.nslots || !vn.tx_busy[slot])
            continue;
        vn.tx_busy[slot] = false;
        vn.tx_free[vn.tx_nfree++] = (uint16_t)slot;
    }
}

/* How long a reserve waits for a slot when the ring is full before giving
 * up: long enough for the device to drain a burst, short enough that a
 * caller holding the ARP lock with interrupts off is not stalled. */
#define TX_WAIT_US 200

/* A free slot, now held for its frame, or -1 (full, after TX_WAIT_US).
 * Under tx_lock. */
static int tx_take(void)
{
    tx_reclaim();
    if (vn.tx_nfree == 0) {
        /* Full: the device may not have looked at the ring since our last
         * notify; wait briefly for it to hand slots back. */
        __atomic_fetch_add(&vn.tx_waits, 1, __ATOMIC_RELAXED);
        uint64_t end = cycles_now() + TX_WAIT_US * cycles_per_us();
        while (vn.tx_nfree == 0 && cycles_now() < end) {
            cpu_relax();
            tx_reclaim();
        }
        if (vn.tx_nfree == 0) {
            __atomic_fetch_add(&vn.tx_full, 1, __ATOMIC_RELAXED);
            return -1;
        }
    }
    uint16_t slot = vn.tx_free[--vn.tx_nfree];
    vn.tx_held[slot] = true;
    return slot;
}

static uint8_t *tx_frame(unsigned slot)
{
    return vn.tx.buf + (size_t)slot * SLOT_SIZE + vn.hdr_len;
}

/* The held slot whose frame starts at frame, or -1: a pointer that is not
 * one tx_reserve gave, or a slot not held (committed or cancelled
 * already), must not reach the ring. Under tx_lock. */
static int tx_slot_of(const void *frame)
{
    uintptr_t off = (uintptr_t)frame - (uintptr_t)vn.tx.buf;
    if ((uintptr_t)frame < (uintptr_t)vn.tx.buf || off % SLOT_SIZE != vn.hdr_len)
        return -1;
    size_t slot = off / SLOT_SIZE;
    return slot < vn.tx.nslots && vn.tx_held[slot] ? (int)slot : -1;
}

static void *vn_tx_reserve(struct netdev *dev)
{
    unsigned long f = spin_lock(&vn.tx_lock);
    int slot = tx_take();
    spin_unlock(&vn.tx_lock, f);
    return slot < 0 ? NULL : tx_frame((unsigned)slot);
}

static void vn_tx_cancel(struct netdev *dev, void *frame)
{
    unsigned long f = spin_lock(&vn.tx_lock);
    int slot = tx_slot_of(frame);
    if (slot >= 0) {
        vn.tx_held[slot] = false;
        vn.tx_free[vn.tx_nfree++] = (uint16_t)slot;
    }
    spin_unlock(&vn.tx_lock, f);
}

/* The slot's virtio_net_hdr (virtio 1.x 5.1.6): flags, gso_type, hdr_len,
 * gso_size, csum_start, csum_offset, and num_buffers where modern (0 on
 * transmit). Written whole every time: the slot's last frame may have
 * asked for a checksum and this one not. */
static void tx_hdr(unsigned slot, uint16_t csum_start, uint16_t csum_off)
{
    struct virtio_net_hdr h = { .gso_type = VIRTIO_NET_HDR_GSO_NONE };
    if (csum_start && vn.csum) {
        h.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
        h.csum_start = csum_start;
        h.csum_offset = csum_off;
    }
    memcpy(vn.tx.buf + (size_t)slot * SLOT_SIZE, &h, vn.hdr_len);
}

static int vn_tx_commit(struct netdev *dev, void *frame, size_t len,
                        uint16_t csum_start, uint16_t csum_off)
{
    unsigned long f = spin_lock(&vn.tx_lock);
    int slot = tx_slot_of(frame);
    if (slot < 0) {
        spin_unlock(&vn.tx_lock, f);
        return -1;
    }
    vn.tx_held[slot] = false;
    if (len < 1 || len > (size_t)(SLOT_SIZE - vn.hdr_len) ||
        (csum_start && (!vn.csum || (size_t)csum_start + csum_off + 2 > len))) {
        vn.tx_free[vn.tx_nfree++] = (uint16_t)slot;
        spin_unlock(&vn.tx_lock, f);
        return -1;
    }
    tx_hdr((unsigned)slot, csum_start, csum_off);
    vn.tx_busy[slot] = true;
    vn.tx.q.desc[2 * slot + 1].len = (uint32_t)len;
    vq_push(&vn.tx.q, (uint16_t)(2 * slot));
    vq_publish(&vn.tx.q);
    vq_notify(&vn.tx.q);
    spin_unlock(&vn.tx_lock, f);
    __atomic_fetch_add(&vn.tx_frames, 1, __ATOMIC_RELAXED);
    return 0;
}

static int vn_xmit(struct netdev *dev, const void *frame, size_t len)
{
    if (len > (size_t)(SLOT_SIZE - vn.hdr_len))
        return -1;
    void *b = vn_tx_reserve(dev);
    if (!b)
        return -1;
    memcpy(b, frame, len);
    __atomic_fetch_add(&vn.tx_copied, 1, __ATOMIC_RELAXED);
    return vn_tx_commit(dev, b, len, 0, 0);
}

/* ---- receive ---- */

/* Interrupt context: one register read (and, on mmio, the ack write), one
 * wake. Never touches the rings. */
static void vn_irq(void *arg)
{
    uint8_t isr = vn.t->ops->isr_ack(vn.t);
    if (!(isr & 1))                   /* not ours (a shared line) or config change */
        return;
    __atomic_fetch_add(&vn.irqs, 1, __ATOMIC_RELAXED);
    waitq_wake_all(&vn.rx_wq);
}

static bool rx_pending(void *arg)
{
    return vq_used_idx(&vn.rx.q) != vn.rx.q.used_seen;
}

/* Hand every used RX buffer to the stack and repost it. Only this task
 * touches the RX ring after start, so no lock: and none may be held here,
 * since net_rx may transmit (ARP replies, echo replies). */
__attribute__((noinline)) static void rx_drain(void)   /* its own frame in profiles */
{
    uint16_t idx = vq_used_idx(&vn.rx.q);
    unsigned n = 0;
    while (vn.rx.q.used_seen != idx) {
        struct vq_used_elem e = vq_used_elem(&vn.rx.q, vn.rx.q.used_seen++);
        uint32_t slot = e.id / 2;
        if (slot >= vn.rx.nslots || (e.id & 1))
            continue;                 /* nonsense from the device: skip it */
        uint8_t *b = vn.rx.buf + (size_t)slot * SLOT_SIZE;
        if (e.len > vn.hdr_len && e.len <= SLOT_SIZE) {
            __atomic_fetch_add(&vn.rx_frames, 1, __ATOMIC_RELAXED);
            net_rx(b + vn.hdr_len, e.len - vn.hdr_len);
        } else {
            NET_COUNT(drop_truncated);
        }
        vq_push(&vn.rx.q, (uint16_t)(2 * slot));
        vq_publish(&vn.rx.q);         /* the buffer is back at once */
        if (++n % 32 == 0)
            vq_notify(&vn.rx.q);      /* a device starved of buffers resumes */
        if (vn.rx.q.used_seen == idx)
            idx = vq_used_idx(&vn.rx.q);
    }
    /* One kick per batch even if the device said it needs none: QEMU keeps
     * frames that came while the ring was empty in its own queue and
     * flushes them on a kick, in the kicking vCPU's thread; without it they
     * wait for its main loop, which a flood from the host keeps busy
     * (measured: 1024-byte receive fell from ~75k to ~8k datagrams/s). */
    if (n)
        vq_kick(&vn.rx.q);
}

static void vn_rx_task(void *arg)
{
    for (;;) {
        waitq_wait(&vn.rx_wq, rx_pending, NULL);
        /* While draining, frames arriving need no interrupt: we will see
         * them. Interrupts back on, then one more look, or a frame that
         * came in between would wait for the next one. */
        for (;;) {
            vq_set_interrupts(&vn.rx.q, false);
            rx_drain();
            vq_set_interrupts(&vn.rx.q, true);
            if (!rx_pending(NULL))
                break;
        }
        /* A long burst must not starve the other tasks on this CPU. */
        yield();
    }
}

/* ---- bring-up ---- */

static struct netdev *vn_fail(const char *why)
{
    vn.t->ops->set_status(vn.t, VIRTIO_S_FAILED);
    kprintf("virtio-net: %s: device not used\n", why);
    return NULL;
}

struct netdev *virtio_net_probe(struct virtio_transport *t)
{
    if (!t)
        return NULL;
    vn.t = t;
    const struct virtio_ops *o = t->ops;
    o->set_status(t, 0);                               /* reset */
    o->set_status(t, VIRTIO_S_ACK);
    o->set_status(t, VIRTIO_S_ACK | VIRTIO_S_DRIVER);
    uint64_t offered = o->get_features(t);
    uint64_t want = offered & (VIRTIO_NET_F_MAC | VIRTIO_NET_F_CSUM | VIRTIO_F_VERSION_1);
    if (t->modern && !(want & VIRTIO_F_VERSION_1))
        return vn_fail("modern transport, but the device does not offer VERSION_1");
    o->set_features(t, want);
    uint8_t status = VIRTIO_S_ACK | VIRTIO_S_DRIVER;
    if (want & VIRTIO_F_VERSION_1) {
        /* A modern device checks the subset now and may refuse it. */
        status |= VIRTIO_S_FEATURES_OK;
        o->set_status(t, status);
        if (!(o->get_status(t) & VIRTIO_S_FEATURES_OK))
            return vn_fail("the device refused our features (FEATURES_OK not kept)");
    }
    vn.hdr_len = (want & VIRTIO_F_VERSION_1) ? VNET_HDR_MODERN : VNET_HDR_LEGACY;
    vn.csum = (want & VIRTIO_NET_F_CSUM) != 0;

    const char *err = vnq_setup(&vn.rx, Q_RX, true);
    if (!err)
        err = vnq_setup(&vn.tx, Q_TX, false);
    if (err)
        return vn_fail(err);

    if (want & VIRTIO_NET_F_MAC) {
        for (unsigned i = 0; i < 6; i++)
            vn.nd.mac[i] = o->config_read8(t, VIO_NET_MAC + i);
    } else {
        /* Locally administered, unicast: ours to pick. */
        static const uint8_t fallback[6] = { 0x52, 0x54, 0x00, 0x5e, 0x4e, 0x01 };
        memcpy(vn.nd.mac, fallback, 6);
    }
    vn.nd.xmit = vn_xmit;
    vn.nd.tx_reserve = vn_tx_reserve;
    vn.nd.tx_commit = vn_tx_commit;
    vn.nd.tx_cancel = vn_tx_cancel;
    vn.nd.tx_csum = vn.csum;
    vn.nd.priv = &vn;

    /* From empty: a second probe (the header allows one) must not stack
     * the slots on top of the first's, or two frames would share one. */
    vn.tx_nfree = 0;
    memset(vn.tx_busy, 0, sizeof vn.tx_busy);
    memset(vn.tx_held, 0, sizeof vn.tx_held);
    for (uint16_t s = 0; s < vn.tx.nslots; s++)
        vn.tx_free[vn.tx_nfree++] = s;
    /* TX completions are reclaimed when sending; no interrupt wanted. */
    vq_set_interrupts(&vn.tx.q, false);
    for (uint16_t s = 0; s < vn.rx.nslots; s++)
        vq_push(&vn.rx.q, (uint16_t)(2 * s));
    vq_publish(&vn.rx.q);
    return &vn.nd;
}

int virtio_net_start(void)
{
    if (!task_spawn("virtio-rx", vn_rx_task, NULL, TASK_ANY_CPU, 0)) {
        vn_fail("no memory for the receive task");
        return -1;
    }
    if (vn.t->ops->irq_attach(vn.t, "virtio-net", vn_irq, NULL) < 0) {
        vn_fail("no interrupt vector left");
        return -1;
    }
    uint8_t status = VIRTIO_S_ACK | VIRTIO_S_DRIVER | VIRTIO_S_DRIVER_OK;
    if (vn.hdr_len == VNET_HDR_MODERN)
        status |= VIRTIO_S_FEATURES_OK;
    vn.t->ops->set_status(vn.t, status);
    vq_kick(&vn.rx.q);                                 /* buffers are there */
    kprintf("virtio-net: %s, rx %u tx %u buffers (queues %u/%u), checksum offload %s\n",
            vn.t->where, vn.rx.nslots, vn.tx.nslots, vn.rx.q.size, vn.tx.q.size,
            vn.csum ? "on" : "off (not offered)");
    return 0;
}

static unsigned long stat(const uint64_t *v) { return (unsigned long)__atomic_load_n(v, __ATOMIC_RELAXED); }

/* `vnet`: the driver's queues and counters; 1 with no device in use. */
int virtio_net_print(struct printer *p)
{
    if (!vn.t || !vn.nd.xmit) {
        pr_puts(p, "vnet: no virtio-net device in use\n");
        return 1;
    }
    pr_printf(p, "virtio-net %s: rx %u/%u buffers, tx %u/%u slots, checksum offload %s\n",
              vn.t->where, vn.rx.nslots, vn.rx.q.size, vn.tx.nslots, vn.tx.q.size,
              vn.csum ? "on" : "off");
    pr_printf(p, "interrupts %lu, rx frames %lu, tx frames %lu (%lu built in place, %lu copied), "
              "tx ring full: waited %lu, dropped %lu\n",
              stat(&vn.irqs), stat(&vn.rx_frames), stat(&vn.tx_frames),
              stat(&vn.tx_frames) - stat(&vn.tx_copied), stat(&vn.tx_copied),
              stat(&vn.tx_waits), stat(&vn.tx_full));
    return 0;
}
