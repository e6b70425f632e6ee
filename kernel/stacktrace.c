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
 * garbage and the walk stops. */
#include "kernel/stacktrace.h"
#include "hal/irq.h"
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

unsigned st_walk(uintptr_t fp, uintptr_t sp, uintptr_t *out, unsigned max)
{
    struct stack_region cur;
    if (!out || max == 0 || !stack_lookup(sp, &cur))
        return 0;

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
    out[0] = trap_pc(tf);
    return 1 + st_walk(trap_fp(tf), trap_sp(tf), out + 1, max - 1);
}
