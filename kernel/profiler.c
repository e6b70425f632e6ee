/* kernel/profiler.c: the sampling profiler behind `profile`.
 *
 * Record raw, present later. A sample (tick or NMI, interrupts off) copies
 * the pid, the interrupted pc and at most 7 return addresses from the
 * frame-pointer walk into this CPU's own preallocated buffer: no lock, no
 * allocation, no symbol lookup. The shell task that started the run sleeps
 * out the window, stops it, waits until no CPU is inside the sampler, and
 * only then folds the records by call chain, resolves names and prints.
 *
 * Sources: the timer tick (100 Hz per CPU) always; the performance counter
 * (hal/pmu.h, an NMI about every ms) where the probe says one really
 * counts. Each CPU arms and disarms its own counter from its own tick,
 * because the control registers are per CPU. Once armed, a CPU's tick stops
 * sampling, so nothing is counted twice. */
#include "kernel/profiler.h"
#include "hal/cpu.h"
#include "hal/irq.h"
#include "hal/pmu.h"
#include "kernel/shell.h"
#include "kernel/stacktrace.h"
#include "kernel/symtab.h"
#include "kernel/task.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "mm/heap.h"

#define PROF_QUIESCE_MS 50      /* Stop's bound on waiting out samplers */

struct prof_record {
    int32_t pr_pid;
    uint32_t pr_cost;           /* cycles this sample took */
    uint8_t pr_depth;           /* 1..PROFILER_FRAMES */
    uintptr_t pr_frames[PROFILER_FRAMES];
};

/* Written only by its own CPU from its own tick or NMI, except that Start
 * zeroes the counters while no run is active and no CPU is inside. */
struct prof_cpu {
    struct prof_record *pc_buf; /* never freed: see prof_alloc */
    uint32_t pc_count;          /* records written; release-published */
    uint32_t pc_full;           /* dropped: the buffer was full */
    uint32_t pc_nested;         /* dropped: arrived inside the sampler */
    uint32_t pc_inside;         /* re-entrancy guard; Stop waits on it */
    bool pc_in_window;          /* online with a buffer at Start */
} __attribute__((aligned(64)));

static struct prof_cpu prof_cpus[MAX_CPUS];

/* One word, so the idle tick pays exactly one atomic load. PMU is set
 * once the probe said a counter is usable and never cleared (the probe's
 * answer is cached for the boot): an idle tick needs it to know there may
 * be a counter left armed to disarm. */
#define PROF_ACTIVE 1u
#define PROF_PMU    2u
static unsigned prof_state;

static unsigned prof_busy;      /* a run or report holds the profiler */
static int prof_pid = PROFILER_ALL;

/* The last window, for the report. */
static struct {
    bool ran;
    unsigned ms;
    int pid;
    uint64_t cycles;            /* cycles_now across the window */
    unsigned ncpus;             /* CPUs online with a buffer at Start */
} prof_win;

static uint64_t prof_report_took;

/* ---- the sample path: tick or NMI context, interrupts off ----------- */

/* Takes one sample on this CPU. No lock, no allocation, no symbol lookup,
 * and nothing here dereferences interrupted state except through st_walk,
 * which checks every frame against the registered stacks and never
 * faults: this runs in NMI context on whatever the CPU was doing. */
static void prof_sample(const struct trap_frame *tf)
{
    uint64_t c0 = cycles_now();
    unsigned cpu = cpu_index();
    if (cpu >= MAX_CPUS)
        return;
    struct prof_cpu *pc = &prof_cpus[cpu];

    /* The filter is applied here, not in the report: a filtered-out sample
     * takes no slot and is not a drop. */
    int want = __atomic_load_n(&prof_pid, __ATOMIC_RELAXED);
    int pid = task_current_pid();
    if (want != PROFILER_ALL && pid != want)
        return;

    /* Only an NMI landing inside the tick's sample can find the guard
     * taken (interrupts are off in both, and NMIs do not nest), so
     * pc_nested has a single writer and needs no atomic add. */
    if (__atomic_exchange_n(&pc->pc_inside, 1, __ATOMIC_SEQ_CST)) {
        pc->pc_nested++;
        return;
    }
    /* Recheck under the guard. With Stop's seq_cst clear-then-scan this is
     * Dekker's pattern: either Stop sees our guard and waits for us, or we
     * see the flag clear and touch nothing. A plain check before taking
     * the guard would let us write a record Stop is already reading. */
    if ((__atomic_load_n(&prof_state, __ATOMIC_SEQ_CST) & PROF_ACTIVE) &&
        pc->pc_buf) {
        uint32_t n = pc->pc_count;
        if (n >= PROFILER_BUF_RECORDS) {
            pc->pc_full++;
        } else {
            struct prof_record *r = &pc->pc_buf[n];
            r->pr_pid = pid;
            r->pr_depth = (uint8_t)st_capture_trap(tf, r->pr_frames, PROFILER_FRAMES);
            uint64_t cost = cycles_now() - c0;
            r->pr_cost = cost > UINT32_MAX ? UINT32_MAX : (uint32_t)cost;
            /* The report reads pc_count with acquire: a record is whole
             * before it is counted. */
            __atomic_store_n(&pc->pc_count, n + 1, __ATOMIC_RELEASE);
        }
    }
    __atomic_store_n(&pc->pc_inside, 0, __ATOMIC_RELEASE);
}

void profiler_tick(const struct trap_frame *tf)
{
    unsigned s = __atomic_load_n(&prof_state, __ATOMIC_ACQUIRE);
    if (!(s & PROF_ACTIVE)) {
        /* Stop only cleared the flag; each CPU disarms its own counter on
         * its next tick (pmu_disarm clears the armed flag after the
         * counter, so an overflow in flight is still claimed). */
        if ((s & PROF_PMU) && pmu_armed())
            pmu_disarm();
        return;
    }
    if (s & PROF_PMU) {
        if (!pmu_armed())
            pmu_arm();
        if (pmu_armed())
            return;             /* the counter samples this CPU now */
    }
    prof_sample(tf);
}

bool profiler_nmi(const struct trap_frame *tf)
{
    if (!pmu_nmi_claim())
        return false;           /* not ours: the caller panics */
    /* Ours even when no run is active: an overflow in flight after Stop,
     * before this CPU's tick disarmed the counter. Dropped silently. */
    if (__atomic_load_n(&prof_state, __ATOMIC_ACQUIRE) & PROF_ACTIVE)
        prof_sample(tf);
    return true;
}

/* ---- Start and Stop: the shell task -------------------------------- */

static bool prof_take(void)
{
    unsigned zero = 0;
    return __atomic_compare_exchange_n(&prof_busy, &zero, 1, false,
                                       __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static void prof_give(void)
{
    __atomic_store_n(&prof_busy, 0, __ATOMIC_RELEASE);
}

/* Buffers for every online CPU that lacks one (the first Start, or a CPU
 * that came online since). They are never freed: a CPU can be inside
 * prof_sample, past its active check, when another CPU stops the run, and
 * freeing the buffer under it would be a use-after-free for the sake of
 * reclaiming ~80 KiB per CPU. Do not add a kfree on Stop. */
static int prof_alloc(struct printer *p)
{
    unsigned n = cpu_count();
    for (unsigned i = 0; i < n && i < MAX_CPUS; i++) {
        if (!cpu_online(i) || prof_cpus[i].pc_buf)
            continue;
        size_t bytes = PROFILER_BUF_RECORDS * sizeof(struct prof_record);
        struct prof_record *b = kmalloc(bytes);
        if (!b) {
            pr_printf(p, "profile: no memory for cpu %u's sample buffer "
                      "(%zu bytes)\n", i, bytes);
            return PROFILER_ENOMEM;
        }
        /* Published to that CPU by the release store of PROF_ACTIVE. */
        prof_cpus[i].pc_buf = b;
    }
    return PROFILER_OK;
}

/* Zero the counts, fix the filter, then set the flag with release
 * ordering: a CPU that sees it active sees all of the above. */
static void prof_start(int pid)
{
    unsigned ncpus = 0;
    for (unsigned i = 0; i < MAX_CPUS; i++) {
        struct prof_cpu *pc = &prof_cpus[i];
        pc->pc_count = pc->pc_full = pc->pc_nested = 0;
        pc->pc_in_window = pc->pc_buf && i < cpu_count() && cpu_online(i);
        ncpus += pc->pc_in_window;
    }
    unsigned s = pmu_probe() ? PROF_PMU : 0;
    __atomic_store_n(&prof_pid, pid, __ATOMIC_RELAXED);
    prof_win.pid = pid;
    prof_win.ncpus = ncpus;
    prof_win.cycles = cycles_now();
    __atomic_store_n(&prof_state, s | PROF_ACTIVE, __ATOMIC_RELEASE);
}

/* Clear the flag, then wait until no CPU is inside the sampler: after
 * that nothing writes a buffer until the next Start. The wait is bounded;
 * a CPU stuck inside longer than that is broken anyway, and the report
 * still reads only records whose count was published. */
static void prof_stop(void)
{
    unsigned s = __atomic_load_n(&prof_state, __ATOMIC_RELAXED);
    __atomic_store_n(&prof_state, s & ~PROF_ACTIVE, __ATOMIC_SEQ_CST);
    prof_win.cycles = cycles_now() - prof_win.cycles;
    /* A sampler holds its guard for microseconds: spin, bounded by the
     * cycle counter (sleep_ms would round each step up to a whole tick). */
    uint64_t t0 = cycles_now(), limit = PROF_QUIESCE_MS * 1000 * cycles_per_us();
    for (unsigned i = 0; i < MAX_CPUS; i++)
        while (__atomic_load_n(&prof_cpus[i].pc_inside, __ATOMIC_SEQ_CST) &&
               cycles_now() - t0 < limit)
            cpu_relax();
}

/* ---- the report: task context --------------------------------------- */

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
    uint32_t counts[MAX_CPUS];  /* snapshot of each CPU's pc_count */
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
            if (_i < (f)->counts[_c] &&                                     \
                ((r) = &prof_cpus[_c].pc_buf[_i], 1))

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

    uint64_t den = prof_win.cycles;
    uint64_t n = prof_win.ncpus ? prof_win.ncpus : 1;
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

static void prof_print_empty(struct printer *p, bool counter)
{
    if (prof_win.pid != PROFILER_ALL)
        pr_printf(p, "no samples for pid %d: that task may have been asleep "
                  "the whole window\n", prof_win.pid);
    else if (counter)
        pr_puts(p, "no samples: the counter counts unhalted cycles, so a CPU "
                "that spent the window in hlt contributes nothing; this "
                "machine was idle\n");
    else
        pr_puts(p, "no samples\n");     /* the tick samples idle: unexpected */
}

/* Fold and print. Task context: the table lives on the heap (128 chains
 * would be a third of a task stack's headroom) and is freed before return. */
static int prof_report(unsigned chains, struct printer *p)
{
    uint64_t t0 = cycles_now();
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
    unsigned cpus = 0;
    uint32_t dropped = 0;
    for (unsigned i = 0; i < MAX_CPUS; i++) {
        struct prof_cpu *pc = &prof_cpus[i];
        uint32_t n = pc->pc_buf ? __atomic_load_n(&pc->pc_count, __ATOMIC_ACQUIRE) : 0;
        if (n > PROFILER_BUF_RECORDS)
            n = PROFILER_BUF_RECORDS;
        f->counts[i] = n;
        f->total += n;
        cpus += n > 0;
        if (n > f->max_count)
            f->max_count = n;
        dropped += pc->pc_full + pc->pc_nested;
    }

    pr_printf(p, "profiled %u ms\n", prof_win.ms);
    pr_printf(p, "%u samples on %u cpus, %u dropped, source %s\n",
              f->total, cpus, dropped, pmu_source_name());
    const char *note = pmu_probe_note();
    if (note)
        pr_printf(p, "%s\n", note);

    int rc = PROFILER_OK;
    if (f->total == 0) {
        prof_print_empty(p, __atomic_load_n(&prof_state, __ATOMIC_RELAXED) & PROF_PMU);
        goto out;
    }
    prof_print_cost(f, p);
    prof_fold_table(f);
    uint8_t order[PROFILER_CHAINS];
    prof_sort(f, order);
    for (unsigned i = 0; i < f->nchains && i < chains; i++)
        prof_print_chain(&f->tab[order[i]], f->total, p);
    if (f->over_samples) {
        if (prof_count_over(f) == PROFILER_OK)
            pr_printf(p, "%u more chains did not fit the %u-chain table "
                      "(%u samples)\n", f->over_chains, PROFILER_CHAINS,
                      f->over_samples);
        else
            pr_printf(p, "more chains did not fit the %u-chain table (%u "
                      "samples; no memory to count them)\n", PROFILER_CHAINS,
                      f->over_samples);
    }
out:
    kfree(tab);
    kfree(f);
    prof_report_took = cycles_now() - t0;
    return rc;
}

/* ---- entry points from task context --------------------------------- */

static bool prof_window_ok(uint64_t ms, struct printer *p)
{
    if (ms >= PROFILER_WINDOW_MIN && ms <= PROFILER_WINDOW_MAX)
        return true;
    pr_printf(p, "profile: window %lu out of range (%u-%u ms)\n",
              (unsigned long)ms, PROFILER_WINDOW_MIN, PROFILER_WINDOW_MAX);
    return false;
}

static bool prof_chains_ok(uint64_t n, struct printer *p)
{
    if (n >= 1 && n <= PROFILER_CHAINS)
        return true;
    pr_printf(p, "profile: chains %lu out of range (1-%u)\n",
              (unsigned long)n, PROFILER_CHAINS);
    return false;
}

int profiler_run(unsigned ms, int pid, unsigned chains, struct printer *p)
{
    if (!prof_window_ok(ms, p) || !prof_chains_ok(chains, p))
        return PROFILER_EINVAL;
    if (pid < PROFILER_ALL) {
        pr_printf(p, "profile: pid %d: no such task\n", pid);
        return PROFILER_EINVAL;
    }
    /* A second `profile` (the other shell) must not zero or read the
     * buffers of a run in progress. */
    if (!prof_take()) {
        pr_puts(p, "profile: busy\n");
        return PROFILER_EBUSY;
    }
    int rc = prof_alloc(p);
    if (rc == PROFILER_OK) {
        prof_win.ran = true;
        prof_win.ms = ms;
        prof_start(pid);
        sleep_ms(ms);
        prof_stop();
        rc = prof_report(chains, p);
    }
    prof_give();
    return rc;
}

int profiler_report_again(unsigned chains, struct printer *p)
{
    if (!prof_chains_ok(chains, p))
        return PROFILER_EINVAL;
    if (!prof_take()) {
        pr_puts(p, "profile: busy\n");
        return PROFILER_EBUSY;
    }
    int rc = prof_win.ran ? prof_report(chains, p) : PROFILER_EINVAL;
    if (!prof_win.ran)
        pr_puts(p, "profile: no run to report yet\n");
    prof_give();
    return rc;
}

int profiler_inject(unsigned cpu, int pid, const uintptr_t *frames,
                    unsigned depth, uint32_t cost)
{
    if (cpu >= MAX_CPUS || depth < 1 || depth > PROFILER_FRAMES)
        return PROFILER_EINVAL;
    if (!prof_take())
        return PROFILER_EBUSY;
    struct prof_cpu *pc = &prof_cpus[cpu];
    int rc = PROFILER_OK;
    if (!pc->pc_buf) {
        rc = PROFILER_EINVAL;
    } else if (pc->pc_count >= PROFILER_BUF_RECORDS) {
        pc->pc_full++;
    } else {
        struct prof_record *r = &pc->pc_buf[pc->pc_count];
        r->pr_pid = pid;
        r->pr_cost = cost;
        r->pr_depth = (uint8_t)depth;
        for (unsigned i = 0; i < depth; i++)
            r->pr_frames[i] = frames[i];
        pc->pc_count++;
    }
    prof_give();
    return rc;
}

uint64_t profiler_report_cycles(void)
{
    return prof_report_took;
}

/* ---- the shell command ---------------------------------------------- */

static bool prof_is_all(const char *s)
{
    return s[0] == 'a' && s[1] == 'l' && s[2] == 'l' && s[3] == '\0';
}

/* profile [ms] [pid|all] [chains]: every argument is checked before
 * anything starts, in order, and the first bad one is named. */
static int cmd_profile(int argc, char **argv, struct printer *p)
{
    uint64_t ms = PROFILER_WINDOW_DEF, chains = PROFILER_CHAINS_DEF, v;
    int pid = PROFILER_ALL;

    if (argc > 4) {
        pr_puts(p, "profile: too many arguments (usage: profile [ms] "
                "[pid|all] [chains])\n");
        return 1;
    }
    if (argc > 1) {
        if (!parse_u64(argv[1], &ms)) {
            pr_printf(p, "profile: window '%s' is not a number (%u-%u ms)\n",
                      argv[1], PROFILER_WINDOW_MIN, PROFILER_WINDOW_MAX);
            return 1;
        }
        if (!prof_window_ok(ms, p))
            return 1;
    }
    if (argc > 2 && !prof_is_all(argv[2])) {
        if (!parse_u64(argv[2], &v)) {
            pr_printf(p, "profile: pid '%s' is not a number or 'all'\n",
                      argv[2]);
            return 1;
        }
        if (v > INT32_MAX || !task_exists((int)v)) {
            pr_printf(p, "profile: pid %lu: no such task\n", (unsigned long)v);
            return 1;
        }
        pid = (int)v;
    }
    if (argc > 3) {
        if (!parse_u64(argv[3], &chains)) {
            pr_printf(p, "profile: chains '%s' is not a number (1-%u)\n",
                      argv[3], PROFILER_CHAINS);
            return 1;
        }
        if (!prof_chains_ok(chains, p))
            return 1;
    }
    return profiler_run((unsigned)ms, pid, (unsigned)chains, p) ? 1 : 0;
}

SHELL_COMMAND(profile, "profile", "profile [ms] [pid|all] [chains]", cmd_profile);
