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
 * away by the sequence check rather than used. */
#include "kernel/stacks.h"
#include "kernel/spinlock.h"

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
/* One past the highest slot ever used: bounds the NMI-time scan. It only
 * grows, and grows after the slot it covers is published. */
static unsigned stack_top;
static spinlock_t stacks_lock = SPINLOCK_INIT;

/* Begin and end a writer's update of one slot (stacks_lock held). The
 * release fence orders the odd seq before the field stores; the release
 * store of the even seq orders the field stores before it. */
static void slot_write_begin(struct stack_slot *s)
{
    unsigned q = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
    __atomic_store_n(&s->seq, q + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

static void slot_write_end(struct stack_slot *s)
{
    unsigned q = __atomic_load_n(&s->seq, __ATOMIC_RELAXED);
    __atomic_store_n(&s->seq, q + 1, __ATOMIC_RELEASE);
}

static void stack_paint(uintptr_t lo, uintptr_t hi)
{
    volatile uint64_t *w = (volatile uint64_t *)((lo + 7) & ~(uintptr_t)7);
    volatile uint64_t *end = (volatile uint64_t *)(hi & ~(uintptr_t)7);
    while (w < end)
        *w++ = STACK_PAINT;
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
        slot_write_begin(s);
        __atomic_store_n(&s->lo, lo, __ATOMIC_RELAXED);
        __atomic_store_n(&s->hi, hi, __ATOMIC_RELAXED);
        __atomic_store_n(&s->kind, (int)kind, __ATOMIC_RELAXED);
        __atomic_store_n(&s->owner, owner, __ATOMIC_RELAXED);
        __atomic_store_n(&s->name, name, __ATOMIC_RELAXED);
        /* Published last: a reader that sees used=1 with acquire sees
         * every field above. */
        __atomic_store_n(&s->used, 1, __ATOMIC_RELEASE);
        slot_write_end(s);
        if ((unsigned)id + 1 > __atomic_load_n(&stack_top, __ATOMIC_RELAXED))
            __atomic_store_n(&stack_top, (unsigned)id + 1, __ATOMIC_RELEASE);
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
    slot_write_begin(s);
    __atomic_store_n(&s->used, 0, __ATOMIC_RELEASE);
    slot_write_end(s);
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
