/* kernel/prof/heapview.c: `profile heap` (kernel/prof/heapview.h): a copy
 * of the allocator's in-use table, taken under the heap's lock, becomes a
 * snapshot of the heap kind on one pseudo-CPU, and the usual readers fold
 * and print it: bytes and objects by chain, folded stacks in bytes, or
 * raw chains whose source says "heap inuse rate R" (uapi/profile_raw.h).
 *
 * The table is mm's: its caller copies it (heapprof_copy_table, under the
 * heap's lock) and hands the copy in, so that the core reads nothing of
 * mm's.
 *
 * Profiler core: prefix prof_ and PROF_. */
#include "kernel/prof/heapview.h"
#include "kernel/prof/session.h"

int prof_heap_report(const struct prof_heap_table *t, unsigned chains, enum prof_format fmt,
                     struct printer *p, struct prof_err *e)
{
    if (chains < 1 || chains > PROF_CHAINS)
        return prof_refuse(e, PROF_EINVAL, PROF_NOT_CHAINS, chains);
    static char source[40];     /* `profile heap` runs from one shell at a time */
    prof_heap_source(source, sizeof source, true, t->ht_rate);
    struct prof_snapshot s = {
        .ps_count = { t->ht_n },
        .ps_in_window = { true },
        .ps_dropped = t->ht_overflow > UINT32_MAX ? UINT32_MAX : (uint32_t)t->ht_overflow,
        .ps_kind = PROF_KIND_HEAP,
        .ps_pid = PROF_ALL,
        .ps_ncpus = 1,
        .ps_source = source,
        .ps_inuse = true,
        .ps_rate = t->ht_rate,
    };
    s.ps_recs[0] = t->ht_recs;
    struct prof_report_opts o = { .ro_chains = chains, .ro_format = fmt };
    return prof_report(&s, &o, p);
}
