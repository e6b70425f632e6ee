/* arch/arm64/gic.c: the GICv3. The distributor routes shared peripheral
 * interrupts (SPIs: the UART) to the boot CPU; each CPU's redistributor
 * holds its private ones (SGIs: IPIs, PPIs: its timer); the CPU interface
 * is the ICC_* system registers (ack, end of interrupt, send SGI).
 *
 * Everything is group 1 (the only group an EL1 kernel sees) at one
 * priority, GIC_PRIO_IRQ, so ordinary interrupts never preempt each
 * other; the exceptions are the PMU's PPI (gic_set_nmi_ppi), the
 * backtrace SGI and `panic nmi`'s SGI, one priority group higher
 * (GIC_PRIO_NMI): the kernel masks interrupts by ICC_PMR_EL1 between the
 * two (cpu.c), so those are pseudo-NMIs, taken even while the kernel has
 * interrupts masked. They preempt ordinary handlers too: with
 * ICC_BPR1_EL1 at its minimum the group priority is at least bits 7:4,
 * and 0x2 < 0xa. */
#include "arch/arm64/gic.h"
#include "arch/arm64/arm64.h"
#include "arch/arm64/percpu_arch.h"
#include "kernel/percpu.h"

#define GICD_CTLR       0x0000
#define GICD_TYPER      0x0004
#define GICD_IGROUPR    0x0080
#define GICD_ISENABLER  0x0100
#define GICD_ICENABLER  0x0180
#define GICD_IPRIORITYR 0x0400
#define GICD_ICFGR      0x0c00
#define GICD_IROUTER    0x6000
#define CTLR_RWP        (1u << 31)
#define CTLR_ARE        (1u << 4)
#define CTLR_GRP1       (1u << 1)

#define GICR_TYPER      0x0008
#define GICR_WAKER      0x0014
#define GICR_SGI        0x10000         /* the SGI/PPI frame */
#define GICR_IGROUPR0   0x0080
#define GICR_ISENABLER0 0x0100
#define GICR_ICENABLER0 0x0180
#define GICR_ISPENDR0   0x0200
#define GICR_IPRIORITYR 0x0400
#define WAKER_SLEEP     (1u << 1)
#define WAKER_ASLEEP    (1u << 2)
#define TYPER_VLPIS     (1u << 1)
#define TYPER_LAST      (1u << 4)

#define PRIO            GIC_PRIO_IRQ    /* arm64.h */

static uint64_t gicd = 0x08000000, gicr = 0x080a0000, gicr_size = 0xf60000;
static uint64_t rd_base[MAX_CPUS];
static uint64_t boot_route;             /* GICD_IROUTER value naming the boot cpu */
unsigned gic_nmi_ppi;                   /* the PMU's PPI, or 0: no pseudo-NMI */
uint32_t gic_nmi_fast_id = ~0u;         /* gic.h */
static struct { irq_handler_fn fn; void *arg; } handlers[GIC_MAX_INTID];

/* One byte per INTID in the redistributor's priority registers, written
 * as its word (byte access is allowed, but arm64.h has no 8-bit MMIO
 * helper). */
static void set_priority(uint64_t sgi_frame, unsigned intid, unsigned prio)
{
    uint64_t w = sgi_frame + GICR_IPRIORITYR + (intid & ~3u);
    unsigned sh = (intid & 3) * 8;
    mmio_write32(w, (mmio_read32(w) & ~(0xffu << sh)) | prio << sh);
}


void gic_set_base(uint64_t dist_pa, uint64_t redist_pa, uint64_t redist_size)
{
    gicd = dist_pa;
    gicr = redist_pa;
    gicr_size = redist_size;
}

static bool wait_clear(uint64_t reg, uint32_t bits)
{
    for (long i = 0; i < 10000000; i++)
        if (!(mmio_read32(reg) & bits))
            return true;
    return false;
}

/* MPIDR affinity as GICR_TYPER (bits 32-63) and GICD_IROUTER pack it. */
static uint32_t aff32(uint64_t mpidr)
{
    return (uint32_t)((mpidr >> 32 & 0xff) << 24 | (mpidr & 0xffffff));
}

const char *gic_init(void)
{
    mmio_write32(gicd + GICD_CTLR, 0);
    if (!wait_clear(gicd + GICD_CTLR, CTLR_RWP))
        return "distributor did not finish disabling (GICD_CTLR.RWP stuck)";
    unsigned lines = 32 * ((mmio_read32(gicd + GICD_TYPER) & 0x1f) + 1);
    if (lines > GIC_MAX_INTID)
        lines = GIC_MAX_INTID;
    for (unsigned i = 32; i < lines; i += 32) {
        mmio_write32(gicd + GICD_ICENABLER + i / 8, ~0u);
        mmio_write32(gicd + GICD_IGROUPR + i / 8, ~0u);
    }
    for (unsigned i = 32; i < lines; i += 4)
        mmio_write32(gicd + GICD_IPRIORITYR + i, PRIO * 0x01010101u);
    mmio_write32(gicd + GICD_CTLR, CTLR_ARE | CTLR_GRP1);
    if (!wait_clear(gicd + GICD_CTLR, CTLR_RWP))
        return "distributor did not enable (GICD_CTLR.RWP stuck)";
    uint64_t me = read_sysreg(mpidr_el1);
    boot_route = (me >> 32 & 0xff) << 32 | (me & 0xffffff);
    return 0;
}

static uint64_t find_redist(uint64_t mpidr)
{
    uint32_t want = aff32(mpidr);
    for (uint64_t rd = gicr; rd + 0x20000 <= gicr + gicr_size;) {
        uint64_t typer = mmio_read64(rd + GICR_TYPER);
        if ((uint32_t)(typer >> 32) == want)
            return rd;
        if (typer & TYPER_LAST)
            break;
        rd += (typer & TYPER_VLPIS) ? 0x40000 : 0x20000;
    }
    return 0;
}

const char *gic_init_cpu(void)
{
    struct cpu *c = this_cpu();
    struct cpu_arch *a = c->arch;
    uint64_t rd = find_redist(a->mpidr);
    if (!rd)
        return "no redistributor for this cpu's affinity";
    rd_base[c->index] = rd;

    mmio_write32(rd + GICR_WAKER, mmio_read32(rd + GICR_WAKER) & ~WAKER_SLEEP);
    if (!wait_clear(rd + GICR_WAKER, WAKER_ASLEEP))
        return "redistributor did not wake (GICR_WAKER.ChildrenAsleep stuck)";
    uint64_t sgi = rd + GICR_SGI;
    mmio_write32(sgi + GICR_ICENABLER0, ~0u);
    mmio_write32(sgi + GICR_IGROUPR0, ~0u);
    for (unsigned i = 0; i < 32; i += 4)
        mmio_write32(sgi + GICR_IPRIORITYR + i, PRIO * 0x01010101u);
    /* The pseudo-NMIs: the PMU's PPI (not enabled here: pmu.c enables it
     * when it arms this cpu's counter), the backtrace SGI (so `bt` and a
     * panic reach a cpu that runs with interrupts masked) and `panic nmi`'s
     * SGI. */
    if (gic_nmi_ppi)
        set_priority(sgi, gic_nmi_ppi, GIC_PRIO_NMI);
    set_priority(sgi, SGI_BACKTRACE, GIC_PRIO_NMI);
    set_priority(sgi, SGI_NMI_TEST, GIC_PRIO_NMI);
    mmio_write32(sgi + GICR_ISENABLER0, 0xffff);        /* every SGI */

    write_sysreg(icc_sre_el1, read_sysreg(icc_sre_el1) | 1);   /* system registers */
    isb();
    /* ICC_PMR_EL1 belongs to cpu.c (it is the interrupt mask): set open
     * there at cpu_arch_init, while PSTATE.I still masks everything. */
    write_sysreg(icc_bpr1_el1, 0);
    write_sysreg(icc_ctlr_el1, 0);                      /* EOI also deactivates */
    write_sysreg(icc_igrpen1_el1, 1);
    isb();
    return 0;
}

/* Before any cpu's gic_init_cpu (main.c, via pmu_set_ppi): only a PPI can
 * be the pseudo-NMI, because only a PPI is private to the cpu whose
 * counter raised it. */
void gic_set_nmi_ppi(unsigned intid)
{
    gic_nmi_ppi = intid >= 16 && intid < 32 ? intid : 0;
    gic_nmi_fast_id = gic_nmi_ppi ? gic_nmi_ppi : ~0u;
}

unsigned gic_nmi_intid(void) { return gic_nmi_ppi ? gic_nmi_ppi : GIC_SPURIOUS; }

void gic_set_handler(unsigned intid, irq_handler_fn fn, void *arg)
{
    if (intid >= GIC_MAX_INTID)
        return;
    handlers[intid].arg = arg;
    __atomic_store_n(&handlers[intid].fn, fn, __ATOMIC_RELEASE);
}

irq_handler_fn gic_handler(unsigned intid, void **arg)
{
    if (intid >= GIC_MAX_INTID)
        return 0;
    irq_handler_fn fn = __atomic_load_n(&handlers[intid].fn, __ATOMIC_ACQUIRE);
    *arg = handlers[intid].arg;
    return fn;
}

void gic_enable_ppi(unsigned intid)
{
    uint64_t rd = rd_base[cpu_index()];
    if (rd && intid < 32)
        mmio_write32(rd + GICR_SGI + GICR_ISENABLER0, 1u << intid);
}

/* Test only (testing/nmi_cmds.c): a PPI pending on the calling cpu, as if raised. */
void gic_set_pending_ppi(unsigned intid)
{
    uint64_t rd = rd_base[cpu_index()];
    if (rd && intid >= 16 && intid < 32)
        mmio_write32(rd + GICR_SGI + GICR_ISPENDR0, 1u << intid);
}

void gic_enable_spi(unsigned intid, bool edge)
{
    if (intid < 32 || intid >= GIC_MAX_INTID)
        return;
    uint64_t cfg = gicd + GICD_ICFGR + intid / 16 * 4;
    uint32_t bit = 2u << (intid % 16 * 2);
    mmio_write32(cfg, edge ? mmio_read32(cfg) | bit : mmio_read32(cfg) & ~bit);
    mmio_write64(gicd + GICD_IROUTER + intid * 8, boot_route);
    mmio_write32(gicd + GICD_ISENABLER + intid / 32 * 4, 1u << (intid % 32));
}

/* ICC_SGI1R_EL1: Aff3 [55:48], RS [47:44] (which 16 of Aff0), Aff2 [39:32],
 * INTID [27:24], Aff1 [23:16], target list [15:0] (bit Aff0 % 16). */
void gic_send_sgi(unsigned sgi, uint64_t mpidr)
{
    uint64_t aff0 = mpidr & 0xff;
    uint64_t v = (mpidr >> 32 & 0xff) << 48 | (aff0 >> 4) << 44 |
                 (mpidr >> 16 & 0xff) << 32 | (uint64_t)(sgi & 15) << 24 |
                 (mpidr >> 8 & 0xff) << 16 | 1ull << (aff0 & 15);
    __asm__ volatile("dsb ishst" ::: "memory");     /* the request before the interrupt */
    write_sysreg(icc_sgi1r_el1, v);
    isb();
}
