/* tools/output/trace_text.c: a trace as the shell's `trace` text
 * (tools/output/trace_text.h).
 *
 * The rows and the summary are the kernel's fold (kernel/prof/trace.c)
 * done again over the parsed events: the kernel prints words, the raw
 * trace carries only facts, so the host computes each run's wait, delay
 * and length itself, by the same rules, and prints them in the shell's
 * columns.
 *
 * Host pipeline: prefix sp_trace_text_. */
#include "tools/output/trace_text.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define TOP 3                   /* tasks and functions named per CPU */
#define NONE ((size_t)-1)

enum { UNSEEN = 0, RUNNING, OUT, WOKEN };

struct task {
    uint32_t pid;
    unsigned cpu;               /* where first seen (idle: its CPU's own) */
    const char *name;           /* the last name an event gave it, or NULL */
    uint64_t run, max_delay;
    uint32_t runs;
    /* the fold's state */
    uint64_t in, out, woke, wait_ns, delay_ns;
    size_t wake, run_wake;      /* the wake event that ended its wait */
    uint8_t state;
    bool partial;
};

struct func {
    const char *name;
    uint64_t n;
};

struct cpu {
    int64_t cur;                /* a task's index, or -1: none seen yet */
    uint64_t idle, irq;
    uint32_t switches, wakes, samples, rows;
    uint32_t irqs[TRAW_CLASS_MAX + 1];
    uint64_t irq_min[TRAW_CLASS_MAX + 1], irq_max[TRAW_CLASS_MAX + 1];
    struct func *funcs;
    size_t nfuncs, capfuncs;
};

struct fold {
    const struct sp_trace *t;
    FILE *f;
    uint64_t ns;                /* the window */
    struct task *tasks;
    size_t ntasks, captasks;
    struct cpu cpus[TRAW_CPUS];
};

static void ms(char *buf, size_t cap, uint64_t ns)
{
    snprintf(buf, cap, "%" PRIu64 ".%03" PRIu64, ns / 1000000, ns / 1000 % 1000);
}

static void us(char *buf, size_t cap, uint64_t ns)
{
    snprintf(buf, cap, "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
}

/* pid's task (idle: cpu's), made on first sight. */
static size_t task_of(struct fold *fd, uint32_t pid, unsigned cpu, const char *name)
{
    for (size_t i = 0; i < fd->ntasks; i++) {
        struct task *t = &fd->tasks[i];
        if (t->pid == pid && (pid != 0 || t->cpu == cpu)) {
            if (name && strcmp(name, "-") != 0)
                t->name = name;
            return i;
        }
    }
    fd->tasks = sp_grow(fd->tasks, &fd->captasks, fd->ntasks + 1, sizeof *fd->tasks);
    struct task *t = &fd->tasks[fd->ntasks];
    memset(t, 0, sizeof *t);
    t->pid = pid;
    t->cpu = cpu;
    t->name = name && strcmp(name, "-") != 0 ? name : NULL;
    t->wake = t->run_wake = NONE;
    return fd->ntasks++;
}

/* "name[pid]", "<idle>", or "?[pid]" for a task gone before the print. */
static void who(char *buf, size_t cap, const struct task *t)
{
    if (t->pid == 0)
        snprintf(buf, cap, "%s", TRAW_IDLE_TASK);
    else
        snprintf(buf, cap, "%s[%" PRIu32 "]", t->name ? t->name : "?", t->pid);
}

/* cpu's first event names the task running there: it ran from 0. */
static void first(struct fold *fd, unsigned cpu, uint32_t pid, const char *name)
{
    size_t i = task_of(fd, pid, cpu, name);
    if (fd->cpus[cpu].cur >= 0)
        return;
    fd->cpus[cpu].cur = (int64_t)i;
    struct task *t = &fd->tasks[i];
    if (t->state == UNSEEN) {
        t->state = RUNNING;
        t->in = 0;
        t->partial = true;
    }
}

static uint64_t run_end(struct fold *fd, struct task *t, uint64_t now)
{
    uint64_t run = now > t->in ? now - t->in : 0;
    t->run += run;
    t->runs++;
    if (t->pid == 0)
        fd->cpus[t->cpu].idle += run;
    return run;
}

/* " (woken by irq NAME on CPU N, during TASK)": a wake inside an
 * interrupt other than the tick (whose wakes end sleeps). */
static void woken_by(struct fold *fd, size_t wake)
{
    if (wake == NONE)
        return;
    const struct traw_event *w = &fd->t->st_ev[wake];
    if (!w->te_in_irq || w->te_class == TRAW_IRQ_TICK)
        return;
    char irq[48], during[TRAW_TASK_MAX + 16];
    if (w->te_irq[0])
        snprintf(irq, sizeof irq, "%s", w->te_irq);
    else
        snprintf(irq, sizeof irq, "%s %" PRIu32, traw_class_name(w->te_class), w->te_vec);
    if (w->te_pid == 0)
        snprintf(during, sizeof during, "%s", TRAW_IDLE_TASK);
    else
        snprintf(during, sizeof during, "%s[%" PRIu32 "]", w->te_task, w->te_pid);
    fprintf(fd->f, " (woken by irq %s on CPU %" PRIu32 ", during %s)", irq, w->te_cpu, during);
}

static void on_switch(struct fold *fd, const struct traw_event *e)
{
    struct cpu *c = &fd->cpus[e->te_cpu];
    first(fd, e->te_cpu, e->te_pid, e->te_task);
    size_t pi = task_of(fd, e->te_pid, e->te_cpu, e->te_task);
    size_t ni = task_of(fd, e->te_pid2, e->te_cpu, e->te_task2);
    struct task *p = &fd->tasks[pi], *n = &fd->tasks[ni];
    uint64_t now = e->te_ns;
    c->switches++;
    c->cur = (int64_t)ni;
    uint64_t wait = p->wait_ns, delay = p->delay_ns;
    bool partial = p->partial;
    size_t wake = partial ? NONE : p->run_wake;
    uint64_t run = p->state == RUNNING ? run_end(fd, p, now) : 0;
    p->state = OUT;
    p->out = now;
    p->partial = false;
    /* Woken: it waited from its switch-out to the wake, then for its
     * CPU. Not woken: preempted, runnable from its switch-out. */
    uint64_t from = n->state == WOKEN ? n->woke : n->out;
    n->wait_ns = n->state == WOKEN ? n->woke - n->out : 0;
    n->delay_ns = n->pid == 0 || now < from ? 0 : now - from;
    n->run_wake = n->state == WOKEN ? n->wake : NONE;
    if (n->pid != 0 && n->delay_ns > n->max_delay)
        n->max_delay = n->delay_ns;
    n->state = RUNNING;
    n->in = now;
    char t[24], w[24], d[24], r[24], a[TRAW_TASK_MAX + 16], b[TRAW_TASK_MAX + 16];
    ms(t, sizeof t, now);
    ms(w, sizeof w, wait);
    ms(d, sizeof d, delay);
    ms(r, sizeof r, run);
    who(a, sizeof a, p);
    who(b, sizeof b, n);
    fprintf(fd->f, "%12s [%04" PRIu32 "]  %-22s %10s %10s %10s%s  %s", t, e->te_cpu, a, w, d, r,
            partial ? "+" : " ", traw_left_name(e->te_left));
    if (e->te_left == TRAW_LEFT_WAITQ || e->te_left == TRAW_LEFT_MUTEX)
        fprintf(fd->f, " %s", e->te_name[0] ? e->te_name : "?");
    fprintf(fd->f, " => %s", b);
    woken_by(fd, wake);
    fputc('\n', fd->f);
    c->rows++;
}

static void on_wake(struct fold *fd, const struct traw_event *e, size_t idx)
{
    fd->cpus[e->te_cpu].wakes++;
    first(fd, e->te_cpu, e->te_pid, e->te_task);
    struct task *t = &fd->tasks[task_of(fd, e->te_pid2, e->te_wcpu, e->te_task2)];
    /* A second wake changes nothing; one of a task that left before the
     * window counts from its start (out 0). */
    if (t->state != RUNNING && t->state != WOKEN) {
        t->state = WOKEN;
        t->woke = e->te_ns;
        t->wake = idx;
    }
}

static void on_irq(struct fold *fd, const struct traw_event *e)
{
    struct cpu *c = &fd->cpus[e->te_cpu];
    first(fd, e->te_cpu, e->te_pid, NULL);
    uint64_t d = e->te_end - e->te_ns;
    unsigned k = e->te_class;
    c->irq += d;
    if (c->irqs[k]++ == 0 || d < c->irq_min[k])
        c->irq_min[k] = d;
    if (d > c->irq_max[k])
        c->irq_max[k] = d;
}

/* The function a sample was in: its innermost frame's, named. */
static const char *leaf(const struct sp_chain *ch)
{
    const struct sp_loc *l = ch && ch->c_depth ? ch->c_locs[0] : NULL;
    if (!l)
        return "?";
    if (l->pl_nframes && l->pl_frames[0].pf_func)
        return l->pl_frames[0].pf_func;
    return l->pl_sym ? l->pl_sym : "?";
}

static void on_sample(struct fold *fd, const struct traw_event *e, size_t idx)
{
    struct cpu *c = &fd->cpus[e->te_cpu];
    c->samples++;
    first(fd, e->te_cpu, e->te_pid, e->te_task);
    const char *fn = leaf(sp_trace_sample(fd->t, idx));
    for (size_t i = 0; i < c->nfuncs; i++) {
        if (strcmp(c->funcs[i].name, fn) == 0) {
            c->funcs[i].n++;
            return;
        }
    }
    c->funcs = sp_grow(c->funcs, &c->capfuncs, c->nfuncs + 1, sizeof *c->funcs);
    c->funcs[c->nfuncs++] = (struct func){ fn, 1 };
}

/* ---- the summary ------------------------------------------------------ */

static void share(char *buf, size_t cap, uint64_t part, uint64_t whole)
{
    uint64_t pm = whole ? (part * 1000 + whole / 2) / whole : 0;
    snprintf(buf, cap, "%" PRIu64 ".%" PRIu64 "%%", pm / 10, pm % 10);
}

static void longest(struct fold *fd, unsigned cpu)
{
    const struct task *top[TOP] = { 0 };
    for (size_t i = 0; i < fd->ntasks; i++) {
        const struct task *t = &fd->tasks[i];
        if (t->pid == 0 || t->cpu != cpu || !t->run)
            continue;
        for (unsigned k = 0; k < TOP; k++) {
            if (!top[k] || t->run > top[k]->run) {
                memmove(&top[k + 1], &top[k], (TOP - 1 - k) * sizeof top[0]);
                top[k] = t;
                break;
            }
        }
    }
    fputs("  longest:", fd->f);
    if (!top[0])
        fputs(" none", fd->f);
    for (unsigned k = 0; k < TOP && top[k]; k++) {
        char a[TRAW_TASK_MAX + 16], r[24], d[24];
        who(a, sizeof a, top[k]);
        ms(r, sizeof r, top[k]->run);
        ms(d, sizeof d, top[k]->max_delay);
        fprintf(fd->f, "%s %s %s ms (%" PRIu32 " runs, max delay %s ms)", k ? ";" : "", a, r,
                top[k]->runs, d);
    }
    fputc('\n', fd->f);
}

static int by_count(const void *a, const void *b)
{
    const struct func *x = a, *y = b;
    if (x->n != y->n)
        return x->n > y->n ? -1 : 1;
    return strcmp(x->name, y->name);
}

static void hottest(struct cpu *c, FILE *f)
{
    if (c->nfuncs)
        qsort(c->funcs, c->nfuncs, sizeof *c->funcs, by_count);
    fputs("  hottest:", f);
    if (!c->nfuncs)
        fputs(" none", f);
    for (size_t k = 0; k < c->nfuncs && k < TOP; k++)
        fprintf(f, "%s %s %" PRIu64, k ? ";" : "", c->funcs[k].name, c->funcs[k].n);
    fputc('\n', f);
}

static void summary(struct fold *fd, unsigned cpu)
{
    struct cpu *c = &fd->cpus[cpu];
    FILE *f = fd->f;
    uint32_t dropped = fd->t->st_hdr.th_dropped[cpu];
    if (c->cur < 0) {
        fprintf(f, "cpu %u: nothing recorded in the window, dropped %" PRIu32 "\n", cpu, dropped);
        return;
    }
    uint64_t busy = 0;
    for (size_t i = 0; i < fd->ntasks; i++)
        if (fd->tasks[i].pid != 0 && fd->tasks[i].cpu == cpu)
            busy += fd->tasks[i].run;
    char bs[48], b[24], id[24], is[48], ir[24];
    share(bs, sizeof bs, busy, fd->ns);
    ms(b, sizeof b, busy);
    ms(id, sizeof id, c->idle);
    share(is, sizeof is, c->irq, fd->ns);
    ms(ir, sizeof ir, c->irq);
    fprintf(f, "cpu %u: busy %s (%s ms), idle %s ms, interrupts %s (%s ms), switches %" PRIu32
            ", wakes %" PRIu32 ", samples %" PRIu32 ", dropped %" PRIu32 "\n", cpu, bs, b, id, is,
            ir, c->switches, c->wakes, c->samples, dropped);
    fputs("  slices:", f);
    bool any = false;
    for (unsigned k = 1; k <= TRAW_CLASS_MAX; k++) {
        if (!c->irqs[k])
            continue;
        char lo[24], hi[24];
        us(lo, sizeof lo, c->irq_min[k]);
        us(hi, sizeof hi, c->irq_max[k]);
        fprintf(f, "%s %s %" PRIu32 " (%s-%s us)", any ? ";" : "", traw_class_name(k), c->irqs[k],
                lo, hi);
        any = true;
    }
    fputs(any ? "\n" : " none\n", f);
    longest(fd, cpu);
    hottest(c, f);
}

int sp_trace_text_write(const struct sp_trace *t, FILE *f)
{
    static struct fold fd;
    memset(&fd, 0, sizeof fd);
    fd.t = t;
    fd.f = f;
    const struct traw_header *h = &t->st_hdr;
    fd.ns = (uint64_t)h->th_ms * 1000000;
    for (size_t i = 0; i < t->st_nev; i++) {
        const struct traw_event *e = &t->st_ev[i];
        uint64_t end = e->te_type == TRAW_IRQ ? e->te_end : e->te_ns;
        if (end > fd.ns)
            fd.ns = end;        /* the window ran past the ms asked for */
    }
    for (unsigned c = 0; c < TRAW_CPUS; c++)
        fd.cpus[c].cur = -1;
    char w[24];
    ms(w, sizeof w, fd.ns);
    fprintf(f, "trace: %s ms, %" PRIu32 " cpus, kernel %s, build-id %s\n", w, h->th_cpus,
            t->st_kernel ? t->st_kernel : "?", h->th_build_id);
    fprintf(f, "%12s %6s  %-22s %10s %10s %10s   %s\n", "time (ms)", "cpu", "task[pid]",
            "wait (ms)", "delay (ms)", "run (ms)", "left => next");
    for (size_t i = 0; i < t->st_nev; i++) {
        const struct traw_event *e = &t->st_ev[i];
        if (e->te_type == TRAW_SWITCH)
            on_switch(&fd, e);
        else if (e->te_type == TRAW_WAKE)
            on_wake(&fd, e, i);
        else if (e->te_type == TRAW_IRQ)
            on_irq(&fd, e);
        else
            on_sample(&fd, e, i);
    }
    for (size_t i = 0; i < fd.ntasks; i++)
        if (fd.tasks[i].state == RUNNING)
            run_end(&fd, &fd.tasks[i], fd.ns);
    uint32_t rows = 0;
    for (unsigned c = 0; c < h->th_cpus; c++)
        rows += fd.cpus[c].rows;
    fprintf(f, "%" PRIu32 " switches shown; per cpu (+: ran from the window's start):\n", rows);
    for (unsigned c = 0; c < h->th_cpus; c++)
        summary(&fd, c);
    for (unsigned c = 0; c < TRAW_CPUS; c++)
        free(fd.cpus[c].funcs);
    free(fd.tasks);
    return ferror(f) ? -1 : 0;
}
