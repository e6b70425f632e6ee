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
