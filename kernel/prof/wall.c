/* kernel/prof/wall.c: `profile wall`, each task's whole window, and
 * `profile latency`, the histogram of scheduler latency, both read from
 * an off-CPU snapshot (kernel/prof/wall.h). Both folds are the one
 * engine's (kernel/prof/fold.h): the off-CPU one and the CPU samples by
 * task and chain.
 *
 * Wall time: a task's off-CPU time is exact (its blocked and runnable
 * records); the rest of the window it was on its CPU, and that time is
 * shared among its on-CPU chains in proportion to their samples. So a
 * task's entries add up to the window, to rounding, and its header says
 * how the window split. A task that began or ended inside the window is
 * counted as if on its CPU for the part it did not exist. Idle tasks are
 * left out: their time is the CPUs' idle time, not a task's.
 *
 * Profiler core: prefix prof_ and PROF_. */
#include "kernel/prof/fold.h"
#include "kernel/prof/offcpu.h"
#include "kernel/prof/offreport.h"
#include "kernel/prof/wall.h"
#include "kernel/symtab.h"
#include "kernel/task.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "mm/heap.h"

/* One task's share of the window. */
struct prof_wall_task {
    int32_t wt_pid;
    uint64_t wt_blocked, wt_runnable, wt_on;    /* ns */
    uint64_t wt_samples;                        /* on-CPU samples */
};

/* An entry to print for a task: an off-CPU entry or a CPU chain. */
struct prof_wall_line {
    uint64_t wl_ns;
    const struct prof_fold_ent *wl_e;
    bool wl_cpu;
};

static struct prof_wall_task *prof_wall_task_of(struct prof_wall_task *t, uint32_t *n, int pid)
{
    for (uint32_t i = 0; i < *n; i++)
        if (t[i].wt_pid == pid)
            return &t[i];
    memset(&t[*n], 0, sizeof t[*n]);
    t[*n].wt_pid = pid;
    return &t[(*n)++];
}

/* Every task with records, idle tasks left out, in pid order. */
static uint32_t prof_wall_tasks(const struct prof_fold *off, const struct prof_fold *cpu,
                                uint64_t window, struct prof_wall_task *t)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < prof_fold_n(off); i++) {
        const struct prof_fold_ent *e = prof_fold_at(off, i);
        if (task_is_idle(e->fe_pid) || e->fe_why == PROF_WHY_SPIN)
            continue;               /* spun: on its CPU, in the CPU samples */
        struct prof_wall_task *w = prof_wall_task_of(t, &n, e->fe_pid);
        if (prof_why_blocked(e->fe_why))
            w->wt_blocked += e->fe_weight;
        else
            w->wt_runnable += e->fe_weight;
    }
    for (uint32_t i = 0; i < prof_fold_n(cpu); i++) {
        const struct prof_fold_ent *e = prof_fold_at(cpu, i);
        if (e->fe_pid <= 0 || task_is_idle(e->fe_pid))
            continue;
        prof_wall_task_of(t, &n, e->fe_pid)->wt_samples += e->fe_weight;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint64_t off_ns = t[i].wt_blocked + t[i].wt_runnable;
        t[i].wt_on = window > off_ns ? window - off_ns : 0;
    }
    for (uint32_t i = 1; i < n; i++)            /* tasks are few */
        for (uint32_t j = i; j > 0 && t[j].wt_pid < t[j - 1].wt_pid; j--) {
            struct prof_wall_task x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    return n;
}

/* A task's lines, heaviest first: CPU chains get their share of its
 * on-CPU time (the rounding's rest to the first), off-CPU entries their
 * own time. Returns how many. */
static uint32_t prof_wall_lines(const struct prof_wall_task *t, const struct prof_fold *off,
                                const struct prof_fold *cpu, struct prof_wall_line *l)
{
    uint32_t n = 0;
    uint64_t given = 0;
    uint32_t first_cpu = UINT32_MAX;
    for (uint32_t i = 0; i < prof_fold_n(cpu) && t->wt_samples; i++) {
        const struct prof_fold_ent *e = prof_fold_at(cpu, i);
        if (e->fe_pid != t->wt_pid)
            continue;
        l[n] = (struct prof_wall_line){ t->wt_on * e->fe_weight / t->wt_samples, e, true };
        given += l[n].wl_ns;
        if (first_cpu == UINT32_MAX)
            first_cpu = n;
        n++;
    }
    if (first_cpu != UINT32_MAX)
        l[first_cpu].wl_ns += t->wt_on - given;
    for (uint32_t i = 0; i < prof_fold_n(off); i++) {
        const struct prof_fold_ent *e = prof_fold_at(off, i);
        if (e->fe_pid == t->wt_pid && e->fe_why != PROF_WHY_SPIN)
            l[n++] = (struct prof_wall_line){ e->fe_weight, e, false };
    }
    for (uint32_t i = 1; i < n; i++)
        for (uint32_t j = i; j > 0 && l[j].wl_ns > l[j - 1].wl_ns; j--) {
            struct prof_wall_line x = l[j];
            l[j] = l[j - 1];
            l[j - 1] = x;
        }
    return n;
}

static void prof_wall_cpu_leaf(const struct prof_fold_ent *e, char *buf, unsigned n)
{
    struct sym_hit hit;
    if (symtab_lookup(e->fe_frames[0], &hit))
        strlcpy(buf, hit.name, n);
    else
        fmt_snprintf(buf, n, "0x%lx", (unsigned long)e->fe_frames[0]);
}

static void prof_wall_line_text(const struct prof_wall_line *l, uint64_t window,
                                struct printer *p)
{
    char pct[16], ms[32], leaf[64];
    prof_off_pct(l->wl_ns, window, pct, sizeof pct);
    prof_off_ms(l->wl_ns, ms, sizeof ms);
    if (!l->wl_cpu) {
        prof_off_leaf(l->wl_e, leaf, sizeof leaf);
        pr_printf(p, "%s%% %s ms %s\n", pct, ms, leaf);
        prof_off_print_tail(l->wl_e, p);
        return;
    }
    prof_wall_cpu_leaf(l->wl_e, leaf, sizeof leaf);
    pr_printf(p, "%s%% %s ms %s\n", pct, ms, leaf);
    for (unsigned i = 1; i < l->wl_e->fe_depth; i++) {
        char buf[128];
        symtab_format_ret(l->wl_e->fe_frames[i], buf, sizeof buf);
        pr_printf(p, "        <- %s\n", buf);
    }
}

/* "task;outermost;...;leaf us" for a CPU chain's share. */
static void prof_wall_line_folded(const struct prof_wall_line *l, struct printer *p)
{
    if (!l->wl_cpu) {
        prof_off_print_folded(l->wl_e, l->wl_ns, p);
        return;
    }
    uint64_t us = (l->wl_ns + 500) / 1000;
    if (us == 0)
        return;
    char name[TASK_NAME_MAX], leaf[64];
    prof_off_task_name(l->wl_e->fe_pid, name);
    pr_puts(p, name);
    for (unsigned i = l->wl_e->fe_depth; i-- > 1;) {
        struct sym_hit hit;
        uintptr_t a = l->wl_e->fe_frames[i];
        if (a && symtab_lookup(a - 1, &hit))
            pr_printf(p, ";%s", hit.name);
        else
            pr_printf(p, ";0x%lx", (unsigned long)a);
    }
    prof_wall_cpu_leaf(l->wl_e, leaf, sizeof leaf);
    pr_printf(p, ";%s %lu\n", leaf, (unsigned long)us);
}

static void prof_wall_print(const struct prof_report_opts *o, const struct prof_fold *off,
                            const struct prof_fold *cpu, struct prof_wall_task *t,
                            uint32_t nt, struct prof_wall_line *l, struct printer *p)
{
    const struct prof_snapshot *s = off->fo_snap;
    uint64_t window = s->ps_ns ? s->ps_ns : 1;
    if (o->ro_format == PROF_TEXT) {
        pr_printf(p, "wall profiled %u ms\n", s->ps_ms);
        pr_printf(p, "%u tasks, %u dropped, source %s\n", nt, s->ps_dropped, s->ps_source);
        if (nt == 0) {
            if (s->ps_pid != PROF_ALL)
                pr_printf(p, "no records for pid %d: no such task in the window\n", s->ps_pid);
            else
                pr_puts(p, "no records: no task but the idle ones\n");
        }
    } else {
        pr_printf(p, "# sonde folded wall ms=%u tasks=%u dropped=%u\n", s->ps_ms, nt,
                  s->ps_dropped);
    }
    for (uint32_t i = 0; i < nt; i++) {
        uint32_t n = prof_wall_lines(&t[i], off, cpu, l);
        if (o->ro_format != PROF_TEXT) {
            for (uint32_t j = 0; j < n; j++)
                prof_wall_line_folded(&l[j], p);
            continue;
        }
        char name[TASK_NAME_MAX], on[16], bl[16], ru[16];
        prof_off_task_name(t[i].wt_pid, name);
        prof_off_pct(t[i].wt_on, window, on, sizeof on);
        prof_off_pct(t[i].wt_blocked, window, bl, sizeof bl);
        prof_off_pct(t[i].wt_runnable, window, ru, sizeof ru);
        pr_printf(p, "task %d %s: on-cpu %s%%, blocked %s%%, runnable %s%%\n",
                  t[i].wt_pid, name, on, bl, ru);
        for (uint32_t j = 0; j < n && j < o->ro_chains; j++)
            prof_wall_line_text(&l[j], window, p);
        if (t[i].wt_on && !t[i].wt_samples)
            pr_puts(p, "        (on its CPU between samples: no chain)\n");
    }
}

int prof_wall_report(const struct prof_snapshot *s, const struct prof_report_opts *o,
                     struct printer *p)
{
    /* No raw form: the window refuses it before it starts
     * (PROF_NOT_WALL_RAW), and the command says which two give its
     * halves. */
    if (o->ro_format == PROF_RAW)
        return PROF_EINVAL;
    struct prof_fold off, cpu;
    if (!prof_off_fold(s, &off, p))
        return PROF_ENOMEM;
    if (!prof_fold_run(&cpu, s, PROF_FOLD_TASK_SYMBOL, PROF_KIND_CPU)) {
        pr_printf(p, "profile: no memory to fold %u records (%zu bytes)\n", cpu.fo_total,
                  prof_fold_most(PROF_FOLD_TASK_SYMBOL, cpu.fo_total));
        prof_fold_free(&off);
        return PROF_ENOMEM;
    }
    uint32_t most = prof_fold_n(&off) + prof_fold_n(&cpu) + 1;
    struct prof_wall_task *t = kmalloc(most * sizeof *t);
    struct prof_wall_line *l = kmalloc(most * sizeof *l);
    int rc = PROF_OK;
    if (!t || !l) {
        pr_printf(p, "profile: no memory for the wall view (%u entries)\n", most);
        rc = PROF_ENOMEM;
    } else {
        uint32_t nt = prof_wall_tasks(&off, &cpu, s->ps_ns, t);
        prof_wall_print(o, &off, &cpu, t, nt, l, p);
    }
    kfree(t);
    kfree(l);
    prof_fold_free(&off);
    prof_fold_free(&cpu);
    return rc;
}

/* ---- scheduler latency ------------------------------------------------- */

#define PROF_LAT_BUCKETS 32     /* [2^i, 2^(i+1)) us, the first from 0 */

void prof_latency_print(const struct prof_snapshot *s, struct printer *p)
{
    uint64_t wakes = 0;
    for (unsigned c = 0; c < MAX_CPUS; c++) {
        for (uint32_t i = 0; i < s->ps_count[c]; i++) {
            const struct prof_record *r = &s->ps_recs[c][i];
            wakes += r->pr_kind == PROF_KIND_OFFCPU && r->pr_why == PROF_WHY_RUNNABLE;
        }
    }
    pr_printf(p, "scheduler latency (wake to run) over %u ms, %lu wakes, %u dropped\n",
              s->ps_ms, (unsigned long)wakes, s->ps_dropped);
    if (!wakes) {
        pr_puts(p, "no wakes: no task waited for its CPU in the window\n");
        return;
    }
    for (unsigned c = 0; c < MAX_CPUS; c++) {
        uint32_t h[PROF_LAT_BUCKETS] = { 0 }, n = 0, top = 0, most = 0;
        uint64_t max = 0;
        for (uint32_t i = 0; i < s->ps_count[c]; i++) {
            const struct prof_record *r = &s->ps_recs[c][i];
            if (r->pr_kind != PROF_KIND_OFFCPU || r->pr_why != PROF_WHY_RUNNABLE)
                continue;
            uint64_t us = r->pr_weight / 1000;
            unsigned b = 0;
            while (b + 1 < PROF_LAT_BUCKETS && us >= (2ull << b))
                b++;
            h[b]++;
            n++;
            if (b + 1 > top)
                top = b + 1;
            if (h[b] > most)
                most = h[b];
            if (r->pr_weight > max)
                max = r->pr_weight;
        }
        if (!n)
            continue;
        char mx[32];
        prof_off_ms(max, mx, sizeof mx);
        pr_printf(p, "cpu %u: %u wakes, max %s ms\n", c, n, mx);
        pr_puts(p, "          usecs : count\n");
        for (unsigned b = 0; b < top; b++) {
            char bar[41];
            unsigned w = (unsigned)((uint64_t)h[b] * 40 / most);
            memset(bar, '*', w);
            memset(bar + w, ' ', 40 - w);
            bar[40] = 0;
            unsigned long lo = b ? 1ul << b : 0, hi = (2ul << b) - 1;
            pr_printf(p, "%7lu -> %-7lu : %-7u |%s|\n", lo, hi, h[b], bar);
        }
    }
}
