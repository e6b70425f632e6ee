/* hal/pci.h: what portable drivers may ask of the machine's PCI bus.
 *
 * Configuration space (x86: mechanism #1, ports 0xCF8/0xCFC), port I/O for
 * devices with I/O BARs (legacy virtio), and attaching a handler to a
 * device's interrupt. Offsets are into the 256-byte configuration header;
 * 16-bit accesses must be 2-aligned and 32-bit ones 4-aligned. */
#pragma once
#include <stdint.h>

uint32_t pci_cfg_read32(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off);
uint16_t pci_cfg_read16(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off);
uint8_t pci_cfg_read8(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off);
void pci_cfg_write32(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off, uint32_t v);
void pci_cfg_write16(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off, uint16_t v);

/* I/O ports (an I/O BAR's base plus a register offset). */
uint8_t pio_in8(uint16_t port);
uint16_t pio_in16(uint16_t port);
uint32_t pio_in32(uint16_t port);
void pio_out8(uint16_t port, uint8_t v);
void pio_out16(uint16_t port, uint16_t v);
void pio_out32(uint16_t port, uint32_t v);

/* Call fn(arg) on every interrupt of global system interrupt gsi (for
 * PCI INTx on a PC: the interrupt line register's value). The line is
 * level-triggered and shared-capable: fn must make its device drop the
 * line (e.g. read an ack register) or the interrupt repeats forever.
 * fn runs in interrupt context with interrupts off: no sleeping, no
 * lock a task may hold with interrupts on. name: the device's, for the
 * reports (kernel/irqname.h: a literal, 1-15 of [a-z0-9._-]); a name the
 * table refuses leaves the vector printed by its number. 0, or -1 (no
 * vector left). */
int irq_attach_gsi(unsigned gsi, const char *name, void (*fn)(void *arg), void *arg);

/* ---- the device table (drivers/pci.c) ---- */

#define PCI_MAX_DEVS 64

struct pci_dev {
    uint8_t bus, dev, fn;
    uint16_t vendor, device;
    uint8_t class, subclass, progif, header;
    uint32_t bar[6];             /* raw BAR registers (header type 0) */
    uint8_t irq_line, irq_pin;   /* config 0x3c/0x3d; pin 0 = none */
};

/* Scan every bus once (later calls return at once); returns the count. */
int pci_scan(void);
/* `pci`: every device kept, a line each, to p (drivers/pci.c). */
struct printer;
void pci_print(struct printer *p);
/* The first device with this vendor:device, NULL if none. */
const struct pci_dev *pci_find(uint16_t vendor, uint16_t device);
/* A BAR's I/O port base, or 0 if it is not an I/O BAR. */
uint16_t pci_bar_io(const struct pci_dev *d, int i);
/* Set bits in the command register (1 I/O space, 2 memory, 4 bus master). */
void pci_enable(const struct pci_dev *d, uint16_t bits);
