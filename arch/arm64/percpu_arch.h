/* arch/arm64/percpu_arch.h: the arm64 half of per-CPU data. */
#pragma once
#include <stdint.h>

struct cpu_arch {
    uint64_t mpidr;                /* MPIDR_EL1 affinity (MPIDR_AFF_MASK): SGI target */
    uintptr_t stack_lo, stack_hi;  /* the stack this cpu booted on */
};

void cpu_arch_init(unsigned idx, uint64_t mpidr);  /* TPIDR_EL1, VBAR_EL1: this cpu */
void cycles_init(uint64_t cntfrq);                 /* the counter's scale (cpu.c) */
