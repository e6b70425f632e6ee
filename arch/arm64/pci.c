/* arch/arm64/pci.c: hal/pci.h on arm64, where no PCI host bridge is
 * driven yet (QEMU virt has an ECAM one; its devices are for later).
 * Configuration reads return all ones, which is what an empty slot
 * answers, so drivers/pci.c's scan finds no device and the drivers that
 * look for one (virtio-net) say so and stay off. There are no I/O ports
 * on arm64: port accesses read all ones and write nothing. */
#include "hal/pci.h"

uint32_t pci_cfg_read32(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off) { return 0xffffffffu; }
uint16_t pci_cfg_read16(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off) { return 0xffff; }
uint8_t pci_cfg_read8(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off) { return 0xff; }
void pci_cfg_write32(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off, uint32_t v) {}
void pci_cfg_write16(uint8_t bus, uint8_t dev, uint8_t fn, uint8_t off, uint16_t v) {}

uint8_t pio_in8(uint16_t port) { return 0xff; }
uint16_t pio_in16(uint16_t port) { return 0xffff; }
uint32_t pio_in32(uint16_t port) { return 0xffffffffu; }
void pio_out8(uint16_t port, uint8_t v) {}
void pio_out16(uint16_t port, uint16_t v) {}
void pio_out32(uint16_t port, uint32_t v) {}

/* No PCI interrupt can be attached: there is no PCI device. */
int irq_attach_gsi(unsigned gsi, const char *name, void (*fn)(void *arg), void *arg) { return -1; }
