/* kernel/prof/lockreport.c: `profile lock`'s report (kernel/prof/lockreport.h).
 *
 * Text: the totals, then the heaviest entries, each its lock at the root,
 * the holder, the delay it caused and the waits, then the holder's
 * chain at its release. Folded: the lock as the root frame, then the
 * holder's task and chain, the weight in microseconds. Raw: one line an
 * entry, the offreport's raw grammar with the lock and the waits. */
#include "kernel/buildid.h"
#include "kernel/prof/fold.h"
#include "kernel/prof/lockreport.h"
#include "kernel/prof/offcpu.h"
#include "kernel/prof/offreport.h"
#include "kernel/symtab.h"
#include "kernel/task.h"
#include "lib/printf.h"
#include "lib/string.h"

static uint64_t prof_lock_waits(const struct prof_fold_ent *e)
{
    return e->fe_objects >> 16;
}

static void prof_lock_text(struct prof_fold *f, unsigned chains, struct printer *p)
{
    const struct prof_snapshot *s = f->fo_snap;
    uint64_t total = f->fo_blocked + f->fo_spun, waits = f->fo_objects >> 16;
    uint32_t n = prof_fold_n(f);
    const struct prof_fold_ent *const *order = prof_fold_sort(f, n);
    char t[32], m[32], sp[32];
    prof_off_ms(total, t, sizeof t);
    prof_off_ms(f->fo_blocked, m, sizeof m);
    prof_off_ms(f->fo_spun, sp, sizeof sp);
    pr_printf(p, "lock profiled %u ms: %s ms of waits charged to their holders, "
              "%lu waits, %u releases, %u dropped\n", s->ps_ms, t, (unsigned long)waits,
              f->fo_records, s->ps_dropped);
    pr_printf(p, "mutex %s ms, spin %s ms\n", m, sp);
    if (total == 0) {
        if (s->ps_pid != PROF_ALL)
            pr_printf(p, "no lock waited on while pid %d held it\n", s->ps_pid);
        else
            pr_puts(p, "no lock waited on in the window\n");
        return;
    }
    for (uint32_t i = 0; i < n && i < chains; i++) {
        const struct prof_fold_ent *e = order[i];
        char pct[16], ms[32], leaf[48], name[TASK_NAME_MAX];
        prof_off_pct(e->fe_weight, total, pct, sizeof pct);
        prof_off_ms(e->fe_weight, ms, sizeof ms);
        prof_off_leaf(e, leaf, sizeof leaf);
        prof_off_task_name(e->fe_pid, name);
        pr_printf(p, "%s%% %s ms %s %lu waits, held by task %d %s\n", pct, ms, leaf,
                  (unsigned long)prof_lock_waits(e), e->fe_pid, name);
        prof_off_print_callers(e->fe_frames, e->fe_depth, "        ", p);
    }
    if (n > chains)
        pr_printf(p, "%u more entries\n", n - chains);
}

/* "[mutex NAME];task;outermost;...;innermost us", the lock the root. */
static void prof_lock_folded(const struct prof_fold_ent *e, struct printer *p)
{
    char name[TASK_NAME_MAX], leaf[48];
    uint64_t us = (e->fe_weight + 500) / 1000;
    if (us == 0)
        return;
    prof_off_leaf(e, leaf, sizeof leaf);
    prof_off_task_name(e->fe_pid, name);
    pr_printf(p, "%s;%s", leaf, name);
    for (unsigned i = e->fe_depth; i-- > 0;) {
        char fr[64];
        prof_off_frame_name(e->fe_frames[i], fr, sizeof fr);
        pr_printf(p, ";%s", fr);
    }
    pr_printf(p, " %lu\n", (unsigned long)us);
}

/* "3:1200000 7 burn-lock 0 lock=mutex:burn-lock-m waits=5 ffff.. ffff..". */
static void prof_lock_raw(const struct prof_fold_ent *e, struct printer *p)
{
    char name[TASK_NAME_MAX];
    prof_off_task_name(e->fe_pid, name);
    pr_printf(p, "%u:%lu %d %s %u lock=%s:%s waits=%lu", e->fe_count,
              (unsigned long)e->fe_weight, e->fe_pid, name, e->fe_cpu,
              prof_why_name(e->fe_why), e->fe_name ? e->fe_name : "?",
              (unsigned long)prof_lock_waits(e));
    if (e->fe_depth == 0)
        pr_puts(p, " 0");
    for (unsigned i = 0; i < e->fe_depth; i++)
        pr_printf(p, " %lx", (unsigned long)e->fe_frames[i]);
    pr_puts(p, "\n");
}

int prof_lock_report(const struct prof_snapshot *s, const struct prof_report_opts *o,
                     struct printer *p)
{
    struct prof_fold f;
    if (!prof_fold_run(&f, s, PROF_FOLD_OFFCPU, PROF_KIND_LOCK)) {
        pr_printf(p, "profile: no memory to fold %u records (%zu bytes)\n", f.fo_total,
                  prof_fold_most(PROF_FOLD_OFFCPU, f.fo_total));
        return PROF_ENOMEM;
    }
    if (o->ro_format == PROF_TEXT) {
        prof_lock_text(&f, o->ro_chains, p);
    } else {
        pr_printf(p, "# sonde %s build-id=%s source=locks samples=%u dropped=%u cpus=%u "
                  "ms=%u kind=lock\n", o->ro_format == PROF_FOLDED ? "folded" : "raw",
                  build_id(), f.fo_records, s->ps_dropped, f.fo_cpus, s->ps_ms);
        uint32_t n = prof_fold_n(&f);
        const struct prof_fold_ent *const *order = prof_fold_sort(&f, n);
        for (uint32_t i = 0; i < n; i++) {
            if (o->ro_format == PROF_FOLDED)
                prof_lock_folded(order[i], p);
            else
                prof_lock_raw(order[i], p);
        }
    }
    prof_fold_free(&f);
    return PROF_OK;
}
