/* tools/model/top.h: `sonde-prof top`'s model: the last W seconds of
 * samples from one or more kernels, by function.
 *
 * Transport-free: whoever has samples (the replay of a raw profile, the
 * stream collector) calls sp_top_add_sample with a time on one clock (the
 * host's monotonic clock, whatever kernel the sample came from: "the last
 * 5 seconds" are the user's seconds) and sp_top_advance as time passes. The
 * window is W one-second buckets: a sample lands in the bucket of its
 * second, and a whole bucket falls off when its second leaves the window,
 * so expiry costs one pass over one second's distinct chains.
 *
 * Addresses become functions through a naming callback (tools/cmd/top.c
 * names them with libdw, the unit tests with a table), called once per
 * distinct (kernel, address, pc-or-return). A function is the one the
 * code belongs to: for an address inside inlined code, the outermost of
 * its frames (the ELF symbol's function), as perf top shows it, so an
 * inlined spin_lock is charged to the function it was inlined into.
 *
 * Self: samples whose leaf (frame 0) is the function. Total: samples with
 * the function anywhere in the chain, once per sample however often it
 * recurs. Callers of a function: for each sample holding it, the
 * functions one frame up from each of its occurrences, each counted once
 * per sample.
 *
 * Host pipeline: prefix sp_. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SP_TOP_KERNELS_MAX   16
#define SP_TOP_DEPTH_MAX     8          /* PRAW_FRAMES, PSTR_FRAMES */
#define SP_TOP_WINDOW_MIN    1
#define SP_TOP_WINDOW_MAX    3600       /* seconds */
#define SP_TOP_NAME_MAX      63         /* a kernel's label as shown */
#define SP_TOP_SOURCE_MAX    63

/* The caller of an occurrence at the chain's outermost frame: the walk
 * ended there (ROOT), or was cut at SP_TOP_DEPTH_MAX frames (CUT). */
#define SP_TOP_CALLER_ROOT   (-1)
#define SP_TOP_CALLER_CUT    (-2)

/* Names (kernel, addr): addr is a pc when !ret, a return address (named
 * from addr - 1) when ret. Never NULL; the model copies the string. */
typedef const char *(*sp_top_name_fn)(void *ctx, unsigned kernel, uint64_t addr,
                                   bool ret);

struct sp_top_model;

/* window_s in SP_TOP_WINDOW_MIN..SP_TOP_WINDOW_MAX. Exits 2 when out of memory
 * (sp_xcalloc), like every sonde-prof allocation. */
struct sp_top_model *sp_top_new(unsigned window_s, sp_top_name_fn name, void *ctx);
void sp_top_free(struct sp_top_model *m);

/* Kernel k (0-based, < SP_TOP_KERNELS_MAX) exists from its first info or
 * sample on; nkernels is one past the highest seen. lost: samples the
 * kernel dropped or the wire lost, since the start. */
void sp_top_set_kernel_info(struct sp_top_model *m, unsigned k, const char *name,
                         const char *source, uint64_t lost);

/* One sample at t_ns: frames[0] is the pc, then return addresses,
 * innermost first; depth 1..SP_TOP_DEPTH_MAX (more are ignored). A sample
 * older than the window is not counted (returns false). Moves the
 * window's end forward to t_ns if later. */
bool sp_top_add_sample(struct sp_top_model *m, unsigned k, uint64_t t_ns,
                    const uint64_t *frames, unsigned depth);

/* The same, weighing weight (not 1): an off-CPU interval's microseconds
 * (`top --off`), whose frames[0] is its reason's pseudo-address. */
bool sp_top_add_weighted(struct sp_top_model *m, unsigned k, uint64_t t_ns,
                         const uint64_t *frames, unsigned depth, uint64_t weight);
/* What a sample counts, for the header: "samples" (the default) or, for
 * weighted ones, their unit ("us off-CPU"); a string that outlives m. */
void sp_top_set_unit(struct sp_top_model *m, const char *unit);
const char *sp_top_unit(const struct sp_top_model *m);

/* Moves the window's end to now_ns (never back): seconds that left it
 * are forgotten. */
void sp_top_advance(struct sp_top_model *m, uint64_t now_ns);

/* ---- reading it --------------------------------------------------------- */

struct sp_top_kernel {
    char tk_name[SP_TOP_NAME_MAX + 1];
    char tk_source[SP_TOP_SOURCE_MAX + 1];
    uint64_t tk_lost;
    uint64_t tk_samples;        /* in the window */
};

unsigned sp_top_window(const struct sp_top_model *m);
unsigned sp_top_nkernels(const struct sp_top_model *m);
const struct sp_top_kernel *sp_top_kernel(const struct sp_top_model *m, unsigned k);
/* Samples in the window, all kernels. */
uint64_t sp_top_samples(const struct sp_top_model *m);
/* The window's length so far in seconds: W once it is full; less at the
 * start (from the first sample or advance), so a rate is right at once. */
double sp_top_span_s(const struct sp_top_model *m);
const char *sp_top_func_name(const struct sp_top_model *m, int fid);

/* One function in the window, with its counts per kernel. */
struct sp_top_row {
    int tr_fid;
    uint64_t tr_self, tr_total;                 /* all kernels */
    uint64_t tr_kself[SP_TOP_KERNELS_MAX];
};

/* Every function with samples in the window, hottest first: self
 * descending, then total descending, then name. Returns how many there
 * are; fills at most cap. */
size_t sp_top_rows(const struct sp_top_model *m, struct sp_top_row *rows, size_t cap);

struct sp_top_caller {
    int tc_fid;                 /* a function, SP_TOP_CALLER_ROOT or _CUT */
    uint64_t tc_count;          /* samples with this caller of it */
};

/* The callers of fid over the window, most frequent first (ties by
 * name, ROOT and CUT last). *samples: samples holding fid (its total).
 * Returns how many callers there are; fills at most cap. */
size_t sp_top_callers(const struct sp_top_model *m, int fid, struct sp_top_caller *out,
                   size_t cap, uint64_t *samples);
