/* kernel/prof/trace.h: the scheduling trace (kernel/prof/trace.c): every
 * switch, wake and interrupt of a window, per CPU, in time order, with
 * the CPU samples taken meanwhile.
 *
 * Record raw, present later. The producers (kernel/prof/trace_hooks.h,
 * called by the scheduler and the interrupt entry) write one record of
 * kind PROF_KIND_TRACE into their CPU's ring per event, stamped with the
 * raw counter; the fold below reads a frozen window back, merges the
 * CPUs by time and hands each switch to its caller as a row of facts
 * (times in ns since the window's start, pids, why the task left). The
 * words are kernel/cmd/trace.c's.
 *
 * One clock for all CPUs: the raw counter every CPU reads the same.
 * x86-64: the TSC, which Sonde requires to be invariant and which the
 * firmware starts together on every CPU (QEMU keeps the vCPUs' TSCs on
 * one host clock); Sonde never writes it, nor IA32_TSC_ADJUST. arm64:
 * the generic timer's virtual count (CNTVCT_EL0), one system counter
 * shared by every PE by the architecture (Arm ARM D11.1.2), with one
 * CNTVOFF for the whole kernel. The window's start (tw_t0) is read once
 * and every record's time is its counter minus tw_t0 times tw_mult, so
 * all CPUs' times are on one scale.
 *
 * Profiler core: prefix prof_trace_ and PROF_TRACE_. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "hal/cpu.h"
#include "kernel/prof/record.h"
#include "kernel/prof/snapshot.h"

/* What a trace record is (its pr_why). Each record's pr_weight is its
 * time, the raw counter, at least 1; its other fields by event:
 *   SWITCH  pr_pid the task leaving, pr_waker the task entering,
 *           pr_cost why it left (enum prof_trace_left), pr_name the
 *           wait queue's or mutex's name (NULL: none);
 *   WAKE    pr_pid the task woken, pr_waker the task running here (the
 *           waker, or the one interrupted), pr_cost the wakee's CPU,
 *           pr_frames[0] the interrupt's vector + 1 (0: task context),
 *           pr_frames[1] its class (enum prof_trace_irq);
 *   IRQ     pr_pid the task interrupted, pr_waker the vector, pr_cost the
 *           class, pr_frames[0] the entry's time (pr_weight: the exit).
 * A CPU sample (PROF_KIND_CPU) of a trace keeps its time in pr_weight,
 * which no reader of a CPU sample reads otherwise. pr_depth is 0. */
enum prof_trace_ev {
    PROF_TRACE_SWITCH = 1,
    PROF_TRACE_WAKE = 2,
    PROF_TRACE_IRQ = 3,
};

/* Why a task left its CPU: the off-CPU reasons (enum prof_why's values
 * for sleep, waitq, mutex, preempted), then exit and yield; NONE for
 * idle. */
enum prof_trace_left {
    PROF_TRACE_LEFT_NONE = 0,
    PROF_TRACE_LEFT_SLEEP = 1,
    PROF_TRACE_LEFT_WAITQ = 2,
    PROF_TRACE_LEFT_MUTEX = 3,
    PROF_TRACE_LEFT_PREEMPTED = 4,
    PROF_TRACE_LEFT_EXIT = 5,
    PROF_TRACE_LEFT_YIELD = 6,  /* still runnable, gave its CPU up itself */
    PROF_TRACE_LEFT_MAX = PROF_TRACE_LEFT_YIELD,
};

/* What kind of interrupt a slice is, as the entry that called the hook
 * knows it. */
enum prof_trace_irq {
    PROF_TRACE_IRQ_TICK = 1,    /* the per-CPU timer */
    PROF_TRACE_IRQ_DEVICE = 2,  /* a device's (virtio-net, ...) */
    PROF_TRACE_IRQ_IPI = 3,     /* another CPU's kick */
    PROF_TRACE_IRQ_NMI = 4,     /* the counter's NMI (pseudo-NMI on arm64) */
    PROF_TRACE_IRQ_MAX = PROF_TRACE_IRQ_NMI,
};

/* The open window's clock: its start on the raw counter and ns per unit
 * (32.32, time_ns_mult). Written before the gate opens (A, B in
 * kernel/prof/ring_produce.h order it for the producers). */
struct prof_trace_window {
    uint64_t tw_t0;
    uint64_t tw_mult;
};
extern struct prof_trace_window prof_trace_win;

/* Each CPU's interrupt under way, for its slice and for a wake made
 * inside it. Written only by its own CPU with interrupts off; NMIs keep
 * their own entry time on their stack, so an NMI inside an interrupt
 * touches nothing here. */
struct prof_trace_cpu {
    uint64_t tc_t0;             /* the interrupt's entry, raw */
    uint32_t tc_vec;            /* its vector + 1; 0: none under way */
    uint32_t tc_class;          /* enum prof_trace_irq */
} __attribute__((aligned(64)));
extern struct prof_trace_cpu prof_trace_cpus[MAX_CPUS];

/* The session, before it opens the gate: a window from now, in a clock
 * whose unit is mult / 2^32 ns; no interrupt is under way. */
void prof_trace_begin(uint64_t now, uint64_t mult);
/* No interrupt under way on any CPU: before a trace or an off-CPU
 * window opens (one entered under the last and left after its close
 * recorded no exit). */
void prof_trace_irq_reset(void);
/* "tick", "device", "ipi", "nmi"; "other" for 0 or anything above. */
const char *prof_trace_irq_name(unsigned class);
/* A raw time of this window in ns since its start (0 before it). */
uint64_t prof_trace_ns(uint64_t t);

/* ---- reading a frozen window back ---------------------------------- */

/* One switch, as perf sched timehist prints it: at tr_ns on tr_cpu the
 * task tr_pid left (why: tr_left, tr_name) and tr_next came in. Its run
 * ended here after tr_run ns (from its switch-in, or the window's start:
 * tr_partial); before that run it waited tr_wait ns to be woken (0:
 * preempted, or not seen leaving in the window) and then tr_delay ns for
 * its CPU (the scheduling delay). Idle's rows say tr_idle. */
struct prof_trace_row {
    uint64_t tr_ns;
    uint64_t tr_wait, tr_delay, tr_run;
    int tr_pid, tr_next;
    unsigned tr_cpu;
    unsigned tr_left;           /* enum prof_trace_left */
    const char *tr_name;
    bool tr_idle, tr_next_idle, tr_partial;
    /* Who woke it before that run: the pid running where the wake was
     * made (-1: not woken in the window) and, for a wake inside an
     * interrupt, that interrupt (PROF_IRQ_WORD, record.h; else 0). */
    int tr_waker;
    uint32_t tr_wirq;
};

/* A task's whole window, for the summary: its CPU, the time it ran, its
 * runs and the longest scheduling delay it had. */
struct prof_trace_task {
    int tt_pid;                 /* 0: the slot is free */
    unsigned tt_cpu;
    bool tt_idle;
    uint64_t tt_run, tt_max_delay, tt_delay;
    uint32_t tt_runs, tt_delays;
    /* the fold's state */
    uint64_t tt_in, tt_out, tt_woke;
    uint64_t tt_wait_ns, tt_delay_ns;   /* of the run under way */
    int tt_wpid, tt_run_wpid;   /* the last wake's waker; the run's */
    uint32_t tt_wirq, tt_run_wirq;
    uint8_t tt_state;           /* 0 unseen, 1 running, 2 out, 3 woken */
    bool tt_partial;
};

#define PROF_TRACE_TASKS 256    /* tasks one fold follows; more are counted */

/* Each CPU's window. */
struct prof_trace_cpu_sum {
    bool cs_seen;               /* in the window */
    uint64_t cs_idle, cs_irq;   /* ns idle, ns in interrupt slices */
    uint32_t cs_switches, cs_wakes, cs_samples;
    uint32_t cs_irqs[PROF_TRACE_IRQ_MAX + 1];   /* slices by class */
    uint64_t cs_irq_max[PROF_TRACE_IRQ_MAX + 1];/* the longest, ns */
    uint64_t cs_irq_min[PROF_TRACE_IRQ_MAX + 1];/* the shortest, ns */
    uint32_t cs_dropped;        /* records the ring could not take */
    uint32_t cs_nested;         /* of those, an NMI's records that found
                                   the deferral full, or were left in it
                                   when the gate closed (ring_produce.h) */
    int cs_cur;                 /* the task running at the end (-1: none seen) */
};

struct prof_trace_fold {
    uint64_t tf_ns;             /* the window's length */
    unsigned tf_cpus;           /* bit i: CPU i's rows wanted (0: all) */
    struct prof_trace_cpu_sum tf_cpu[MAX_CPUS];
    struct prof_trace_task tf_task[PROF_TRACE_TASKS];
    uint32_t tf_untracked;      /* events of tasks past PROF_TRACE_TASKS */
    uint32_t tf_rows;
};

/* The window's events one at a time in time order across the CPUs: a
 * merge of the rings' heads. A ring is in time order by the time each
 * record was written, which is an interrupt slice's exit; the event's
 * time is its entry (prof_trace_time), so a slice comes before what
 * happened inside it (its wakes, its NMI's sample and slice), which its
 * ring holds before it. Interrupts do not nest except NMIs, so the
 * earliest of a CPU's remaining events is among those up to its next
 * slice that is not an NMI's: the iterator looks at most
 * PROF_TRACE_LOOK records ahead for it. More records than that inside
 * one interrupt (a tick waking some 60 sleepers at once; Sonde runs a
 * few dozen tasks) would come out of time order, and the raw trace's
 * reader refuses such a text rather than draw it wrong. */
#define PROF_TRACE_LOOK 64

struct prof_trace_iter {
    const struct prof_snapshot *ti_s;
    uint32_t ti_at[MAX_CPUS];       /* the first record not yet handed out */
    uint64_t ti_done[MAX_CPUS];     /* bit k: record ti_at + k handed out */
    int32_t ti_pick[MAX_CPUS];      /* the next one's offset from ti_at;
                                       -1: none left, -2: not looked for */
};

/* An event's time on the raw counter: an interrupt slice's entry,
 * any other record's pr_weight. */
uint64_t prof_trace_time(const struct prof_record *r);
void prof_trace_iter_init(struct prof_trace_iter *it, const struct prof_snapshot *s);
/* The next trace record or CPU sample of the window and its CPU, or
 * NULL after the last. */
const struct prof_record *prof_trace_iter_next(struct prof_trace_iter *it, unsigned *cpu);

/* Called for each switch, in time order across the CPUs (CPUs not in
 * tf_cpus are folded but not handed over). */
typedef void (*prof_trace_row_fn)(const struct prof_trace_row *r, void *arg);
/* Whether pid is a CPU's idle task (task_is_idle; a fake in tests). */
typedef bool (*prof_trace_idle_fn)(int pid);

/* Fold the trace records of s (its rings as Stop left them) into f,
 * whose tf_ns (the window in ns) and tf_cpus the caller set, handing
 * each switch to row. A CPU's runs plus its idle time add up to tf_ns:
 * the task running at the window's start is charged from 0, the one
 * running at its end up to tf_ns. */
void prof_trace_fold(const struct prof_snapshot *s, struct prof_trace_fold *f,
                     prof_trace_idle_fn idle, prof_trace_row_fn row, void *arg);
