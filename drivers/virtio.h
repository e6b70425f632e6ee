/* drivers/virtio.h: a virtio transport, as a device driver sees it.
 *
 * The same device (virtio-net, virtio-rng) sits behind different buses: the legacy
 * PCI I/O-port block on x86 (drivers/virtio_pci.c), a virtio-mmio
 * register window on arm64's QEMU virt (drivers/virtio_mmio.c). A driver
 * talks to the transport only through these operations, so the ring
 * handling is written once.
 *
 * Queues always use the legacy layout (descriptors, available ring, used
 * ring at the next 4096 boundary, virtio 1.0 section 2.4.2): legacy
 * transports can only be given one page frame number and insist on it; a
 * modern one takes the three addresses, which works for that layout too. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Device status bits (virtio 1.0 section 2.1). */
#define VIRTIO_S_ACK         1
#define VIRTIO_S_DRIVER      2
#define VIRTIO_S_DRIVER_OK   4
#define VIRTIO_S_FEATURES_OK 8     /* modern devices only */
#define VIRTIO_S_FAILED      128

#define VIRTIO_F_VERSION_1   (1ull << 32)   /* a modern device: offered only by one */

#define VIRTIO_ID_NET        1              /* device type (virtio-mmio DeviceID) */
#define VIRTIO_ID_RNG        4              /* the entropy source */
/* PCI: the vendor, and a transitional device's ID (0x1000 + type - 1:
 * virtio 1.0 section 4.1.2.1), the one with the legacy I/O BAR. */
#define VIRTIO_PCI_VENDOR    0x1af4
#define VIRTIO_PCI_ID_NET    0x1000
#define VIRTIO_PCI_ID_RNG    0x1005
#define VIRTIO_QUEUE_ALIGN   4096           /* used ring alignment of the legacy layout */

struct virtio_transport;

struct virtio_ops {
    uint8_t (*get_status)(struct virtio_transport *t);
    void (*set_status)(struct virtio_transport *t, uint8_t status);    /* 0 resets */
    uint64_t (*get_features)(struct virtio_transport *t);    /* what the device offers */
    void (*set_features)(struct virtio_transport *t, uint64_t features);
    uint8_t (*config_read8)(struct virtio_transport *t, unsigned off);   /* device config */
    /* Select queue q; its maximum size, 0 if there is no such queue. */
    uint16_t (*queue_max)(struct virtio_transport *t, uint16_t q);
    /* Give queue q (size entries, legacy layout at these physical
     * addresses) to the device. NULL, or why the transport cannot. */
    const char *(*queue_setup)(struct virtio_transport *t, uint16_t q, uint16_t size,
                               uint64_t desc, uint64_t avail, uint64_t used);
    void (*notify)(struct virtio_transport *t, uint16_t q);
    /* Interrupt context: read and acknowledge the interrupt status (bit 0:
     * a used ring changed, bit 1: configuration). Must drop the line. */
    uint8_t (*isr_ack)(struct virtio_transport *t);
    /* Call fn(arg) in interrupt context on the device's interrupt, which
     * the reports then call name ("virtio-net"). 0 or -1. */
    int (*irq_attach)(struct virtio_transport *t, const char *name, void (*fn)(void *arg),
                      void *arg);
};

struct virtio_transport {
    const struct virtio_ops *ops;
    bool modern;                   /* must negotiate VIRTIO_F_VERSION_1 */
    char where[40];                /* "io 0xc000 irq 11", "mmio 0xa003e00 irq 79" */
};

/* The first device of this kind on each bus (the driver resets it); NULL
 * if there is none (silently) or it cannot be used (after a message).
 * Each device has a transport of its own (a few at most); probing the same
 * device again returns the same one. */
struct virtio_transport *virtio_pci_probe(uint16_t vendor, uint16_t device);
struct virtio_transport *virtio_mmio_probe(uint32_t device_id);
