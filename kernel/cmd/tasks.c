/* kernel/cmd/tasks.c: ps, cpus, stacks, kill. Each takes a snapshot
 * under the lock, then prints: a printer may sleep (the UDP shell's). */
#include "kernel/percpu.h"
#include "kernel/sched.h"
#include "kernel/shell.h"
#include "kernel/stacks.h"
#include "lib/parse.h"
#include "lib/string.h"
#include "mm/heap.h"

#define SNAP_MAX 256

struct task_snap {
    int pid;
    char name[TASK_NAME_MAX];
    unsigned cpu;
    enum task_state state;
    uint64_t ticks;
};

struct snap { struct task_snap t[SNAP_MAX]; int n; };

static void snap_one(struct task *t, void *arg)
{
    struct snap *s = arg;
    if (s->n == SNAP_MAX)
        return;
    struct task_snap *d = &s->t[s->n++];
    d->pid = t->pid;
    memcpy(d->name, t->name, sizeof d->name);
    d->cpu = t->cpu;
    d->state = t->state;
    d->ticks = t->ticks;
}

static const char *state_name(enum task_state s)
{
    switch (s) {
    case TASK_RUNNABLE: return "ready";
    case TASK_RUNNING: return "running";
    case TASK_SLEEPING: return "sleeping";
    default: return "dead";
    }
}

struct headroom_find { int pid; size_t size, headroom; bool found; };

static void find_task_stack(const struct stack_region *r, void *arg)
{
    struct headroom_find *h = arg;
    if (r->kind == STACK_TASK && r->owner == h->pid) {
        h->size = r->hi - r->lo;
        h->headroom = stack_headroom(r);
        h->found = true;
    }
}

static int cmd_ps(int argc, char **argv, struct printer *p)
{
    struct snap *s = kzalloc(sizeof *s);
    if (!s) {
        pr_printf(p, "ps: out of memory\n");
        return 1;
    }
    task_for_each(snap_one, s);
    pr_printf(p, "  pid name             cpu state       ticks  headroom\n");
    for (int i = s->n - 1; i >= 0; i--) {
        struct task_snap *t = &s->t[i];
        struct headroom_find h = { t->pid, 0, 0, false };
        stack_for_each(find_task_stack, &h);
        pr_printf(p, "%5d %-16s %3u %-8s %8lu  ", t->pid, t->name, t->cpu,
                  state_name(t->state), t->ticks);
        if (h.found)
            pr_printf(p, "%zu/%zu\n", h.headroom, h.size);
        else
            pr_printf(p, "-\n");
    }
    kfree(s);
    return 0;
}
SHELL_COMMAND(ps, "ps", "ps               tasks: pid, name, cpu, state, ticks, stack headroom", cmd_ps);

static const char *kind_name(enum stack_kind k)
{
    switch (k) {
    case STACK_TASK: return "task";
    case STACK_IRQ: return "irq";
    case STACK_IST: return "ist";
    default: return "boot";
    }
}

struct stacks_snap { struct stack_region r[MAX_STACKS]; size_t headroom[MAX_STACKS]; int n; };

static void snap_stack(const struct stack_region *r, void *arg)
{
    struct stacks_snap *s = arg;
    if (s->n < MAX_STACKS) {
        s->r[s->n] = *r;
        s->headroom[s->n] = stack_headroom(r);
        s->n++;
    }
}

static int cmd_stacks(int argc, char **argv, struct printer *p)
{
    struct stacks_snap *s = kzalloc(sizeof *s);
    if (!s) {
        pr_printf(p, "stacks: out of memory\n");
        return 1;
    }
    stack_for_each(snap_stack, s);
    pr_printf(p, "kind owner name              size  deepest  headroom\n");
    for (int i = 0; i < s->n; i++) {
        const struct stack_region *r = &s->r[i];
        size_t size = r->hi - r->lo, head = s->headroom[i];
        pr_printf(p, "%-4s %5d %-16s %6zu %8zu %9zu%s\n", kind_name(r->kind), r->owner,
                  r->name ? r->name : "?", size, size - head, head,
                  head < size / 4 ? "  LOW" : "");
    }
    kfree(s);
    return 0;
}
SHELL_COMMAND(stacks, "stacks", "stacks           every stack: size, deepest use, headroom", cmd_stacks);

static int cmd_cpus(int argc, char **argv, struct printer *p)
{
    pr_printf(p, "cpu apic state       ticks       busy  task\n");
    for (unsigned i = 0; i < cpu_count(); i++) {
        struct cpu *c = &cpus[i];
        int pid;
        char name[TASK_NAME_MAX];
        cpu_current_task(i, &pid, name);
        pr_printf(p, "%3u %4u %-7s %9lu %10lu  %d %s\n", i, c->hw_id,
                  cpu_online(i) ? "online" : "offline", c->ticks, c->busy_ticks,
                  pid, name);
    }
    return 0;
}
SHELL_COMMAND(cpus, "cpus", "cpus             cpus: apic id, state, ticks, busy ticks, task", cmd_cpus);

static int cmd_kill(int argc, char **argv, struct printer *p)
{
    uint64_t pid;
    if (argc != 2) {
        pr_printf(p, "kill: usage: kill <pid>\n");
        return 1;
    }
    if (!parse_range(argv[1], 1, 0x7fffffff, &pid)) {
        pr_printf(p, "kill: pid '%s' is not a number (1-2147483647)\n", argv[1]);
        return 1;
    }
    int rc = task_kill((int)pid);
    if (rc == -1)
        pr_printf(p, "kill: pid %lu: no such task\n", pid);
    else if (rc == -2)
        pr_printf(p, "kill: pid %lu cannot be killed (only burn and netload tasks)\n", pid);
    else
        pr_printf(p, "kill: pid %lu asked to stop\n", pid);
    return rc ? 1 : 0;
}
SHELL_COMMAND(kill, "kill", "kill <pid>       stop a burn or netload task", cmd_kill);
