/* tests/unit/fake_hal.h: knobs of the fake hal/ used by host unit tests. */
#pragma once
#include <stdbool.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include "arch/host/trap.h"        /* struct trap_frame: pc, sp, fp */

extern uintptr_t fake_trap_link;   /* trap_regs' tr_link: 0 (x86), or arm64's x30 */
/* Runs each time the trap frame is read (arch/host/trap_inline.h): once a
 * capture, in the middle of a sample. NULL: nothing runs. */
extern void (*fake_trap_read_hook)(void);
/* Runs at each numbered step of a ring's producer (nmi_window_inline,
 * kernel/prof/ring_produce.h), where a test fires an NMI. NULL: nothing. */
extern void (*fake_nmi_window_hook)(unsigned step);

extern _Thread_local unsigned fake_cpu;  /* what cpu_index() returns (per thread) */
extern unsigned fake_ncpus;        /* cpu_count() */
extern uint64_t fake_online;       /* bit i: cpu_online(i) */
extern _Thread_local uint64_t fake_cycles;  /* cycles_now() returns it, then adds
                                               fake_cycles_step (per thread) */
extern uint64_t fake_cycles_step;
extern uint64_t fake_cycles_per_us;
extern _Thread_local int fake_irq_depth;  /* irq_save nesting seen (per thread) */
/* hal/entropy.h: fake_entropy_name is entropy_source() (NULL: no source,
 * and entropy_get fails); entropy_get fills with a counter-driven pattern
 * that differs per call, fake_entropy_calls counts them. */
extern const char *fake_entropy_name;
extern unsigned fake_entropy_calls;
/* Calls fn between irq_save and irq_restore, as the tick calls what
 * must run with interrupts off (pmu_arm, pmu_disarm). */
void fake_irqs_off(void (*fn)(void));

/* The fake panic (kernel/panic.h's panic, BUG_ON and ASSERT): a panic the
 * test did not expect aborts with its message; EXPECT_PANIC(stmt, what)
 * runs stmt expecting exactly one panic whose message contains what. */
extern jmp_buf fake_panic_jb;
extern bool fake_panic_armed;
extern int fake_panic_calls;
extern char fake_panic_msg[256];

#define EXPECT_PANIC(stmt, what)                                          \
    do {                                                                  \
        int _before = fake_panic_calls;                                   \
        fake_panic_msg[0] = '\0';                                         \
        fake_panic_armed = true;                                          \
        if (setjmp(fake_panic_jb) == 0) {                                 \
            stmt;                                                         \
        }                                                                 \
        fake_panic_armed = false;                                         \
        CHECK_EQ(fake_panic_calls, _before + 1);                          \
        CHECK(strstr(fake_panic_msg, (what)) != NULL);                    \
    } while (0)
