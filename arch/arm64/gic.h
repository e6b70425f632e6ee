/* arch/arm64/gic.h: the GICv3 (distributor, redistributors, and the
 * system-register CPU interface) and where each interrupt goes. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

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
/* Is intid delivered at the pseudo-NMI priority (PMU, backtrace, panic nmi)? */
bool gic_is_nmi(unsigned intid);
void gic_enable_ppi(unsigned intid);    /* on the calling cpu */
void gic_set_pending_ppi(unsigned intid);   /* on the calling cpu (tests) */
void gic_enable_spi(unsigned intid, bool edge);   /* routed to the boot cpu */
unsigned gic_ack(void);                 /* INTID, GIC_SPURIOUS if none */
void gic_eoi(unsigned intid);
void gic_send_sgi(unsigned sgi, uint64_t mpidr);
irq_handler_fn gic_handler(unsigned intid, void **arg);
