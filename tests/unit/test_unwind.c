// LINK: kernel/stacks.c kernel/stacktrace.c kernel/symtab.c lib/printf.c lib/parse.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c
/* tests/unit/test_unwind.c: complete chains at every instruction. The two
 * architectures' real leaf decoders (arch/x86_64/unwind.c,
 * arch/arm64/unwind.c) on their own, then the portable capture
 * (kernel/stacktrace.c) over a fake text holding both architectures'
 * prologues and epilogues, and a synthetic stack. No symbol table is
 * installed: the sample path must not need one.
 *
 * Every scene samples a leaf L called from B, called from C, called from
 * D; the whole chain is pc, RB, RC, RD whatever instruction of L pc is. */
#include "test.h"
#include "fake_hal.h"
#include "fake_unwind.h"
#include "arch/arm64/unwind.h"
#include "arch/x86_64/unwind.h"
#include "kernel/stacks.h"
#include "kernel/stacktrace.h"
#include "kernel/symtab.h"

extern uintptr_t symtab_test_text_lo, symtab_test_text_hi;

/* ---- the decoders on their own ---- */

static struct leaf_state x86(const uint8_t *c, size_t after)
{
    return x86_leaf_state(c, 0, after);
}

/* Decode code[at] with the bytes before it in the window. */
static struct leaf_state x86_at(const uint8_t *c, size_t at, size_t n)
{
    return x86_leaf_state(c + at, at, n - at);
}

TEST(leaf_x86_patterns)
{
    static const uint8_t prologue[] = { 0x55, 0x48, 0x89, 0xe5, 0x90 },
        prologue8b[] = { 0x55, 0x48, 0x8b, 0xec },
        stub[] = { 0x55, 0x41, 0x50 },                /* push %rbp; push %r8 */
        nopmov[] = { 0x90, 0x48, 0x89, 0xe5 },
        ret[] = { 0xc3 }, repret[] = { 0xf3, 0xc3 }, pop[] = { 0x5d },
        movsi[] = { 0x55, 0x48, 0x89, 0xe6 };         /* mov %rsp,%rsi */
    struct leaf_state s = x86_at(prologue, 0, 5);
    CHECK(s.pos == LEAF_ENTRY && s.ret_slot == 0);
    s = x86_at(prologue, 1, 5);
    CHECK(s.pos == LEAF_PUSHED && s.ret_slot == 1);
    CHECK(x86_at(prologue8b, 0, 4).pos == LEAF_ENTRY);
    CHECK(x86_at(prologue8b, 1, 4).pos == LEAF_PUSHED);
    CHECK(x86_at(prologue, 0, 3).pos == LEAF_FRAMED);     /* never past after */
    CHECK(x86_at(prologue, 4, 5).pos == LEAF_FRAMED);     /* the body */
    CHECK(x86_leaf_state(prologue + 1, 0, 4).pos == LEAF_FRAMED);  /* nor before */
    CHECK(x86_at(stub, 0, 3).pos == LEAF_FRAMED);         /* a lone push */
    CHECK(x86_at(nopmov, 1, 4).pos == LEAF_FRAMED);       /* no push before */
    CHECK(x86_at(movsi, 0, 4).pos == LEAF_FRAMED);
    CHECK(x86_at(movsi, 1, 4).pos == LEAF_FRAMED);
    s = x86_at(ret, 0, 1);
    CHECK(s.pos == LEAF_RETURN && s.ret_slot == 0);
    CHECK(x86_at(repret, 0, 2).pos == LEAF_RETURN);
    CHECK(x86_at(repret, 0, 1).pos == LEAF_FRAMED);
    CHECK(x86_at(pop, 0, 1).pos == LEAF_FRAMED);          /* the frame is still there */
    CHECK(x86_leaf_state(ret, 0, 0).pos == LEAF_FRAMED);
}

#define A64_STP    0xa9be7bfdu      /* stp x29, x30, [sp, #-32]! */
#define A64_STP16  0xa9bf7bfdu      /* stp x29, x30, [sp, #-16]! */
#define A64_MOVFP  0x910003fdu      /* mov x29, sp */
#define A64_ADDFP  0x910043fdu      /* add x29, sp, #16 */
#define A64_MOVW0  0x52800020u      /* mov w0, #1 */
#define A64_NOP    0xd503201fu
#define A64_LDP    0xa8c27bfdu      /* ldp x29, x30, [sp], #32 */
#define A64_LDPOFF 0xa9417bfdu      /* ldp x29, x30, [sp, #16] */
#define A64_ADDSP  0x910083ffu      /* add sp, sp, #32 */
#define A64_RET    0xd65f03c0u
#define A64_RETX1  0xd65f0020u      /* ret x1: not the link register */
#define A64_B      0x14000002u      /* b .+8 */
#define A64_CBZ    0xb4000040u      /* cbz x0, .+8 */
#define A64_BCOND  0x54000040u      /* b.eq .+8 */
#define A64_STPOFF 0xa9017bfdu      /* stp x29, x30, [sp, #16] */
#define A64_STPX19 0xa9be53f3u      /* stp x19, x20, [sp, #-32]! */
#define A64_SUBSP  0xd10143ffu      /* sub sp, sp, #0x50 */
#define A64_STPX0  0xa90107e0u      /* stp x0, x1, [sp, #16]: the trap vectors' */

/* n words as little-endian bytes. */
static const uint8_t *a64_bytes(const uint32_t *w, size_t n)
{
    static uint8_t buf[32];
    for (size_t i = 0; i < n; i++)
        for (int b = 0; b < 4; b++)
            buf[4 * i + b] = (uint8_t)(w[i] >> (8 * b));
    return buf;
}

/* Decode the last of n words as pc, the others before it in the window. */
static struct leaf_state a64(const uint32_t *w, size_t n)
{
    return a64_leaf_state(a64_bytes(w, n) + 4 * (n - 1), 4 * (n - 1), 4);
}

/* Decode the first of n words as pc, the others after it, in a window of
 * at most UNWIND_AFTER bytes as the walk gives it. */
static struct leaf_state a64_ahead(const uint32_t *w, size_t n)
{
    size_t after = 4 * n < UNWIND_AFTER ? 4 * n : UNWIND_AFTER;
    return a64_leaf_state(a64_bytes(w, n), 0, after);
}

TEST(leaf_a64_patterns)
{
    struct leaf_state s = a64((uint32_t[]){ A64_STP }, 1);
    CHECK(s.pos == LEAF_ENTRY && s.ret_slot == -1);
    CHECK(a64((uint32_t[]){ A64_STP16 }, 1).pos == LEAF_ENTRY);
    /* A large frame's prologue: sub sp; stp x29, x30, [sp, #16]; add x29. */
    s = a64((uint32_t[]){ A64_STPOFF }, 1);
    CHECK(s.pos == LEAF_ENTRY && s.ret_slot == -1);
    CHECK(a64_ahead((uint32_t[]){ A64_SUBSP, A64_STPOFF, A64_ADDFP }, 3).pos == LEAF_ENTRY);
    s = a64((uint32_t[]){ A64_SUBSP, A64_STPOFF, A64_ADDFP }, 3);
    CHECK(s.pos == LEAF_PUSHED && s.ret_slot == -1);
    CHECK(a64((uint32_t[]){ A64_SUBSP, A64_STPOFF, A64_ADDFP, A64_NOP }, 4).pos == LEAF_FRAMED);
    CHECK(a64_ahead((uint32_t[]){ A64_SUBSP, A64_STPX0, A64_NOP }, 3).pos == LEAF_FRAMED);
    CHECK(a64((uint32_t[]){ A64_STPX0, A64_NOP }, 2).pos == LEAF_FRAMED);
    CHECK(a64((uint32_t[]){ A64_STPX19 }, 1).pos == LEAF_FRAMED);
    s = a64((uint32_t[]){ A64_STP, A64_MOVFP }, 2);
    CHECK(s.pos == LEAF_PUSHED && s.ret_slot == -1);
    CHECK(a64((uint32_t[]){ A64_STP, A64_MOVW0, A64_NOP, A64_MOVFP }, 4).pos == LEAF_PUSHED);
    CHECK(a64((uint32_t[]){ A64_STP, A64_MOVFP, A64_NOP }, 3).pos == LEAF_FRAMED);
    CHECK(a64((uint32_t[]){ A64_STP, A64_ADDFP, A64_NOP }, 3).pos == LEAF_FRAMED);
    CHECK(a64((uint32_t[]){ A64_STP, A64_B, A64_NOP }, 3).pos == LEAF_FRAMED);
    CHECK(a64((uint32_t[]){ A64_STP, A64_CBZ, A64_NOP }, 3).pos == LEAF_FRAMED);
    CHECK(a64((uint32_t[]){ A64_STP, A64_BCOND, A64_NOP }, 3).pos == LEAF_FRAMED);
    CHECK(a64((uint32_t[]){ A64_LDP, A64_RET, A64_NOP }, 3).pos == LEAF_FRAMED);
    s = a64((uint32_t[]){ A64_LDP, A64_RET }, 2);
    CHECK(s.pos == LEAF_RETURN && s.ret_slot == -1);
    CHECK(a64((uint32_t[]){ A64_RET }, 1).pos == LEAF_RETURN);
    CHECK(a64((uint32_t[]){ A64_LDP, A64_NOP }, 2).pos == LEAF_RETURN);
    CHECK(a64((uint32_t[]){ A64_LDPOFF, A64_ADDSP, A64_RET }, 3).pos == LEAF_RETURN);
    CHECK(a64((uint32_t[]){ A64_LDPOFF, A64_ADDSP }, 2).pos == LEAF_RETURN);
    CHECK(a64((uint32_t[]){ A64_RETX1 }, 1).pos == LEAF_FRAMED);
    /* The decoder looks back as far as its window, and no further. */
    const uint32_t far[] = { A64_STP, A64_NOP, A64_NOP, A64_NOP, A64_NOP, A64_NOP };
    CHECK(a64(far, 6).pos == LEAF_PUSHED);
    CHECK(a64(far + 1, 5).pos == LEAF_FRAMED);
    uint8_t stp[4] = { 0xfd, 0x7b, 0xbe, 0xa9 };
    /* Instructions GCC scheduled ahead of the prologue's stp. */
    CHECK(a64_ahead((uint32_t[]){ A64_MOVW0, A64_STP16 }, 2).pos == LEAF_ENTRY);
    CHECK(a64_ahead((uint32_t[]){ A64_MOVW0, A64_NOP, A64_NOP, A64_STP16 }, 4).pos
          == LEAF_ENTRY);
    CHECK(a64_ahead((uint32_t[]){ A64_MOVW0, A64_NOP, A64_NOP, A64_NOP, A64_STP16 }, 5).pos
          == LEAF_FRAMED);                           /* past the window */
    CHECK(a64_ahead((uint32_t[]){ A64_MOVW0, A64_CBZ, A64_STP16 }, 3).pos == LEAF_FRAMED);
    CHECK(a64_ahead((uint32_t[]){ A64_CBZ, A64_STP16 }, 2).pos == LEAF_FRAMED);
    CHECK(a64_ahead((uint32_t[]){ A64_MOVW0, A64_MOVFP, A64_STP16 }, 3).pos == LEAF_FRAMED);
    CHECK(a64_ahead((uint32_t[]){ A64_MOVW0, A64_LDP, A64_STP16 }, 3).pos == LEAF_FRAMED);
    /* Ahead counts only after a branch or nothing behind, never once
     * the function's own frame is set. */
    const uint32_t after_ret[] = { A64_RET, A64_MOVW0, A64_STP16 };
    CHECK(a64_leaf_state(a64_bytes(after_ret, 3) + 4, 4, 8).pos == LEAF_ENTRY);
    const uint32_t after_set[] = { A64_MOVFP, A64_MOVW0, A64_STP16 };
    CHECK(a64_leaf_state(a64_bytes(after_set, 3) + 4, 4, 8).pos == LEAF_FRAMED);
    CHECK(a64_leaf_state(stp, 0, 3).pos == LEAF_FRAMED);  /* a partial word */
}

/* ---- the capture over fake text, symbols and stack ---- */

/* The fake kernel text; ASan's redzones around it catch any read of a
 * byte outside it. */
static _Alignas(16) uint8_t text[0x200];

enum {
    A64_EDGE = 0x00,            /* an arm64 function at the very start of text */
    X86_LEAF = 0x40,            /* push; mov; nop5; nop; pop; ret; ...; pop; rep ret */
    X86_STUB = 0x80,            /* push %rax; push %rbp; push %r8: trap entry */
    A64_LEAF = 0x100,           /* stp; mov w0; mov x29, sp; nop; ldp; ret */
    A64_ODD = 0x140,            /* mov x1, x0; stp; mov x29, sp; ret: scheduled ahead */
    FN_B = 0x180, FN_C = 0x1a0, FN_D = 0x1c0,
};

static uintptr_t T(unsigned off) { return (uintptr_t)&text[off]; }
#define RB T(FN_B + 8)
#define RC T(FN_C + 8)
#define RD T(FN_D + 8)

static void put32(unsigned off, uint32_t w)
{
    for (int b = 0; b < 4; b++)
        text[off + b] = (uint8_t)(w >> (8 * b));
}

static void text_open(void)
{
    memset(text, 0x90, sizeof text);            /* x86 nop, nothing on arm64 */
    static const uint8_t x86_leaf[] = { 0x55, 0x48, 0x89, 0xe5, 0x0f, 0x1f, 0x44, 0x00,
                                        0x00, 0x90, 0x5d, 0xc3 };
    memcpy(&text[X86_LEAF], x86_leaf, sizeof x86_leaf);
    text[X86_LEAF + 0x10] = 0x5d;
    text[X86_LEAF + 0x11] = 0xf3;
    text[X86_LEAF + 0x12] = 0xc3;
    static const uint8_t x86_stub[] = { 0x50, 0x55, 0x41, 0x50 };
    memcpy(&text[X86_STUB], x86_stub, sizeof x86_stub);
    const uint32_t a64_leaf[] = { A64_STP, A64_MOVW0, A64_MOVFP, A64_NOP, A64_LDP, A64_RET };
    for (unsigned i = 0; i < 6; i++)
        put32(A64_LEAF + 4 * i, a64_leaf[i]);
    const uint32_t a64_odd[] = { 0xaa0003e1u, A64_STP16, A64_MOVFP, A64_RET };
    for (unsigned i = 0; i < 4; i++)
        put32(A64_ODD + 4 * i, a64_odd[i]);
    put32(A64_EDGE, A64_STP16);
    put32(A64_EDGE + 4, A64_MOVFP);
    symtab_active = 0;
    symtab_test_text_lo = T(0);
    symtab_test_text_hi = T(sizeof text);
}

/* The stack: words [0, 62) registered; the two above hold bait, a
 * return address only a read past the region would take. B's frame at
 * word 20, C's at word 30. */
#define WORDS 64
static struct { int id; uint64_t mem[WORDS]; } stk;
static uintptr_t W(unsigned w) { return (uintptr_t)&stk.mem[w]; }

static void stack_open(void)
{
    memset(stk.mem, 0, sizeof stk.mem);
    stk.mem[WORDS - 2] = RB;
    stk.mem[WORDS - 1] = RB;
    stk.mem[20] = W(30); stk.mem[21] = RC;
    stk.mem[30] = 0;     stk.mem[31] = RD;
    stk.id = stack_register(W(0), W(WORDS - 2), STACK_TASK, 1, "t", false);
    CHECK(stk.id >= 0);
    stack_cpu_switch(stk.id);
}

static void scene_close(void)
{
    stack_cpu_switch(-1);
    stack_unregister(stk.id);
    fake_unwind_arch = FAKE_X86;
    fake_link = 0;
    fake_trap_link = 0;
}

static uintptr_t got[8];
static unsigned got_n;

static void sample(uintptr_t pc, uintptr_t sp, uintptr_t fp)
{
    struct trap_frame tf = { pc, sp, fp };
    fake_trap_link = fake_link;
    memset(got, 0, sizeof got);
    unsigned long f = irq_save();           /* as every caller: a sample, bt, panic */
    got_n = st_capture_trap(&tf, got, 8);
    irq_restore(f);
}

/* The whole chain, or with whole false the chain a bare fp walk gives
 * (the caller B missing). */
static bool chain_is(uintptr_t pc, bool whole)
{
    const uintptr_t want[4] = { pc, RB, RC, RD };
    unsigned k = 0, n = whole ? 4 : 3;
    if (got_n != n)
        return false;
    for (unsigned i = 0; i < 4; i++) {
        if (!whole && i == 1)
            continue;
        if (got[k++] != want[i])
            return false;
    }
    return true;
}

TEST(leaf_x86_every_position)
{
    text_open();
    stack_open();
    uint64_t scans = stack_cpu_scans(fake_cpu);
    /* First instruction: the return address is at (%rsp). */
    stk.mem[10] = RB;
    sample(T(X86_LEAF), W(10), W(20));
    CHECK(chain_is(T(X86_LEAF), true));
    /* After push %rbp: the caller's rbp at (%rsp), the return above. */
    stk.mem[9] = W(20);
    sample(T(X86_LEAF + 1), W(9), W(20));
    CHECK(chain_is(T(X86_LEAF + 1), true));
    /* The body: rbp is L's own frame. */
    sample(T(X86_LEAF + 4), W(7), W(9));
    CHECK(chain_is(T(X86_LEAF + 4), true));
    /* At pop %rbp the frame is still there. */
    sample(T(X86_LEAF + 0xa), W(9), W(9));
    CHECK(chain_is(T(X86_LEAF + 0xa), true));
    /* At ret, and at rep ret: popped, the return address at (%rsp). */
    sample(T(X86_LEAF + 0xb), W(10), W(20));
    CHECK(chain_is(T(X86_LEAF + 0xb), true));
    sample(T(X86_LEAF + 0x11), W(10), W(20));
    CHECK(chain_is(T(X86_LEAF + 0x11), true));
    CHECK_EQ(stack_cpu_scans(fake_cpu), scans);  /* all on the fast path */
    scene_close();
}

TEST(leaf_x86_refuses_what_it_cannot_prove)
{
    text_open();
    stack_open();
    stk.mem[10] = RB;
    stk.mem[9] = W(20);
    /* A lone push %rbp (the trap entry saving registers). */
    sample(T(X86_STUB + 1), W(10), W(20));
    CHECK(chain_is(T(X86_STUB + 1), false));
    /* mov %rsp,%rbp with no push %rbp right before it. */
    text[X86_LEAF + 0x14] = 0x48; text[X86_LEAF + 0x15] = 0x89; text[X86_LEAF + 0x16] = 0xe5;
    sample(T(X86_LEAF + 0x14), W(9), W(20));
    CHECK(chain_is(T(X86_LEAF + 0x14), false));
    /* A pc outside text: its bytes are never read (0x10 is unmapped). */
    sample(0x10, W(10), W(20));
    CHECK_EQ(got_n, 3);
    CHECK_EQ(got[1], RC);
    /* sp in no known stack: nothing but pc. */
    static uint64_t elsewhere[4] = { 0 };
    elsewhere[0] = RB;
    sample(T(X86_LEAF), (uintptr_t)elsewhere, W(20));
    CHECK_EQ(got_n, 1);
    /* The slot must be inside the stack: after push with sp at the
     * region's last word, the return would be the bait above hi. */
    sample(T(X86_LEAF + 1), W(WORDS - 3), W(20));
    CHECK_EQ(got_n, 1);
    /* Misaligned sp. */
    sample(T(X86_LEAF), W(10) + 4, W(20));
    CHECK(chain_is(T(X86_LEAF), false));
    /* What sits at (%rsp) is no return address into text. */
    stk.mem[10] = 0x1234;
    sample(T(X86_LEAF), W(10), W(20));
    CHECK(chain_is(T(X86_LEAF), false));
    /* A return at the last byte of text: the window shrinks to it. */
    text[sizeof text - 1] = 0xc3;
    stk.mem[10] = RB;
    sample(T(sizeof text - 1), W(10), W(20));
    CHECK(chain_is(T(sizeof text - 1), true));
    text[sizeof text - 1] = 0xf3;                 /* rep, its ret past the end */
    sample(T(sizeof text - 1), W(10), W(20));
    CHECK(chain_is(T(sizeof text - 1), false));
    /* Room for the pc only, or for the pc and the caller. */
    struct trap_frame tf = { T(X86_LEAF), W(10), W(20) };
    unsigned long f = irq_save();
    CHECK_EQ(st_capture_trap(&tf, got, 1), 1);
    CHECK_EQ(st_capture_trap(&tf, got, 2), 2);
    irq_restore(f);
    CHECK_EQ(got[1], RB);
    scene_close();
}

TEST(leaf_a64_every_position)
{
    text_open();
    stack_open();
    fake_unwind_arch = FAKE_A64;
    uint64_t scans = stack_cpu_scans(fake_cpu);
    /* L's record after its stp: {B's x29, x30} at sp = word 8. */
    stk.mem[8] = W(20);
    stk.mem[9] = RB;
    fake_link = RB;
    sample(T(A64_LEAF), W(12), W(20));              /* stp: nothing saved */
    CHECK(chain_is(T(A64_LEAF), true));
    sample(T(A64_LEAF + 4), W(8), W(20));           /* scheduled into the gap */
    CHECK(chain_is(T(A64_LEAF + 4), true));
    sample(T(A64_LEAF + 8), W(8), W(20));           /* at mov x29, sp */
    CHECK(chain_is(T(A64_LEAF + 8), true));
    sample(T(A64_LEAF + 0x14), W(12), W(20));       /* ret after the ldp */
    CHECK(chain_is(T(A64_LEAF + 0x14), true));
    /* Body and at the ldp: x29 is L's own; x30 may hold anything. */
    fake_link = RC;
    sample(T(A64_LEAF + 0xc), W(8), W(8));
    CHECK(chain_is(T(A64_LEAF + 0xc), true));
    sample(T(A64_LEAF + 0x10), W(8), W(8));
    CHECK(chain_is(T(A64_LEAF + 0x10), true));
    /* An instruction GCC scheduled ahead of the stp: nothing saved yet. */
    fake_link = RB;
    stk.mem[10] = W(20);
    stk.mem[11] = RB;
    sample(T(A64_ODD), W(12), W(20));
    CHECK(chain_is(T(A64_ODD), true));
    sample(T(A64_ODD + 4), W(12), W(20));
    CHECK(chain_is(T(A64_ODD + 4), true));
    sample(T(A64_ODD + 8), W(10), W(20));
    CHECK(chain_is(T(A64_ODD + 8), true));
    CHECK_EQ(stack_cpu_scans(fake_cpu), scans);
    scene_close();
}

/* The link register saved at x29: the decoder is not asked (stacktrace.c,
 * leaf_is_moot). A leaf's body gives the whole chain as before; at an
 * entry whose caller's record holds the same return (direct recursion
 * from one call site) the one repeat of that address is all that is lost.
 * A record outside the stack, below sp or misaligned is never read for
 * it. */
TEST(leaf_a64_link_saved_skips_the_decoder)
{
    text_open();
    stack_open();
    fake_unwind_arch = FAKE_A64;
    stk.mem[8] = W(20);
    stk.mem[9] = RB;
    fake_link = RB;
    sample(T(A64_LEAF + 0xc), W(8), W(8));          /* body: record {B's x29, RB} */
    CHECK(chain_is(T(A64_LEAF + 0xc), true));
    /* At L's stp with B's record holding RB too: pc, RB, RD, not pc, RB,
     * RB, RD. */
    stk.mem[21] = RB;
    sample(T(A64_LEAF), W(12), W(20));
    CHECK_EQ(got_n, 3);
    CHECK_EQ(got[1], RB);
    CHECK_EQ(got[2], RD);
    /* The same with B's record below sp: not trusted, the decoder adds
     * the caller and the walk, starting at sp, stops at once. */
    sample(T(A64_LEAF), W(22), W(20));
    CHECK_EQ(got_n, 2);
    CHECK_EQ(got[1], RB);
    /* Misaligned x29: the decoder runs, the walk refuses the record. */
    sample(T(A64_LEAF), W(12), W(20) + 4);
    CHECK_EQ(got_n, 2);
    CHECK_EQ(got[1], RB);
    scene_close();
}

/* No link register (x86-64): fp equal to sp is the function's own record
 * and the decoder is not asked, whatever the bytes at pc; any other fp
 * and it is. */
TEST(leaf_x86_fp_at_sp_skips_the_decoder)
{
    text_open();
    stack_open();
    stk.mem[9] = W(20);
    stk.mem[10] = RB;
    /* A body: L's record {B's rbp, RB} at sp = fp = word 9. */
    sample(T(X86_LEAF + 4), W(9), W(9));
    CHECK(chain_is(T(X86_LEAF + 4), true));
    /* pc on a push %rbp (ENTRY to the decoder) with fp = sp: taken as
     * framed, so [sp] is read as a record and not as a return address. */
    sample(T(X86_LEAF), W(9), W(9));
    CHECK(chain_is(T(X86_LEAF), true));
    /* fp above sp: the decoder runs and finds the return at (%rsp). */
    sample(T(X86_LEAF), W(10), W(20));
    CHECK(chain_is(T(X86_LEAF), true));
    scene_close();
}

TEST(leaf_a64_refuses_what_it_cannot_prove)
{
    text_open();
    stack_open();
    fake_unwind_arch = FAKE_A64;
    fake_link = RB;
    /* The link register outside text. */
    fake_link = 0x1234;
    sample(T(A64_LEAF), W(12), W(20));
    CHECK(chain_is(T(A64_LEAF), false));
    /* Garbage pc, and sp in no known stack. */
    fake_link = RB;
    sample(0x10, W(12), W(20));
    CHECK_EQ(got_n, 3);
    static uint64_t elsewhere[4];
    sample(T(A64_LEAF), (uintptr_t)elsewhere, W(20));
    CHECK_EQ(got_n, 1);
    /* At the start of text the window holds only what is there: the
     * stp at text's first byte is seen, nothing before it is read. */
    sample(T(A64_EDGE + 4), W(10), W(20));
    CHECK(chain_is(T(A64_EDGE + 4), true));
    sample(T(A64_EDGE), W(12), W(20));
    CHECK(chain_is(T(A64_EDGE), true));
    scene_close();
}
