/* arch/arm64/cpu_inline.h: hal/cpu.h's inline reads for the sample path
 * (see there). TPIDR_EL1 holds this CPU's struct cpu (cpu.c), whose offsets cpu.c asserts; the clock
 * is cpu.c's cycles_now(), the generic timer scaled by cycles_shift. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "arch/arm64/arm64.h"

struct cpu;
#define CPU_OFF_INDEX 16           /* offsetof(struct cpu, index) */
#define CPU_OFF_HEAP_LEFT 24       /* offsetof(struct cpu, heap_left): unused here */
extern unsigned cycles_shift;      /* cpu.c: set once at boot */

static inline uint64_t cycles_now_inline(void)
{
    uint64_t v;
    /* The isb: no read of the counter ahead of earlier code (cpu.c). */
    __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v) : : "memory");
    return v << cycles_shift;
}

/* The clock in its own ticks, for a lock's hold (kernel/lockstat.h):
 * CNTVCT_EL0 unscaled and without the isb, two instructions fewer on
 * every timed lock; a read a few instructions early is no matter to a
 * hold. cycles_now() units are ticks << cycles_ticks_shift(). */
static inline uint64_t cycles_ticks_inline(void)
{
    uint64_t v;
    __asm__ volatile("mrs %0, cntvct_el0" : "=r"(v) : : "memory");
    return v;
}
static inline unsigned cycles_ticks_shift(void) { return cycles_shift; }

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

/* Heap profiling's countdown (mm/heapprof.h) lives in x18, not in struct
 * cpu: x18 is AAPCS64's platform register, the kernel has no other use
 * for it, and every kernel object is built with -ffixed-x18
 * (arch/arm64/build.mk), so no compiled code touches it. A load-store
 * machine has no subtract into memory: through TPIDR_EL1 the count was
 * mrs; ldr; sub; str; tbnz (5 instructions), in x18 it is subs; b.mi (2).
 *
 * x18 belongs to the CPU, not to what runs on it: exception exits do not
 * restore it from the trap frame (a task preempted on one CPU resumes on
 * another; an interrupt handler allocates; a rate change rewrites it by
 * SGI), and arch_switch neither saves nor loads it (vectors.S). boot.S
 * sets it to 0 on every CPU before C runs, so that the first allocation
 * crosses and draws a threshold at whatever rate is set, as a zeroed
 * struct cpu did. */

/* This CPU's countdown -= n; true when it went below zero: every kmalloc
 * runs it. Interrupts off, under the heap's lock. */
static inline bool cpu_heap_countdown(uint64_t n)
{
    bool neg;
    __asm__ volatile("subs x18, x18, %1" : "=@ccmi"(neg) : "r"(n));
    return neg;
}

static inline int64_t cpu_heap_left(void)
{
    int64_t v;
    __asm__ volatile("mov %0, x18" : "=r"(v));
    return v;
}

static inline void cpu_heap_left_set(int64_t v)
{
    __asm__ volatile("mov x18, %0" : : "r"(v));
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
