/* kernel/prof/record.h: one record, as the producers write it into a ring
 * (kernel/prof/ring_produce.h) and its readers take it: the fold
 * (kernel/prof/fold.c), which every report prints from, and the stream.
 *
 * A record is a kind, a weight and a chain. The kind says what was
 * measured and the weight how much: a CPU sample weighs 1 (one period of
 * its source), an off-CPU record nanoseconds, a heap record bytes. The
 * fold takes records of one kind, by chain, and adds the weights, never
 * mixing kinds. The same kind and weight travel in the raw profile
 * (uapi/profile_raw.h) and the stream (uapi/profile_stream.h).
 *
 * Profiler core: prefix prof_ and PROF_. */
#pragma once
#include <stdint.h>
#include "kernel/prof/prof.h"

enum prof_kind {
    PROF_KIND_CPU = 0,          /* a sample of the running pc; weight 1 */
    PROF_KIND_OFFCPU = 1,       /* time off the CPU (kernel/prof/offcpu.h); ns */
    PROF_KIND_HEAP = 2,         /* a sampled allocation (mm/heapprof.h);
                                   weight the bytes it stands for */
    PROF_KIND_LOCK = 3,         /* a lock's waiters' time, charged to the
                                   holder that released it
                                   (kernel/prof/lockprof_hooks.h); ns */
    PROF_KIND_MAX = 3,          /* kinds a reader may meet: cpu, off-CPU
                                   (1, ns), heap (2, bytes) and lock (3,
                                   ns); anything above is corrupt */
    PROF_KIND_STREAMED = 3,     /* the kinds a stream carries: all of
                                   them, the trace's aside */
    /* Read by the trace's fold alone (kernel/prof/trace.h), never by the
     * fold engine or a stream: a switch, wake or interrupt slice, its
     * pr_weight its time on the raw counter. */
    PROF_KIND_TRACE = 4,
};

struct prof_record {
    int32_t pr_pid;
    union {
        uint32_t pr_cost;       /* cycles this sample took */
        uint32_t pr_waits;      /* lock records only: the waits charged */
    };
    uint8_t pr_depth;           /* 1..PROF_FRAMES (off-CPU: 0..PROF_FRAMES) */
    uint8_t pr_why;             /* off-CPU only: enum prof_why (the sampler
                                   never writes it) */
    /* pr_tick and pr_kind side by side, written as one halfword (pr_tag):
     * from the sampler both are constants, so the two cost one store. */
    union {
        struct {
            uint8_t pr_tick;    /* 1: taken by the tick, 0: by the counter */
            uint8_t pr_kind;    /* enum prof_kind */
        };
        uint16_t pr_tag;
    };
    int32_t pr_waker;           /* off-CPU only: who ended the wait (pid, 0:
                                   the tick, -1: unknown) */
    /* Kinds other than cpu only, at least 1: a CPU sample weighs 1, and
     * the sampler never writes this word (prof_record_weight knows). */
    uint64_t pr_weight;
    uintptr_t pr_frames[PROF_FRAMES];
    /* What was the record's tail padding, one word per kind. */
    union {
        /* Heap records only: the requested size of the sampled block, so
         * that readers can tell objects (pr_weight / pr_size) from bytes. */
        uint64_t pr_size;
        /* Off-CPU only: the wait queue's or mutex's name (a string that
         * lives as long as the kernel: the definition's), or NULL. */
        const char *pr_name;
    };
};
/* 96 bytes, a multiple of 32: a slot's address is three instructions from
 * its index (x3, <<5, add), as it was at 80 bytes (x5, <<4, add); at 88
 * it took four, on the path of every sample. A size, not an alignment:
 * kmalloc promises 16 bytes, which is all the fields need. */
_Static_assert(sizeof(struct prof_record) == 96, "a record is 96 bytes");
/* The off-CPU fields live in what was padding: the CPU sample's layout,
 * and so its cost, did not move. */
_Static_assert(__builtin_offsetof(struct prof_record, pr_weight) == 16 &&
               __builtin_offsetof(struct prof_record, pr_frames) == 24 &&
               __builtin_offsetof(struct prof_record, pr_name) == 88,
               "the off-CPU fields fill the record's padding");

/* The interrupt a wake came in, as one word (an off-CPU blocked record's
 * pr_cost, and its waker record's): the vector + 1 (bits 0-15; the word
 * is 0 for a wake in task context), the class (enum prof_trace_irq,
 * kernel/prof/trace.h; bits 16-23) and the CPU it came on (24-31). The
 * waker's pid is then the task that interrupt interrupted. */
#define PROF_IRQ_WORD(vec1, class, cpu) \
    ((uint32_t)(vec1) | (uint32_t)(class) << 16 | (uint32_t)(cpu) << 24)
#define PROF_IRQ_VEC1(w)    ((w) & 0xffffu)
#define PROF_IRQ_CLASS(w)   ((w) >> 16 & 0xffu)
#define PROF_IRQ_CPU(w)     ((w) >> 24)

/* pr_tag for a record of kind taken by the tick (or not): little-endian,
 * pr_tick the low byte (both architectures Sonde runs on). */
#define PROF_TAG(tick, kind) ((uint16_t)((unsigned)(tick) | (unsigned)(kind) << 8))

/* a + b, or UINT64_MAX where the sum would wrap: a fold's weights add up
 * without ever wrapping round to a small figure. */
static inline uint64_t prof_weight_add(uint64_t a, uint64_t b)
{
    return a + b < a ? UINT64_MAX : a + b;
}

/* What a record weighs: 1 for a CPU sample, else its pr_weight. */
static inline uint64_t prof_record_weight(const struct prof_record *r)
{
    return r->pr_kind == PROF_KIND_CPU ? 1 : r->pr_weight;
}

/* The objects a record stands for, in 1/65536ths: a heap sample's weight
 * over its requested size (the same scale as its bytes), a lock record's
 * waits; 1 otherwise. */
static inline uint64_t prof_record_objects_q16(const struct prof_record *r)
{
    if (r->pr_kind == PROF_KIND_LOCK)
        return (uint64_t)r->pr_waits << 16;     /* a lock record's waits */
    if (r->pr_kind != PROF_KIND_HEAP || r->pr_size == 0)
        return 1u << 16;
    if (r->pr_weight < 1ull << 47)
        return ((r->pr_weight << 16) + r->pr_size / 2) / r->pr_size;
    return r->pr_weight / r->pr_size << 16;
}
