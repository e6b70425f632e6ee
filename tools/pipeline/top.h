/* tools/pipeline/top.h: `sonde-prof top`'s model: the last W seconds of
 * samples from one or more kernels, by function.
 *
 * Transport-free: whoever has samples (the replay of a raw profile, the
 * stream collector) calls top_add_sample with a time on one clock (the
 * host's monotonic clock, whatever kernel the sample came from: "the last
 * 5 seconds" are the user's seconds) and top_advance as time passes. The
 * window is W one-second buckets: a sample lands in the bucket of its
 * second, and a whole bucket falls off when its second leaves the window,
 * so expiry costs one pass over one second's distinct chains.
 *
 * Addresses become functions through a naming callback (tools/pipeline/top_ui.c
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
 * per sample. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TOP_KERNELS_MAX   16
#define TOP_DEPTH_MAX     8          /* PRAW_FRAMES, PSTR_FRAMES */
#define TOP_WINDOW_MIN    1
#define TOP_WINDOW_MAX    3600       /* seconds */
#define TOP_NAME_MAX      63         /* a kernel's label as shown */
#define TOP_SOURCE_MAX    63

/* The caller of an occurrence at the chain's outermost frame: the walk
 * ended there (ROOT), or was cut at TOP_DEPTH_MAX frames (CUT). */
#define TOP_CALLER_ROOT   (-1)
#define TOP_CALLER_CUT    (-2)

/* Names (kernel, addr): addr is a pc when !ret, a return address (named
 * from addr - 1) when ret. Never NULL; the model copies the string. */
typedef const char *(*top_name_fn)(void *ctx, unsigned kernel, uint64_t addr,
                                   bool ret);

struct top_model;

/* window_s in TOP_WINDOW_MIN..TOP_WINDOW_MAX. Exits 2 when out of memory
 * (prof_xcalloc), like every sonde-prof allocation. */
struct top_model *top_new(unsigned window_s, top_name_fn name, void *ctx);
void top_free(struct top_model *m);

/* Kernel k (0-based, < TOP_KERNELS_MAX) exists from its first info or
 * sample on; nkernels is one past the highest seen. lost: samples the
 * kernel dropped or the wire lost, since the start. */
void top_set_kernel_info(struct top_model *m, unsigned k, const char *name,
                         const char *source, uint64_t lost);

/* One sample at t_ns: frames[0] is the pc, then return addresses,
 * innermost first; depth 1..TOP_DEPTH_MAX (more are ignored). A sample
 * older than the window is not counted (returns false). Moves the
 * window's end forward to t_ns if later. */
bool top_add_sample(struct top_model *m, unsigned k, uint64_t t_ns,
                    const uint64_t *frames, unsigned depth);

/* Moves the window's end to now_ns (never back): seconds that left it
 * are forgotten. */
void top_advance(struct top_model *m, uint64_t now_ns);

/* ---- reading it --------------------------------------------------------- */

struct top_kernel {
    char tk_name[TOP_NAME_MAX + 1];
    char tk_source[TOP_SOURCE_MAX + 1];
    uint64_t tk_lost;
    uint64_t tk_samples;        /* in the window */
};

unsigned top_window(const struct top_model *m);
unsigned top_nkernels(const struct top_model *m);
const struct top_kernel *top_kernel(const struct top_model *m, unsigned k);
/* Samples in the window, all kernels. */
uint64_t top_samples(const struct top_model *m);
/* The window's length so far in seconds: W once it is full; less at the
 * start (from the first sample or advance), so a rate is right at once. */
double top_span_s(const struct top_model *m);
const char *top_func_name(const struct top_model *m, int fid);

/* One function in the window, with its counts per kernel. */
struct top_row {
    int tr_fid;
    uint64_t tr_self, tr_total;                 /* all kernels */
    uint64_t tr_kself[TOP_KERNELS_MAX];
};

/* Every function with samples in the window, hottest first: self
 * descending, then total descending, then name. Returns how many there
 * are; fills at most cap. */
size_t top_rows(const struct top_model *m, struct top_row *rows, size_t cap);

struct top_caller {
    int tc_fid;                 /* a function, TOP_CALLER_ROOT or _CUT */
    uint64_t tc_count;          /* samples with this caller of it */
};

/* The callers of fid over the window, most frequent first (ties by
 * name, ROOT and CUT last). *samples: samples holding fid (its total).
 * Returns how many callers there are; fills at most cap. */
size_t top_callers(const struct top_model *m, int fid, struct top_caller *out,
                   size_t cap, uint64_t *samples);
