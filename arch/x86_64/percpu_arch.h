/* arch/x86_64/percpu_arch.h: the x86-64 half of per-CPU data. */
#pragma once
#include <stdint.h>
#include "arch/x86_64/layout.h"

struct tss {
    uint32_t reserved0;
    uint64_t rsp[3];
    uint64_t reserved1;
    uint64_t ist[7];
    uint64_t reserved2;
    uint16_t reserved3;
    uint16_t iomap_base;
} __attribute__((packed));
_Static_assert(sizeof(struct tss) == 104, "TSS layout");

enum { IST_NMI = 1, IST_DF = 2, IST_MC = 3 };

struct cpu_arch {
    uint64_t gdt[5];               /* null, code, data, TSS (two slots) */
    struct tss tss;
    uint8_t ist_stack[3][IST_STACK_SIZE] __attribute__((aligned(16)));
    uint8_t irq_stack[IRQ_STACK_SIZE] __attribute__((aligned(16)));
};

void cpu_arch_init(unsigned idx);  /* GDT, TSS, IST stacks, GS base: this CPU */
void cycles_set_rate(uint64_t per_us);  /* the calibrated TSC rate (cpu.c) */
