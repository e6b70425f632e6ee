/* kernel/panic.h: stop the machine with a report. */
#pragma once
#include <stdint.h>

struct trap_frame;

void panic(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* From an exception or an unexpected NMI: the walk starts at the faulting
 * context (tf), not in the handler. */
void panic_trap(const struct trap_frame *tf, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 2, 3)));
extern volatile int panic_cpu;        /* -1, or the CPU that is panicking */

/* Invariants. BUG_ON(cond) panics naming the condition, file and line when
 * cond holds; ASSERT(cond) is its positive form. They stay in every build:
 * an invariant that is silently clamped instead (a bad CPU index turned
 * into CPU 0) corrupts some other CPU's state and shows up much later as
 * a wrong profile, far from its cause. Cheap enough for interrupt and NMI
 * context: one compare on the path that holds. */
#define BUG_ON(cond)                                                        \
    do {                                                                    \
        if (__builtin_expect(!!(cond), 0))                                  \
            panic("BUG: %s at %s:%d", #cond, __FILE__, __LINE__);           \
    } while (0)
#define ASSERT(cond) BUG_ON(!(cond))
