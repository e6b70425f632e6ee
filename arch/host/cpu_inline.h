/* arch/host/cpu_inline.h: hal/cpu.h's inline reads for host unit tests,
 * the twin of arch/<arch>/cpu_inline.h. Where the kernel reads a register
 * (the TSC or the generic timer, GS base or TPIDR_EL1, RFLAGS.IF or the
 * PMR), a host test reads its fake CPU: the same functions
 * tests/unit/fake_hal.c answers the plain calls with (fake_cpu,
 * fake_cycles, the fake interrupt depth), so that a plain call and an
 * inline read never disagree. this_cpu() is the test's own struct cpu
 * array (tests/unit/fake_profiler.c), as GS base or TPIDR_EL1 points at
 * the kernel's. Everything above these four reads, the sample path
 * included, is the kernel's own code. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

struct cpu;
struct cpu *this_cpu(void);
#define CPU_OFF_HEAP_LEFT 24       /* offsetof(struct cpu, heap_left) */

static inline uint64_t cycles_now_inline(void) { return cycles_now(); }
static inline uint64_t cycles_ticks_inline(void) { return cycles_now(); }
static inline unsigned cycles_ticks_shift(void) { return 0; }
static inline unsigned cpu_index_inline(void) { return cpu_index(); }
static inline struct cpu *this_cpu_inline(void) { return this_cpu(); }
static inline bool irqs_enabled_inline(void) { return irqs_enabled(); }
/* The countdown in memory, struct cpu's heap_left, as on x86-64 (arm64
 * keeps it in x18): the tests read and set it there. */
static inline int64_t *cpu_heap_left_ptr(void)
{
    return (int64_t *)((char *)this_cpu() + CPU_OFF_HEAP_LEFT);
}
static inline bool cpu_heap_countdown(uint64_t n)
{
    return (*cpu_heap_left_ptr() -= (int64_t)n) < 0;
}
static inline int64_t cpu_heap_left(void) { return *cpu_heap_left_ptr(); }
static inline void cpu_heap_left_set(int64_t v) { *cpu_heap_left_ptr() = v; }

/* The kernel's one-instruction read of a word by its symbol (arm64's
 * literal load): a plain read here. */
#define cpu_load_near_u32(sym) (*(const unsigned *)&(sym))
