/* tools/model/trace.h: a scheduling trace in memory (record --trace).
 *
 * One kernel's raw trace (uapi/trace_raw.h), its events in time order as
 * the kernel printed them, and its CPU samples' addresses as locations of
 * a profile (tools/model/model.h), so that the ELF names them exactly as
 * it names a profile's (sym.c: functions, files, lines, inlines). Every
 * trace writer (Perfetto, Chrome JSON, text, the page) reads this and
 * nothing else, so a writer can be tested with hand-made events.
 *
 * Host pipeline: prefix sp_trace_. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tools/model/model.h"
#include "uapi/trace_raw.h"

struct sp_trace {
    struct traw_header st_hdr;
    const char *st_origin;          /* where the text came from, for messages */
    const char *st_kernel;          /* the kernel's label */
    struct traw_event *st_ev;       /* in time order */
    size_t st_nev, st_capev;
    /* Each sample event's chain in st_prof (one count), by event index;
     * (size_t)-1 for an event that is not a sample. */
    size_t *st_chain;
    /* The samples' profile: one input, one map (the kernel ELF), a
     * chain per sample, named by sp_elf_symbolize as a profile is. */
    struct sp_profile st_prof;
    unsigned st_map, st_input;
};

void sp_trace_init(struct sp_trace *t);
void sp_trace_free(struct sp_trace *t);

/* A trace built event by event (a parser's, a test's): the header, the
 * label, and path the ELF that names the samples (a map of st_prof, the
 * samples' input made here). Then each event in time order; a sample's
 * frames become a chain of st_prof. */
void sp_trace_begin(struct sp_trace *t, const struct traw_header *h,
                    const char *origin, const char *kernel, const char *path);
void sp_trace_add_event(struct sp_trace *t, const struct traw_event *e);
/* The same with the samples' addresses in map, one st_prof has already
 * (serve's: every ELF's map, in its order). */
void sp_trace_begin_map(struct sp_trace *t, const struct traw_header *h,
                        const char *origin, const char *kernel, unsigned map);

/* Parses one raw trace's text into t (empty: just init'd), labelled
 * kernel, origin naming it in messages; samples' addresses go to a map
 * of path (the ELF, opened by the caller). -1 with err on a parse
 * error. */
int sp_trace_add_raw(struct sp_trace *t, const char *text, size_t len,
                     const char *origin, const char *kernel, const char *path,
                     char *err, size_t errcap);

/* A sample event's chain: its frames named (st_prof's locations),
 * innermost first; NULL for an event that is not a sample. */
const struct sp_chain *sp_trace_sample(const struct sp_trace *t, size_t ev);
