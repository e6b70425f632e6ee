/* hal/entropy.h: unpredictable bits for portable code (the UDP shell's
 * boot epoch, docs/udpshell.md).
 *
 * A real entropy source or nothing: the CPU's own instruction where its
 * ID registers say it exists (x86 RDRAND, CPUID.01H:ECX bit 30; arm64
 * RNDR, ID_AA64ISAR0_EL1.RNDR = 1), else a virtio-rng device (PCI on
 * x86, MMIO on arm64). Never a clock, a counter or a fixed seed: a
 * caller that asks for entropy must be able to tell "none" apart. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bring up the sources this machine has (after PCI/virtio discovery);
 * idempotent. Task context. */
void entropy_init(void);

/* The name of the source entropy_get uses ("rdrand", "rndr",
 * "virtio-rng"), or NULL when the machine has none. */
const char *entropy_source(void);

/* Fill buf with len unpredictable bytes. False (buf's contents
 * unspecified) when no source is present or the source failed: callers
 * that need secrecy must then refuse, never fall back. Task context
 * (virtio-rng may wait for the device). */
bool entropy_get(void *buf, size_t len);

/* ---- the CPU's instruction: each architecture's half ----
 * arch/x86_64/rdrand.c, arch/arm64/rndr.c. They only say whether the
 * instruction exists and run it once; the portable core (kernel/entropy.c)
 * owns the retries, the health check and the choice of source. */

/* "rdrand" or "rndr" when this CPU's ID registers say it has the
 * instruction, else NULL. */
const char *cpu_rng_name(void);
/* One try, only where cpu_rng_name() is not NULL: true with *out set when
 * the instruction delivered a value (x86: CF = 1; arm64: NZCV = 0000),
 * false when it had none ready (it then returns 0; the caller may retry). */
bool cpu_rng_read(uint64_t *out);
