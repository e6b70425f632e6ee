/* tests/unit/fake_hal.h: knobs of the fake hal/ used by host unit tests. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

struct trap_frame { uintptr_t pc, sp, fp; };   /* the fake layout */

extern unsigned fake_cpu;          /* what cpu_index() returns */
extern unsigned fake_ncpus;        /* cpu_count() */
extern uint64_t fake_online;       /* bit i: cpu_online(i) */
extern uint64_t fake_cycles;       /* cycles_now() returns it, then adds fake_cycles_step */
extern uint64_t fake_cycles_step;
extern uint64_t fake_cycles_per_us;
extern int fake_irq_depth;         /* irq_save nesting seen */
