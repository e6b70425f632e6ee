/* kernel/cpus.h: the CPUs as portable code counts them (kernel/cpus.c):
 * hal/cpu.h's cpu_index, cpu_count and cpu_online are defined there, over
 * the struct cpu array of kernel/percpu.h, and so is the boot CPU's start
 * of the others. What only the architecture knows stays in arch/<arch>/:
 * this_cpu() (GS base, TPIDR_EL1), its own half of struct cpu, and how a
 * CPU is woken (INIT-SIPI-SIPI, PSCI CPU_ON), which it hands cpus_start. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

struct cpu;

/* The portable fields of CPU idx's struct cpu, set on that CPU before
 * anything else uses it (its self pointer, index, run-queue lock, and
 * the architecture's half, arch); returns it, for the architecture to
 * point GS base or TPIDR_EL1 at. */
struct cpu *cpu_setup(unsigned idx, void *arch);

/* How many CPUs cpu_count() reports: the boot CPU's count of those it
 * started, raised before each new one runs (its index is then below it)
 * and lowered again if it fails to. */
void cpu_set_count(unsigned n);

/* What an architecture gives cpus_start: the CPUs the firmware lists by
 * hardware id (the boot CPU's own among them, which is skipped), what a
 * message calls such an id, and how one CPU is woken. */
struct cpus_boot {
    const uint64_t *cb_ids;
    unsigned cb_n;
    uint64_t cb_self;
    const char *cb_id_name;            /* "apic id", "mpidr" */
    /* Wake the CPU whose hardware id is hw, as index idx, on its own stack
     * [stack, stack + TASK_STACK_SIZE). NULL: it was asked to start, and
     * cpus_start waits for it to report. Else why it could not be asked:
     * it never runs, and cpus_start frees the stack. */
    const char *(*cb_wake)(unsigned idx, uint64_t hw, void *stack);
};

/* The boot CPU, at boot, interrupts on: wake the CPUs b lists, one at a
 * time, until max run (the boot CPU included). Each gets a stack of its
 * own and CPUS_START_WAIT_MS to claim its start (cpus_start_claim); one
 * that cannot be asked is named and skipped; one that does not answer is
 * named and given up on, its stack kept (it may yet run on it, to its
 * claim), and no CPU after it is woken. One that claimed has
 * CPUS_START_SETUP_MS to report (cpus_start_report), or the boot panics.
 * Returns how many run, the boot CPU included. */
#define CPUS_START_WAIT_MS 200
#define CPUS_START_SETUP_MS 10000
unsigned cpus_start(const struct cpus_boot *b, unsigned max);

/* The CPU being started, first thing in its C entry, before it touches
 * anything shared: true, it is the CPU cpus_start is waiting for; false,
 * it came too late and was given up on: it must stop (cpu_stop). */
bool cpus_start_claim(void);
/* The CPU being started, once it takes its tick: what cpus_start waits
 * for. */
void cpus_start_report(void);
/* Has the CPU being started claimed its start yet? (For a cb_wake that
 * sends a second wake-up only when the first went unanswered.) */
bool cpus_start_answered(void);
