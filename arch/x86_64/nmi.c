/* arch/x86_64/nmi.c: who an NMI is for.
 *
 * In this order: a backtrace request from `bt` or panic; a panicking CPU
 * asking everyone else to stop (answer, then halt); the performance
 * counter's overflow. Two NMIs sent close together can arrive as one, so
 * every source is checked each time. An NMI none of them claims panics: it
 * is never swallowed.
 *
 * A backtrace request is a generation number: the asker bumps `asked`
 * and sends the NMI; the target answers every generation up to it. An NMI
 * that arrives after its asker gave up still finds asked != answered and
 * is claimed, rather than being taken for a stray NMI and panicking.
 * NMI context: no locks, no allocation; the walk is bounded and checked. */
#include "arch/x86_64/lapic.h"
#include "arch/x86_64/layout.h"
#include "arch/x86_64/trap.h"
#include "arch/x86_64/x86.h"
#include "hal/cpu.h"
#include "kernel/backtrace.h"
#include "kernel/panic.h"
#include "kernel/percpu.h"
#include "kernel/profiler.h"
#include "kernel/stacktrace.h"

static struct {
    volatile unsigned asker;        /* one asker per target at a time */
    volatile uint32_t asked;        /* generation requested */
    volatile uint32_t answered;     /* generation whose frames are below */
    unsigned depth;
    uintptr_t frames[BT_MAX];
} bt_mail[MAX_CPUS];

void nmi_handler(struct trap_frame *tf)
{
    unsigned me = cpu_index();
    bool claimed = false;

    uint32_t want = __atomic_load_n(&bt_mail[me].asked, __ATOMIC_ACQUIRE);
    if (want != bt_mail[me].answered) {
        bt_mail[me].depth = st_capture_trap(tf, bt_mail[me].frames, BT_MAX);
        __atomic_store_n(&bt_mail[me].answered, want, __ATOMIC_RELEASE);
        claimed = true;
    }
    int pc = __atomic_load_n(&panic_cpu, __ATOMIC_ACQUIRE);
    if (pc >= 0 && pc != (int)me)
        cpu_stop();                 /* the machine is stopping */
    if (profiler_nmi(tf))
        claimed = true;
    if (!claimed)
        panic_trap(tf, "unexpected NMI on cpu %u (not the counter's, no request)", me);
}

int cpu_backtrace(unsigned cpu, uintptr_t *out, unsigned max)
{
    if (cpu >= cpu_count() || !cpus[cpu].online)
        return -1;
    if (max > BT_MAX)
        max = BT_MAX;
    /* Bounded everywhere: the panic path calls this with interrupts off,
     * and a CPU stuck with NMIs blocked must not hang the asker. */
    uint64_t t0 = rdtsc(), limit = cycles_per_us() * 250000;     /* 250 ms */
    unsigned free = 0;
    while (!__atomic_compare_exchange_n(&bt_mail[cpu].asker, &free, 1, false,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        free = 0;
        if (rdtsc() - t0 > limit)
            return -1;
        pause();
    }
    uint32_t gen = bt_mail[cpu].asked + 1;
    __atomic_store_n(&bt_mail[cpu].asked, gen, __ATOMIC_RELEASE);
    lapic_send_nmi(cpus[cpu].hw_id);
    int n = -1;
    while (rdtsc() - t0 <= limit) {
        if (__atomic_load_n(&bt_mail[cpu].answered, __ATOMIC_ACQUIRE) == gen) {
            n = bt_mail[cpu].depth < max ? (int)bt_mail[cpu].depth : (int)max;
            for (int i = 0; i < n; i++)
                out[i] = bt_mail[cpu].frames[i];
            break;
        }
        pause();
    }
    __atomic_store_n(&bt_mail[cpu].asker, 0, __ATOMIC_RELEASE);
    return n;
}

void cpu_send_nmi_self(void)
{
    lapic_send_nmi(lapic_id());
}

void cpu_stop(void)
{
    for (;;)
        __asm__ volatile("cli; hlt" ::: "memory");
}

void *pa_to_va(uint64_t pa) { return phys_to_virt(pa); }
uint64_t va_to_pa(const void *va) { return virt_to_phys(va); }
