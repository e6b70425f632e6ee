/* kernel/cmd/profile_heap.c: `profile heap` and `profile allocs`, the
 * shell's face of heap profiling (mm/heapprof.h, kernel/prof/heapview.h,
 * prof_window_run; `profile allocs stream` goes to the stream's one
 * parser, kernel/cmd/profile.c): every argument checked, in order, the
 * first bad one named with its allowed range, before anything starts. */
#include "kernel/cmd/profile.h"
#include "kernel/prof/heapview.h"
#include "kernel/prof/session.h"
#include "kernel/task.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "mm/heap.h"
#include "mm/heapprof.h"

#define HEAP_USAGE   "profile heap [chains|folded|raw] | profile heap rate <bytes>|off"
#define ALLOCS_USAGE "profile allocs [ms] [pid|all] [chains|folded|raw]" \
                     " | profile allocs stream <port> [ms|0] [pid|all]"

/* PROF_FOLDED or PROF_RAW for the output words, else -1. */
static int cmd_heap_format(const char *s)
{
    if (strcmp(s, "folded") == 0)
        return PROF_FOLDED;
    if (strcmp(s, "raw") == 0)
        return PROF_RAW;
    return -1;
}

static int cmd_heap_rate(int argc, char **argv, struct printer *p)
{
    uint64_t v;
    if (argc != 4) {
        pr_printf(p, "profile: heap rate takes one argument: bytes (%u-%u) or off\n",
                  HEAPPROF_RATE_MIN, HEAPPROF_RATE_MAX);
        return 1;
    }
    if (strcmp(argv[3], "off") == 0) {
        heapprof_rate_set(0);
        pr_puts(p, "profile: heap profiling off (sampled blocks still live stay in "
                "profile heap until freed)\n");
        return 0;
    }
    if (!parse_u64(argv[3], &v)) {
        pr_printf(p, "profile: '%s' is not a heap rate (%u-%u bytes) or off\n", argv[3],
                  HEAPPROF_RATE_MIN, HEAPPROF_RATE_MAX);
        return 1;
    }
    if (v < HEAPPROF_RATE_MIN || v > HEAPPROF_RATE_MAX) {
        pr_printf(p, "profile: heap rate %lu out of range (%u-%u bytes)\n",
                  (unsigned long)v, HEAPPROF_RATE_MIN, HEAPPROF_RATE_MAX);
        return 1;
    }
    heapprof_rate_set((uint32_t)v);
    pr_printf(p, "profile: heap profiling at rate %u bytes\n", (unsigned)v);
    return 0;
}

/* profile heap [chains|folded|raw], profile heap rate R|off */
/* The allocator's in-use table, copied, as the core's report. The copy
 * is allocated before the table is read, at the table's full size:
 * allocating under the heap's lock would deadlock. Blocks sampled between
 * the allocation and the copy are simply in it. */
static int cmd_heap_report(unsigned chains, enum prof_format fmt, struct printer *p)
{
    struct prof_record *recs = kmalloc(HEAPPROF_BLOCKS * sizeof *recs);
    if (!recs) {
        pr_printf(p, "profile: no memory to copy the heap table (%zu bytes)\n",
                  HEAPPROF_BLOCKS * sizeof *recs);
        return 1;
    }
    struct heapprof_stats st;
    uint32_t n = heapprof_copy_table(recs, HEAPPROF_BLOCKS, &st);
    struct prof_heap_table t = { recs, n, st.hs_rate, st.hs_overflow };
    struct prof_err e = { 0 };
    int rc = prof_heap_report(&t, chains, fmt, p, &e);
    if (rc != PROF_OK && e.pe_why != PROF_NOT_NONE)
        cmd_profile_say("profile", &e, p);
    kfree(recs);
    return rc == PROF_OK ? 0 : 1;
}

static int cmd_heap(int argc, char **argv, struct printer *p)
{
    uint64_t chains = PROF_CHAINS_DEF;
    int fmt = PROF_TEXT;
    if (argc > 2 && strcmp(argv[2], "rate") == 0)
        return cmd_heap_rate(argc, argv, p);
    if (argc > 3) {
        pr_puts(p, "profile: too many arguments (usage: " HEAP_USAGE ")\n");
        return 1;
    }
    if (argc == 3 && (fmt = cmd_heap_format(argv[2])) < 0) {
        fmt = PROF_TEXT;
        if (!parse_u64(argv[2], &chains)) {
            pr_printf(p, "profile: '%s' is not a chain count (1-%u), folded, raw or rate\n",
                      argv[2], PROF_CHAINS);
            return 1;
        }
        if (chains < 1 || chains > PROF_CHAINS) {
            pr_printf(p, "profile: chains %lu out of range (1-%u)\n",
                      (unsigned long)chains, PROF_CHAINS);
            return 1;
        }
    }
    return cmd_heap_report((unsigned)chains, (enum prof_format)fmt, p);
}

/* One argument of profile allocs at position i (2: ms, 3: pid, 4:
 * chains); false with the reason printed. */
static bool cmd_allocs_arg(int i, const char *a, uint64_t *ms, int *pid, uint64_t *chains,
                           struct printer *p)
{
    uint64_t v;
    if (i == 2) {
        if (!parse_u64(a, ms)) {
            pr_printf(p, "profile: '%s' is not a window (%u-%u ms), folded or raw\n", a,
                      PROF_WINDOW_MIN, PROF_WINDOW_MAX);
            return false;
        }
        if (*ms < PROF_WINDOW_MIN || *ms > PROF_WINDOW_MAX) {
            pr_printf(p, "profile: window %lu out of range (%u-%u ms)\n",
                      (unsigned long)*ms, PROF_WINDOW_MIN, PROF_WINDOW_MAX);
            return false;
        }
    } else if (i == 3) {
        if (strcmp(a, "all") == 0)
            return true;
        if (!parse_u64(a, &v)) {
            pr_printf(p, "profile: '%s' is not a pid, all, folded or raw\n", a);
            return false;
        }
        if (v > INT32_MAX || !task_exists((int)v)) {
            pr_printf(p, "profile: pid %lu: no such task\n", (unsigned long)v);
            return false;
        }
        *pid = (int)v;
    } else {
        if (!parse_u64(a, chains)) {
            pr_printf(p, "profile: '%s' is not a chain count (1-%u), folded or raw\n", a,
                      PROF_CHAINS);
            return false;
        }
        if (*chains < 1 || *chains > PROF_CHAINS) {
            pr_printf(p, "profile: chains %lu out of range (1-%u)\n",
                      (unsigned long)*chains, PROF_CHAINS);
            return false;
        }
    }
    return true;
}

/* profile allocs [ms] [pid|all] [chains|folded|raw]: as the windowed
 * profile, an output word always last and taking the defaults before it. */
static int cmd_allocs(int argc, char **argv, struct printer *p)
{
    uint64_t ms = PROF_WINDOW_DEF, chains = PROF_CHAINS_DEF;
    int pid = PROF_ALL, fmt = PROF_TEXT;
    if (argc > 5) {
        pr_puts(p, "profile: too many arguments (usage: " ALLOCS_USAGE ")\n");
        return 1;
    }
    for (int i = 2; i < argc; i++) {
        int f = cmd_heap_format(argv[i]);
        if (f >= 0) {
            if (i != argc - 1) {
                pr_printf(p, "profile: '%s' must be the last argument (usage: "
                          ALLOCS_USAGE ")\n", argv[i]);
                return 1;
            }
            fmt = f;
        } else if (!cmd_allocs_arg(i, argv[i], &ms, &pid, &chains, p)) {
            return 1;
        }
    }
    /* mm owns the rate: handed to the window, which refuses 0 (off). */
    struct prof_window_spec ws = {
        .ws_kind = PROF_KIND_HEAP, .ws_ms = (unsigned)ms, .ws_pid = pid,
        .ws_chains = (unsigned)chains, .ws_format = (enum prof_format)fmt,
        .ws_heap_rate = __atomic_load_n(&heapprof_rate, __ATOMIC_RELAXED),
    };
    return cmd_profile_window(&ws, p);
}

bool cmd_profile_heap(int argc, char **argv, struct printer *p, int *rc)
{
    if (argc < 2)
        return false;
    if (strcmp(argv[1], "heap") == 0)
        *rc = cmd_heap(argc, argv, p);
    else if (strcmp(argv[1], "allocs") == 0 && argc >= 3 && strcmp(argv[2], "stream") == 0)
        /* argv[1] the word `stream` sees as its own first */
        *rc = cmd_profile_stream_start(argc - 1, argv + 1, PROF_STREAM_HEAP, p);
    else if (strcmp(argv[1], "allocs") == 0)
        *rc = cmd_allocs(argc, argv, p);
    else
        return false;
    return true;
}
