/* arch/x86_64/ioapic.c: route device interrupts to the boot CPU. */
#include "arch/x86_64/ioapic.h"
#include "arch/x86_64/acpi.h"
#include "arch/x86_64/layout.h"
#include "arch/x86_64/x86.h"
#include "kernel/percpu.h"
#include "kernel/spinlock.h"

static spinlock_t ioapic_lock = SPINLOCK_INIT("ioapic");

void pic_disable(void)
{
    /* ICW1-4: vectors 0x20/0x28, then mask everything. */
    outb(0x20, 0x11); outb(0xa0, 0x11);
    outb(0x21, 0x20); outb(0xa1, 0x28);
    outb(0x21, 0x04); outb(0xa1, 0x02);
    outb(0x21, 0x01); outb(0xa1, 0x01);
    outb(0x21, 0xff); outb(0xa1, 0xff);
}

static void ioapic_write(unsigned reg, uint32_t val)
{
    volatile uint32_t *base = phys_to_virt(madt.ioapic_phys);
    base[0] = reg;
    base[4] = val;
}

static uint32_t ioapic_read(unsigned reg)
{
    volatile uint32_t *base = phys_to_virt(madt.ioapic_phys);
    base[0] = reg;
    return base[4];
}

void ioapic_init(void)
{
    if (!madt.ioapic_phys)
        return;
    unsigned n = ((ioapic_read(1) >> 16) & 0xff) + 1;
    for (unsigned i = 0; i < n; i++) {
        ioapic_write(0x10 + 2 * i, 1u << 16);       /* masked */
        ioapic_write(0x11 + 2 * i, 0);
    }
}

void ioapic_route_gsi(unsigned gsi, unsigned vector, int level, int active_low)
{
    if (!madt.ioapic_phys || gsi < madt.ioapic_gsi_base)
        return;
    unsigned pin = gsi - madt.ioapic_gsi_base;
    uint32_t lo = vector | (level ? 1u << 15 : 0) | (active_low ? 1u << 13 : 0);
    unsigned long f = spin_lock(&ioapic_lock);
    ioapic_write(0x11 + 2 * pin, cpus[0].hw_id << 24);
    ioapic_write(0x10 + 2 * pin, lo);
    spin_unlock(&ioapic_lock, f);
}

void ioapic_route_isa(unsigned irq, unsigned vector)
{
    unsigned gsi = irq;
    int level = 0, low = 0;                         /* ISA: edge, active high */
    for (unsigned i = 0; i < madt.niso; i++) {
        if (madt.iso[i].irq != irq)
            continue;
        gsi = madt.iso[i].gsi;
        uint16_t fl = madt.iso[i].flags;
        if ((fl & 3) == 3) low = 1;
        if (((fl >> 2) & 3) == 3) level = 1;
    }
    ioapic_route_gsi(gsi, vector, level, low);
}
