/* tools/output/diff.h: differential profiles of any kind, as `sonde-prof
 * diff BASE NEW -o OUT` (tools/cmd/diff.c) and serve write them
 * (tools/output/diff.c, docs/profiling.md).
 * Host pipeline: prefix sp_. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "tools/output/folded.h"

/* One folded stack with its weight in each profile. */
struct sp_diff_row {
    const char **dr_names;      /* root first (the task, then frames) */
    unsigned dr_n;
    uint64_t dr_base, dr_new;
};

struct sp_diff {
    struct sp_diff_row *v;      /* sorted by names */
    size_t n;
    uint64_t base_total, new_total;
};

/* Merges two sorted stack lists (sp_stacks_build) into rows; the names
 * stay the stacks' (free the stacks after the diff). */
void sp_diff_build(const struct sp_stacks *base, const struct sp_stacks *new_,
                   struct sp_diff *d);
void sp_diff_free(struct sp_diff *d);
/* "stack BASE NEW" per line: FlameGraph's difffolded format. */
int sp_diff_folded(const struct sp_diff *d, FILE *f);
/* Chains by growth: absolute and relative change, then the stack. */
int sp_diff_text(const struct sp_diff *d, const char *unit, FILE *f);
/* A differential flame graph: frames sized by NEW, red where NEW grew,
 * blue where it shrank, white where equal (difffolded's colouring). */
int sp_diff_svg(const struct sp_diff *d, const char *title, FILE *f);

struct sp_profile;
/* p holds BASE and NEW as inputs 0 and 1, labelled "base" and "new", every
 * location named: writes the diff to the file out, its kind from the
 * extension (.txt, .folded, .svg, .html, .pb.gz). 0, or -1 with err. */
int sp_diff_write(struct sp_profile *p, const char *out, char *err, size_t cap);
/* Whether out's extension is one sp_diff_write writes. */
bool sp_diff_format_known(const char *out);
