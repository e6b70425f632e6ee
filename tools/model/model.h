/* tools/model/model.h: sonde-prof's profile in memory.
 *
 * Raw profiles (uapi/profile_raw.h) from one or more kernels are loaded as
 * chains of addresses; each distinct (ELF, address, pc-or-return) becomes
 * one location, symbolized once (tools/model/sym.c) into frames. Every
 * writer (folded, SVG, pprof, text) reads this and nothing else, so a
 * writer can be tested with hand-made frames and no ELF at all.
 *
 * Host pipeline: prefix sp_. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "uapi/profile_raw.h"

#define SP_ERR_MAX 512

/* Every writer's allocations: out of memory ends the tool (exit 2, a
 * message on stderr), so no writer carries a failure path for it. */
void *sp_xcalloc(size_t n, size_t size);
/* Doubles *cap until it holds need elements of size bytes; ptr may be NULL. */
void *sp_grow(void *ptr, size_t *cap, size_t need, size_t size);

/* One function frame; inlined calls expand one address into several. */
struct sp_frame {
    const char *pf_func;        /* never NULL: "0x..." when nothing is known */
    const char *pf_file;        /* NULL when unknown */
    unsigned pf_line;           /* 0 when unknown */
    unsigned pf_func_line;      /* the function's declaration line, or 0 */
};

/* The map of an off-CPU chain's reason frame ("[waitq virtio-rx]"): a
 * location of no image, named when made (sp_loc_reason), which no ELF
 * names and pprof gives no mapping. */
#define SP_MAP_REASON 0xffffffffu

struct sp_loc {
    uint64_t pl_addr;           /* as sampled; a reason's: its index */
    bool pl_ret;                /* a return address: named from addr - 1 */
    unsigned pl_map;            /* index into prof.maps */
    uint64_t pl_id;             /* 1-based, unique: pprof's location id */
    const char *pl_sym;         /* ELF symbol holding the lookup address */
    uint64_t pl_sym_off;        /* pl_addr - the symbol's start */
    unsigned pl_nframes;
    struct sp_frame *pl_frames;     /* innermost first; NULL until named */
};

struct sp_chain {
    uint64_t c_count;
    uint64_t c_weight;          /* the samples' weights: c_count for a CPU
                                   profile; ns or bytes for the other kinds
                                   (its input's pi_hdr.ph_kind) */
    uint64_t c_objects;         /* heap: the objects the samples stand
                                   for; lock: the waits; c_count otherwise */
    uint32_t c_pid, c_cpu;
    char c_task[PRAW_TASK_MAX + 1];
    unsigned c_input;
    unsigned c_depth;
    struct sp_loc *c_locs[PRAW_FRAMES];     /* [0] the pc, then callers */
    /* Off-CPU chains (kind offcpu): every frame a return address, the
     * reason as a frame below them (c_reason, "[waitq NAME]"), and who
     * ended the wait: c_waker a pid (0 the tick, PRAW_WAKER_NONE nobody),
     * its chain at the wake in c_wlocs. Lock chains (kind lock, c_lock):
     * the holder's chain at its release, every frame a return address,
     * c_why and c_name the lock's type and name, c_reason the lock
     * ("[mutex NAME]") as the root above the holder's task, no waker.
     * Else c_why PRAW_WHY_NONE and c_reason NULL. */
    bool c_lock;
    uint8_t c_why;
    char c_name[PRAW_NAME_MAX + 1];
    int32_t c_waker;
    char c_wtask[PRAW_TASK_MAX + 1];    /* the waker's name, "" unknown */
    unsigned c_wdepth;
    struct sp_loc *c_wlocs[PRAW_FRAMES];
    struct sp_loc *c_reason;
    /* A wall-clock profile's CPU chain: its share of its task's time on
     * the CPU (sp_profile_wall_fill); 0: its samples times the period. */
    uint64_t c_cpu_ns;
};

/* One kernel image: a pprof mapping. */
struct sp_map {
    const char *pm_path;
    char pm_build_id[PRAW_BUILD_ID_HEX + 1];
    uint64_t pm_start, pm_limit;    /* the image's address range */
    bool pm_dwarf;                  /* file:line and inlines are known */
};

struct sp_input {
    const char *pi_origin;      /* where the text came from, for messages */
    const char *pi_kernel;      /* the `kernel` label */
    unsigned pi_map;
    struct praw_header pi_hdr;
    uint64_t pi_period_ns;      /* one sample's worth of cpu time */
    /* From a stream (record -d over 2 s): its loss on the wire, beside
     * the kernel's own drops (pi_hdr.ph_dropped), and what became of the
     * kernel when that is worth saying ("stopped answering at 5.2 s"). */
    bool pi_stream;
    uint64_t pi_lost_records, pi_lost_dgrams;
    const char *pi_note;        /* NULL: nothing to say */
    bool pi_negate;             /* pprof: its values negated (a diff's base) */
};

struct sp_profile {
    struct sp_input *inputs;
    unsigned ninputs;
    struct sp_map *maps;
    unsigned nmaps;
    struct sp_chain *chains;
    size_t nchains, capchains;
    struct sp_loc **locs;       /* in id order: locs[i]->pl_id == i + 1 */
    size_t nlocs, caplocs;
    struct sp_loc **hash;       /* open addressing over locs */
    size_t hashcap;
    struct sp_loc **reasons;    /* the reason locations (sp_loc_reason) */
    size_t nreasons, capreasons;
    char **strs;                /* every string sp_strdup made */
    size_t nstrs, capstrs;
};

/* All of these exit(2) on out-of-memory: a host tool has nothing better
 * to do. Error returns are -1 with err filled. */
void sp_profile_init(struct sp_profile *p);
void sp_profile_free(struct sp_profile *p);
const char *sp_strdup(struct sp_profile *p, const char *s);

unsigned sp_profile_add_map(struct sp_profile *p, const char *path);

/* Parses one raw profile's text and adds its chains, labelled kernel, with
 * addresses in map. origin names the text in messages. */
int sp_profile_add_raw(struct sp_profile *p, const char *text, size_t len,
                 const char *origin, const char *kernel, unsigned map,
                 char *err, size_t errcap);

/* An input made in memory, not parsed from a raw text (serve's
 * selections of its history): header h, labelled kernel, with addresses
 * in map; its index. Its chains follow, each through sp_profile_add_chain
 * as a raw profile's line (the caller may then set the chain's 64-bit
 * counts beyond what a line holds). No check is made here: h and the
 * chains must be what praw_parse would accept. */
unsigned sp_profile_add_input(struct sp_profile *p, const struct praw_header *h,
                              const char *origin, const char *kernel, unsigned map);
struct sp_chain *sp_profile_add_chain(struct sp_profile *p, unsigned input,
                                      const struct praw_chain *rc);

/* The location of (map, addr, pc or return address), made on first use
 * (unnamed: pl_frames NULL). For a caller that names addresses one by one
 * as they come (top) rather than a whole profile at once. */
struct sp_loc *sp_loc_get(struct sp_profile *p, unsigned map, uint64_t addr,
                              bool ret);

/* The reason frame of an off-CPU chain: one location per distinct
 * "[why]" or "[why name]", named so (pl_map SP_MAP_REASON). */
struct sp_loc *sp_loc_reason(struct sp_profile *p, unsigned why, const char *name);
/* "[sleep]", "[waitq virtio-rx]", "[runnable]": the kernel's leaf. */
void sp_reason_name(unsigned why, const char *name, char *buf, size_t cap);
/* Whether any input is an off-CPU profile, and any a CPU profile: with
 * both, the inputs are the two halves of a wall-clock profile. */
bool sp_profile_has_kind(const struct sp_profile *p, unsigned kind);
/* A task's name as the profile knows it (a chain of that pid in the
 * same input), or NULL. */
const char *sp_task_of_pid(const struct sp_profile *p, unsigned input, uint32_t pid);
/* An off-CPU chain's waker's name: the raw profile's, else a chain's of
 * that pid, else NULL. */
const char *sp_waker_task(const struct sp_profile *p, const struct sp_chain *c);

/* A wall-clock profile (a kernel's CPU input and its off-CPU input, by
 * the same kernel label): each task's time on its CPU is the window less
 * its time off it, shared among its CPU chains in proportion to their
 * samples (c_cpu_ns), as the kernel's `profile wall` shares it; so a
 * task's chains add up to the window, whatever the sample source's real
 * rate. Idle (pid 0) is left to samples times the period. */
void sp_profile_wall_fill(struct sp_profile *p);
/* A CPU chain's time: c_cpu_ns when set, else its samples times its
 * input's period. */
uint64_t sp_chain_cpu_ns(const struct sp_profile *p, const struct sp_chain *c);

/* Total samples over every input. */
uint64_t sp_profile_total(const struct sp_profile *p);

/* Names every location nobody named: "0x<addr>" with no file. */
void sp_profile_name_unknown(struct sp_profile *p);

/* Reads a whole file into a NUL-terminated heap buffer; -1 with err. */
int sp_profile_read_file(const char *path, char **text, size_t *len,
                   char *err, size_t errcap);
