/* arch/x86_64/lapic.h: the local APIC (xAPIC, MMIO). */
#pragma once
#include <stdbool.h>
#include <stdint.h>

void lapic_init(void);                  /* this CPU: enable, spurious vector, LINT */
void lapic_eoi(void);
uint32_t lapic_id(void);
void lapic_timer_calibrate(void);       /* boot CPU, once: ticks per 10 ms */
void lapic_timer_start(unsigned hz);    /* this CPU: periodic */
bool lapic_timer_prompt(void);          /* this CPU's tick handled promptly (timer_tick_prompt) */
void lapic_send_ipi(uint32_t apic_id, uint32_t vector);
void lapic_send_nmi(uint32_t apic_id);
void lapic_send_init(uint32_t apic_id);
void lapic_send_sipi(uint32_t apic_id, uint32_t page);
extern uint64_t lapic_phys;
