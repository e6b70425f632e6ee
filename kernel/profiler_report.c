/* kernel/profiler_report.c: presenting a profiling run. Everything here
 * runs in task context on a frozen snapshot (kernel/profiler_internal.h)
 * that Stop handed over; nothing here touches the sampler's per-CPU state,
 * so it may look symbols up, allocate and take its time.
 *
 * The text report folds records by whole call chain: the leaf by symbol
 * (a sample can land on any instruction of a function), the callers by
 * exact return address (each call site has exactly one). */
#include "kernel/profiler_internal.h"
#include "kernel/symtab.h"
#include "lib/printf.h"
#include "mm/heap.h"

static uint64_t prof_report_took;

/* A chain: the leaf folded by symbol (or by exact address when nothing
 * resolves), the callers by exact return address, and the depth. */
struct prof_chain {
    uint64_t ch_hash;
    uintptr_t ch_leaf;          /* symbol start, or the unresolved address */
    uintptr_t ch_callers[PROFILER_FRAMES - 1];
    const char *ch_name;        /* NULL: the leaf did not resolve */
    size_t ch_off_min, ch_off_max;
    uint32_t ch_count;
    uint8_t ch_depth;
};

/* A record's chain key, computed once per record per pass. */
struct prof_key {
    uint64_t hash;
    uintptr_t leaf;
    const char *name;
    size_t off;
    unsigned depth;
    const uintptr_t *callers;
};

/* Overflow set entry: a distinct chain that did not fit the table. */
struct prof_over {
    const struct prof_record *ov_rec;   /* NULL: empty slot */
    uintptr_t ov_leaf;
    uint64_t ov_hash;
    bool ov_named;
};

struct prof_fold {
    struct prof_chain *tab;     /* PROFILER_CHAINS, kzalloc'd */
    unsigned nchains;
    const struct prof_snapshot *snap;
    uint32_t max_count;
    uint32_t total;
    uint32_t over_samples;      /* samples whose chain did not fit */
    uint32_t over_chains;       /* distinct such chains */
};

static uint64_t prof_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static void prof_key_of(const struct prof_record *r, struct prof_key *k)
{
    struct sym_hit hit;
    unsigned depth = r->pr_depth;
    if (depth < 1)
        depth = 1;
    if (depth > PROFILER_FRAMES)
        depth = PROFILER_FRAMES;
    if (symtab_lookup(r->pr_frames[0], &hit)) {
        k->leaf = hit.start;
        k->name = hit.name;
        k->off = hit.offset;
    } else {
        k->leaf = r->pr_frames[0];
        k->name = NULL;
        k->off = 0;
    }
    k->depth = depth;
    k->callers = &r->pr_frames[1];
    uint64_t h = prof_mix(depth, k->leaf);
    h = prof_mix(h, k->name != NULL);
    for (unsigned i = 0; i + 1 < depth; i++)
        h = prof_mix(h, k->callers[i]);
    k->hash = h;
}

static bool prof_same(const struct prof_key *k, uint64_t hash, uintptr_t leaf,
                      bool named, unsigned depth, const uintptr_t *callers)
{
    if (k->hash != hash || k->leaf != leaf || (k->name != NULL) != named ||
        k->depth != depth)
        return false;
    for (unsigned i = 0; i + 1 < depth; i++)
        if (k->callers[i] != callers[i])
            return false;
    return true;
}

static struct prof_chain *prof_find(struct prof_fold *f, const struct prof_key *k)
{
    for (unsigned i = 0; i < f->nchains; i++) {
        struct prof_chain *c = &f->tab[i];
        if (prof_same(k, c->ch_hash, c->ch_leaf, c->ch_name != NULL,
                      c->ch_depth, c->ch_callers))
            return c;
    }
    return NULL;
}

/* Records in round-robin order across CPUs (sample i of every CPU, then
 * i+1), so the table fills with chains from the start of the window on
 * every CPU rather than with all of CPU 0's first. */
#define PROF_FOR_EACH_RECORD(f, r)                                          \
    for (uint32_t _i = 0; _i < (f)->max_count; _i++)                        \
        for (unsigned _c = 0; _c < MAX_CPUS; _c++)                          \
            if (_i < (f)->snap->ps_count[_c] &&                             \
                ((r) = &(f)->snap->ps_recs[_c][_i], 1))

/* Pass 1: fold into the table; count samples whose chain did not fit. */
static void prof_fold_table(struct prof_fold *f)
{
    const struct prof_record *r;
    struct prof_key k;
    PROF_FOR_EACH_RECORD(f, r) {
        prof_key_of(r, &k);
        struct prof_chain *c = prof_find(f, &k);
        if (!c && f->nchains < PROFILER_CHAINS) {
            c = &f->tab[f->nchains++];
            c->ch_hash = k.hash;
            c->ch_leaf = k.leaf;
            c->ch_name = k.name;
            c->ch_depth = (uint8_t)k.depth;
            for (unsigned i = 0; i + 1 < k.depth; i++)
                c->ch_callers[i] = k.callers[i];
            c->ch_off_min = c->ch_off_max = k.off;
        }
        if (!c) {
            f->over_samples++;
            continue;
        }
        c->ch_count++;
        if (k.off < c->ch_off_min)
            c->ch_off_min = k.off;
        if (k.off > c->ch_off_max)
            c->ch_off_max = k.off;
    }
}

/* Pass 2, only when something did not fit: count the distinct chains
 * among those samples exactly, in a heap set sized from their number
 * (at most half full, so linear probing always finds a free slot). */
static int prof_count_over(struct prof_fold *f)
{
    size_t slots = 2;
    while (slots < 2 * (size_t)f->over_samples)
        slots *= 2;
    struct prof_over *set = kzalloc(slots * sizeof *set);
    if (!set)
        return PROFILER_ENOMEM;
    const struct prof_record *r;
    struct prof_key k;
    PROF_FOR_EACH_RECORD(f, r) {
        prof_key_of(r, &k);
        if (prof_find(f, &k))
            continue;
        size_t i = k.hash & (slots - 1);
        for (;; i = (i + 1) & (slots - 1)) {
            struct prof_over *o = &set[i];
            if (!o->ov_rec) {
                o->ov_rec = r;
                o->ov_leaf = k.leaf;
                o->ov_hash = k.hash;
                o->ov_named = k.name != NULL;
                f->over_chains++;
                break;
            }
            if (prof_same(&k, o->ov_hash, o->ov_leaf, o->ov_named,
                          o->ov_rec->pr_depth, &o->ov_rec->pr_frames[1]))
                break;
        }
    }
    kfree(set);
    return PROFILER_OK;
}

/* Count first (descending); ties by leaf address, then depth-limited
 * callers lexicographically, then shorter first: the order never depends
 * on which CPU or which sample came first. */
static bool prof_before(const struct prof_chain *a, const struct prof_chain *b)
{
    if (a->ch_count != b->ch_count)
        return a->ch_count > b->ch_count;
    if (a->ch_leaf != b->ch_leaf)
        return a->ch_leaf < b->ch_leaf;
    unsigned na = a->ch_depth - 1u, nb = b->ch_depth - 1u;
    for (unsigned i = 0; i < na && i < nb; i++)
        if (a->ch_callers[i] != b->ch_callers[i])
            return a->ch_callers[i] < b->ch_callers[i];
    if (na != nb)
        return na < nb;
    return (a->ch_name != NULL) > (b->ch_name != NULL);
}

static void prof_sort(struct prof_fold *f, uint8_t *order)
{
    for (unsigned i = 0; i < f->nchains; i++) {
        unsigned j = i;
        for (; j > 0 && prof_before(&f->tab[i], &f->tab[order[j - 1]]); j--)
            order[j] = order[j - 1];
        order[j] = (uint8_t)i;
    }
}

/* The k-th smallest cost (0-based), exactly, with no allocation: binary
 * search on the value, counting the costs at or below it. */
static uint32_t prof_kth_cost(struct prof_fold *f, uint32_t k, uint32_t lo,
                              uint32_t hi)
{
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint32_t at_or_below = 0;
        const struct prof_record *r;
        PROF_FOR_EACH_RECORD(f, r)
            at_or_below += r->pr_cost <= mid;
        if (at_or_below > k)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* "sample cost 410 cycles median (min 380, max 2900), 0.004% of cpu time":
 * the median of an even count is the mean of the two middle costs, rounded
 * down; the share is the costs' sum over window cycles x CPUs in the
 * window, to 3 decimals, rounded half up, in integers only. */
static void prof_print_cost(struct prof_fold *f, struct printer *p)
{
    uint32_t min = UINT32_MAX, max = 0;
    uint64_t sum = 0;
    const struct prof_record *r;
    PROF_FOR_EACH_RECORD(f, r) {
        if (r->pr_cost < min)
            min = r->pr_cost;
        if (r->pr_cost > max)
            max = r->pr_cost;
        sum += r->pr_cost;
    }
    uint64_t a = prof_kth_cost(f, (f->total - 1) / 2, min, max);
    uint64_t b = prof_kth_cost(f, f->total / 2, min, max);
    uint32_t median = (uint32_t)((a + b) / 2);

    uint64_t den = f->snap->ps_cycles;
    uint64_t n = f->snap->ps_ncpus ? f->snap->ps_ncpus : 1;
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

static void prof_print_chain(const struct prof_chain *c, uint32_t total,
                             struct printer *p)
{
    /* Percent to one decimal, rounded half up: tenths = count*1000/total. */
    uint64_t tenths = ((uint64_t)c->ch_count * 2000 + total) / (2 * (uint64_t)total);
    pr_printf(p, "%lu.%lu%% %u ", (unsigned long)(tenths / 10),
              (unsigned long)(tenths % 10), c->ch_count);
    if (!c->ch_name)
        pr_printf(p, "0x%lx\n", (unsigned long)c->ch_leaf);
    else if (c->ch_off_min == c->ch_off_max)
        pr_printf(p, "%s+0x%zx\n", c->ch_name, c->ch_off_min);
    else
        pr_printf(p, "%s+0x%zx..0x%zx\n", c->ch_name, c->ch_off_min,
                  c->ch_off_max);
    for (unsigned i = 0; i + 1 < c->ch_depth; i++) {
        char buf[128];
        symtab_format_ret(c->ch_callers[i], buf, sizeof buf);
        pr_printf(p, "        <- %s\n", buf);
    }
}

static void prof_print_empty(const struct prof_snapshot *s, struct printer *p)
{
    if (s->ps_pid != PROFILER_ALL)
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
    const struct prof_snapshot *s = f->snap;
    unsigned cpus = 0;
    for (unsigned i = 0; i < MAX_CPUS; i++)
        cpus += s->ps_count[i] > 0;
    pr_printf(p, "profiled %u ms\n", s->ps_ms);
    pr_printf(p, "%u samples on %u cpus, %u dropped, source %s\n",
              f->total, cpus, s->ps_dropped, s->ps_source);
    if (s->ps_note)
        pr_printf(p, "%s\n", s->ps_note);
}

static void prof_print_chains(struct prof_fold *f, unsigned chains,
                              struct printer *p)
{
    prof_fold_table(f);
    uint8_t order[PROFILER_CHAINS];
    prof_sort(f, order);
    for (unsigned i = 0; i < f->nchains && i < chains; i++)
        prof_print_chain(&f->tab[order[i]], f->total, p);
    if (!f->over_samples)
        return;
    if (prof_count_over(f) == PROFILER_OK)
        pr_printf(p, "%u more chains did not fit the %u-chain table "
                  "(%u samples)\n", f->over_chains, PROFILER_CHAINS,
                  f->over_samples);
    else
        pr_printf(p, "more chains did not fit the %u-chain table (%u "
                  "samples; no memory to count them)\n", PROFILER_CHAINS,
                  f->over_samples);
}

/* Fold and print. The table lives on the heap (128 chains would be a
 * third of a task stack's headroom) and is freed before return. */
int prof_report(const struct prof_snapshot *s, const struct prof_report_opts *o,
                struct printer *p)
{
    uint64_t t0 = cycles_now();
    if (o->ro_format != PROFILER_TEXT) {
        int rc = prof_export(s, o->ro_format == PROFILER_FOLDED, p);
        prof_report_took = cycles_now() - t0;
        return rc;
    }
    struct prof_fold *f = kzalloc(sizeof *f);
    struct prof_chain *tab = kzalloc(PROFILER_CHAINS * sizeof *tab);
    if (!f || !tab) {
        kfree(f);
        kfree(tab);
        pr_printf(p, "profile: no memory for the chain table (%zu bytes)\n",
                  sizeof *f + PROFILER_CHAINS * sizeof *tab);
        return PROFILER_ENOMEM;
    }
    f->tab = tab;
    f->snap = s;
    for (unsigned i = 0; i < MAX_CPUS; i++) {
        f->total += s->ps_count[i];
        if (s->ps_count[i] > f->max_count)
            f->max_count = s->ps_count[i];
    }
    prof_print_header(f, p);
    if (f->total == 0) {
        prof_print_empty(s, p);
    } else {
        prof_print_cost(f, p);
        /* Last of the header: the lines above keep their places. */
        if (prof_sources_mixed(s))
            prof_print_sources(s, p);
        prof_print_chains(f, o->ro_chains, p);
    }
    kfree(tab);
    kfree(f);
    prof_report_took = cycles_now() - t0;
    return PROFILER_OK;
}

uint64_t profiler_report_cycles(void)
{
    return prof_report_took;
}
