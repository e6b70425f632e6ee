/* hal/cpu.h: what portable code may ask of the CPU it runs on.
 *
 * Plain functions, not inline asm, so that host unit tests can link fakes
 * (tests/unit/fake_hal.c) against the real portable sources; the few
 * reads the sample path makes inline come last. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define MAX_CPUS 64

struct printer;

/* Interrupts off, returning the old state. x86: IF clear (an NMI still
 * arrives); arm64: the GIC priority mask, which lets the PMU's pseudo-NMI
 * through. */
unsigned long irq_save(void);
void irq_restore(unsigned long flags);   /* restore what irq_save returned */
bool irqs_enabled(void);
void irq_enable(void);
void cpu_kick(unsigned idx);            /* wake CPU idx to reschedule (IPI) */
/* Send CPU idx the backtrace interrupt, which it takes even with interrupts
 * masked (x86: NMI; arm64: a pseudo-NMI SGI). kernel/backtrace.c's protocol. */
void cpu_ask_backtrace(unsigned idx);
/* Raise the NMI (pseudo-NMI on arm64) on this CPU with no one expecting
 * it: `panic nmi` uses it to show a genuine NMI is never swallowed. */
void cpu_send_nmi_self(void);
void cpu_relax(void);                    /* spin-wait hint (x86 PAUSE, arm64 YIELD) */
void cpu_stop(void) __attribute__((noreturn));  /* interrupts off, halt for good */
void cpu_idle(void);                     /* enable interrupts and halt until one comes */

/* A heap-profiling rate change (mm/heapprof.c's heapprof_set_rate,
 * heap lock held): every CPU's countdown becomes v (0: its next
 * allocation crosses and draws at the new rate; INT64_MAX: off). Where it
 * is memory (x86-64, host) all are written here. arm64's is each CPU's
 * x18: this CPU's is set here, and each other online CPU is sent an SGI
 * whose handler runs refresh() on itself, which is to give the same v
 * unless that CPU has already drawn a threshold at the new rate. The
 * caller's refresh, not a name the architecture knows: hal does not call
 * up into mm. */
void cpu_heap_countdown_all(int64_t v, void (*refresh)(void));

unsigned cpu_index(void);                /* 0..cpu_count()-1 on this CPU */
unsigned cpu_count(void);                /* CPUs started (online or not) */
bool cpu_online(unsigned idx);           /* running and taking its tick */

/* Monotonic per CPU. x86: the TSC; arm64: the generic timer's count,
 * scaled to a whole number per us (arch/arm64/cpu.c). */
uint64_t cycles_now(void);
uint64_t cycles_per_us(void);            /* calibrated at boot; never 0 after */
/* What one unit of cycles_now() is, for reports: "cycles" where it is the
 * CPU's cycle counter, else the name of the clock it counts. */
const char *cycles_unit(void);

/* lscpu's first lines: what the CPU says it is (x86: CPUID vendor,
 * family/model, brand string, hypervisor; arm64: MIDR_EL1's implementer
 * and part) and how many CPUs were started. arch/<arch>/cpuinfo.c. */
void cpu_describe(struct printer *p);

/* The sample path's own reads (kernel/prof/sample.c, kernel/stacktrace.c,
 * the PMU core's claim): the same answers as cycles_now(), cpu_index(),
 * this_cpu() and irqs_enabled(), inline, from arch/<arch>/cpu_inline.h in
 * the kernel build, as Linux's asm/ headers do. As calls (frame, x86's
 * mcount nop, return around one or two instructions) they cost each
 * x86-64 sample about 30 guest instructions (-icount bench). Host unit
 * tests get the twin, arch/host/cpu_inline.h, which reads the fake CPU:
 * so the host tests compile the sample path exactly as the kernel does.
 * cpu_load_near_u32(sym) reads a word of the kernel's data in one
 * instruction (arm64: a literal load), for the switch path's gate test.
 * spin_lock (kernel/spinlock.h) takes cpu_index_inline() too: every lock,
 * the scheduler's among them, would pay the call. Everything else keeps
 * the calls. The same headers give kmalloc its
 * countdown (mm/heapprof.h): cpu_heap_countdown(n), this CPU's count -=
 * n, true when it went below zero; cpu_heap_left() and
 * cpu_heap_left_set(v) read and set it. x86-64 and the host keep it in
 * struct cpu's heap_left (x86-64: `sub %reg, %gs:24; js`), arm64 in
 * register x18 (`subs x18, x18, reg; b.mi`): arch/arm64/cpu_inline.h.
 * cycles_ticks_inline() is the clock in its own ticks, for lockstat's
 * holds: cycles_now() is ticks << cycles_ticks_shift() (arm64 scales the
 * generic timer; x86-64's TSC and the host's fake are already cycles). */
#if defined(SONDE_HOST_TEST)
#include "arch/host/cpu_inline.h"
#elif !defined(SONDE_HOST_TEST) && defined(__x86_64__)
#include "arch/x86_64/cpu_inline.h"
#elif !defined(SONDE_HOST_TEST) && defined(__aarch64__)
#include "arch/arm64/cpu_inline.h"
#else
#error "hal/cpu.h: no inline half for this build (kernel: x86_64 or arm64; host tests: SONDE_HOST_TEST)"
#endif
