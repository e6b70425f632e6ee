/* drivers/virtio_pci.c: the legacy virtio PCI transport (virtio 0.9.5 /
 * virtio 1.0 section 4.1.4.8): a block of I/O ports in BAR0, as QEMU's
 * transitional devices (virtio-net-pci 1af4:1000 with disable-modern=on,
 * or not) offer it. The interrupt is the device's INTx line, level and
 * possibly shared; reading the ISR port acknowledges it.
 *
 * Only the low 32 feature bits exist here, so a driver never sees
 * VIRTIO_F_VERSION_1 and keeps the legacy rules (10-byte net header). */
#include "drivers/virtio.h"
#include "hal/pci.h"
#include "kernel/console.h"
#include "lib/printf.h"

/* Legacy register block, offsets into BAR0 (no MSI-X: config at 0x14). */
#define VIO_HOST_FEATURES  0x00   /* 32 */
#define VIO_GUEST_FEATURES 0x04   /* 32 */
#define VIO_QUEUE_PFN      0x08   /* 32: queue's physical address >> 12 */
#define VIO_QUEUE_SIZE     0x0c   /* 16, read-only */
#define VIO_QUEUE_SEL      0x0e   /* 16 */
#define VIO_QUEUE_NOTIFY   0x10   /* 16 */
#define VIO_STATUS         0x12   /* 8 */
#define VIO_ISR            0x13   /* 8: reading it acks the interrupt */
#define VIO_CONFIG         0x14   /* device-specific configuration */

/* One per device in use (virtio-net, virtio-rng): each driver keeps its
 * transport for good, so a second probe must not reuse the first's. */
#define VPCI_MAX 4

static struct vpci {
    struct virtio_transport t;    /* first: the driver's pointer is ours */
    uint16_t io;
    uint8_t irq;
} vpci[VPCI_MAX];
static int vpci_n;

static struct vpci *V(struct virtio_transport *t) { return (struct vpci *)t; }

static uint8_t vpci_get_status(struct virtio_transport *t) { return pio_in8(V(t)->io + VIO_STATUS); }
static void vpci_set_status(struct virtio_transport *t, uint8_t s) { pio_out8(V(t)->io + VIO_STATUS, s); }
static uint64_t vpci_get_features(struct virtio_transport *t) { return pio_in32(V(t)->io + VIO_HOST_FEATURES); }

static void vpci_set_features(struct virtio_transport *t, uint64_t f)
{
    pio_out32(V(t)->io + VIO_GUEST_FEATURES, (uint32_t)f);
}

static uint8_t vpci_config_read8(struct virtio_transport *t, unsigned off)
{
    return pio_in8((uint16_t)(V(t)->io + VIO_CONFIG + off));
}

static uint16_t vpci_queue_max(struct virtio_transport *t, uint16_t q)
{
    pio_out16(V(t)->io + VIO_QUEUE_SEL, q);
    return pio_in16(V(t)->io + VIO_QUEUE_SIZE);
}

/* The legacy interface takes one page frame number: the queue size is the
 * device's own (read-only) and the rings must lie where the legacy layout
 * puts them, which is what the driver allocates. */
static const char *vpci_queue_setup(struct virtio_transport *t, uint16_t q, uint16_t size,
                                    uint64_t desc, uint64_t avail, uint64_t used)
{
    uint16_t io = V(t)->io;
    pio_out16(io + VIO_QUEUE_SEL, q);
    if (pio_in16(io + VIO_QUEUE_SIZE) != size)
        return "queue size differs from the device's (legacy sizes are fixed)";
    if (pio_in32(io + VIO_QUEUE_PFN) != 0)
        return "queue already in use after reset";
    if ((desc & 4095) || avail != desc + 16u * size || (used & (VIRTIO_QUEUE_ALIGN - 1)))
        return "queue memory not in the legacy layout";
    if (desc >> 44)
        return "queue memory above the 44-bit PFN reach";
    pio_out32(io + VIO_QUEUE_PFN, (uint32_t)(desc >> 12));
    return NULL;
}

static void vpci_notify(struct virtio_transport *t, uint16_t q)
{
    pio_out16(V(t)->io + VIO_QUEUE_NOTIFY, q);
}

/* Interrupt context: one port read, which also drops the line. */
static uint8_t vpci_isr_ack(struct virtio_transport *t) { return pio_in8(V(t)->io + VIO_ISR); }

static int vpci_irq_attach(struct virtio_transport *t, const char *name, void (*fn)(void *),
                           void *arg)
{
    return irq_attach_gsi(V(t)->irq, name, fn, arg);
}

static const struct virtio_ops vpci_ops = {
    .get_status = vpci_get_status,
    .set_status = vpci_set_status,
    .get_features = vpci_get_features,
    .set_features = vpci_set_features,
    .config_read8 = vpci_config_read8,
    .queue_max = vpci_queue_max,
    .queue_setup = vpci_queue_setup,
    .notify = vpci_notify,
    .isr_ack = vpci_isr_ack,
    .irq_attach = vpci_irq_attach,
};

struct virtio_transport *virtio_pci_probe(uint16_t vendor, uint16_t device)
{
    const struct pci_dev *d = pci_find(vendor, device);
    if (!d)
        return NULL;
    uint16_t io = pci_bar_io(d, 0);
    if (!io) {
        kprintf("virtio-pci: %02x:%02x.%x (%04x:%04x): BAR0 is not an I/O BAR "
                "(modern-only device? use disable-modern=on): device not used\n",
                d->bus, d->dev, d->fn, vendor, device);
        return NULL;
    }
    if (!d->irq_pin || d->irq_line == 0 || d->irq_line == 0xff) {
        kprintf("virtio-pci: %02x:%02x.%x (%04x:%04x): no interrupt line assigned: "
                "device not used\n", d->bus, d->dev, d->fn, vendor, device);
        return NULL;
    }
    struct vpci *v = NULL;
    for (int i = 0; i < vpci_n && !v; i++)
        if (vpci[i].io == io)
            v = &vpci[i];                              /* probed again: the same one */
    if (!v && vpci_n == VPCI_MAX) {
        kprintf("virtio-pci: %02x:%02x.%x: already %d devices in use: device not used\n",
                d->bus, d->dev, d->fn, VPCI_MAX);
        return NULL;
    }
    if (!v)
        v = &vpci[vpci_n++];
    v->io = io;
    v->irq = d->irq_line;
    v->t.ops = &vpci_ops;
    v->t.modern = false;
    fmt_snprintf(v->t.where, sizeof v->t.where, "io 0x%x irq %u", v->io, v->irq);
    pci_enable(d, 1 | 4);                              /* I/O space, bus master */
    return &v->t;
}
