/* arch/arm64/cpu_inline.h: hal/cpu.h's inline reads for the sample path
 * (see there). TPIDR_EL1 holds this CPU's struct cpu (cpu.c), whose offsets cpu.c asserts; the clock
 * is cpu.c's cycles_now(), the generic timer scaled by cycles_shift. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "arch/arm64/arm64.h"

struct cpu;
#define CPU_OFF_INDEX 16           /* offsetof(struct cpu, index) */
#define CPU_OFF_HEAP_LEFT 24       /* offsetof(struct cpu, heap_left) */
extern unsigned cycles_shift;      /* cpu.c: set once at boot */

static inline uint64_t cycles_now_inline(void)
{
    uint64_t v;
    /* The isb: no read of the counter ahead of earlier code (cpu.c). */
    __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v) : : "memory");
    return v << cycles_shift;
}

static inline struct cpu *this_cpu_inline(void)
{
    struct cpu *c;
    __asm__ volatile("mrs %0, tpidr_el1" : "=r"(c));
    return c;
}

static inline unsigned cpu_index_inline(void)
{
    return *(const unsigned *)((const char *)this_cpu_inline() + CPU_OFF_INDEX);
}

/* This CPU's heap_left -= n; true when it went below zero: every kmalloc
 * runs it (mm/heapprof.h). A load-store machine has no subtract into
 * memory, so it is the register read, a load, the subtract, a store and
 * the branch. Interrupts off, under the heap's lock. */
static inline bool cpu_heap_countdown(uint64_t n)
{
    int64_t *left = (int64_t *)((char *)this_cpu_inline() + CPU_OFF_HEAP_LEFT);
    return (*left -= (int64_t)n) < 0;
}

/* A 32-bit word of the kernel's own data, given by its symbol, by one
 * PC-relative literal load where the usual adrp; ldr is two: the
 * switch path's test of the profiler's gate (kernel/prof/offcpu.h). LDR
 * (literal) reaches +-1 MiB of the instruction and needs the word
 * 4-aligned: should the kernel ever grow so that the word lies farther,
 * the link fails ("relocation truncated"), it never reads wrong. A plain
 * read, not an atomic; volatile so that it is read where it is written. */
#define cpu_load_near_u32(sym) \
    ({ unsigned v_; __asm__ volatile("ldr %w0, " #sym : "=r"(v_)); v_; })

/* cpu.c's irqs_enabled(), whole: PSTATE.I set (every exception handler
 * before trap.c unmasks) is off; else the PMR says (arm64.h). */
static inline bool irqs_enabled_inline(void)
{
    if (read_sysreg(daif) & (1ul << 7))
        return false;
    return !cpu_pmr_masking || read_sysreg(icc_pmr_el1) > GIC_PRIO_IRQ;
}
