/* arch/arm64/sha256.c: hal/sha256.h's half on arm64: the Armv8 SHA-256
 * instructions (sha256_a64.S), where ID_AA64ISAR0_EL1.SHA2 (bits 15:12)
 * is 0b0001 (SHA256H, SHA256H2, SHA256SU0, SHA256SU1) or 0b0010 (those
 * and SHA-512's); 0b0000 is none (Arm ARM, D23.2 "ID_AA64ISAR0_EL1").
 *
 * The vector registers. The kernel is built -mgeneral-regs-only and
 * never saves v0-v31 on a context switch or an exception entry; EL1 may
 * execute SIMD at all only because cpu_arch_init sets CPACR_EL1.FPEN on
 * every CPU. sha256_a64_blocks is the only code in the kernel that
 * touches a vector register, and it runs with interrupts masked
 * (irq_save): no ordinary interrupt can then preempt it, so no other task
 * on this CPU can run it halfway through. The PMU's pseudo-NMI still
 * comes in (irq_save masks by ICC_PMR_EL1, cpu.c), and that is safe
 * because its path (vectors.S's pmu_nmi, kernel/prof's sample path) is C
 * built -mgeneral-regs-only and assembly that saves and uses only x
 * registers. Any other code that uses SIMD must do the same, or the
 * kernel must start saving the vector registers. */
#include "arch/arm64/arm64.h"
#include "arch/arm64/sha256.h"
#include "hal/cpu.h"
#include "hal/sha256.h"

#define ID_AA64ISAR0_SHA2_SHIFT 12

/* At most this many blocks per interrupts-off stretch (~100 instructions
 * each): a datagram (at most 23 blocks) is one stretch, and a long input
 * still lets the tick in every 4 KiB. */
#define SHA256_A64_BLOCKS_MASKED 64

static void sha256_blocks_a64(uint32_t h[8], const uint8_t *p, size_t nblocks)
{
    while (nblocks > 0) {
        size_t n = nblocks < SHA256_A64_BLOCKS_MASKED ? nblocks : SHA256_A64_BLOCKS_MASKED;
        unsigned long flags = irq_save();
        sha256_a64_blocks(h, p, n);
        irq_restore(flags);
        p += n * SHA256_BLOCK;
        nblocks -= n;
    }
}

sha256_blocks_fn *cpu_sha256_blocks(const char **what)
{
    unsigned sha2 = (unsigned)(read_sysreg(id_aa64isar0_el1) >> ID_AA64ISAR0_SHA2_SHIFT) & 0xf;
    if (sha2 == 1 || sha2 == 2) {
        *what = "arm64 SHA-256 instructions (ID_AA64ISAR0_EL1.SHA2)";
        return sha256_blocks_a64;
    }
    *what = sha2 == 0 ? "this CPU has no SHA-256 instructions (ID_AA64ISAR0_EL1.SHA2 = 0)"
                      : "ID_AA64ISAR0_EL1.SHA2 holds a reserved value";
    return 0;
}
