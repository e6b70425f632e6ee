/* arch/x86_64/ioapic.h: the IOAPIC and the legacy PIC. */
#pragma once
#include <stdint.h>

void pic_disable(void);                 /* remap out of the exception range, mask all */
void ioapic_init(void);
void ioapic_route_isa(unsigned irq, unsigned vector);     /* applies MADT overrides */
void ioapic_route_gsi(unsigned gsi, unsigned vector, int level, int active_low);
