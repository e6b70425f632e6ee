// LINK: kernel/profiler.c kernel/profiler_report.c kernel/profiler_export.c kernel/symtab.c tests/unit/fake_profiler.c lib/printf.c lib/parse.c uapi/profile_raw.c
/* Host tests of kernel/profiler_export.c through the real sampler and the
 * `profile` command: the raw and folded outputs as exact text, every
 * distinct chain printed, task names, unresolved addresses, and the raw
 * output read back by the reference parser (uapi/profile_raw.c) with the
 * counts and frames that were recorded. Fakes: fake_profiler.c. */
#include "test.h"
#include "fake_hal.h"
#include "fake_profiler.h"
#include <stdlib.h>

#include "kernel/profiler.h"
#include "uapi/profile_raw.h"

#define ID "0123456789abcdef0123456789abcdef01234567"

/* burn_inner <- burn_mid <- burn_outer on three paths, two of them
 * through other call sites of the same functions; and an unresolved pc. */
static void win_small(void)
{
    for (int i = 0; i < 3; i++)
        tick(0, 5, 0x301a, &st_a);
    tick(1, 5, 0x301a, &st_a);
    tick(2, 7, 0x3010, &st_b);
    tick(2, 7, 0x3010, &st_b);
    tick(3, 12, 0x9abc, NULL);
}

/* ---- raw ------------------------------------------------------------- */

/* One line per distinct (pid, task, cpu, frames), hottest first, ties by
 * pid then cpu; exact addresses in hex without 0x, innermost first. */
TEST(raw_exact_text)
{
    reset();
    window_fn = win_small;
    CHECK_EQ(run_cmd("profile 10 raw"), 0);
    CHECK_STR(got(),
        "# sonde raw build-id=" ID " source=tick 100Hz samples=7 dropped=0 cpus=4 ms=10\n"
        "3 5 burn 0 301a 2044 11b2\n"
        "2 7 burn 2 3010 2048 11b2\n"
        "1 5 burn 1 301a 2044 11b2\n"
        "1 12 netload 3 9abc\n");
}

/* Where the window and filter come from: the output word takes the chain
 * count's place, or stands in for the pid or the window. */
TEST(raw_arguments)
{
    reset();
    window_fn = win_small;
    CHECK_EQ(run_cmd("profile raw"), 0);
    CHECK_EQ(last_sleep_ms, 1000);
    CHECK(strstr(out, " samples=7 dropped=0 cpus=4 ms=1000\n") != NULL);
    reset();
    window_fn = win_small;
    CHECK_EQ(run_cmd("profile 500 raw"), 0);
    CHECK_EQ(last_sleep_ms, 500);
    CHECK(strstr(out, " samples=7 dropped=0 cpus=4 ms=500\n") != NULL);
    reset();
    window_fn = win_small;
    CHECK_EQ(run_cmd("profile 20 7 raw"), 0);
    CHECK_STR(got(),
        "# sonde raw build-id=" ID " source=tick 100Hz samples=2 dropped=0 cpus=1 ms=20\n"
        "2 7 burn 2 3010 2048 11b2\n");
    reset();
    window_fn = win_small;
    CHECK_EQ(run_cmd("profile 20 all raw"), 0);
    CHECK(strstr(out, "samples=7 ") != NULL);
    /* the chain count keeps its meaning */
    reset();
    window_fn = win_small;
    CHECK_EQ(run_cmd("profile 20 all 1"), 0);
    CHECK(strncmp(out, "profiled 20 ms\n", 15) == 0);
    CHECK_EQ(count_leaves(), 1);
}

/* The counter's source name has spaces; the header carries it whole. */
TEST(raw_source_and_drops)
{
    reset();
    pmu_usable = true;
    pmu_claim = true;
    pmu_name = "pmu/nmi intel fixed-ctr1";
    window_fn = win_small;
    CHECK_EQ(run_cmd("profile 10 raw"), 0);
    CHECK(strncmp(out, "# sonde raw build-id=" ID " source=pmu/nmi intel "
                  "fixed-ctr1 samples=", 72) == 0);
}

TEST(raw_empty_is_a_header)
{
    reset();
    CHECK_EQ(run_cmd("profile 10 raw"), 0);
    CHECK_STR(got(), "# sonde raw build-id=" ID " source=tick 100Hz samples=0 "
              "dropped=0 cpus=0 ms=10\n");
}

/* ---- raw, read back by the reference parser ------------------------- */

struct want {
    int pid;
    unsigned cpu, depth, count, seen;
    uintptr_t frames[8];
};

static struct want wants[600];
static unsigned nwants;

/* pid, cpu, pc and stack of the i-th distinct chain; each is recorded
 * (i % 3) + 1 times, interleaved across CPUs. 300 chains: no 128 limit. */
static struct fstack many_st[300];

static void many_chain(unsigned i, int *pid, unsigned *cpu, uintptr_t *pc)
{
    *pid = (int)(i % 4 == 3 ? 12 : 5 + 2 * (i % 2));
    *cpu = i % 4;
    *pc = 0x3000 + i;                   /* distinct, even at depth 1 */
    many_st[i].n = i % 8;               /* depth 1..8 */
    for (unsigned k = 0; k < many_st[i].n; k++)
        many_st[i].ret[k] = 0x1000 + 0x40 * k + i;
}

static void win_many(void)
{
    nwants = 0;
    for (unsigned round = 0; round < 3; round++) {
        for (unsigned i = 0; i < 300; i++) {
            int pid;
            unsigned cpu;
            uintptr_t pc;
            many_chain(i, &pid, &cpu, &pc);
            if (round > i % 3)
                continue;
            tick(cpu, pid, pc, &many_st[i]);
            struct want *w = &wants[i];
            if (round == 0) {
                nwants++;
                memset(w, 0, sizeof *w);
                w->pid = pid;
                w->cpu = cpu;
                w->depth = 1 + many_st[i].n;
                w->frames[0] = pc;
                for (unsigned k = 0; k < many_st[i].n; k++)
                    w->frames[k + 1] = many_st[i].ret[k];
            }
            w->count++;
        }
    }
}

static int match_chain(void *ctx, const struct praw_chain *c, unsigned line,
                       char *err, size_t cap)
{
    unsigned *lines = ctx;
    (*lines)++;
    for (unsigned i = 0; i < nwants; i++) {
        struct want *w = &wants[i];
        if ((int)c->pc_pid != w->pid || c->pc_cpu != w->cpu ||
            c->pc_depth != w->depth)
            continue;
        bool same = true;
        for (unsigned k = 0; k < w->depth; k++)
            same &= c->pc_frames[k] == w->frames[k];
        if (!same)
            continue;
        CHECK_EQ(w->seen, 0);           /* each distinct chain once */
        CHECK_EQ(c->pc_count, w->count);
        CHECK_STR(c->pc_task, w->pid == 12 ? "netload" : "burn");
        w->seen++;
        return 0;
    }
    snprintf(err, cap, "line %u: a chain nobody recorded", line);
    return 1;
}

TEST(raw_parses_back_to_what_was_recorded)
{
    reset();
    window_fn = win_many;
    CHECK_EQ(run_cmd("profile 10 raw"), 0);
    CHECK_EQ(nwants, 300);
    struct praw_header h;
    char err[PRAW_ERR_MAX] = "";
    unsigned lines = 0;
    int rc = praw_parse(out, strlen(out), &h, match_chain, &lines, err, sizeof err);
    CHECK_STR(err, "");
    CHECK_EQ(rc, 0);
    CHECK_EQ(lines, 300);
    CHECK_EQ(h.ph_samples, 100 * 1 + 100 * 2 + 100 * 3);
    CHECK_EQ(h.ph_dropped, 0);
    CHECK_EQ(h.ph_cpus, 4);
    CHECK_EQ(h.ph_ms, 10);
    CHECK_STR(h.ph_build_id, ID);
    CHECK_STR(h.ph_source, "tick 100Hz");
    for (unsigned i = 0; i < nwants; i++)
        CHECK_EQ(wants[i].seen, 1);
}

/* A full buffer's drops are the header's dropped=, not lines. */
static void win_fill(void)
{
    for (int i = 0; i < 1030; i++)
        tick(1, 5, 0x3000 + (i & 3), NULL);
}

TEST(raw_full_buffer)
{
    reset();
    window_fn = win_fill;
    CHECK_EQ(run_cmd("profile 10 raw"), 0);
    CHECK_STR(got(),
        "# sonde raw build-id=" ID " source=tick 100Hz samples=1024 dropped=6 cpus=1 ms=10\n"
        "256 5 burn 1 3000\n"
        "256 5 burn 1 3001\n"
        "256 5 burn 1 3002\n"
        "256 5 burn 1 3003\n");
    struct praw_header h;
    char err[PRAW_ERR_MAX] = "";
    CHECK_EQ(praw_parse(out, strlen(out), &h, NULL, NULL, err, sizeof err), 0);
    CHECK_EQ(h.ph_dropped, 6);
}

/* The fold's memory is freed; a fold that cannot allocate says so, prints
 * no header, and leaves the profiler usable. */
TEST(raw_alloc_failure_and_no_leak)
{
    reset();
    long before = live_allocs;
    window_fn = win_many;
    CHECK_EQ(run_cmd("profile 10 raw"), 0);
    CHECK_EQ(live_allocs, before);
    reset();
    window_fn = win_small;
    kmalloc_fail = 1;
    CHECK(run_cmd("profile 10 raw") != 0);
    CHECK(strncmp(out, "profile: no memory to fold 7 samples (", 38) == 0);
    CHECK(strstr(out, "# sonde") == NULL);
    CHECK_EQ(live_allocs, before);
    window_fn = win_small;
    CHECK_EQ(run_cmd("profile 10 raw"), 0);
    CHECK(strncmp(out, "# sonde raw ", 12) == 0);
}
