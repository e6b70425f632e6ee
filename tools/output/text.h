/* tools/output/text.h: the kernel's own report (kernel/prof/report.c,
 * docs/profiling.md), with " (file:line)" after every frame.
 *
 *   profiled 1000 ms
 *   97 samples on 1 cpus, 0 dropped, source tick 100Hz
 *   61.9% 60 burn_spin+0x12..0x1e (kernel/burn.c:20)
 *           <- burn_inner+0xd (kernel/burn.c:24)
 *
 * Chains fold as the kernel folds them: the leaf by function (with the
 * span of offsets seen), callers by exact return address. The leaf's
 * file:line is that of its most sampled address. Every chain is printed,
 * hottest first. Several inputs give one such report each, headed by
 * "kernel NAME"; an off-CPU input gets the `profile off` report
 * (tools/output/offtext.h), a lock input the `profile lock` report
 * (the same file). There is no "sample cost" line: the raw profile does not
 * carry the sampler's cost.
 *
 * Host pipeline: prefix sp_. */
#pragma once
#include <stdio.h>
#include "tools/model/model.h"

/* Returns 0, or -1 on a write error. */
int sp_text_write(const struct sp_profile *p, FILE *f);
