/* kernel/cmd/profile.c: `profile` and `profile_cpus`, the shell's face of
 * the profiler core (kernel/prof/): every argument checked, in order, the
 * first bad one named with its allowed range, before anything starts.
 * The stream's words (stream, stop, keepalive, status) are
 * kernel/cmd/profile_stream.c's, the heap's kernel/cmd/profile_heap.c's.
 *
 * Commands: prefix cmd_. */
#include "kernel/cmd/profile.h"
#include "kernel/prof/session.h"
#include "kernel/shell.h"
#include "kernel/task.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/string.h"

/* ---- the windowed profile --------------------------------------------- */

static bool cmd_profile_is_all(const char *s)
{
    return s[0] == 'a' && s[1] == 'l' && s[2] == 'l' && s[3] == '\0';
}

/* PROF_FOLDED or PROF_RAW for the output words, else -1. */
static int cmd_profile_format_word(const char *s)
{
    if (strcmp(s, "folded") == 0)
        return PROF_FOLDED;
    if (strcmp(s, "raw") == 0)
        return PROF_RAW;
    return -1;
}

#define PROF_OFF_USAGE "profile off|wall [ms] [pid|all] [chains|folded|raw]"

struct cmd_prof_args {
    uint64_t ms, chains;
    int pid, fmt;
};

/* [ms] [pid|all] [chains|folded|raw] from argv[b]: positional, every
 * argument checked before anything starts, in order, and the first bad
 * one named. An output word (folded, raw) takes the chain count's place,
 * and may also come early, in place of the window or the pid, which then
 * take their defaults: `profile raw` is `profile 1000 all raw`, `profile
 * 500 folded` is `profile 500 all folded`. It is always the last
 * argument, so no word means two things. */
static bool cmd_profile_args(int argc, char **argv, int b, const char *usage,
                             struct cmd_prof_args *a, struct printer *p)
{
    uint64_t v;
    a->ms = PROF_WINDOW_DEF;
    a->chains = PROF_CHAINS_DEF;
    a->pid = PROF_ALL;
    a->fmt = PROF_TEXT;
    if (argc - b > 3) {
        pr_printf(p, "profile: too many arguments (usage: %s)\n", usage);
        return false;
    }
    for (int i = b; i < argc; i++) {
        const char *w = argv[i];
        int f = cmd_profile_format_word(w);
        if (f >= 0) {
            if (i != argc - 1) {
                pr_printf(p, "profile: '%s' must be the last argument "
                          "(usage: %s)\n", w, usage);
                return false;
            }
            a->fmt = f;
        } else if (i == b) {
            if (!parse_u64(w, &a->ms)) {
                pr_printf(p, "profile: '%s' is not a window (%u-%u ms), "
                          "folded or raw\n", w, PROF_WINDOW_MIN,
                          PROF_WINDOW_MAX);
                return false;
            }
            if (a->ms < PROF_WINDOW_MIN || a->ms > PROF_WINDOW_MAX) {
                pr_printf(p, "profile: window %lu out of range (%u-%u ms)\n",
                          (unsigned long)a->ms, PROF_WINDOW_MIN, PROF_WINDOW_MAX);
                return false;
            }
        } else if (i == b + 1) {
            if (cmd_profile_is_all(w))
                continue;
            if (!parse_u64(w, &v)) {
                pr_printf(p, "profile: '%s' is not a pid, all, folded or "
                          "raw\n", w);
                return false;
            }
            if (v > INT32_MAX || !task_exists((int)v)) {
                pr_printf(p, "profile: pid %lu: no such task\n", (unsigned long)v);
                return false;
            }
            a->pid = (int)v;
        } else {
            if (!parse_u64(w, &a->chains)) {
                pr_printf(p, "profile: '%s' is not a chain count (1-%u), "
                          "folded or raw\n", w, PROF_CHAINS);
                return false;
            }
            if (a->chains < 1 || a->chains > PROF_CHAINS) {
                pr_printf(p, "profile: chains %lu out of range (1-%u)\n",
                          (unsigned long)a->chains, PROF_CHAINS);
                return false;
            }
        }
    }
    return true;
}

/* profile off|wall [ms] [pid|all] [chains|folded|raw], profile latency
 * [ms]: true with *rc the status for those words, false for others. */
static bool cmd_profile_off(int argc, char **argv, struct printer *p, int *rc)
{
    if (argc < 2)
        return false;
    struct cmd_prof_args a;
    enum prof_view view;
    if (strcmp(argv[1], "off") == 0) {
        view = PROF_VIEW_OFF;
    } else if (strcmp(argv[1], "wall") == 0) {
        view = PROF_VIEW_WALL;
    } else if (strcmp(argv[1], "latency") == 0) {
        view = PROF_VIEW_LATENCY;
        if (argc > 3) {
            pr_puts(p, "profile: too many arguments (usage: profile latency [ms])\n");
            *rc = 1;
            return true;
        }
        if (argc == 3 && cmd_profile_format_word(argv[2]) >= 0) {
            pr_printf(p, "profile: '%s' is not a window (%u-%u ms)\n", argv[2],
                      PROF_WINDOW_MIN, PROF_WINDOW_MAX);
            *rc = 1;
            return true;
        }
    } else {
        return false;
    }
    /* profile off|wall stream <port> [ms|0] [pid|all]: argv[1] the word
     * `stream` sees as its own first. */
    if (view != PROF_VIEW_LATENCY && argc >= 3 && strcmp(argv[2], "stream") == 0) {
        *rc = cmd_profile_stream_start(argc - 1, argv + 1,
                               view == PROF_VIEW_WALL ? PROF_STREAM_CPU | PROF_STREAM_OFF
                                                      : PROF_STREAM_OFF, p);
        return true;
    }
    if (!cmd_profile_args(argc, argv, 2, PROF_OFF_USAGE, &a, p)) {
        *rc = 1;
        return true;
    }
    struct prof_window_spec ws = {
        .ws_kind = PROF_KIND_OFFCPU, .ws_view = view, .ws_ms = (unsigned)a.ms, .ws_pid = a.pid,
        .ws_chains = (unsigned)a.chains, .ws_format = (enum prof_format)a.fmt,
    };
    *rc = cmd_profile_window(&ws, p);
    return true;
}
#define PROF_LOCK_USAGE "profile lock [ms] [pid|all] [chains|folded|raw]"

/* profile lock [ms] [pid|all] [chains|folded|raw]: every wait for a lock
 * charged to the holder that released it (pid: that holder). True with
 * *rc the status for that word, false for others. */
static bool cmd_profile_lock(int argc, char **argv, struct printer *p, int *rc)
{
    if (argc < 2 || strcmp(argv[1], "lock") != 0)
        return false;
    /* profile lock stream <port> [ms|0] [pid|all], as off's. */
    if (argc >= 3 && strcmp(argv[2], "stream") == 0) {
        *rc = cmd_profile_stream_start(argc - 1, argv + 1, PROF_STREAM_LOCK, p);
        return true;
    }
    struct cmd_prof_args a;
    if (!cmd_profile_args(argc, argv, 2, PROF_LOCK_USAGE, &a, p)) {
        *rc = 1;
        return true;
    }
    struct prof_window_spec ws = {
        .ws_kind = PROF_KIND_LOCK, .ws_ms = (unsigned)a.ms, .ws_pid = a.pid,
        .ws_chains = (unsigned)a.chains, .ws_format = (enum prof_format)a.fmt,
    };
    *rc = cmd_profile_window(&ws, p);
    return true;
}

#define CMD_PROFILE_USAGE "profile [ms] [pid|all] [chains|folded|raw]"

/* profile [ms] [pid|all] [chains|folded|raw]: positional, every argument
 * checked before anything starts, in order, and the first bad one named.
 * An output word (folded, raw) takes the chain count's place, and may
 * also come early, in place of the window or the pid, which then take
 * their defaults: `profile raw` is `profile 1000 all raw`, `profile 500
 * folded` is `profile 500 all folded`. It is always the last argument,
 * so no word means two things. */
static int cmd_profile(int argc, char **argv, struct printer *p)
{
    uint64_t ms = PROF_WINDOW_DEF, chains = PROF_CHAINS_DEF, v;
    int pid = PROF_ALL, fmt = PROF_TEXT, rc;

    /* stream, stop, keepalive, status: the stream's. */
    if (cmd_profile_stream(argc, argv, p, &rc))
        return rc;
    /* heap, allocs: heap profiling's (kernel/cmd/profile_heap.c). */
    if (cmd_profile_heap(argc, argv, p, &rc))
        return rc;
    /* off, wall, latency: off-CPU windows. */
    if (cmd_profile_off(argc, argv, p, &rc))
        return rc;
    /* lock: waits charged to the holders. */
    if (cmd_profile_lock(argc, argv, p, &rc))
        return rc;

    if (argc > 4) {
        pr_puts(p, "profile: too many arguments (usage: " CMD_PROFILE_USAGE ")\n");
        return 1;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int f = cmd_profile_format_word(a);
        if (f >= 0) {
            if (i != argc - 1) {
                pr_printf(p, "profile: '%s' must be the last argument "
                          "(usage: " CMD_PROFILE_USAGE ")\n", a);
                return 1;
            }
            fmt = f;
        } else if (i == 1) {
            if (!parse_u64(a, &ms)) {
                pr_printf(p, "profile: '%s' is not a window (%u-%u ms), "
                          "folded or raw\n", a, PROF_WINDOW_MIN,
                          PROF_WINDOW_MAX);
                return 1;
            }
            if (!prof_window_ok(ms))
                return cmd_profile_refuse(PROF_NOT_WINDOW, ms, p);
        } else if (i == 2) {
            if (cmd_profile_is_all(a))
                continue;
            if (!parse_u64(a, &v)) {
                pr_printf(p, "profile: '%s' is not a pid, all, folded or "
                          "raw\n", a);
                return 1;
            }
            if (v > INT32_MAX || !task_exists((int)v)) {
                pr_printf(p, "profile: pid %lu: no such task\n", (unsigned long)v);
                return 1;
            }
            pid = (int)v;
        } else {
            if (!parse_u64(a, &chains)) {
                pr_printf(p, "profile: '%s' is not a chain count (1-%u), "
                          "folded or raw\n", a, PROF_CHAINS);
                return 1;
            }
            if (!prof_chains_ok(chains))
                return cmd_profile_refuse(PROF_NOT_CHAINS, chains, p);
        }
    }
    struct prof_window_spec ws = {
        .ws_kind = PROF_KIND_CPU, .ws_ms = (unsigned)ms, .ws_pid = pid,
        .ws_chains = (unsigned)chains, .ws_format = (enum prof_format)fmt,
    };
    return cmd_profile_window(&ws, p);
}

SHELL_COMMAND(profile, "profile", CMD_PROFILE_USAGE "  sample; the hottest chains, or every chain folded or raw"
              " (also: profile [off|wall|allocs|lock] stream <port> [ms|0] [pid|all], stop, keepalive <id>, status;"
              " profile heap [chains|folded|raw], profile heap rate <bytes>|off,"
              " profile allocs [ms] [pid|all] [chains|folded|raw];"
              " profile off|wall [ms] [pid|all] [chains|folded|raw], profile latency [ms])",
              cmd_profile);

/* profile_cpus: which source took each CPU's samples in the last run (the
 * report prints the same line itself only when the sources were mixed). */
static int cmd_profile_cpus(int argc, char **argv, struct printer *p)
{
    if (argc != 1) {
        pr_puts(p, "profile_cpus: takes no arguments\n");
        return 1;
    }
    struct prof_err e;
    if (prof_print_last_sources(p, &e) == PROF_OK)
        return 0;
    cmd_profile_say("profile_cpus", &e, p);
    return 1;
}

SHELL_COMMAND(profile_cpus, "profile_cpus", "profile_cpus  the last profile's samples per cpu, by source",
              cmd_profile_cpus);
