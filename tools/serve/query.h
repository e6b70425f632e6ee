/* tools/serve/query.h: a selection of the history (tools/serve/hist.h) made
 * into what the page and the downloads show, through sonde-prof's own
 * pipeline: its records become an input of the model per kernel, made in
 * memory (tools/ingest/agg.c's sp_agg_profile, with the kernel's META and
 * task names: no raw text between), named as `record` does
 * (tools/model/sym.c), folded into stacks (tools/output/folded.c) or
 * diffed (tools/output/diff.c), and written as pprof or folded. The tree
 * is the HTML page's (tools/output/flame_json.c) with d3-flame-graph's
 * keys: {name, value, children}, value the frame's total (samples, or ns
 * off the CPU, or bytes), and with a diff base and delta (new - base) per
 * frame.
 * Serve layer: prefix sv_. */
#pragma once
#include <jansson.h>
#include "tools/output/diff.h"
#include "tools/output/flame_json.h"
#include "tools/output/folded.h"
#include "tools/serve/api.h"

/* The selection as a profile of kind, one input per kernel that has
 * records in it (labelled with its name; one neither this serve's nor
 * another's in st->foreign is left out), or merged: one input per ELF
 * (labelled "fleet"), every kernel's stacks of that ELF merged, pid and
 * CPU 0. The selection is the store's form either way (persist.h makes
 * memory's into it), so one builder serves both. Not yet named: it reads
 * the kernels, under the state's lock. p is initialised here; the caller
 * frees it. */
void sv_query_profile(const struct sv_state *st, const struct st_sel *sel,
                      unsigned kind, uint64_t ms, bool merged, struct sp_profile *p);
/* Every location of p named (the ELFs only: no lock needed). */
void sv_query_name(const struct sv_state *st, struct sp_profile *p);
/* The state's ELFs as p's maps, in their order (p just init'd): what
 * sv_query_name names through. */
void sv_query_maps(const struct sv_state *st, struct sp_profile *p);

/* The root "all" over every chain of p ([kernel,] [task,] the frames, an
 * off-CPU chain's reason), as by says. */
json_t *sv_query_tree(const struct sp_profile *p, enum sp_fj_by by);
/* The same over a diff: value from new, delta = new - base per frame. */
json_t *sv_query_diff_tree(const struct sp_diff *d);
