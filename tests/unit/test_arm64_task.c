// LINK: arch/arm64/task.c kernel/stacks.c kernel/stacktrace.c kernel/symtab.c lib/printf.c lib/parse.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c
/* tests/unit/test_arm64_task.c: the arm64 stack shapes (arch/arm64/task.c,
 * the layout vectors.S's arch_switch and trap entry leave) walked by the
 * shared frame-pointer walk (kernel/stacktrace.c), on synthetic stacks in
 * host arrays. An AArch64 frame record is {saved x29, saved x30} at x29:
 * the same 16-byte shape the walk reads on x86. */
#include "test.h"
#include "fake_hal.h"
#include "hal/task.h"
#include "kernel/stacks.h"
#include "kernel/stacktrace.h"
#include "kernel/symtab.h"

extern uintptr_t symtab_test_text_lo, symtab_test_text_hi;

#define TEXT_LO 0x1000
#define TEXT_HI 0x9000
#define WORDS 128

/* vectors.S's symbol, here just an address task.c stores. */
void arch_task_first(void) {}
static void entry(void) {}

static _Alignas(16) uint64_t stack[WORDS];

static uintptr_t at(unsigned w) { return (uintptr_t)&stack[w]; }

TEST(a64_fresh_stack_layout)
{
    memset(stack, 0xee, sizeof stack);
    uintptr_t top = at(WORDS);
    uint64_t sp = arch_stack_init(top + 8, entry);   /* a misaligned top is rounded down */
    CHECK_EQ(sp & 15, 0);
    CHECK_EQ(top - sp, 12 * 8);                       /* x19-x28, x29, x30 */
    const uint64_t *w = (const uint64_t *)(uintptr_t)sp;
    CHECK_EQ(w[0], (uintptr_t)entry);                 /* x19: arch_task_first branches to it */
    for (int i = 1; i < 10; i++)
        CHECK_EQ(w[i], 0);
    CHECK_EQ(w[10], 0);                               /* x29: the chain ends */
    CHECK_EQ(w[11], (uintptr_t)arch_task_first);      /* x30: where arch_switch returns */
    uintptr_t fp, wsp;
    arch_saved_frame(sp, &fp, &wsp);
    CHECK_EQ(wsp, sp);
    CHECK_EQ(fp, sp + 80);                            /* the {x29, x30} record */
}

/* A task switched out inside schedule: arch_switch's record sits above
 * its ten callee-saved registers; the walk must start at the record and
 * never take a saved register for a frame, even one that looks like a
 * return address into text. */
TEST(a64_switched_out_walk)
{
    memset(stack, 0, sizeof stack);
    int id = stack_register(at(0), at(WORDS), STACK_TASK, 5, "t", false);
    CHECK(id >= 0);
    symtab_test_text_lo = TEXT_LO;
    symtab_test_text_hi = TEXT_HI;

    unsigned saved = 40;                              /* saved_sp = &stack[40] */
    for (unsigned i = 0; i < 10; i++)
        stack[saved + i] = 0x2f00 + 8 * i;            /* bait: text-like x19-x28 */
    stack[saved + 10] = at(60);                       /* x29: schedule's frame */
    stack[saved + 11] = 0x2000;                       /* x30: into schedule */
    stack[60] = at(70); stack[61] = 0x2010;           /* schedule <- yield */
    stack[70] = at(90); stack[71] = 0x2020;           /* yield <- the task's fn */
    stack[90] = 0;      stack[91] = 0;                /* task_start: chain ends */

    uintptr_t fp, sp, out[8];
    arch_saved_frame(at(saved), &fp, &sp);
    unsigned n = st_walk(fp, sp, out, 8);
    CHECK_EQ(n, 3);
    CHECK_EQ(out[0], 0x2000);
    CHECK_EQ(out[1], 0x2010);
    CHECK_EQ(out[2], 0x2020);
    for (unsigned i = 0; i < n; i++)
        CHECK(out[i] < 0x2f00);
    stack_unregister(id);
}

/* An interrupt taken on the task's own stack: the handler's frames, then
 * the entry's record {interrupted x29, interrupted pc} below the trap
 * frame, then the interrupted code's chain. The walk from the handler
 * reaches the interrupted pc and its callers, all in one stack, upward. */
TEST(a64_trap_record_chain)
{
    memset(stack, 0, sizeof stack);
    int id = stack_register(at(0), at(WORDS), STACK_TASK, 6, "t", false);
    CHECK(id >= 0);
    symtab_test_text_lo = TEXT_LO;
    symtab_test_text_hi = TEXT_HI;

    stack[10] = at(14); stack[11] = 0x3000;           /* handler <- trap_dispatch */
    stack[14] = at(18); stack[15] = 0x3100;           /* trap_dispatch <- trap_common */
    stack[18] = at(60); stack[19] = 0x4004;           /* the record: interrupted fp, pc */
    /* stack[20..57]: the trap frame itself (junk for the walk) */
    for (unsigned i = 20; i < 58; i++)
        stack[i] = 0x4444;
    stack[60] = at(64); stack[61] = 0x5000;           /* interrupted leaf's record */
    stack[64] = 0;      stack[65] = 0x5100;
    uintptr_t out[8];
    unsigned n = st_walk(at(10), at(8), out, 8);
    CHECK_EQ(n, 5);
    const uintptr_t want[5] = { 0x3000, 0x3100, 0x4004, 0x5000, 0x5100 };
    for (unsigned i = 0; i < 5 && i < n; i++)
        CHECK_EQ(out[i], want[i]);
    /* A record pointing down (garbage x29 in the interrupted code) ends it. */
    stack[60] = at(30);
    n = st_walk(at(10), at(8), out, 8);
    CHECK_EQ(n, 4);
    stack_unregister(id);
}
