/* arch/arm64/gic.h: the GICv3 (distributor, redistributors, and the
 * system-register CPU interface) and where each interrupt goes. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "arch/arm64/arm64.h"

struct trap_frame;
typedef void (*irq_handler_fn)(struct trap_frame *tf, void *arg);

#define GIC_MAX_INTID 1020              /* 0-15 SGI, 16-31 PPI, 32-1019 SPI */
#define GIC_SPURIOUS  1023

void gic_set_base(uint64_t dist_pa, uint64_t redist_pa, uint64_t redist_size);
const char *gic_init(void);             /* distributor (boot cpu); NULL or why not */
const char *gic_init_cpu(void);         /* this cpu's redistributor + cpu interface */
void gic_set_handler(unsigned intid, irq_handler_fn fn, void *arg);
/* The PPI raised above the interrupt mask (the PMU's): set before
 * gic_init_cpu; 0 for none. gic_nmi_intid: it, or GIC_SPURIOUS if none. */
void gic_set_nmi_ppi(unsigned intid);
unsigned gic_nmi_intid(void);
void gic_enable_ppi(unsigned intid);    /* on the calling cpu */
void gic_set_pending_ppi(unsigned intid);   /* on the calling cpu (tests) */
void gic_enable_spi(unsigned intid, bool edge);   /* routed to the boot cpu */
void gic_send_sgi(unsigned sgi, uint64_t mpidr);
irq_handler_fn gic_handler(unsigned intid, void **arg);

/* ---- every interrupt's path (trap.c): inline, no call each ---------- */

extern unsigned gic_nmi_ppi;            /* gic_set_nmi_ppi's PPI, or 0 */
/* What vectors.S compares each acknowledged INTID with to take the PMU's
 * short path: the PPI, or ~0 (no INTID reads so) when there is none. */
extern uint32_t gic_nmi_fast_id;

/* Is intid delivered at the pseudo-NMI priority (PMU, backtrace, panic nmi)? */
static inline bool gic_is_nmi(unsigned intid)
{
    return (intid == gic_nmi_ppi && intid != 0) || intid == SGI_BACKTRACE ||
           intid == SGI_NMI_TEST;
}

/* The INTID vectors.S acknowledged (ICC_IAR1_EL1, with the dsb that
 * keeps the handler's memory accesses, the device state it was woken
 * for, from being performed ahead of the acknowledge, which a
 * system-register read does not order by itself; Linux's gic_read_iar
 * keeps the same barrier), GIC_SPURIOUS if none. The read acknowledged:
 * the interrupt is active from there. */
static inline unsigned gic_acked(uint64_t iar)
{
    return (unsigned)(iar & 0xffffff);
}

/* Priority drop and deactivation in one write (ICC_CTLR_EL1.EOImode 0,
 * gic_init_cpu): the cheapest sequence there is, one register write and
 * no separate ICC_DIR_EL1. The isb is the context synchronization after
 * which the write's effect (the running priority dropped) is guaranteed
 * for what follows: an ordinary handler may switch tasks right after
 * (sched_preempt) and run there with interrupts on. Linux's
 * gic_write_eoir keeps it too. */
static inline void gic_eoi(unsigned intid)
{
    write_sysreg(icc_eoir1_el1, intid);
    isb();
}
