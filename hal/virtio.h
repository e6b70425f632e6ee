/* hal/virtio.h: virtio-mmio transports the machine describes.
 *
 * On arm64 (QEMU virt) the device tree lists them (compatible
 * "virtio,mmio"); x86 has none (its virtio devices are on PCI). The
 * driver (drivers/virtio_mmio.c) is portable; where the windows are, how
 * they are mapped and how their interrupts are attached is the machine's. */
#pragma once
#include <stdint.h>

#define VIRTIO_MMIO_MAX 32

struct virtio_mmio_dev {
    uint64_t base, size;           /* the register window (physical) */
    unsigned irq;                  /* the machine's interrupt number, 0 if none */
};

/* Fill out[0..max) with the transports described, in description order;
 * returns how many (0 if none). Empty windows are listed too: the driver
 * tells them apart by their DeviceID. */
int virtio_mmio_find(struct virtio_mmio_dev *out, int max);
/* The window's registers (uncached device memory), NULL if unreachable. */
volatile uint8_t *virtio_mmio_map(uint64_t base, uint64_t size);
/* Call fn(arg) on every interrupt irq, in interrupt context with
 * interrupts off; fn must make its device drop the line. name: the
 * device's, for the reports (as irq_attach_gsi()'s, hal/pci.h). 0, or -1
 * (no such interrupt, or no room to attach one). */
int virtio_mmio_irq_attach(unsigned irq, const char *name, void (*fn)(void *arg), void *arg);
