/* arch/arm64/pmu.c: hal/pmu.h on arm64, tick-only for now.
 *
 * The profiler samples on each CPU's generic-timer tick (100 Hz): probe
 * says no counter, arm and disarm do nothing, and no interrupt is ever
 * this backend's. What the part claims is still read and shown by lscpu:
 * MIDR_EL1 (implementer, part), ID_AA64DFR0_EL1.PMUVer (the PMU
 * architecture version) and PMCR_EL0.N (event counters besides the cycle
 * counter; readable at EL1 whenever PMUv3 is implemented). PMUv3
 * overflow sampling replaces this file's insides, behind the same hal. */
#include "arch/arm64/arm64.h"
#include "hal/cpu.h"
#include "hal/pmu.h"
#include "lib/printf.h"

static enum pmu_mode pmu_mode = PMU_MODE_AUTO;

void pmu_set_mode(enum pmu_mode mode) { pmu_mode = mode; }
bool pmu_probe(void) { return false; }
const char *pmu_source_name(void) { return "tick 100Hz"; }
const char *pmu_probe_note(void) { return 0; }
void pmu_arm(void) {}
void pmu_disarm(void) {}
bool pmu_armed(void) { return false; }
bool pmu_nmi_claim(void) { return false; }

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

/* ID_AA64DFR0_EL1.PMUVer, bits 11:8. */
static const char *pmuver_name(unsigned v)
{
    switch (v) {
    case 0x0: return "none";
    case 0x1: return "PMUv3";
    case 0x4: return "PMUv3 for Armv8.1";
    case 0x5: return "PMUv3 for Armv8.4";
    case 0x6: return "PMUv3 for Armv8.5";
    case 0x7: return "PMUv3 for Armv8.7";
    case 0x8: return "PMUv3 for Armv8.8";
    case 0xf: return "IMPLEMENTATION DEFINED (not PMUv3)";
    default:  return "PMUv3, later revision";
    }
}

void pmu_describe(struct printer *p)
{
    uint64_t midr = read_sysreg(midr_el1);
    unsigned imp = (unsigned)(midr >> 24) & 0xff, part = (unsigned)(midr >> 4) & 0xfff;
    pr_printf(p, "vendor:       %s (implementer 0x%02x)\n", implementer_name(imp), imp);
    pr_printf(p, "part:         %s (0x%03x) variant %u revision %u\n",
              imp == 0x41 ? arm_part_name(part) : "-", part,
              (unsigned)(midr >> 20) & 0xf, (unsigned)midr & 0xf);
    pr_printf(p, "cpus:         %u\n", cpu_count());

    unsigned ver = (unsigned)(read_sysreg(id_aa64dfr0_el1) >> 8) & 0xf;
    if (ver == 0 || ver == 0xf) {
        pr_printf(p, "pmu claims:   %s (ID_AA64DFR0_EL1.PMUVer 0x%x)\n", pmuver_name(ver), ver);
    } else {
        unsigned n = (unsigned)(read_sysreg(pmcr_el0) >> 11) & 0x1f;
        pr_printf(p, "pmu claims:   %s (ID_AA64DFR0_EL1.PMUVer 0x%x), %u event counters + cycle counter (PMCR_EL0.N)\n",
                  pmuver_name(ver), ver, n);
    }
    if (pmu_mode == PMU_MODE_OFF)
        pr_puts(p, "pmu=off:     counter never used\n");
    else if (pmu_mode == PMU_MODE_ASSUME)
        pr_puts(p, "pmu=assume:  ignored on arm64 (no counter backend yet)\n");
    pr_puts(p, "probe:        not run (arm64 samples on the timer tick; PMUv3 sampling not wired up yet)\n");
    pr_printf(p, "profile source: %s\n", pmu_source_name());
}
