/* arch/x86_64/cpu_inline.h: hal/cpu.h's inline reads for the sample path
 * (see there). GS base points at this CPU's struct cpu (cpu.c), so its
 * fields are one %gs-relative load each; cpu.c asserts the offsets. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

struct cpu;
#define CPU_OFF_INDEX 16           /* offsetof(struct cpu, index) */
#define CPU_OFF_HEAP_LEFT 24       /* offsetof(struct cpu, heap_left) */

static inline uint64_t cycles_now_inline(void)
{
    uint32_t lo, hi;
    /* "memory": the sampler's cost is timed around its work, which
     * must not move across either read. */
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
    return ((uint64_t)hi << 32) | lo;
}

/* The clock in its own ticks (kernel/lockstat.h): the TSC is that. */
static inline uint64_t cycles_ticks_inline(void) { return cycles_now_inline(); }
static inline unsigned cycles_ticks_shift(void) { return 0; }

static inline unsigned cpu_index_inline(void)
{
    unsigned idx;
    __asm__ volatile("movl %%gs:%c1, %0" : "=r"(idx) : "i"(CPU_OFF_INDEX));
    return idx;
}

/* This CPU's heap_left -= n; true when it went below zero. One
 * %gs-relative subtract and a branch on its sign flag: every kmalloc
 * runs it (mm/heapprof.h). Interrupts off, under the heap's lock. */
static inline bool cpu_heap_countdown(uint64_t n)
{
    bool neg;
    __asm__ volatile("subq %1, %%gs:%c2" : "=@ccs"(neg) : "r"(n), "i"(CPU_OFF_HEAP_LEFT)
                     : "memory");
    return neg;
}

/* This CPU's countdown itself, for heapprof's slow path. */
static inline int64_t cpu_heap_left(void)
{
    int64_t v;
    __asm__ volatile("movq %%gs:%c1, %0" : "=r"(v) : "i"(CPU_OFF_HEAP_LEFT) : "memory");
    return v;
}

static inline void cpu_heap_left_set(int64_t v)
{
    __asm__ volatile("movq %0, %%gs:%c1" : : "r"(v), "i"(CPU_OFF_HEAP_LEFT) : "memory");
}

static inline struct cpu *this_cpu_inline(void)
{
    struct cpu *c;
    __asm__ volatile("movq %%gs:0, %0" : "=r"(c));
    return c;
}

static inline bool irqs_enabled_inline(void)
{
    unsigned long f;
    __asm__ volatile("pushfq; popq %0" : "=r"(f));
    return f & (1ul << 9);          /* IF */
}

/* A 32-bit word of the kernel's own data, given by its symbol: a plain
 * read, which GCC folds into the instruction that tests it (testb $k,
 * sym). arm64's needs a literal load to be one instruction. */
#define cpu_load_near_u32(sym) (*(const unsigned *)&(sym))
