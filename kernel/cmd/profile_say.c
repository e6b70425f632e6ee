/* kernel/cmd/profile_say.c: the profiler core's refusals in words. The
 * core (kernel/prof/) returns what went wrong as a fact, struct prof_err
 * (kernel/prof/prof.h); every sentence a user reads about it is here,
 * each naming what was wrong and what is allowed.
 *
 * Commands: prefix cmd_. */
#include "kernel/cmd/profile.h"
#include "kernel/prof/prof.h"
#include "kernel/prof/session.h"
#include "lib/printf.h"
#include "mm/heapprof.h"

void cmd_profile_say(const char *cmd, const struct prof_err *e, struct printer *p)
{
    unsigned long v = (unsigned long)e->pe_value;
    switch (e->pe_why) {
    case PROF_NOT_WINDOW:
        pr_printf(p, "%s: window %lu out of range (%u-%u ms)\n", cmd, v, PROF_WINDOW_MIN,
                  PROF_WINDOW_MAX);
        break;
    case PROF_NOT_CHAINS:
        pr_printf(p, "%s: chains %lu out of range (1-%u)\n", cmd, v, PROF_CHAINS);
        break;
    case PROF_NOT_FORMAT:
        pr_printf(p, "%s: unknown output format %d\n", cmd, (int)e->pe_value);
        break;
    case PROF_NOT_WALL_RAW:
        pr_printf(p, "%s: wall has no raw form: `profile off ... raw` and "
                  "`profile ... raw` give its two halves\n", cmd);
        break;
    case PROF_NOT_PID:
        pr_printf(p, "%s: pid %d: no such task\n", cmd, (int)e->pe_value);
        break;
    case PROF_NOT_BUSY:
        if (e->pe_note) {
            pr_printf(p, "%s: busy (", cmd);
            e->pe_note(p);
            pr_puts(p, ")\n");
        } else {
            pr_printf(p, "%s: busy\n", cmd);
        }
        break;
    case PROF_NOT_LATE:
        pr_printf(p, "%s: busy (cpu %d is still finishing a sample of the last run)\n", cmd,
                  e->pe_cpu);
        break;
    case PROF_NOT_MEMORY:
        pr_printf(p, "%s: no memory for cpu %d's sample buffer (%lu bytes)\n", cmd, e->pe_cpu,
                  e->pe_bytes);
        break;
    case PROF_NOT_NO_RUN:
        pr_printf(p, "%s: no run to report yet\n", cmd);
        break;
    case PROF_NOT_RESERVE:
        pr_printf(p, "%s: reserve %lu out of range (1-%u records)\n", cmd, v, PROF_RESERVE_MAX);
        break;
    case PROF_NOT_HEAP_OFF:
        pr_printf(p, "%s: heap profiling is off; turn it on with profile heap rate "
                  "<bytes> (%u-%u)\n", cmd, HEAPPROF_RATE_MIN, HEAPPROF_RATE_MAX);
        break;
    case PROF_NOT_HEAP_ALONE:
        pr_printf(p, "%s: a heap stream carries the allocator's samples alone\n", cmd);
        break;
    case PROF_NOT_NONE:
        break;
    }
}

int cmd_profile_window(const struct prof_window_spec *ws, struct printer *p)
{
    struct prof_err e = { 0 };
    int rc = prof_window_run(ws, p, &e);
    if (rc != PROF_OK)
        cmd_profile_say("profile", &e, p);
    return rc == PROF_OK ? 0 : 1;
}

int cmd_profile_refuse(enum prof_why_not why, uint64_t value, struct printer *p)
{
    struct prof_err e = { .pe_why = why, .pe_value = (long long)value, .pe_cpu = -1 };
    cmd_profile_say("profile", &e, p);
    return 1;
}
