/* arch/x86_64/pci.c: hal/pci.h on a PC. Configuration mechanism #1, port
 * I/O, and PCI interrupt lines routed through the IOAPIC. */
#include "hal/pci.h"
#include "arch/x86_64/acpi.h"
#include "arch/x86_64/ioapic.h"
#include "arch/x86_64/trap.h"
#include "arch/x86_64/x86.h"
#include "kernel/irqname.h"
#include "kernel/spinlock.h"

#define PCI_CFG_ADDR 0xcf8
#define PCI_CFG_DATA 0xcfc

/* Address then data is two port accesses: another CPU's access in between
 * would redirect ours, so the pair is done under a lock. */
static spinlock_t pci_cfg_lock = SPINLOCK_INIT("pci-config");

static uint32_t pci_cfg_addr(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off)
{
    return 1u << 31 | (uint32_t)bus << 16 | (uint32_t)(dev & 31) << 11 |
           (uint32_t)(fn & 7) << 8 | (off & 0xfc);
}

uint32_t pci_cfg_read32(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off)
{
    unsigned long f = spin_lock(&pci_cfg_lock);
    outl(PCI_CFG_ADDR, pci_cfg_addr(bus, dev, fn, off));
    uint32_t v = inl(PCI_CFG_DATA);
    spin_unlock(&pci_cfg_lock, f);
    return v;
}

uint16_t pci_cfg_read16(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off)
{
    return (uint16_t)(pci_cfg_read32(bus, dev, fn, off) >> ((off & 2) * 8));
}

uint8_t pci_cfg_read8(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off)
{
    return (uint8_t)(pci_cfg_read32(bus, dev, fn, off) >> ((off & 3) * 8));
}

void pci_cfg_write32(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off, uint32_t v)
{
    unsigned long f = spin_lock(&pci_cfg_lock);
    outl(PCI_CFG_ADDR, pci_cfg_addr(bus, dev, fn, off));
    outl(PCI_CFG_DATA, v);
    spin_unlock(&pci_cfg_lock, f);
}

void pci_cfg_write16(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off, uint16_t v)
{
    /* A 16-bit access at the data port's matching byte lane: a 32-bit
     * read-modify-write would also write back the neighbouring register
     * (e.g. the status register's write-1-to-clear bits next to command). */
    unsigned long f = spin_lock(&pci_cfg_lock);
    outl(PCI_CFG_ADDR, pci_cfg_addr(bus, dev, fn, off));
    outw((uint16_t)(PCI_CFG_DATA + (off & 2)), v);
    spin_unlock(&pci_cfg_lock, f);
}

uint8_t pio_in8(uint16_t port) { return inb(port); }
uint16_t pio_in16(uint16_t port) { return inw(port); }
uint32_t pio_in32(uint16_t port) { return inl(port); }
void pio_out8(uint16_t port, uint8_t v) { outb(port, v); }
void pio_out16(uint16_t port, uint16_t v) { outw(port, v); }
void pio_out32(uint16_t port, uint32_t v) { outl(port, v); }

/* ---- interrupt lines ----
 *
 * One IOAPIC pin, one vector; devices sharing a line share the vector and
 * every handler on it is called (each checks its own device). Entries are
 * only ever added, and an entry is complete before it is published. */
#define PCI_IRQ_MAX 8

struct pci_irq {
    unsigned gsi;
    int vector;
    void (*fn)(void *arg);
    void *arg;
};

static struct pci_irq pci_irqs[PCI_IRQ_MAX];
static unsigned pci_nirqs;                  /* published entries */
static spinlock_t pci_irq_lock = SPINLOCK_INIT("pci-irqs");

/* Interrupt context: walks the published entries only, takes no lock. */
static void pci_irq_dispatch(struct trap_frame *tf, void *arg)
{
    unsigned gsi = (unsigned)(uintptr_t)arg;
    unsigned n = __atomic_load_n(&pci_nirqs, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n; i++)
        if (pci_irqs[i].gsi == gsi)
            pci_irqs[i].fn(pci_irqs[i].arg);
}

/* Trigger mode and polarity of a PCI line. PCI INTx is level-triggered,
 * active-low, unless the MADT overrides it: QEMU's MADT lists the lines
 * its PCI interrupt links use (5, 9, 10, 11) as level, active-high, which
 * is what its ACPI tables tell an OS (QEMU's IOAPIC ignores the polarity
 * bit anyway). Flags: bits 0-1 polarity (1 high, 3 low), bits 2-3 trigger
 * (1 edge, 3 level); 0 means "as the bus says". */
static void pci_irq_mode(unsigned gsi, int *level, int *low)
{
    *level = 1;
    *low = 1;
    for (unsigned i = 0; i < madt.niso; i++) {
        if (madt.iso[i].gsi != gsi)
            continue;
        uint16_t fl = madt.iso[i].flags;
        if ((fl & 3) == 1) *low = 0;
        if ((fl & 3) == 3) *low = 1;
        if (((fl >> 2) & 3) == 1) *level = 0;
        if (((fl >> 2) & 3) == 3) *level = 1;
    }
}

int irq_attach_gsi(unsigned gsi, const char *name, void (*fn)(void *arg), void *arg)
{
    unsigned long f = spin_lock(&pci_irq_lock);
    int rc = -1;
    if (pci_nirqs == PCI_IRQ_MAX)
        goto out;
    int vector = -1;
    for (unsigned i = 0; i < pci_nirqs; i++)
        if (pci_irqs[i].gsi == gsi)
            vector = pci_irqs[i].vector;
    bool fresh = vector < 0;
    if (fresh) {
        vector = irq_alloc_vector(pci_irq_dispatch, (void *)(uintptr_t)gsi);
        if (vector < 0)
            goto out;
    }
    struct pci_irq *e = &pci_irqs[pci_nirqs];
    e->gsi = gsi;
    e->vector = vector;
    e->fn = fn;
    e->arg = arg;
    __atomic_store_n(&pci_nirqs, pci_nirqs + 1, __ATOMIC_RELEASE);
    /* Before the unmask; a name refused only costs the reports it. */
    (void)irqname_set((unsigned)vector, name);
    if (fresh) {
        /* Unmask last: the handler is in place before the first interrupt. */
        int level, low;
        pci_irq_mode(gsi, &level, &low);
        ioapic_route_gsi(gsi, (unsigned)vector, level, low);
    }
    rc = 0;
out:
    spin_unlock(&pci_irq_lock, f);
    return rc;
}
