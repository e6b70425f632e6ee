// LINK: kernel/stacks.c kernel/stacktrace.c kernel/symtab.c lib/printf.c lib/parse.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c
/* tests/unit/test_stacktrace.c: the stack registry and the frame-pointer
 * walk over synthetic stacks built in host arrays.
 *
 * A synthetic frame at word i of a stack is mem[i] = the next frame's
 * address (the saved fp) and mem[i+1] = a fake return address inside the
 * fake text range [TEXT_LO, TEXT_HI). A region covers the first
 * REGION_WORDS words of its array; the two words above hold bait (a valid
 * looking return address) that only a walk reading past the region would
 * take, and the array ends its struct, so reading further is an ASan
 * error. */
#include "test.h"
#include "fake_hal.h"
#include "kernel/stacks.h"
#include "kernel/stacktrace.h"
#include "kernel/stacktrace_inline.h"
#include "kernel/symtab.h"

extern uintptr_t symtab_test_text_lo, symtab_test_text_hi;

#define TEXT_LO 0x1000
#define TEXT_HI 0x9000
#define WORDS 64
#define REGION_WORDS (WORDS - 2)

struct fake_stack {
    int id;
    uint64_t mem[WORDS];
};

static uintptr_t at(struct fake_stack *s, unsigned word)
{
    return (uintptr_t)&s->mem[word];
}

static void fake_open(struct fake_stack *s, enum stack_kind kind, const char *name)
{
    memset(s->mem, 0, sizeof s->mem);
    /* Bait above hi: both words read as returns inside text. */
    s->mem[REGION_WORDS] = 0x2f00;
    s->mem[REGION_WORDS + 1] = 0x2f10;
    s->id = stack_register(at(s, 0), at(s, REGION_WORDS), kind, 7, name, false);
    CHECK(s->id >= 0);
    symtab_test_text_lo = TEXT_LO;
    symtab_test_text_hi = TEXT_HI;
}

static void fake_close(struct fake_stack *s)
{
    stack_unregister(s->id);
}

/* A frame at word w of s: saved fp next, return address ret. */
static void frame(struct fake_stack *s, unsigned w, uintptr_t next, uintptr_t ret)
{
    s->mem[w] = next;
    s->mem[w + 1] = ret;
}

/* A chain of n frames at words 4, 10, 16, ... with returns 0x2000 + k*0x10,
 * the last pointing at null. Returns the first frame's address. */
static uintptr_t chain(struct fake_stack *s, unsigned n)
{
    for (unsigned k = 0; k < n; k++) {
        unsigned w = 4 + 6 * k;
        uintptr_t next = k + 1 < n ? at(s, w + 6) : 0;
        frame(s, w, next, 0x2000 + k * 0x10);
    }
    return at(s, 4);
}

/* ---- the registry ---- */

TEST(stacks_register_find_unregister)
{
    static uint64_t mem[32];
    uintptr_t lo = (uintptr_t)mem, hi = lo + sizeof mem;
    int id = stack_register(lo, hi, STACK_IRQ, 3, "irq", false);
    CHECK(id >= 0);
    struct stack_region r;
    memset(&r, 0, sizeof r);
    CHECK(stack_find(lo, &r));
    CHECK_EQ(r.lo, lo);
    CHECK_EQ(r.hi, hi);
    CHECK_EQ(r.kind, STACK_IRQ);
    CHECK_EQ(r.owner, 3);
    CHECK_STR(r.name, "irq");
    CHECK(stack_find(hi - 1, &r));
    CHECK(!stack_find(hi, &r));                 /* [lo, hi) */
    CHECK(!stack_find(lo - 1, &r));
    stack_unregister(id);
    CHECK(!stack_find(lo, &r));
    CHECK_EQ(fake_irq_depth, 0);                /* lock left no irq state */
    CHECK_EQ(stack_register(hi, lo, STACK_TASK, 1, "bad", false), -1);
    stack_unregister(-1);                       /* ignored, no crash */
    stack_unregister(MAX_STACKS);
}

TEST(stacks_headroom_counts_paint_from_lo)
{
    static uint64_t mem[512];
    uintptr_t lo = (uintptr_t)mem, hi = lo + sizeof mem;
    int id = stack_register(lo, hi, STACK_TASK, 1, "t", true);
    CHECK(id >= 0);
    for (unsigned i = 0; i < 512; i++)
        CHECK(mem[i] == STACK_PAINT);
    struct stack_region r;
    CHECK(stack_find(lo + 100, &r));
    CHECK_EQ(stack_headroom(&r), sizeof mem);
    /* Use from the top down, as a stack does, then one deep write. */
    for (unsigned i = 400; i < 512; i++)
        mem[i] = i;
    CHECK_EQ(stack_headroom(&r), 400 * 8);
    mem[10] = 0;
    CHECK_EQ(stack_headroom(&r), 10 * 8);
    mem[0] = 1;
    CHECK_EQ(stack_headroom(&r), 0);
    stack_unregister(id);
}

TEST(stacks_registry_full_returns_minus_one)
{
    static int ids[MAX_STACKS];
    int n = 0;
    /* Fake ranges, never painted, never read. */
    for (int i = 0; i < MAX_STACKS + 1; i++) {
        int id = stack_register(0x100000 + i * 0x100, 0x100000 + i * 0x100 + 0x80,
                                STACK_TASK, i, "fill", false);
        if (id < 0)
            break;
        ids[n++] = id;
    }
    CHECK_EQ(n, MAX_STACKS);
    CHECK_EQ(stack_register(0x900000, 0x900100, STACK_TASK, 0, "more", false), -1);
    struct stack_region r;
    CHECK(stack_find(0x100000 + 5 * 0x100 + 0x10, &r));
    CHECK_EQ(r.owner, 5);
    /* A freed slot is reused. */
    stack_unregister(ids[17]);
    int again = stack_register(0x900000, 0x900100, STACK_TASK, 99, "more", false);
    CHECK_EQ(again, ids[17]);
    ids[17] = again;
    for (int i = 0; i < n; i++)
        stack_unregister(ids[i]);
    CHECK(!stack_find(0x100000 + 0x10, &r));
}

static void count_visit(const struct stack_region *r, void *arg)
{
    if (strcmp(r->name, "visit") == 0)
        (*(int *)arg)++;
}

TEST(stacks_for_each_visits_used_slots)
{
    int a = stack_register(0x200000, 0x201000, STACK_TASK, 1, "visit", false);
    int b = stack_register(0x300000, 0x301000, STACK_IST, 0, "visit", false);
    int c = stack_register(0x400000, 0x401000, STACK_IRQ, 0, "visit", false);
    stack_unregister(b);
    int seen = 0;
    stack_for_each(count_visit, &seen);
    CHECK_EQ(seen, 2);
    stack_unregister(a);
    stack_unregister(c);
    seen = 0;
    stack_for_each(count_visit, &seen);
    CHECK_EQ(seen, 0);
}

/* ---- the walk ---- */

TEST(stacktrace_good_chain)
{
    static struct fake_stack s;
    fake_open(&s, STACK_TASK, "task");
    uintptr_t fp = chain(&s, 5);
    uintptr_t out[16];
    unsigned n = st_walk(fp, at(&s, 2), out, 16);
    CHECK_EQ(n, 5);
    for (unsigned k = 0; k < n; k++)
        CHECK_EQ(out[k], 0x2000 + k * 0x10);
    /* sp may equal the first fp (right after push %rbp; mov %rsp,%rbp). */
    CHECK_EQ(st_walk(fp, fp, out, 16), 5);
    fake_close(&s);
}

TEST(stacktrace_null_fp)
{
    static struct fake_stack s;
    fake_open(&s, STACK_TASK, "task");
    uintptr_t out[4] = { 0 };
    CHECK_EQ(st_walk(0, at(&s, 2), out, 4), 0);
    CHECK_EQ(out[0], 0);
    fake_close(&s);
}

TEST(stacktrace_sp_outside_any_stack)
{
    static struct fake_stack s;
    static uint64_t elsewhere[8];
    fake_open(&s, STACK_TASK, "task");
    uintptr_t fp = chain(&s, 3);
    uintptr_t out[4];
    CHECK_EQ(st_walk(fp, (uintptr_t)elsewhere, out, 4), 0);
    fake_close(&s);
}

TEST(stacktrace_loop_stops)
{
    static struct fake_stack s;
    fake_open(&s, STACK_TASK, "task");
    uintptr_t out[16];
    /* A frame that points at itself. */
    frame(&s, 10, at(&s, 10), 0x2000);
    CHECK_EQ(st_walk(at(&s, 10), at(&s, 2), out, 16), 1);
    /* Two frames pointing at each other: the downward step stops it. */
    frame(&s, 10, at(&s, 20), 0x2000);
    frame(&s, 20, at(&s, 10), 0x2010);
    CHECK_EQ(st_walk(at(&s, 10), at(&s, 2), out, 16), 2);
    CHECK_EQ(out[1], 0x2010);
    fake_close(&s);
}

TEST(stacktrace_descending_fp_stops)
{
    static struct fake_stack s;
    fake_open(&s, STACK_TASK, "task");
    uintptr_t out[16];
    frame(&s, 30, at(&s, 20), 0x2000);     /* next frame is lower */
    frame(&s, 20, at(&s, 40), 0x2010);
    CHECK_EQ(st_walk(at(&s, 30), at(&s, 2), out, 16), 1);
    /* A first fp below sp is not a frame of this context. */
    frame(&s, 4, 0, 0x2000);
    CHECK_EQ(st_walk(at(&s, 4), at(&s, 8), out, 16), 0);
    fake_close(&s);
}

TEST(stacktrace_fp_outside_stack_stops)
{
    static struct fake_stack s;
    static uint64_t elsewhere[8];
    fake_open(&s, STACK_TASK, "task");
    uintptr_t out[16];
    elsewhere[0] = 0;
    elsewhere[1] = 0x2000;
    CHECK_EQ(st_walk((uintptr_t)elsewhere, at(&s, 2), out, 16), 0);
    frame(&s, 4, (uintptr_t)elsewhere, 0x2000);
    CHECK_EQ(st_walk(at(&s, 4), at(&s, 2), out, 16), 1);
    /* Garbage far away (never read: it is not in any stack). */
    frame(&s, 4, 0xdead0000beef0000ull, 0x2000);
    CHECK_EQ(st_walk(at(&s, 4), at(&s, 2), out, 16), 1);
    fake_close(&s);
}

TEST(stacktrace_misaligned_fp_stops)
{
    static struct fake_stack s;
    fake_open(&s, STACK_TASK, "task");
    uintptr_t out[16];
    chain(&s, 3);
    CHECK_EQ(st_walk(at(&s, 4) + 4, at(&s, 2), out, 16), 0);
    frame(&s, 4, at(&s, 10) + 1, 0x2000);
    CHECK_EQ(st_walk(at(&s, 4), at(&s, 2), out, 16), 1);
    fake_close(&s);
}

TEST(stacktrace_frame_limit)
{
    static struct fake_stack s;
    fake_open(&s, STACK_TASK, "task");
    uintptr_t fp = chain(&s, 6);
    uintptr_t out[8] = { 0 };
    CHECK_EQ(st_walk(fp, at(&s, 2), out, 3), 3);
    CHECK_EQ(out[2], 0x2020);
    CHECK_EQ(out[3], 0);                        /* nothing past max */
    CHECK_EQ(st_walk(fp, at(&s, 2), out, 6), 6);
    CHECK_EQ(st_walk(fp, at(&s, 2), out, 0), 0);
    fake_close(&s);
}

TEST(stacktrace_return_outside_text_stops)
{
    static struct fake_stack s;
    fake_open(&s, STACK_TASK, "task");
    uintptr_t fp = chain(&s, 5);
    s.mem[16 + 1] = TEXT_HI;                    /* third frame's return */
    uintptr_t out[16];
    CHECK_EQ(st_walk(fp, at(&s, 2), out, 16), 2);
    s.mem[16 + 1] = TEXT_LO - 1;
    CHECK_EQ(st_walk(fp, at(&s, 2), out, 16), 2);
    s.mem[16 + 1] = TEXT_LO;
    CHECK_EQ(st_walk(fp, at(&s, 2), out, 16), 5);
    fake_close(&s);
}

TEST(stacktrace_irq_to_task_crosses)
{
    static struct fake_stack irq, task;
    fake_open(&irq, STACK_IRQ, "irq");
    fake_open(&task, STACK_TASK, "task");
    uintptr_t out[16];
    frame(&irq, 4, at(&irq, 10), 0x3000);
    frame(&irq, 10, at(&task, 6), 0x3010);      /* the interrupted context */
    frame(&task, 6, at(&task, 12), 0x3020);
    frame(&task, 12, 0, 0x3030);
    unsigned n = st_walk(at(&irq, 4), at(&irq, 2), out, 16);
    CHECK_EQ(n, 4);
    CHECK_EQ(out[0], 0x3000);
    CHECK_EQ(out[3], 0x3030);
    /* Once in the task stack, its rules apply: it cannot go back. */
    frame(&task, 12, at(&irq, 20), 0x3030);
    frame(&irq, 20, 0, 0x3040);
    CHECK_EQ(st_walk(at(&irq, 4), at(&irq, 2), out, 16), 4);
    fake_close(&irq);
    fake_close(&task);
}

TEST(stacktrace_ist_to_irq_to_task_crosses)
{
    static struct fake_stack ist, irq, task;
    fake_open(&ist, STACK_IST, "nmi");
    fake_open(&irq, STACK_IRQ, "irq");
    fake_open(&task, STACK_TASK, "task");
    uintptr_t out[16];
    frame(&ist, 8, at(&irq, 30), 0x4000);
    frame(&irq, 30, at(&task, 2), 0x4010);     /* lower address, new stack */
    frame(&task, 2, 0, 0x4020);
    CHECK_EQ(st_walk(at(&ist, 8), at(&ist, 0), out, 16), 3);
    CHECK_EQ(out[2], 0x4020);
    /* From an IRQ stack, a fp in no registered stack still stops. */
    static uint64_t elsewhere[4];
    frame(&irq, 30, (uintptr_t)elsewhere, 0x4010);
    CHECK_EQ(st_walk(at(&ist, 8), at(&ist, 0), out, 16), 2);
    fake_close(&ist);
    fake_close(&irq);
    fake_close(&task);
}

TEST(stacktrace_task_to_task_stops)
{
    static struct fake_stack a, b;
    fake_open(&a, STACK_TASK, "a");
    fake_open(&b, STACK_BOOT, "boot");
    uintptr_t out[16];
    frame(&a, 4, at(&a, 10), 0x2000);
    frame(&a, 10, at(&b, 20), 0x2010);
    frame(&b, 20, 0, 0x2020);
    CHECK_EQ(st_walk(at(&a, 4), at(&a, 2), out, 16), 2);
    /* Boot stacks do not cross either. */
    frame(&b, 4, at(&a, 20), 0x2000);
    frame(&a, 20, 0, 0x2010);
    CHECK_EQ(st_walk(at(&b, 4), at(&b, 2), out, 16), 1);
    fake_close(&a);
    fake_close(&b);
}

TEST(stacktrace_record_straddling_top_rejected)
{
    static struct fake_stack s, irq;
    fake_open(&s, STACK_TASK, "task");
    uintptr_t out[16];
    /* The region's last word: its return address would be the bait
     * word above hi. */
    s.mem[REGION_WORDS - 1] = 0;
    frame(&s, 4, at(&s, REGION_WORDS - 1), 0x2000);
    CHECK_EQ(st_walk(at(&s, 4), at(&s, 2), out, 16), 1);
    CHECK_EQ(st_walk(at(&s, REGION_WORDS - 1), at(&s, 2), out, 16), 0);
    /* Wholly above: not in the region at all. */
    frame(&s, 4, at(&s, REGION_WORDS), 0x2000);
    CHECK_EQ(st_walk(at(&s, 4), at(&s, 2), out, 16), 1);
    /* The last whole record is fine. */
    frame(&s, 4, at(&s, REGION_WORDS - 2), 0x2000);
    frame(&s, REGION_WORDS - 2, 0, 0x2010);
    CHECK_EQ(st_walk(at(&s, 4), at(&s, 2), out, 16), 2);
    /* Same rule after a crossing. */
    fake_open(&irq, STACK_IRQ, "irq");
    s.mem[REGION_WORDS - 1] = 0;
    frame(&irq, 4, at(&s, REGION_WORDS - 1), 0x3000);
    CHECK_EQ(st_walk(at(&irq, 4), at(&irq, 2), out, 16), 1);
    fake_close(&irq);
    fake_close(&s);
}

/* ---- st_walk_within: a task's own stack, the scheduler's walk ---- */

/* st_walk_within over s's region, as the scheduler calls it: bounded by
 * the stack (its last whole record at top), at most max frames. */
static unsigned within(struct fake_stack *s, uintptr_t fp, uintptr_t *out, unsigned max)
{
    return st_walk_within(at(s, 0), at(s, REGION_WORDS - 2), fp, out, max, st_text_now());
}

TEST(stacktrace_within_good_chain_and_limit)
{
    static struct fake_stack s;
    fake_open(&s, STACK_TASK, "task");
    uintptr_t fp = chain(&s, 5);
    uintptr_t out[8] = { 0 };
    CHECK_EQ(within(&s, fp, out, 8), 5);
    for (unsigned k = 0; k < 5; k++)
        CHECK_EQ(out[k], 0x2000 + k * 0x10);
    CHECK_EQ(out[5], 0);                        /* nothing past the chain */
    memset(out, 0, sizeof out);
    CHECK_EQ(within(&s, fp, out, 3), 3);
    CHECK_EQ(out[2], 0x2020);
    CHECK_EQ(out[3], 0);                        /* nothing past max */
    CHECK_EQ(within(&s, fp, out, 0), 0);
    /* The first record may be the stack's lowest or its last whole one. */
    frame(&s, 0, 0, 0x2000);
    CHECK_EQ(within(&s, at(&s, 0), out, 8), 1);
    frame(&s, REGION_WORDS - 2, 0, 0x2010);
    CHECK_EQ(within(&s, at(&s, REGION_WORDS - 2), out, 8), 1);
    CHECK_EQ(out[0], 0x2010);
    fake_close(&s);
}

/* Every corrupt record ends the chain where it is, never read. */
TEST(stacktrace_within_corrupt_chain_stops)
{
    static struct fake_stack s;
    static uint64_t elsewhere[4] = { 0, 0x2000, 0, 0x2000 };
    fake_open(&s, STACK_TASK, "task");
    uintptr_t out[8];
    /* A first record outside the stack, misaligned, straddling its top. */
    CHECK_EQ(within(&s, (uintptr_t)elsewhere, out, 8), 0);
    CHECK_EQ(within(&s, at(&s, 0) - 16, out, 8), 0);
    CHECK_EQ(within(&s, at(&s, 4) + 4, out, 8), 0);
    CHECK_EQ(within(&s, at(&s, REGION_WORDS - 1), out, 8), 0);
    CHECK_EQ(within(&s, 0, out, 8), 0);
    /* A next record that points at itself, below, misaligned, past the
     * last whole record, outside the stack, at garbage. */
    static const uintptr_t bad_off[] = { 0, (uintptr_t)-48, 1, 4, 8 * (REGION_WORDS - 1 - 10),
                                         8 * (REGION_WORDS - 10) };
    for (unsigned i = 0; i < sizeof bad_off / sizeof bad_off[0]; i++) {
        chain(&s, 5);
        frame(&s, 10, at(&s, 10) + bad_off[i], 0x2010);
        CHECK_EQ(within(&s, at(&s, 4), out, 8), 2);
    }
    frame(&s, 10, (uintptr_t)elsewhere, 0x2010);
    CHECK_EQ(within(&s, at(&s, 4), out, 8), 2);
    frame(&s, 10, 0xdead0000beef0000ull, 0x2010);
    CHECK_EQ(within(&s, at(&s, 4), out, 8), 2);
    /* Two records pointing at each other: the downward step stops it. */
    frame(&s, 10, at(&s, 20), 0x2010);
    frame(&s, 20, at(&s, 10), 0x2020);
    CHECK_EQ(within(&s, at(&s, 4), out, 8), 3);
    /* A return address outside text: the chain ends before it. */
    chain(&s, 5);
    s.mem[16 + 1] = TEXT_HI;
    CHECK_EQ(within(&s, at(&s, 4), out, 8), 2);
    s.mem[16 + 1] = TEXT_LO - 1;
    CHECK_EQ(within(&s, at(&s, 4), out, 8), 2);
    s.mem[4 + 1] = 0;
    CHECK_EQ(within(&s, at(&s, 4), out, 8), 0);
    fake_close(&s);
}

/* Random stacks, words pointing anywhere in and around them: the walk
 * within one stack answers as the general walk does from a task stack
 * (which never crosses out of one), and never reads outside it (ASan). */
TEST(stacktrace_within_agrees_with_walk_on_random_stacks)
{
    static struct fake_stack s;
    fake_open(&s, STACK_TASK, "task");
    uint64_t x = 0x9e3779b97f4a7c15ull;
    unsigned long deep = 0;
    for (unsigned round = 0; round < 3000; round++) {
        for (unsigned w = 0; w < REGION_WORDS; w++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            unsigned r = (unsigned)(x >> 32);
            if (w & 1)                      /* a return: mostly in text */
                s.mem[w] = r % 8 ? TEXT_LO + r % (TEXT_HI - TEXT_LO) : r;
            else if (r % 8 == 0)            /* a fp anywhere near, any byte */
                s.mem[w] = at(&s, 0) + (uintptr_t)((r >> 3) % (8 * WORDS + 32)) - 16;
            else if (r % 8 == 1)            /* at or below its own record */
                s.mem[w] = at(&s, w) - 8 * ((r >> 3) % 4);
            else                            /* upward, sometimes past the top */
                s.mem[w] = at(&s, w) + 16 * (1 + (r >> 3) % 4);
        }
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uintptr_t fp = at(&s, (unsigned)(x >> 40) % WORDS & ~1u) - (x & 0x100 ? 8 : 0) +
                       (x & 0x600 ? 0 : 3);
        unsigned max = 1 + (unsigned)(x % 8);
        uintptr_t a[8], b[8];
        unsigned na = within(&s, fp, a, max);
        unsigned nb = st_walk(fp, at(&s, 0), b, max);
        CHECK_EQ(na, nb);
        for (unsigned k = 0; k < na && k < nb; k++)
            CHECK_EQ(a[k], b[k]);
        deep += na >= 3;
    }
    CHECK(deep > 100);                      /* the chains were not all short */
    fake_close(&s);
}

/* ---- st_capture_here on the real host stack ---- */

static uintptr_t want[4];
static uintptr_t got[8];
static unsigned got_n;

__attribute__((noinline)) static unsigned cap3(void)
{
    want[0] = (uintptr_t)__builtin_return_address(0);
    got_n = st_capture_here(got, 8);
    return got_n + 1;   /* work after the call: no tail call */
}

__attribute__((noinline)) static unsigned cap2(void)
{
    want[1] = (uintptr_t)__builtin_return_address(0);
    return cap3() + 1;
}

__attribute__((noinline)) static unsigned cap1(void)
{
    want[2] = (uintptr_t)__builtin_return_address(0);
    return cap2() + 1;
}

TEST(stacktrace_capture_here_starts_at_caller)
{
    /* This function's own frame record is the top of the "stack", so
     * the walk never reads above it into the harness. */
    uintptr_t top = (uintptr_t)__builtin_frame_address(0) + 16;
    want[3] = (uintptr_t)__builtin_return_address(0);
    int id = stack_register(top - 65536, top, STACK_TASK, 0, "host", false);
    CHECK(id >= 0);
    symtab_test_text_lo = 1;
    symtab_test_text_hi = UINTPTR_MAX;
    memset(got, 0, sizeof got);
    CHECK_EQ(cap1(), got_n + 3);
    CHECK_EQ(got_n, 4);
    for (unsigned i = 0; i < 4; i++)
        CHECK_EQ(got[i], want[i]);
    stack_unregister(id);
}

/* ---- each CPU's own stacks: no registry scan on the sample path ---- */

/* Registry scans this CPU's lookups fell back to during one walk. */
static uint64_t scans_before;
static void scans_mark(void) { scans_before = stack_cpu_scans(fake_cpu); }
static uint64_t scans_taken(void) { return stack_cpu_scans(fake_cpu) - scans_before; }

TEST(stacktrace_own_task_stack_takes_no_scan)
{
    static struct fake_stack s, other;
    fake_cpu = 2;
    fake_open(&other, STACK_TASK, "other");    /* a slot ahead of ours */
    fake_open(&s, STACK_TASK, "task");
    uintptr_t fp = chain(&s, 8), out[8];
    /* Not yet this CPU's task: the walk is right, but it scans. */
    scans_mark();
    CHECK_EQ(st_walk(fp, at(&s, 2), out, 8), 8);
    CHECK_EQ(scans_taken(), 1);
    stack_cpu_switch(s.id);
    scans_mark();
    CHECK_EQ(st_walk(fp, at(&s, 2), out, 8), 8);
    CHECK_EQ(out[7], 0x2070);
    CHECK_EQ(scans_taken(), 0);
    /* The same rules on the fast path: the record must fit below hi. */
    s.mem[REGION_WORDS - 1] = 0;
    frame(&s, 50, at(&s, REGION_WORDS - 1), 0x2000);
    CHECK_EQ(st_walk(at(&s, 50), at(&s, 2), out, 8), 1);
    /* Another task's stack (bt of it): found in the registry. */
    frame(&other, 4, 0, 0x2500);
    scans_mark();
    CHECK_EQ(st_walk(at(&other, 4), at(&other, 2), out, 8), 1);
    CHECK_EQ(scans_taken(), 1);
    /* Another CPU knows nothing of this task stack. */
    fake_cpu = 3;
    scans_mark();
    CHECK_EQ(st_walk(fp, at(&s, 2), out, 8), 8);
    CHECK_EQ(scans_taken(), 1);
    fake_cpu = 2;
    stack_cpu_switch(-1);                       /* no task: matches nothing */
    scans_mark();
    CHECK_EQ(st_walk(fp, at(&s, 2), out, 8), 8);
    CHECK_EQ(scans_taken(), 1);
    fake_close(&s);
    fake_close(&other);
    fake_cpu = 0;
}

/* A stack registered for a CPU with a owner index, like cpu.c's. */
static void fake_open_cpu(struct fake_stack *s, enum stack_kind kind, int cpu)
{
    fake_open(s, kind, "cpu");
    stack_unregister(s->id);
    s->id = stack_register(at(s, 0), at(s, REGION_WORDS), kind, cpu, "cpu", false);
    CHECK(s->id >= 0);
}

TEST(stacktrace_irq_crossing_takes_no_scan)
{
    static struct fake_stack ist, irq, task;
    fake_cpu = 4;
    fake_open_cpu(&ist, STACK_IST, 4);
    fake_open_cpu(&irq, STACK_IRQ, 4);
    fake_open(&task, STACK_TASK, "task");
    stack_cpu_switch(task.id);
    uintptr_t out[8];
    frame(&ist, 8, at(&irq, 30), 0x4000);
    frame(&irq, 30, at(&task, 2), 0x4010);
    frame(&task, 2, 0, 0x4020);
    scans_mark();
    CHECK_EQ(st_walk(at(&ist, 8), at(&ist, 0), out, 8), 3);
    CHECK_EQ(out[2], 0x4020);
    CHECK_EQ(scans_taken(), 0);
    /* A chain ending in a null fp on the IRQ stack: no lookup for it. */
    frame(&irq, 30, 0, 0x4010);
    scans_mark();
    CHECK_EQ(st_walk(at(&ist, 8), at(&ist, 0), out, 8), 2);
    CHECK_EQ(scans_taken(), 0);
    frame(&irq, 30, at(&task, 2), 0x4010);
    /* Gone from the registry, gone from the CPU's own set. */
    stack_unregister(irq.id);
    CHECK(!stack_lookup(at(&irq, 30), 0));
    CHECK_EQ(st_walk(at(&ist, 8), at(&ist, 0), out, 8), 1);
    /* Its slot in the CPU's set is free for the next one. */
    fake_open_cpu(&irq, STACK_IRQ, 4);
    frame(&irq, 30, at(&task, 2), 0x4010);
    scans_mark();
    CHECK_EQ(st_walk(at(&ist, 8), at(&ist, 0), out, 8), 3);
    CHECK_EQ(scans_taken(), 0);
    /* A task stack never joins a CPU's fixed set, whatever its owner. */
    struct stack_region r;
    CHECK(stack_lookup(at(&task, 2), &r));
    CHECK_EQ(r.kind, STACK_TASK);
    fake_close(&ist);
    fake_close(&irq);
    fake_close(&task);
    stack_cpu_switch(-1);
    fake_cpu = 0;
}

/* The sample path reads its own CPU's task slot without the seqlock
 * (stack_task_bounds): stack_cpu_switch writes hi = 0, then lo, then hi,
 * and each state an NMI could see between those stores must read as the
 * old bounds, nothing, or the new bounds. And the slot never takes an
 * IRQ or IST stack, since a walk that starts in it never crosses out. */
TEST(stacktrace_task_slot_reads_between_writes)
{
    static struct fake_stack a, b, irq;
    fake_cpu = 5;
    fake_open(&a, STACK_TASK, "a");
    fake_open(&b, STACK_TASK, "b");
    fake_open_cpu(&irq, STACK_IRQ, 5);
    struct stack_task_slot *ts = &stack_task_slots[5];
    uintptr_t lo, hi;
    stack_cpu_switch(a.id);
    CHECK(stack_task_bounds(ts, at(&a, 3), &lo, &hi));
    CHECK_EQ(lo, at(&a, 0));
    CHECK_EQ(hi, at(&a, REGION_WORDS));
    CHECK(!stack_task_bounds(ts, at(&b, 3), &lo, &hi));
    /* The writer's steps from a to b, one at a time. */
    ts->ts_hi = 0;
    CHECK(!stack_task_bounds(ts, at(&a, 3), &lo, &hi));
    CHECK(!stack_task_bounds(ts, at(&b, 3), &lo, &hi));
    ts->ts_lo = at(&b, 0);
    CHECK(!stack_task_bounds(ts, at(&a, 3), &lo, &hi));
    CHECK(!stack_task_bounds(ts, at(&b, 3), &lo, &hi));
    ts->ts_hi = at(&b, REGION_WORDS);
    CHECK(stack_task_bounds(ts, at(&b, 3), &lo, &hi));
    CHECK_EQ(lo, at(&b, 0));
    /* An IRQ stack's id leaves the slot empty: lookups use the rest. */
    stack_cpu_switch(irq.id);
    CHECK(!stack_task_bounds(ts, at(&irq, 3), &lo, &hi));
    CHECK(!stack_task_bounds(ts, at(&b, 3), &lo, &hi));
    struct stack_region r;
    CHECK(stack_lookup(at(&irq, 3), &r));
    CHECK_EQ(r.kind, STACK_IRQ);
    stack_cpu_switch(-1);
    fake_close(&a);
    fake_close(&b);
    fake_close(&irq);
    fake_cpu = 0;
}
