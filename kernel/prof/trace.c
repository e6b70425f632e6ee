/* kernel/prof/trace.c: the scheduling trace (kernel/prof/trace.h): the
 * window's clock, and the fold that reads a frozen window back in time
 * order. The producers are kernel/prof/trace_hooks.c's. The fold runs
 * in task context on a snapshot, in memory its caller gives.
 *
 * Profiler core: prefix prof_trace_ and PROF_TRACE_. */
#include "kernel/prof/trace.h"
#include <stddef.h>

struct prof_trace_window prof_trace_win;
struct prof_trace_cpu prof_trace_cpus[MAX_CPUS];

void prof_trace_begin(uint64_t now, uint64_t mult)
{
    prof_trace_win.tw_t0 = now;
    prof_trace_win.tw_mult = mult;
    prof_trace_irq_reset();
}

void prof_trace_irq_reset(void)
{
    /* An interrupt entered under the last window and left after its
     * close recorded no exit: what it left here is no interrupt of this
     * one. */
    for (unsigned i = 0; i < MAX_CPUS; i++)
        __atomic_store_n(&prof_trace_cpus[i].tc_vec, 0, __ATOMIC_RELAXED);
}

const char *prof_trace_irq_name(unsigned class)
{
    static const char *const names[] = {
        [PROF_TRACE_IRQ_TICK] = "tick", [PROF_TRACE_IRQ_DEVICE] = "device",
        [PROF_TRACE_IRQ_IPI] = "ipi", [PROF_TRACE_IRQ_NMI] = "nmi",
    };
    return class >= 1 && class <= PROF_TRACE_IRQ_MAX ? names[class] : "other";
}

uint64_t prof_trace_ns(uint64_t t)
{
    if (t <= prof_trace_win.tw_t0)
        return 0;
    /* 128 bits: the product overflows 64 past a few ms of a GHz clock. */
    return (uint64_t)((unsigned __int128)(t - prof_trace_win.tw_t0) * prof_trace_win.tw_mult >> 32);
}

/* ---- the fold ------------------------------------------------------- */

enum { PROF_TT_UNSEEN = 0, PROF_TT_RUNNING, PROF_TT_OUT, PROF_TT_WOKEN };

/* pid's entry (made on first sight, on cpu), or NULL when the table is
 * full: the event is counted in tf_untracked. */
static struct prof_trace_task *prof_trace_task_of(struct prof_trace_fold *f, int pid, unsigned cpu,
                                                  prof_trace_idle_fn idle)
{
    unsigned h = (unsigned)pid * 2654435761u;
    for (unsigned i = 0; i < PROF_TRACE_TASKS; i++) {
        struct prof_trace_task *t = &f->tf_task[(h + i) % PROF_TRACE_TASKS];
        if (t->tt_pid == pid)
            return t;
        if (t->tt_pid == 0) {
            t->tt_pid = pid;
            t->tt_cpu = cpu;
            t->tt_idle = idle(pid);
            return t;
        }
    }
    f->tf_untracked++;
    return NULL;
}

/* A record's time in ns, clipped to the window. */
static uint64_t prof_trace_at(const struct prof_trace_fold *f, uint64_t raw)
{
    uint64_t t = prof_trace_ns(raw);
    return t > f->tf_ns ? f->tf_ns : t;
}

/* cpu's first event names the task running there: it ran from the
 * window's start. */
static void prof_trace_first(struct prof_trace_fold *f, unsigned cpu, int pid,
                             prof_trace_idle_fn idle)
{
    struct prof_trace_cpu_sum *c = &f->tf_cpu[cpu];
    if (c->cs_cur >= 0)
        return;
    c->cs_cur = pid;
    struct prof_trace_task *t = prof_trace_task_of(f, pid, cpu, idle);
    if (t && t->tt_state == PROF_TT_UNSEEN) {
        t->tt_state = PROF_TT_RUNNING;
        t->tt_in = 0;
        t->tt_partial = true;
    }
}

/* A run of t ends at now: its time charged, idle's to its CPU's idle. */
static uint64_t prof_trace_run_end(struct prof_trace_fold *f, struct prof_trace_task *t,
                                   uint64_t now)
{
    uint64_t run = now > t->tt_in ? now - t->tt_in : 0;
    t->tt_run += run;
    t->tt_runs++;
    if (t->tt_idle)
        f->tf_cpu[t->tt_cpu].cs_idle += run;
    return run;
}

static void prof_trace_on_switch(struct prof_trace_fold *f, unsigned cpu, uint64_t now,
                                 const struct prof_record *r, prof_trace_idle_fn idle,
                                 prof_trace_row_fn row, void *arg)
{
    struct prof_trace_cpu_sum *c = &f->tf_cpu[cpu];
    prof_trace_first(f, cpu, r->pr_pid, idle);
    c->cs_switches++;
    c->cs_cur = r->pr_waker;
    struct prof_trace_row w = {
        .tr_waker = -1, .tr_ns = now, .tr_pid = r->pr_pid, .tr_next = r->pr_waker, .tr_cpu = cpu,
        .tr_left = r->pr_cost <= PROF_TRACE_LEFT_MAX ? r->pr_cost : PROF_TRACE_LEFT_NONE,
        .tr_name = r->pr_name,
    };
    struct prof_trace_task *p = prof_trace_task_of(f, r->pr_pid, cpu, idle);
    if (p) {
        w.tr_idle = p->tt_idle;
        w.tr_wait = p->tt_wait_ns;
        w.tr_delay = p->tt_delay_ns;
        w.tr_partial = p->tt_partial;
        w.tr_waker = p->tt_partial ? -1 : p->tt_run_wpid;
        w.tr_wirq = p->tt_partial ? 0 : p->tt_run_wirq;
        w.tr_run = p->tt_state == PROF_TT_RUNNING ? prof_trace_run_end(f, p, now) : 0;
        p->tt_state = PROF_TT_OUT;
        p->tt_out = now;
        p->tt_partial = false;
    }
    struct prof_trace_task *n = prof_trace_task_of(f, r->pr_waker, cpu, idle);
    if (n) {
        w.tr_next_idle = n->tt_idle;
        /* Woken: it waited from its switch-out to the wake (or from the
         * window's start, if it left before), then for its CPU. Not
         * woken: preempted, runnable from its switch-out. */
        uint64_t from = n->tt_state == PROF_TT_WOKEN ? n->tt_woke : n->tt_out;
        n->tt_wait_ns = n->tt_state == PROF_TT_WOKEN ? n->tt_woke - n->tt_out : 0;
        n->tt_delay_ns = n->tt_idle || now < from ? 0 : now - from;
        n->tt_run_wpid = n->tt_state == PROF_TT_WOKEN ? n->tt_wpid : -1;
        n->tt_run_wirq = n->tt_state == PROF_TT_WOKEN ? n->tt_wirq : 0;
        if (!n->tt_idle) {
            n->tt_delay += n->tt_delay_ns;
            n->tt_delays++;
            if (n->tt_delay_ns > n->tt_max_delay)
                n->tt_max_delay = n->tt_delay_ns;
        }
        n->tt_state = PROF_TT_RUNNING;
        n->tt_in = now;
    }
    if (row && (!f->tf_cpus || (f->tf_cpus >> cpu & 1))) {
        f->tf_rows++;
        row(&w, arg);
    }
}

static void prof_trace_on_wake(struct prof_trace_fold *f, unsigned cpu, uint64_t now,
                               const struct prof_record *r, prof_trace_idle_fn idle)
{
    f->tf_cpu[cpu].cs_wakes++;
    prof_trace_first(f, cpu, r->pr_waker, idle);
    unsigned to = r->pr_cost < MAX_CPUS ? r->pr_cost : cpu;
    struct prof_trace_task *t = prof_trace_task_of(f, r->pr_pid, to, idle);
    /* A wake of a task seen leaving; one that left before the window is
     * counted from its start (tt_out 0). A second wake changes nothing. */
    if (t && t->tt_state != PROF_TT_RUNNING && t->tt_state != PROF_TT_WOKEN) {
        t->tt_state = PROF_TT_WOKEN;
        t->tt_woke = now;
        t->tt_wpid = r->pr_waker;
        t->tt_wirq = r->pr_frames[0] ? PROF_IRQ_WORD(r->pr_frames[0], r->pr_frames[1], cpu) : 0;
    }
}

static void prof_trace_on_irq(struct prof_trace_fold *f, unsigned cpu, uint64_t now,
                              const struct prof_record *r, prof_trace_idle_fn idle)
{
    struct prof_trace_cpu_sum *c = &f->tf_cpu[cpu];
    prof_trace_first(f, cpu, r->pr_pid, idle);
    uint64_t from = prof_trace_at(f, r->pr_frames[0]);
    uint64_t d = now > from ? now - from : 0;
    unsigned k = r->pr_cost <= PROF_TRACE_IRQ_MAX ? r->pr_cost : 0;
    c->cs_irq += d;
    if (c->cs_irqs[k]++ == 0 || d < c->cs_irq_min[k])
        c->cs_irq_min[k] = d;
    if (d > c->cs_irq_max[k])
        c->cs_irq_max[k] = d;
}

/* ---- the iterator --------------------------------------------------- */

uint64_t prof_trace_time(const struct prof_record *r)
{
    if (r->pr_kind == PROF_KIND_TRACE && r->pr_why == PROF_TRACE_IRQ)
        return r->pr_frames[0];
    return r->pr_weight;
}

static bool prof_trace_wanted(const struct prof_record *r)
{
    return r->pr_kind == PROF_KIND_TRACE || r->pr_kind == PROF_KIND_CPU;
}

void prof_trace_iter_init(struct prof_trace_iter *it, const struct prof_snapshot *s)
{
    it->ti_s = s;
    for (unsigned i = 0; i < MAX_CPUS; i++) {
        it->ti_at[i] = 0;
        it->ti_done[i] = 0;
        it->ti_pick[i] = -2;
    }
}

/* cpu's earliest remaining event, as an offset from ti_at (-1: none):
 * the earliest up to and with the next slice that is not an NMI's. */
static int32_t prof_trace_pick(const struct prof_trace_iter *it, unsigned cpu)
{
    const struct prof_snapshot *s = it->ti_s;
    int32_t best = -1;
    uint64_t bt = 0;
    for (uint32_t k = 0; k < PROF_TRACE_LOOK && it->ti_at[cpu] + k < s->ps_count[cpu]; k++) {
        const struct prof_record *r = &s->ps_recs[cpu][it->ti_at[cpu] + k];
        if ((it->ti_done[cpu] >> k & 1) || !prof_trace_wanted(r))
            continue;
        uint64_t t = prof_trace_time(r);
        if (best < 0 || t < bt) {
            best = (int32_t)k;
            bt = t;
        }
        if (r->pr_kind == PROF_KIND_TRACE && r->pr_why == PROF_TRACE_IRQ &&
            r->pr_cost != PROF_TRACE_IRQ_NMI)
            break;
    }
    return best;
}

/* Record at ti_at + k handed out: the head moves past every one done. */
static void prof_trace_take(struct prof_trace_iter *it, unsigned cpu, uint32_t k)
{
    const struct prof_snapshot *s = it->ti_s;
    it->ti_done[cpu] |= 1ull << k;
    while (it->ti_at[cpu] < s->ps_count[cpu] &&
           ((it->ti_done[cpu] & 1) || !prof_trace_wanted(&s->ps_recs[cpu][it->ti_at[cpu]]))) {
        it->ti_at[cpu]++;
        it->ti_done[cpu] >>= 1;
    }
    it->ti_pick[cpu] = -2;
}

const struct prof_record *prof_trace_iter_next(struct prof_trace_iter *it, unsigned *cpu)
{
    const struct prof_snapshot *s = it->ti_s;
    const struct prof_record *best = NULL;
    uint64_t bt = 0;
    unsigned bc = 0;
    for (unsigned i = 0; i < MAX_CPUS; i++) {
        if (!s->ps_recs[i])
            continue;
        if (it->ti_pick[i] == -2)
            it->ti_pick[i] = prof_trace_pick(it, i);
        if (it->ti_pick[i] < 0)
            continue;
        const struct prof_record *r = &s->ps_recs[i][it->ti_at[i] + (uint32_t)it->ti_pick[i]];
        uint64_t t = prof_trace_time(r);
        if (!best || t < bt) {
            best = r;
            bt = t;
            bc = i;
        }
    }
    if (best) {
        prof_trace_take(it, bc, (uint32_t)it->ti_pick[bc]);
        *cpu = bc;
    }
    return best;
}

/* ---- the fold, again ------------------------------------------------ */

void prof_trace_fold(const struct prof_snapshot *s, struct prof_trace_fold *f,
                     prof_trace_idle_fn idle, prof_trace_row_fn row, void *arg)
{
    for (unsigned i = 0; i < MAX_CPUS; i++) {
        f->tf_cpu[i].cs_cur = -1;
        f->tf_cpu[i].cs_seen = s->ps_in_window[i];
        f->tf_cpu[i].cs_dropped = s->ps_drops[i];
        f->tf_cpu[i].cs_nested = s->ps_nested[i];
    }
    struct prof_trace_iter it;
    prof_trace_iter_init(&it, s);
    const struct prof_record *best;
    unsigned bc;
    while ((best = prof_trace_iter_next(&it, &bc))) {
        f->tf_cpu[bc].cs_seen = true;
        uint64_t now = prof_trace_at(f, best->pr_weight);
        if (best->pr_kind == PROF_KIND_CPU) {
            f->tf_cpu[bc].cs_samples++;
            prof_trace_first(f, bc, best->pr_pid, idle);
        } else if (best->pr_why == PROF_TRACE_SWITCH) {
            prof_trace_on_switch(f, bc, now, best, idle, row, arg);
        } else if (best->pr_why == PROF_TRACE_WAKE) {
            prof_trace_on_wake(f, bc, now, best, idle);
        } else if (best->pr_why == PROF_TRACE_IRQ) {
            prof_trace_on_irq(f, bc, now, best, idle);
        }
    }
    /* The runs under way at the end, up to it. */
    for (unsigned i = 0; i < PROF_TRACE_TASKS; i++) {
        struct prof_trace_task *t = &f->tf_task[i];
        if (t->tt_pid && t->tt_state == PROF_TT_RUNNING)
            prof_trace_run_end(f, t, f->tf_ns);
    }
}
