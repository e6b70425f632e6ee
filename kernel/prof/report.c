/* kernel/prof/report.c: presenting a profiling run. Everything here
 * runs in task context on a frozen snapshot (kernel/prof/snapshot.h)
 * that Stop handed over; nothing here touches the sampler's per-CPU state,
 * so it may look symbols up, allocate and take its time.
 *
 * The text report prints the one fold (kernel/prof/fold.h,
 * PROF_FOLD_SYMBOL): records by whole call chain, the leaf by symbol (a
 * sample can land on any instruction of a function), the callers by
 * exact return address (each call site has exactly one). prof_report also
 * hands each other snapshot to its reader: folded and raw to
 * kernel/prof/export.h, off-CPU views to kernel/prof/offreport.h and
 * kernel/prof/wall.h.
 *
 * Profiler core: prefix prof_ and PROF_. */
#include "kernel/prof/export.h"
#include "kernel/prof/fold.h"
#include "kernel/prof/lockreport.h"
#include "kernel/prof/quantile.h"
#include "kernel/prof/offreport.h"
#include "kernel/prof/report.h"
#include "kernel/prof/wall.h"
#include "kernel/symtab.h"
#include "lib/printf.h"

static uint64_t prof_report_took;

/* The text report's table: the first PROF_CHAINS entries the fold made
 * (round-robin across CPUs, kernel/prof/fold.h); the rest are the
 * overflow line's, counted exactly. */
static uint32_t prof_table_n(const struct prof_fold *f)
{
    return prof_fold_n(f) < PROF_CHAINS ? prof_fold_n(f) : PROF_CHAINS;
}

static uint64_t prof_over_weight(const struct prof_fold *f)
{
    return prof_fold_weight_from(f, prof_table_n(f));
}

/* "sample cost 410 cycles median (min 380, max 2900), 0.004% of cpu time":
 * the median of an even count is the mean of the two middle costs, rounded
 * down; the share is the costs' sum over window cycles x CPUs in the
 * window, to 3 decimals, rounded half up, in integers only. */
static void prof_print_cost(struct prof_fold *f, struct printer *p)
{
    uint32_t min = UINT32_MAX, max = 0, total = f->fo_records, *costs = f->fo_costs;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < total; i++) {
        uint32_t c = costs[i];
        if (c < min)
            min = c;
        if (c > max)
            max = c;
        sum += c;
    }
    /* The upper middle one is the smallest of what the select left
     * above the lower: no second select. */
    uint32_t lo_k = (total - 1) / 2;
    uint64_t a = prof_select(costs, total, lo_k), b = a;
    if (total % 2 == 0) {
        b = UINT32_MAX;
        for (uint32_t i = lo_k + 1; i < total; i++)
            if (costs[i] < b)
                b = costs[i];
    }
    uint32_t median = (uint32_t)((a + b) / 2);

    uint64_t den = f->fo_snap->ps_cycles;
    uint64_t n = f->fo_snap->ps_ncpus ? f->fo_snap->ps_ncpus : 1;
    /* Scale both down until sum * 200000 and den * n fit in 64 bits. */
    while (sum > UINT64_MAX / 200000 || den > UINT64_MAX / 2 / n) {
        sum >>= 1;
        den >>= 1;
    }
    den *= n;
    uint64_t milli = den ? (sum * 200000 + den) / (2 * den) : 0;
    pr_printf(p, "sample cost %u %s median (min %u, max %u), "
              "%lu.%03lu%% of cpu time\n", median, cycles_unit(), min, max,
              (unsigned long)(milli / 1000), (unsigned long)(milli % 1000));
}

/* "burn_spin+0x1c..0x2a" (the offsets the records fell on), or the
 * unresolved address, then the callers. */
static void prof_print_leaf(const struct prof_fold_ent *c, struct printer *p)
{
    if (!c->fe_name)
        pr_printf(p, "0x%lx\n", (unsigned long)c->fe_frames[0]);
    else if (c->fe_off_min == c->fe_off_max)
        pr_printf(p, "%s+0x%zx\n", c->fe_name, (size_t)c->fe_off_min);
    else
        pr_printf(p, "%s+0x%zx..0x%zx\n", c->fe_name, (size_t)c->fe_off_min,
                  (size_t)c->fe_off_max);
    for (unsigned i = 1; i < c->fe_depth; i++) {
        char buf[128];
        symtab_format_ret(c->fe_frames[i], buf, sizeof buf);
        pr_printf(p, "        <- %s\n", buf);
    }
}

static void prof_print_chain(const struct prof_fold_ent *c, uint64_t total,
                             struct printer *p)
{
    /* Percent to one decimal, rounded half up: tenths = weight*1000/total,
     * scaled down first where weight * 2000 would not fit 64 bits. */
    uint64_t w = c->fe_weight;
    while (w > (UINT64_MAX - total) / 2000 || total > UINT64_MAX / 2) {
        w >>= 1;
        total >>= 1;
    }
    uint64_t tenths = (w * 2000 + total) / (2 * total);
    pr_printf(p, "%lu.%lu%% %lu ", (unsigned long)(tenths / 10),
              (unsigned long)(tenths % 10), (unsigned long)c->fe_weight);
    prof_print_leaf(c, p);
}

/* ---- heap snapshots: bytes and objects, not samples ---- */

/* Q16 objects, rounded to whole ones. */
static unsigned long prof_objects(uint64_t q16)
{
    return (unsigned long)((q16 + (1u << 15)) >> 16);
}

/* "heap in use: rate 524288 bytes, 2050 samples, 0 did not fit the table"
 * or "heap allocated in 2000 ms: rate ...", then the estimate. */
static void prof_print_heap_header(const struct prof_fold *f, struct printer *p)
{
    const struct prof_snapshot *s = f->fo_snap;
    if (s->ps_inuse) {
        pr_printf(p, "heap in use: rate %u bytes, %u samples, %u did not fit the table\n",
                  s->ps_rate, f->fo_records, s->ps_dropped);
    } else {
        pr_printf(p, "heap allocated in %u ms: rate %u bytes, %u samples on %u cpus, "
                  "%u dropped\n", s->ps_ms, s->ps_rate, f->fo_records, f->fo_cpus, s->ps_dropped);
    }
    pr_printf(p, "estimated %lu bytes in %lu objects\n", (unsigned long)f->fo_weight,
              prof_objects(f->fo_objects));
}

/* "34.5% 1843200 bytes 450 objects heaptest_site_a+0x1c", then callers. */
static void prof_print_heap_chain(const struct prof_fold_ent *c, uint64_t total,
                                  struct printer *p)
{
    uint64_t w = c->fe_weight, t = total ? total : 1;
    while (w > UINT64_MAX / 2000 || t > UINT64_MAX / 2) {
        w >>= 1;
        t >>= 1;
    }
    uint64_t tenths = (w * 2000 + t) / (2 * t);
    pr_printf(p, "%lu.%lu%% %lu bytes %lu objects ", (unsigned long)(tenths / 10),
              (unsigned long)(tenths % 10), (unsigned long)c->fe_weight,
              prof_objects(c->fe_objects));
    prof_print_leaf(c, p);
}

/* The table's hottest chains, at most chains of them, each by print,
 * then what did not fit the table, in unit (samples, bytes). */
static void prof_print_table(struct prof_fold *f, unsigned chains,
                             void (*print)(const struct prof_fold_ent *c, uint64_t total,
                                           struct printer *p),
                             const char *unit, struct printer *p)
{
    uint32_t n = prof_table_n(f);
    const struct prof_fold_ent *const *order = prof_fold_sort(f, n);
    for (uint32_t i = 0; i < n && i < chains; i++)
        print(order[i], f->fo_weight, p);
    uint64_t over = prof_over_weight(f);
    if (over)
        pr_printf(p, "%u more chains did not fit the %u-chain table (%lu %s)\n",
                  prof_fold_n(f) - n, PROF_CHAINS, (unsigned long)over, unit);
}

static void prof_print_heap(struct prof_fold *f, unsigned chains, struct printer *p)
{
    prof_print_heap_header(f, p);
    if (f->fo_records == 0) {
        pr_puts(p, f->fo_snap->ps_inuse ? "no sampled blocks in use\n"
                                        : "no allocations sampled in the window\n");
        return;
    }
    prof_print_table(f, chains, prof_print_heap_chain, "bytes", p);
}

static void prof_print_empty(const struct prof_snapshot *s, struct printer *p)
{
    if (s->ps_pid != PROF_ALL)
        pr_printf(p, "no samples for pid %d: that task may have been asleep "
                  "the whole window\n", s->ps_pid);
    else if (s->ps_counter)
        pr_puts(p, "no samples: the counter counts unhalted cycles, so a CPU "
                "that spent the window in hlt contributes nothing; this "
                "machine was idle\n");
    else
        pr_puts(p, "no samples\n");     /* the tick samples idle: unexpected */
}

void prof_print_sources(const struct prof_snapshot *s, struct printer *p)
{
    const char *sep = "cpus: ";
    for (unsigned i = 0; i < MAX_CPUS; i++) {
        uint32_t pmu = s->ps_from_pmu[i], tick = s->ps_from_tick[i];
        if (!s->ps_in_window[i])
            continue;
        pr_printf(p, "%s%u", sep, i);
        if (pmu)
            pr_printf(p, " pmu %u", pmu);
        if (tick)
            pr_printf(p, " tick %u", tick);
        if (!pmu && !tick)
            pr_puts(p, " none");
        sep = ", ";
    }
    pr_puts(p, sep[0] == ',' ? "\n" : "cpus: none\n");
}

/* On the counter, a CPU whose samples came from its tick failed to arm
 * (or armed late): the header's source is not the whole story, so the
 * report says which CPU used what. Never printed on the tick alone. */
static bool prof_sources_mixed(const struct prof_snapshot *s)
{
    if (!s->ps_counter)
        return false;
    for (unsigned i = 0; i < MAX_CPUS; i++)
        if (s->ps_from_tick[i])
            return true;
    return false;
}

static void prof_print_header(const struct prof_fold *f, struct printer *p)
{
    const struct prof_snapshot *s = f->fo_snap;
    pr_printf(p, "profiled %u ms\n", s->ps_ms);
    pr_printf(p, "%u samples on %u cpus, %u dropped, source %s\n",
              f->fo_records, f->fo_cpus, s->ps_dropped, s->ps_source);
    if (s->ps_note)
        pr_printf(p, "%s\n", s->ps_note);
}

static void prof_print_chains(struct prof_fold *f, unsigned chains,
                              struct printer *p)
{
    prof_print_table(f, chains, prof_print_chain, "samples", p);
}

/* An off-CPU snapshot, to the reader of o's view. */
static int prof_report_off(const struct prof_snapshot *s, const struct prof_report_opts *o,
                           struct printer *p)
{
    if (o->ro_view == PROF_VIEW_WALL)
        return prof_wall_report(s, o, p);
    if (o->ro_view == PROF_VIEW_LATENCY) {
        prof_latency_print(s, p);
        return PROF_OK;
    }
    return prof_off_report(s, o, p);
}

/* Fold, then print: one pass over the records, each distinct address
 * resolved once (prof_fold_run), one sort of the table, then the lines. The fold comes
 * before the first line, so that running out of memory prints only the
 * one line saying so. Everything the fold allocated is freed before
 * return. */
int prof_report(const struct prof_snapshot *s, const struct prof_report_opts *o,
                struct printer *p)
{
    uint64_t t0 = cycles_now();
    if (s->ps_kind == PROF_KIND_OFFCPU || s->ps_kind == PROF_KIND_LOCK) {
        int rc = s->ps_kind == PROF_KIND_LOCK ? prof_lock_report(s, o, p)
                                              : prof_report_off(s, o, p);
        prof_report_took = cycles_now() - t0;
        return rc;
    }
    if (o->ro_format != PROF_TEXT) {
        int rc = prof_export(s, o->ro_format == PROF_FOLDED, p);
        prof_report_took = cycles_now() - t0;
        return rc;
    }
    struct prof_fold f;
    if (!prof_fold_run(&f, s, PROF_FOLD_SYMBOL, s->ps_kind)) {
        pr_printf(p, "profile: no memory for the chain table (%u records, %u "
                  "distinct chains so far)\n", f.fo_total, prof_fold_n(&f));
        return PROF_ENOMEM;
    }
    if (s->ps_kind == PROF_KIND_HEAP) {
        prof_print_heap(&f, o->ro_chains, p);
        prof_fold_free(&f);
        prof_report_took = cycles_now() - t0;
        return PROF_OK;
    }
    prof_print_header(&f, p);
    if (f.fo_records == 0) {
        prof_print_empty(s, p);
    } else {
        prof_print_cost(&f, p);
        /* Last of the header: the lines above keep their places. */
        if (prof_sources_mixed(s))
            prof_print_sources(s, p);
        prof_print_chains(&f, o->ro_chains, p);
    }
    prof_fold_free(&f);
    prof_report_took = cycles_now() - t0;
    return PROF_OK;
}

uint64_t prof_report_cycles(void)
{
    return prof_report_took;
}
