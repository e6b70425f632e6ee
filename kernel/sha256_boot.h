/* kernel/sha256_boot.h: the choice of SHA-256 block function at boot
 * (kernel/sha256_boot.c). */
#pragma once

struct printer;

/* Install the CPU's block function (hal/sha256.h) if it has one and it
 * agrees with the C on the check messages, else keep the C; print one
 * line saying which runs and why. On the boot CPU, before any other CPU
 * or task runs (lib/sha256.h's sha256_blocks_install). */
void sha256_boot_choose(void);

/* `lscpu`'s line: the block function in use, or the C and why. */
void sha256_boot_print(struct printer *p);
