/* uapi/profile_raw.h: the raw profile, as `profile [ms] [pid|all] raw`
 * prints it and sonde-prof reads it.
 *
 * Raw means unsymbolized: the kernel prints addresses and the host names
 * them with the kernel ELF (DWARF, inlines, file:line), which the kernel
 * cannot do and should not try to. The text is ASCII; every line, the last
 * included, ends with a single '\n' (no '\r'). The grammar, exactly:
 *
 *   profile  = header chain*
 *   header   = "# sonde raw build-id=" BUILDID " source=" SOURCE
 *              " samples=" DEC " dropped=" DEC " cpus=" DEC " ms=" DEC
 *              [" kind=" KIND] "\n"
 *   chain    = COUNT [":" WEIGHT [":" OBJECTS]] " " PID " " TASK " " CPU " " PC (" " RET){0,7} "\n"
 *
 *   BUILDID  = 40 lowercase hex digits: the kernel's GNU build id (sha1)
 *   SOURCE   = 1-63 printable ASCII characters (spaces allowed); it runs
 *              to the first " samples=", which it therefore never contains.
 *              The kernel's sample source name: "tick 100Hz" or "pmu/...".
 *   DEC      = decimal digits, no sign, no leading zero (but "0" itself)
 *   KIND     = "cpu" | "offcpu" | "heap" | "lock": what the records measure. A
 *              profile without kind= is a CPU profile (every profile
 *              before kinds existed); a CPU profile is written without it.
 *   COUNT    = DEC, 1 .. 4294967295: samples with exactly this chain
 *   WEIGHT   = DEC, 1 .. 2^64-1: their weights added (nanoseconds off the
 *              CPU, bytes). Present exactly when the kind is not cpu; a
 *              CPU sample weighs 1, so a CPU chain's weight is its COUNT.
 *   OBJECTS  = DEC, 1 .. 2^64-1: heap only, and there required: the
 *              objects the chain's samples stand for (each sample's
 *              weight over its requested size, summed, rounded; at least
 *              1). WEIGHT is then the bytes they stand for.
 *
 * Off-CPU profiles (kind=offcpu, source=sched: `profile off ... raw`) say
 * on each chain line, after CPU, why the task was off its CPU and who
 * ended it, and after the task's chain the waker's:
 *
 *   offchain = COUNT ":" WEIGHT " " PID " " TASK " " CPU " why=" WHY [":" NAME]
 *              [" waker=" WAKER [":" TASK]] " " PC (" " RET){0,7} [" |" (" " RET){1,8}] "\n"
 *   WHY      = "sleep" | "waitq" | "mutex" (blocked: switch-out to wake) |
 *              "preempted" | "runnable" (wake or preemption to switch-in) |
 *              "spin" (spun on a spinlock, on the CPU: a contended spin_lock)
 *   NAME     = 1-31 characters from '!'..'~' except ';' and ':': the wait
 *              queue's, mutex's or spinlock's (waitq, mutex and spin only)
 *   WAKER    = "-1" (nobody: still waiting at the window's end) | DEC
 *              0 .. PID_MAX (0: the tick); present exactly for blocked
 *              reasons; a pid above 0 may be followed by ":" and the
 *              waker's TASK name (the kernel always writes it)
 *   " |" ... = the waker's chain at the wake, innermost first; only with
 *              a WAKER of 0 or more
 * The task's chain is its return addresses at the switch-out, innermost
 * first (the first in schedule); "0" alone when the walk found none.
 *
 * Lock profiles (kind=lock, source=locks: `profile lock ... raw`) charge
 * the time tasks waited for a lock to the task that held it: one chain per
 * (lock, holder, chain at the release), COUNT the releases that ended a
 * wait, WEIGHT the nanoseconds waited under them, and after CPU the lock
 * and the waits it ended:
 *
 *   lockchain = COUNT ":" WEIGHT " " PID " " TASK " " CPU " lock=" LOCK ":" NAME
 *               " waits=" WAITS " " PC (" " RET){0,7} "\n"
 *   LOCK     = "spin" | "mutex": the lock's type
 *   NAME     = as an off-CPU NAME: the lock's name ("?" for an unnamed one)
 *   WAITS    = DEC, 1 .. 2^64-1: the waits the releases ended (Go's
 *              contentions); a wait under two holders counts under each
 * The chain is the holder's return addresses at its release, innermost
 * first; "0" alone when the walk found none. A reader keeps LOCK in
 * pc_why (PRAW_WHY_SPIN, PRAW_WHY_MUTEX), NAME in pc_name and WAITS in
 * pc_objects.
 *
 * Heap profiles come in two views, told apart by SOURCE: "heap inuse
 * rate R" is the table of sampled blocks still live (ms=0: no window,
 * dropped= the samples the table had no room for, CPU always 0), and
 * "heap allocs rate R" every sampled allocation of a window of ms. R is
 * the sampling rate in bytes (docs/profiling.md). Go's four sample types
 * map as: inuse_objects/inuse_space from an inuse profile's OBJECTS and
 * WEIGHT, alloc_objects/alloc_space from an allocs profile's.
 *   PID      = DEC, 0 .. 2147483647
 *   TASK     = 1-31 characters from '!' .. '~' except ';': the task's name
 *              when sampled. The kernel replaces a space or ';' in a name
 *              with '_' and prints "-" for no task, so the field never
 *              splits a line or a folded stack.
 *   CPU      = DEC, 0 .. 4095: the CPU that took the samples
 *   PC, RET  = 1-16 lowercase hex digits, no "0x": PC is the interrupted
 *              instruction (frame 0), each RET a return address from the
 *              frame-pointer walk, innermost first. A return address points
 *              just past its call: a reader names it from RET - 1.
 *
 * In the header, samples= (0 .. 2^64-1) is the sum of every chain's COUNT
 * (the reader checks it: a missing line is caught, not silently dropped),
 * dropped= (0 .. 2^64-1) the samples lost to full buffers or nesting,
 * cpus= (0 .. 4096) the CPUs that contributed samples, ms= (0 .. 2^32-1)
 * the window. A writer prints each distinct (pid, task, cpu,
 * frames) chain once; a reader adds repeated ones up. samples=0 with no
 * chain lines is a valid, empty profile.
 *
 * Example:
 *   # sonde raw build-id=0123...cdef source=tick 100Hz samples=5 dropped=0 cpus=1 ms=1000
 *   3 7 burn 1 ffffffff80104a1c ffffffff80104a5b ffffffff80104a8b
 *   2 7 burn 1 ffffffff80104a20 ffffffff80104a5b
 *
 * The parser (uapi/profile_raw.c) is portable C with no library calls, so
 * the kernel can share it (and the constants) with the host tools.
 *
 * Wire format: prefix praw_ and PRAW_. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define PRAW_MAGIC        "# sonde raw "
#define PRAW_FRAMES       8         /* PC plus at most 7 return addresses */
#define PRAW_BUILD_ID_HEX 40
#define PRAW_SOURCE_MAX   63
#define PRAW_TASK_MAX     31
#define PRAW_CPU_MAX      4095
#define PRAW_PID_MAX      2147483647u
#define PRAW_COUNT_MAX    4294967295u
#define PRAW_ERR_MAX      160       /* a parse error message, NUL included */

/* KIND, as the kernel's record kinds (kernel/prof/record.h) and the
 * stream's (uapi/profile_stream.h) number them. */
enum { PRAW_KIND_CPU = 0, PRAW_KIND_OFFCPU = 1, PRAW_KIND_HEAP = 2, PRAW_KIND_LOCK = 3 };
#define PRAW_KIND_MAX     PRAW_KIND_LOCK
/* "cpu", "offcpu", "heap", "lock"; NULL above PRAW_KIND_MAX. */
const char *praw_kind_name(unsigned kind);

struct praw_header {
    char ph_build_id[PRAW_BUILD_ID_HEX + 1];
    char ph_source[PRAW_SOURCE_MAX + 1];
    uint64_t ph_samples;
    uint64_t ph_dropped;
    uint32_t ph_cpus;
    uint32_t ph_ms;
    uint8_t ph_kind;                /* PRAW_KIND_*; PRAW_KIND_CPU without kind= */
};

/* An off-CPU chain's reason, numbered as the stream's PSTR_WHY_* and the
 * kernel's enum prof_why. */
enum {
    PRAW_WHY_NONE = 0, PRAW_WHY_SLEEP = 1, PRAW_WHY_WAITQ = 2, PRAW_WHY_MUTEX = 3,
    PRAW_WHY_PREEMPTED = 4, PRAW_WHY_RUNNABLE = 5, PRAW_WHY_SPIN = 6,
};
#define PRAW_WHY_MAX      PRAW_WHY_SPIN
#define PRAW_NAME_MAX     31
#define PRAW_WAKER_NONE   (-1)
/* "sleep", "waitq", "mutex", "preempted", "runnable", "spin"; NULL for none or
 * above PRAW_WHY_MAX. */
const char *praw_why_name(unsigned why);
/* Whether why is blocked time (sleep, waitq, mutex): the reasons with a
 * waker. */
int praw_why_blocked(unsigned why);

struct praw_chain {
    uint32_t pc_count;
    uint64_t pc_weight;             /* ":WEIGHT", or pc_count when none */
    uint64_t pc_objects;            /* heap: ":OBJECTS"; lock: WAITS; else pc_count */
    uint32_t pc_pid;
    uint32_t pc_cpu;
    char pc_task[PRAW_TASK_MAX + 1];
    unsigned pc_depth;              /* 1 .. PRAW_FRAMES */
    uint64_t pc_frames[PRAW_FRAMES];
    /* Off-CPU chains, and lock chains' why and name (else why PRAW_WHY_NONE, name "", waker
     * PRAW_WAKER_NONE, wdepth 0). */
    uint8_t pc_why;
    char pc_name[PRAW_NAME_MAX + 1];
    int32_t pc_waker;
    char pc_wtask[PRAW_TASK_MAX + 1];   /* the waker's name, or "" */
    unsigned pc_wdepth;             /* 0 .. PRAW_FRAMES */
    uint64_t pc_wframes[PRAW_FRAMES];
};

/* Called once per chain line, in order; a non-zero return stops the parse
 * and is returned by praw_parse (the callback has written err itself). */
typedef int (*praw_chain_fn)(void *ctx, const struct praw_chain *c,
                             unsigned line, char *err, size_t errcap);

/* Parses a whole raw profile of len bytes (NUL bytes are malformed).
 * Returns 0 with *h filled and fn called for each chain, or -1 with err
 * holding "line N: what was wrong" (NUL-terminated, cut to errcap). */
int praw_parse(const char *text, size_t len, struct praw_header *h,
               praw_chain_fn fn, void *ctx, char *err, size_t errcap);

/* One line without its '\n'; for the parser above and for tests. Return 0,
 * or -1 with err holding what was wrong (without the line number). */
int praw_parse_header(const char *s, size_t len, struct praw_header *h,
                      char *err, size_t errcap);
int praw_parse_chain(const char *s, size_t len, struct praw_chain *c,
                     char *err, size_t errcap);
/* The same, for a chain of a profile of kind (PRAW_KIND_*): a weight is
 * required exactly when the kind is not cpu. praw_parse_chain is this
 * for a CPU profile. */
int praw_parse_chain_kind(const char *s, size_t len, unsigned kind,
                          struct praw_chain *c, char *err, size_t errcap);

/* The sampling period a source name implies, in nanoseconds: 1 ms for the
 * performance counter ("pmu/..."), 10 ms for the tick ("tick 100Hz");
 * 0 for a source this header does not know. */
uint64_t praw_source_period_ns(const char *source);
