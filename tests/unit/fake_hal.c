/* tests/unit/fake_hal.c: hal/cpu.h and hal/irq.h on the host: the fake
 * CPU that the plain calls answer from, and that the inline twins
 * (arch/host/cpu_inline.h, arch/host/trap_inline.h) read. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "fake_hal.h"
#include "hal/cpu.h"
#include "hal/entropy.h"
#include "hal/irq.h"

/* The CPU a thread runs as, its clock and its interrupt state are the
 * thread's own: a single-threaded test sees plain globals, and a test
 * that runs CPUs on threads (test_prof_ring-threads.c) gives each thread
 * its CPU without the fakes racing. */
_Thread_local unsigned fake_cpu;
unsigned fake_ncpus = 4;
uint64_t fake_online = 0xf;
_Thread_local uint64_t fake_cycles = 1000;
uint64_t fake_cycles_step = 1;
uint64_t fake_cycles_per_us = 1000;
_Thread_local int fake_irq_depth;

unsigned long irq_save(void) { return (unsigned long)fake_irq_depth++; }
void irq_restore(unsigned long flags) { fake_irq_depth = (int)flags; }
bool irqs_enabled(void) { return fake_irq_depth == 0; }
void fake_irqs_off(void (*fn)(void))
{
    unsigned long f = irq_save();
    fn();
    irq_restore(f);
}
void cpu_relax(void) {}
void irq_enable(void) { fake_irq_depth = 0; }
void cpu_kick(unsigned idx) { (void)idx; }
void cpu_ask_backtrace(unsigned idx) { (void)idx; }
void cpu_idle(void) {}
void cpu_stop(void) { abort(); }
/* Weak: a test of the real kernel/cpus.c links it instead. */
__attribute__((weak)) unsigned cpu_index(void) { return fake_cpu; }
__attribute__((weak)) unsigned cpu_count(void) { return fake_ncpus; }
__attribute__((weak)) bool cpu_online(unsigned i) { return i < 64 && (fake_online >> i) & 1; }
uint64_t cycles_now(void) { uint64_t c = fake_cycles; fake_cycles += fake_cycles_step; return c; }
uint64_t cycles_per_us(void) { return fake_cycles_per_us; }
const char *cycles_unit(void) { return "cycles"; }

/* Weak: a test of the real core (kernel/entropy.c) links it instead. */
const char *fake_entropy_name = "fake";
unsigned fake_entropy_calls;
__attribute__((weak)) void entropy_init(void) {}
__attribute__((weak)) const char *entropy_source(void) { return fake_entropy_name; }
__attribute__((weak)) bool entropy_get(void *buf, size_t len)
{
    if (!fake_entropy_name)
        return false;
    uint64_t x = 0x9e3779b97f4a7c15ull * ++fake_entropy_calls;
    for (size_t i = 0; i < len; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        ((unsigned char *)buf)[i] = (unsigned char)x;
    }
    return true;
}

uintptr_t trap_pc(const struct trap_frame *tf) { return tf->pc; }
uintptr_t trap_sp(const struct trap_frame *tf) { return tf->sp; }
uintptr_t trap_fp(const struct trap_frame *tf) { return tf->fp; }
uintptr_t fake_trap_link;
void (*fake_trap_read_hook)(void);
void (*fake_nmi_window_hook)(unsigned step);
/* As the kernel's trap.c, the inline half out of line. */
void trap_regs(const struct trap_frame *tf, struct trap_regs *r)
{
    trap_regs_inline(tf, r);
}

jmp_buf fake_panic_jb;
bool fake_panic_armed;
int fake_panic_calls;
char fake_panic_msg[256];

void panic(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void panic(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fake_panic_msg, sizeof fake_panic_msg, fmt, ap);
    va_end(ap);
    fake_panic_calls++;
    if (fake_panic_armed)
        longjmp(fake_panic_jb, 1);
    fprintf(stderr, "unexpected panic: %s\n", fake_panic_msg);
    abort();
}
