/* arch/x86_64/acpi.h: the MADT: which CPUs exist, where the IOAPIC is. */
#pragma once
#include <stdint.h>
#include "hal/cpu.h"

struct madt_info {
    uint32_t lapic_ids[MAX_CPUS];
    unsigned ncpus;
    unsigned cpus_skipped;              /* listed beyond MAX_CPUS */
    uint64_t lapic_phys;
    uint64_t ioapic_phys;
    uint32_t ioapic_gsi_base;
    struct { uint8_t irq; uint32_t gsi; uint16_t flags; } iso[16];
    unsigned niso;
};

extern struct madt_info madt;
const char *acpi_init(void);            /* NULL, or why there is no MADT */
