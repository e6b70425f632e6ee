/* kernel/profiler_internal.h: what the sampler (profiler.c) hands the
 * reporter (profiler_report.c). Not for the rest of the kernel.
 *
 * Record raw, present later: the sampler never formats, the reporter never
 * looks at per-CPU sampling state. Stop freezes the run into a snapshot
 * and the reporter reads only that, so a new output format is a new
 * reader of the same snapshot. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hal/cpu.h"
#include "kernel/profiler.h"

struct printer;

struct prof_record {
    int32_t pr_pid;
    uint32_t pr_cost;           /* cycles this sample took */
    uint8_t pr_depth;           /* 1..PROFILER_FRAMES */
    uint8_t pr_tick;            /* 1: taken by the tick, 0: by the counter */
    uintptr_t pr_frames[PROFILER_FRAMES];
};

/* One run as Stop left it. The record arrays are the per-CPU buffers
 * themselves, not copies: no sampler writes them again until the next
 * Start, and Start cannot happen while the run lock is held, which it is
 * for as long as a snapshot is being read. */
struct prof_snapshot {
    const struct prof_record *ps_recs[MAX_CPUS];  /* NULL: no buffer */
    uint32_t ps_count[MAX_CPUS];      /* records, at most the buffer's size */
    uint32_t ps_from_pmu[MAX_CPUS];   /* of those, taken by the counter's NMI */
    uint32_t ps_from_tick[MAX_CPUS];  /* and by the tick */
    bool ps_in_window[MAX_CPUS];      /* online with a buffer at Start */
    uint32_t ps_dropped;              /* buffer full or nested, all CPUs */
    unsigned ps_ms;                   /* the window asked for */
    int ps_pid;                       /* PROFILER_ALL or the filter */
    uint64_t ps_cycles;               /* cycles_now across the window */
    unsigned ps_ncpus;                /* CPUs online with a buffer at Start */
    bool ps_counter;                  /* the probe found a usable counter */
    const char *ps_source;            /* pmu_source_name() */
    const char *ps_note;              /* pmu_probe_note(), or NULL */
};

/* The per-CPU buffer size (records) that Start gives a window of ms at
 * hz samples per second, margin included (profiler.c). */
uint32_t prof_records_for(unsigned ms, unsigned hz);

struct prof_report_opts {
    unsigned ro_chains;               /* text: chains to print, 1..PROFILER_CHAINS */
    enum profiler_format ro_format;   /* text, folded or raw */
};

/* The report of a snapshot, to p, in o's format. Text: header, cost,
 * chains, overflow line or an empty-report message; folded and raw go to
 * prof_export. Task context (allocates the chain table). PROFILER_OK or
 * PROFILER_ENOMEM (message printed). */
int prof_report(const struct prof_snapshot *s, const struct prof_report_opts *o,
                struct printer *p);

/* Every distinct chain of a snapshot, folded stacks or raw chains
 * (kernel/profiler_export.c, uapi/profile_raw.h), to p. Task context:
 * allocates a fold table sized from the number of samples and looks task
 * names up. PROFILER_OK or PROFILER_ENOMEM (message printed). */
int prof_export(const struct prof_snapshot *s, bool folded, struct printer *p);

/* ---- the folds' hash index (kernel/profiler_fold.c) ------------------
 *
 * Both folds (the text report, the exports) find a record's chain again in
 * time independent of the chains seen so far: every distinct key is
 * appended to an array its fold owns, the first time it is seen, and found
 * again through this open-addressing index. The index has twice the slots
 * of its array's capacity (so it is at most half full and a probe ends at
 * an empty slot); a slot holds an entry's position + 1, 0 when empty.
 * Arrays start small and double when full (amortised linear): sized for
 * every record up front they would cost more in page zeroing (the page
 * allocator clears what it hands out) than the whole fold. */
struct prof_index {
    uint32_t *slot;
    uint32_t cap;               /* entries the array holds; slots = 2 * cap */
    unsigned shift;             /* 64 - log2(slots): a hash's top bits index */
};

/* Multiplicative (Fibonacci) hashing: two instructions a word, and the
 * index takes the product's top bits, where every bit of the input has
 * had its say (the low bits of a product see only the low bits of its
 * factors). A key's hash is prof_mix folded over its words from a seed. */
static inline uint64_t prof_mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x9e3779b97f4a7c15ull;
}

/* A zeroed index for cap (a power of two) entries, replacing ix's slots;
 * false: no memory, and ix unchanged. */
bool prof_index_init(struct prof_index *ix, uint32_t cap);
void prof_index_free(struct prof_index *ix);
/* Where h's probe sequence starts; the next slot is (i + 1) & (2 cap - 1). */
static inline uint32_t prof_index_first(const struct prof_index *ix, uint64_t h)
{
    return (uint32_t)(h >> ix->shift);
}
/* The first empty slot on h's probe sequence. */
uint32_t *prof_index_free_slot(const struct prof_index *ix, uint64_t h);
/* Double *arr, n entries of size bytes each (copied), and rebuild ix for
 * it, hashing entry i with hash(arr, i). False: no memory, nothing changed. */
bool prof_index_grow(struct prof_index *ix, void **arr, size_t size, uint32_t n,
                     uint64_t (*hash)(const void *arr, uint32_t i));

/* The k-th smallest of a[0..n) (0-based; n >= 1, k < n), exactly, in
 * expected linear time; reorders a. */
uint32_t prof_select(uint32_t *a, uint32_t n, uint32_t k);

/* "cpus: 0 pmu 1001, 1 tick 98, 2 none": each CPU in the window and how
 * many of its samples came from the counter and from the tick (a CPU
 * that armed late has both). */
void prof_print_sources(const struct prof_snapshot *s, struct printer *p);

/* ---- the ring, for the stream (kernel/profstream.c) -------------------
 *
 * While a stream runs, each CPU's buffer is a single-producer,
 * single-consumer ring: the sampler on that CPU produces (prof_sample),
 * the stream's one task consumes, in this order: prof_ring_avail (acquire
 * of the producer index: the records it counts are whole), copy each
 * record out with prof_ring_at, then prof_ring_release (release of the
 * consumer index: the sampler reuses a slot only after the copy). Ring
 * indices count from 0 at the stream's start and wrap at 2^32. */

/* Take the profiler for a stream: the busy flag, a ring for every online
 * CPU big enough for 4 drain intervals of drain_ms at the source's rate
 * and at least PROF_STREAM_MIN_RECS, sampling started for pid
 * (PROFILER_ALL or a pid). PROFILER_OK, PROFILER_EBUSY (a run, report or
 * stream holds it; "profile: busy..." printed) or PROFILER_ENOMEM
 * (printed). *pmu: the counter samples, else the tick. */
#define PROF_STREAM_MIN_RECS 512u
int prof_stream_begin(int pid, unsigned drain_ms, bool *pmu, struct printer *p);
/* Stop sampling and wait out the samplers: after it no ring grows. */
void prof_stream_stop(void);
/* Give the profiler back (after the final drain). The windowed run's
 * snapshot is gone: report again and profile_cpus say there is none. */
void prof_stream_end(void);
/* The stream (or nobody, NULL) that holds the profiler, for the busy
 * messages of the windowed commands: profiler.c prints "profile: busy
 * (<it>)". Written by the stream under the busy flag. */
void prof_set_busy_note(const char *note);

/* CPUs the stream drains: online with a ring at its start. */
bool prof_ring_in_stream(unsigned cpu);
uint32_t prof_ring_cap(unsigned cpu);
/* Records waiting in cpu's ring, the oldest numbered *first. */
uint32_t prof_ring_avail(unsigned cpu, uint32_t *first);
/* The record numbered idx, waiting (between first and first + avail). */
const struct prof_record *prof_ring_at(unsigned cpu, uint32_t idx);
/* Every record before upto has been copied out: its slot is free. */
void prof_ring_release(unsigned cpu, uint32_t upto);
/* Samples cpu dropped since the start (ring full, nested). */
uint32_t prof_ring_drops(unsigned cpu);
