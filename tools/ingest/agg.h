/* tools/ingest/agg.h: streamed records (uapi/profile_stream.h) counted by
 * chain, and written out as a raw profile (uapi/profile_raw.h), so that a
 * stream goes through the very pipeline a `profile ... raw` reply does:
 * the strict parser, the build-id check, the model, every writer, and
 * `record -r` keeps it for `report`.
 * Host pipeline: prefix sp_. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include "tools/ingest/stream.h"

struct sp_agg_chain {
    uint64_t count;             /* records */
    uint64_t weight;            /* their weights (a CPU sample weighs 1) */
    uint64_t objects_q16;       /* heap: the objects they stand for; lock:
                                   the waits their releases ended; in
                                   1/65536ths (sp_agg_objects_q16) */
    uint32_t pid;
    uint16_t cpu;
    uint8_t depth;
    uint8_t kind;               /* PSTR_KIND_*: kinds are never folded together */
    uint64_t frames[PSTR_FRAMES];
    /* Off-CPU: the reason, queue, waker and waker's chain are the chain's
     * too (the kernel's `profile off` folds them apart). */
    uint8_t why, wdepth;
    int32_t waker;
    char name[PSTR_NAME_MAX + 1];
    uint64_t wframes[PSTR_FRAMES];
};

struct sp_agg {
    struct sp_agg_chain *tab;     /* the chains, tab[0 .. n), in order of arrival */
    size_t cap, n;                /* tab's room; chains */
    uint32_t *idx;                /* open addressing over tab: i + 1, 0 empty */
    size_t icap;
};

void sp_agg_init(struct sp_agg *a);
void sp_agg_free(struct sp_agg *a);
/* One record of cpu (exits 2 when out of memory, as the model does). An
 * off-CPU record without its reason (no PSTR_REC_OFF part: no kernel
 * sends one) cannot be written as a raw off-CPU chain: not added. */
void sp_agg_add(struct sp_agg *a, uint16_t cpu, const struct pstr_record *r);
/* count records of r's chain at once, weighing weight in all (a history
 * already counted, tools/serve/hist.h); r->weight is not read, a heap
 * record's r->size is (its objects: weight / size). */
void sp_agg_add_n(struct sp_agg *a, uint16_t cpu, const struct pstr_record *r,
                  uint64_t count, uint64_t weight);

/* The objects a heap record stands for, in 1/65536ths: its weight over
 * its requested size, rounded (1 for a size of 0, or any other kind), as
 * the kernel counts them for the raw profile's OBJECTS. */
uint64_t sp_agg_objects_q16(const struct pstr_record *r);

/* The raw profile of every record of kind (PRAW_KIND_*) added, with the
 * stream's META (build id, source), the kernel's drops and window ms; task
 * names from the stream's latest META ("-" for pid 0 when it names none,
 * "pid-N" otherwise). A kind other than cpu says so in the header and
 * gives each chain its weight, a heap chain its objects too, an off-CPU
 * chain its why=, waker= and the waker's chain after " |", as `profile
 * off ... raw` prints them, under source=sched (uapi/profile_raw.h).
 * A malloc'd, NUL-terminated text and its length in *len; NULL when the
 * stream never sent its META (nothing says which kernel it was). */
char *sp_agg_raw(const struct sp_agg *a, const struct sp_stream *s, unsigned kind,
                 uint32_t ms, size_t *len);
/* The same with the kernel's drops given: a kernel streamed several
 * times (record --sample) dropped what all its streams did. */
char *sp_agg_raw_drops(const struct sp_agg *a, const struct sp_stream *s, unsigned kind,
                       uint32_t ms, uint64_t drops, size_t *len);

struct sp_profile;
/* The same records added to p as one input of kind, labelled kernel,
 * addresses in map, made in memory as the model's types (no text to
 * print and parse back): the header and chains sp_agg_raw_drops would
 * write, each chain one whatever its count. 0, or -1 (nothing added)
 * when the stream never sent its META. */
int sp_agg_profile(const struct sp_agg *a, const struct sp_stream *s, unsigned kind,
                   uint32_t ms, uint64_t drops, struct sp_profile *p, const char *kernel,
                   unsigned map);
