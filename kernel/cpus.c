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
#include "kernel/percpu.h"
#include "kernel/task.h"
#include "kernel/time.h"
#include "mm/heap.h"

struct cpu cpus[MAX_CPUS];
static unsigned ncpus_started = 1;
/* Set by the CPU being started, cleared by the boot CPU before it wakes
 * the next one: at most one CPU starts at a time. */
static int start_reported;

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

void cpus_start_report(void) { __atomic_store_n(&start_reported, 1, __ATOMIC_RELEASE); }
bool cpus_start_reported(void) { return __atomic_load_n(&start_reported, __ATOMIC_ACQUIRE); }

/* Wake the CPU with hardware id hw as index n and wait for it. */
static bool cpus_start_one(const struct cpus_boot *b, unsigned n, uint64_t hw)
{
    void *stack = kmalloc(TASK_STACK_SIZE);
    if (!stack) {
        kprintf("smp: no memory for a stack: cpu with %s 0x%llx skipped\n",
                b->cb_id_name, (unsigned long long)hw);
        return false;
    }
    __atomic_store_n(&start_reported, 0, __ATOMIC_RELAXED);
    cpu_set_count(n + 1);                   /* before it runs: its index counts */
    const char *why = b->cb_wake(n, hw, stack);
    uint64_t t0 = time_ns();
    while (!why && !cpus_start_reported() && time_ns() - t0 < CPUS_START_WAIT_MS * 1000000ull)
        cpu_relax();
    if (!why && cpus_start_reported())
        return true;
    cpu_set_count(n);
    if (why) {
        kprintf("smp: cpu with %s 0x%llx not started (%s): skipped\n",
                b->cb_id_name, (unsigned long long)hw, why);
        kfree(stack);                       /* it never ran: nobody can be on it */
    } else {
        /* Asked, but silent: it may still wake up on this stack, so the
         * stack stays allocated. */
        kprintf("smp: cpu with %s 0x%llx did not start in %d ms: skipped\n",
                b->cb_id_name, (unsigned long long)hw, CPUS_START_WAIT_MS);
    }
    return false;
}

unsigned cpus_start(const struct cpus_boot *b, unsigned max)
{
    unsigned n = 1;
    for (unsigned i = 0; i < b->cb_n && n < max && n < MAX_CPUS; i++) {
        if (b->cb_ids[i] != b->cb_self && cpus_start_one(b, n, b->cb_ids[i]))
            n++;
    }
    return n;
}
