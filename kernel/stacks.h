/* kernel/stacks.h: the registry of every stack the kernel runs on, so a
 * frame-pointer walk from any context (NMI included) can tell a real frame
 * from garbage without faulting, and `stacks` can report headroom.
 *
 * Stacks are painted with STACK_PAINT at creation; the deepest use is the
 * lowest byte no longer painted. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hal/cpu.h"

#define STACK_PAINT 0x5a5a5a5a5a5a5a5aull
#define MAX_STACKS 512

enum stack_kind {
    STACK_TASK,       /* a task's kernel stack */
    STACK_IRQ,        /* a CPU's interrupt stack */
    STACK_IST,        /* a CPU's IST stack: NMI, #DF, #MC */
    STACK_BOOT,
};

struct stack_region {
    uintptr_t lo, hi;           /* [lo, hi) */
    enum stack_kind kind;
    int owner;                  /* pid for tasks, cpu index otherwise */
    const char *name;           /* "nmi", "df", "irq", ... or task name */
};

/* Paints [lo,hi) if paint, registers it; returns a slot id or -1 if full. */
int stack_register(uintptr_t lo, uintptr_t hi, enum stack_kind kind,
                   int owner, const char *name, bool paint);
void stack_unregister(int id);
/* Lock-free lookup, NMI-safe: the region containing addr, copied out. */
bool stack_find(uintptr_t addr, struct stack_region *out);
/* Bytes of the region never touched (still painted), scanning from lo. */
size_t stack_headroom(const struct stack_region *r);
/* Visit every registered region (task context). */
void stack_for_each(void (*fn)(const struct stack_region *r, void *arg), void *arg);

/* Each CPU's own stacks, so a walk finds the stack it is in without
 * scanning the registry. An IRQ or IST stack registered with its CPU as
 * owner joins that CPU's set at registration (such stacks live for the
 * boot); the task stack is set at every context switch. */
#define CPU_FIXED_STACKS 4         /* x86-64: irq + NMI, #DF, #MC */
/* This CPU now runs on the task stack of registry slot id (scheduler,
 * interrupts off). */
void stack_cpu_switch(int id);
/* NMI-safe: the region containing addr, trying this CPU's own stacks
 * first and the registry only when none of them holds it. */
bool stack_lookup(uintptr_t addr, struct stack_region *out);
/* Registry scans stack_lookup fell back to on CPU cpu, since boot. */
uint64_t stack_cpu_scans(unsigned cpu);

/* Each CPU's task slot, as stack_cpu_switch last set it: a seqlock, odd
 * ts_seq while written (stacks.c). Here so that it can be read inline:
 * by stack_lookup (stack_task_find, with the seqlock, any CPU's) and by
 * the sample path (stack_task_bounds, its own CPU's, without), where as
 * stack_lookup's call it cost each sample ~20 guest instructions more
 * (-icount trace). Written only by stacks.c. */
struct stack_task_slot {
    unsigned ts_seq;
    uintptr_t ts_lo, ts_hi;        /* [lo, hi), empty if lo == hi */
    int ts_kind;
    int ts_owner;
    const char *ts_name;
} __attribute__((aligned(64)));
extern struct stack_task_slot stack_task_slots[MAX_CPUS];

/* The task slot's region, if it holds addr and was not in flux. One try
 * only: an NMI that interrupted its own CPU's writer would wait for ever.
 * NMI-safe; false sends the caller to stack_lookup.
 *
 * The fields between the two reads of ts_seq are read as volatile
 * machine words (Linux's READ_ONCE), not __atomic relaxed loads: aligned
 * word loads are single-copy atomic on both architectures all the same,
 * a copy torn by a writer is thrown away by the ts_seq check, and GCC
 * (aarch64) gives a relaxed __atomic load no offset addressing, two
 * instructions a field where this is one. */
static inline bool stack_task_find(const struct stack_task_slot *ts, uintptr_t addr,
                                   struct stack_region *out)
{
    const volatile struct stack_task_slot *v = ts;
    unsigned s1 = __atomic_load_n(&ts->ts_seq, __ATOMIC_ACQUIRE);
    if (s1 & 1)
        return false;
    uintptr_t lo = v->ts_lo, hi = v->ts_hi;
    if (addr < lo || addr >= hi)
        return false;
    int kind = v->ts_kind, owner = v->ts_owner;
    const char *name = v->ts_name;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (__atomic_load_n(&ts->ts_seq, __ATOMIC_RELAXED) != s1)
        return false;
    *out = (struct stack_region){ lo, hi, (enum stack_kind)kind, owner, name };
    return true;
}

/* The calling CPU's own task slot's bounds, if they hold addr: for the
 * sample path, with interrupts off (a sample, a backtrace answer, a
 * panic), so that the slot is this CPU's for the whole read and its only
 * writer, stack_cpu_switch on this same CPU, is either done or stopped
 * under us. That writer clears hi before it changes lo, then sets hi: in
 * program order, which is the order this CPU observes its own stores in,
 * so the two loads see the old bounds, an empty range, or the new ones,
 * and need no seqlock (a read of another CPU's slot does: stack_lookup).
 * The task slot never holds an IRQ or IST stack (stack_cpu_switch), so a
 * walk that starts in it takes it as a task stack and never crosses out;
 * its kind, owner and name are not read. */
static inline bool stack_task_bounds(const struct stack_task_slot *ts, uintptr_t addr,
                                     uintptr_t *lo, uintptr_t *hi)
{
    const volatile struct stack_task_slot *v = ts;
    uintptr_t l = v->ts_lo, h = v->ts_hi;
    if (addr < l || addr >= h)
        return false;
    *lo = l;
    *hi = h;
    return true;
}
