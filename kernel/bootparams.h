/* kernel/bootparams.h: the kernel command line and the boot checks that
 * are the same on every architecture (each arch's main.c calls them). */
#pragma once
#include <stdint.h>
#include "lib/parse.h"

/* Parse key=value words; report unknown keys and dropped words once. */
const struct cmdline *boot_params_parse(const char *text);
/* smp=N (1..MAX_CPUS), else MAX_CPUS; a bad value is reported. */
unsigned boot_param_smp(void);
/* pmu=auto|off|assume, handed to pmu_set_mode; a bad value is reported. */
void boot_param_pmu(void);
/* The table the three-pass link baked in must name its own functions:
 * fn+1 must resolve to name+0x1, and name to fn. Panics otherwise. */
void symtab_selftest(uintptr_t fn, const char *name);
