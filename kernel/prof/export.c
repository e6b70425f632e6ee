/* kernel/prof/export.c: the machine-readable outputs of a profiling
 * run, `profile ... folded` and `profile ... raw`, read from the same
 * frozen snapshot as the text report (kernel/prof/snapshot.h).
 *
 * Both print every distinct chain, not the hottest few, from the one fold
 * (kernel/prof/fold.h: PROF_FOLD_EXACT for raw, PROF_FOLD_NAMES for
 * folded), which grows with the chains it finds and lives on the heap for
 * the length of one report (task context).
 *
 *   raw     uapi/profile_raw.h's grammar: a header, then one line per
 *           distinct (pid, task, cpu, frames), addresses exact and
 *           unsymbolized, for a host tool that names them with the ELF.
 *   folded  a header, then "task;outermost;...;leaf count", frames named
 *           by symbol only, for flamegraph.pl, inferno or speedscope.
 *
 * Task names are looked up at report time by pid (prof_fold_task): the sampler records
 * only the pid, because copying a name in NMI context would mean touching
 * the task under no lock. So a task that exited during the window (or
 * before the report) has no name left to find: its samples keep their
 * pid and are printed under the task "-", as samples with no task (pid 0)
 * are. A pid is never reused, so a name found is that task's own.
 *
 * Profiler core: prefix prof_ and PROF_. */
#include "kernel/buildid.h"
#include "kernel/prof/fold.h"
#include "kernel/prof/export.h"
#include "lib/printf.h"
#include "uapi/profile_raw.h"

/* ---- printing ------------------------------------------------------- */

static void prof_export_header(const struct prof_fold *f, const char *kind,
                               struct printer *p)
{
    const struct prof_snapshot *s = f->fo_snap;
    pr_printf(p, "# sonde %s build-id=%s source=%s samples=%u dropped=%u "
              "cpus=%u ms=%u", kind, build_id(), s->ps_source, f->fo_records,
              s->ps_dropped, f->fo_cpus, s->ps_ms);
    /* CPU profiles say nothing: their header is the one before kinds. */
    if (s->ps_kind != PROF_KIND_CPU)
        pr_printf(p, " kind=%s", praw_kind_name(s->ps_kind));
    pr_puts(p, "\n");
}

/* "3 7 burn 1 ffffffff80104a1c ffffffff80104a5b": count, pid, task, cpu,
 * then the pc and the return addresses innermost first. */
static void prof_export_raw(struct prof_fold *f, const struct prof_fold_ent *c,
                            struct printer *p)
{
    pr_printf(p, "%u", c->fe_count);
    if (f->fo_snap->ps_kind != PROF_KIND_CPU)
        pr_printf(p, ":%lu", (unsigned long)c->fe_weight);
    if (f->fo_snap->ps_kind == PROF_KIND_HEAP) {
        /* Rounded, and at least 1 (uapi/profile_raw.h). */
        uint64_t o = (c->fe_objects + (1u << 15)) >> 16;
        pr_printf(p, ":%lu", (unsigned long)(o ? o : 1));
    }
    pr_printf(p, " %d %s %u", c->fe_pid, prof_fold_task(f, c->fe_pid)->fk_name, c->fe_cpu);
    for (unsigned i = 0; i < c->fe_depth; i++)
        pr_printf(p, " %lx", (unsigned long)c->fe_frames[i]);
    pr_puts(p, "\n");
}

/* "burn;burn_task;burn_outer;...;burn_spin 812": root first. */
static void prof_export_folded(const struct prof_fold *f, const struct prof_fold_ent *c,
                               struct printer *p)
{
    pr_puts(p, f->fo_tasks[c->fe_task].fk_name);
    for (unsigned i = c->fe_depth; i-- > 0;) {
        char buf[20];
        pr_printf(p, ";%s", prof_fold_frame_name(c, i, buf, sizeof buf));
    }
    pr_printf(p, " %lu\n", (unsigned long)c->fe_weight);
}

int prof_export(const struct prof_snapshot *s, bool folded, struct printer *p)
{
    struct prof_fold f;
    enum prof_fold_by by = folded ? PROF_FOLD_NAMES : PROF_FOLD_EXACT;
    if (!prof_fold_run(&f, s, by, s->ps_kind)) {
        pr_printf(p, "profile: no memory to fold %u samples (%zu bytes)\n",
                  f.fo_total, prof_fold_most(by, f.fo_total));
        return PROF_ENOMEM;
    }
    prof_export_header(&f, folded ? "folded" : "raw", p);
    const struct prof_fold_ent *const *order = prof_fold_sort(&f, prof_fold_n(&f));
    for (uint32_t i = 0; i < prof_fold_n(&f); i++) {
        if (folded)
            prof_export_folded(&f, order[i], p);
        else
            prof_export_raw(&f, order[i], p);
    }
    prof_fold_free(&f);
    return PROF_OK;
}
