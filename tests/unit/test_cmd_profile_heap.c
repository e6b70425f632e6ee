// LINK: kernel/prof/sample.c kernel/prof/trace.c kernel/prof/trace_hooks.c kernel/prof/ring.c kernel/prof/session.c kernel/prof/offcpu.c kernel/prof/offreport.c kernel/prof/wall.c kernel/prof/stream.c kernel/prof/stream_encode.c kernel/prof/report.c kernel/prof/lockreport.c kernel/prof/export.c kernel/prof/fold.c kernel/prof/fold_order.c kernel/prof/quantile.c kernel/prof/fold_index.c kernel/cmd/profile.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c lib/sha256.c kernel/symtab.c tests/unit/fake_profiler.c kernel/stacks.c kernel/stacktrace.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c lib/printf.c lib/parse.c uapi/profile_raw.c kernel/cmd/profile_heap.c kernel/prof/heapview.c mm/heapprof.c tests/unit/fake_heap_table.c kernel/cmd/profile_stream.c uapi/stream_ctl.c kernel/cmd/profile_say.c kernel/irqname.c
/* tests/unit/test_cmd_profile_heap.c: `profile heap` and `profile allocs`
 * (kernel/cmd/profile_heap.c, kernel/prof/heapview.c, the heap readers
 * of report.c and export.c): arguments and their errors, the text
 * report's bytes and objects, folded in bytes, raw as uapi/profile_raw.h
 * reads it, and an allocs window recording through prof_emit. */
#include "test.h"
#include "fake_hal.h"
#include "fake_profiler.h"
#include <stdlib.h>

#include "kernel/prof/ring.h"
#include "mm/heapprof.h"
#include "uapi/profile_raw.h"

struct bad { const char *line, *msg; };

TEST(heap_command_errors)
{
    static const struct bad bad[] = {
        { "profile heap rate 0", "profile: heap rate 0 out of range (1-1073741824 bytes)\n" },
        { "profile heap rate 2000000000",
          "profile: heap rate 2000000000 out of range (1-1073741824 bytes)\n" },
        { "profile heap rate x", "profile: 'x' is not a heap rate (1-1073741824 bytes) or off\n" },
        { "profile heap rate", "profile: heap rate takes one argument: bytes (1-1073741824) or off\n" },
        { "profile heap 0", "profile: chains 0 out of range (1-128)\n" },
        { "profile heap abc", "profile: 'abc' is not a chain count (1-128), folded, raw or rate\n" },
        { "profile heap raw 3", "profile: too many arguments (usage: profile heap "
                                "[chains|folded|raw] | profile heap rate <bytes>|off)\n" },
        { "profile allocs 0", "profile: window 0 out of range (1-2000 ms)\n" },
        { "profile allocs raw 5", "profile: 'raw' must be the last argument (usage: profile "
                                  "allocs [ms] [pid|all] [chains|folded|raw] | profile allocs "
                                  "stream <port> [ms|0] [pid|all])\n" },
        { "profile allocs 100 99999", "profile: pid 99999: no such task\n" },
        { "profile allocs 100 all 129", "profile: chains 129 out of range (1-128)\n" },
    };
    reset();
    heapprof_test_reset();
    heapprof_set_rate(4096);
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        unsigned s0 = sleeps;
        CHECK(run_cmd(bad[i].line) != 0);
        CHECK_STR(got(), bad[i].msg);
        CHECK_EQ(sleeps, s0);
    }
    CHECK_EQ(heapprof_rate, 4096);
    heapprof_set_rate(0);
    CHECK(run_cmd("profile allocs 100") != 0);
    CHECK(strstr(got(), "heap profiling is off") != NULL);
    CHECK_EQ(run_cmd("profile heap rate 65536"), 0);
    CHECK_STR(got(), "profile: heap profiling at rate 65536 bytes\n");
    CHECK_EQ(heapprof_rate, 65536);
    CHECK_EQ(run_cmd("profile heap rate off"), 0);
    CHECK_EQ(heapprof_rate, 0);
}

static char blocks[16][4096];

/* Three 4 KiB blocks from burn_inner+0x10, one 64-byte one from
 * burn_mid+0x44, at rate 4096. */
static void feed(void)
{
    fake_pid = 5;
    heapprof_set_rate(4096);
    CHECK(!heapprof_sample(blocks[15], 1, 0x3011)); /* the rate's first draw */
    for (unsigned i = 0; i < 3; i++)
        CHECK(heapprof_sample(blocks[i], 4096, 0x3011));
    CHECK(heapprof_sample(blocks[3], 64, 0x2045));
}

static int count_chain(void *ctx, const struct praw_chain *c, unsigned line, char *err,
                       size_t cap)
{
    (*(unsigned *)ctx)++;
    return 0;
}

TEST(heap_inuse_text_folded_raw)
{
    reset();
    heapprof_test_reset();
    heapprof_set_rate(4096);
    heapprof_test_seed(0, 77);
    feed();
    uint64_t big = heapprof_scale(4096, 4096), small = heapprof_scale(64, 4096);
    char want[160];

    CHECK_EQ(run_cmd("profile heap"), 0);
    CHECK(strstr(got(), "heap in use: rate 4096 bytes, 4 samples, 0 did not fit the table\n"));
    uint64_t objs = ((3 * ((big << 16) / 4096 + 0) + ((small << 16) + 32) / 64) + 32768) >> 16;
    snprintf(want, sizeof want, "estimated %llu bytes in %llu objects\n",
             (unsigned long long)(3 * big + small), (unsigned long long)objs);
    CHECK(strstr(got(), want) != NULL);
    snprintf(want, sizeof want, "%llu bytes 5 objects burn_inner+0x10\n",
             (unsigned long long)(3 * big));
    CHECK(strstr(got(), want) != NULL);
    CHECK(strstr(got(), "samples on") == NULL);     /* not the CPU report's header */

    CHECK_EQ(run_cmd("profile heap folded"), 0);
    snprintf(want, sizeof want, ";burn_inner %llu\n", (unsigned long long)(3 * big));
    CHECK(strstr(got(), want) != NULL);

    CHECK_EQ(run_cmd("profile heap raw"), 0);
    CHECK(strstr(got(), " source=heap inuse rate 4096 samples=4 dropped=0 cpus=1 ms=0 kind=heap\n"));
    CHECK(strstr(got(), "3:") != NULL);
    struct praw_header h;
    unsigned n = 0;
    char err[PRAW_ERR_MAX];
    CHECK_EQ(praw_parse(got(), strlen(got()), &h, count_chain, &n, err, sizeof err), 0);
    CHECK_EQ(h.ph_kind, PRAW_KIND_HEAP);
    CHECK_EQ(n, 2);

    /* Freed blocks leave the view. */
    for (unsigned i = 0; i < 4; i++)
        heapprof_retire(blocks[i]);
    CHECK_EQ(run_cmd("profile heap"), 0);
    CHECK(strstr(got(), "no sampled blocks in use\n") != NULL);
    heapprof_set_rate(0);
}

static void allocs_window(void)
{
    feed();
}

TEST(heap_allocs_window)
{
    reset();
    heapprof_test_reset();
    heapprof_set_rate(4096);
    heapprof_test_seed(0, 78);
    window_fn = allocs_window;
    CHECK_EQ(run_cmd("profile allocs 100 raw"), 0);
    CHECK_EQ(last_sleep_ms, 100);
    CHECK(strstr(got(), " source=heap allocs rate 4096 samples=4 dropped=0 cpus=1 ms=100 kind=heap\n"));
    struct praw_header h;
    unsigned n = 0;
    char err[PRAW_ERR_MAX];
    CHECK_EQ(praw_parse(got(), strlen(got()), &h, count_chain, &n, err, sizeof err), 0);
    CHECK_EQ(n, 2);
    /* The same records again, as text: the window's header. */
    window_fn = allocs_window;
    for (unsigned i = 0; i < 4; i++)
        heapprof_retire(blocks[i]);
    CHECK_EQ(run_cmd("profile allocs 100"), 0);
    if (!strstr(got(), "heap allocated in 100 ms: rate 4096 bytes, 4 samples on 1 cpus, 0 dropped\n"))
        test_fail(__FILE__, __LINE__, got());
    /* A CPU profile after it is a CPU profile again. */
    window_fn = NULL;
    CHECK_EQ(run_cmd("profile 100 raw"), 0);
    CHECK(strstr(got(), "kind=") == NULL);
    for (unsigned i = 0; i < 4; i++)
        heapprof_retire(blocks[i]);
    heapprof_set_rate(0);
}
