/* arch/arm64/pmu.c: the arm64 backend of the PMU core (kernel/pmu.c,
 * hal/pmu.h): PMUv3's cycle counter, overflowing about every millisecond
 * into the PMU's PPI, taken as a pseudo-NMI.
 *
 * The counter is PMCCNTR_EL0, not event counter 0 with CPU_CYCLES (0x11):
 * both count the same processor cycles, but the cycle counter is there
 * whenever PMUv3 is (PMCR_EL0.N may be 0 event counters, and EL2 can take
 * them all away with MDCR_EL2.HPMN), it is 64 bits wide with PMCR_EL0.LC
 * (so -period needs no width games), and it leaves the event counters to
 * anyone else. cycles_now() stays the generic timer (cpu.c): it is the
 * clock every CPU agrees on; this counter is only the sample source.
 *
 * Armed: PMCCNTR = -period, PMINTENSET.C, PMCNTENSET.C, PMCR.E. When it
 * wraps, PMOVSSET_EL0.C is set and the PMU raises its PPI (the device
 * tree's /pmu interrupt; 23 on QEMU virt), which the GIC delivers above
 * the kernel's interrupt mask (gic.c, cpu.c): a pseudo-NMI, so code that
 * runs with interrupts masked is sampled too. The handler recognises the
 * overflow by PMOVSSET.C, clears it through PMOVSCLR, and reloads the
 * counter to overflow one period after the last wrap. PMCCFILTR_EL0 = 0: EL1 and EL0 both counted, EL2 not.
 *
 * The period comes from the counter's rate, measured by the core's probe
 * against the generic timer over its whole 10 us (po_measure_rate), not
 * assumed: QEMU's TCG counts it at a virtual 1 GHz, real parts at their
 * core clock.
 *
 * ID_AA64DFR0_EL1.PMUVer says whether PMUv3 is offered. An interrupt on
 * the PMU's PPI with PMOVSSET.C set is always the counter's and is
 * claimed, armed or not (po_claims_when_disarmed): nothing else raises
 * that PPI (unlike x86's shared NMI), so an overflow whose interrupt
 * lands after disarm is acknowledged, not panicked on. One with no
 * overflow recorded is nobody's: trap.c panics and names it. */
#include "arch/arm64/arm64.h"
#include "arch/arm64/gic.h"
#include "arch/arm64/pmu_inline.h"
#include "hal/pmu.h"
#include "lib/printf.h"

#define PMCR_E          (1ull << 0)     /* enable (all counters, with PMCNTENSET) */
#define PMCR_P          (1ull << 1)     /* reset event counters (write) */
#define PMCR_C          (1ull << 2)     /* reset the cycle counter (write) */
#define PMCR_D          (1ull << 3)     /* count every 64th cycle: must be clear */
#define PMCR_LC         (1ull << 6)     /* cycle counter overflows at 64 bits, not 32 */
#define PMCR_N(v)       ((unsigned)((v) >> 11) & 0x1f)

static unsigned ppi;                  /* the PMU's PPI, 0: none in the tree */
static unsigned pmuver;               /* ID_AA64DFR0_EL1.PMUVer as read by the offer */

/* ID_AA64DFR0_EL1.PMUVer: 0 none, 0xf IMPLEMENTATION DEFINED (not PMUv3). */
static bool pmuver_is_v3(unsigned v)
{
    return v != 0 && v != 0xf;
}

void pmu_set_ppi(unsigned intid)
{
    ppi = intid >= 16 && intid < 32 ? intid : 0;
    gic_set_nmi_ppi(ppi);
}

static enum pmu_offer pmuv3_offer(bool assume)
{
    pmuver = (unsigned)(pmu_reg_read(PMREG_ID_AA64DFR0) >> 8) & 0xf;
    if (pmuver_is_v3(pmuver))
        return PMU_OFFER_HW;
    return assume ? PMU_OFFER_ASSUMED : PMU_OFFER_NONE;
}

/* The counter counts, but without an interrupt it cannot sample. */
static const char *pmuv3_refuse(void)
{
    return ppi ? NULL : "counts, but the device tree names no PMU interrupt (/pmu)";
}

/* PMCCFILTR_EL0 = 0 and PMCR.D clear: firmware may have left EL1 filtered
 * out or the every-64th-cycle divider on, and either would make the rate
 * (and so the period) a lie. */
static uint64_t pmuv3_probe_start(void)
{
    uint64_t pmcr = pmu_reg_read(PMREG_PMCR);
    pmu_reg_write(PMREG_PMCNTENCLR, PMUV3_CCNT);
    pmu_reg_write(PMREG_PMINTENCLR, PMUV3_CCNT);
    pmu_reg_write(PMREG_PMCCFILTR, 0);
    pmu_reg_write(PMREG_PMCR, (pmcr & ~(PMCR_D | PMCR_C | PMCR_P)) | PMCR_LC | PMCR_E);
    pmu_reg_write(PMREG_PMCCNTR, 0);
    pmu_reg_write(PMREG_PMCNTENSET, PMUV3_CCNT);
    isb();
    return pmcr;
}

static uint64_t pmuv3_probe_read(void)
{
    return pmu_reg_read(PMREG_PMCCNTR);
}

/* Stopped is how it was found: nothing else in Sonde uses the PMU. */
static void pmuv3_probe_stop(uint64_t pmcr)
{
    pmu_reg_write(PMREG_PMCNTENCLR, PMUV3_CCNT);
    pmu_reg_write(PMREG_PMCR, pmcr & ~(PMCR_C | PMCR_P));
    isb();
}

static void pmuv3_arm(uint64_t period)
{
    pmu_reg_write(PMREG_PMCNTENCLR, PMUV3_CCNT);
    pmu_reg_write(PMREG_PMINTENCLR, PMUV3_CCNT);
    /* A status bit left from before (an overflow claimed late, or a
     * disarm that stopped the counter after it wrapped) would raise the
     * interrupt at once and be taken for a fresh period. */
    pmu_reg_write(PMREG_PMOVSCLR, PMUV3_CCNT);
    pmu_reg_write(PMREG_PMCCFILTR, 0);
    uint64_t pmcr = pmu_reg_read(PMREG_PMCR) & ~(PMCR_D | PMCR_C | PMCR_P);
    pmu_reg_write(PMREG_PMCR, pmcr | PMCR_LC | PMCR_E);
    pmu_reg_write(PMREG_PMCCNTR, 0 - period);
    pmu_reg_write(PMREG_PMINTENSET, PMUV3_CCNT);
    gic_enable_ppi(ppi);                 /* this cpu's redistributor */
    isb();
    /* Enabled last: everything it triggers is set up by now. */
    pmu_reg_write(PMREG_PMCNTENSET, PMUV3_CCNT);
    isb();
}

/* The overflow status is left alone: an interrupt already raised must
 * still find PMOVSSET.C when it is taken. Disabling PMINTEN drops the
 * request, so a stopped counter raises nothing more. An overflow taken
 * between these writes and the core's clearing of the armed flag is
 * reloaded by pmuv3_nmi_ack, harmlessly: the counter is already disabled. */
static void pmuv3_disarm(void)
{
    pmu_reg_write(PMREG_PMCNTENCLR, PMUV3_CCNT);
    pmu_reg_write(PMREG_PMINTENCLR, PMUV3_CCNT);
    isb();
}

/* The table's entry is the inline half's (arch/arm64/pmu_inline.h),
 * which the NMI calls directly. */
static bool pmuv3_nmi_ack(uint64_t period)
{
    return pmu_nmi_ack_inline(period);
}

/* ---- lscpu ---- */

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

/* PMCR_EL0 is read only where PMUv3 is offered: without it the register
 * may not exist. */
static void describe_offers(struct printer *p)
{
    if (!pmuver_is_v3(pmuver)) {
        pr_printf(p, "%s (ID_AA64DFR0_EL1.PMUVer 0x%x)\n", pmuver_name(pmuver), pmuver);
        return;
    }
    unsigned n = PMCR_N(pmu_reg_read(PMREG_PMCR));
    pr_printf(p, "%s (ID_AA64DFR0_EL1.PMUVer 0x%x), %u event counters + cycle counter (PMCR_EL0.N)\n",
              pmuver_name(pmuver), pmuver, n);
}

static void describe_interrupt(struct printer *p)
{
    if (ppi)
        pr_printf(p, "interrupt:    PPI %u (device tree /pmu), pseudo-NMI: GIC priority 0x%x, mask 0x%x\n",
                  ppi, GIC_PRIO_NMI, PMR_IRQ_OFF);
    else
        pr_puts(p, "interrupt:    none (the device tree has no /pmu interrupt)\n");
}

static void pmuv3_describe(struct printer *p, enum pmu_describe_at at)
{
    uint64_t claimed, stale;
    switch (at) {
    case PMU_AT_OFFER:
        describe_offers(p);
        break;
    case PMU_AT_ASSUMED:
        pr_puts(p, "PMUv3 were claimed\n");
        break;
    case PMU_AT_WIRING:
        describe_interrupt(p);
        break;
    case PMU_AT_COUNTS:
        pmu_overflow_counts(&claimed, &stale);
        pr_printf(p, "overflows:    %llu claimed since boot, %llu of them after disarm\n",
                  (unsigned long long)claimed, (unsigned long long)stale);
        break;
    }
}

static const struct pmu_ops pmuv3_ops = {
    .po_name = "pmu/pseudo-nmi arm64 pmuv3 cycles",
    .po_what = "PMUv3 cycle counter",
    .po_counter = "cycle counter",
    .po_offered_by = "ID_AA64DFR0_EL1",
    .po_measure_rate = true,
    .po_claims_when_disarmed = true,
    .po_max_period = UINT64_MAX,          /* 64 bits wide with PMCR.LC */
    .po_offer = pmuv3_offer,
    .po_refuse = pmuv3_refuse,
    .po_probe_start = pmuv3_probe_start,
    .po_probe_read = pmuv3_probe_read,
    .po_probe_stop = pmuv3_probe_stop,
    .po_arm = pmuv3_arm,
    .po_disarm = pmuv3_disarm,
    .po_nmi_ack = pmuv3_nmi_ack,
};

static const struct pmu_ops *const pmuv3_tables[] = { &pmuv3_ops, NULL };
/* The NMI acknowledges through pmu_nmi_ack_inline, not the table: that
 * holds only while this is the one counter the probe can pick. */
_Static_assert(sizeof pmuv3_tables / sizeof pmuv3_tables[0] == 2,
               "PMU_NMI_ACK_INLINE assumes one arm64 counter backend");

const struct pmu_backends pmu_backends = {
    .pb_ops = pmuv3_tables,
    .pb_family = "PMUv3",
    .pb_describe = pmuv3_describe,
};
