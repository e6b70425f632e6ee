/* kernel/prof/offreport.c: `profile off`, the report of an off-CPU
 * snapshot, as text, folded stacks or raw chains, and the printing pieces
 * the wall-clock view shares (kernel/prof/offreport.h). The fold is the
 * one engine's (kernel/prof/fold.h, PROF_FOLD_OFFCPU).
 *
 * Text: the totals, then the heaviest entries, each its reason as the
 * leaf, its callers, and who woke it with the waker's chain. Folded: the
 * reason as the last frame, the weight in microseconds. Raw:
 * uapi/profile_raw.h's grammar with kind=offcpu.
 *
 * Profiler core: prefix prof_ and PROF_. */
#include "kernel/buildid.h"
#include "kernel/irqname.h"
#include "kernel/prof/fold.h"
#include "kernel/prof/offcpu.h"
#include "kernel/prof/offreport.h"
#include "kernel/prof/trace.h"
#include "kernel/symtab.h"
#include "kernel/task.h"
#include "lib/printf.h"
#include "lib/string.h"

bool prof_off_fold(const struct prof_snapshot *s, struct prof_fold *f, struct printer *p)
{
    if (prof_fold_run(f, s, PROF_FOLD_OFFCPU, PROF_KIND_OFFCPU))
        return true;
    pr_printf(p, "profile: no memory to fold %u records (%zu bytes)\n", f->fo_total,
              prof_fold_most(PROF_FOLD_OFFCPU, f->fo_total));
    return false;
}

/* ---- printing pieces ---------------------------------------------------- */

void prof_off_ms(uint64_t ns, char *buf, unsigned n)
{
    uint64_t us = (ns + 500) / 1000;
    fmt_snprintf(buf, n, "%lu.%03lu", (unsigned long)(us / 1000), (unsigned long)(us % 1000));
}

void prof_off_pct(uint64_t w, uint64_t total, char *buf, unsigned n)
{
    while (w > UINT64_MAX / 2000 || total > UINT64_MAX / 2) {
        w >>= 1;
        total >>= 1;
    }
    uint64_t tenths = total ? (w * 2000 + total) / (2 * total) : 0;
    fmt_snprintf(buf, n, "%lu.%lu", (unsigned long)(tenths / 10), (unsigned long)(tenths % 10));
}

void prof_off_leaf(const struct prof_fold_ent *e, char *buf, unsigned n)
{
    const char *why = prof_why_name(e->fe_why);
    if (e->fe_name)
        fmt_snprintf(buf, n, "[%s %s]", why, e->fe_name);
    else
        fmt_snprintf(buf, n, "[%s]", why);
}

void prof_off_task_name(int pid, char *name)
{
    if (pid <= 0 || !task_name(pid, name) || !name[0]) {
        strlcpy(name, "-", TASK_NAME_MAX);
        return;
    }
    for (char *c = name; *c; c++)
        if (*c < '!' || *c > '~' || *c == ';' || *c == ':')
            *c = '_';
}

void prof_off_print_callers(const uintptr_t *frames, unsigned d, const char *indent,
                            struct printer *p)
{
    for (unsigned i = 0; i < d; i++) {
        char buf[128];
        symtab_format_ret(frames[i], buf, sizeof buf);
        pr_printf(p, "%s<- %s\n", indent, buf);
    }
}

void prof_off_print_tail(const struct prof_fold_ent *e, struct printer *p)
{
    prof_off_print_callers(e->fe_frames, e->fe_depth, "        ", p);
    if (!prof_why_blocked(e->fe_why))
        return;
    if (e->fe_wirq && e->fe_waker != 0) {
        /* Inside an interrupt: the task it interrupted did not wake it. */
        char name[TASK_NAME_MAX];
        prof_off_task_name(e->fe_waker, name);
        char irq[IRQNAME_TEXT];
        irqname_text(PROF_IRQ_VEC1(e->fe_wirq) - 1, prof_trace_irq_name(PROF_IRQ_CLASS(e->fe_wirq)),
                     irq, sizeof irq);
        pr_printf(p, "        woken by irq %s on CPU %u, during %d %s\n", irq,
                  PROF_IRQ_CPU(e->fe_wirq), e->fe_waker, name);
        prof_off_print_callers(e->fe_wframes, e->fe_wdepth, "            ", p);
    } else if (e->fe_waker > 0) {
        char name[TASK_NAME_MAX];
        prof_off_task_name(e->fe_waker, name);
        pr_printf(p, "        woken by %d %s\n", e->fe_waker, name);
        prof_off_print_callers(e->fe_wframes, e->fe_wdepth, "            ", p);
    } else if (e->fe_waker == 0) {
        pr_puts(p, "        woken by the tick\n");
    } else {
        pr_puts(p, "        still waiting at the window's end\n");
    }
}

/* ---- the three outputs -------------------------------------------------- */

static void prof_off_text(struct prof_fold *f, unsigned chains, struct printer *p)
{
    const struct prof_snapshot *s = f->fo_snap;
    char b[32], r[32];
    prof_off_ms(f->fo_blocked, b, sizeof b);
    prof_off_ms(f->fo_runnable, r, sizeof r);
    pr_printf(p, "off-cpu profiled %u ms, clock %lu-%lu ns\n", s->ps_ms,
              (unsigned long)s->ps_t0, (unsigned long)(s->ps_t0 + s->ps_ns));
    pr_printf(p, "blocked %s ms, runnable %s ms, %u tasks, %u dropped\n", b, r,
              f->fo_pids, s->ps_dropped);
    if (f->fo_spun) {
        prof_off_ms(f->fo_spun, b, sizeof b);
        pr_printf(p, "spun %s ms on spinlocks (on the CPU, in neither of those)\n", b);
    }
    uint64_t total = f->fo_blocked + f->fo_runnable + f->fo_spun;
    if (total == 0) {
        if (s->ps_pid != PROF_ALL)
            pr_printf(p, "no off-CPU time for pid %d: it stayed on its CPU the "
                      "whole window, or did not exist\n", s->ps_pid);
        else
            pr_puts(p, "no off-CPU time: no task left its CPU in the window\n");
        return;
    }
    uint32_t n = prof_fold_n(f);
    const struct prof_fold_ent *const *order = prof_fold_sort(f, n);
    for (uint32_t i = 0; i < n && i < chains; i++) {
        const struct prof_fold_ent *e = order[i];
        char pct[16], ms[32], leaf[48], name[TASK_NAME_MAX];
        prof_off_pct(e->fe_weight, total, pct, sizeof pct);
        prof_off_ms(e->fe_weight, ms, sizeof ms);
        prof_off_leaf(e, leaf, sizeof leaf);
        prof_off_task_name(e->fe_pid, name);
        pr_printf(p, "%s%% %s ms %s task %d %s\n", pct, ms, leaf, e->fe_pid, name);
        prof_off_print_tail(e, p);
    }
    if (n > chains)
        pr_printf(p, "%u more entries\n", n - chains);
}

static void prof_off_header(const struct prof_fold *f, const char *what, uint64_t samples,
                            struct printer *p)
{
    const struct prof_snapshot *s = f->fo_snap;
    pr_printf(p, "# sonde %s build-id=%s source=sched samples=%lu dropped=%u cpus=%u "
              "ms=%u kind=offcpu\n", what, build_id(), (unsigned long)samples,
              s->ps_dropped, f->fo_cpus, s->ps_ms);
}

/* A frame of a folded stack: the function a return address returns into
 * (named from the call, ret - 1), or the address. */
void prof_off_frame_name(uintptr_t ret, char *buf, unsigned n)
{
    struct sym_hit hit;
    if (ret && symtab_lookup(ret - 1, &hit))
        strlcpy(buf, hit.name, n);
    else
        fmt_snprintf(buf, n, "0x%lx", (unsigned long)ret);
}

/* "task;outermost;...;innermost;[reason] us", root first. */
void prof_off_print_folded(const struct prof_fold_ent *e, uint64_t ns, struct printer *p)
{
    char name[TASK_NAME_MAX], leaf[48];
    uint64_t us = (ns + 500) / 1000;
    if (us == 0)
        return;
    prof_off_task_name(e->fe_pid, name);
    prof_off_leaf(e, leaf, sizeof leaf);
    pr_puts(p, name);
    for (unsigned i = e->fe_depth; i-- > 0;) {
        char fr[64];
        prof_off_frame_name(e->fe_frames[i], fr, sizeof fr);
        pr_printf(p, ";%s", fr);
    }
    pr_printf(p, ";%s %lu\n", leaf, (unsigned long)us);
}

/* "2:30000000 7 burn-wait 0 why=waitq:burn-q waker=9:burn-waker ffff.. | ffff..". */
static void prof_off_print_raw(const struct prof_fold_ent *e, struct printer *p)
{
    char name[TASK_NAME_MAX];
    prof_off_task_name(e->fe_pid, name);
    pr_printf(p, "%u:%lu %d %s %u why=%s", e->fe_count, (unsigned long)e->fe_weight,
              e->fe_pid, name, e->fe_cpu, prof_why_name(e->fe_why));
    if (e->fe_name)
        pr_printf(p, ":%s", e->fe_name);
    if (prof_why_blocked(e->fe_why))
        pr_printf(p, " waker=%d", e->fe_waker);
    /* The waker's name as the text report prints it, for a reader with
     * no task table (sonde-prof). */
    if (prof_why_blocked(e->fe_why) && e->fe_waker > 0) {
        char wname[TASK_NAME_MAX];
        prof_off_task_name(e->fe_waker, wname);
        pr_printf(p, ":%s", wname);
    }
    if (e->fe_depth == 0)
        pr_puts(p, " 0");
    for (unsigned i = 0; i < e->fe_depth; i++)
        pr_printf(p, " %lx", (unsigned long)e->fe_frames[i]);
    if (e->fe_wdepth) {
        pr_puts(p, " |");
        for (unsigned i = 0; i < e->fe_wdepth; i++)
            pr_printf(p, " %lx", (unsigned long)e->fe_wframes[i]);
    }
    pr_puts(p, "\n");
}

static void prof_off_export(struct prof_fold *f, bool folded, struct printer *p)
{
    prof_off_header(f, folded ? "folded" : "raw", f->fo_records, p);
    uint32_t n = prof_fold_n(f);
    const struct prof_fold_ent *const *order = prof_fold_sort(f, n);
    for (uint32_t i = 0; i < n; i++) {
        const struct prof_fold_ent *e = order[i];
        if (folded)
            prof_off_print_folded(e, e->fe_weight, p);
        else
            prof_off_print_raw(e, p);
    }
}

int prof_off_report(const struct prof_snapshot *s, const struct prof_report_opts *o,
                    struct printer *p)
{
    struct prof_fold f;
    if (!prof_off_fold(s, &f, p))
        return PROF_ENOMEM;
    if (o->ro_format == PROF_TEXT)
        prof_off_text(&f, o->ro_chains, p);
    else
        prof_off_export(&f, o->ro_format == PROF_FOLDED, p);
    prof_fold_free(&f);
    return PROF_OK;
}
