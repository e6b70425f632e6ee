/* kernel/cmd/lockstat.c: `lockstat`, Linux lock_stat's columns for every
 * spinlock and mutex by name (kernel/lockstat.h counts them):
 *
 *   lockstat               the running table (counting or not)
 *   lockstat on|off|reset  count from now on, stop, zero the counts
 *   lockstat <ms>          the counts of a window of that many ms
 *
 * The counts are exact: every acquisition is counted, not a sample.
 *
 * Commands: prefix cmd_ and lockstat_. */
#include "kernel/lockstat.h"
#include "kernel/sched.h"
#include "kernel/shell.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/string.h"

#define LOCKSTAT_MS_MAX 10000
#define LOCKSTAT_SHOW 64            /* rows printed at most */

static void lockstat_print(struct printer *p)
{
    static struct lockstat_row rows[LOCKSTAT_SHOW];
    struct lockstat_info info;
    unsigned n = lockstat_read(rows, LOCKSTAT_SHOW, &info);
    pr_printf(p, "lockstat: %s, %lu ms counted, %u lock names; times in ns, clock unit %u ns "
                 "(a hold or wait shorter than that reads as 0 or %u)\n",
              info.pli_on ? "on" : "off", (unsigned long)info.pli_ms, n,
              info.pli_resolution_ns, info.pli_resolution_ns);
    if (info.pli_lost)
        pr_printf(p, "lockstat: %lu acquisitions of names past the %u shown not shown\n",
                  (unsigned long)info.pli_lost, LOCKSTAT_SHOW);
    pr_printf(p, "%-20s %-5s %12s %11s %14s %12s %12s %14s %12s\n", "name", "kind",
              "acquisitions", "contentions", "wait-total", "wait-max", "wait-avg",
              "hold-total", "hold-max");
    for (unsigned i = 0; i < n; i++) {
        const struct lockstat_row *r = &rows[i];
        uint64_t avg = r->plr_contentions ? r->plr_wait_ns / r->plr_contentions : 0;
        pr_printf(p, "%-20s %-5s %12lu %11lu %14lu %12lu %12lu %14lu %12lu\n", r->plr_name,
                  lock_kind_name(r->plr_kind), (unsigned long)r->plr_acquisitions,
                  (unsigned long)r->plr_contentions, (unsigned long)r->plr_wait_ns,
                  (unsigned long)r->plr_wait_max_ns, (unsigned long)avg,
                  (unsigned long)r->plr_hold_ns, (unsigned long)r->plr_hold_max_ns);
    }
}

/* One window: the counts zeroed, counting for ms, then stopped and shown.
 * The running table's counts are the window's, so it must be off. */
static int lockstat_window(uint64_t ms, struct printer *p)
{
    if (lockstat_on()) {
        pr_puts(p, "lockstat: the running table is on and a window would zero it; "
                   "lockstat off first\n");
        return 1;
    }
    lockstat_reset();
    lockstat_set(true);
    sleep_ms(ms);
    lockstat_set(false);
    lockstat_print(p);
    return 0;
}

static int cmd_lockstat(int argc, char **argv, struct printer *p)
{
    if (argc == 1) {
        lockstat_print(p);
        return 0;
    }
    if (argc != 2) {
        pr_puts(p, "lockstat: takes one argument: on, off, reset or a window in ms (1-10000)\n");
        return 1;
    }
    const char *a = argv[1];
    uint64_t ms;
    if (!strcmp(a, "on")) {
        lockstat_set(true);
        pr_puts(p, "lockstat: on\n");
    } else if (!strcmp(a, "off")) {
        lockstat_set(false);
        pr_puts(p, "lockstat: off\n");
    } else if (!strcmp(a, "reset")) {
        lockstat_reset();
        pr_puts(p, "lockstat: counts zeroed\n");
    } else if (parse_u64(a, &ms)) {
        if (ms < 1 || ms > LOCKSTAT_MS_MAX) {
            pr_printf(p, "lockstat: window %s out of range (1-%u ms)\n", a, LOCKSTAT_MS_MAX);
            return 1;
        }
        return lockstat_window(ms, p);
    } else {
        pr_printf(p, "lockstat: '%s' is not on, off, reset or a window in ms (1-%u)\n", a,
                  LOCKSTAT_MS_MAX);
        return 1;
    }
    return 0;
}

SHELL_COMMAND(lockstat, "lockstat",
              "lockstat [on|off|reset|<ms>]  spinlock and mutex contention by lock name",
              cmd_lockstat);
