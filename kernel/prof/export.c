/* kernel/prof/export.c: the machine-readable outputs of a profiling
 * run, `profile ... folded` and `profile ... raw`, read from the same
 * frozen snapshot as the text report (kernel/prof/snapshot.h).
 *
 * Both print every distinct chain, not the hottest few: the fold table is
 * sized from the number of samples, so it can never overflow, and lives on
 * the heap for the length of one report (task context).
 *
 *   raw     uapi/profile_raw.h's grammar: a header, then one line per
 *           distinct (pid, task, cpu, frames), addresses exact and
 *           unsymbolized, for a host tool that names them with the ELF.
 *   folded  a header, then "task;outermost;...;leaf count", frames named
 *           by symbol only, for flamegraph.pl, inferno or speedscope.
 *
 * Task names are looked up at report time by pid: the sampler records
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
#include "kernel/symtab.h"
#include "kernel/task.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "mm/heap.h"
#include "uapi/profile_raw.h"

/* One distinct chain. Raw keys on (pid, cpu, frames) with the exact
 * addresses; folded keys on (task name, frames) where a frame is the
 * name of the symbol it falls in (a pointer into the symbol table, compared
 * by content: two static functions may share a name, and folded prints
 * names) or, when nothing resolves, the address itself. */
struct exp_chain {
    uint64_t ec_hash;
    uintptr_t ec_frames[PROF_FRAMES];
    int32_t ec_pid;             /* raw only */
    uint32_t ec_task;           /* folded: index of the name's first holder */
    uint32_t ec_count;          /* records */
    uint64_t ec_weight;         /* their weights: for CPU samples, the count */
    uint64_t ec_objects;        /* heap: the objects they stand for, Q16 */
    uint16_t ec_cpu;            /* raw only */
    uint8_t ec_depth;
    uint8_t ec_named;           /* folded: bit i set: frame i is a name */
};

/* A pid seen in the run and the name it had at report time, sanitized.
 * ex_first is the index of the first entry with the same name, so that two
 * burn tasks fold into one "burn" stack. */
struct exp_task {
    int32_t ex_pid;
    uint32_t ex_first;
    char ex_name[TASK_NAME_MAX];
};

struct exp_fold {
    const struct prof_snapshot *snap;
    bool folded;
    uint32_t total;             /* records: a bound on everything below */
    uint32_t samples;           /* of them, of the snapshot's kind */
    uint64_t cpus_seen;         /* bit c: CPU c had a record of that kind */
    struct exp_chain *chains;   /* total entries */
    uint32_t nchains;
    struct prof_index ix;       /* for total chains: it never grows */
    struct exp_task *tasks;     /* total entries */
    uint32_t ntasks;
    uint32_t last_task;         /* records of one CPU mostly share a pid */
};

/* FNV-1a of a name, so that equal names hash alike wherever they live. */
static uint64_t exp_hash_name(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

/* A task name as one field: a space or ';' (or anything outside '!'..'~')
 * would split a raw line or a folded stack, so it becomes '_'; no name at
 * all is "-" (uapi/profile_raw.h). */
static void exp_sanitize(char *name)
{
    if (!name[0]) {
        strlcpy(name, "-", TASK_NAME_MAX);
        return;
    }
    for (char *c = name; *c; c++)
        if (*c < '!' || *c > '~' || *c == ';')
            *c = '_';
}

/* The task entry for pid, added (name looked up) on first sight. There
 * are at most as many pids as samples, so the table cannot fill. */
static uint32_t exp_task_of(struct exp_fold *f, int pid)
{
    if (f->ntasks && f->tasks[f->last_task].ex_pid == pid)
        return f->last_task;
    for (uint32_t i = 0; i < f->ntasks; i++)
        if (f->tasks[i].ex_pid == pid)
            return f->last_task = i;
    struct exp_task *t = &f->tasks[f->ntasks];
    t->ex_pid = pid;
    if (pid <= 0 || !task_name(pid, t->ex_name))
        t->ex_name[0] = 0;
    exp_sanitize(t->ex_name);
    t->ex_first = f->ntasks;
    for (uint32_t i = 0; i < f->ntasks; i++) {
        if (strcmp(f->tasks[i].ex_name, t->ex_name) == 0) {
            t->ex_first = f->tasks[i].ex_first;
            break;
        }
    }
    return f->last_task = f->ntasks++;
}

/* The chain key of one record. Folded names the pc by its own symbol and
 * a return address by the byte before it (the call), as symtab_format_ret
 * does: a call that is a function's last instruction returns to the next
 * function's first byte. */
static void exp_key(struct exp_fold *f, const struct prof_record *r,
                    unsigned cpu, struct exp_chain *k)
{
    unsigned depth = r->pr_depth;
    if (depth < 1)
        depth = 1;
    if (depth > PROF_FRAMES)
        depth = PROF_FRAMES;
    k->ec_depth = (uint8_t)depth;
    k->ec_named = 0;
    uint64_t h = depth;
    if (f->folded) {
        k->ec_pid = 0;
        k->ec_cpu = 0;
        k->ec_task = f->tasks[exp_task_of(f, r->pr_pid)].ex_first;
        h = prof_mix(h, k->ec_task);
    } else {
        k->ec_pid = r->pr_pid;
        k->ec_cpu = (uint16_t)cpu;
        k->ec_task = 0;
        h = prof_mix(prof_mix(h, (uint32_t)r->pr_pid), cpu);
    }
    for (unsigned i = 0; i < depth; i++) {
        uintptr_t a = r->pr_frames[i];
        struct sym_hit hit;
        if (f->folded && (i == 0 ? symtab_lookup(a, &hit)
                                 : a && symtab_lookup(a - 1, &hit))) {
            k->ec_frames[i] = (uintptr_t)hit.name;
            k->ec_named |= (uint8_t)(1u << i);
            h = prof_mix(h, exp_hash_name(hit.name));
        } else {
            k->ec_frames[i] = a;
            h = prof_mix(h, a);
        }
    }
    k->ec_hash = prof_mix(h, k->ec_named);
}

static bool exp_same(const struct exp_chain *a, const struct exp_chain *b)
{
    if (a->ec_hash != b->ec_hash || a->ec_depth != b->ec_depth ||
        a->ec_named != b->ec_named || a->ec_pid != b->ec_pid ||
        a->ec_cpu != b->ec_cpu || a->ec_task != b->ec_task)
        return false;
    for (unsigned i = 0; i < a->ec_depth; i++) {
        if (a->ec_frames[i] == b->ec_frames[i])
            continue;
        if (!(a->ec_named >> i & 1) ||
            strcmp((const char *)a->ec_frames[i], (const char *)b->ec_frames[i]))
            return false;
    }
    return true;
}

/* The index has room for every sample's chain, so it never fills: there
 * are never more chains than samples. */
struct exp_probe {
    const struct exp_chain *chains;
    const struct exp_chain *k;
};

static bool exp_probe_same(const void *ctx, uint32_t pos)
{
    const struct exp_probe *q = ctx;
    return exp_same(&q->chains[pos], q->k);
}

static void exp_add(struct exp_fold *f, const struct exp_chain *k)
{
    struct exp_probe q = { f->chains, k };
    uint32_t *slot;
    uint32_t e = prof_index_find(&f->ix, k->ec_hash, exp_probe_same, &q, &slot);
    if (e) {
        f->chains[e - 1].ec_count++;
        f->chains[e - 1].ec_weight = prof_weight_add(f->chains[e - 1].ec_weight, k->ec_weight);
        f->chains[e - 1].ec_objects += k->ec_objects;
        return;
    }
    struct exp_chain *c = &f->chains[f->nchains++];
    *c = *k;
    c->ec_count = 1;
    c->ec_weight = k->ec_weight;
    c->ec_objects = k->ec_objects;
    *slot = f->nchains;
}

static void exp_fold_all(struct exp_fold *f)
{
    const struct prof_snapshot *s = f->snap;
    struct exp_chain k;
    for (unsigned c = 0; c < MAX_CPUS; c++) {
        for (uint32_t i = 0; i < s->ps_count[c]; i++) {
            const struct prof_record *r = &s->ps_recs[c][i];
            if (r->pr_kind != s->ps_kind)
                continue;       /* not what this run measures */
            exp_key(f, r, c, &k);
            k.ec_weight = prof_record_weight(r);
            k.ec_objects = prof_record_objects_q16(r);
            exp_add(f, &k);
            f->samples++;
            f->cpus_seen |= 1ull << c;
        }
    }
}

/* ---- order: hottest first, ties by what is printed ----------------- */

/* A folded frame as printed: its symbol, or the address in hex. */
static const char *exp_frame_name(const struct exp_chain *c, unsigned i,
                                  char *buf, size_t n)
{
    if (c->ec_named >> i & 1)
        return (const char *)c->ec_frames[i];
    fmt_snprintf(buf, n, "0x%lx", (unsigned long)c->ec_frames[i]);
    return buf;
}

/* Folded ties: task name, then frame names root first, shorter first. */
static int exp_cmp_folded(const struct exp_fold *f, const struct exp_chain *a,
                          const struct exp_chain *b)
{
    int r = strcmp(f->tasks[a->ec_task].ex_name, f->tasks[b->ec_task].ex_name);
    unsigned i = a->ec_depth, j = b->ec_depth;
    while (!r && i > 0 && j > 0) {
        char x[20], y[20];
        i--, j--;
        r = strcmp(exp_frame_name(a, i, x, sizeof x),
                   exp_frame_name(b, j, y, sizeof y));
    }
    if (!r)
        r = (i > 0) - (j > 0);
    return r;
}

/* Raw ties: pid, cpu, then the frames innermost first, shorter first. */
static int exp_cmp_raw(const struct exp_chain *a, const struct exp_chain *b)
{
    if (a->ec_pid != b->ec_pid)
        return a->ec_pid < b->ec_pid ? -1 : 1;
    if (a->ec_cpu != b->ec_cpu)
        return a->ec_cpu < b->ec_cpu ? -1 : 1;
    for (unsigned i = 0; i < a->ec_depth && i < b->ec_depth; i++)
        if (a->ec_frames[i] != b->ec_frames[i])
            return a->ec_frames[i] < b->ec_frames[i] ? -1 : 1;
    return (a->ec_depth > b->ec_depth) - (a->ec_depth < b->ec_depth);
}

/* Whether chain x prints before chain y: the order never depends on which
 * CPU or which sample came first. */
static bool exp_before(const struct exp_fold *f, uint32_t x, uint32_t y)
{
    const struct exp_chain *a = &f->chains[x], *b = &f->chains[y];
    if (a->ec_weight != b->ec_weight)
        return a->ec_weight > b->ec_weight;
    return (f->folded ? exp_cmp_folded(f, a, b) : exp_cmp_raw(a, b)) < 0;
}

static void exp_sift(const struct exp_fold *f, uint32_t *v, size_t i, size_t n)
{
    for (;;) {
        size_t m = i, l = 2 * i + 1, r = l + 1;
        if (l < n && exp_before(f, v[m], v[l]))
            m = l;
        if (r < n && exp_before(f, v[m], v[r]))
            m = r;
        if (m == i)
            return;
        uint32_t t = v[i];
        v[i] = v[m];
        v[m] = t;
        i = m;
    }
}

/* Heapsort: thousands of chains, no recursion, no extra memory. The order
 * reuses the index's slots (twice as many as chains), whose job ended
 * with the fold. */
static uint32_t *exp_sort(struct exp_fold *f)
{
    uint32_t *v = f->ix.slot;
    size_t n = f->nchains;
    for (size_t i = 0; i < n; i++)
        v[i] = (uint32_t)i;
    for (size_t i = n / 2; i-- > 0;)
        exp_sift(f, v, i, n);
    for (size_t k = n; k-- > 1;) {
        uint32_t t = v[0];
        v[0] = v[k];
        v[k] = t;
        exp_sift(f, v, 0, k);
    }
    return v;
}

/* ---- printing ------------------------------------------------------- */

static void exp_header(const struct exp_fold *f, const char *kind,
                       struct printer *p)
{
    const struct prof_snapshot *s = f->snap;
    /* By hand, not __builtin_popcountll: a libgcc call on a CPU baseline
     * without the instruction, and the kernel links no libgcc. */
    unsigned cpus = 0;
    for (uint64_t m = f->cpus_seen; m; m &= m - 1)
        cpus++;
    pr_printf(p, "# sonde %s build-id=%s source=%s samples=%u dropped=%u "
              "cpus=%u ms=%u", kind, build_id(), s->ps_source, f->samples,
              s->ps_dropped, cpus, s->ps_ms);
    /* CPU profiles say nothing: their header is the one before kinds. */
    if (s->ps_kind != PROF_KIND_CPU)
        pr_printf(p, " kind=%s", praw_kind_name(s->ps_kind));
    pr_puts(p, "\n");
}

/* "3 7 burn 1 ffffffff80104a1c ffffffff80104a5b": count, pid, task, cpu,
 * then the pc and the return addresses innermost first. */
static void exp_print_raw(struct exp_fold *f, const struct exp_chain *c,
                          struct printer *p)
{
    uint32_t t = exp_task_of(f, c->ec_pid);
    pr_printf(p, "%u", c->ec_count);
    if (f->snap->ps_kind != PROF_KIND_CPU)
        pr_printf(p, ":%lu", (unsigned long)c->ec_weight);
    if (f->snap->ps_kind == PROF_KIND_HEAP) {
        /* Rounded, and at least 1 (uapi/profile_raw.h). */
        uint64_t o = (c->ec_objects + (1u << 15)) >> 16;
        pr_printf(p, ":%lu", (unsigned long)(o ? o : 1));
    }
    pr_printf(p, " %d %s %u", c->ec_pid, f->tasks[t].ex_name, c->ec_cpu);
    for (unsigned i = 0; i < c->ec_depth; i++)
        pr_printf(p, " %lx", (unsigned long)c->ec_frames[i]);
    pr_puts(p, "\n");
}

/* "burn;burn_task;burn_outer;...;burn_spin 812": root first. */
static void exp_print_folded(const struct exp_fold *f,
                             const struct exp_chain *c, struct printer *p)
{
    pr_puts(p, f->tasks[c->ec_task].ex_name);
    for (unsigned i = c->ec_depth; i-- > 0;) {
        char buf[20];
        pr_printf(p, ";%s", exp_frame_name(c, i, buf, sizeof buf));
    }
    pr_printf(p, " %lu\n", (unsigned long)c->ec_weight);
}

static void exp_free(struct exp_fold *f)
{
    kfree(f->chains);
    prof_index_free(&f->ix);
    kfree(f->tasks);
}

int prof_export(const struct prof_snapshot *s, bool folded, struct printer *p)
{
    struct exp_fold f = { .snap = s, .folded = folded };
    for (unsigned i = 0; i < MAX_CPUS; i++)
        f.total += s->ps_count[i];
    if (f.total) {
        uint32_t cap = 1;
        while (cap < f.total)
            cap *= 2;
        f.chains = kmalloc(f.total * sizeof *f.chains);
        f.tasks = kmalloc(f.total * sizeof *f.tasks);
        if (!f.chains || !f.tasks || !prof_index_init(&f.ix, cap)) {
            exp_free(&f);
            pr_printf(p, "profile: no memory to fold %u samples (%zu bytes)\n",
                      f.total, f.total * (sizeof *f.chains + sizeof *f.tasks) +
                      2 * (size_t)cap * sizeof *f.ix.slot);
            return PROF_ENOMEM;
        }
        exp_fold_all(&f);
    }
    exp_header(&f, folded ? "folded" : "raw", p);
    if (f.total) {
        const uint32_t *order = exp_sort(&f);
        for (uint32_t i = 0; i < f.nchains; i++) {
            if (folded)
                exp_print_folded(&f, &f.chains[order[i]], p);
            else
                exp_print_raw(&f, &f.chains[order[i]], p);
        }
    }
    exp_free(&f);
    return PROF_OK;
}
