/* arch/arm64/rndr.c: hal/entropy.h's CPU half on arm64: RNDR (FEAT_RNG).
 *
 * ID_AA64ISAR0_EL1.RNDR (bits 63:60) = 0b0001 says RNDR and RNDRRS exist;
 * other values are none or reserved. Reading RNDR sets NZCV to 0b0000 with
 * a random value, or to 0b0100 (Z) with 0 when none could be made in a
 * reasonable time (Arm ARM, D23.2 "RNDR, Random Number"). The register is
 * named by its encoding, S3_3_C2_C4_0: the kernel is built for Armv8.0,
 * whose assembler does not know the name. The retries are the portable
 * core's (kernel/entropy.c). */
#include "arch/arm64/arm64.h"
#include "hal/entropy.h"

#define ID_AA64ISAR0_RNDR_SHIFT 60
#define ID_AA64ISAR0_RNDR_IMPL  1u

const char *cpu_rng_name(void)
{
    uint64_t isar0 = read_sysreg(id_aa64isar0_el1);
    unsigned rndr = (unsigned)(isar0 >> ID_AA64ISAR0_RNDR_SHIFT) & 0xf;
    return rndr == ID_AA64ISAR0_RNDR_IMPL ? "rndr" : 0;
}

bool cpu_rng_read(uint64_t *out)
{
    uint64_t v, ok;
    __asm__ volatile("mrs %0, s3_3_c2_c4_0\n\t"
                     "cset %1, ne"                 /* Z clear: a value was delivered */
                     : "=r"(v), "=r"(ok) :: "cc");
    *out = v;
    return ok != 0;
}
