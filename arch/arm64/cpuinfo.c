/* arch/arm64/cpuinfo.c: what the CPU says it is, from MIDR_EL1: the
 * implementer and, for Arm's own cores, the part.
 *
 * Apart from cpu.c, and reading MIDR through pmu_reg_read (arm64.h), so
 * that host unit tests can link it against the simulated PMU's ID
 * registers (tests/unit/sim_pmu_a64.c). */
#include "arch/arm64/arm64.h"
#include "hal/cpu.h"
#include "lib/printf.h"

#define MIDR_IMPLEMENTER_ARM 0x41

static const char *implementer_name(unsigned imp)
{
    switch (imp) {
    case 0x00: return "software (QEMU max or similar)";
    case 0x41: return "ARM";
    case 0x42: return "Broadcom";
    case 0x43: return "Cavium";
    case 0x46: return "Fujitsu";
    case 0x48: return "HiSilicon";
    case 0x4e: return "NVIDIA";
    case 0x50: return "Applied Micro";
    case 0x51: return "Qualcomm";
    case 0x53: return "Samsung";
    case 0x61: return "Apple";
    case 0xc0: return "Ampere";
    default:   return "unknown";
    }
}

static const char *arm_part_name(unsigned part)
{
    switch (part) {
    case 0xd03: return "Cortex-A53";
    case 0xd04: return "Cortex-A35";
    case 0xd05: return "Cortex-A55";
    case 0xd07: return "Cortex-A57";
    case 0xd08: return "Cortex-A72";
    case 0xd09: return "Cortex-A73";
    case 0xd0a: return "Cortex-A75";
    case 0xd0b: return "Cortex-A76";
    case 0xd0c: return "Neoverse-N1";
    case 0xd0d: return "Cortex-A77";
    case 0xd40: return "Neoverse-V1";
    case 0xd41: return "Cortex-A78";
    case 0xd44: return "Cortex-X1";
    case 0xd46: return "Cortex-A510";
    case 0xd47: return "Cortex-A710";
    case 0xd49: return "Neoverse-N2";
    case 0xd4f: return "Neoverse-V2";
    default:    return "unknown part";
    }
}

/* Part numbers are the implementer's own: only Arm's are named here. */
void cpu_describe(struct printer *p)
{
    uint64_t midr = pmu_reg_read(PMREG_MIDR);
    unsigned imp = (unsigned)(midr >> 24) & 0xff, part = (unsigned)(midr >> 4) & 0xfff;
    pr_printf(p, "vendor:       %s (implementer 0x%02x)\n", implementer_name(imp), imp);
    pr_printf(p, "part:         %s (0x%03x) variant %u revision %u\n",
              imp == MIDR_IMPLEMENTER_ARM ? arm_part_name(part) : "-", part,
              (unsigned)(midr >> 20) & 0xf, (unsigned)midr & 0xf);
    pr_printf(p, "cpus:         %u\n", cpu_count());
}
