// LINK: kernel/prof/sample.c kernel/prof/trace.c kernel/prof/trace_hooks.c kernel/prof/ring.c kernel/prof/session.c kernel/prof/offcpu.c kernel/prof/offreport.c kernel/prof/wall.c kernel/prof/stream.c kernel/prof/stream_encode.c kernel/prof/report.c kernel/prof/lockreport.c kernel/prof/export.c kernel/prof/fold.c kernel/prof/fold_order.c kernel/prof/quantile.c kernel/prof/fold_index.c kernel/cmd/profile.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c lib/sha256.c kernel/symtab.c tests/unit/fake_profiler.c kernel/stacks.c kernel/stacktrace.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c lib/printf.c lib/parse.c uapi/profile_raw.c kernel/cmd/profile_heap.c kernel/prof/heapview.c mm/heapprof.c tests/unit/fake_heap_table.c kernel/cmd/profile_stream.c uapi/stream_ctl.c kernel/cmd/profile_say.c kernel/irqname.c
/* tests/unit/test_prof_lockreport.c: `profile lock`'s report
 * (kernel/prof/lockreport.c) through the real command, session and fold:
 * lock records put into the rings during a fake window come out with the
 * lock at the root, the holder, its delay and waits summed by chain, the
 * kinds' totals, folded with the lock first, and the refusals. Fakes:
 * fake_profiler.c. */
#include "test.h"
#include "fake_hal.h"
#include "fake_profiler.h"

#include "kernel/prof/offcpu.h"
#include "kernel/prof/ring.h"

static struct prof_record lock_rec(int pid, unsigned why, const char *name, uint64_t ns,
                                   uint32_t waits)
{
    return (struct prof_record){ .pr_pid = pid, .pr_depth = 2, .pr_kind = PROF_KIND_LOCK,
                                 .pr_why = (uint8_t)why, .pr_waker = -1, .pr_waits = waits,
                                 .pr_weight = ns, .pr_name = name,
                                 .pr_frames = { 0x3010, 0x2044 } };
}

/* Two releases of probe-m by pid 7 on cpu 1 (3 waits 4 ms, 2 waits
 * 2 ms), one of probe-s by pid 5 on cpu 2 (1 wait, 1 ms). */
static void win_locks(void)
{
    struct prof_record a = lock_rec(7, PROF_WHY_MUTEX, "probe-m", 4000000, 3);
    struct prof_record b = lock_rec(7, PROF_WHY_MUTEX, "probe-m", 2000000, 2);
    struct prof_record c = lock_rec(5, PROF_WHY_SPIN, "probe-s", 1000000, 1);
    prof_ring_put(1, &a);
    prof_ring_put(1, &b);
    prof_ring_put(2, &c);
}

TEST(lock_report_by_lock_and_holder)
{
    reset();
    window_fn = win_locks;
    CHECK_EQ(run_cmd("profile lock 10"), 0);
    const char *t = got();
    CHECK(strstr(t, "lock profiled 10 ms: 7.000 ms of waits charged to their holders, "
                    "6 waits, 3 releases, 0 dropped\nmutex 6.000 ms, spin 1.000 ms\n") == t);
    CHECK(strstr(t, "\n85.7% 6.000 ms [mutex probe-m] 5 waits, held by task 7 ") != NULL);
    CHECK(strstr(t, "\n14.3% 1.000 ms [spin probe-s] 1 waits, held by task 5 ") != NULL);
    CHECK(strstr(t, "[mutex probe-m]") < strstr(t, "[spin probe-s]"));
    CHECK(strstr(t, "        <- burn_mid+0x44\n") != NULL);
}

TEST(lock_report_folded_lock_first)
{
    reset();
    window_fn = win_locks;
    CHECK_EQ(run_cmd("profile lock 10 all folded"), 0);
    const char *t = got();
    CHECK(strstr(t, " kind=lock\n") != NULL);
    CHECK(strstr(t, "\n[mutex probe-m];") != NULL);
    CHECK(strstr(t, "burn_mid;burn_inner 6000\n") != NULL);
    CHECK(strstr(t, "\n[spin probe-s];") != NULL);
}

TEST(lock_report_empty_and_refusals)
{
    reset();
    CHECK_EQ(run_cmd("profile lock 10"), 0);
    CHECK(strstr(got(), "no lock waited on in the window\n") != NULL);
    CHECK(run_cmd("profile lock 2001") != 0);
    CHECK(strstr(got(), "profile: window 2001 out of range (1-2000 ms)") != NULL);
    CHECK(run_cmd("profile lock 0") != 0);
    CHECK(strstr(got(), "profile: window 0 out of range (1-2000 ms)") != NULL);
    CHECK(run_cmd("profile lock 10 all 10 folded") != 0);
    CHECK(strstr(got(), "usage: profile lock [ms] [pid|all] [chains|folded|raw]") != NULL);
}
