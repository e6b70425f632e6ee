/* kernel/cmd/debug.c: the commands that look inside the kernel itself:
 * `bt` (kernel/backtrace.c's backtraces of a task or of every task),
 * `sym` (kernel/symtab.c's lookup of an address) and `console` (the
 * serial receive ring's counts, kernel/console_rx.c).
 *
 * Commands: prefix cmd_. */
#include "kernel/backtrace.h"
#include "kernel/console_rx.h"
#include "kernel/shell.h"
#include "kernel/symtab.h"
#include "kernel/task.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "mm/heap.h"

/* ---- bt ---- */

struct bt_all { int pids[256]; int n; };

static void collect(int pid, const char *name, void *arg)
{
    struct bt_all *a = arg;
    (void)name;
    if (a->n < 256)
        a->pids[a->n++] = pid;
}

static void bt_one(struct printer *p, int pid)
{
    uintptr_t frames[BT_MAX];
    bool pc;
    int n = bt_task(pid, frames, BT_MAX, &pc);
    if (n == -2)
        return;                    /* exited meanwhile */
    pr_printf(p, "pid %d:\n", pid);
    if (n < 0)
        pr_printf(p, "        (its cpu did not answer the NMI)\n");
    else if (n == 0)
        pr_printf(p, "        (not run yet)\n");
    else
        bt_print(p, frames, (unsigned)n, pc);
}

static int cmd_bt(int argc, char **argv, struct printer *p)
{
    if (argc > 2) {
        pr_printf(p, "bt: too many arguments (usage: bt [pid|all])\n");
        return 1;
    }
    if (argc == 2 && strcmp(argv[1], "all") == 0) {
        struct bt_all *ap = kmalloc(sizeof *ap);
        if (!ap) {
            pr_printf(p, "bt: out of memory\n");
            return 1;
        }
        ap->n = 0;
        task_for_each_id(collect, ap);
        for (int i = ap->n - 1; i >= 0; i--)
            bt_one(p, ap->pids[i]);
        kfree(ap);
        return 0;
    }
    uint64_t pid = (uint64_t)task_current_pid();
    if (argc == 2 && !parse_range(argv[1], 1, 0x7fffffff, &pid)) {
        pr_printf(p, "bt: pid '%s' is not a number (1-2147483647) or 'all'\n", argv[1]);
        return 1;
    }
    if (!task_exists((int)pid)) {
        pr_printf(p, "bt: pid %lu: no such task\n", pid);
        return 1;
    }
    bt_one(p, (int)pid);
    return 0;
}
SHELL_COMMAND(bt, "bt", "bt [pid|all]     backtrace of a task (default: this shell)", cmd_bt);

/* ---- sym ---- */

/* sym <addr>: what function an address falls in. Prints the name itself
 * rather than through symtab_format's buffer, so long names are whole. */
static int cmd_sym(int argc, char **argv, struct printer *p)
{
    if (argc != 2) {
        pr_printf(p, "usage: sym <addr>  (one address, decimal or 0x hex)\n");
        return 1;
    }
    uint64_t addr;
    if (!parse_u64(argv[1], &addr)) {
        pr_printf(p, "sym: bad address '%s' (want decimal or 0x hex, "
                     "at most 0xffffffffffffffff)\n", argv[1]);
        return 1;
    }
    struct sym_hit h;
    if (symtab_lookup((uintptr_t)addr, &h))
        pr_printf(p, "0x%016lx %s+0x%lx\n", (unsigned long)addr, h.name,
                  (unsigned long)h.offset);
    else
        pr_printf(p, "0x%016lx: no symbol\n", (unsigned long)addr);
    return 0;
}

SHELL_COMMAND(sym, "sym", "sym <addr>", cmd_sym);

/* ---- console ---- */

static int cmd_console(int argc, char **argv, struct printer *p)
{
    if (argc > 1) {
        pr_printf(p, "console: takes no arguments\n");
        return 1;
    }
    struct console_rx_stats st;
    console_rx_stats(&st);
    pr_printf(p, "console: rx ring %u bytes, %u queued, %llu received, %llu lost "
                 "(uart overruns), throttled %llu times\n",
              CONSOLE_RX_RING, st.queued, (unsigned long long)st.received,
              (unsigned long long)st.overruns, (unsigned long long)st.throttles);
    return 0;
}
SHELL_COMMAND(console, "console", "console          serial input: ring, bytes received, lost, throttled",
              cmd_console);
