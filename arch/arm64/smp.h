/* arch/arm64/smp.h: starting the other CPUs. */
#pragma once
#include "lib/fdt.h"

/* Start up to max-1 more CPUs from the device tree's list by PSCI;
 * returns how many run in all. */
unsigned smp_start(const struct fdt_machine *m, unsigned max);
