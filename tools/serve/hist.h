/* tools/serve/hist.h: `sonde-prof serve`'s history: every record streamed
 * from every kernel (up to SV_HIST_KERNELS, as many as the collector
 * takes), kept as counts per distinct stack in 10-second buckets for at
 * least the last hour; for the timeline, the fleet's records per second
 * and each kernel's per bucket.
 *
 * Memory is bounded by distinct stacks and buckets, never by samples nor
 * by kernels times seconds. A stack is (kernel, kind, pid, cpu, frames),
 * and for a heap record its block's requested size too, so that the
 * objects its bytes stand for are known (weight / size, as the raw
 * profile's OBJECTS); the table holds at most max_stacks of them alive at
 * once (a stack dies when the last bucket that counts it leaves the
 * history; each record counts under two, its kernel's and the fleet's:
 * sv_hist_key_fleet), and a bucket holds one entry per stack it counts
 * and one count per (kernel, kind) that sent it a record. With B =
 * SV_HIST_BUCKETS (361), S = max_stacks and K the kernels that sent
 * records (each streams one kind):
 *
 *     stacks  S x sizeof(struct sv_hist_stack)        (96 bytes)
 *     buckets at most B x S entries x 24 bytes        (an entry and its index)
 *             + B x K counts x 24 bytes               (a count and its index)
 *     seconds SV_HIST_SECONDS x 32 bytes              (the fleet's, per kind)
 *
 * SV_HIST_STACKS_DEFAULT (8192) bounds it at about 72 MB in the worst case
 * (every bucket holding every stack), and 4096 kernels add at most 35 MB;
 * a kernel with a few hundred distinct stacks needs a few MB. A record
 * whose stack is new while the table is full is not kept: it is counted
 * as over the bound, per bucket, kernel and kind, and the API says so.
 *
 * Time is the caller's: milliseconds on one clock that never goes back
 * (serve's: Unix ms, kept steady by the monotonic clock from its start),
 * so every kernel's seconds are the viewer's seconds.
 * A range [from, to) is answered with whole buckets: it is widened to the
 * buckets it touches, and the answer says which range that was.
 *
 * No I/O, no clock, no symbols: unit-tested on the host.
 * Serve layer: prefix sv_. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "uapi/profile_stream.h"

#define SV_HIST_BUCKET_MS      10000u
#define SV_HIST_BUCKETS        361u      /* the last hour whole, and the current one */
#define SV_HIST_SECONDS        (SV_HIST_BUCKETS * SV_HIST_BUCKET_MS / 1000u)
#define SV_HIST_KERNELS        4096u     /* as many as the collector takes */
#define SV_HIST_KINDS          (PSTR_KIND_LOCK + 1u)  /* a trace is kept apart (trace.h) */
#define SV_HIST_STACKS_MIN     16u
#define SV_HIST_STACKS_MAX     1048576u
#define SV_HIST_STACKS_DEFAULT 8192u
#define SV_HIST_REASONS        256u

struct sv_hist_key {
    uint64_t frames[PSTR_FRAMES];   /* frames[0] the pc, then return addresses */
    uint64_t size;                  /* heap: the blocks' requested size (its
                                       records' objects are weight / size); 0
                                       for every other kind */
    uint32_t pid;
    uint16_t cpu;
    uint16_t reason;                /* off-CPU: its reason's id in the history
                                       (sv_hist_reason); 0 for every other kind */
    uint16_t kernel;
    uint8_t kind, depth;
};
_Static_assert(SV_HIST_KERNELS - 1 <= UINT16_MAX, "a kernel's index fits its key");

/* The fleet's stacks: every record is counted under its kernel's own
 * stack and under its fleet stack, the same key with pid 0, CPU 0 and
 * kernel SV_HIST_FLEET_KEY(map) for the ELF its kernel runs (addresses of
 * two ELFs are never merged). A selection of the whole fleet, merged,
 * reads those alone: a bucket's few hundred, not its hundreds of
 * thousands. They count toward max_stacks like any. */
#define SV_HIST_MAPS           16u
#define SV_HIST_FLEET_KEY(map) (0xffffu - (map))
static inline bool sv_hist_key_fleet(const struct sv_hist_key *k)
{
    return k->kernel > 0xffffu - SV_HIST_MAPS;
}
static inline unsigned sv_hist_key_map(const struct sv_hist_key *k)
{
    return 0xffffu - k->kernel;
}

struct sv_hist_stack {
    struct sv_hist_key key;
    uint32_t refs;                  /* buckets counting it; 0: a free slot */
    uint32_t fleet;                 /* a kernel's own: its fleet stack's id
                                       (alive while it is: every bucket that
                                       counts it counts that too) */
};

_Static_assert(sizeof(struct sv_hist_stack) == 96, "the bound's figure (the header's)");

/* Which records a selection takes: a field < 0 takes every value. */
struct sv_hist_filter {
    int kernel;
    int64_t pid;
    int cpu;
    unsigned kind;                  /* PSTR_KIND_*: kinds are never mixed */
    bool merged;                    /* kernel, pid and cpu every value: the
                                       fleet's stacks (sv_hist_key_fleet) */
};

struct sv_hist;

/* max_stacks in SV_HIST_STACKS_MIN..SV_HIST_STACKS_MAX. Exits 2 when out
 * of memory, as every sonde-prof allocation. */
struct sv_hist *sv_hist_new(unsigned max_stacks);
void sv_hist_free(struct sv_hist *h);

/* One record of kernel at t_ms. Moves the history's end to t_ms if later
 * (buckets older than the hour leave, and the stacks only they counted
 * die). A record older than the history, of a kernel or kind out of
 * range, or of depth 0 is refused (false); one over the bound is counted
 * as such (true). */
bool sv_hist_add(struct sv_hist *h, unsigned kernel, uint16_t cpu,
                 const struct pstr_record *r, uint64_t t_ms);

/* Kernel's ELF is map (< SV_HIST_MAPS; 0 until said). */
void sv_hist_set_map(struct sv_hist *h, unsigned kernel, unsigned map);

/* Moves the history's end to now_ms (never back). */
void sv_hist_advance(struct sv_hist *h, uint64_t now_ms);

/* Called with a bucket's index (start / SV_HIST_BUCKET_MS) once, when the
 * history's end moves past it, before it can leave: serve writes it to
 * its store (tools/store/store.h) there. */
typedef void (*sv_hist_close_fn)(void *ctx, const struct sv_hist *h, uint64_t index);
void sv_hist_on_close(struct sv_hist *h, sv_hist_close_fn fn, void *ctx);

/* Every kernel's own stack bucket index counts (never a fleet stack,
 * sv_hist_key_fleet: those count the same records again), with its count
 * and weight; then, for
 * each kernel and kind with records over the bound in it, fn with key
 * NULL, the kernel and kind, and that number as count. Nothing when the
 * bucket is not held. */
typedef void (*sv_hist_entry_fn)(void *ctx, const struct sv_hist_key *key, unsigned kernel,
                                 unsigned kind, uint64_t count, uint64_t weight);
void sv_hist_bucket_each(const struct sv_hist *h, uint64_t index, sv_hist_entry_fn fn,
                         void *ctx);

/* ---- reading ------------------------------------------------------------ */

uint64_t sv_hist_now(const struct sv_hist *h);
/* The oldest time still held (the start of the oldest bucket kept). */
uint64_t sv_hist_oldest(const struct sv_hist *h);
unsigned sv_hist_live_stacks(const struct sv_hist *h);
unsigned sv_hist_max_stacks(const struct sv_hist *h);
/* Entries held by all buckets: what the memory bound counts. */
size_t sv_hist_entries(const struct sv_hist *h);
/* Records not kept because the table was full, since the start. */
uint64_t sv_hist_over(const struct sv_hist *h);
/* Off-CPU reason id (a key's reason, 1 ..) as the record had it: why
 * (PSTR_WHY_*) and the queue's or mutex's name. False for an unknown id. */
bool sv_hist_reason(const struct sv_hist *h, unsigned id, uint8_t *why, const char **name);
/* Kinds that ever had a record: bit 1 << PSTR_KIND_*. */
unsigned sv_hist_kinds(const struct sv_hist *h);

/* A selection: [from_ms, to_ms) widened to whole buckets and cut to what
 * is held; the counts of every stack the filter takes, added over its
 * buckets. */
struct sv_hist_sel {
    uint64_t from_ms, to_ms;        /* the range answered */
    uint64_t samples, weight;
    uint64_t over;                  /* records over the bound in it */
    size_t n;
    const struct sv_hist_key **keys;   /* valid until the next add or advance */
    uint64_t *counts, *weights;
};

/* 0, or -1 when to_ms <= from_ms. */
int sv_hist_select(const struct sv_hist *h, uint64_t from_ms, uint64_t to_ms,
                   const struct sv_hist_filter *f, struct sv_hist_sel *out);
void sv_hist_sel_free(struct sv_hist_sel *s);

/* Records of kind from every kernel in whole second sec (t_ms / 1000),
 * or 0 when that second is not held. */
uint32_t sv_hist_rate(const struct sv_hist *h, unsigned kind, uint64_t sec);
/* Records of kernel and kind in the bucket of index idx (t_ms /
 * SV_HIST_BUCKET_MS), over the bound included; 0 when it is not held. */
uint64_t sv_hist_kernel_records(const struct sv_hist *h, unsigned kernel, unsigned kind,
                                uint64_t idx);
/* Every kernel's records of kind over the buckets of [from_ms, to_ms)
 * held: added to n[k] for each kernel k < nk (n is the caller's). */
void sv_hist_kernel_sums(const struct sv_hist *h, unsigned kind, uint64_t from_ms,
                         uint64_t to_ms, uint64_t *n, unsigned nk);
