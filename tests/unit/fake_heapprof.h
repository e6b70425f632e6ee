/* tests/unit/fake_heapprof.h: what mm/heapprof.c calls outside mm/, faked
 * for the host tests: the stack walk, prof_emit and its gate, the pid,
 * and cpus[] with this_cpu() (kernel/percpu.h: fake_cpu's). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "kernel/prof/record.h"

#define FAKE_HP_WALK_MAX 16
#define FAKE_HP_EMIT_MAX 64
extern uintptr_t fake_hp_walk[FAKE_HP_WALK_MAX];  /* what st_capture_here returns */
extern unsigned fake_hp_walk_n;
extern int fake_hp_pid;                           /* task_current_pid() */
extern struct prof_record fake_hp_emitted[FAKE_HP_EMIT_MAX];
extern unsigned fake_hp_nemit;                    /* prof_emit calls kept */

/* cpu_heap_countdown_all (hal/cpu.h). By default as on x86-64: every
 * CPU's countdown written at once. With fake_hp_by_ipi set, as on arm64:
 * only this CPU's; each other CPU's is left alone and its bit set in
 * fake_hp_ipi_pending, for the test to deliver (fake_hp_refresh, the
 * function the caller gave, on that CPU) when it chooses. */
extern bool fake_hp_by_ipi;
extern uint64_t fake_hp_ipi_pending;
extern void (*fake_hp_refresh)(void);   /* what the SGI's handler would run */
