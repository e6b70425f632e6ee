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
 * link register where it still is. Most samples sit where that answer
 * cannot change the chain, and there it is not asked (st_leaf_is_moot). */
#include "kernel/stacktrace.h"
#include "hal/irq.h"
#include "hal/unwind.h"
#include "kernel/panic.h"
#include "kernel/stacks.h"
#include "kernel/stacktrace_inline.h"
#include "kernel/symtab.h"

/* Does the 16-byte record at fp lie inside r? Written to avoid overflow
 * for fp near the top of the address space. */
static bool record_inside(uintptr_t fp, const struct stack_region *r)
{
    return fp >= r->lo && fp < r->hi && r->hi - fp >= FRAME_RECORD;
}

/* fp failed st_walk_run's test in the stack [lo, hi) of the given kind:
 * may the walk go on at fp? Only out of an IRQ/IST stack, into another
 * known stack, whose bounds then apply; and so on at each crossing, at
 * most one per record written. A null or unaligned fp, a fp inside the
 * stack itself (downward, or straddling its top) and any fp that leaves a
 * task stack end the walk before the lookup, so garbage costs no registry
 * scan. Out of line: only a genuine crossing gets past its first tests. */
__attribute__((noinline))
uintptr_t *st_walk_on(uintptr_t lo, uintptr_t hi, int kind, uintptr_t fp, uintptr_t *o,
                      uintptr_t *end, struct st_text t)
{
    while (fp != 0 && o < end) {
        struct stack_region next;
        if ((fp & 7) != 0 || (fp >= lo && fp < hi))
            break;
        if (kind != STACK_IRQ && kind != STACK_IST)
            break;
        if (!stack_lookup(fp, &next) || !record_inside(fp, &next))
            break;
        lo = next.lo;
        hi = next.hi;
        kind = next.kind;
        /* record_inside: the first record is there. */
        o = st_walk_run(st_span_of(&next), fp, true, o, end, t, &fp);
    }
    return o;
}

unsigned st_walk(uintptr_t fp, uintptr_t sp, uintptr_t *out, unsigned max)
{
    struct stack_region cur;
    if (!out || max == 0 || !stack_lookup(sp, &cur))
        return 0;
    return st_walk_from(st_span_of(&cur), fp, sp, out, max, st_text_now());
}

/* The sampled function's caller, when pc sits where fp is not (yet, or
 * any more) the function's own frame, so the walk from fp would skip it;
 * 0 otherwise. A few compares on the bytes at pc; the stack is read only
 * once one matched. No symbol lookup: this runs in NMI context.
 *
 * The decoder gets only bytes inside kernel text, one contiguous range
 * ([_stext, _etext)): near either end the window shrinks to what is
 * there, and a pc outside text is garbage whose bytes are not ours to
 * read. */
uintptr_t st_leaf_caller(const struct trap_frame *tf, uintptr_t pc, uintptr_t sp,
                         uintptr_t lo, uintptr_t hi, struct st_text t)
{
    if (!st_in_text(&t, pc))
        return 0;
    size_t before = pc - t.lo, after = t.lo + t.size - pc;
    if (before > UNWIND_BEFORE)
        before = UNWIND_BEFORE;
    if (after > UNWIND_AFTER)
        after = UNWIND_AFTER;
    struct leaf_state st = unwind_leaf_state((const uint8_t *)pc, before, after);
    if (st.pos == LEAF_FRAMED)
        return 0;
    uintptr_t ret;
    if (st.ret_slot < 0) {
        ret = unwind_link(tf);
    } else {
        /* The slot must lie wholly inside the stack sp is in. */
        uintptr_t slot = sp + 8 * (uintptr_t)st.ret_slot;
        if ((sp & 7) != 0 || slot < sp || slot < lo || slot >= hi ||
            hi - slot < sizeof(uintptr_t))
            return 0;
        ret = *(const volatile uintptr_t *)slot;
    }
    return st_in_text(&t, ret) ? ret : 0;
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

/* no_instrument_function: x86-64 builds with -pg -mnop-mcount so that
 * every function keeps its frame (arch/x86_64/build.mk); this one has a
 * frame anyway (it calls), and a sample can only land in it as a nested
 * NMI, which the sampler drops: its 5-byte nop is a cost per sample and
 * nothing else. (No effect on arm64, built without -pg.) */
__attribute__((no_instrument_function))
unsigned st_capture_trap(const struct trap_frame *tf, uintptr_t *out, unsigned max)
{
    /* The own CPU's task slot is read without its seqlock (stacks.h). */
    BUG_ON(irqs_enabled_inline());
    unsigned cpu = cpu_index_inline();
    if (cpu >= MAX_CPUS)
        return out && max ? (out[0] = trap_pc(tf), 1) : 0;
    return st_capture_trap_inline(tf, out, max, cpu);
}
