/* kernel/prof/export.h: the machine-readable readers of a frozen snapshot
 * (kernel/prof/export.c): `profile ... folded` and `profile ... raw`.
 *
 * Profiler core: prefix prof_ and PROF_. */
#pragma once
#include <stdbool.h>
#include "kernel/prof/snapshot.h"

struct printer;

/* Every distinct chain of a snapshot, folded stacks or raw chains
 * (uapi/profile_raw.h), to p: records of each kind folded apart, their
 * weights added. Allocates a fold table sized from the number of samples
 * and looks task names up. PROF_OK or PROF_ENOMEM (message printed). */
int prof_export(const struct prof_snapshot *s, bool folded, struct printer *p);
