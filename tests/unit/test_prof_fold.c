// LINK: kernel/prof/sample.c kernel/prof/trace.c kernel/prof/trace_hooks.c kernel/prof/ring.c kernel/prof/session.c kernel/prof/offcpu.c kernel/prof/offreport.c kernel/prof/wall.c kernel/prof/stream.c kernel/prof/stream_encode.c kernel/prof/report.c kernel/prof/lockreport.c kernel/prof/export.c kernel/prof/fold.c kernel/prof/fold_order.c kernel/prof/quantile.c kernel/prof/fold_index.c kernel/cmd/profile.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c lib/sha256.c kernel/symtab.c tests/unit/fake_profiler.c kernel/stacks.c kernel/stacktrace.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c lib/printf.c lib/parse.c uapi/profile_raw.c kernel/cmd/profile_heap.c kernel/prof/heapview.c mm/heapprof.c tests/unit/fake_heap_table.c kernel/cmd/profile_stream.c uapi/stream_ctl.c kernel/cmd/profile_say.c kernel/irqname.c
/* Host test of the report's fold on recorded data: 4 CPUs x 2048 records
 * of a fixed pseudo-random mix (resolved and unresolved leaves, leaves
 * that fold by symbol over many offsets, callers that differ by one
 * return address, depths 1-8, ties, more distinct chains than the table
 * holds, a spread of costs) reported at several chain counts, compared
 * byte for byte with tests/unit/data/prof_fold_report.txt, the report
 * this data gave before the fold was rewritten around hash tables.
 * PROF_FOLD_WRITE=1 rewrites the file from the code under test. */
#include "test.h"
#include "fake_hal.h"
#include "fake_profiler.h"
#include <stdio.h>
#include <stdlib.h>

#include "kernel/prof/sample.h"
#include "kernel/prof/session.h"

#define GOLDEN "tests/unit/data/prof_fold_report.txt"
#define RECS 2048

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Leaves: mostly inside the fake symbols (0x1000-0x4040), some in the
 * holes between them and past them (unresolved, printed in hex). Callers:
 * a few sites each, so chains repeat enough to rank, with a long tail. */
static void record(unsigned cpu)
{
    static const uintptr_t leaves[] = { 0x3000, 0x2000, 0x1000, 0x3080, 0x4000 };
    static const uintptr_t holes[] = { 0x1800, 0x2400, 0x30c0, 0x5000 };
    uintptr_t f[PROF_FRAMES];
    uint64_t r = next();
    unsigned kind = r % 16;
    if (kind < 13)
        f[0] = leaves[(r >> 4) % 5] + ((r >> 8) % 0x20);
    else
        f[0] = holes[(r >> 4) % 4] + ((r >> 8) % 3);
    unsigned depth = 1 + (unsigned)((r >> 16) % PROF_FRAMES);
    for (unsigned i = 1; i < depth; i++) {
        uint64_t q = next();
        /* Mostly one of four sites per level; one in eight anywhere. */
        f[i] = (q % 8) ? 0x1100 + 0x40 * i + 4 * ((q >> 3) % 4)
                       : 0x1000 + ((q >> 3) % 0x400);
    }
    uint32_t cost = 100 + (uint32_t)((r >> 24) % 300) + ((r >> 40) % 64 == 0 ? 50000 : 0);
    CHECK_EQ(prof_inject(cpu, 5, f, depth, cost), 0);
}

static size_t report_all(char *dst, size_t cap)
{
    static const unsigned chains[] = { 1, 8, 128 };
    size_t n = 0;
    for (unsigned i = 0; i < sizeof chains / sizeof chains[0]; i++) {
        buf_printer_init(&bp, out, sizeof out);
        CHECK_EQ(prof_report_again(chains[i], &bp.pr, NULL), 0);
        size_t len = strlen(out);
        CHECK(n + len < cap);
        memcpy(dst + n, out, len);
        n += len;
    }
    dst[n] = 0;
    return n;
}

TEST(fold_matches_the_recorded_report)
{
    reset();
    CHECK_EQ(run_cmd("profile 1"), 0);      /* fresh counts */
    room(RECS);
    for (unsigned k = 0; k < RECS; k++)
        for (unsigned c = 0; c < 4; c++)
            if (c != 2 || k < RECS / 2)     /* cpu 2 holds half as many */
                record(c);
    static char got_text[1 << 18];
    size_t n = report_all(got_text, sizeof got_text);
    CHECK(strstr(got_text, "more chains did not fit the 128-chain table") != NULL);
    CHECK(strstr(got_text, "\n100.") == NULL || n > 0);
    if (getenv("PROF_FOLD_WRITE")) {
        FILE *w = fopen(GOLDEN, "w");
        CHECK(w != NULL);
        if (w) {
            fwrite(got_text, 1, n, w);
            fclose(w);
        }
        return;
    }
    static char want[1 << 18];
    FILE *f = fopen(GOLDEN, "r");
    CHECK(f != NULL);
    if (!f)
        return;
    size_t m = fread(want, 1, sizeof want - 1, f);
    fclose(f);
    want[m] = 0;
    CHECK_EQ(n, m);
    CHECK(memcmp(got_text, want, m < n ? m : n) == 0);
}
