/* drivers/virtio_mmio.c: the virtio-mmio transport (virtio 1.0 section
 * 4.2), as QEMU's virt machine offers it: 32 register windows of 0x200
 * bytes, each with its own interrupt, listed in the device tree. An empty
 * window answers DeviceID 0.
 *
 * Both register layouts are driven:
 *   version 1 (legacy, QEMU's default): the driver states its page size
 *     (GuestPageSize) and the used ring's alignment (QueueAlign), then
 *     hands the queue over as one page frame number (QueuePFN);
 *   version 2 (modern, -global virtio-mmio.force-legacy=false): 64-bit
 *     features through a select register, FEATURES_OK, and the three ring
 *     addresses written separately, then QueueReady.
 * The interrupt is acknowledged by writing back the status bits read.
 *
 * Registers are 32-bit little-endian, accessed through the direct map
 * (device memory on arm64: accesses are neither merged nor reordered with
 * each other). The driver's fence before a notify orders its ring stores
 * before the QueueNotify write. */
#include "drivers/virtio.h"
#include "hal/virtio.h"
#include "kernel/console.h"
#include "lib/printf.h"

#define VM_MAGIC          0x000   /* "virt" */
#define VM_VERSION        0x004   /* 1 legacy, 2 modern */
#define VM_DEVICE_ID      0x008
#define VM_DEV_FEATURES   0x010
#define VM_DEV_FEAT_SEL   0x014
#define VM_DRV_FEATURES   0x020
#define VM_DRV_FEAT_SEL   0x024
#define VM_GUEST_PAGE     0x028   /* v1 */
#define VM_QUEUE_SEL      0x030
#define VM_QUEUE_NUM_MAX  0x034
#define VM_QUEUE_NUM      0x038
#define VM_QUEUE_ALIGN    0x03c   /* v1 */
#define VM_QUEUE_PFN      0x040   /* v1 */
#define VM_QUEUE_READY    0x044   /* v2 */
#define VM_QUEUE_NOTIFY   0x050
#define VM_INT_STATUS     0x060
#define VM_INT_ACK        0x064
#define VM_STATUS         0x070
#define VM_QUEUE_DESC     0x080   /* v2: low, high at +4 */
#define VM_QUEUE_DRIVER   0x090   /* v2: the available ring */
#define VM_QUEUE_DEVICE   0x0a0   /* v2: the used ring */
#define VM_CONFIG         0x100

#define VM_MAGIC_VALUE    0x74726976u
#define VM_PAGE           4096u

/* One per device in use (virtio-net, virtio-rng): each driver keeps its
 * transport for good, so a second probe must not reuse the first's. */
#define VMMIO_MAX 4

static struct vmmio {
    struct virtio_transport t;    /* first: the driver's pointer is ours */
    volatile uint8_t *regs;
    uint64_t base;
    unsigned irq;
    unsigned version;
} vmmio[VMMIO_MAX];
static int vmmio_n;

static struct vmmio *V(struct virtio_transport *t) { return (struct vmmio *)t; }

static uint32_t rd32(volatile uint8_t *r, unsigned off) { return *(volatile uint32_t *)(r + off); }
static void wr32(volatile uint8_t *r, unsigned off, uint32_t v) { *(volatile uint32_t *)(r + off) = v; }

static uint8_t vm_get_status(struct virtio_transport *t) { return (uint8_t)rd32(V(t)->regs, VM_STATUS); }

static void vm_set_status(struct virtio_transport *t, uint8_t s)
{
    wr32(V(t)->regs, VM_STATUS, s);
    if (s == 0) {
        /* A modern device may take its time to reset; it reads 0 when done. */
        for (int i = 0; i < 1000000 && rd32(V(t)->regs, VM_STATUS) != 0; i++)
            ;
    }
}

static uint64_t vm_get_features(struct virtio_transport *t)
{
    volatile uint8_t *r = V(t)->regs;
    wr32(r, VM_DEV_FEAT_SEL, 0);
    uint64_t f = rd32(r, VM_DEV_FEATURES);
    if (V(t)->version >= 2) {
        wr32(r, VM_DEV_FEAT_SEL, 1);
        f |= (uint64_t)rd32(r, VM_DEV_FEATURES) << 32;
    }
    return f;
}

static void vm_set_features(struct virtio_transport *t, uint64_t f)
{
    volatile uint8_t *r = V(t)->regs;
    wr32(r, VM_DRV_FEAT_SEL, 0);
    wr32(r, VM_DRV_FEATURES, (uint32_t)f);
    if (V(t)->version >= 2) {
        wr32(r, VM_DRV_FEAT_SEL, 1);
        wr32(r, VM_DRV_FEATURES, (uint32_t)(f >> 32));
    }
}

static uint8_t vm_config_read8(struct virtio_transport *t, unsigned off)
{
    return *(V(t)->regs + VM_CONFIG + off);
}

static uint16_t vm_queue_max(struct virtio_transport *t, uint16_t q)
{
    wr32(V(t)->regs, VM_QUEUE_SEL, q);
    uint32_t n = rd32(V(t)->regs, VM_QUEUE_NUM_MAX);
    return n > 0x8000 ? 0x8000 : (uint16_t)n;       /* the largest size virtio allows */
}

static const char *vm_queue_setup(struct virtio_transport *t, uint16_t q, uint16_t size,
                                  uint64_t desc, uint64_t avail, uint64_t used)
{
    volatile uint8_t *r = V(t)->regs;
    wr32(r, VM_QUEUE_SEL, q);
    if (V(t)->version == 1) {
        if (rd32(r, VM_QUEUE_PFN) != 0)
            return "queue already in use after reset";
        if ((desc & (VM_PAGE - 1)) || avail != desc + 16u * size ||
            (used & (VIRTIO_QUEUE_ALIGN - 1)))
            return "queue memory not in the legacy layout";
        if (desc / VM_PAGE > 0xffffffffu)
            return "queue memory above the 32-bit PFN reach";
        /* What QueuePFN counts in; a reset may forget it, so say it here. */
        wr32(r, VM_GUEST_PAGE, VM_PAGE);
        wr32(r, VM_QUEUE_NUM, size);
        wr32(r, VM_QUEUE_ALIGN, VIRTIO_QUEUE_ALIGN);
        wr32(r, VM_QUEUE_PFN, (uint32_t)(desc / VM_PAGE));
        return NULL;
    }
    if (rd32(r, VM_QUEUE_READY) != 0)
        return "queue already in use after reset";
    wr32(r, VM_QUEUE_NUM, size);
    wr32(r, VM_QUEUE_DESC, (uint32_t)desc);
    wr32(r, VM_QUEUE_DESC + 4, (uint32_t)(desc >> 32));
    wr32(r, VM_QUEUE_DRIVER, (uint32_t)avail);
    wr32(r, VM_QUEUE_DRIVER + 4, (uint32_t)(avail >> 32));
    wr32(r, VM_QUEUE_DEVICE, (uint32_t)used);
    wr32(r, VM_QUEUE_DEVICE + 4, (uint32_t)(used >> 32));
    wr32(r, VM_QUEUE_READY, 1);
    return NULL;
}

static void vm_notify(struct virtio_transport *t, uint16_t q) { wr32(V(t)->regs, VM_QUEUE_NOTIFY, q); }

/* Interrupt context: read the cause, write it back to clear it, which drops
 * the line. A cause that arrives after the read stays set and keeps (or
 * raises again) the line: nothing is lost between the two accesses. */
static uint8_t vm_isr_ack(struct virtio_transport *t)
{
    uint32_t s = rd32(V(t)->regs, VM_INT_STATUS);
    if (s)
        wr32(V(t)->regs, VM_INT_ACK, s);
    return (uint8_t)s;
}

static int vm_irq_attach(struct virtio_transport *t, const char *name, void (*fn)(void *),
                         void *arg)
{
    return virtio_mmio_irq_attach(V(t)->irq, name, fn, arg);
}

static const struct virtio_ops vm_ops = {
    .get_status = vm_get_status,
    .set_status = vm_set_status,
    .get_features = vm_get_features,
    .set_features = vm_set_features,
    .config_read8 = vm_config_read8,
    .queue_max = vm_queue_max,
    .queue_setup = vm_queue_setup,
    .notify = vm_notify,
    .isr_ack = vm_isr_ack,
    .irq_attach = vm_irq_attach,
};

/* The window's transport: the one it had if probed before, else a free one. */
static struct vmmio *vmmio_slot(uint64_t base)
{
    for (int i = 0; i < vmmio_n; i++)
        if (vmmio[i].base == base)
            return &vmmio[i];
    if (vmmio_n == VMMIO_MAX) {
        kprintf("virtio-mmio: 0x%lx: already %d devices in use: device not used\n",
                (unsigned long)base, VMMIO_MAX);
        return NULL;
    }
    return &vmmio[vmmio_n++];
}

/* QEMU fills the windows from the top down, so the first device on the
 * command line is in the last window: look at them all. */
struct virtio_transport *virtio_mmio_probe(uint32_t device_id)
{
    static struct virtio_mmio_dev devs[VIRTIO_MMIO_MAX];
    int n = virtio_mmio_find(devs, VIRTIO_MMIO_MAX);
    for (int i = 0; i < n; i++) {
        volatile uint8_t *r = virtio_mmio_map(devs[i].base, devs[i].size);
        if (!r || devs[i].size < VM_CONFIG)
            continue;
        if (rd32(r, VM_MAGIC) != VM_MAGIC_VALUE || rd32(r, VM_DEVICE_ID) != device_id)
            continue;
        uint32_t version = rd32(r, VM_VERSION);
        if (version != 1 && version != 2) {
            kprintf("virtio-mmio: 0x%lx: version %u (want 1 or 2): device not used\n",
                    (unsigned long)devs[i].base, version);
            continue;
        }
        if (!devs[i].irq) {
            kprintf("virtio-mmio: 0x%lx: no interrupt in the device tree: device not used\n",
                    (unsigned long)devs[i].base);
            continue;
        }
        struct vmmio *v = vmmio_slot(devs[i].base);
        if (!v)
            return NULL;
        v->regs = r;
        v->base = devs[i].base;
        v->irq = devs[i].irq;
        v->version = version;
        v->t.ops = &vm_ops;
        v->t.modern = version == 2;
        fmt_snprintf(v->t.where, sizeof v->t.where, "mmio 0x%lx v%u irq %u",
                     (unsigned long)v->base, version, v->irq);
        return &v->t;
    }
    return NULL;
}
