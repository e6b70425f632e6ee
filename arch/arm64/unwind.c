/* arch/arm64/unwind.c: where a sampled AArch64 instruction stands in its
 * function's frame set-up (hal/unwind.h).
 *
 * GCC (-fno-omit-frame-pointer -mno-omit-leaf-frame-pointer) opens every
 * function with
 *
 *   (up to a few unrelated instructions, scheduled ahead of it)
 *   stp x29, x30, [sp, #-N]!      <- LEAF_ENTRY from the function's start
 *   (up to a few unrelated instructions, scheduled into the gap)
 *   mov x29, sp                   <- LEAF_PUSHED until this has run
 *
 * and closes it with ldp x29, x30, [sp], #N (perhaps more) then ret, so
 * from the ldp to the ret the frame is gone (LEAF_RETURN). A function
 * with a large frame opens instead with
 *
 *   sub sp, sp, #N
 *   stp x29, x30, [sp, #M]        <- the same stp, at an offset
 *   add x29, sp, #M
 *
 * and closes with ldp x29, x30, [sp, #M] ... add sp, sp, #N; ret: the
 * same three states, recognised the same way (the sub is one of the
 * instructions scheduled ahead of the stp). In all three
 * states x30 still holds, or again holds, the return into the caller: the
 * return address comes from the link register, never from the stack.
 * stp x29, x30 (either form) is only ever a prologue, and a shrink-wrapped
 * one (after an early-exit test) saves the same caller's x29 and x30, so
 * it needs no check that it is where its function starts.
 *
 * Instructions are fixed-width, so unlike x86 the decoder also looks back
 * from pc (within the window it was given) for the prologue's stp or the
 * epilogue's ldp, and ahead for a prologue's stp still to come, stopping
 * at the frame set-up or any branch. Encodings:
 * Arm ARM C6.2 (STP/LDP 64-bit, pre/post-index and signed offset; ADD
 * immediate; RET), checked against GCC's output (a9bf7bfd, 910003fd,
 * a8c17bfd, d65f03c0). */
#include <stdbool.h>
#include "arch/arm64/unwind.h"

#define A64_PAIR_MASK    0xffc07fffu  /* imm7 cleared: any N */
#define A64_STP_FP_LR_PRE  0xa9807bfdu  /* stp x29, x30, [sp, #N]! */
#define A64_STP_FP_LR_OFF  0xa9007bfdu  /* stp x29, x30, [sp, #N] */
#define A64_LDP_FP_LR_POST 0xa8c07bfdu  /* ldp x29, x30, [sp], #N */
#define A64_LDP_FP_LR_OFF  0xa9407bfdu  /* ldp x29, x30, [sp, #N] */
#define A64_ADD_FP_SP_MASK 0xffc003ffu  /* imm12 cleared, no shift */
#define A64_ADD_FP_SP      0x910003fdu  /* add x29, sp, #N (mov x29, sp: N = 0) */
#define A64_RET            0xd65f03c0u  /* ret (x30) */
#define A64_B_MASK         0x7c000000u  /* b, bl: 0x14000000, 0x94000000 */
#define A64_B              0x14000000u
#define A64_BR_MASK        0xfe000000u  /* br, blr, ret, eret, ...: 0xd6xxxxxx */
#define A64_BR             0xd6000000u
#define A64_BCOND_MASK     0xff000010u  /* b.cond */
#define A64_BCOND          0x54000000u
#define A64_CB_MASK        0x7c000000u  /* cbz, cbnz, tbz, tbnz */
#define A64_CB             0x34000000u

static const struct leaf_state a64_framed = { LEAF_FRAMED, -1 };

/* Little-endian, as both AArch64 and the host tests' x86 are: one load
 * (memcpy: code need not be aligned), not four byte loads and three
 * shifts. Per sample this decoder reads up to eight instructions; byte by
 * byte, with every mask tested on each, it cost ~150-210 guest
 * instructions, a third of a sample (QEMU -d exec trace, -icount). */
static uint32_t a64_insn(const uint8_t *p)
{
    uint32_t v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}

static bool a64_is(uint32_t insn, uint32_t mask, uint32_t want)
{
    return (insn & mask) == want;
}

static bool a64_sets_fp(uint32_t insn)
{
    return a64_is(insn, A64_ADD_FP_SP_MASK, A64_ADD_FP_SP);
}

static bool a64_branch(uint32_t insn)
{
    return a64_is(insn, A64_B_MASK, A64_B) || a64_is(insn, A64_BR_MASK, A64_BR) ||
           a64_is(insn, A64_BCOND_MASK, A64_BCOND) || a64_is(insn, A64_CB_MASK, A64_CB);
}

static bool a64_pair_fp_lr(uint32_t insn, uint32_t want)
{
    return a64_is(insn, A64_PAIR_MASK, want);
}

/* The prologue's save of the caller's x29 and x30, either form. */
static bool a64_saves_fp_lr(uint32_t insn)
{
    return a64_pair_fp_lr(insn, A64_STP_FP_LR_PRE) || a64_pair_fp_lr(insn, A64_STP_FP_LR_OFF);
}

/* What the decoder sees in an instruction of the window. */
enum a64_kind {
    A64_OTHER,
    A64_SETS_FP,            /* add x29, sp, #N */
    A64_BRANCH,             /* any branch, ret included */
    A64_STP,                /* stp x29, x30, [sp, #N]! or [sp, #N] */
    A64_LDP,                /* ldp x29, x30, [sp], #N or [sp, #N] */
};

/* The full classification, out of line: only the few instructions that
 * pass a64_kind's one test get here. */
static __attribute__((noinline)) enum a64_kind a64_kind_slow(uint32_t insn)
{
    if (a64_sets_fp(insn))
        return A64_SETS_FP;
    if (a64_branch(insn))
        return A64_BRANCH;
    if (a64_saves_fp_lr(insn))
        return A64_STP;
    if (a64_pair_fp_lr(insn, A64_LDP_FP_LR_POST) || a64_pair_fp_lr(insn, A64_LDP_FP_LR_OFF))
        return A64_LDP;
    return A64_OTHER;
}

/* Every instruction the decoder looks for either names x29 in its low
 * five bits (Rt of stp/ldp x29, x30; Rd of add x29, sp) or is a branch:
 * op0 bits 28:26 = 0b101, less the exception and system instructions of
 * that group (bits 31:25 = 0b1101010: svc, brk, msr, mrs, isb, nop),
 * none of which the branch masks match (Arm ARM C4.1). Most instructions
 * are neither and are passed over after this test alone: a sample reads
 * up to eight instructions, and with every mask tried on each (bytes
 * assembled one by one) this decoder cost 150-210 guest instructions, a
 * third of an arm64 sample (QEMU -d exec trace under -icount). */
static inline enum a64_kind a64_kind(uint32_t insn)
{
    bool maybe = (insn & 0x1f) == 29 ||
                 (((insn >> 26) & 7) == 5 && (insn >> 25) != 0x6a);
    return __builtin_expect(maybe, 0) ? a64_kind_slow(insn) : A64_OTHER;
}

/* Looking back from pc: the prologue's stp with x29 not yet set (PUSHED),
 * the epilogue's ldp (RETURN), or the frame set-up or a branch, past which
 * nothing is known (FRAMED; *open turns false only at the set-up). */
static enum leaf_pos a64_look_back(const uint8_t *code, size_t before, bool *open)
{
    const uint8_t *stop = code - (before & ~(size_t)3);
    for (const uint8_t *p = code; p != stop;) {
        p -= 4;
        switch (a64_kind(a64_insn(p))) {
        case A64_OTHER:
            continue;
        case A64_SETS_FP:
            *open = false;          /* the function's own frame is set */
            return LEAF_FRAMED;
        case A64_BRANCH:
            return LEAF_FRAMED;
        case A64_STP:
            return LEAF_PUSHED;
        case A64_LDP:
            return LEAF_RETURN;
        }
    }
    return LEAF_FRAMED;
}

/* Looking ahead from pc (not itself a branch): GCC schedules a few
 * instructions ahead of the prologue's stp (mov x1, #imm; stp ...), and
 * straight-line code that reaches that stp has made no call and saved
 * nothing yet: x29 and x30 are still the caller's. */
static bool a64_before_stp(const uint8_t *code, size_t after)
{
    const uint8_t *stop = code + (after & ~(size_t)3);
    for (const uint8_t *p = code + 4; p < stop; p += 4) {
        enum a64_kind k = a64_kind(a64_insn(p));
        if (k != A64_OTHER)
            return k == A64_STP;
    }
    return false;
}

struct leaf_state a64_leaf_state(const uint8_t *code, size_t before, size_t after)
{
    if (after < 4)
        return a64_framed;
    uint32_t at = a64_insn(code);
    if (at == A64_RET)
        return (struct leaf_state){ LEAF_RETURN, -1 };
    if (a64_saves_fp_lr(at))
        return (struct leaf_state){ LEAF_ENTRY, -1 };
    bool open = true;
    enum leaf_pos pos = a64_look_back(code, before, &open);
    if (pos != LEAF_FRAMED)
        return (struct leaf_state){ pos, -1 };
    if (open && !a64_branch(at) && a64_before_stp(code, after))
        return (struct leaf_state){ LEAF_ENTRY, -1 };
    return a64_framed;
}

#ifndef SONDE_HOST_TEST
/* The host tests link both architectures' decoders into one program and
 * supply these two from tests/unit/fake_unwind.c. */
#include "arch/arm64/trap.h"

/* The same function under the hal's name: no extra call per sample. */
struct leaf_state unwind_leaf_state(const uint8_t *code, size_t before, size_t after)
    __attribute__((alias("a64_leaf_state")));

uintptr_t unwind_link(const struct trap_frame *tf)
{
    return tf->x[30];
}
#endif
