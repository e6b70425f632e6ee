/* kernel/cpus.c: the CPUs as portable code counts them, and the boot
 * CPU's start of the others (kernel/cpus.h). Both architectures once
 * wrote this each; what differs between them is only how a CPU is woken,
 * which they hand cpus_start as a hook.
 *
 * The count and the online flags are read without a lock from any CPU
 * (an IPI's target check, `cpus`, the profiler's rings): the count is
 * published with release and read with acquire, so a reader that sees a
 * CPU counted sees its struct cpu set up; the online flag the same way
 * (kernel/sched.c sets it). */
#include "kernel/cpus.h"
#include "hal/cpu.h"
#include "kernel/console.h"
#include "kernel/panic.h"
#include "kernel/percpu.h"
#include "kernel/task.h"
#include "kernel/time.h"
#include "mm/heap.h"

struct cpu cpus[MAX_CPUS];
static unsigned ncpus_started = 1;
/* The start under way, one CPU at a time: the boot CPU sets it WAITING
 * and wakes the CPU; the CPU, first thing, claims its start (WAITING to
 * CLAIMED) and reports when it is set up; a CPU silent for the whole
 * wait is given up on (WAITING to ABANDONED). Claim and give-up are one
 * compare-and-swap each on the same word, so exactly one wins: a CPU
 * that arrives after it was given up on stops before it touches anything
 * shared, and one that claimed in time is waited for until it reports. */
enum { START_IDLE, START_WAITING, START_CLAIMED, START_REPORTED, START_ABANDONED };
static int start_state;

struct cpu *cpu_setup(unsigned idx, void *arch)
{
    struct cpu *c = &cpus[idx];
    c->self = c;
    c->index = idx;
    c->arch = arch;
    spin_init(&c->rq_lock, "runqueue");
    return c;
}

unsigned cpu_index(void) { return this_cpu()->index; }
unsigned cpu_count(void) { return __atomic_load_n(&ncpus_started, __ATOMIC_ACQUIRE); }
void cpu_set_count(unsigned n) { __atomic_store_n(&ncpus_started, n, __ATOMIC_RELEASE); }

bool cpu_online(unsigned idx)
{
    return idx < MAX_CPUS && __atomic_load_n(&cpus[idx].online, __ATOMIC_ACQUIRE);
}

bool cpus_start_claim(void)
{
    int want = START_WAITING;
    return __atomic_compare_exchange_n(&start_state, &want, START_CLAIMED, false,
                                       __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

void cpus_start_report(void) { __atomic_store_n(&start_state, START_REPORTED, __ATOMIC_RELEASE); }

bool cpus_start_answered(void)
{
    int s = __atomic_load_n(&start_state, __ATOMIC_ACQUIRE);
    return s == START_CLAIMED || s == START_REPORTED;
}

static int cpus_start_state(void) { return __atomic_load_n(&start_state, __ATOMIC_ACQUIRE); }

/* Waits while the start is in state s, for at most ms: the state then. */
static int cpus_start_wait(int s, unsigned ms)
{
    uint64_t t0 = time_ns();
    while (cpus_start_state() == s && time_ns() - t0 < ms * 1000000ull)
        cpu_relax();
    return cpus_start_state();
}

enum start_result { STARTED, SKIPPED, GIVEN_UP };

/* Wake the CPU with hardware id hw as index n and wait for it. */
static enum start_result cpus_start_one(const struct cpus_boot *b, unsigned n, uint64_t hw)
{
    void *stack = kmalloc(TASK_STACK_SIZE);
    if (!stack) {
        kprintf("smp: no memory for a stack: cpu with %s 0x%llx skipped\n",
                b->cb_id_name, (unsigned long long)hw);
        return SKIPPED;
    }
    __atomic_store_n(&start_state, START_WAITING, __ATOMIC_RELEASE);
    cpu_set_count(n + 1);                   /* before it runs: its index counts */
    const char *why = b->cb_wake(n, hw, stack);
    if (why) {
        __atomic_store_n(&start_state, START_IDLE, __ATOMIC_RELAXED);
        cpu_set_count(n);
        kprintf("smp: cpu with %s 0x%llx not started (%s): skipped\n",
                b->cb_id_name, (unsigned long long)hw, why);
        kfree(stack);                       /* it never ran: nobody can be on it */
        return SKIPPED;
    }
    int s = cpus_start_wait(START_WAITING, CPUS_START_WAIT_MS);
    int want = START_WAITING;
    if (s == START_WAITING &&
        __atomic_compare_exchange_n(&start_state, &want, START_ABANDONED, false,
                                    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        /* Asked, but silent. It may still wake up, on this stack (kept)
         * and as index n, and stop at its claim; a CPU woken after it
         * could be given the same stack or index by the wake-up's shared
         * state (x86's trampoline), so none is. */
        cpu_set_count(n);
        kprintf("smp: cpu with %s 0x%llx did not start in %d ms: given up, and no further "
                "cpus started\n", b->cb_id_name, (unsigned long long)hw, CPUS_START_WAIT_MS);
        return GIVEN_UP;
    }
    /* Claimed (in time, or as the wait ended): it runs as index n, so it
     * must finish; a CPU that never does has broken the machine. */
    if (cpus_start_wait(START_CLAIMED, CPUS_START_SETUP_MS) != START_REPORTED)
        panic("smp: cpu with %s 0x%llx began its start as cpu %u and did not finish it "
              "in %d ms", b->cb_id_name, (unsigned long long)hw, n, CPUS_START_SETUP_MS);
    return STARTED;
}

unsigned cpus_start(const struct cpus_boot *b, unsigned max)
{
    unsigned n = 1;
    for (unsigned i = 0; i < b->cb_n && n < max && n < MAX_CPUS; i++) {
        if (b->cb_ids[i] == b->cb_self)
            continue;
        enum start_result r = cpus_start_one(b, n, b->cb_ids[i]);
        if (r == GIVEN_UP)
            break;
        n += r == STARTED;
    }
    return n;
}
