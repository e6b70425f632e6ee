/* kernel/stacktrace.c: the frame-pointer walk.
 *
 * With -fno-omit-frame-pointer every function's prologue pushes the
 * caller's RBP and points RBP at it, so at fp sits a 16-byte record:
 *
 *   fp+8   return address into the caller
 *   fp+0   the caller's fp
 *
 * The walk runs in NMI context on whatever RBP the interrupted code had,
 * which may be garbage (assembly that uses RBP as a scratch register, a
 * sample taken mid-prologue). So it proves each fp safe before it reads
 * it: 8-byte aligned, its whole record inside a registered stack, and
 * moving strictly upward (a stack grows down, so callers' frames lie
 * above). Upward movement within a bounded region also guarantees the
 * walk ends even on a loop of garbage pointers.
 *
 * Crossing stacks: an interrupt or NMI handler runs on an IRQ/IST stack
 * whose oldest frame points back into the interrupted context's stack,
 * which may be anywhere. So from an IRQ/IST stack the next fp may land in
 * any other registered stack, whose bounds then apply. A task or boot
 * stack never legitimately chains into another stack: there such a fp is
 * garbage and the walk stops. Finding a frame's stack costs O(1) on the
 * sample path: stack_lookup tries this CPU's task, IRQ and IST stacks
 * before it scans the registry (which `bt` of another task still needs).
 *
 * The sampled leaf: fp names the interrupted function's own frame only
 * between its prologue and epilogue. On its first instruction, before its
 * own fp is set, and after its epilogue restored the caller's, the record
 * at fp is the caller's, whose return address leads to the caller's
 * caller: the caller itself would be missing. The architecture recognises
 * those positions from the bytes around pc (hal/unwind.h), and the
 * capture then takes the caller's return address from the stack slot or
 * link register where it still is. */
#include "kernel/stacktrace.h"
#include "hal/irq.h"
#include "hal/unwind.h"
#include "kernel/stacks.h"
#include "kernel/symtab.h"

#define FRAME_RECORD 16

/* Does the 16-byte record at fp lie inside r? Written to avoid overflow
 * for fp near the top of the address space. */
static bool record_inside(uintptr_t fp, const struct stack_region *r)
{
    return fp >= r->lo && fp < r->hi && r->hi - fp >= FRAME_RECORD;
}

static bool may_cross(enum stack_kind k)
{
    return k == STACK_IRQ || k == STACK_IST;
}

/* Decide whether fp is the next frame to read, given the region the walk
 * is in (updated on a crossing) and the previous frame's address (the
 * walk's starting sp before the first frame, which fp may equal). */
static bool frame_ok(uintptr_t fp, uintptr_t prev, bool first,
                     struct stack_region *cur)
{
    if (fp == 0 || (fp & 7) != 0)
        return false;
    if (fp >= cur->lo && fp < cur->hi) {
        if (!record_inside(fp, cur))
            return false;   /* straddles the top of the stack */
        return first ? fp >= prev : fp > prev;
    }
    if (!may_cross(cur->kind))
        return false;
    struct stack_region next;
    if (!stack_lookup(fp, &next) || !record_inside(fp, &next))
        return false;
    *cur = next;            /* the interrupted context's bounds apply now */
    return true;
}

/* The walk from fp, cur being the stack sp (the walk's floor) lies in. */
static unsigned walk_from(struct stack_region cur, uintptr_t fp, uintptr_t sp,
                          uintptr_t *out, unsigned max)
{
    unsigned n = 0;
    uintptr_t prev = sp;
    bool first = true;
    while (n < max && frame_ok(fp, prev, first, &cur)) {
        /* Only now is fp known to point into a registered stack. */
        const volatile uintptr_t *rec = (const volatile uintptr_t *)fp;
        uintptr_t next_fp = rec[0];
        uintptr_t ret = rec[1];
        if (!text_contains(ret))
            break;
        out[n++] = ret;
        prev = fp;
        first = false;
        fp = next_fp;
    }
    return n;
}

unsigned st_walk(uintptr_t fp, uintptr_t sp, uintptr_t *out, unsigned max)
{
    struct stack_region cur;
    if (!out || max == 0 || !stack_lookup(sp, &cur))
        return 0;
    return walk_from(cur, fp, sp, out, max);
}

/* Ask the architecture where pc stands in its function's frame set-up,
 * handing it only bytes inside kernel text: the window's two ends are
 * checked, and text is one contiguous range ([_stext, _etext)), so every
 * byte between them is mapped text too. Near either end of text the
 * window shrinks to what is known to be there. */
static struct leaf_state leaf_decode(uintptr_t pc)
{
    size_t before = 0, after = 1;
    if (pc >= UNWIND_BEFORE && text_contains(pc - UNWIND_BEFORE))
        before = UNWIND_BEFORE;
    if (pc <= UINTPTR_MAX - UNWIND_AFTER && text_contains(pc + UNWIND_AFTER - 1))
        after = UNWIND_AFTER;
    return unwind_leaf_state((const uint8_t *)pc, before, after);
}

/* The sampled function's caller, when pc sits where fp is not (yet, or
 * any more) the function's own frame, so the walk from fp would skip it;
 * 0 otherwise. A few compares on the bytes at pc; the stack is read only
 * once one matched. No symbol lookup: this runs in NMI context. */
static uintptr_t leaf_caller(const struct trap_frame *tf, uintptr_t pc, uintptr_t sp,
                             const struct stack_region *cur)
{
    if (!text_contains(pc))
        return 0;               /* garbage pc: its bytes are not ours to read */
    struct leaf_state st = leaf_decode(pc);
    if (st.pos == LEAF_FRAMED)
        return 0;
    uintptr_t ret;
    if (st.ret_slot < 0) {
        ret = unwind_link(tf);
    } else {
        /* The slot must lie wholly inside the stack sp is in. */
        uintptr_t slot = sp + 8 * (uintptr_t)st.ret_slot;
        if ((sp & 7) != 0 || slot < sp || slot < cur->lo || slot >= cur->hi ||
            cur->hi - slot < sizeof(uintptr_t))
            return 0;
        ret = *(const volatile uintptr_t *)slot;
    }
    return text_contains(ret) ? ret : 0;
}

/* noinline: its own frame must exist to be skipped. The walk starts at
 * the caller's frame, so out[0] is the caller's return address. */
__attribute__((noinline))
unsigned st_capture_here(uintptr_t *out, unsigned max)
{
    uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
    uintptr_t sp;
#if defined(SONDE_HOST_TEST)
    sp = fp;
#elif defined(__x86_64__)
    __asm__ volatile("mov %%rsp, %0" : "=r"(sp));
#elif defined(__aarch64__)
    __asm__ volatile("mov %0, sp" : "=r"(sp));
#else
    sp = fp;
#endif
    /* Our own record: [caller's fp][return into our caller]. Skip it. */
    uintptr_t caller_fp = *(const uintptr_t *)fp;
    return st_walk(caller_fp, sp, out, max);
}

unsigned st_capture_trap(const struct trap_frame *tf, uintptr_t *out, unsigned max)
{
    if (!out || max == 0)
        return 0;
    uintptr_t pc = trap_pc(tf), sp = trap_sp(tf);
    struct stack_region cur;
    out[0] = pc;
    if (max == 1 || !stack_lookup(sp, &cur))
        return 1;
    unsigned n = 1;
    uintptr_t caller = leaf_caller(tf, pc, sp, &cur);
    if (caller)
        out[n++] = caller;
    return n + walk_from(cur, trap_fp(tf), sp, out + n, max - n);
}
