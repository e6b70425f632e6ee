// LINK: drivers/virtio_net.c drivers/virtqueue.c lib/printf.c
/* tests/unit/test_virtio_net.c: drivers/virtio_net.c's transmit half
 * against a fake transport whose notify plays the device: it reads each
 * newly available chain of the transmit queue (the virtio_net_hdr, then
 * the frame), keeps both, and returns the chain on the used ring. What
 * is checked: VIRTIO_NET_F_CSUM negotiated only where offered, and the
 * header each frame carries (VIRTIO_NET_HDR_F_NEEDS_CSUM, csum_start,
 * csum_offset, or all zero); frames built in place (tx_reserve,
 * tx_commit, tx_cancel) and copied (xmit); a buffer that was not reserved,
 * or is committed twice, never reaches the ring. Physical addresses are
 * host pointers (va_to_pa is the identity). */
#include "test.h"
#include "fake_hal.h"
#include <stdarg.h>
#include <stdlib.h>
#include "drivers/virtio.h"
#include "drivers/virtio_net.h"
#include "drivers/virtqueue.h"
#include "hal/mem.h"
#include "kernel/sched.h"
#include "kernel/task.h"
#include "mm/pmm.h"

/* ---- what the driver calls that is not under test ---- */

#define FAKE_KLOG_LEN 1024
#include "fake_klog.h"
struct net_stats net_stats_live;
void net_rx(const void *frame, size_t len) {}
void waitq_wait(struct waitq *wq, bool (*cond)(void *), void *arg) {}
void waitq_wake_all(struct waitq *wq) {}
void yield(void) {}
struct task *task_spawn(const char *name, task_fn fn, void *arg, int cpu, unsigned flags)
{
    return NULL;
}

/* Pages stay reachable from here, so the leak check sees none lost. */
static void *pages[16];
static int npages;
void *page_alloc(size_t n)
{
    if (npages == 16)
        return NULL;
    void *p = aligned_alloc(PAGE_SIZE, n * PAGE_SIZE);
    memset(p, 0, n * PAGE_SIZE);
    return pages[npages++] = p;
}
uint64_t va_to_pa(const void *va) { return (uint64_t)(uintptr_t)va; }
void *pa_to_va(uint64_t pa) { return (void *)(uintptr_t)pa; }

/* ---- the fake device ---- */

#define VNET_F_CSUM (1ull << 0)
#define VNET_F_MAC  (1ull << 5)

static struct {
    struct virtio_transport t;
    uint8_t status;
    uint64_t offered, accepted;
    uint64_t desc[2], avail[2], used[2];
    uint16_t qsize[2], avail_seen, used_idx;
    unsigned sent;
    uint8_t hdr[12];               /* the last frame's header and frame */
    uint8_t frame[2048];
    uint32_t hdr_len, len;
} d;

static uint8_t fd_get_status(struct virtio_transport *t) { return d.status; }
static void fd_set_status(struct virtio_transport *t, uint8_t s) { d.status = s; }
static uint64_t fd_get_features(struct virtio_transport *t) { return d.offered; }
static void fd_set_features(struct virtio_transport *t, uint64_t f) { d.accepted = f; }
static uint8_t fd_config_read8(struct virtio_transport *t, unsigned off) { return (uint8_t)(0x10 + off); }
static uint16_t fd_queue_max(struct virtio_transport *t, uint16_t q) { return q < 2 ? 8 : 0; }
static const char *fd_queue_setup(struct virtio_transport *t, uint16_t q, uint16_t size,
                                  uint64_t desc, uint64_t avail, uint64_t used)
{
    d.qsize[q] = size;
    d.desc[q] = desc;
    d.avail[q] = avail;
    d.used[q] = used;
    return NULL;
}

/* The transmit queue's device: each chain is two descriptors, the
 * header and the frame, both read by the device. */
static void fd_notify(struct virtio_transport *t, uint16_t q)
{
    if (q != 1)
        return;
    volatile uint16_t *avail = pa_to_va(d.avail[1]);
    volatile uint8_t *used = pa_to_va(d.used[1]);
    struct vq_desc *desc = pa_to_va(d.desc[1]);
    while (d.avail_seen != avail[1]) {
        uint16_t head = avail[2 + (d.avail_seen++ & (d.qsize[1] - 1))];
        struct vq_desc *h = &desc[head], *f = &desc[h->next];
        CHECK((h->flags & VQ_DESC_F_NEXT) && !(h->flags & VQ_DESC_F_WRITE));
        CHECK(!(f->flags & VQ_DESC_F_WRITE));
        d.hdr_len = h->len;
        memcpy(d.hdr, pa_to_va(h->addr), h->len);
        d.len = f->len;
        memcpy(d.frame, pa_to_va(f->addr), f->len);
        d.sent++;
        struct vq_used_elem *e = (struct vq_used_elem *)(used + 4) + (d.used_idx & (d.qsize[1] - 1));
        e->id = head;
        e->len = 0;
        d.used_idx++;
        __atomic_store_n((volatile uint16_t *)(used + 2), d.used_idx, __ATOMIC_RELEASE);
    }
}
static uint8_t fd_isr_ack(struct virtio_transport *t) { return 0; }
static int fd_irq_attach(struct virtio_transport *t, const char *name, void (*fn)(void *),
                         void *arg)
{
    return 0;
}

static const struct virtio_ops fd_ops = {
    fd_get_status, fd_set_status, fd_get_features, fd_set_features, fd_config_read8,
    fd_queue_max, fd_queue_setup, fd_notify, fd_isr_ack, fd_irq_attach,
};

static struct netdev *probe(bool modern, bool csum)
{
    memset(&d, 0, sizeof d);
    d.t.ops = &fd_ops;
    d.t.modern = modern;
    strcpy(d.t.where, "fake");
    d.offered = VNET_F_MAC | (csum ? VNET_F_CSUM : 0) | (modern ? VIRTIO_F_VERSION_1 : 0);
    klog[0] = 0;
    fake_cycles_step = 1000;
    return virtio_net_probe(&d.t);
}

static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* A frame of n bytes, byte i = seed + i. */
static void fill(uint8_t *p, size_t n, uint8_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(seed + i);
}

static bool same(const uint8_t *p, size_t n, uint8_t seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (uint8_t)(seed + i))
            return false;
    return true;
}

/* Offered, CSUM is taken and the device says so; a commit asking for a
 * checksum carries NEEDS_CSUM with its start and offset, one that does
 * not carries a header of zeros (over the slot's stale bytes and the
 * last frame's flags). Legacy (10-byte header) and modern (12). */
TEST(csum_negotiated_and_asked_in_the_header)
{
    for (int modern = 0; modern < 2; modern++) {
        struct netdev *nd = probe(modern, true);
        CHECK(nd != NULL);
        CHECK(d.accepted & VNET_F_CSUM);
        CHECK(nd->tx_csum);
        uint8_t *f = nd->tx_reserve(nd);
        CHECK(f != NULL);
        fill(f, 1442, 3);
        CHECK_EQ(nd->tx_commit(nd, f, 1442, 34, 6), 0);
        CHECK_EQ(d.sent, 1);
        CHECK_EQ(d.hdr_len, modern ? 12 : 10);
        CHECK_EQ(d.hdr[0], 1);                      /* VIRTIO_NET_HDR_F_NEEDS_CSUM */
        CHECK_EQ(d.hdr[1], 0);                      /* GSO none */
        CHECK_EQ(le16(d.hdr + 2), 0);
        CHECK_EQ(le16(d.hdr + 4), 0);
        CHECK_EQ(le16(d.hdr + 6), 34);
        CHECK_EQ(le16(d.hdr + 8), 6);
        if (modern)
            CHECK_EQ(le16(d.hdr + 10), 0);          /* num_buffers */
        CHECK_EQ(d.len, 1442);
        CHECK(same(d.frame, 1442, 3));
        /* Every slot in turn, no checksum, over stale header bytes. */
        for (int k = 0; k < 8; k++) {
            f = nd->tx_reserve(nd);
            CHECK(f != NULL);
            if (!f)
                break;
            memset(f - (modern ? 12 : 10), 0xa5, modern ? 12 : 10);
            fill(f, 60, 9);
            CHECK_EQ(nd->tx_commit(nd, f, 60, 0, 0), 0);
            for (unsigned i = 0; i < d.hdr_len; i++)
                CHECK_EQ(d.hdr[i], 0);
        }
    }
}

/* Not offered (QEMU's user network and socket backends): not taken, the
 * device does not claim it, and a commit that asks anyway is refused
 * rather than sent with a half-made checksum. */
TEST(csum_not_offered_not_taken)
{
    struct netdev *nd = probe(false, false);
    CHECK(nd != NULL);
    CHECK(!(d.accepted & VNET_F_CSUM));
    CHECK(!nd->tx_csum);
    uint8_t *f = nd->tx_reserve(nd);
    fill(f, 100, 1);
    CHECK_EQ(nd->tx_commit(nd, f, 100, 34, 6), -1);
    CHECK_EQ(d.sent, 0);
}

/* xmit is a reserve, a copy and a commit; every slot comes back; a
 * pointer that is not a reserved slot, or one committed or cancelled
 * already, is refused and sends nothing; a bad length gives the slot
 * back unsent. */
TEST(reserve_commit_cancel_and_xmit)
{
    struct netdev *nd = probe(true, false);
    uint8_t frame[200];
    fill(frame, sizeof frame, 77);
    CHECK_EQ(nd->xmit(nd, frame, sizeof frame), 0);
    CHECK_EQ(d.sent, 1);
    CHECK(same(d.frame, sizeof frame, 77));
    for (unsigned i = 0; i < d.hdr_len; i++)
        CHECK_EQ(d.hdr[i], 0);

    uint8_t *a = nd->tx_reserve(nd), *b = nd->tx_reserve(nd);
    CHECK(a && b && a != b);
    CHECK_EQ(nd->tx_commit(nd, frame, 60, 0, 0), -1);       /* not a slot */
    CHECK_EQ(nd->tx_commit(nd, a + 1, 60, 0, 0), -1);       /* not a slot's start */
    nd->tx_cancel(nd, a);
    CHECK_EQ(nd->tx_commit(nd, a, 60, 0, 0), -1);           /* cancelled already */
    CHECK_EQ(nd->tx_commit(nd, b, 4096, 0, 0), -1);         /* too long: back, unsent */
    CHECK_EQ(nd->tx_commit(nd, b, 60, 0, 0), -1);           /* and not held any more */
    CHECK_EQ(d.sent, 1);
    /* Every slot is free again: the ring's four (8 descriptors, 2 each)
     * can all be held at once, and a fifth cannot. */
    uint8_t *h[4];
    for (int i = 0; i < 4; i++)
        CHECK((h[i] = nd->tx_reserve(nd)) != NULL);
    CHECK(nd->tx_reserve(nd) == NULL);
    for (int i = 0; i < 4; i++) {
        fill(h[i], 64, (uint8_t)i);
        CHECK_EQ(nd->tx_commit(nd, h[i], 64, 0, 0), 0);
    }
    CHECK_EQ(d.sent, 5);
    CHECK(nd->tx_reserve(nd) != NULL);            /* reclaimed from the used ring */
}
