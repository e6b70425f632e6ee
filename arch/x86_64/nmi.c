/* arch/x86_64/nmi.c: who an NMI is for.
 *
 * In this order: a panicking CPU asking everyone else to stop (answer with
 * a backtrace, then halt); a backtrace request from `bt` or panic; the
 * performance counter's overflow. Two NMIs sent close together can arrive
 * as one, so every source is checked each time. An NMI none of them claims
 * panics: it is never swallowed.
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
    volatile int request;           /* set by the asker, taken by the target */
    volatile int done;
    unsigned depth;
    uintptr_t frames[BT_MAX];
} bt_mail[MAX_CPUS];

static unsigned capture(const struct trap_frame *tf, uintptr_t *out, unsigned max)
{
    out[0] = tf->rip;
    return 1 + st_walk(tf->rbp, tf->rsp, out + 1, max - 1);
}

void nmi_handler(struct trap_frame *tf)
{
    unsigned me = cpu_index();
    int pc = __atomic_load_n(&panic_cpu, __ATOMIC_ACQUIRE);
    bool claimed = false;

    if (__atomic_exchange_n(&bt_mail[me].request, 0, __ATOMIC_ACQ_REL)) {
        bt_mail[me].depth = capture(tf, bt_mail[me].frames, BT_MAX);
        __atomic_store_n(&bt_mail[me].done, 1, __ATOMIC_RELEASE);
        claimed = true;
    }
    if (pc >= 0 && pc != (int)me) {
        for (;;)                    /* the machine is stopping */
            __asm__ volatile("cli; hlt");
    }
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
    __atomic_store_n(&bt_mail[cpu].done, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&bt_mail[cpu].request, 1, __ATOMIC_RELEASE);
    lapic_send_nmi(cpus[cpu].hw_id);
    /* Bounded: a CPU stuck with NMIs blocked must not hang the asker. */
    uint64_t t0 = rdtsc(), limit = cycles_per_us() * 100000;
    while (!__atomic_load_n(&bt_mail[cpu].done, __ATOMIC_ACQUIRE)) {
        if (rdtsc() - t0 > limit) {
            __atomic_store_n(&bt_mail[cpu].request, 0, __ATOMIC_RELAXED);
            return -1;
        }
        pause();
    }
    unsigned n = bt_mail[cpu].depth < max ? bt_mail[cpu].depth : max;
    for (unsigned i = 0; i < n; i++)
        out[i] = bt_mail[cpu].frames[i];
    return (int)n;
}

void cpu_send_nmi_self(void)
{
    lapic_send_nmi(lapic_id());
}

void *pa_to_va(uint64_t pa) { return phys_to_virt(pa); }
uint64_t va_to_pa(const void *va) { return virt_to_phys(va); }
