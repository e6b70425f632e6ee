/* drivers/pci.c: find the PCI devices once, keep them in a table, and the
 * `pci` command that lists them.
 *
 * Brute force over bus 0-255, device 0-31, function 0-7: simpler than
 * following bridges and finds devices behind them all the same, at the
 * price of ~8000 configuration reads once at boot. */
#include "hal/pci.h"
#include "lib/printf.h"
#include "kernel/spinlock.h"
#include "lib/printf.h"

static struct pci_dev pci_devs[PCI_MAX_DEVS];
static int pci_ndevs;
static int pci_dropped;                  /* found beyond PCI_MAX_DEVS */
static bool pci_scanned;
static spinlock_t pci_scan_lock = SPINLOCK_INIT("pci-devices");

static void pci_add(uint8_t bus, uint8_t dev, uint8_t fn, uint32_t id)
{
    if (pci_ndevs == PCI_MAX_DEVS) {
        pci_dropped++;
        return;
    }
    struct pci_dev *d = &pci_devs[pci_ndevs++];
    d->bus = bus;
    d->dev = dev;
    d->fn = fn;
    d->vendor = (uint16_t)id;
    d->device = (uint16_t)(id >> 16);
    uint32_t cls = pci_cfg_read32(bus, dev, fn, 0x08);
    d->class = (uint8_t)(cls >> 24);
    d->subclass = (uint8_t)(cls >> 16);
    d->progif = (uint8_t)(cls >> 8);
    d->header = pci_cfg_read8(bus, dev, fn, 0x0e) & 0x7f;
    /* Bridges (type 1) have two BARs, CardBus (type 2) none we use. */
    int nbar = d->header == 0 ? 6 : d->header == 1 ? 2 : 0;
    for (int i = 0; i < 6; i++)
        d->bar[i] = i < nbar ? pci_cfg_read32(bus, dev, fn, (uint8_t)(0x10 + 4 * i)) : 0;
    d->irq_line = pci_cfg_read8(bus, dev, fn, 0x3c);
    d->irq_pin = pci_cfg_read8(bus, dev, fn, 0x3d);
}

int pci_scan(void)
{
    /* The lock keeps a `pci` command from reading a half-built table while
     * boot is still scanning (scans happen with interrupts off: ~ms). */
    unsigned long f = spin_lock(&pci_scan_lock);
    if (!pci_scanned) {
        for (unsigned bus = 0; bus < 256; bus++) {
            for (uint8_t dev = 0; dev < 32; dev++) {
                uint32_t id = pci_cfg_read32((uint8_t)bus, dev, 0, 0);
                if ((id & 0xffff) == 0xffff)      /* nothing answers */
                    continue;
                pci_add((uint8_t)bus, dev, 0, id);
                if (!(pci_cfg_read8((uint8_t)bus, dev, 0, 0x0e) & 0x80))
                    continue;                     /* not multi-function */
                for (uint8_t fn = 1; fn < 8; fn++) {
                    id = pci_cfg_read32((uint8_t)bus, dev, fn, 0);
                    if ((id & 0xffff) != 0xffff)
                        pci_add((uint8_t)bus, dev, fn, id);
                }
            }
        }
        __atomic_store_n(&pci_scanned, true, __ATOMIC_RELEASE);
    }
    spin_unlock(&pci_scan_lock, f);
    return pci_ndevs;
}

const struct pci_dev *pci_find(uint16_t vendor, uint16_t device)
{
    pci_scan();
    for (int i = 0; i < pci_ndevs; i++)
        if (pci_devs[i].vendor == vendor && pci_devs[i].device == device)
            return &pci_devs[i];
    return NULL;
}

uint16_t pci_bar_io(const struct pci_dev *d, int i)
{
    if (i < 0 || i > 5 || !(d->bar[i] & 1))
        return 0;
    return (uint16_t)(d->bar[i] & ~3u);
}

void pci_enable(const struct pci_dev *d, uint16_t bits)
{
    uint16_t cmd = pci_cfg_read16(d->bus, d->dev, d->fn, 0x04);
    pci_cfg_write16(d->bus, d->dev, d->fn, 0x04, cmd | bits);
}

static void pci_print_bars(const struct pci_dev *d, struct printer *p)
{
    for (int i = 0; i < 6; i++) {
        uint32_t b = d->bar[i];
        if (b == 0)
            continue;
        if (b & 1) {
            pr_printf(p, " bar%d io 0x%x", i, b & ~3u);
        } else if (((b >> 1) & 3) == 2 && i < 5) {   /* 64-bit: next BAR is the top */
            uint64_t a = ((uint64_t)d->bar[i + 1] << 32) | (b & ~0xfu);
            pr_printf(p, " bar%d mem64 0x%lx", i, a);
            i++;
        } else {
            pr_printf(p, " bar%d mem 0x%x", i, b & ~0xfu);
        }
    }
}

/* `pci`: every device kept, one line each. */
void pci_print(struct printer *p)
{
    int n = pci_scan();
    for (int i = 0; i < n; i++) {
        const struct pci_dev *d = &pci_devs[i];
        pr_printf(p, "%02x:%02x.%x %04x:%04x class %02x.%02x.%02x", d->bus, d->dev, d->fn,
                  d->vendor, d->device, d->class, d->subclass, d->progif);
        pci_print_bars(d, p);
        if (d->irq_pin)
            pr_printf(p, " irq %u (INT%c)", d->irq_line, 'A' + d->irq_pin - 1);
        pr_puts(p, "\n");
    }
    if (pci_dropped)
        pr_printf(p, "(%d more devices not kept: table holds %d)\n", pci_dropped, PCI_MAX_DEVS);
}
