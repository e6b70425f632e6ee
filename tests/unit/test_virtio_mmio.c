// LINK: drivers/virtio_mmio.c lib/printf.c
/* tests/unit/test_virtio_mmio.c: drivers/virtio_mmio.c against register
 * windows in host memory. The "device" does not react (a select register
 * does not switch what the next read returns), so these tests check what
 * the transport reads and writes where: which window it picks, the legacy
 * and modern queue hand-over, the interrupt acknowledge. */
#include "test.h"
#include "drivers/virtio.h"
#include "hal/virtio.h"
#include <stdarg.h>
#include <string.h>

#define NWIN 6
static uint32_t win[NWIN][0x200 / 4];
static struct virtio_mmio_dev fake_devs[NWIN];
static int fake_ndevs;
static unsigned attached_irq;
static const char *attached_name;   /* the name it was attached under */
#include "fake_klog.h"

/* The windows' "physical addresses" are their indexes, one page apart. */
int virtio_mmio_find(struct virtio_mmio_dev *out, int max)
{
    int n = fake_ndevs < max ? fake_ndevs : max;
    memcpy(out, fake_devs, sizeof out[0] * (size_t)n);
    return n;
}

volatile uint8_t *virtio_mmio_map(uint64_t base, uint64_t size)
{
    uint64_t i = base / 0x1000 - 1;
    return i < NWIN ? (volatile uint8_t *)win[i] : NULL;
}

int virtio_mmio_irq_attach(unsigned irq, const char *name, void (*fn)(void *arg), void *arg)
{
    attached_irq = irq;
    attached_name = name;
    return 0;
}

#define R(w, off) win[w][(off) / 4]

static void window(int i, uint32_t magic, uint32_t version, uint32_t id, unsigned irq)
{
    memset(win[i], 0, sizeof win[i]);
    R(i, 0x000) = magic;
    R(i, 0x004) = version;
    R(i, 0x008) = id;
    fake_devs[i] = (struct virtio_mmio_dev){ 0x1000ull * (i + 1), 0x200, irq };
    if (fake_ndevs <= i)
        fake_ndevs = i + 1;
}

/* Empty, wrong magic, unknown version, no interrupt: all passed over. */
static void junk_windows(void)
{
    fake_ndevs = 0;
    klog[0] = 0;
    window(0, 0x74726976, 1, 0, 48);            /* an empty slot */
    window(1, 0x12345678, 1, 1, 49);            /* not virtio */
    window(2, 0x74726976, 3, 1, 50);            /* a version we do not know */
    window(3, 0x74726976, 1, 1, 0);             /* no interrupt */
}

TEST(mmio_probe_picks_the_usable_window)
{
    junk_windows();
    CHECK(virtio_mmio_probe(VIRTIO_ID_NET) == NULL);
    CHECK(strstr(klog, "version 3 (want 1 or 2)") != NULL);
    CHECK(strstr(klog, "no interrupt in the device tree") != NULL);
    window(4, 0x74726976, 1, 2, 52);            /* a block device */
    window(5, 0x74726976, 1, 1, 53);
    struct virtio_transport *t = virtio_mmio_probe(VIRTIO_ID_NET);
    CHECK(t != NULL);
    if (!t)
        return;
    CHECK(!t->modern);
    CHECK_STR(t->where, "mmio 0x6000 v1 irq 53");
    CHECK(virtio_mmio_probe(3) == NULL);        /* no console device here */
}

TEST(mmio_legacy_queue_and_registers)
{
    junk_windows();
    window(5, 0x74726976, 1, 1, 53);
    struct virtio_transport *t = virtio_mmio_probe(VIRTIO_ID_NET);
    CHECK(t != NULL);
    if (!t)
        return;
    const struct virtio_ops *o = t->ops;
    R(5, 0x010) = 0x00010020;                   /* MAC among the offered */
    CHECK_EQ(o->get_features(t), 0x00010020);   /* legacy: 32 bits only */
    o->set_features(t, 0x20);
    CHECK_EQ(R(5, 0x020), 0x20);
    o->set_status(t, 7);
    CHECK_EQ(o->get_status(t), 7);
    R(5, 0x034) = 256;
    CHECK_EQ(o->queue_max(t, 1), 256);
    CHECK_EQ(R(5, 0x030), 1);                   /* selected */
    uint64_t desc = 0x45678000, avail = desc + 16 * 256, used = desc + 0x2000;
    CHECK(o->queue_setup(t, 1, 256, desc, avail, used) == NULL);
    CHECK_EQ(R(5, 0x028), 4096);                /* GuestPageSize */
    CHECK_EQ(R(5, 0x038), 256);                 /* QueueNum */
    CHECK_EQ(R(5, 0x03c), 4096);                /* QueueAlign */
    CHECK_EQ(R(5, 0x040), desc >> 12);          /* QueuePFN */
    CHECK(o->queue_setup(t, 1, 256, desc, avail, used) != NULL);   /* in use */
    R(5, 0x040) = 0;
    CHECK(o->queue_setup(t, 1, 256, desc, avail + 8, used) != NULL);  /* not the layout */
    CHECK(o->queue_setup(t, 1, 256, desc, avail, used + 4) != NULL);
    CHECK_EQ(R(5, 0x040), 0);                   /* refused: nothing handed over */
    o->notify(t, 1);
    CHECK_EQ(R(5, 0x050), 1);
    ((uint8_t *)win[5])[0x100 + 2] = 0x5e;
    CHECK_EQ(o->config_read8(t, 2), 0x5e);
    CHECK_EQ(o->irq_attach(t, "virtio-rng", NULL, NULL), 0);
    CHECK_EQ(attached_irq, 53);
    CHECK(attached_name && strcmp(attached_name, "virtio-rng") == 0);
}

TEST(mmio_isr_ack_writes_back_what_it_read)
{
    junk_windows();
    window(5, 0x74726976, 1, 1, 53);
    struct virtio_transport *t = virtio_mmio_probe(VIRTIO_ID_NET);
    CHECK(t != NULL);
    if (!t)
        return;
    R(5, 0x060) = 3;
    R(5, 0x064) = 0;
    CHECK_EQ(t->ops->isr_ack(t), 3);
    CHECK_EQ(R(5, 0x064), 3);
    R(5, 0x060) = 0;                            /* not ours: no write */
    R(5, 0x064) = 0xdead;
    CHECK_EQ(t->ops->isr_ack(t), 0);
    CHECK_EQ(R(5, 0x064), 0xdead);
}

TEST(mmio_modern_queue_and_features)
{
    junk_windows();
    window(5, 0x74726976, 2, 1, 53);
    struct virtio_transport *t = virtio_mmio_probe(VIRTIO_ID_NET);
    CHECK(t != NULL);
    if (!t)
        return;
    const struct virtio_ops *o = t->ops;
    CHECK(t->modern);
    CHECK_STR(t->where, "mmio 0x6000 v2 irq 53");
    /* Both feature words come from the one (unselecting) register here. */
    R(5, 0x010) = 0x21;
    CHECK_EQ(o->get_features(t), 0x0000002100000021ull);
    CHECK_EQ(R(5, 0x014), 1);                   /* the high word was selected last */
    o->set_features(t, VIRTIO_F_VERSION_1 | 0x20);
    CHECK_EQ(R(5, 0x024), 1);
    CHECK_EQ(R(5, 0x020), 1);                   /* the last word written: the high one */
    uint64_t desc = 0x123456789000ull, avail = desc + 16 * 64, used = desc + 0x1000;
    CHECK(o->queue_setup(t, 0, 64, desc, avail, used) == NULL);
    CHECK_EQ(R(5, 0x038), 64);
    CHECK_EQ(R(5, 0x080), 0x56789000);
    CHECK_EQ(R(5, 0x084), 0x1234);
    CHECK_EQ(R(5, 0x090), (uint32_t)avail);
    CHECK_EQ(R(5, 0x094), 0x1234);
    CHECK_EQ(R(5, 0x0a0), (uint32_t)used);
    CHECK_EQ(R(5, 0x0a4), 0x1234);
    CHECK_EQ(R(5, 0x044), 1);                   /* QueueReady */
    CHECK_EQ(R(5, 0x040), 0);                   /* no legacy PFN */
    CHECK(o->queue_setup(t, 0, 64, desc, avail, used) != NULL);     /* already ready */
}

TEST(mmio_two_devices_keep_their_own_transports)
{
    junk_windows();
    window(4, 0x74726976, 1, 4, 52);            /* an entropy device */
    window(5, 0x74726976, 2, 1, 53);            /* a network device */
    struct virtio_transport *net = virtio_mmio_probe(VIRTIO_ID_NET);
    struct virtio_transport *rng = virtio_mmio_probe(VIRTIO_ID_RNG);
    CHECK(net != NULL && rng != NULL && net != rng);
    if (!net || !rng)
        return;
    CHECK_STR(net->where, "mmio 0x6000 v2 irq 53");   /* not overwritten by the second */
    CHECK_STR(rng->where, "mmio 0x5000 v1 irq 52");
    CHECK(net->modern && !rng->modern);
    R(5, 0x070) = 0;
    R(4, 0x070) = 0;
    rng->ops->set_status(rng, 3);
    CHECK_EQ(R(4, 0x070), 3);                   /* each talks to its own window */
    CHECK_EQ(R(5, 0x070), 0);
    CHECK(virtio_mmio_probe(VIRTIO_ID_NET) == net);   /* probed again: the same one */
}
