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
 * cannot change the chain, and there it is not asked (leaf_is_moot). */
#include "kernel/stacktrace.h"
#include "hal/irq.h"
#include "hal/unwind.h"
#include "kernel/stacks.h"
#include "kernel/symtab.h"

#define FRAME_RECORD 16

/* Kernel text, fetched once per capture: every return address, and the
 * leaf's bytes, are tested against it without a call each. Held as its
 * start and size, so that one unsigned compare tests an address. */
struct text {
    uintptr_t lo, size;
};

static bool in_text(const struct text *t, uintptr_t a)
{
    return a - t->lo < t->size;
}

static struct text text_now(void)
{
    uintptr_t lo, hi;
    text_bounds(&lo, &hi);
    return (struct text){ lo, hi - lo };
}

/* Does the 16-byte record at fp lie inside r? Written to avoid overflow
 * for fp near the top of the address space. */
static bool record_inside(uintptr_t fp, const struct stack_region *r)
{
    return fp >= r->lo && fp < r->hi && r->hi - fp >= FRAME_RECORD;
}

/* The highest address a whole record can start at in r; 0 (no record
 * fits) for a region smaller than one. */
static uintptr_t record_top(const struct stack_region *r)
{
    return r->hi - r->lo >= FRAME_RECORD ? r->hi - FRAME_RECORD : 0;
}

/* The stack the walk is in, as the loop uses it. Passed and kept by
 * value, never by address, so that GCC holds it in registers: with the
 * whole stack_region's address taken (for a crossing's lookup) it lived
 * on the stack, stored and reloaded on every sample. */
struct span {
    uintptr_t lo, hi;
    uintptr_t top;          /* record_top */
    int kind;
};

static struct span span_of(const struct stack_region *r)
{
    return (struct span){ r->lo, r->hi, record_top(r), r->kind };
}

/* fp failed the walk's range test against s (unaligned, not above the
 * last record, or past s's top): may the walk go on at fp? Only out of an
 * IRQ/IST stack, into another known stack, whose bounds go to *to.
 * An unaligned or null fp, a fp inside s itself (downward, or straddling
 * its top) and any fp that leaves a task stack end the walk before the
 * lookup, so garbage costs no registry scan. Out of line: the loop keeps
 * s in registers, and only a genuine crossing comes here. */
static __attribute__((noinline)) bool walk_leave(struct span s, uintptr_t fp, struct span *to)
{
    struct stack_region next;
    if (fp == 0 || (fp & 7) != 0 || (fp >= s.lo && fp < s.hi))
        return false;
    if (s.kind != STACK_IRQ && s.kind != STACK_IST)
        return false;
    if (!stack_lookup(fp, &next) || !record_inside(fp, &next))
        return false;
    *to = span_of(&next);
    return true;
}

/* The walk from fp, s being the stack sp lies in. The first record may
 * start at sp itself (fp equals sp right after push %rbp; mov %rsp,%rbp);
 * each one after must start strictly above the one before it, since
 * callers' frames lie above, and end by s.top. A fp that fails those
 * tests is looked at again, out of the loop (walk_leave): a crossing out
 * of an IRQ/IST stack into another known stack, whose bounds then apply,
 * or the end of the walk. (walk_leave's answer comes back through a span
 * of its own: with s's address taken, GCC kept s on the stack and loaded
 * its top again on every frame.)
 *
 * Inlined into its two callers, and written so that everything the loop
 * needs (top, the text's start and size, the output's end) stays in
 * registers and each frame is one load pair, one compare for the return
 * address, the store, and one chain of conditional compares for the
 * next fp (aligned, above this one, not past top, room left): some ten
 * instructions a frame, where testing each condition with its own branch
 * took sixteen. */
static inline __attribute__((always_inline))
unsigned walk_from(struct span s, uintptr_t fp, uintptr_t sp,
                   uintptr_t *out, unsigned max, struct text t)
{
    uintptr_t *o = out, *end = out + max;
    if (max == 0)
        return 0;
    struct span to;
    if (__builtin_expect((fp & 7) != 0 || fp < sp || fp > s.top, 0)) {
        if (!walk_leave(s, fp, &to))
            return 0;
        s = to;
    }
    while (o < end) {
        /* Only now is fp known to point into a known stack. Plain loads,
         * not volatile: nothing writes the interrupted context's frames
         * while it is stopped under this walk. */
        const uintptr_t *rec = (const uintptr_t *)fp;
        uintptr_t next = rec[0];
        uintptr_t ret = rec[1];
        if (ret - t.lo >= t.size)
            break;
        *o++ = ret;
        /* One test for the common case; walk_leave sorts out the rest. */
        if (__builtin_expect((next & 7) != 0 || next <= fp || next > s.top, 0)) {
            if (!walk_leave(s, next, &to))
                break;
            s = to;
        }
        fp = next;
    }
    return (unsigned)(o - out);
}

unsigned st_walk(uintptr_t fp, uintptr_t sp, uintptr_t *out, unsigned max)
{
    struct stack_region cur;
    if (!out || max == 0 || !stack_lookup(sp, &cur))
        return 0;
    return walk_from(span_of(&cur), fp, sp, out, max, text_now());
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
static uintptr_t leaf_caller(const struct trap_frame *tf, uintptr_t pc, uintptr_t sp,
                             uintptr_t lo, uintptr_t hi, struct text t)
{
    if (!in_text(&t, pc))
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
    return in_text(&t, ret) ? ret : 0;
}

/* Can the leaf decoder's answer change the chain? Not when:
 *
 * - (a link register, arm64) the record at fp holds the link register as
 *   its return address. Framed, the walk's first frame is that address;
 *   in any other leaf state the decoder would add the link register as
 *   the caller and the walk would report the same address again from the
 *   record (only direct recursion from one call site puts the caller's
 *   own return there): skipping it drops at most a repeat of one address.
 *   The common arm64 sample, a leaf function's body, is this case: its
 *   record saved x30 and no call has changed x30 since.
 * - (no link register, x86-64: calls push the return address) fp equals
 *   sp: the record at sp is the function's own. At the first instruction
 *   or at ret, sp holds the return address and the caller's fp lies above
 *   it; after push %rbp, sp holds the caller's fp, which points above
 *   that slot. A leaf's body without locals (the common x86 sample) is
 *   this case.
 *
 * Then the decoder's look at the bytes around pc is skipped: ~100 guest
 * instructions of an arm64 sample, ~40 of an x86 one (-icount trace).
 * On arm64 a zero link register falls under the second rule, harmlessly:
 * the decoder's caller would be that 0, which no chain takes. */
static bool leaf_is_moot(const struct trap_regs *r, uintptr_t top)
{
    uintptr_t fp = r->tr_fp;
    if (!r->tr_link)
        return fp == r->tr_sp;
    if ((fp & 7) != 0 || fp < r->tr_sp || fp > top)
        return false;
    return ((const volatile uintptr_t *)fp)[1] == r->tr_link;
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

/* The stack sp lies in: almost always the task this CPU runs, read
 * inline; stack_lookup for the rest (interrupt and IST stacks, the
 * registry). */
static inline bool sample_stack(uintptr_t sp, struct span *s)
{
    unsigned cpu = cpu_index_inline();
    uintptr_t lo, hi;
    if (cpu < MAX_CPUS && stack_task_bounds(&stack_task_slots[cpu], sp, &lo, &hi)) {
        *s = span_of(&(struct stack_region){ lo, hi, STACK_TASK, 0, NULL });
        return true;
    }
    struct stack_region other;
    if (!stack_lookup(sp, &other))
        return false;
    *s = span_of(&other);
    return true;
}

/* no_instrument_function: x86-64 builds with -pg -mnop-mcount so that
 * every function keeps its frame (arch/x86_64/build.mk); this one has a
 * frame anyway (it calls), and a sample can only land in it as a nested
 * NMI, which the sampler drops: its 5-byte nop is a cost per sample and
 * nothing else. (No effect on arm64, built without -pg.) */
__attribute__((no_instrument_function))
unsigned st_capture_trap(const struct trap_frame *tf, uintptr_t *out, unsigned max)
{
    if (__builtin_expect(!out || max < 2, 0))
        return out && max ? (out[0] = trap_pc(tf), 1) : 0;
    struct trap_regs r;
    trap_regs_inline(tf, &r);
    struct span s;
    out[0] = r.tr_pc;
    if (!sample_stack(r.tr_sp, &s))
        return 1;
    struct text t = text_now();
    unsigned n = 1;
    if (!leaf_is_moot(&r, s.top)) {
        uintptr_t caller = leaf_caller(tf, r.tr_pc, r.tr_sp, s.lo, s.hi, t);
        if (caller)
            out[n++] = caller;
    }
    return n + walk_from(s, r.tr_fp, r.tr_sp, out + n, max - n, t);
}
