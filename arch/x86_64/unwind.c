/* arch/x86_64/unwind.c: where a sampled x86-64 instruction stands in its
 * function's frame set-up (hal/unwind.h).
 *
 * With -fno-omit-frame-pointer -pg every C function opens with
 *
 *   55          push %rbp         <- LEAF_ENTRY: return address at (%rsp)
 *   48 89 e5    mov  %rsp,%rbp    <- LEAF_PUSHED: return address at 8(%rsp)
 *
 * and leaves with pop %rbp (or leave) then ret, so at the c3 the frame is
 * gone and the return address is at (%rsp) (LEAF_RETURN). That holds at
 * every ret, framed or not: it is the address ret is about to jump to.
 *
 * Only the pair proves a prologue: a lone push %rbp is also how the trap
 * entry saves the interrupted rbp among the other registers, with no
 * return address below it. The pair means the same wherever it appears:
 * entry.S's frame record for the interrupted context is built by the same
 * two instructions over the interrupted rip, which the walk then reports
 * just as it would a return address. x86 cannot be decoded backwards, so
 * only the bytes from pc on (and the one before it) count: an instruction
 * GCC schedules between pop %rbp and ret is not recognised. */
#include <stdbool.h>
#include "arch/x86_64/unwind.h"

#define X86_PUSH_RBP 0x55
#define X86_RET      0xc3
#define X86_REP      0xf3           /* "rep ret", an old AMD-tuned ret */

static const struct leaf_state x86_framed = { LEAF_FRAMED, -1 };

/* mov %rsp,%rbp: REX.W 89 /r (ModRM e5) as GAS emits it, or REX.W 8b /r. */
static bool x86_mov_rsp_rbp(const uint8_t *c, size_t n)
{
    return n >= 3 && c[0] == 0x48 &&
           ((c[1] == 0x89 && c[2] == 0xe5) || (c[1] == 0x8b && c[2] == 0xec));
}

struct leaf_state x86_leaf_state(const uint8_t *code, size_t before, size_t after)
{
    if (after < 1)
        return x86_framed;
    if (code[0] == X86_PUSH_RBP && x86_mov_rsp_rbp(code + 1, after - 1))
        return (struct leaf_state){ LEAF_ENTRY, 0 };
    if (before >= 1 && code[-1] == X86_PUSH_RBP && x86_mov_rsp_rbp(code, after))
        return (struct leaf_state){ LEAF_PUSHED, 1 };
    if (code[0] == X86_RET || (after >= 2 && code[0] == X86_REP && code[1] == X86_RET))
        return (struct leaf_state){ LEAF_RETURN, 0 };
    return x86_framed;
}

#ifndef SONDE_HOST_TEST
/* The host tests link both architectures' decoders into one program and
 * supply these two from tests/unit/fake_unwind.c. */
#include "arch/x86_64/trap.h"

/* The same function under the hal's name: no extra call per sample. */
struct leaf_state unwind_leaf_state(const uint8_t *code, size_t before, size_t after)
    __attribute__((alias("x86_leaf_state")));

uintptr_t unwind_link(const struct trap_frame *tf)
{
    return 0;                   /* call pushes the return address */
}
#endif
