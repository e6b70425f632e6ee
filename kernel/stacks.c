/* kernel/stacks.c: the registry of every stack the kernel runs on.
 *
 * Writers (stack_register, stack_unregister) run in task context and
 * serialize on stacks_lock. The one reader that matters, stack_find, runs
 * in NMI context inside the stack walker: it can interrupt a writer on its
 * own CPU, so it must never wait for the lock. Each slot is therefore a
 * small seqlock:
 *
 *   writer:  seq++ (odd) ; write fields ; seq++ (even)
 *   reader:  s1 = seq (acquire) ; copy fields ; s2 = seq ; use the copy
 *            only if s1 == s2 and s1 is even
 *
 * A reader that keeps losing (its own CPU's writer is frozen mid-update
 * under it) gives up after a few tries and treats the slot as absent: the
 * walk then stops early, which is harmless; spinning would deadlock.
 *
 * All fields are read and written with __atomic builtins so that the
 * deliberate racing reads are defined behaviour, and a torn copy is thrown
 * away by the sequence check rather than used. (One exception: the inline
 * reader of the task slot, stack_task_find in stacks.h, reads the fields
 * between its two sequence reads as volatile words; it says why.)
 *
 * Scanning the registry costs a seqlock read per slot (27 slots at 4 CPUs
 * on x86-64), yet a sample almost always lands on a stack its own CPU
 * knows: the task it runs, its interrupt stack or an IST stack. So each
 * CPU also keeps those bounds (its task slot, struct stack_task_slot, and
 * struct cpu_stacks below) and stack_lookup tries them before the
 * registry; the sample path reads the task slot inline. */
#include "kernel/stacks.h"
#include "kernel/spinlock.h"
#include "lib/string.h"

#define STACK_READ_TRIES 4

struct stack_slot {
    unsigned seq;           /* odd while a writer is mid-update */
    unsigned used;          /* published last, with release */
    uintptr_t lo, hi;
    int kind;
    int owner;
    const char *name;
};

static struct stack_slot stack_slots[MAX_STACKS];

/* One CPU's own stacks: its task slot (struct stack_task_slot, stacks.h)
 * and its fixed set here. Each is a seqlock whose reader never retries: a
 * copy in flux is simply not used, and the lookup falls back to the
 * registry, which is always right (an NMI that interrupted its own CPU's
 * writer would wait for ever on a retry).
 *
 * The task slot changes at every context switch, written by its own CPU
 * with interrupts off; its readers are an NMI on that CPU, or a walk in
 * task context that migrated and reads the CPU it left. The fixed set
 * (interrupt and IST stacks, kept in step with the registry) is written
 * under stacks_lock, by any CPU. */
struct cpu_stacks {
    unsigned cs_fseq;              /* fixed set: odd while written */
    unsigned cs_nfixed;
    struct stack_region cs_fixed[CPU_FIXED_STACKS];
    uint64_t cs_scans;             /* registry fallbacks, a statistic */
} __attribute__((aligned(64)));

static struct cpu_stacks cpu_stacks[MAX_CPUS];
/* The task slot of each CPU (stacks.h: its reader is inline on the
 * sample path). */
struct stack_task_slot stack_task_slots[MAX_CPUS];
/* One past the highest slot ever used: bounds the NMI-time scan. It only
 * grows, and grows after the slot it covers is published. */
static unsigned stack_top;
static spinlock_t stacks_lock = SPINLOCK_INIT("stacks");

/* Begin and end a writer's update of what seq guards. The release fence
 * orders the odd seq before the field stores; the release store of the
 * even seq orders the field stores before it. */
static void seq_write_begin(unsigned *seq)
{
    unsigned q = __atomic_load_n(seq, __ATOMIC_RELAXED);
    __atomic_store_n(seq, q + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

static void seq_write_end(unsigned *seq)
{
    unsigned q = __atomic_load_n(seq, __ATOMIC_RELAXED);
    __atomic_store_n(seq, q + 1, __ATOMIC_RELEASE);
}

/* Store or clear fixed entry i of cs (stacks_lock held, cs_fseq odd). */
static void fixed_store(struct cpu_stacks *cs, unsigned i, const struct stack_region *r)
{
    struct stack_region *f = &cs->cs_fixed[i];
    __atomic_store_n(&f->lo, r->lo, __ATOMIC_RELAXED);
    __atomic_store_n(&f->hi, r->hi, __ATOMIC_RELAXED);
    __atomic_store_n(&f->kind, r->kind, __ATOMIC_RELAXED);
    __atomic_store_n(&f->owner, r->owner, __ATOMIC_RELAXED);
    __atomic_store_n(&f->name, r->name, __ATOMIC_RELAXED);
}

/* Keep CPU owner's fixed set in step with the registry (stacks_lock held):
 * add r, or with add false remove the entry for r->lo. One that does not
 * fit is still in the registry: lookups for it only cost more. */
static void cpu_fixed_update(const struct stack_region *r, bool add)
{
    if ((r->kind != STACK_IRQ && r->kind != STACK_IST) ||
        r->owner < 0 || r->owner >= MAX_CPUS)
        return;
    struct cpu_stacks *cs = &cpu_stacks[r->owner];
    unsigned n = __atomic_load_n(&cs->cs_nfixed, __ATOMIC_RELAXED);
    seq_write_begin(&cs->cs_fseq);
    if (add && n < CPU_FIXED_STACKS) {
        fixed_store(cs, n, r);
        __atomic_store_n(&cs->cs_nfixed, n + 1, __ATOMIC_RELAXED);
    }
    for (unsigned i = 0; !add && i < n; i++) {
        if (cs->cs_fixed[i].lo == r->lo) {
            fixed_store(cs, i, &cs->cs_fixed[n - 1]);
            __atomic_store_n(&cs->cs_nfixed, n - 1, __ATOMIC_RELAXED);
            break;
        }
    }
    seq_write_end(&cs->cs_fseq);
}

/* The paint is one byte repeated (stacks.h), so memset lays it, at its
 * own speed: a task's 16 KiB stack is painted at every spawn. */
_Static_assert(STACK_PAINT == 0x0101010101010101ull * (STACK_PAINT & 0xff),
               "the paint is one byte repeated");
static void stack_paint(uintptr_t lo, uintptr_t hi)
{
    uintptr_t a = (lo + 7) & ~(uintptr_t)7, b = hi & ~(uintptr_t)7;
    if (a < b)
        memset((void *)a, (int)(STACK_PAINT & 0xff), b - a);
}

int stack_register(uintptr_t lo, uintptr_t hi, enum stack_kind kind,
                   int owner, const char *name, bool paint)
{
    if (lo >= hi)
        return -1;      /* an empty or inverted region could match nothing */
    /* Paint before publishing: once found, the region is live. */
    if (paint)
        stack_paint(lo, hi);

    unsigned long f = spin_lock(&stacks_lock);
    int id = -1;
    for (int i = 0; i < MAX_STACKS; i++) {
        if (!__atomic_load_n(&stack_slots[i].used, __ATOMIC_RELAXED)) {
            id = i;
            break;
        }
    }
    if (id >= 0) {
        struct stack_slot *s = &stack_slots[id];
        seq_write_begin(&s->seq);
        __atomic_store_n(&s->lo, lo, __ATOMIC_RELAXED);
        __atomic_store_n(&s->hi, hi, __ATOMIC_RELAXED);
        __atomic_store_n(&s->kind, (int)kind, __ATOMIC_RELAXED);
        __atomic_store_n(&s->owner, owner, __ATOMIC_RELAXED);
        __atomic_store_n(&s->name, name, __ATOMIC_RELAXED);
        /* Published last: a reader that sees used=1 with acquire sees
         * every field above. */
        __atomic_store_n(&s->used, 1, __ATOMIC_RELEASE);
        seq_write_end(&s->seq);
        if ((unsigned)id + 1 > __atomic_load_n(&stack_top, __ATOMIC_RELAXED))
            __atomic_store_n(&stack_top, (unsigned)id + 1, __ATOMIC_RELEASE);
        cpu_fixed_update(&(struct stack_region){ lo, hi, kind, owner, name }, true);
    }
    spin_unlock(&stacks_lock, f);
    return id;
}

void stack_unregister(int id)
{
    if (id < 0 || id >= MAX_STACKS)
        return;
    unsigned long f = spin_lock(&stacks_lock);
    struct stack_slot *s = &stack_slots[id];
    if (__atomic_load_n(&s->used, __ATOMIC_RELAXED)) {
        struct stack_region r = { s->lo, s->hi, (enum stack_kind)s->kind, s->owner, s->name };
        cpu_fixed_update(&r, false);
    }
    seq_write_begin(&s->seq);
    __atomic_store_n(&s->used, 0, __ATOMIC_RELEASE);
    seq_write_end(&s->seq);
    spin_unlock(&stacks_lock, f);
}

/* Copy slot i out if it is in use and the copy is consistent. NMI-safe:
 * bounded, lock-free, touches only the registry. */
static bool slot_read(unsigned i, struct stack_region *out)
{
    struct stack_slot *s = &stack_slots[i];
    for (int tries = 0; tries < STACK_READ_TRIES; tries++) {
        unsigned s1 = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
        if (s1 & 1)
            continue;   /* writer mid-update */
        if (!__atomic_load_n(&s->used, __ATOMIC_ACQUIRE))
            return false;
        out->lo = __atomic_load_n(&s->lo, __ATOMIC_RELAXED);
        out->hi = __atomic_load_n(&s->hi, __ATOMIC_RELAXED);
        out->kind = (enum stack_kind)__atomic_load_n(&s->kind, __ATOMIC_RELAXED);
        out->owner = __atomic_load_n(&s->owner, __ATOMIC_RELAXED);
        out->name = __atomic_load_n(&s->name, __ATOMIC_RELAXED);
        /* Order the field loads before the re-check of seq. */
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&s->seq, __ATOMIC_RELAXED) == s1)
            return true;
    }
    return false;
}

bool stack_find(uintptr_t addr, struct stack_region *out)
{
    unsigned top = __atomic_load_n(&stack_top, __ATOMIC_ACQUIRE);
    struct stack_region r;
    for (unsigned i = 0; i < top; i++) {
        if (slot_read(i, &r) && addr >= r.lo && addr < r.hi) {
            if (out)
                *out = r;
            return true;
        }
    }
    return false;
}

size_t stack_headroom(const struct stack_region *r)
{
    const uint64_t *w = (const uint64_t *)((r->lo + 7) & ~(uintptr_t)7);
    const uint64_t *end = (const uint64_t *)(r->hi & ~(uintptr_t)7);
    size_t n = 0;
    while (w < end && *w == STACK_PAINT) {
        w++;
        n += 8;
    }
    return n;
}

/* Each slot is copied out under the lock and fn runs without it, so fn may
 * print at leisure, or even register a stack, without deadlock. */
void stack_for_each(void (*fn)(const struct stack_region *r, void *arg), void *arg)
{
    unsigned top = __atomic_load_n(&stack_top, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < top; i++) {
        struct stack_region r;
        unsigned long f = spin_lock(&stacks_lock);
        bool used = slot_read(i, &r);
        spin_unlock(&stacks_lock, f);
        if (used)
            fn(&r, arg);
    }
}

/* ---- each CPU's own stacks: the walk's fast path --------------------- */

void stack_cpu_switch(int id)
{
    unsigned cpu = cpu_index();
    if (cpu >= MAX_CPUS)
        return;
    struct stack_task_slot *ts = &stack_task_slots[cpu];
    struct stack_region r = { 0 };
    /* An IRQ or IST stack is never a task's: stack_task_bounds relies on
     * the slot holding neither, and such an id would be a bug's. */
    if (id < 0 || id >= MAX_STACKS || !slot_read((unsigned)id, &r) ||
        r.kind == STACK_IRQ || r.kind == STACK_IST)
        r.lo = r.hi = 0;        /* matches nothing: lookups use the registry */
    seq_write_begin(&ts->ts_seq);
    /* hi to 0 first, then lo, then hi: an NMI on this CPU, which reads
     * without the seqlock (stack_task_bounds), sees the old bounds, an
     * empty range, or the new ones, never a mix. The CPU observes its own
     * stores in program order; the fences keep the compiler's order. */
    __atomic_store_n(&ts->ts_hi, 0, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&ts->ts_lo, r.lo, __ATOMIC_RELAXED);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    __atomic_store_n(&ts->ts_hi, r.hi, __ATOMIC_RELAXED);
    __atomic_store_n(&ts->ts_kind, (int)r.kind, __ATOMIC_RELAXED);
    __atomic_store_n(&ts->ts_owner, r.owner, __ATOMIC_RELAXED);
    __atomic_store_n(&ts->ts_name, r.name, __ATOMIC_RELAXED);
    seq_write_end(&ts->ts_seq);
}

/* The fixed entry holding addr, if the set was not in flux. */
static bool cpu_fixed_find(struct cpu_stacks *cs, uintptr_t addr,
                           struct stack_region *out)
{
    unsigned s1 = __atomic_load_n(&cs->cs_fseq, __ATOMIC_ACQUIRE);
    if (s1 & 1)
        return false;
    unsigned n = __atomic_load_n(&cs->cs_nfixed, __ATOMIC_RELAXED);
    bool hit = false;
    for (unsigned i = 0; !hit && i < n && i < CPU_FIXED_STACKS; i++) {
        const struct stack_region *f = &cs->cs_fixed[i];
        uintptr_t lo = __atomic_load_n(&f->lo, __ATOMIC_RELAXED);
        uintptr_t hi = __atomic_load_n(&f->hi, __ATOMIC_RELAXED);
        if (addr >= lo && addr < hi) {
            *out = (struct stack_region){
                lo, hi, __atomic_load_n(&f->kind, __ATOMIC_RELAXED),
                __atomic_load_n(&f->owner, __ATOMIC_RELAXED),
                __atomic_load_n(&f->name, __ATOMIC_RELAXED) };
            hit = true;
        }
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return hit && __atomic_load_n(&cs->cs_fseq, __ATOMIC_RELAXED) == s1;
}

/* Everything past the task slot: the fixed set, then the registry. Out of
 * line, so that the common case (the sample's sp on the task it
 * interrupted) pays for no register it does not use. */
static __attribute__((noinline))
bool stack_lookup_rest(struct cpu_stacks *cs, uintptr_t addr, struct stack_region *out)
{
    struct stack_region r;
    if (cs) {
        if (cpu_fixed_find(cs, addr, &r)) {
            if (out)
                *out = r;
            return true;
        }
        /* Load and store, not an atomic add: a lost count when an NMI
         * lands between them is harmless, a locked add here is not free. */
        uint64_t k = __atomic_load_n(&cs->cs_scans, __ATOMIC_RELAXED);
        __atomic_store_n(&cs->cs_scans, k + 1, __ATOMIC_RELAXED);
    }
    return stack_find(addr, out);
}

/* no_instrument_function: as st_capture_trap (stacktrace.c), which calls
 * it once per sample; it calls cpu_index, so it keeps its frame. */
__attribute__((no_instrument_function))
bool stack_lookup(uintptr_t addr, struct stack_region *out)
{
    unsigned cpu = cpu_index();
    if (cpu >= MAX_CPUS)
        return stack_lookup_rest(NULL, addr, out);
    struct stack_region r;
    if (stack_task_find(&stack_task_slots[cpu], addr, &r)) {
        if (out)
            *out = r;
        return true;
    }
    return stack_lookup_rest(&cpu_stacks[cpu], addr, out);
}

uint64_t stack_cpu_scans(unsigned cpu)
{
    if (cpu >= MAX_CPUS)
        return 0;
    return __atomic_load_n(&cpu_stacks[cpu].cs_scans, __ATOMIC_RELAXED);
}
