/* kernel/stacktrace_inline.h: the capture of an interrupted context
 * (st_capture_trap, kernel/stacktrace.h), inline, for the profiler's
 * sampler: there a call would save and restore every register the walk
 * uses on every sample. kernel/stacktrace.c's st_capture_trap is this
 * same function out of line. Host unit tests compile both, over fake
 * stacks and a hand-built trap frame: the register reads beneath come
 * from arch/host/ (hal/cpu.h, hal/irq.h), everything here is the
 * kernel's. Every rule of the walk is kernel/stacktrace.c's. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "hal/cpu.h"
#include "hal/irq.h"
#include "kernel/stacks.h"
#include "kernel/stacktrace.h"
#include "kernel/symtab.h"

#define FRAME_RECORD 16

/* Kernel text, fetched once per capture: every return address, and the
 * leaf's bytes, are tested against it without a call each. Held as its
 * start and size, so that one unsigned compare tests an address. */
struct st_text {
    uintptr_t lo, size;
};

static inline bool st_in_text(const struct st_text *t, uintptr_t a)
{
    return a - t->lo < t->size;
}

static inline struct st_text st_text_now(void)
{
    uintptr_t lo, hi;
    text_bounds(&lo, &hi);
    return (struct st_text){ lo, hi - lo };
}

/* The highest address a whole record can start at in r; 0 (no record
 * fits) for a region smaller than one. */
static inline uintptr_t st_record_top(const struct stack_region *r)
{
    return r->hi - r->lo >= FRAME_RECORD ? r->hi - FRAME_RECORD : 0;
}

/* The stack the walk is in, as the loop uses it. Passed and kept by
 * value, never by address, so that GCC holds it in registers: with the
 * whole stack_region's address taken (for a crossing's lookup) it lived
 * on the stack, stored and reloaded on every sample. */
struct st_span {
    uintptr_t lo, hi;
    uintptr_t top;          /* record_top */
    int kind;
};

static inline struct st_span st_span_of(const struct stack_region *r)
{
    return (struct st_span){ r->lo, r->hi, st_record_top(r), r->kind };
}

/* May the walk's first record start at fp in the stack whose top is
 * top, at floor or above? floor is sp itself for the first record of a
 * walk (fp equals sp right after push %rbp; mov %rsp,%rbp). */
static inline bool st_first_in(uintptr_t fp, uintptr_t floor, uintptr_t top)
{
    return (fp & 7) == 0 && fp >= floor && fp <= top;
}

/* The walk's loop within one stack, s, from fp. first_in is
 * st_first_in's answer for fp, which the caller has (the capture asks it
 * for its own reasons); each record after the first must start strictly
 * above the one before it (callers' frames lie above) and by s.top.
 * Records return addresses at o, up to end (o < end on entry: it writes
 * before it tests for room); returns where it stopped writing. *bad is the fp it stopped at when that fp failed the test
 * (a crossing to look at, or garbage), 0 when the walk ended otherwise:
 * a null fp, a return address outside text, or end reached.
 *
 * Written so that the common frame is one load pair, one compare for the
 * return address, the store, the room test, and at the loop's foot one
 * chain of conditional compares for the next fp (aligned, above this
 * record, not past top): thirteen instructions a frame on arm64, where a
 * branch for each condition took sixteen. No call inside it: everything
 * it needs stays in scratch registers even inlined into the sampler. */
static inline __attribute__((always_inline))
uintptr_t *st_walk_run(struct st_span s, uintptr_t fp, bool first_in, uintptr_t *o,
                       uintptr_t *end, struct st_text t, uintptr_t *bad)
{
    *bad = 0;
    if (__builtin_expect(!first_in, 0)) {
        *bad = fp;
        return o;
    }
    uintptr_t prev;
    do {
        /* fp is known to point into s here. Plain loads, not volatile,
         * so that they pair: what they read may change under the walk
         * (`bt` of a task that wakes on another CPU meanwhile), but every
         * value is tested in a register before it is used, so a changed
         * frame can end or mislead the walk, never take it outside the
         * stack. */
        const uintptr_t *rec = (const uintptr_t *)fp;
        uintptr_t ret = rec[1];
        prev = fp;
        fp = rec[0];
        if (ret - t.lo >= t.size)
            return o;
        *o++ = ret;
        if (o >= end)
            return o;
    } while ((fp & 7) == 0 && fp > prev && fp <= s.top);
    *bad = fp;
    return o;
}

/* (top - a) >> 3 for a record at a that may start at top or below:
 * the records between a and top, in words. Rotated rather than shifted,
 * so that a misaligned a (top being aligned) comes out with its low bits
 * on top, above any real count, and an a above top wraps there too: one
 * unsigned compare of two such values tests alignment, order and both
 * bounds at once (st_walk_within). */
static inline uintptr_t st_words_below(uintptr_t top, uintptr_t a)
{
    uintptr_t d = top - a;
    return d >> 3 | d << (sizeof d * 8 - 3);
}

/* The walk of a stack that the chain never leaves: a task switched out,
 * whose every frame lies on its own stack [lo, top + FRAME_RECORD) (the
 * scheduler's off-CPU records, on every switch of an off-CPU window).
 * From fp, at most max return addresses at out; returns how many. The
 * rules are the other walks': every record 8-byte aligned (top is: a
 * task's stack is a heap block), inside the stack, each strictly above
 * the one before, each return address in text; the first that fails
 * ends the chain, for there is no other stack to cross to.
 *
 * Its own loop because it is the switch path's largest cost. A record's
 * tests are one unsigned compare: w, st_words_below of the next record,
 * must be below that of the record before it. That holds only for an
 * aligned record above the one before and not above top (a misaligned or
 * too high one rotates past every real count; one at or below the record
 * before has as many words or more); the first record is held to
 * [lo, top] the same way. So a frame is its two loads, the text test,
 * the store and that one compare: 12 x86-64 instructions and 9 arm64
 * ones, unrolled (max is a constant where it is inlined: no index, no
 * loop test), where the loop with a branch for each test took 17 x86-64
 * instructions. It never reads outside [lo, top + FRAME_RECORD),
 * whatever the stack holds (were top misaligned, only the alignment rule
 * would be off): every record read passed the compare first. */
static inline __attribute__((always_inline))
unsigned st_walk_within(uintptr_t lo, uintptr_t top, uintptr_t fp, uintptr_t *out,
                        unsigned max, struct st_text t)
{
    uintptr_t w = st_words_below(top, fp);
    if (__builtin_expect(w > (top - lo) >> 3, 0))
        return 0;
#pragma GCC unroll 16
    for (unsigned n = 0; n < max; n++) {
        const uintptr_t *rec = (const uintptr_t *)fp;
        uintptr_t ret = rec[1], next = rec[0];
        if (__builtin_expect(ret - t.lo >= t.size, 0))
            return n;
        out[n] = ret;
        uintptr_t wn = st_words_below(top, next);
        if (__builtin_expect(wn >= w, 0))
            return n + 1;
        w = wn;
        fp = next;
    }
    return max;
}

/* kernel/stacktrace.c, out of line: the walk past a fp that failed
 * st_walk_run's test in the stack [lo, hi) of the given kind (a crossing
 * out of an IRQ/IST stack, or the end), and the leaf decoder's caller. */
uintptr_t *st_walk_on(uintptr_t lo, uintptr_t hi, int kind, uintptr_t fp, uintptr_t *o,
                      uintptr_t *end, struct st_text t);
uintptr_t st_leaf_caller(const struct trap_frame *tf, uintptr_t pc, uintptr_t sp,
                         uintptr_t lo, uintptr_t hi, struct st_text t);

/* The walk from fp, s being the stack sp lies in: at most max return
 * addresses at out. Only a fp that leaves s goes out of line. */
static inline __attribute__((always_inline))
unsigned st_walk_from(struct st_span s, uintptr_t fp, uintptr_t sp,
                      uintptr_t *out, unsigned max, struct st_text t)
{
    if (max == 0)
        return 0;
    uintptr_t bad;
    uintptr_t *o = st_walk_run(s, fp, st_first_in(fp, sp, s.top), out, out + max, t, &bad);
    if (__builtin_expect(bad != 0, 0))
        o = st_walk_on(s.lo, s.hi, s.kind, bad, o, out + max, t);
    return (unsigned)(o - out);
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
static inline bool st_leaf_is_moot(const struct trap_regs *r, bool fp_in)
{
    uintptr_t fp = r->tr_fp;
    if (!r->tr_link)
        return fp == r->tr_sp;
    if (!fp_in)             /* st_first_in(fp, sp, top): a record to read */
        return false;
    return ((const volatile uintptr_t *)fp)[1] == r->tr_link;
}

/* The stack sp lies in: almost always the task CPU cpu (the calling
 * one) runs, read inline; stack_lookup for the rest (interrupt and IST
 * stacks, the registry). */
static inline bool st_sample_stack(uintptr_t sp, struct st_span *s, unsigned cpu)
{
    uintptr_t lo, hi;
    if (stack_task_bounds(&stack_task_slots[cpu], sp, &lo, &hi)) {
        *s = st_span_of(&(struct stack_region){ lo, hi, STACK_TASK, 0, NULL });
        return true;
    }
    struct stack_region other;
    if (!stack_lookup(sp, &other))
        return false;
    *s = st_span_of(&other);
    return true;
}

/* st_capture_trap on the calling CPU, cpu (< MAX_CPUS: the caller has
 * its index already, and checks it or has hal/cpu.h's word for it). */
static inline __attribute__((always_inline))
unsigned st_capture_trap_inline(const struct trap_frame *tf, uintptr_t *out, unsigned max,
                                unsigned cpu)
{
    if (__builtin_expect(!out || max < 2, 0))
        return out && max ? (out[0] = trap_pc(tf), 1) : 0;
    struct trap_regs r;
    trap_regs_inline(tf, &r);
    struct st_span s;
    out[0] = r.tr_pc;
    if (!st_sample_stack(r.tr_sp, &s, cpu))
        return 1;
    struct st_text t = st_text_now();
    unsigned n = 1;
    bool fp_in = st_first_in(r.tr_fp, r.tr_sp, s.top);
    if (!st_leaf_is_moot(&r, fp_in)) {
        uintptr_t caller = st_leaf_caller(tf, r.tr_pc, r.tr_sp, s.lo, s.hi, t);
        if (caller)
            out[n++] = caller;
    }
    /* st_walk_from, with the first record's test already answered (and
     * room for one more: st_walk_run writes before its room test). */
    if (__builtin_expect(n >= max, 0))
        return n;
    uintptr_t bad;
    uintptr_t *o = st_walk_run(s, r.tr_fp, fp_in, out + n, out + max, t, &bad);
    if (__builtin_expect(bad != 0, 0))
        o = st_walk_on(s.lo, s.hi, s.kind, bad, o, out + max, t);
    return (unsigned)(o - out);
}
