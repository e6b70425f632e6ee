/* arch/x86_64/virtio.c: hal/virtio.h on a PC, which has no virtio-mmio
 * transports: its virtio devices are PCI functions (drivers/virtio_pci.c). */
#include "hal/virtio.h"

int virtio_mmio_find(struct virtio_mmio_dev *out, int max) { return 0; }
volatile uint8_t *virtio_mmio_map(uint64_t base, uint64_t size) { return 0; }
int virtio_mmio_irq_attach(unsigned irq, const char *name, void (*fn)(void *arg), void *arg)
{
    return -1;
}
