/* kernel/prof/fold.c: the one fold engine (kernel/prof/fold.h): the
 * records of a frozen snapshot folded by whole chain, plus the key each
 * mode adds, counted and weighted; then sorted. The readers only print.
 *
 * Time linear in the records: every distinct key is appended to fo_ents
 * the first time it is seen and found again through an open-addressing
 * index; every distinct address a mode resolves is looked up once, through
 * a second index (the symbol lookup is the dearest step of a key, and a
 * hot function's few offsets recur in thousands of records). Both live
 * in kernel/prof/fold_index.h's chunked arrays, which never copy.
 *
 * Profiler core: prefix prof_ and PROF_. */
#include "kernel/prof/fold.h"
#include "kernel/prof/offcpu.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "mm/heap.h"

/* ---- tasks --------------------------------------------------------------- */

static void prof_fold_sanitize(char *name)
{
    if (!name[0]) {
        strlcpy(name, "-", TASK_NAME_MAX);
        return;
    }
    for (char *c = name; *c; c++)
        if (*c < '!' || *c > '~' || *c == ';')
            *c = '_';
}

/* There are at most as many pids as records, so the table cannot fill;
 * records of one CPU mostly share a pid. */
static uint32_t prof_fold_task_of(struct prof_fold *f, int pid)
{
    if (f->fo_ntasks && f->fo_tasks[f->fo_last_task].fk_pid == pid)
        return f->fo_last_task;
    for (uint32_t i = 0; i < f->fo_ntasks; i++)
        if (f->fo_tasks[i].fk_pid == pid)
            return f->fo_last_task = i;
    struct prof_fold_task *t = &f->fo_tasks[f->fo_ntasks];
    t->fk_pid = pid;
    if (pid <= 0 || !task_name(pid, t->fk_name))
        t->fk_name[0] = 0;
    prof_fold_sanitize(t->fk_name);
    t->fk_first = f->fo_ntasks;
    for (uint32_t i = 0; i < f->fo_ntasks; i++) {
        if (strcmp(f->fo_tasks[i].fk_name, t->fk_name) == 0) {
            t->fk_first = f->fo_tasks[i].fk_first;
            break;
        }
    }
    return f->fo_last_task = f->fo_ntasks++;
}

const struct prof_fold_task *prof_fold_task(struct prof_fold *f, int pid)
{
    return &f->fo_tasks[prof_fold_task_of(f, pid)];
}

/* ---- keys ------------------------------------------------------------------ */

static unsigned prof_depth(unsigned d, unsigned least)
{
    return d < least ? least : d > PROF_FRAMES ? PROF_FRAMES : d;
}

/* The symbol modes' key: the leaf by symbol, the callers exact. It lives
 * in the walk's registers, and its callers stay in the record: compared
 * there, copied only into a new entry. Through a key in memory (every
 * frame stored, then loaded again by the compare), bench report's fold
 * cost arm64 +10% against the folds before the one engine, measured. */
struct prof_sym_key {
    uint64_t sk_hash;
    uintptr_t sk_start;             /* the leaf's symbol, or its address */
    const char *sk_name;            /* NULL: the leaf did not resolve */
    const uintptr_t *sk_frames;     /* the record's: [1, sk_depth) are the callers */
    int32_t sk_pid;                 /* task-symbol: the record's pid; else 0 */
    uint32_t sk_off;                /* the leaf's offset in its symbol */
    uint8_t sk_depth;
};

/* Inline into the walk, as the leaf's lookup is (fold_index.h): as
 * calls, the two cost bench report's fold ~30 instructions a record. */
static inline __attribute__((always_inline))
bool prof_key_symbol(struct prof_fold *f, const struct prof_record *r, int32_t pid,
                     struct prof_sym_key *k)
{
    unsigned d = prof_depth(r->pr_depth, 1);
    const struct prof_fold_sym *y = prof_syms_resolve(&f->fo_syms, &f->fo_sym_ix,
                                                      r->pr_frames[0], false);
    if (!y)
        return false;
    k->sk_depth = (uint8_t)d;
    k->sk_name = y->fs_name;
    k->sk_off = y->fs_off;
    k->sk_start = y->fs_start;
    k->sk_frames = r->pr_frames;
    k->sk_pid = pid;
    uint64_t h = prof_mix(prof_mix(d, y->fs_start), (uint32_t)pid * 2 + (y->fs_name != NULL));
    for (unsigned i = 1; i < d; i++)
        h = prof_mix(h, r->pr_frames[i]);
    k->sk_hash = h;
    return true;
}

/* Whether entry a holds symbol key k. */
static inline __attribute__((always_inline))
bool prof_sym_same(const struct prof_fold_ent *a, const struct prof_sym_key *k)
{
    if (a->fe_hash != k->sk_hash || a->fe_depth != k->sk_depth ||
        a->fe_frames[0] != k->sk_start || a->fe_named != (k->sk_name != NULL) ||
        a->fe_pid != k->sk_pid)
        return false;
    for (unsigned i = 1; i < k->sk_depth; i++)
        if (a->fe_frames[i] != k->sk_frames[i])
            return false;
    return true;
}

/* A new entry for symbol key k (the rest of the item zeroed, as every
 * other mode's key leaves it). k by value: by its address, the walk
 * would keep every record's key on the stack (arm64: 10 stores a record). */
static void prof_sym_fill(struct prof_fold_ent *e, struct prof_sym_key k, size_t size)
{
    memset(e, 0, size);
    e->fe_hash = k.sk_hash;
    e->fe_depth = k.sk_depth;
    e->fe_named = k.sk_name != NULL;
    e->fe_name = k.sk_name;
    e->fe_pid = k.sk_pid;
    e->fe_off_min = e->fe_off_max = k.sk_off;
    e->fe_frames[0] = k.sk_start;
    for (unsigned i = 1; i < k.sk_depth; i++)
        e->fe_frames[i] = k.sk_frames[i];
}

/* Names: the pc by its own symbol, a return address by the byte before
 * it (the call), as symtab_format_ret does: a call that is a function's
 * last instruction returns to the next function's first byte. */
static bool prof_key_names(struct prof_fold *f, const struct prof_record *r,
                           struct prof_fold_ent *k)
{
    unsigned d = prof_depth(r->pr_depth, 1);
    k->fe_depth = (uint8_t)d;
    k->fe_named = 0;
    k->fe_task = f->fo_tasks[prof_fold_task_of(f, r->pr_pid)].fk_first;
    uint64_t h = prof_mix(d, k->fe_task);
    for (unsigned i = 0; i < d; i++) {
        uintptr_t a = r->pr_frames[i];
        const struct prof_fold_sym *y = NULL;
        if (i == 0 || a) {
            y = prof_syms_resolve(&f->fo_syms, &f->fo_sym_ix, i == 0 ? a : a - 1, true);
            if (!y)
                return false;
        }
        if (y && y->fs_name) {
            k->fe_frames[i] = (uintptr_t)y->fs_name;
            k->fe_named |= (uint8_t)(1u << i);
            h = prof_mix(h, y->fs_name_hash);
        } else {
            k->fe_frames[i] = a;
            h = prof_mix(h, a);
        }
    }
    k->fe_hash = prof_mix(h, k->fe_named);
    return true;
}

static void prof_key_exact(const struct prof_record *r, unsigned cpu, struct prof_fold_ent *k)
{
    unsigned d = prof_depth(r->pr_depth, 1);
    k->fe_depth = (uint8_t)d;
    k->fe_pid = r->pr_pid;
    k->fe_cpu = (uint16_t)cpu;
    uint64_t h = prof_mix(prof_mix(d, (uint32_t)r->pr_pid), cpu);
    for (unsigned i = 0; i < d; i++)
        h = prof_mix(h, k->fe_frames[i] = r->pr_frames[i]);
    k->fe_hash = h;
}

/* Off-CPU: w is the waker's record, or NULL. The frames past each depth
 * are 0: the order compares them whole. */
static void prof_key_offcpu(const struct prof_record *r, const struct prof_record *w,
                            unsigned cpu, struct prof_fold_ent *k)
{
    unsigned d = prof_depth(r->pr_depth, 0), wd = w ? prof_depth(w->pr_depth, 0) : 0;
    k->fe_pid = r->pr_pid;
    k->fe_waker = r->pr_waker;
    /* pr_cost: an off-CPU record's waker interrupt; a lock record's waits
     * (record.h), which are summed, not keyed. */
    uint32_t wirq = r->pr_kind == PROF_KIND_OFFCPU ? r->pr_cost : 0;
    k->fe_wirq = wirq;
    k->fe_cpu = (uint16_t)cpu;
    k->fe_why = r->pr_why;
    k->fe_name = r->pr_name;
    k->fe_depth = (uint8_t)d;
    k->fe_wdepth = (uint8_t)wd;
    uint64_t h = prof_mix(prof_mix((uint32_t)r->pr_pid, cpu), (uint32_t)r->pr_waker);
    h = prof_mix(prof_mix(h, r->pr_why), (uintptr_t)r->pr_name);
    h = prof_mix(prof_mix(prof_mix(h, d), wd), wirq);
    for (unsigned i = 0; i < PROF_FRAMES; i++) {
        k->fe_frames[i] = i < d ? r->pr_frames[i] : 0;
        k->fe_wframes[i] = i < wd ? w->pr_frames[i] : 0;
        h = prof_mix(prof_mix(h, k->fe_frames[i]), k->fe_wframes[i]);
    }
    k->fe_hash = h;
}

/* Whether entry a holds key k of mode by (exact, names, off-CPU; the
 * symbol modes' keys are prof_sym_same's), comparing only what by keys
 * on (the rest is 0 in both); names: frames compared by content. Inline
 * with by a constant at every call: the probe loop runs for every record. */
static inline __attribute__((always_inline))
bool prof_fold_same(const struct prof_fold_ent *a, const struct prof_fold_ent *k,
                    enum prof_fold_by by)
{
    if (a->fe_hash != k->fe_hash || a->fe_depth != k->fe_depth || a->fe_named != k->fe_named)
        return false;
    if (by != PROF_FOLD_NAMES && a->fe_pid != k->fe_pid)
        return false;
    if ((by == PROF_FOLD_EXACT || by == PROF_FOLD_OFFCPU) && a->fe_cpu != k->fe_cpu)
        return false;
    if (by == PROF_FOLD_NAMES && a->fe_task != k->fe_task)
        return false;
    if (by == PROF_FOLD_OFFCPU &&
        (a->fe_why != k->fe_why || a->fe_waker != k->fe_waker || a->fe_wirq != k->fe_wirq ||
         a->fe_name != k->fe_name || a->fe_wdepth != k->fe_wdepth))
        return false;
    for (unsigned i = 0; i < a->fe_depth; i++) {
        if (a->fe_frames[i] == k->fe_frames[i])
            continue;
        /* Names: the same name at two addresses (two static functions). */
        if (by != PROF_FOLD_NAMES || !(a->fe_named >> i & 1) ||
            strcmp((const char *)a->fe_frames[i], (const char *)k->fe_frames[i]))
            return false;
    }
    if (by == PROF_FOLD_OFFCPU)
        for (unsigned i = 0; i < a->fe_wdepth; i++)
            if (a->fe_wframes[i] != k->fe_wframes[i])
                return false;
    return true;
}

/* The entry of key k (symbol modes: sk), appended if new (the key, nothing
 * added yet); NULL only when an array had to grow and could not. */
static inline __attribute__((always_inline))
struct prof_fold_ent *prof_fold_find(struct prof_fold *f, const struct prof_fold_ent *k,
                                     const struct prof_sym_key *sk, enum prof_fold_by by)
{
    bool sym = by == PROF_FOLD_SYMBOL || by == PROF_FOLD_TASK_SYMBOL;
    uint64_t h = sym ? sk->sk_hash : k->fe_hash;
    uint32_t mask = 2 * f->fo_ix.fx_cap - 1, *slot;
    for (uint32_t i = prof_index_first(&f->fo_ix, h);; i = (i + 1) & mask) {
        uint32_t e = f->fo_ix.fx_slot[i];
        if (!e) {
            slot = &f->fo_ix.fx_slot[i];
            break;
        }
        struct prof_fold_ent *c = prof_item(&f->fo_ents, e - 1);
        if (sym ? prof_sym_same(c, sk) : prof_fold_same(c, k, by))
            return c;
    }
    slot = prof_index_room(&f->fo_ix, &f->fo_ents, h, slot);
    struct prof_fold_ent *c = slot ? prof_items_push(&f->fo_ents) : NULL;
    if (!c)
        return NULL;
    if (sym)
        prof_sym_fill(c, *sk, f->fo_ents.fi_size);
    else
        memcpy(c, k, f->fo_ents.fi_size);
    *slot = ++f->fo_ents.fi_n;
    return c;
}

/* ---- the walk ------------------------------------------------------------ */

/* Whether a fold of kind in mode by takes r: its kind, and for off-CPU
 * an interval (a waker's chain joins the record it follows; none and out
 * of range are corrupt). Inline with by a constant. */
static inline __attribute__((always_inline))
bool prof_fold_takes(unsigned kind, enum prof_fold_by by, const struct prof_record *r)
{
    if (r->pr_kind != kind)
        return false;
    return by != PROF_FOLD_OFFCPU ||
           (r->pr_why != PROF_WHY_WAKER && r->pr_why != PROF_WHY_NONE &&
            r->pr_why <= PROF_WHY_MAX);
}

/* Fold record i of CPU c's n records (one f takes). False: no memory.
 * Inline with by a constant (f->fo_by) at every call. */
/* What the walk adds up as it goes, kept in the walk's locals and put
 * into f at its end (prof_fold_acc_done). Through f, every record's sums
 * were a load and a store each, since f's fields may alias the entries
 * the walk writes: arm64 pays three instructions for each of x86-64's
 * read-modify-writes (bench report's fold: +17% on arm64, -5% on x86-64
 * against the folds before the one engine, measured). */
struct prof_fold_acc {
    uint64_t fa_weight, fa_objects, fa_blocked, fa_runnable, fa_spun;
    uint32_t fa_records;
    uint32_t *fa_costs;         /* f->fo_costs */
    struct prof_fold_ent *fa_last; /* the last record's entry (entries never move) */
};

static void prof_fold_acc_done(struct prof_fold *f, const struct prof_fold_acc *a)
{
    f->fo_weight = a->fa_weight;
    f->fo_objects = a->fa_objects;
    f->fo_blocked = a->fa_blocked;
    f->fo_runnable = a->fa_runnable;
    f->fo_spun = a->fa_spun;
    f->fo_records = a->fa_records;
}

static inline __attribute__((always_inline))
bool prof_fold_one(struct prof_fold *f, struct prof_fold_acc *a, const struct prof_record *recs,
                   uint32_t n, uint32_t i, unsigned c, struct prof_fold_ent *k,
                   enum prof_fold_by by)
{
    const struct prof_record *r = &recs[i];
    bool sym = by == PROF_FOLD_SYMBOL || by == PROF_FOLD_TASK_SYMBOL;
    struct prof_sym_key sk = { 0 };
    switch (by) {
    case PROF_FOLD_SYMBOL:
    case PROF_FOLD_TASK_SYMBOL:
        if (!prof_key_symbol(f, r, by == PROF_FOLD_TASK_SYMBOL ? r->pr_pid : 0, &sk))
            return false;
        break;
    case PROF_FOLD_EXACT:
        prof_key_exact(r, c, k);
        break;
    case PROF_FOLD_NAMES:
        if (!prof_key_names(f, r, k))
            return false;
        break;
    default: {
        /* prof_emit_n put the waker's chain right behind. */
        const struct prof_record *w = i + 1 < n ? &recs[i + 1] : NULL;
        if (w && (w->pr_kind != PROF_KIND_OFFCPU || w->pr_why != PROF_WHY_WAKER))
            w = NULL;
        prof_key_offcpu(r, w, c, k);
        break;
    }
    }
    /* The entry the last record went to first: a hot chain's records
     * come in runs (bench report: 63 of 64), and a miss costs one compare
     * of the hashes. */
    struct prof_fold_ent *e = a->fa_last;
    if (!e || !(sym ? prof_sym_same(e, &sk) : prof_fold_same(e, k, by))) {
        e = prof_fold_find(f, k, &sk, by);
        if (!e)
            return false;
        a->fa_last = e;
    }
    uint64_t w = prof_record_weight(r);
    e->fe_count++;
    e->fe_weight = prof_weight_add(e->fe_weight, w);
    a->fa_weight = prof_weight_add(a->fa_weight, w);
    if (r->pr_kind == PROF_KIND_HEAP || r->pr_kind == PROF_KIND_LOCK) {
        uint64_t o = prof_record_objects_q16(r);
        e->fe_objects += o;
        a->fa_objects += o;
    }
    if (sym) {
        if (sk.sk_off < e->fe_off_min)
            e->fe_off_min = sk.sk_off;
        if (sk.sk_off > e->fe_off_max)
            e->fe_off_max = sk.sk_off;
    }
    if (by == PROF_FOLD_OFFCPU) {
        if (prof_why_blocked(r->pr_why))
            a->fa_blocked = prof_weight_add(a->fa_blocked, w);
        else if (r->pr_why == PROF_WHY_SPIN)
            a->fa_spun = prof_weight_add(a->fa_spun, w);
        else
            a->fa_runnable = prof_weight_add(a->fa_runnable, w);
    }
    if (by == PROF_FOLD_SYMBOL)
        a->fa_costs[a->fa_records] = r->pr_cost;
    a->fa_records++;
    return true;
}

/* Round-robin across CPUs (record i of every CPU, then i + 1), visiting
 * only CPUs with records, through local copies of their arrays (the
 * compiler cannot prove the snapshot's counts unchanged by the entries'
 * updates, and would reload them for every record). Bit j of the result:
 * the j-th CPU with records had one folded; *ok false: no memory. */
static uint64_t prof_fold_round_robin(struct prof_fold *f, const uint8_t *cpus, unsigned ncpus,
                                      uint32_t most, struct prof_fold_ent *k, bool *ok)
{
    const struct prof_record *recs[MAX_CPUS];
    uint32_t count[MAX_CPUS];
    for (unsigned j = 0; j < ncpus; j++) {
        recs[j] = f->fo_snap->ps_recs[cpus[j]];
        count[j] = f->fo_snap->ps_count[cpus[j]];
    }
    uint64_t seen = 0;
    unsigned kind = f->fo_kind;
    struct prof_fold_acc a = { .fa_costs = f->fo_costs };
    for (uint32_t i = 0; i < most; i++) {
        for (unsigned j = 0; j < ncpus; j++) {
            if (i >= count[j] || !prof_fold_takes(kind, PROF_FOLD_SYMBOL, &recs[j][i]))
                continue;
            seen |= 1ull << j;
            if (!prof_fold_one(f, &a, recs[j], count[j], i, cpus[j], k, PROF_FOLD_SYMBOL)) {
                *ok = false;
                goto done;
            }
        }
    }
done:
    prof_fold_acc_done(f, &a);
    return seen;
}

/* CPU by CPU, each CPU's records in order: the order the other modes'
 * entries have always been made in (the off-CPU order's ties and the
 * wall view's lines keep it). Inline with by a constant. */
static inline __attribute__((always_inline))
uint64_t prof_fold_by_cpu(struct prof_fold *f, const uint8_t *cpus, unsigned ncpus,
                          struct prof_fold_ent *k, bool *ok, enum prof_fold_by by)
{
    uint64_t seen = 0;
    unsigned kind = f->fo_kind;
    struct prof_fold_acc a = { .fa_costs = f->fo_costs };
    for (unsigned j = 0; j < ncpus; j++) {
        const struct prof_record *recs = f->fo_snap->ps_recs[cpus[j]];
        uint32_t n = f->fo_snap->ps_count[cpus[j]];
        for (uint32_t i = 0; i < n; i++) {
            if (!prof_fold_takes(kind, by, &recs[i]))
                continue;
            seen |= 1ull << j;
            if (!prof_fold_one(f, &a, recs, n, i, cpus[j], k, by)) {
                *ok = false;
                goto done;
            }
        }
    }
done:
    prof_fold_acc_done(f, &a);
    return seen;
}

/* The walk of f's mode, the mode a constant in each. */
static uint64_t prof_fold_walk(struct prof_fold *f, const uint8_t *cpus, unsigned ncpus,
                               uint32_t most, struct prof_fold_ent *k, bool *ok)
{
    switch (f->fo_by) {
    case PROF_FOLD_SYMBOL:
        return prof_fold_round_robin(f, cpus, ncpus, most, k, ok);
    case PROF_FOLD_TASK_SYMBOL:
        return prof_fold_by_cpu(f, cpus, ncpus, k, ok, PROF_FOLD_TASK_SYMBOL);
    case PROF_FOLD_EXACT:
        return prof_fold_by_cpu(f, cpus, ncpus, k, ok, PROF_FOLD_EXACT);
    case PROF_FOLD_NAMES:
        return prof_fold_by_cpu(f, cpus, ncpus, k, ok, PROF_FOLD_NAMES);
    default:
        return prof_fold_by_cpu(f, cpus, ncpus, k, ok, PROF_FOLD_OFFCPU);
    }
}

/* Distinct pids among the entries: tasks are few, each entry a candidate. */
static uint32_t prof_fold_count_pids(const struct prof_fold *f)
{
    uint32_t pids = 0;
    for (uint32_t i = 0; i < prof_fold_n(f); i++) {
        bool seen = false;
        int pid = prof_fold_at(f, i)->fe_pid;
        for (uint32_t j = 0; j < i && !seen; j++)
            seen = prof_fold_at(f, j)->fe_pid == pid;
        pids += !seen;
    }
    return pids;
}

static bool prof_fold_alloc(struct prof_fold *f)
{
    bool syms = f->fo_by != PROF_FOLD_EXACT && f->fo_by != PROF_FOLD_OFFCPU;
    bool tasks = f->fo_by == PROF_FOLD_EXACT || f->fo_by == PROF_FOLD_NAMES;
    uint32_t n = f->fo_total ? f->fo_total : 1;
    f->fo_ents.fi_size = f->fo_by == PROF_FOLD_OFFCPU
        ? sizeof(struct prof_fold_ent) : offsetof(struct prof_fold_ent, fe_wframes);
    f->fo_syms.fi_size = sizeof(struct prof_fold_sym);
    f->fo_ents.fi_chunk[0] = kmalloc(PROF_ITEMS_CHUNK0 * f->fo_ents.fi_size);
    if (!f->fo_ents.fi_chunk[0])
        return false;
    if (syms && !(f->fo_syms.fi_chunk[0] = kmalloc(PROF_ITEMS_CHUNK0 * f->fo_syms.fi_size)))
        return false;
    if (f->fo_by == PROF_FOLD_SYMBOL && !(f->fo_costs = kmalloc(n * sizeof *f->fo_costs)))
        return false;
    if (tasks && !(f->fo_tasks = kmalloc(n * sizeof *f->fo_tasks)))
        return false;
    if (!prof_index_init(&f->fo_ix, PROF_ITEMS_CHUNK0))
        return false;
    return !syms || prof_index_init(&f->fo_sym_ix, PROF_ITEMS_CHUNK0);
}

bool prof_fold_run(struct prof_fold *f, const struct prof_snapshot *s,
                   enum prof_fold_by by, unsigned kind)
{
    memset(f, 0, sizeof *f);
    f->fo_snap = s;
    f->fo_by = (uint8_t)by;
    f->fo_kind = (uint8_t)kind;
    uint8_t cpus[MAX_CPUS];
    unsigned ncpus = 0;
    uint32_t most = 0;
    for (unsigned c = 0; c < MAX_CPUS; c++) {
        f->fo_total += s->ps_count[c];
        if (s->ps_count[c] > most)
            most = s->ps_count[c];
        if (s->ps_count[c])
            cpus[ncpus++] = (uint8_t)c;
    }
    bool ok = prof_fold_alloc(f);
    struct prof_fold_ent k;
    memset(&k, 0, sizeof k);
    uint64_t seen = ok ? prof_fold_walk(f, cpus, ncpus, most, &k, &ok) : 0;
    if (!ok) {
        prof_fold_free(f);
        f->fo_nomem = true;
        return false;
    }
    /* Counted by hand: __builtin_popcountll is a libgcc call where the
     * CPU baseline has no popcount instruction, and the kernel links no
     * libgcc. */
    for (; seen; seen &= seen - 1)
        f->fo_cpus++;
    if (by == PROF_FOLD_OFFCPU)
        f->fo_pids = prof_fold_count_pids(f);
    return true;
}

void prof_fold_free(struct prof_fold *f)
{
    prof_items_free(&f->fo_ents);
    prof_index_free(&f->fo_ix);
    prof_items_free(&f->fo_syms);
    prof_index_free(&f->fo_sym_ix);
    kfree(f->fo_tasks);
    f->fo_tasks = NULL;
    kfree(f->fo_costs);
    f->fo_costs = NULL;
}

/* Items of t's size in the chunks that hold n, and an index for them. */
static size_t prof_fold_most_of(size_t size, uint32_t n)
{
    size_t items = PROF_ITEMS_CHUNK0, cap = PROF_ITEMS_CHUNK0;
    while (items < n)
        items = 2 * items + PROF_ITEMS_CHUNK0;
    while (cap < n)
        cap *= 2;
    return items * size + 2 * cap * sizeof(uint32_t);
}

uint64_t prof_fold_weight_from(const struct prof_fold *f, uint32_t from)
{
    uint64_t w = 0;
    for (uint32_t i = from; i < prof_fold_n(f);) {
        /* Chunk by chunk: the rest of the one holding i. */
        const char *c = (const char *)prof_fold_at(f, i);
        uint32_t q = i / PROF_ITEMS_CHUNK0 + 1, k = 31u - (unsigned)__builtin_clz(q);
        uint32_t end = PROF_ITEMS_CHUNK0 * ((2u << k) - 1);
        for (; i < end && i < prof_fold_n(f); i++, c += f->fo_ents.fi_size)
            w = prof_weight_add(w, ((const struct prof_fold_ent *)c)->fe_weight);
    }
    return w;
}

size_t prof_fold_most(enum prof_fold_by by, uint32_t n)
{
    size_t b = prof_fold_most_of(by == PROF_FOLD_OFFCPU ? sizeof(struct prof_fold_ent)
                                 : offsetof(struct prof_fold_ent, fe_wframes), n);
    if (by == PROF_FOLD_EXACT || by == PROF_FOLD_NAMES)
        b += n * sizeof(struct prof_fold_task);
    if (by != PROF_FOLD_EXACT && by != PROF_FOLD_OFFCPU)
        b += prof_fold_most_of(sizeof(struct prof_fold_sym), n);
    if (by == PROF_FOLD_SYMBOL)
        b += n * sizeof(uint32_t);
    return b;
}
