/* kernel/prof/record.h: one record, as the sampler writes it into a ring
 * and every reader (fold, report, export, stream) takes it.
 *
 * A record is a kind, a weight and a chain. The kind says what was
 * measured and the weight how much: a CPU sample weighs 1 (one period of
 * its source); the off-CPU kind will weigh nanoseconds and the heap kind
 * bytes. Readers fold records of one kind by chain and add the weights,
 * never mixing kinds. The same kind and weight travel in the raw profile
 * (uapi/profile_raw.h) and the stream (uapi/profile_stream.h). */
#pragma once
#include <stdint.h>
#include "kernel/prof/prof.h"

enum prof_kind {
    PROF_KIND_CPU = 0,          /* a sample of the running pc; weight 1 */
    PROF_KIND_MAX = 2,          /* kinds a reader may meet: cpu, and the
                                   off-CPU (1, ns) and heap (2, bytes) to
                                   come; anything above is corrupt */
};

struct prof_record {
    int32_t pr_pid;
    uint32_t pr_cost;           /* cycles this sample took */
    uint8_t pr_depth;           /* 1..PROF_FRAMES */
    /* pr_tick and pr_kind side by side: from the sampler both are
     * constants, and GCC stores them as one halfword. */
    uint8_t pr_tick;            /* 1: taken by the tick, 0: by the counter */
    uint8_t pr_kind;            /* enum prof_kind */
    uint64_t pr_weight;         /* 1 for a CPU sample */
    uintptr_t pr_frames[PROF_FRAMES];
};
