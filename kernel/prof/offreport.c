/* kernel/prof/offreport.c: `profile off`, the report of an off-CPU
 * snapshot, as text, folded stacks or raw chains, and the fold that the
 * wall-clock and latency views share (kernel/prof/offfold.h).
 *
 * Text: the totals, then the heaviest entries, each its reason as the
 * leaf, its callers, and who woke it with the waker's chain. Folded: the
 * reason as the last frame, the weight in microseconds. Raw:
 * uapi/profile_raw.h's grammar with kind=offcpu.
 *
 * Profiler core: prefix prof_ and PROF_. */
#include "kernel/buildid.h"
#include "kernel/prof/offcpu.h"
#include "kernel/prof/offfold.h"
#include "kernel/prof/report.h"
#include "kernel/symtab.h"
#include "kernel/task.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "mm/heap.h"

/* ---- the fold ---------------------------------------------------------- */

static void prof_off_key(struct prof_off_ent *k, const struct prof_record *r,
                         const struct prof_record *w, unsigned cpu)
{
    unsigned d = r->pr_depth > PROF_FRAMES ? PROF_FRAMES : r->pr_depth;
    unsigned wd = w ? (w->pr_depth > PROF_FRAMES ? PROF_FRAMES : w->pr_depth) : 0;
    k->oe_pid = r->pr_pid;
    k->oe_waker = r->pr_waker;
    k->oe_cpu = (uint16_t)cpu;
    k->oe_why = r->pr_why;
    k->oe_name = r->pr_name;
    k->oe_depth = (uint8_t)d;
    k->oe_wdepth = (uint8_t)wd;
    uint64_t h = prof_mix(prof_mix((uint32_t)r->pr_pid, cpu), (uint32_t)r->pr_waker);
    h = prof_mix(prof_mix(h, r->pr_why), (uintptr_t)r->pr_name);
    h = prof_mix(prof_mix(h, d), wd);
    for (unsigned i = 0; i < PROF_FRAMES; i++) {
        k->oe_frames[i] = i < d ? r->pr_frames[i] : 0;
        k->oe_wframes[i] = i < wd ? w->pr_frames[i] : 0;
        h = prof_mix(prof_mix(h, k->oe_frames[i]), k->oe_wframes[i]);
    }
    k->oe_hash = h;
}

static bool prof_off_same(const struct prof_off_ent *a, const struct prof_off_ent *b)
{
    return a->oe_hash == b->oe_hash && a->oe_pid == b->oe_pid &&
           a->oe_waker == b->oe_waker && a->oe_cpu == b->oe_cpu &&
           a->oe_why == b->oe_why && a->oe_name == b->oe_name &&
           a->oe_depth == b->oe_depth && a->oe_wdepth == b->oe_wdepth &&
           memcmp(a->oe_frames, b->oe_frames, sizeof a->oe_frames) == 0 &&
           memcmp(a->oe_wframes, b->oe_wframes, sizeof a->oe_wframes) == 0;
}

/* The index holds a slot for every record: it never fills. */
void prof_off_fold_add(struct prof_off_fold *f, const struct prof_off_ent *k, uint64_t w)
{
    uint32_t mask = 2 * f->of_ix.cap - 1;
    for (uint32_t i = prof_index_first(&f->of_ix, k->oe_hash);; i = (i + 1) & mask) {
        uint32_t s = f->of_ix.slot[i];
        if (!s) {
            f->of_ents[f->of_n] = *k;
            f->of_ents[f->of_n].oe_weight = w;
            f->of_ents[f->of_n].oe_count = 1;
            f->of_ix.slot[i] = ++f->of_n;
            return;
        }
        if (prof_off_same(&f->of_ents[s - 1], k)) {
            f->of_ents[s - 1].oe_weight += w;
            f->of_ents[s - 1].oe_count++;
            return;
        }
    }
}

bool prof_off_is_blocked(unsigned why)
{
    return why == PROF_WHY_SLEEP || why == PROF_WHY_WAITQ || why == PROF_WHY_MUTEX;
}

/* Count a pid once: tasks are few, and each entry is a candidate. */
static void prof_off_count_tasks(struct prof_off_fold *f)
{
    for (uint32_t i = 0; i < f->of_n; i++) {
        bool seen = false;
        for (uint32_t j = 0; j < i && !seen; j++)
            seen = f->of_ents[j].oe_pid == f->of_ents[i].oe_pid;
        f->of_tasks += !seen;
    }
}

bool prof_off_fold_init(const struct prof_snapshot *s, struct prof_off_fold *f,
                        uint32_t n, struct printer *p)
{
    memset(f, 0, sizeof *f);
    f->of_snap = s;
    uint32_t cap = 1;
    while (cap < n)
        cap *= 2;
    f->of_ents = kmalloc((n ? n : 1) * sizeof *f->of_ents);
    if (!f->of_ents || !prof_index_init(&f->of_ix, cap)) {
        prof_off_fold_free(f);
        pr_printf(p, "profile: no memory to fold %u records (%zu bytes)\n",
                  n, n * sizeof *f->of_ents + 2 * (size_t)cap * sizeof(uint32_t));
        return false;
    }
    return true;
}

bool prof_off_fold(const struct prof_snapshot *s, struct prof_off_fold *f,
                   struct printer *p)
{
    uint32_t total = 0;
    for (unsigned c = 0; c < MAX_CPUS; c++)
        total += s->ps_count[c];
    if (!prof_off_fold_init(s, f, total, p))
        return false;
    struct prof_off_ent k;
    for (unsigned c = 0; c < MAX_CPUS; c++) {
        const struct prof_record *recs = s->ps_recs[c];
        bool any = false;
        for (uint32_t i = 0; i < s->ps_count[c]; i++) {
            const struct prof_record *r = &recs[i];
            if (r->pr_kind != PROF_KIND_OFFCPU || r->pr_why == PROF_WHY_WAKER ||
                r->pr_why == PROF_WHY_NONE || r->pr_why > PROF_WHY_MAX)
                continue;
            /* prof_emit_n put the waker's chain right behind. */
            const struct prof_record *w = i + 1 < s->ps_count[c] ? &recs[i + 1] : NULL;
            if (w && (w->pr_kind != PROF_KIND_OFFCPU || w->pr_why != PROF_WHY_WAKER))
                w = NULL;
            prof_off_key(&k, r, w, c);
            prof_off_fold_add(f, &k, r->pr_weight);
            if (prof_off_is_blocked(r->pr_why))
                f->of_blocked += r->pr_weight;
            else
                f->of_runnable += r->pr_weight;
            any = true;
        }
        f->of_cpus += any;
    }
    prof_off_count_tasks(f);
    return true;
}

void prof_off_fold_free(struct prof_off_fold *f)
{
    kfree(f->of_ents);
    f->of_ents = NULL;
    prof_index_free(&f->of_ix);
}

/* ---- order ------------------------------------------------------------- */

static bool prof_off_before(const struct prof_off_fold *f, uint32_t x, uint32_t y)
{
    const struct prof_off_ent *a = &f->of_ents[x], *b = &f->of_ents[y];
    if (a->oe_weight != b->oe_weight)
        return a->oe_weight > b->oe_weight;
    if (a->oe_pid != b->oe_pid)
        return a->oe_pid < b->oe_pid;
    if (a->oe_why != b->oe_why)
        return a->oe_why < b->oe_why;
    if (a->oe_waker != b->oe_waker)
        return a->oe_waker < b->oe_waker;
    int c = memcmp(a->oe_frames, b->oe_frames, sizeof a->oe_frames);
    if (c)
        return c < 0;
    return memcmp(a->oe_wframes, b->oe_wframes, sizeof a->oe_wframes) < 0;
}

static void prof_off_sift(const struct prof_off_fold *f, uint32_t *v, uint32_t i, uint32_t n)
{
    for (;;) {
        uint32_t m = i, l = 2 * i + 1, r = l + 1;
        if (l < n && prof_off_before(f, v[m], v[l]))
            m = l;
        if (r < n && prof_off_before(f, v[m], v[r]))
            m = r;
        if (m == i)
            return;
        uint32_t t = v[i];
        v[i] = v[m];
        v[m] = t;
        i = m;
    }
}

/* Heapsort, in place: no recursion, no memory. */
uint32_t *prof_off_sort(struct prof_off_fold *f)
{
    uint32_t *v = f->of_ix.slot, n = f->of_n;
    for (uint32_t i = 0; i < n; i++)
        v[i] = i;
    for (uint32_t i = n / 2; i-- > 0;)
        prof_off_sift(f, v, i, n);
    for (uint32_t k = n; k-- > 1;) {
        uint32_t t = v[0];
        v[0] = v[k];
        v[k] = t;
        prof_off_sift(f, v, 0, k);
    }
    return v;
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

void prof_off_leaf(const struct prof_off_ent *e, char *buf, unsigned n)
{
    const char *why = prof_why_name(e->oe_why);
    if (e->oe_name)
        fmt_snprintf(buf, n, "[%s %s]", why, e->oe_name);
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

static void prof_off_callers(const uintptr_t *frames, unsigned d, const char *indent,
                             struct printer *p)
{
    for (unsigned i = 0; i < d; i++) {
        char buf[128];
        symtab_format_ret(frames[i], buf, sizeof buf);
        pr_printf(p, "%s<- %s\n", indent, buf);
    }
}

void prof_off_print_tail(const struct prof_off_ent *e, struct printer *p)
{
    prof_off_callers(e->oe_frames, e->oe_depth, "        ", p);
    if (!prof_off_is_blocked(e->oe_why))
        return;
    if (e->oe_waker > 0) {
        char name[TASK_NAME_MAX];
        prof_off_task_name(e->oe_waker, name);
        pr_printf(p, "        woken by %d %s\n", e->oe_waker, name);
        prof_off_callers(e->oe_wframes, e->oe_wdepth, "            ", p);
    } else if (e->oe_waker == 0) {
        pr_puts(p, "        woken by the tick\n");
    } else {
        pr_puts(p, "        still waiting at the window's end\n");
    }
}

/* ---- the three outputs -------------------------------------------------- */

static void prof_off_text(struct prof_off_fold *f, unsigned chains, struct printer *p)
{
    const struct prof_snapshot *s = f->of_snap;
    char b[32], r[32];
    prof_off_ms(f->of_blocked, b, sizeof b);
    prof_off_ms(f->of_runnable, r, sizeof r);
    pr_printf(p, "off-cpu profiled %u ms, clock %lu-%lu ns\n", s->ps_ms,
              (unsigned long)s->ps_t0, (unsigned long)(s->ps_t0 + s->ps_ns));
    pr_printf(p, "blocked %s ms, runnable %s ms, %u tasks, %u dropped\n", b, r,
              f->of_tasks, s->ps_dropped);
    uint64_t total = f->of_blocked + f->of_runnable;
    if (total == 0) {
        if (s->ps_pid != PROF_ALL)
            pr_printf(p, "no off-CPU time for pid %d: it stayed on its CPU the "
                      "whole window, or did not exist\n", s->ps_pid);
        else
            pr_puts(p, "no off-CPU time: no task left its CPU in the window\n");
        return;
    }
    const uint32_t *order = prof_off_sort(f);
    for (uint32_t i = 0; i < f->of_n && i < chains; i++) {
        const struct prof_off_ent *e = &f->of_ents[order[i]];
        char pct[16], ms[32], leaf[48], name[TASK_NAME_MAX];
        prof_off_pct(e->oe_weight, total, pct, sizeof pct);
        prof_off_ms(e->oe_weight, ms, sizeof ms);
        prof_off_leaf(e, leaf, sizeof leaf);
        prof_off_task_name(e->oe_pid, name);
        pr_printf(p, "%s%% %s ms %s task %d %s\n", pct, ms, leaf, e->oe_pid, name);
        prof_off_print_tail(e, p);
    }
    if (f->of_n > chains)
        pr_printf(p, "%u more entries\n", f->of_n - chains);
}

static void prof_off_header(const struct prof_off_fold *f, const char *what, uint64_t samples,
                            struct printer *p)
{
    const struct prof_snapshot *s = f->of_snap;
    pr_printf(p, "# sonde %s build-id=%s source=sched samples=%lu dropped=%u cpus=%u "
              "ms=%u kind=offcpu\n", what, build_id(), (unsigned long)samples,
              s->ps_dropped, f->of_cpus, s->ps_ms);
}

/* A frame of a folded stack: the function a return address returns into
 * (named from the call, ret - 1), or the address. */
static void prof_off_frame_name(uintptr_t ret, char *buf, unsigned n)
{
    struct sym_hit hit;
    if (ret && symtab_lookup(ret - 1, &hit))
        strlcpy(buf, hit.name, n);
    else
        fmt_snprintf(buf, n, "0x%lx", (unsigned long)ret);
}

/* "task;outermost;...;innermost;[reason] us", root first. */
void prof_off_print_folded(const struct prof_off_ent *e, uint64_t ns, struct printer *p)
{
    char name[TASK_NAME_MAX], leaf[48];
    uint64_t us = (ns + 500) / 1000;
    if (us == 0)
        return;
    prof_off_task_name(e->oe_pid, name);
    prof_off_leaf(e, leaf, sizeof leaf);
    pr_puts(p, name);
    for (unsigned i = e->oe_depth; i-- > 0;) {
        char fr[64];
        prof_off_frame_name(e->oe_frames[i], fr, sizeof fr);
        pr_printf(p, ";%s", fr);
    }
    pr_printf(p, ";%s %lu\n", leaf, (unsigned long)us);
}

/* "2:30000000 7 burn-wait 0 why=waitq:burn-q waker=9:burn-waker ffff.. | ffff..". */
static void prof_off_print_raw(const struct prof_off_ent *e, struct printer *p)
{
    char name[TASK_NAME_MAX];
    prof_off_task_name(e->oe_pid, name);
    pr_printf(p, "%u:%lu %d %s %u why=%s", e->oe_count, (unsigned long)e->oe_weight,
              e->oe_pid, name, e->oe_cpu, prof_why_name(e->oe_why));
    if (e->oe_name)
        pr_printf(p, ":%s", e->oe_name);
    if (prof_off_is_blocked(e->oe_why))
        pr_printf(p, " waker=%d", e->oe_waker);
    /* The waker's name as the text report prints it, for a reader with
     * no task table (sonde-prof). */
    if (prof_off_is_blocked(e->oe_why) && e->oe_waker > 0) {
        char wname[TASK_NAME_MAX];
        prof_off_task_name(e->oe_waker, wname);
        pr_printf(p, ":%s", wname);
    }
    if (e->oe_depth == 0)
        pr_puts(p, " 0");
    for (unsigned i = 0; i < e->oe_depth; i++)
        pr_printf(p, " %lx", (unsigned long)e->oe_frames[i]);
    if (e->oe_wdepth) {
        pr_puts(p, " |");
        for (unsigned i = 0; i < e->oe_wdepth; i++)
            pr_printf(p, " %lx", (unsigned long)e->oe_wframes[i]);
    }
    pr_puts(p, "\n");
}

static void prof_off_export(struct prof_off_fold *f, bool folded, struct printer *p)
{
    uint64_t samples = 0;
    for (uint32_t i = 0; i < f->of_n; i++)
        samples += f->of_ents[i].oe_count;
    prof_off_header(f, folded ? "folded" : "raw", samples, p);
    const uint32_t *order = prof_off_sort(f);
    for (uint32_t i = 0; i < f->of_n; i++) {
        const struct prof_off_ent *e = &f->of_ents[order[i]];
        if (folded)
            prof_off_print_folded(e, e->oe_weight, p);
        else
            prof_off_print_raw(e, p);
    }
}

int prof_off_report(const struct prof_snapshot *s, const struct prof_report_opts *o,
                    struct printer *p)
{
    if (o->ro_view == PROF_VIEW_WALL)
        return prof_wall_report(s, o, p);
    if (o->ro_view == PROF_VIEW_LATENCY) {
        prof_latency_print(s, p);
        return PROF_OK;
    }
    struct prof_off_fold f;
    if (!prof_off_fold(s, &f, p))
        return PROF_ENOMEM;
    if (o->ro_format == PROF_TEXT)
        prof_off_text(&f, o->ro_chains, p);
    else
        prof_off_export(&f, o->ro_format == PROF_FOLDED, p);
    prof_off_fold_free(&f);
    return PROF_OK;
}
