/* kernel/backtrace.c: printing backtraces, any task's, any CPU's (`bt`
 * is kernel/cmd/debug.c's). */
#include "kernel/backtrace.h"
#include "kernel/task.h"
#include "hal/cpu.h"
#include "kernel/panic.h"
#include "hal/task.h"
#include "kernel/sched.h"
#include "kernel/percpu.h"
#include "kernel/stacktrace.h"
#include "kernel/symtab.h"
#include "lib/printf.h"

void bt_print(struct printer *p, const uintptr_t *frames, unsigned n, bool first_is_pc)
{
    char name[128];
    for (unsigned i = 0; i < n; i++) {
        if (i == 0 && first_is_pc)
            symtab_format(frames[i], name, sizeof name);
        else
            symtab_format_ret(frames[i], name, sizeof name);
        pr_printf(p, "        <- %s\n", name);
    }
}

struct bt_req {
    uintptr_t *out;
    unsigned max;
    int n;
    int running_cpu;               /* -1 if not on a CPU */
};

/* Under the task-list lock: a task that is off its CPU is read from its
 * saved context (hal/task.h says where its frame chain starts); one on a
 * CPU (on_cpu: from being picked until the switch away has finished) is
 * asked by interrupt. A task that never ran has no frames yet. */
static void bt_locked(struct task *t, void *arg)
{
    struct bt_req *r = arg;
    r->running_cpu = -1;
    if (t == this_cpu()->current) {
        r->n = (int)st_capture_here(r->out, r->max);
        return;
    }
    if (__atomic_load_n(&t->on_cpu, __ATOMIC_ACQUIRE)) {
        r->running_cpu = (int)t->cpu;
        return;
    }
    if (!t->ran) {
        r->n = 0;
        return;
    }
    uintptr_t fp, sp;
    arch_saved_frame(t->saved_rsp, &fp, &sp);
    r->n = (int)st_walk(fp, sp, r->out, r->max);
}

int bt_task(int pid, uintptr_t *out, unsigned max, bool *first_is_pc)
{
    /* A task can leave its CPU between the look and the interrupt: the
     * answer names the task it interrupted, and a mismatch looks again. */
    for (int tries = 0; tries < 3; tries++) {
        struct bt_req r = { out, max, -1, -1 };
        *first_is_pc = false;
        if (!task_with_pid(pid, bt_locked, &r))
            return -2;
        if (r.running_cpu < 0)
            return r.n;
        int got = 0;
        int n = cpu_backtrace((unsigned)r.running_cpu, out, max, &got);
        if (n < 0 || got == pid) {
            *first_is_pc = true;
            return n;
        }
    }
    return -1;
}


/* ---- other CPUs' backtraces: the request protocol ------------------------
 *
 * A request is a generation number: the asker bumps `asked` and sends the
 * architecture's backtrace interrupt (an NMI on x86, a pseudo-NMI SGI on
 * arm64); the target answers every generation up to it. An interrupt that
 * arrives after its asker gave up still finds asked != answered and is
 * answered (and so claimed), rather than being taken for a stray NMI. One
 * asker per target at a time, except the panicking CPU, which must reach
 * every other CPU whoever holds the mailbox (it may be a CPU it stopped).
 *
 * One answer can cover several generations (a late interrupt finds a newer
 * request already posted); the interrupts of the generations it covered
 * may still be on their way. Those are "spare": claimed when they arrive,
 * for a second at most, so a genuine stray NMI later still panics. */
static struct {
    volatile unsigned asker;
    volatile uint32_t asked;        /* generation requested */
    volatile uint32_t answered;     /* generation whose frames are below */
    uint32_t spare;                 /* target-only: covered, not yet arrived */
    uint64_t spare_until;           /* cycles_now() bound on claiming them */
    int pid;                        /* the task the answer interrupted */
    unsigned depth;
    uintptr_t frames[BT_MAX];
} bt_mail[MAX_CPUS];

/* NMI context: no lock, no allocation, a bounded walk. */
bool bt_answer(const struct trap_frame *tf)
{
    unsigned me = cpu_index();
    bool claimed = false;
    uint32_t want = __atomic_load_n(&bt_mail[me].asked, __ATOMIC_ACQUIRE);
    uint32_t covered = want - bt_mail[me].answered;
    if (covered) {
        bt_mail[me].pid = task_current_pid();
        bt_mail[me].depth = st_capture_trap(tf, bt_mail[me].frames, BT_MAX);
        bt_mail[me].spare = covered - 1;
        bt_mail[me].spare_until = cycles_now() + cycles_per_us() * 1000000;
        __atomic_store_n(&bt_mail[me].answered, want, __ATOMIC_RELEASE);
        claimed = true;
    } else if (bt_mail[me].spare && cycles_now() < bt_mail[me].spare_until) {
        bt_mail[me].spare--;
        claimed = true;
    }
    int pc = __atomic_load_n(&panic_cpu, __ATOMIC_ACQUIRE);
    if (pc >= 0 && pc != (int)me)
        cpu_stop();                 /* the machine is stopping */
    return claimed;
}

int cpu_backtrace(unsigned cpu, uintptr_t *out, unsigned max, int *pid)
{
    if (cpu >= cpu_count() || !cpu_online(cpu))
        return -1;
    if (max > BT_MAX)
        max = BT_MAX;
    /* Bounded everywhere: the panic path calls this with interrupts off,
     * and a CPU that cannot take the interrupt must not hang the asker. */
    uint64_t t0 = cycles_now(), limit = cycles_per_us() * 1000 * BT_WAIT_MS;
    bool panicking = __atomic_load_n(&panic_cpu, __ATOMIC_ACQUIRE) == (int)cpu_index();
    unsigned free = 0;
    while (!panicking &&
           !__atomic_compare_exchange_n(&bt_mail[cpu].asker, &free, 1, false,
                                        __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        free = 0;
        if (cycles_now() - t0 > limit)
            return -1;
        cpu_relax();
    }
    uint32_t gen = __atomic_add_fetch(&bt_mail[cpu].asked, 1, __ATOMIC_ACQ_REL);
    cpu_ask_backtrace(cpu);
    int n = -1;
    while (cycles_now() - t0 <= limit) {
        uint32_t got = __atomic_load_n(&bt_mail[cpu].answered, __ATOMIC_ACQUIRE);
        if ((int32_t)(got - gen) >= 0) {
            n = bt_mail[cpu].depth < max ? (int)bt_mail[cpu].depth : (int)max;
            for (int i = 0; i < n; i++)
                out[i] = bt_mail[cpu].frames[i];
            if (pid)
                *pid = bt_mail[cpu].pid;
            break;
        }
        cpu_relax();
    }
    if (!panicking)
        __atomic_store_n(&bt_mail[cpu].asker, 0, __ATOMIC_RELEASE);
    return n;
}
