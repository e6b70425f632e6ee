/* arch/arm64/virtio.c: hal/virtio.h on QEMU virt. The transports come
 * from the device tree ("virtio,mmio" nodes: one reg window, one SPI
 * each); the direct map covers them as device memory (below 1 GiB, see
 * arm64.h); their interrupts go through the GIC.
 *
 * The SPI is configured level-triggered whatever the tree's flags say
 * (QEMU's tree says rising edge): the device holds its line high while
 * its interrupt status is non-zero, and level sensing cannot miss a
 * cause raised while the previous one is being acknowledged. */
#include "arch/arm64/arm64.h"
#include "arch/arm64/dt.h"
#include "arch/arm64/gic.h"
#include "hal/virtio.h"
#include "kernel/irqname.h"

#define DEVICE_WINDOW_END (1ull << 30)  /* the direct map's device-memory gigabyte */

int virtio_mmio_find(struct virtio_mmio_dev *out, int max)
{
    int n = 0;
    for (int node = fdt_find_compatible(&boot_fdt, -1, "virtio,mmio");
         node >= 0 && n < max; node = fdt_find_compatible(&boot_fdt, node, "virtio,mmio")) {
        struct virtio_mmio_dev d = { 0, 0, 0 };
        if (!fdt_reg(&boot_fdt, node, 0, &d.base, &d.size))
            continue;
        if (!fdt_irq(&boot_fdt, node, 0, &d.irq))
            d.irq = 0;
        out[n++] = d;
    }
    return n;
}

volatile uint8_t *virtio_mmio_map(uint64_t base, uint64_t size)
{
    if (base >= DEVICE_WINDOW_END || size > DEVICE_WINDOW_END - base)
        return 0;
    return (volatile uint8_t *)phys_to_virt(base);
}

/* One slot per attachable device; the GIC's handler signature carries the
 * trap frame, which a portable driver has no use for. */
static struct { void (*fn)(void *); void *arg; } slots[VIRTIO_MMIO_MAX];
static int nslots;

static void virtio_irq(struct trap_frame *tf, void *arg)
{
    typeof(slots[0]) *s = arg;
    s->fn(s->arg);
}

/* Boot CPU, before the device is told DRIVER_OK: no race on the table. */
int virtio_mmio_irq_attach(unsigned irq, const char *name, void (*fn)(void *arg), void *arg)
{
    if (irq < 32 || irq >= GIC_MAX_INTID || nslots == VIRTIO_MMIO_MAX)
        return -1;                     /* SPIs only: a device interrupt */
    void *other;
    if (gic_handler(irq, &other))
        return -1;                     /* someone else's */
    slots[nslots].fn = fn;
    slots[nslots].arg = arg;
    gic_set_handler(irq, virtio_irq, &slots[nslots++]);
    (void)irqname_set(irq, name);      /* before the unmask; a refusal costs the reports only */
    gic_enable_spi(irq, false);
    return 0;
}
