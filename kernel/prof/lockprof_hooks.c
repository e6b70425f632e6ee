/* kernel/prof/lockprof_hooks.c: the locks' hooks for `profile lock`
 * (kernel/prof/lockprof_hooks.h). */
#include "kernel/prof/lockprof_hooks.h"
#include "kernel/prof/offcpu.h"
#include "kernel/prof/ring_produce.h"
#include "kernel/stacktrace_inline.h"
#include "kernel/task.h"

/* Reads only: the slots are each their CPU's, and the charge needs no
 * lock of its own. A lock here would be taken inside every spinlock's
 * release, by an interrupt that may have come while this CPU held it. */
void prof_lock_spin_released(struct lockstat_hold *h, uint64_t now)
{
    struct lockcharge_charge c = lockcharge_spin_charge(lockstat_slots, MAX_CPUS,
                                                      cpu_index_inline(), h,
                                                      h->lh_charge_from, now);
    if (c.lcc_waits)
        prof_lock_charged(h->lh_charge_name, LOCK_SPIN, c);
}

__attribute__((noinline)) void prof_lock_charged(const char *name, enum lock_kind kind,
                                                 struct lockcharge_charge c)
{
    int pid = task_current_pid_inline();
    struct prof_reserve k;
    struct prof_record *r = prof_reserve_n(&k, PROF_KIND_LOCK, pid, 1);
    if (!r)
        return;
    uint64_t w = lockstat_ns(c.lcc_delay);
    r->pr_pid = pid;
    r->pr_waits = c.lcc_waits;
    r->pr_depth = 0;
    r->pr_why = kind == LOCK_MUTEX ? PROF_WHY_MUTEX : PROF_WHY_SPIN;
    r->pr_tag = PROF_TAG(0, PROF_KIND_LOCK);
    r->pr_waker = -1;
    r->pr_weight = w ? w : 1;           /* a kind's weight is at least 1 */
    r->pr_name = name ? name : "?";
    uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
    struct st_span s;
    if (st_sample_stack(fp, &s, cpu_index_inline()))
        r->pr_depth = (uint8_t)st_walk_from(s, fp, fp, r->pr_frames, PROF_FRAMES, st_text_now());
    prof_reserve_commit(&k);
}
