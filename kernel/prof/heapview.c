/* kernel/prof/heapview.c: `profile heap` (kernel/prof/heapview.h): a copy
 * of the allocator's in-use table, taken under the heap's lock, becomes a
 * snapshot of the heap kind on one pseudo-CPU, and the usual readers fold
 * and print it: bytes and objects by chain, folded stacks in bytes, or
 * raw chains whose source says "heap inuse rate R" (uapi/profile_raw.h).
 *
 * The copy is allocated before the table is read, at the table's full
 * size: allocating under the heap's lock would deadlock. Blocks sampled
 * between the allocation and the copy are simply in it.
 *
 * Profiler core: prefix prof_ and PROF_. */
#include "kernel/prof/heapview.h"
#include "lib/printf.h"
#include "mm/heap.h"
#include "mm/heapprof.h"

int prof_heap_report(unsigned chains, enum prof_format fmt, struct printer *p)
{
    if (chains < 1 || chains > PROF_CHAINS) {
        pr_printf(p, "profile: chains %u out of range (1-%u)\n", chains, PROF_CHAINS);
        return PROF_EINVAL;
    }
    struct prof_record *recs = kmalloc(HEAPPROF_BLOCKS * sizeof *recs);
    if (!recs) {
        pr_printf(p, "profile: no memory to copy the heap table (%zu bytes)\n",
                  HEAPPROF_BLOCKS * sizeof *recs);
        return PROF_ENOMEM;
    }
    struct heapprof_stats st;
    uint32_t n = heap_prof_copy(recs, HEAPPROF_BLOCKS, &st);
    static char source[40];     /* `profile heap` runs from one shell at a time */
    fmt_snprintf(source, sizeof source, "heap inuse rate %u", st.hs_rate);
    struct prof_snapshot s = {
        .ps_count = { n },
        .ps_in_window = { true },
        .ps_dropped = st.hs_overflow > UINT32_MAX ? UINT32_MAX : (uint32_t)st.hs_overflow,
        .ps_kind = PROF_KIND_HEAP,
        .ps_pid = PROF_ALL,
        .ps_ncpus = 1,
        .ps_source = source,
        .ps_inuse = true,
        .ps_rate = st.hs_rate,
    };
    s.ps_recs[0] = recs;
    struct prof_report_opts o = { .ro_chains = chains, .ro_format = fmt };
    int rc = prof_report(&s, &o, p);
    kfree(recs);
    return rc;
}
