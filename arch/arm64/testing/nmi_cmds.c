/* arch/arm64/testing/nmi_cmds.c: two shell commands that exist for the
 * system tests of the PMU's pseudo-NMI (tests/system/arm64_tests.py).
 * arch/<arch>/testing/ holds what is linked into every kernel only so the
 * tests can drive it; nothing else calls into it.
 *
 * `spin_masked <ms> [delay_ms]`: a test load that spins with interrupts
 * masked, so a profile can show whether its source sees interrupts-off
 * code. A task (on the least loaded cpu) sleeps delay_ms, then masks
 * interrupts with irq_save, which on arm64 is ICC_PMR_EL1 (cpu.c), and
 * spins in masked_spin for ms. The delay lets a `profile` typed right
 * after it start first: each cpu arms its counter on its next tick, and
 * the spinning cpu takes no tick while it spins. With the pseudo-NMI the
 * profile names masked_spin; with the tick (pmu=off) it cannot: the tick
 * that was held back lands at the irq_restore instead.
 *
 * `pmu_irq_stray`: makes the PMU's PPI pending on this cpu by hand, with
 * no overflow behind it: trap.c must stop the machine and say so rather
 * than swallow it (the system tests check the message). */
#include "arch/arm64/gic.h"
#include "hal/cpu.h"
#include "kernel/shell.h"
#include "kernel/task.h"
#include "kernel/time.h"
#include "lib/parse.h"

#define SPIN_MASKED_MAX_MS 2000
#define SPIN_DELAY_MAX_MS  2000

static volatile uint64_t spin_sink;

/* The hot loop is here, not in a callee, so the samples' leaf is this
 * function; noipa keeps that name (no inlining, no clone). */
static __attribute__((noipa)) uint64_t masked_spin(uint64_t until_ns)
{
    uint64_t x = until_ns;
    while (time_ns() < until_ns)
        for (int i = 0; i < 20000; i++)
            x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

static void spin_masked_task(void *arg)
{
    uint64_t a = (uintptr_t)arg;
    uint64_t ms = a >> 32, delay = a & 0xffffffffu;
    if (delay)
        sleep_ms(delay);
    unsigned long f = irq_save();
    spin_sink += masked_spin(time_ns() + ms * 1000000);
    irq_restore(f);
}

static int cmd_spin_masked(int argc, char **argv, struct printer *p)
{
    uint64_t ms, delay = 0;
    if (argc < 2 || argc > 3) {
        pr_puts(p, "spin_masked: usage: spin_masked <ms> [delay_ms]\n");
        return 1;
    }
    if (!parse_range(argv[1], 1, SPIN_MASKED_MAX_MS, &ms)) {
        pr_printf(p, "spin_masked: time '%s' out of range (1-%d ms)\n", argv[1], SPIN_MASKED_MAX_MS);
        return 1;
    }
    if (argc == 3 && !parse_range(argv[2], 0, SPIN_DELAY_MAX_MS, &delay)) {
        pr_printf(p, "spin_masked: delay '%s' out of range (0-%d ms)\n", argv[2], SPIN_DELAY_MAX_MS);
        return 1;
    }
    struct task *t = task_spawn("spinmask", spin_masked_task,
                                (void *)(uintptr_t)(ms << 32 | delay), TASK_ANY_CPU, 0);
    if (!t) {
        pr_puts(p, "spin_masked: no memory for the task\n");
        return 1;
    }
    pr_printf(p, "spin_masked: pid %d, %lu ms with interrupts masked after %lu ms\n",
              task_pid(t), (unsigned long)ms, (unsigned long)delay);
    return 0;
}
SHELL_COMMAND(spin_masked, "spin_masked",
              "spin_masked <ms> [delay_ms]  spin with interrupts masked (profiler test)",
              cmd_spin_masked);

static int cmd_pmu_irq_stray(int argc, char **argv, struct printer *p)
{
    unsigned id = gic_nmi_intid();
    if (id == GIC_SPURIOUS) {
        pr_puts(p, "pmu_irq_stray: the device tree names no PMU interrupt\n");
        return 1;
    }
    pr_printf(p, "pmu_irq_stray: INTID %u pending on cpu %u\n", id, cpu_index());
    gic_enable_ppi(id);
    gic_set_pending_ppi(id);
    return 0;
}
SHELL_COMMAND(pmu_irq_stray, "pmu_irq_stray",
              "pmu_irq_stray    raise the PMU's interrupt with no overflow (it panics)",
              cmd_pmu_irq_stray);
