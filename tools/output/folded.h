/* tools/output/folded.h: folded ("collapsed") stacks, and the merged stack
 * list the flame graph is drawn from.
 *
 * One line per distinct stack: frames root first joined by ';', a space,
 * the count (with off-CPU time in the profile: microseconds, each
 * off-CPU stack's last frame its reason, "[waitq virtio-rx]"). The root frame is the task's name (with per_kernel, the
 * kernel's name above it); inlined frames appear as frames of their own,
 * as flamegraph.pl's perf collapser shows them. No header line, so that
 * flamegraph.pl, inferno and speedscope read the file as it is.
 *
 * Host pipeline: prefix sp_. */
#pragma once
#include <stdbool.h>
#include <stdio.h>
#include "tools/model/model.h"

struct sp_stack {
    const char **ps_names;      /* root first */
    unsigned ps_n;
    uint64_t ps_count;
};

struct sp_stacks {
    struct sp_stack *v;         /* sorted by names, each stack once */
    size_t n;
    uint64_t total;
};

void sp_stacks_build(const struct sp_profile *p, bool per_kernel,
                       struct sp_stacks *out);
void sp_stacks_free(struct sp_stacks *s);

/* Writes a name with ';', spaces and control characters replaced by '_',
 * which would otherwise split a frame or a line (a reason frame, "[waitq
 * NAME]", keeps its one space). */
void sp_folded_name(FILE *f, const char *name);
/* Whether a frame's name is an off-CPU reason's ("[...]"). */
bool sp_is_reason(const char *name);
/* Whether the stacks weigh microseconds: a profile with off-CPU time (an
 * off-CPU or wall-clock profile), whose stacks end in their reason. */
bool sp_folded_us(const struct sp_profile *p);

/* Returns 0, or -1 on a write error. */
int sp_folded_write(const struct sp_profile *p, bool per_kernel, FILE *f);
