/* arch/arm64/dt.h: the device tree the kernel booted with (main.c reads
 * it once, early). Drivers that look up nodes of their own (virtio-mmio
 * slots, the PMU's interrupt) use boot_fdt with lib/fdt.h; the summary
 * every arm64 boot needs is boot_dt. Both are read-only after kmain. */
#pragma once
#include "lib/fdt.h"

extern struct fdt boot_fdt;              /* the blob, in place, through the direct map */
extern struct fdt_machine boot_dt;       /* memory, bootargs, PSCI, GIC, UART, timers, cpus, PMU */
