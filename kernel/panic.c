/* kernel/panic.c: stop the machine and say why.
 *
 * One CPU wins the right to panic; the others are stopped by NMI, and each
 * answers with its backtrace before halting (bounded wait: a CPU that does
 * not answer is named). Printing goes around the console lock: the CPU
 * holding it may be one that will never run again. */
#include "kernel/panic.h"
#include "hal/cpu.h"
#include "hal/irq.h"
#include "kernel/backtrace.h"
#include "kernel/console.h"
#include "kernel/percpu.h"
#include "kernel/sched.h"
#include "kernel/stacktrace.h"
#include "kernel/symtab.h"

volatile int panic_cpu = -1;

static void kprinter_write(struct printer *p, const char *s, size_t n)
{
    char buf[200];
    while (n) {
        size_t k = n < sizeof buf - 1 ? n : sizeof buf - 1;
        for (size_t i = 0; i < k; i++)
            buf[i] = s[i];
        buf[k] = 0;
        kprintf("%s", buf);
        s += k;
        n -= k;
    }
}
static struct printer kpr = { kprinter_write };

static void panic_common(const struct trap_frame *tf, const char *fmt, va_list ap)
{
    irq_save();
    int me = (int)cpu_index();
    int expected = -1;
    if (!__atomic_compare_exchange_n(&panic_cpu, &expected, me, false,
                                     __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        /* Someone else is panicking. Wait for its request with interrupts
         * masked but the NMI (x86) or pseudo-NMI (arm64) open: bt_answer
         * answers it and then stops this CPU. */
        for (;;)
            cpu_relax();
    }

    char msg[200];
    fmt_vsnprintf(msg, sizeof msg, fmt, ap);
    struct task *cur = this_cpu()->current;
    kprintf("\nPANIC: %s\n", msg);
    kprintf("cpu %d, task %d (%s)\n", me, cur ? cur->pid : 0, cur ? cur->name : "boot");

    uintptr_t frames[BT_MAX];
    unsigned n;
    if (tf) {
        trap_print_regs(tf);
        n = st_capture_trap(tf, frames, BT_MAX);
    } else {
        cpu_print_regs_here();
        n = st_capture_here(frames, BT_MAX);
    }
    kprintf("Backtrace:\n");
    bt_print(&kpr, frames, n, tf != 0);

    for (unsigned c = 0; c < cpu_count(); c++) {
        if ((int)c == me || !cpu_online(c))
            continue;
        int k = cpu_backtrace(c, frames, BT_MAX, 0);
        if (k < 0) {
            kprintf("cpu %u did not answer the NMI\n", c);
            continue;
        }
        kprintf("cpu %u:\n", c);
        bt_print(&kpr, frames, (unsigned)k, true);
    }
    kprintf("System halted.\n");
    cpu_stop();
}

void panic(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    panic_common(0, fmt, ap);
    va_end(ap);
    for (;;)
        ;
}

void panic_trap(const struct trap_frame *tf, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    panic_common(tf, fmt, ap);
    va_end(ap);
    for (;;)
        ;
}
