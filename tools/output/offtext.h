/* tools/output/offtext.h: an off-CPU profile (kind=offcpu) as the
 * kernel's `profile off` report (docs/profiling.md), with " (file:line)"
 * after every frame:
 *
 *   off-cpu profiled 1000 ms
 *   blocked 893.757 ms, runnable 0.053 ms, 1 tasks, 0 dropped
 *   44.5% 397.973 ms [waitq burn-q] task 6 burn-wait
 *           <- schedule+0x10d (kernel/sched.c:190)
 *           ...
 *           woken by 7 burn-waker
 *               <- task_wake.cold+0x16 (kernel/sched.c:80)
 *
 * Entries are the raw profile's chains (one per task, CPU, reason,
 * chain, waker and waker's chain), heaviest first, every one printed. A
 * waker's name is the one its pid has in the profile ("-" when it has no
 * chain there). The window's place on the kernel's clock is not in the
 * raw profile, so the first line has the window alone.
 *
 * Host pipeline: prefix sp_. */
#pragma once
#include <stdio.h>
#include "tools/model/model.h"

/* Input (an off-CPU one) to f; 0, or -1 on a write error. */
int sp_offtext_input(const struct sp_profile *p, unsigned input, FILE *f);

/* A lock profile (kind=lock) as the kernel's `profile lock` report:
 *
 *   lock profiled 2000 ms: 33.002 ms of waits charged to their holders, 20 waits, 20 releases, 0 dropped
 *   mutex 30.002 ms, spin 3.000 ms
 *   90.9% 30.002 ms [mutex probe-m] 10 waits, held by task 6 burn-holder
 *           <- mutex_unlock+0x3b (kernel/sched.c:572)
 *           ...
 *
 * Entries are the chains (one per lock, holder and its chain at the
 * release), heaviest first, every one printed. Input to f; 0, or -1 on a
 * write error. */
int sp_locktext_input(const struct sp_profile *p, unsigned input, FILE *f);
