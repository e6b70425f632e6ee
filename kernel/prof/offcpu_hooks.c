/* kernel/prof/offcpu_hooks.c: the scheduler's off-CPU hooks that are out
 * of line (kernel/prof/offcpu_hooks.h): a switch-in owed more than one
 * preempted record, a wake, and the window's sweep. Each takes what is
 * owed from the state machine (kernel/prof/offcpu.h) and writes it into
 * this CPU's ring, the task's chain walked straight into the first
 * slot. Called under the run-queue lock of the task's CPU, interrupts
 * off: no lock is taken and nothing allocated here.
 *
 * Also the spinlock's hook, a contended acquire's time spun.
 *
 * Profiler core: prefix prof_sched_ (prof_lock_ for the spinlock's). */
#include "kernel/prof/offcpu_hooks.h"
#include "kernel/prof/trace.h"

/* What t is owed (n records of d) into this CPU's ring: the slots reserved
 * and filled first, then t's chain walked into the first (walkable;
 * else it has none). */
static inline __attribute__((always_inline)) void prof_sched_emit(const struct prof_task *t,
                                                                  const struct prof_off_owed *d,
                                                                  unsigned n, bool walkable)
{
    struct prof_reserve k;
    struct prof_record *r = prof_reserve_n(&k, PROF_KIND_OFFCPU, t->pt_pid, n);
    if (!r)
        return;
    struct prof_record *copy = prof_off_put(t->pt_off, d, t->pt_pid, k.k_pc->pc_buf, k.k_head,
                                            k.k_pc->pc_cap - 1);
    unsigned depth = walkable ? prof_sched_chain(t, r->pr_frames) : 0;
    prof_off_put_chain(r, copy, depth);
    prof_reserve_commit(&k);
}

__attribute__((noinline)) void prof_sched_in(struct prof_off *o, int pid, uintptr_t stack,
                                             uint64_t saved_sp, uint64_t t)
{
    struct prof_off_owed d;
    unsigned n = prof_off_in(o, t, &d);
    if (n) {
        struct prof_task next = { pid, stack, saved_sp, o };
        prof_sched_emit(&next, &d, n, true);
    }
}

__attribute__((noinline, cold)) void prof_sched_wake(struct prof_off *o, bool on_cpu, int waker,
                                                     bool walk)
{
    if (!prof_off_wake(o, on_cpu, cycles_now_inline(), waker))
        return;
    /* A wake inside an interrupt's handler: that interrupt woke it, and
     * waker is only the task it interrupted (the interrupt entry keeps
     * its vector while an off-CPU window or a trace is open). */
    unsigned cpu = cpu_index_inline();
    const struct prof_trace_cpu *tc = &prof_trace_cpus[cpu];
    uint32_t vec1 = __atomic_load_n(&tc->tc_vec, __ATOMIC_RELAXED);
    if (vec1)
        o->of_wirq = PROF_IRQ_WORD(vec1, tc->tc_class, cpu);
    if (!walk)
        return;
    uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
    struct st_span s;
    if (st_sample_stack(fp, &s, cpu))
        o->of_wdepth = (uint8_t)st_walk_from(s, fp, fp, o->of_wframes, PROF_FRAMES,
                                             st_text_now());
}

__attribute__((noinline, cold)) void prof_lock_spun(const char *name, uint64_t t0, uint64_t t1)
{
    if (!prof_sched_on())
        return;
    uint64_t w = prof_off_ns(prof_off_clip(t0), prof_off_clip(t1));
    int pid = task_current_pid_inline();
    struct prof_reserve k;
    struct prof_record *r = w ? prof_reserve_n(&k, PROF_KIND_OFFCPU, pid, 1) : NULL;
    if (!r)
        return;
    prof_off_fill(r, pid, PROF_WHY_SPIN, name ? name : "?", -1, w, 0);
    uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
    struct st_span s;
    if (st_sample_stack(fp, &s, cpu_index_inline()))
        r->pr_depth = (uint8_t)st_walk_from(s, fp, fp, r->pr_frames, PROF_FRAMES, st_text_now());
    prof_reserve_commit(&k);
}

void prof_sched_sweep_task(const struct prof_task *t, bool sleeping, bool walkable)
{
    struct prof_off_owed d;
    unsigned n = prof_off_finish(t->pt_off, sleeping, &d);
    if (n)
        prof_sched_emit(t, &d, n, walkable);
}
