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
 * Transmit: xmit copies the frame into a free slot under tx_lock, publishes
 * it and notifies. Completions are reclaimed from the used ring on the next
 * xmit (the TX queue asks for no interrupts at all). */
#include "drivers/virtio_net.h"
#include "drivers/virtio.h"
#include "hal/cpu.h"
#include "hal/mem.h"
#include "kernel/console.h"
#include "kernel/sched.h"
#include "lib/printf.h"
#include "kernel/spinlock.h"
#include "lib/string.h"
#include "mm/pmm.h"

#define VIO_NET_MAC        0      /* device config: 6 bytes */
#define VIRTIO_NET_F_MAC   (1u << 5)

#define VQ_DESC_F_NEXT  1
#define VQ_DESC_F_WRITE 2
#define VQ_AVAIL_F_NO_INTERRUPT 1
#define VQ_USED_F_NO_NOTIFY 1
#define VQ_ALIGN VIRTIO_QUEUE_ALIGN

#define VNET_HDR_LEGACY 10        /* legacy virtio_net_hdr without num_buffers */
#define VNET_HDR_MODERN 12        /* virtio 1.0: num_buffers always there */
#define SLOT_SIZE     2048        /* header + a 1514-byte frame, rounded */
#define MAX_SLOTS     128         /* per queue; 2 descriptors each */

#define Q_RX 0
#define Q_TX 1

struct vq_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags;
    uint16_t next;
};

struct vq_used_elem {
    uint32_t id;                  /* head descriptor of the chain */
    uint32_t len;                 /* bytes the device wrote (RX) */
};

/* One split virtqueue in the legacy layout: descriptor table, then the
 * available ring, then (at the next 4096 boundary) the used ring. */
struct vq {
    uint16_t index, size;         /* queue number; entries (a power of two) */
    uint16_t nslots;              /* frames in use: min(size / 2, MAX_SLOTS) */
    struct vq_desc *desc;
    volatile uint16_t *avail;     /* flags, idx, ring[size], used_event */
    volatile uint8_t *used;       /* flags, idx, ring[size] of used_elem */
    uint16_t avail_idx;           /* next avail idx we publish */
    uint16_t used_seen;           /* used entries consumed so far */
    uint8_t *buf;                 /* nslots * SLOT_SIZE */
};

static struct {
    struct virtio_transport *t;
    uint16_t hdr_len;             /* VNET_HDR_LEGACY or VNET_HDR_MODERN */
    struct vq rx, tx;
    struct netdev nd;
    struct waitq rx_wq;
    spinlock_t tx_lock;
    uint16_t tx_free[MAX_SLOTS];  /* stack of free TX slots, under tx_lock */
    bool tx_busy[MAX_SLOTS];      /* slot handed to the device, under tx_lock */
    unsigned tx_nfree;
    /* Statistics (relaxed atomics). */
    uint64_t irqs, rx_frames, tx_frames, tx_full, tx_waits;
} vn = { .rx_wq = WAITQ_INIT, .tx_lock = SPINLOCK_INIT };

static uint16_t vq_used_idx(const struct vq *q)
{
    return __atomic_load_n((const volatile uint16_t *)(q->used + 2), __ATOMIC_ACQUIRE);
}

static struct vq_used_elem vq_used_elem(const struct vq *q, uint16_t i)
{
    const volatile struct vq_used_elem *e =
        (const volatile struct vq_used_elem *)(q->used + 4) + (i & (q->size - 1));
    return (struct vq_used_elem){ e->id, e->len };
}

/* Put chain head `head` in the next avail slot; visible after vq_publish. */
static void vq_push(struct vq *q, uint16_t head)
{
    q->avail[2 + (q->avail_idx & (q->size - 1))] = head;
    q->avail_idx++;
}

/* Publish pushed entries: the ring entries must be visible before the idx
 * that covers them (release), and the idx before the notify (full fence:
 * the notify is a port or MMIO write the device acts on at once). */
static void vq_publish(struct vq *q)
{
    __atomic_store_n(&q->avail[1], q->avail_idx, __ATOMIC_RELEASE);
}

/* The device sets VQ_USED_F_NO_NOTIFY while it is working through the
 * ring anyway (QEMU: whenever the RX ring has buffers, and while it drains
 * TX). Skipping the notify write then matters: under emulation each one is
 * an exit to the device model, the costliest thing on the path. The fence
 * orders our avail idx store before the flag load: otherwise we could read
 * a stale "no notify" while the device, having looked at the old idx,
 * goes to sleep, and the new entries would wait for the next notify. */
static void vq_notify(struct vq *q)
{
    __sync_synchronize();
    if (__atomic_load_n((const volatile uint16_t *)q->used, __ATOMIC_ACQUIRE) & VQ_USED_F_NO_NOTIFY)
        return;
    vn.t->ops->notify(vn.t, q->index);
}

/* Unconditional, for bring-up. */
static void vq_kick(struct vq *q)
{
    __sync_synchronize();
    vn.t->ops->notify(vn.t, q->index);
}

static size_t align_up(size_t v, size_t a) { return (v + a - 1) & ~(a - 1); }

/* Size, allocate and register queue `index`; fill its fixed chains. */
static const char *vq_setup(struct vq *q, uint16_t index, bool device_writes)
{
    uint16_t size = vn.t->ops->queue_max(vn.t, index);
    if (size < 2 || (size & (size - 1)))
        return "queue size not a power of two >= 2";
    size_t avail_end = 16u * size + 2 * (3u + size);
    size_t used_off = align_up(avail_end, VQ_ALIGN);
    size_t total = used_off + align_up(2 * 3u + 8u * size, VQ_ALIGN);
    uint8_t *mem = page_alloc(total / PAGE_SIZE);
    q->index = index;
    q->size = size;
    q->nslots = size / 2 < MAX_SLOTS ? size / 2 : MAX_SLOTS;
    q->buf = page_alloc(align_up((size_t)q->nslots * SLOT_SIZE, PAGE_SIZE) / PAGE_SIZE);
    if (!mem || !q->buf)
        return "out of memory for the queues";
    q->desc = (struct vq_desc *)mem;
    q->avail = (volatile uint16_t *)(mem + 16u * size);
    q->used = mem + used_off;
    q->avail_idx = q->used_seen = 0;

    uint16_t wflag = device_writes ? VQ_DESC_F_WRITE : 0;
    for (uint16_t s = 0; s < q->nslots; s++) {
        uint64_t b = va_to_pa(q->buf + (size_t)s * SLOT_SIZE);
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
    uint64_t pa = va_to_pa(mem);
    return vn.t->ops->queue_setup(vn.t, index, size, pa, pa + 16u * size, pa + used_off);
}

/* ---- transmit ---- */

/* Take back the slots the device has finished with. Under tx_lock. */
static void tx_reclaim(void)
{
    uint16_t idx = vq_used_idx(&vn.tx);
    while (vn.tx.used_seen != idx) {
        struct vq_used_elem e = vq_used_elem(&vn.tx, vn.tx.used_seen++);
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

/* How long xmit waits for a slot when the ring is full before dropping:
 * long enough for the device to drain a burst, short enough that a caller
 * holding the ARP lock with interrupts off is not stalled. */
#define TX_WAIT_US 200

static int vn_xmit(struct netdev *dev, const void *frame, size_t len)
{
    if (len > (size_t)(SLOT_SIZE - vn.hdr_len))
        return -1;
    unsigned long f = spin_lock(&vn.tx_lock);
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
            spin_unlock(&vn.tx_lock, f);
            __atomic_fetch_add(&vn.tx_full, 1, __ATOMIC_RELAXED);
            return -1;
        }
    }
    uint16_t slot = vn.tx_free[--vn.tx_nfree];
    vn.tx_busy[slot] = true;
    memcpy(vn.tx.buf + (size_t)slot * SLOT_SIZE + vn.hdr_len, frame, len);
    vn.tx.desc[2 * slot + 1].len = (uint32_t)len;
    vq_push(&vn.tx, (uint16_t)(2 * slot));
    vq_publish(&vn.tx);
    vq_notify(&vn.tx);
    spin_unlock(&vn.tx_lock, f);
    __atomic_fetch_add(&vn.tx_frames, 1, __ATOMIC_RELAXED);
    return 0;
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
    return vq_used_idx(&vn.rx) != vn.rx.used_seen;
}

static void rx_set_interrupts(bool on)
{
    vn.rx.avail[0] = on ? 0 : VQ_AVAIL_F_NO_INTERRUPT;
    __sync_synchronize();
}

/* Hand every used RX buffer to the stack and repost it. Only this task
 * touches the RX ring after start, so no lock: and none may be held here,
 * since net_rx may transmit (ARP replies, echo replies). */
__attribute__((noinline)) static void rx_drain(void)   /* its own frame in profiles */
{
    uint16_t idx = vq_used_idx(&vn.rx);
    unsigned n = 0;
    while (vn.rx.used_seen != idx) {
        struct vq_used_elem e = vq_used_elem(&vn.rx, vn.rx.used_seen++);
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
        vq_push(&vn.rx, (uint16_t)(2 * slot));
        vq_publish(&vn.rx);           /* the buffer is back at once */
        if (++n % 32 == 0)
            vq_notify(&vn.rx);        /* a device starved of buffers resumes */
        if (vn.rx.used_seen == idx)
            idx = vq_used_idx(&vn.rx);
    }
    /* One kick per batch even if the device said it needs none: QEMU keeps
     * frames that came while the ring was empty in its own queue and
     * flushes them on a kick, in the kicking vCPU's thread; without it they
     * wait for its main loop, which a flood from the host keeps busy
     * (measured: 1024-byte receive fell from ~75k to ~8k datagrams/s). */
    if (n)
        vq_kick(&vn.rx);
}

static void vn_rx_task(void *arg)
{
    for (;;) {
        waitq_wait(&vn.rx_wq, rx_pending, NULL);
        /* While draining, frames arriving need no interrupt: we will see
         * them. Interrupts back on, then one more look, or a frame that
         * came in between would wait for the next one. */
        for (;;) {
            rx_set_interrupts(false);
            rx_drain();
            rx_set_interrupts(true);
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
    uint64_t want = offered & (VIRTIO_NET_F_MAC | VIRTIO_F_VERSION_1);
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

    const char *err = vq_setup(&vn.rx, Q_RX, true);
    if (!err)
        err = vq_setup(&vn.tx, Q_TX, false);
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
    vn.nd.priv = &vn;

    for (uint16_t s = 0; s < vn.tx.nslots; s++)
        vn.tx_free[vn.tx_nfree++] = s;
    /* TX completions are reclaimed when sending; no interrupt wanted. */
    vn.tx.avail[0] = VQ_AVAIL_F_NO_INTERRUPT;
    for (uint16_t s = 0; s < vn.rx.nslots; s++)
        vq_push(&vn.rx, (uint16_t)(2 * s));
    vq_publish(&vn.rx);
    return &vn.nd;
}

int virtio_net_start(void)
{
    if (!task_spawn("virtio-rx", vn_rx_task, NULL, TASK_ANY_CPU, 0)) {
        vn_fail("no memory for the receive task");
        return -1;
    }
    if (vn.t->ops->irq_attach(vn.t, vn_irq, NULL) < 0) {
        vn_fail("no interrupt vector left");
        return -1;
    }
    uint8_t status = VIRTIO_S_ACK | VIRTIO_S_DRIVER | VIRTIO_S_DRIVER_OK;
    if (vn.hdr_len == VNET_HDR_MODERN)
        status |= VIRTIO_S_FEATURES_OK;
    vn.t->ops->set_status(vn.t, status);
    vq_kick(&vn.rx);                                   /* buffers are there */
    kprintf("virtio-net: %s, rx %u tx %u buffers (queues %u/%u)\n",
            vn.t->where, vn.rx.nslots, vn.tx.nslots, vn.rx.size, vn.tx.size);
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
    pr_printf(p, "virtio-net %s: rx %u/%u buffers, tx %u/%u slots\n",
              vn.t->where, vn.rx.nslots, vn.rx.size, vn.tx.nslots, vn.tx.size);
    pr_printf(p, "interrupts %lu, rx frames %lu, tx frames %lu, tx ring full: waited %lu, dropped %lu\n",
              stat(&vn.irqs), stat(&vn.rx_frames), stat(&vn.tx_frames),
              stat(&vn.tx_waits), stat(&vn.tx_full));
    return 0;
}
