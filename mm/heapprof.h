/* mm/heapprof.h: sampled heap profiling, the allocator's side
 * (mm/heapprof.c): which allocations are sampled, what each sample
 * weighs, and the bounded table of live sampled blocks behind
 * `profile heap` (docs/profiling.md).
 *
 * Each CPU counts the bytes it allocates down from a threshold drawn from
 * an exponential distribution of mean R (the rate); the allocation that
 * crosses it is sampled and the next threshold drawn. A sample of size s
 * stands for s / (1 - e^(-s/R)) bytes, the unbiased scaling Go's runtime
 * uses, and for that over s objects.
 *
 * Every table function runs under the heap's lock (mm/heap.c), interrupts
 * off: the table has no lock of its own, and a block is retired in the
 * same critical section that frees it, so a sampled block leaves the
 * in-use view exactly once and before its address can be handed out
 * again.
 *
 * Allocator profiling: prefix heapprof_ and HEAPPROF_. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hal/cpu.h"
#include "kernel/prof/record.h"

#define HEAPPROF_RATE_DEF  (512u * 1024)   /* bytes: Go's default */
#define HEAPPROF_RATE_MIN  1u
#define HEAPPROF_RATE_MAX  (1u << 30)
#define HEAPPROF_BLOCKS    8192u           /* live sampled blocks the table holds */

/* The rate in bytes, 0 when sampling is off. Read when a countdown
 * crosses zero and by the commands, never on kmalloc's fast path. */
extern uint32_t heapprof_rate;

/* Each CPU's sampling state but its countdown, touched only by that CPU
 * under the heap lock (or in its rate-change interrupt, which the lock's
 * masking keeps out). The countdown itself is hal/cpu.h's
 * (cpu_heap_countdown, cpu_heap_left): struct cpu's heap_left through the
 * per-CPU register on x86-64, register x18 on arm64. */
struct heapprof_cpu {
    uint64_t hc_rng;            /* splitmix64 state */
    uint32_t hc_gen;            /* heapprof_gen the threshold was drawn for */
    bool hc_seeded;
} __attribute__((aligned(64)));
extern struct heapprof_cpu heapprof_cpus[MAX_CPUS];

/* Heap lock held. True when this allocation of size bytes crosses this
 * CPU's threshold: the caller then calls heapprof_sample. Sampling on or
 * off, this is a subtract from the per-CPU countdown and a branch (x86-64:
 * `sub %reg, %gs:24; js`; arm64: `subs x18, x18, reg; b.mi`): off, the
 * countdown is INT64_MAX, which no kernel's allocations use up, so off
 * needs no test of its own. */
static inline bool heapprof_count(size_t size)
{
    return __builtin_expect(cpu_heap_countdown(size), 0);
}

/* Heap lock held, after heapprof_count said so: draw the next threshold
 * (or, sampling off, set the countdown back to INT64_MAX),
 * walk the chain from site (kmalloc's return address), record the sample
 * for a `profile allocs` window (prof_emit) and enter the block in the
 * in-use table. True if the block is in the table: the caller marks it
 * sampled, and calls heapprof_retire when it is freed. False: a stale
 * threshold (the rate changed; nothing sampled) or the table was full
 * (counted). */
bool heapprof_sample(const void *ptr, size_t size, uintptr_t site);

/* Heap lock held: the block at ptr, marked sampled, is being freed. */
void heapprof_retire(const void *ptr);
/* Heap lock held: the block at ptr, which has no mark of its own (a page
 * block: mm/pmm.c), is being freed; retired if it is in the table. True
 * if it was. */
bool heapprof_forget(const void *ptr);

/* Set the rate (HEAPPROF_RATE_MIN..MAX bytes) or 0 for off. Every CPU
 * draws a fresh threshold at its next allocation. Live sampled blocks
 * stay in the table either way. Heap lock held (heapprof_rate_set), or
 * before a second CPU runs: it sets every CPU's countdown
 * (cpu_heap_countdown_all: in memory, or on arm64 this CPU's x18 and the
 * others' by interrupt). */
void heapprof_set_rate(uint32_t rate);

/* This CPU's side of a rate change, where its countdown can only be set
 * by itself (arm64's x18: hal/cpu.h's cpu_heap_countdown_all sends each
 * other CPU an SGI whose handler calls this). Interrupts off, no lock: the
 * heap lock masks interrupts, so this never runs inside this CPU's own
 * sample. Sets the countdown as heapprof_set_rate would (0 on, INT64_MAX
 * off) unless this CPU has already drawn at the newest rate: a CPU in
 * heapprof_sample when the change came takes the interrupt after it
 * leaves the lock, with a fresh threshold that must stand. */
void heapprof_cpu_refresh(void);

struct heapprof_stats {
    uint32_t hs_rate;           /* heapprof_rate */
    uint32_t hs_live;           /* sampled blocks in the table now */
    uint64_t hs_samples;        /* allocations sampled since boot */
    uint64_t hs_overflow;       /* of them, not in the table: it was full */
    uint64_t hs_retired;        /* sampled blocks freed */
    uint64_t hs_missing;        /* a marked block with no entry: must stay 0 */
};

/* Heap lock held. Copies at most max live blocks into out as heap
 * records (kind heap, weight the bytes they stand for, pr_size the
 * requested size); returns how many. st may be NULL. */
uint32_t heapprof_copy(struct prof_record *out, uint32_t max, struct heapprof_stats *st);

/* ---- the arithmetic, exposed for the tests ---- */

/* The next value of a splitmix64 generator. */
uint64_t heapprof_rand(uint64_t *state);
/* A threshold drawn from an exponential distribution of mean rate. */
uint64_t heapprof_draw(uint64_t *state, uint32_t rate);
/* size / (1 - e^(-size/rate)), rounded: the bytes a sample of size
 * stands for. size itself when size is 0. */
uint64_t heapprof_scale(uint64_t size, uint32_t rate);
/* weight / size in 1/65536ths: the objects a sample stands for (1 when
 * size is 0). */
uint64_t heapprof_objects_q16(uint64_t weight, uint64_t size);

#ifdef SONDE_HOST_TEST
void heapprof_test_reset(void);                 /* empty table, off */
void heapprof_test_seed(unsigned cpu, uint64_t seed);
#endif
