/* kernel/prof/report.c: presenting a profiling run. Everything here
 * runs in task context on a frozen snapshot (kernel/prof/snapshot.h)
 * that Stop handed over; nothing here touches the sampler's per-CPU state,
 * so it may look symbols up, allocate and take its time.
 *
 * The text report folds records by whole call chain: the leaf by symbol
 * (a sample can land on any instruction of a function), the callers by
 * exact return address (each call site has exactly one).
 *
 * Profiler core: prefix prof_ and PROF_. */
#include "kernel/prof/fold.h"
#include "kernel/prof/report.h"
#include "kernel/prof/export.h"
#include "kernel/symtab.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "mm/heap.h"

static uint64_t prof_report_took;

/* A chain: the leaf folded by symbol (or by exact address when nothing
 * resolves), the callers by exact return address, and the depth. */
struct prof_chain {
    uint64_t ch_hash;
    uintptr_t ch_leaf;          /* symbol start, or the unresolved address */
    uintptr_t ch_callers[PROF_FRAMES - 1];
    const char *ch_name;        /* NULL: the leaf did not resolve */
    size_t ch_off_min, ch_off_max;
    uint64_t ch_weight;         /* the records' weights: for CPU samples, their count */
    uint64_t ch_objects;        /* heap: the objects they stand for, Q16 */
    uint8_t ch_depth;
};

/* A record's chain key, computed once per record. */
struct prof_key {
    uint64_t hash;
    uintptr_t leaf;
    const char *name;
    size_t off;
    unsigned depth;
    const uintptr_t *callers;
};

/* One distinct leaf address, resolved once: the symbol lookup is the
 * dearest step of a record's key, and a hot function's few offsets
 * recur in thousands of records. */
struct prof_sym {
    uintptr_t sy_addr;
    uintptr_t sy_leaf;          /* symbol start, or sy_addr */
    const char *sy_name;        /* NULL: did not resolve */
    size_t sy_off;
};

/* The fold, in time linear in the records: every distinct chain is
 * appended to tab[] the first time a record of it is seen and found again
 * through a prof_index keyed by the whole chain; every distinct leaf
 * address is resolved once, through a second index. Records are walked in
 * the same round-robin order the table always filled in, so tab[]'s first
 * PROF_CHAINS entries are exactly the chains the table holds, and the
 * rest are the overflow line's. */
struct prof_fold {
    struct prof_chain *tab;     /* every distinct chain, first seen first */
    unsigned nchains;           /* of them in the table: <= PROF_CHAINS */
    uint32_t nall;              /* distinct chains in all */
    struct prof_index chain_ix;
    struct prof_sym *syms;      /* distinct leaf addresses */
    uint32_t nsyms;
    struct prof_index sym_ix;
    bool nomem;                 /* an array could not grow */
    const struct prof_snapshot *snap;
    uint32_t max_count;
    uint32_t total;             /* records of the snapshot's kind, folded */
    unsigned kind_cpus;         /* CPUs with a record of it */
    uint64_t weight;            /* and their weights */
    uint64_t objects;           /* heap: the objects they stand for, Q16 */
    uint64_t over_weight;       /* weight of the records whose chain did not fit */
    uint32_t over_chains;       /* distinct such chains */
    uint32_t *costs;            /* every record's cost, for the median */
    unsigned ncpus;             /* CPUs with records, in index order */
    uint8_t cpus[MAX_CPUS];
};

#define PROF_FOLD_CAP0 64       /* entries of each array to begin with */

static uint64_t prof_sym_hash(uintptr_t addr)
{
    return prof_mix(0, addr);
}

static uint64_t prof_chain_hash_at(const void *arr, uint32_t i)
{
    return ((const struct prof_chain *)arr)[i].ch_hash;
}

static uint64_t prof_sym_hash_at(const void *arr, uint32_t i)
{
    return prof_sym_hash(((const struct prof_sym *)arr)[i].sy_addr);
}

/* What the probe for an address compares against (prof_index_find). */
struct prof_sym_probe {
    const struct prof_sym *syms;
    uintptr_t addr;
};

static bool prof_sym_same(const void *ctx, uint32_t pos)
{
    const struct prof_sym_probe *q = ctx;
    return q->syms[pos].sy_addr == q->addr;
}

/* NULL only when the array had to grow and could not. */
static const struct prof_sym *prof_resolve(struct prof_fold *f, uintptr_t addr)
{
    uint64_t h = prof_sym_hash(addr);
    struct prof_sym_probe q = { f->syms, addr };
    uint32_t *slot;
    uint32_t e = prof_index_find(&f->sym_ix, h, prof_sym_same, &q, &slot);
    if (e)
        return &f->syms[e - 1];
    slot = prof_index_room(&f->sym_ix, (void **)&f->syms, sizeof *f->syms, f->nsyms,
                           prof_sym_hash_at, h, slot);
    if (!slot)
        return NULL;
    struct prof_sym *y = &f->syms[f->nsyms];
    struct sym_hit hit;
    y->sy_addr = addr;
    if (symtab_lookup(addr, &hit)) {
        y->sy_leaf = hit.start;
        y->sy_name = hit.name;
        y->sy_off = hit.offset;
    } else {
        y->sy_leaf = addr;
        y->sy_name = NULL;
        y->sy_off = 0;
    }
    *slot = ++f->nsyms;
    return y;
}

static bool prof_key_of(struct prof_fold *f, const struct prof_record *r,
                        struct prof_key *k)
{
    unsigned depth = r->pr_depth;
    if (depth < 1)
        depth = 1;
    if (depth > PROF_FRAMES)
        depth = PROF_FRAMES;
    const struct prof_sym *y = prof_resolve(f, r->pr_frames[0]);
    if (!y)
        return false;
    k->leaf = y->sy_leaf;
    k->name = y->sy_name;
    k->off = y->sy_off;
    k->depth = depth;
    k->callers = &r->pr_frames[1];
    uint64_t h = prof_mix(depth, k->leaf);     /* one kind per fold: not keyed */
    h = prof_mix(h, k->name != NULL);
    for (unsigned i = 0; i + 1 < depth; i++)
        h = prof_mix(h, k->callers[i]);
    k->hash = h;
    return true;
}

static bool prof_same(const struct prof_key *k, const struct prof_chain *c)
{
    if (k->hash != c->ch_hash || k->leaf != c->ch_leaf ||
        (k->name != NULL) != (c->ch_name != NULL) || k->depth != c->ch_depth)
        return false;
    for (unsigned i = 0; i + 1 < k->depth; i++)
        if (k->callers[i] != c->ch_callers[i])
            return false;
    return true;
}

struct prof_chain_probe {
    const struct prof_chain *tab;
    const struct prof_key *k;
};

static bool prof_chain_same(const void *ctx, uint32_t pos)
{
    const struct prof_chain_probe *q = ctx;
    return prof_same(q->k, &q->tab[pos]);
}

/* The chain of k, appended if new; NULL only when the array had to grow
 * and could not. */
static struct prof_chain *prof_find_or_add(struct prof_fold *f, const struct prof_key *k)
{
    struct prof_chain_probe q = { f->tab, k };
    uint32_t *slot;
    uint32_t e = prof_index_find(&f->chain_ix, k->hash, prof_chain_same, &q, &slot);
    if (e)
        return &f->tab[e - 1];
    slot = prof_index_room(&f->chain_ix, (void **)&f->tab, sizeof *f->tab, f->nall,
                           prof_chain_hash_at, k->hash, slot);
    if (!slot)
        return NULL;
    struct prof_chain *c = &f->tab[f->nall];
    c->ch_hash = k->hash;
    c->ch_leaf = k->leaf;
    c->ch_name = k->name;
    c->ch_depth = (uint8_t)k->depth;
    for (unsigned j = 0; j + 1 < k->depth; j++)
        c->ch_callers[j] = k->callers[j];
    c->ch_off_min = c->ch_off_max = k->off;
    c->ch_weight = 0;
    c->ch_objects = 0;
    *slot = ++f->nall;
    return c;
}

/* The one pass over the records: fold every chain, collect the costs.
 * Records are taken in round-robin order across CPUs (sample i of every
 * CPU, then i+1), so the table fills with chains from the start of the
 * window on every CPU rather than with all of CPU 0's first; only CPUs
 * with records are visited, through local copies of their arrays (the
 * compiler cannot prove the snapshot's counts unchanged by the chain
 * updates, and would reload them for every record). Then the table is
 * the first PROF_CHAINS chains, and the overflow line's figures are
 * the rest, counted exactly at no extra cost. */
static void prof_fold_table(struct prof_fold *f)
{
    const struct prof_record *recs[MAX_CPUS];
    uint32_t count[MAX_CPUS];
    unsigned ncpus = f->ncpus;
    for (unsigned j = 0; j < ncpus; j++) {
        recs[j] = f->snap->ps_recs[f->cpus[j]];
        count[j] = f->snap->ps_count[f->cpus[j]];
    }
    struct prof_key k;
    uint32_t n = 0;
    uint64_t seen = 0;          /* bit j: cpus[j] had a record of the kind */
    uint8_t kind = f->snap->ps_kind;
    for (uint32_t i = 0; i < f->max_count; i++) {
        for (unsigned j = 0; j < ncpus; j++) {
            if (i >= count[j])
                continue;
            const struct prof_record *r = &recs[j][i];
            if (r->pr_kind != kind)
                continue;       /* not what this run measures */
            seen |= 1ull << j;
            f->costs[n++] = r->pr_cost;
            struct prof_chain *c = prof_key_of(f, r, &k) ? prof_find_or_add(f, &k) : NULL;
            if (!c) {
                f->nomem = true;
                return;
            }
            uint64_t w = prof_record_weight(r);
            c->ch_weight = prof_weight_add(c->ch_weight, w);
            f->weight = prof_weight_add(f->weight, w);
            if (kind == PROF_KIND_HEAP) {
                uint64_t o = prof_record_objects_q16(r);
                c->ch_objects += o;
                f->objects += o;
            }
            if (k.off < c->ch_off_min)
                c->ch_off_min = k.off;
            if (k.off > c->ch_off_max)
                c->ch_off_max = k.off;
        }
    }
    f->total = n;
    /* Counted by hand: __builtin_popcountll is a libgcc call where the
     * CPU baseline has no popcount instruction, and the kernel links no
     * libgcc. */
    unsigned ncpu = 0;
    for (; seen; seen &= seen - 1)
        ncpu++;
    f->kind_cpus = ncpu;
    f->nchains = f->nall < PROF_CHAINS ? f->nall : PROF_CHAINS;
    f->over_chains = f->nall - f->nchains;
    for (uint32_t i = f->nchains; i < f->nall; i++)
        f->over_weight = prof_weight_add(f->over_weight, f->tab[i].ch_weight);
}

/* Count first (descending); ties by leaf address, then depth-limited
 * callers lexicographically, then shorter first: the order never depends
 * on which CPU or which sample came first. */
static bool prof_before(const struct prof_chain *a, const struct prof_chain *b)
{
    if (a->ch_weight != b->ch_weight)
        return a->ch_weight > b->ch_weight;
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


/* "sample cost 410 cycles median (min 380, max 2900), 0.004% of cpu time":
 * the median of an even count is the mean of the two middle costs, rounded
 * down; the share is the costs' sum over window cycles x CPUs in the
 * window, to 3 decimals, rounded half up, in integers only. */
static void prof_print_cost(struct prof_fold *f, struct printer *p)
{
    uint32_t min = UINT32_MAX, max = 0;
    uint64_t sum = 0;
    for (uint32_t i = 0; i < f->total; i++) {
        uint32_t c = f->costs[i];
        if (c < min)
            min = c;
        if (c > max)
            max = c;
        sum += c;
    }
    /* The upper middle one is the smallest of what the select left
     * above the lower: no second select. */
    uint32_t lo_k = (f->total - 1) / 2;
    uint64_t a = prof_select(f->costs, f->total, lo_k), b = a;
    if (f->total % 2 == 0) {
        b = UINT32_MAX;
        for (uint32_t i = lo_k + 1; i < f->total; i++)
            if (f->costs[i] < b)
                b = f->costs[i];
    }
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

static void prof_print_chain(const struct prof_chain *c, uint64_t total,
                             struct printer *p)
{
    /* Percent to one decimal, rounded half up: tenths = weight*1000/total,
     * scaled down first where weight * 2000 would not fit 64 bits. */
    uint64_t w = c->ch_weight;
    while (w > (UINT64_MAX - total) / 2000 || total > UINT64_MAX / 2) {
        w >>= 1;
        total >>= 1;
    }
    uint64_t tenths = (w * 2000 + total) / (2 * total);
    pr_printf(p, "%lu.%lu%% %lu ", (unsigned long)(tenths / 10),
              (unsigned long)(tenths % 10), (unsigned long)c->ch_weight);
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
    const struct prof_snapshot *s = f->snap;
    if (s->ps_inuse) {
        pr_printf(p, "heap in use: rate %u bytes, %u samples, %u did not fit the table\n",
                  s->ps_rate, f->total, s->ps_dropped);
    } else {
        pr_printf(p, "heap allocated in %u ms: rate %u bytes, %u samples on %u cpus, "
                  "%u dropped\n", s->ps_ms, s->ps_rate, f->total, f->kind_cpus, s->ps_dropped);
    }
    pr_printf(p, "estimated %lu bytes in %lu objects\n", (unsigned long)f->weight,
              prof_objects(f->objects));
}

/* "34.5% 1843200 bytes 450 objects heaptest_site_a+0x1c", then callers. */
static void prof_print_heap_chain(const struct prof_chain *c, uint64_t total,
                                  struct printer *p)
{
    uint64_t w = c->ch_weight, t = total ? total : 1;
    while (w > UINT64_MAX / 2000 || t > UINT64_MAX / 2) {
        w >>= 1;
        t >>= 1;
    }
    uint64_t tenths = (w * 2000 + t) / (2 * t);
    pr_printf(p, "%lu.%lu%% %lu bytes %lu objects ", (unsigned long)(tenths / 10),
              (unsigned long)(tenths % 10), (unsigned long)c->ch_weight,
              prof_objects(c->ch_objects));
    if (!c->ch_name)
        pr_printf(p, "0x%lx\n", (unsigned long)c->ch_leaf);
    else if (c->ch_off_min == c->ch_off_max)
        pr_printf(p, "%s+0x%zx\n", c->ch_name, c->ch_off_min);
    else
        pr_printf(p, "%s+0x%zx..0x%zx\n", c->ch_name, c->ch_off_min, c->ch_off_max);
    for (unsigned i = 0; i + 1 < c->ch_depth; i++) {
        char buf[128];
        symtab_format_ret(c->ch_callers[i], buf, sizeof buf);
        pr_printf(p, "        <- %s\n", buf);
    }
}

static void prof_print_heap(struct prof_fold *f, unsigned chains, struct printer *p)
{
    prof_print_heap_header(f, p);
    if (f->total == 0) {
        pr_puts(p, f->snap->ps_inuse ? "no sampled blocks in use\n"
                                     : "no allocations sampled in the window\n");
        return;
    }
    uint8_t order[PROF_CHAINS];
    prof_sort(f, order);
    for (unsigned i = 0; i < f->nchains && i < chains; i++)
        prof_print_heap_chain(&f->tab[order[i]], f->weight, p);
    if (f->over_weight)
        pr_printf(p, "%u more chains did not fit the %u-chain table (%lu bytes)\n",
                  f->over_chains, PROF_CHAINS, (unsigned long)f->over_weight);
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
    const struct prof_snapshot *s = f->snap;
    pr_printf(p, "profiled %u ms\n", s->ps_ms);
    pr_printf(p, "%u samples on %u cpus, %u dropped, source %s\n",
              f->total, f->kind_cpus, s->ps_dropped, s->ps_source);
    if (s->ps_note)
        pr_printf(p, "%s\n", s->ps_note);
}

static void prof_print_chains(struct prof_fold *f, unsigned chains,
                              struct printer *p)
{
    uint8_t order[PROF_CHAINS];
    prof_sort(f, order);
    for (unsigned i = 0; i < f->nchains && i < chains; i++)
        prof_print_chain(&f->tab[order[i]], f->weight, p);
    if (f->over_weight)
        pr_printf(p, "%u more chains did not fit the %u-chain table "
                  "(%lu samples)\n", f->over_chains, PROF_CHAINS,
                  (unsigned long)f->over_weight);
}

static void prof_fold_free(struct prof_fold *f)
{
    kfree(f->tab);
    prof_index_free(&f->chain_ix);
    kfree(f->syms);
    prof_index_free(&f->sym_ix);
    kfree(f->costs);
    kfree(f);
}

/* The fold's state with its arrays at their first, small size, and the
 * costs' array for every record. NULL: no memory. */
static struct prof_fold *prof_fold_alloc(const struct prof_snapshot *s)
{
    struct prof_fold *f = kzalloc(sizeof *f);
    if (!f)
        return NULL;
    f->snap = s;
    for (unsigned i = 0; i < MAX_CPUS; i++) {
        f->total += s->ps_count[i];
        if (s->ps_count[i] > f->max_count)
            f->max_count = s->ps_count[i];
        if (s->ps_count[i])
            f->cpus[f->ncpus++] = (uint8_t)i;
    }
    f->tab = kmalloc(PROF_FOLD_CAP0 * sizeof *f->tab);
    f->syms = kmalloc(PROF_FOLD_CAP0 * sizeof *f->syms);
    f->costs = kmalloc((f->total ? f->total : 1) * sizeof *f->costs);
    if (!f->tab || !f->syms || !f->costs ||
        !prof_index_init(&f->chain_ix, PROF_FOLD_CAP0) ||
        !prof_index_init(&f->sym_ix, PROF_FOLD_CAP0)) {
        prof_fold_free(f);
        return NULL;
    }
    return f;
}

/* Fold, then print: one pass over the records, each distinct address
 * resolved once, one sort of the table, then the lines. The fold comes
 * before the first line, so that running out of memory prints only the
 * one line saying so. Everything the fold allocated is freed before
 * return. */
int prof_report(const struct prof_snapshot *s, const struct prof_report_opts *o,
                struct printer *p)
{
    uint64_t t0 = cycles_now();
    if (s->ps_kind == PROF_KIND_OFFCPU) {
        int rc = prof_off_report(s, o, p);
        prof_report_took = cycles_now() - t0;
        return rc;
    }
    if (o->ro_format != PROF_TEXT) {
        int rc = prof_export(s, o->ro_format == PROF_FOLDED, p);
        prof_report_took = cycles_now() - t0;
        return rc;
    }
    struct prof_fold *f = prof_fold_alloc(s);
    if (f && f->total)
        prof_fold_table(f);
    if (!f || f->nomem) {
        uint32_t total = f ? f->total : 0, n = f ? f->nall : 0;
        if (f)
            prof_fold_free(f);
        pr_printf(p, "profile: no memory for the chain table (%u records, %u "
                  "distinct chains so far)\n", total, n);
        return PROF_ENOMEM;
    }
    if (s->ps_kind == PROF_KIND_HEAP) {
        prof_print_heap(f, o->ro_chains, p);
        prof_fold_free(f);
        prof_report_took = cycles_now() - t0;
        return PROF_OK;
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
    prof_fold_free(f);
    prof_report_took = cycles_now() - t0;
    return PROF_OK;
}

uint64_t prof_report_cycles(void)
{
    return prof_report_took;
}
