/* hal/sha256.h: the CPU's own SHA-256 block function, where it has one.
 *
 * The portable core (kernel/sha256_boot.c) asks once at boot, checks
 * what it gets against lib/sha256.c's C and installs it only if they
 * agree; lib/sha256.c stays portable and knows nothing of CPUs. Each
 * architecture's half: arch/arm64/sha256.c (the Armv8 SHA-256
 * instructions, when ID_AA64ISAR0_EL1.SHA2 says so), arch/x86_64/sha256.c
 * (none: the SHA extensions are not used). */
#pragma once
#include "lib/sha256.h"

/* The block function built on this CPU's instructions, with *what naming
 * it; or NULL, with *what saying why there is none. Called on the boot
 * CPU before any other CPU or task runs. The function may be called from
 * any task or interrupt handler, never from the NMI path. */
sha256_blocks_fn *cpu_sha256_blocks(const char **what);
