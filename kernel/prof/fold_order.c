/* kernel/prof/fold_order.c: the one fold engine's order (kernel/prof/fold.h):
 * a fold's entries heaviest first, ties by what each mode prints, so that
 * no report's order depends on which CPU or which record came first; and
 * a names-mode frame as printed. Apart from kernel/prof/fold.c, which
 * makes the entries. Task context.
 *
 * Profiler core: prefix prof_ and PROF_. */
#include "kernel/prof/fold.h"
#include "lib/printf.h"
#include "lib/string.h"

/* ---- order: heaviest first, ties by what is printed ----------------------- */

const char *prof_fold_frame_name(const struct prof_fold_ent *e, unsigned i, char *buf, size_t n)
{
    if (e->fe_named >> i & 1)
        return (const char *)e->fe_frames[i];
    fmt_snprintf(buf, n, "0x%lx", (unsigned long)e->fe_frames[i]);
    return buf;
}

/* Symbol ties: the leaf's address, then the callers lexicographically,
 * shorter first, a resolved leaf before an unresolved one. */
static int prof_cmp_symbol(const struct prof_fold_ent *a, const struct prof_fold_ent *b)
{
    if (a->fe_frames[0] != b->fe_frames[0])
        return a->fe_frames[0] < b->fe_frames[0] ? -1 : 1;
    for (unsigned i = 1; i < a->fe_depth && i < b->fe_depth; i++)
        if (a->fe_frames[i] != b->fe_frames[i])
            return a->fe_frames[i] < b->fe_frames[i] ? -1 : 1;
    if (a->fe_depth != b->fe_depth)
        return a->fe_depth < b->fe_depth ? -1 : 1;
    return (int)(b->fe_named & 1) - (int)(a->fe_named & 1);
}

/* Exact ties: pid, cpu, then the frames innermost first, shorter first. */
static int prof_cmp_exact(const struct prof_fold_ent *a, const struct prof_fold_ent *b)
{
    if (a->fe_pid != b->fe_pid)
        return a->fe_pid < b->fe_pid ? -1 : 1;
    if (a->fe_cpu != b->fe_cpu)
        return a->fe_cpu < b->fe_cpu ? -1 : 1;
    for (unsigned i = 0; i < a->fe_depth && i < b->fe_depth; i++)
        if (a->fe_frames[i] != b->fe_frames[i])
            return a->fe_frames[i] < b->fe_frames[i] ? -1 : 1;
    return (a->fe_depth > b->fe_depth) - (a->fe_depth < b->fe_depth);
}

/* Names ties: task name, then frame names root first, shorter first. */
static int prof_cmp_names(const struct prof_fold *f, const struct prof_fold_ent *a,
                          const struct prof_fold_ent *b)
{
    int r = strcmp(f->fo_tasks[a->fe_task].fk_name, f->fo_tasks[b->fe_task].fk_name);
    unsigned i = a->fe_depth, j = b->fe_depth;
    while (!r && i > 0 && j > 0) {
        char x[20], y[20];
        i--, j--;
        r = strcmp(prof_fold_frame_name(a, i, x, sizeof x),
                   prof_fold_frame_name(b, j, y, sizeof y));
    }
    if (!r)
        r = (i > 0) - (j > 0);
    return r;
}

/* Off-CPU ties: pid, reason, waker, its interrupt, then the chains as bytes. */
static int prof_cmp_offcpu(const struct prof_fold_ent *a, const struct prof_fold_ent *b)
{
    if (a->fe_pid != b->fe_pid)
        return a->fe_pid < b->fe_pid ? -1 : 1;
    if (a->fe_why != b->fe_why)
        return a->fe_why < b->fe_why ? -1 : 1;
    if (a->fe_waker != b->fe_waker)
        return a->fe_waker < b->fe_waker ? -1 : 1;
    if (a->fe_wirq != b->fe_wirq)
        return a->fe_wirq < b->fe_wirq ? -1 : 1;
    int c = memcmp(a->fe_frames, b->fe_frames, sizeof a->fe_frames);
    if (c)
        return c;
    return memcmp(a->fe_wframes, b->fe_wframes, sizeof a->fe_wframes);
}

/* Inline with by a constant where the text report's table is sorted. */
static inline __attribute__((always_inline))
bool prof_fold_before_by(const struct prof_fold *f, const struct prof_fold_ent *a,
                         const struct prof_fold_ent *b, enum prof_fold_by by)
{
    if (a->fe_weight != b->fe_weight)
        return a->fe_weight > b->fe_weight;
    switch (by) {
    case PROF_FOLD_TASK_SYMBOL:
        if (a->fe_pid != b->fe_pid)
            return a->fe_pid < b->fe_pid;
        /* fall through */
    case PROF_FOLD_SYMBOL:
        return prof_cmp_symbol(a, b) < 0;
    case PROF_FOLD_EXACT:
        return prof_cmp_exact(a, b) < 0;
    case PROF_FOLD_NAMES:
        return prof_cmp_names(f, a, b) < 0;
    default:
        return prof_cmp_offcpu(a, b) < 0;
    }
}

static bool prof_fold_before(const struct prof_fold *f, const struct prof_fold_ent *a,
                             const struct prof_fold_ent *b)
{
    return prof_fold_before_by(f, a, b, f->fo_by);
}

static inline __attribute__((always_inline))
void prof_fold_insert(const struct prof_fold *f, const struct prof_fold_ent **v, uint32_t n,
                      enum prof_fold_by by)
{
    for (uint32_t i = 0; i < n; i++) {
        const struct prof_fold_ent *e = prof_fold_at(f, i);
        uint32_t j = i;
        for (; j > 0 && prof_fold_before_by(f, e, v[j - 1], by); j--)
            v[j] = v[j - 1];
        v[j] = e;
    }
}

static void prof_fold_sift(const struct prof_fold *f, const struct prof_fold_ent **v,
                           uint32_t i, uint32_t n)
{
    for (;;) {
        uint32_t m = i, l = 2 * i + 1, r = l + 1;
        if (l < n && prof_fold_before(f, v[m], v[l]))
            m = l;
        if (r < n && prof_fold_before(f, v[m], v[r]))
            m = r;
        if (m == i)
            return;
        const struct prof_fold_ent *t = v[i];
        v[i] = v[m];
        v[m] = t;
        i = m;
    }
}

/* Up to a table's worth (the text report's PROF_CHAINS), insertion sort:
 * those entries come nearly in order (the chains seen first are mostly
 * the heaviest), so it moves little; beyond, heapsort: no recursion, no
 * memory. Both give the same order wherever it is total. The off-CPU
 * order is not (entries that differ only in CPU or wait queue tie), and
 * heapsort's way of breaking its ties is what it has always printed: it
 * keeps heapsort at every size. The entries' addresses go where the
 * index's slots were: 2 cap slots of 4 bytes hold cap >= n pointers. */
const struct prof_fold_ent *const *prof_fold_sort(struct prof_fold *f, uint32_t n)
{
    _Static_assert(2 * sizeof(uint32_t) >= sizeof(const struct prof_fold_ent *),
                   "the index's slots hold the order's pointers");
    const struct prof_fold_ent **v = (const struct prof_fold_ent **)(void *)f->fo_ix.fx_slot;
    if (n <= PROF_CHAINS && f->fo_by == PROF_FOLD_SYMBOL) {
        prof_fold_insert(f, v, n, PROF_FOLD_SYMBOL);
        return v;
    }
    if (n <= PROF_CHAINS && f->fo_by != PROF_FOLD_OFFCPU) {
        prof_fold_insert(f, v, n, (enum prof_fold_by)f->fo_by);
        return v;
    }
    for (uint32_t i = 0; i < n; i++)
        v[i] = prof_fold_at(f, i);
    for (uint32_t i = n / 2; i-- > 0;)
        prof_fold_sift(f, v, i, n);
    for (uint32_t k = n; k-- > 1;) {
        const struct prof_fold_ent *t = v[0];
        v[0] = v[k];
        v[k] = t;
        prof_fold_sift(f, v, 0, k);
    }
    return v;
}
