/* arch/arm64/ipi.c: other CPUs' backtraces by SGI, and the address
 * helpers of hal/mem.h.
 *
 * cpu_backtrace sends SGI_BACKTRACE, which the GIC delivers at the
 * pseudo-NMI priority (gic.c, trap.c): the target answers with the context
 * it interrupted even while it runs with interrupts masked (they are masked
 * by priority, ICC_PMR_EL1). Only a cpu with PSTATE.I set (exception entry,
 * cpu_stop) cannot answer; the asker gives up after 250 ms. A panicking
 * CPU's request also stops the target: it answers, then halts.
 * Interrupt context: no locks, no allocation; the walk is bounded. */
#include "arch/arm64/arm64.h"
#include "arch/arm64/gic.h"
#include "arch/arm64/percpu_arch.h"
#include "arch/arm64/trap.h"
#include "hal/cpu.h"
#include "hal/mem.h"
#include "kernel/backtrace.h"
#include "kernel/panic.h"
#include "kernel/percpu.h"
#include "kernel/stacktrace.h"

static struct {
    volatile unsigned asker;        /* one asker per target at a time */
    volatile uint32_t asked;        /* generation requested */
    volatile uint32_t answered;     /* generation whose frames are below */
    unsigned depth;
    uintptr_t frames[BT_MAX];
} bt_mail[MAX_CPUS];

/* A request is a generation number, as on x86: the asker bumps `asked`
 * and sends the SGI; the target answers every generation up to it, so an
 * SGI that arrives after its asker gave up is still answered harmlessly. */
void ipi_backtrace_answer(struct trap_frame *tf)
{
    unsigned me = cpu_index();
    uint32_t want = __atomic_load_n(&bt_mail[me].asked, __ATOMIC_ACQUIRE);
    if (want != bt_mail[me].answered) {
        bt_mail[me].depth = st_capture_trap(tf, bt_mail[me].frames, BT_MAX);
        __atomic_store_n(&bt_mail[me].answered, want, __ATOMIC_RELEASE);
    }
    int pc = __atomic_load_n(&panic_cpu, __ATOMIC_ACQUIRE);
    if (pc >= 0 && pc != (int)me)
        cpu_stop();                 /* the machine is stopping */
}

static void resched_sgi(struct trap_frame *tf, void *arg)
{
    /* Nothing to do here: trap.c calls sched_preempt after every handler. */
}

void ipi_init(void)
{
    gic_set_handler(SGI_RESCHED, resched_sgi, 0);
}

static uint64_t mpidr_of(unsigned cpu)
{
    return ((struct cpu_arch *)cpus[cpu].arch)->mpidr;
}

int cpu_backtrace(unsigned cpu, uintptr_t *out, unsigned max)
{
    if (cpu >= cpu_count() || !cpus[cpu].online)
        return -1;
    if (max > BT_MAX)
        max = BT_MAX;
    /* Bounded everywhere: the panic path calls this with interrupts off,
     * and a CPU running with interrupts masked must not hang the asker. */
    uint64_t t0 = cycles_now(), limit = cycles_per_us() * 250000;     /* 250 ms */
    unsigned free = 0;
    while (!__atomic_compare_exchange_n(&bt_mail[cpu].asker, &free, 1, false,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        free = 0;
        if (cycles_now() - t0 > limit)
            return -1;
        cpu_relax();
    }
    uint32_t gen = bt_mail[cpu].asked + 1;
    __atomic_store_n(&bt_mail[cpu].asked, gen, __ATOMIC_RELEASE);
    gic_send_sgi(SGI_BACKTRACE, mpidr_of(cpu));
    int n = -1;
    while (cycles_now() - t0 <= limit) {
        if (__atomic_load_n(&bt_mail[cpu].answered, __ATOMIC_ACQUIRE) == gen) {
            n = bt_mail[cpu].depth < max ? (int)bt_mail[cpu].depth : (int)max;
            for (int i = 0; i < n; i++)
                out[i] = bt_mail[cpu].frames[i];
            break;
        }
        cpu_relax();
    }
    __atomic_store_n(&bt_mail[cpu].asker, 0, __ATOMIC_RELEASE);
    return n;
}

/* Interrupts masked (all of DAIF), then wait for nothing, for good. */
void cpu_stop(void)
{
    for (;;)
        __asm__ volatile("msr daifset, #0xf\n\twfi" ::: "memory");
}

/* `panic nmi`: an SGI at the pseudo-NMI priority that no request
 * explains; trap.c panics on it as an unexpected NMI. */
void cpu_send_nmi_self(void)
{
    gic_send_sgi(SGI_NMI_TEST, mpidr_of(cpu_index()));
}

void cpu_kick(unsigned idx)
{
    if (idx < cpu_count() && cpus[idx].online)
        gic_send_sgi(SGI_RESCHED, mpidr_of(idx));
}

void *pa_to_va(uint64_t pa) { return phys_to_virt(pa); }
uint64_t va_to_pa(const void *va) { return virt_to_phys(va); }
