// LINK: kernel/prof/sample.c kernel/prof/trace.c kernel/prof/trace_hooks.c kernel/prof/ring.c kernel/prof/session.c kernel/prof/offcpu.c kernel/prof/offreport.c kernel/prof/wall.c kernel/prof/stream.c kernel/prof/stream_encode.c kernel/prof/report.c kernel/prof/lockreport.c kernel/prof/export.c kernel/prof/fold.c kernel/prof/fold_order.c kernel/prof/quantile.c kernel/prof/fold_index.c kernel/cmd/profile.c uapi/profile_stream.c uapi/profile_stream_meta.c uapi/profile_stream_tag.c lib/sha256.c kernel/symtab.c tests/unit/fake_profiler.c kernel/stacks.c kernel/stacktrace.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c lib/printf.c lib/parse.c uapi/profile_raw.c kernel/cmd/profile_heap.c kernel/prof/heapview.c mm/heapprof.c tests/unit/fake_heap_table.c kernel/cmd/profile_stream.c uapi/stream_ctl.c kernel/cmd/profile_say.c kernel/irqname.c
/* Host tests of kernel/prof/export.c through the real sampler and the
 * `profile` command: the raw and folded outputs as exact text, every
 * distinct chain printed, task names, unresolved addresses, and the raw
 * output read back by the reference parser (uapi/profile_raw.c) with the
 * counts and frames that were recorded. Fakes: fake_profiler.c. */
#include "test.h"
#include "fake_hal.h"
#include "fake_profiler.h"
#include <stdlib.h>

#include "kernel/prof/sample.h"
#include "kernel/prof/export.h"
#include "kernel/prof/report.h"
#include "kernel/prof/session.h"
#include "kernel/symtab.h"
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
    room(1024);                         /* these tests are not about sizing */
    window_fn = win_small;
    CHECK_EQ(run_cmd("profile 10 raw"), 0);
    CHECK_STR(got(),
        "# sonde raw build-id=" ID " source=tick 100Hz samples=7 dropped=0 cpus=4 ms=10\n"
        "3 5 burn 0 301a 2044 11b2\n"
        "2 7 burn 2 3010 2048 11b2\n"
        "1 5 burn 1 301a 2044 11b2\n"
        "1 12 netload 3 9abc\n");
}

/* A snapshot of another kind (as the off-CPU and heap profiles will
 * freeze): its header names the kind, chains carry count:weight and fold
 * by adding weights, folded stacks print the weight, records of other
 * kinds are left out, and the reference parser reads it all back. */
TEST(raw_and_folded_carry_kind_and_weight)
{
    reset();
    struct prof_record r[4] = {
        { .pr_pid = 5, .pr_depth = 1, .pr_kind = PROF_KIND_HEAP, .pr_weight = 1500, .pr_frames = { 0x301a } },
        { .pr_pid = 5, .pr_depth = 1, .pr_kind = PROF_KIND_HEAP, .pr_weight = 2500, .pr_frames = { 0x301a } },
        { .pr_pid = 7, .pr_depth = 1, .pr_kind = PROF_KIND_HEAP, .pr_weight = 9000, .pr_frames = { 0x3010 } },
        { .pr_pid = 7, .pr_depth = 1, .pr_kind = PROF_KIND_CPU, .pr_weight = 1, .pr_frames = { 0x3010 } },
    };
    struct prof_snapshot s = {
        .ps_recs = { r }, .ps_count = { 4 }, .ps_kind = PROF_KIND_HEAP, .ps_ms = 10,
        .ps_source = "heap", .ps_pid = PROF_ALL,
    };
    buf_printer_init(&bp, out, sizeof out);
    CHECK_EQ(prof_export(&s, false, &bp.pr), PROF_OK);
    CHECK_STR(got(),
        "# sonde raw build-id=" ID " source=heap samples=3 dropped=0 cpus=1 ms=10 kind=heap\n"
        "1:9000:1 7 burn 0 3010\n"       /* no size: a record is one object */
        "2:4000:2 5 burn 0 301a\n");
    struct praw_header h;
    char err[PRAW_ERR_MAX];
    CHECK_EQ(praw_parse(out, strlen(out), &h, NULL, NULL, err, sizeof err), 0);
    CHECK_EQ(h.ph_kind, PRAW_KIND_HEAP);
    buf_printer_init(&bp, out, sizeof out);
    CHECK_EQ(prof_export(&s, true, &bp.pr), PROF_OK);
    /* Both pcs are in burn_inner: one stack, the weights added. */
    CHECK(strstr(got(), " kind=heap\nburn;burn_inner 13000\n") != NULL);
}

/* Where the window and filter come from: the output word takes the chain
 * count's place, or stands in for the pid or the window. */
TEST(raw_arguments)
{
    reset();
    room(1024);                         /* these tests are not about sizing */
    window_fn = win_small;
    CHECK_EQ(run_cmd("profile raw"), 0);
    CHECK_EQ(last_sleep_ms, 1000);
    CHECK(strstr(out, " samples=7 dropped=0 cpus=4 ms=1000\n") != NULL);
    reset();
    room(1024);                         /* these tests are not about sizing */
    window_fn = win_small;
    CHECK_EQ(run_cmd("profile 500 raw"), 0);
    CHECK_EQ(last_sleep_ms, 500);
    CHECK(strstr(out, " samples=7 dropped=0 cpus=4 ms=500\n") != NULL);
    reset();
    room(1024);                         /* these tests are not about sizing */
    window_fn = win_small;
    CHECK_EQ(run_cmd("profile 20 7 raw"), 0);
    CHECK_STR(got(),
        "# sonde raw build-id=" ID " source=tick 100Hz samples=2 dropped=0 cpus=1 ms=20\n"
        "2 7 burn 2 3010 2048 11b2\n");
    reset();
    room(1024);                         /* these tests are not about sizing */
    window_fn = win_small;
    CHECK_EQ(run_cmd("profile 20 all raw"), 0);
    CHECK(strstr(out, "samples=7 ") != NULL);
    /* the chain count keeps its meaning */
    reset();
    room(1024);                         /* these tests are not about sizing */
    window_fn = win_small;
    CHECK_EQ(run_cmd("profile 20 all 1"), 0);
    CHECK(strncmp(out, "profiled 20 ms\n", 15) == 0);
    CHECK_EQ(count_leaves(), 1);
}

/* The counter's source name has spaces; the header carries it whole. */
TEST(raw_source_and_drops)
{
    reset();
    room(1024);                         /* these tests are not about sizing */
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
    room(1024);                         /* these tests are not about sizing */
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
    room(1024);                         /* these tests are not about sizing */
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
    room(1024);                         /* these tests are not about sizing */
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
    room(1024);                         /* these tests are not about sizing */
    long before = live_allocs;          /* the buffers, kept for good */
    window_fn = win_many;
    CHECK_EQ(run_cmd("profile 10 raw"), 0);
    CHECK_EQ(live_allocs, before);
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

/* ---- folded ---------------------------------------------------------- */

/* Root first, frames by symbol only: call sites of the same functions
 * (burn_mid+0x44 and +0x48) and tasks of the same name (pids 5 and 7,
 * both "burn") fold into one stack. */
TEST(folded_exact_text)
{
    reset();
    room(1024);                         /* these tests are not about sizing */
    window_fn = win_small;
    CHECK_EQ(run_cmd("profile 10 folded"), 0);
    CHECK_STR(got(),
        "# sonde folded build-id=" ID " source=tick 100Hz samples=7 dropped=0 cpus=4 ms=10\n"
        "burn;burn_outer;burn_mid;burn_inner 6\n"
        "netload;0x9abc 1\n");
}

TEST(folded_arguments)
{
    reset();
    room(1024);                         /* these tests are not about sizing */
    window_fn = win_small;
    CHECK_EQ(run_cmd("profile folded"), 0);
    CHECK_EQ(last_sleep_ms, 1000);
    CHECK(strstr(out, " samples=7 dropped=0 cpus=4 ms=1000\n") != NULL);
    reset();
    room(1024);                         /* these tests are not about sizing */
    window_fn = win_small;
    CHECK_EQ(run_cmd("profile 30 folded"), 0);
    CHECK_EQ(last_sleep_ms, 30);
    CHECK(strncmp(out, "# sonde folded ", 15) == 0);
    reset();
    room(1024);                         /* these tests are not about sizing */
    window_fn = win_small;
    CHECK_EQ(run_cmd("profile 30 12 folded"), 0);
    CHECK_STR(got(),
        "# sonde folded build-id=" ID " source=tick 100Hz samples=1 dropped=0 cpus=1 ms=30\n"
        "netload;0x9abc 1\n");
}

/* The pc is named by itself, a return address by the byte before it (the
 * call): 0x3080 is burn_spin's first byte as a pc, and a return into
 * burn_inner's end as a caller. What does not resolve prints as 0x<hex>
 * of the address itself: a gap (0x2000: the byte before is no symbol's),
 * an address past the table, and 0. */
static const struct fstack st_odd = { 6, { 0x3080, 0x2044, 0x2000, 0x11b2, 0x8888, 0 } };
static const struct fstack st_end = { 1, { 0x3080 } };

static void win_odd(void)
{
    tick(0, 5, 0x4010, &st_odd);
    tick(1, 5, 0x3080, &st_end);
}

TEST(folded_root_first_and_unresolved)
{
    reset();
    room(1024);                         /* these tests are not about sizing */
    window_fn = win_odd;
    CHECK_EQ(run_cmd("profile 10 folded"), 0);
    CHECK_STR(got(),
        "# sonde folded build-id=" ID " source=tick 100Hz samples=2 dropped=0 cpus=2 ms=10\n"
        "burn;0x0;0x8888;burn_outer;0x2000;burn_mid;burn_inner;idle_loop 1\n"
        "burn;burn_inner;burn_spin 1\n");
    reset();
    room(1024);                         /* these tests are not about sizing */
    window_fn = win_odd;
    CHECK_EQ(run_cmd("profile 10 raw"), 0);
    CHECK_STR(got(),
        "# sonde raw build-id=" ID " source=tick 100Hz samples=2 dropped=0 cpus=2 ms=10\n"
        "1 5 burn 0 4010 3080 2044 2000 11b2 8888 0\n"
        "1 5 burn 1 3080 3080\n");
}

/* A name holding a space or ';' would split a folded stack or a raw line:
 * they become '_'. A pid with no live task (exited: task_name finds
 * nothing) and pid 0 (no task) print as "-", and fold together. */
static void win_names(void)
{
    tick(0, 12, 0x3000, NULL);
    tick(1, 9, 0x3000, NULL);
    tick(2, 0, 0x3000, NULL);
    tick(3, 1, 0x3000, NULL);
    tick(3, 1, 0x3000, NULL);
}

TEST(task_names_sanitized)
{
    reset();
    room(1024);                         /* these tests are not about sizing */
    fake_names[12] = "net load;x";
    fake_names[1] = "sh\tell";
    window_fn = win_names;
    CHECK_EQ(run_cmd("profile 10 folded"), 0);
    CHECK_STR(got(),
        "# sonde folded build-id=" ID " source=tick 100Hz samples=5 dropped=0 cpus=4 ms=10\n"
        "-;burn_inner 2\n"
        "sh_ell;burn_inner 2\n"
        "net_load_x;burn_inner 1\n");
    reset();
    room(1024);                         /* these tests are not about sizing */
    fake_names[12] = "net load;x";
    fake_names[1] = "sh\tell";
    window_fn = win_names;
    CHECK_EQ(run_cmd("profile 10 raw"), 0);
    CHECK_STR(got(),
        "# sonde raw build-id=" ID " source=tick 100Hz samples=5 dropped=0 cpus=4 ms=10\n"
        "2 1 sh_ell 3 3000\n"
        "1 0 - 2 3000\n"
        "1 9 - 1 3000\n"
        "1 12 net_load_x 0 3000\n");
    struct praw_header h;
    char err[PRAW_ERR_MAX] = "";
    CHECK_EQ(praw_parse(out, strlen(out), &h, NULL, NULL, err, sizeof err), 0);
    CHECK_STR(err, "");
}

/* Equal counts print in the order of their text, whatever order the
 * samples came in. */
static const struct fstack st_in_outer = { 1, { 0x1010 } };
static const uintptr_t tie_pc[6] = { 0x2010, 0x4000, 0x9000, 0x3005, 0x2020, 0x1020 };
static const int tie_pid[6] = { 5, 1, 5, 5, 5, 5 };
static const struct fstack *tie_st[6] = { NULL, NULL, NULL, NULL, &st_in_outer, NULL };
static const unsigned *tie_perm;

static void win_ties(void)
{
    for (int i = 0; i < 6; i++) {
        unsigned k = tie_perm[i];
        tick((unsigned)(5 - i) % 4, tie_pid[k], tie_pc[k], tie_st[k]);
    }
}

TEST(folded_ties_are_deterministic)
{
    static const unsigned p1[6] = { 0, 1, 2, 3, 4, 5 }, p2[6] = { 5, 4, 3, 2, 1, 0 };
    /* a stack that is another's prefix prints first */
    static const char want[] =
        "burn;0x9000 1\n"
        "burn;burn_inner 1\n"
        "burn;burn_mid 1\n"
        "burn;burn_outer 1\n"
        "burn;burn_outer;burn_mid 1\n"
        "shell;idle_loop 1\n";
    static char first[4096];
    reset();
    room(1024);                         /* these tests are not about sizing */
    tie_perm = p1;
    window_fn = win_ties;
    CHECK_EQ(run_cmd("profile 10 folded"), 0);
    CHECK(strstr(out, want) != NULL);
    CHECK(strlen(out) < sizeof first);
    memcpy(first, out, sizeof first - 1);
    reset();
    room(1024);                         /* these tests are not about sizing */
    tie_perm = p2;
    window_fn = win_ties;
    CHECK_EQ(run_cmd("profile 10 folded"), 0);
    CHECK(strcmp(out, first) == 0);
    /* raw likewise: pid, then cpu */
    reset();
    room(1024);                         /* these tests are not about sizing */
    tie_perm = p1;
    window_fn = win_ties;
    CHECK_EQ(run_cmd("profile 10 raw"), 0);
    CHECK(strstr(out, "\n1 1 shell 0 4000\n1 5 burn 0 1020\n1 5 burn 1 2010\n"
                      "1 5 burn 1 2020 1010\n1 5 burn 2 3005\n1 5 burn 3 9000\n") != NULL);
}

/* Every distinct stack is printed, however many: 300 unresolved pcs, one
 * of them sampled twice. The counts add up to the header's samples. */
static void win_300(void)
{
    for (unsigned i = 0; i < 300; i++)
        tick(i % 4, 5, 0x5000 + i, NULL);
    tick(2, 7, 0x5000 + 299, NULL);
}

static unsigned folded_lines(uint64_t *sum)
{
    unsigned n = 0;
    *sum = 0;
    for (const char *s = strchr(out, '\n'); s && s[1]; s = strchr(s + 1, '\n')) {
        const char *sp = strchr(s + 1, ' ');
        const char *nl = strchr(s + 1, '\n');
        if (!sp || !nl || sp > nl)
            return 0;
        *sum += strtoull(sp + 1, NULL, 10);
        n++;
    }
    return n;
}

TEST(folded_has_no_chain_limit)
{
    reset();
    room(1024);                         /* these tests are not about sizing */
    window_fn = win_300;
    CHECK_EQ(run_cmd("profile 10 folded"), 0);
    uint64_t sum;
    CHECK_EQ(folded_lines(&sum), 300);
    CHECK_EQ(sum, 301);
    CHECK(strstr(out, " samples=301 dropped=0 cpus=4 ms=10\nburn;0x512b 2\n"
                      "burn;0x5000 1\nburn;0x5001 1\n") != NULL);
    CHECK(strstr(out, "\nburn;0x512a 1\n") != NULL);
    CHECK(strstr(out, "did not fit") == NULL);
    reset();
    room(1024);                         /* these tests are not about sizing */
    window_fn = win_300;
    CHECK_EQ(run_cmd("profile 10 raw"), 0);
    CHECK_EQ(folded_lines(&sum), 301);          /* pid 7's is its own line */
    reset();
    room(1024);                         /* these tests are not about sizing */
    long before = live_allocs;
    window_fn = win_300;
    kmalloc_fail = 1;
    CHECK(run_cmd("profile 10 folded") != 0);
    CHECK(strncmp(out, "profile: no memory to fold 301 samples (", 40) == 0);
    CHECK(strlen(out) > 48 && strcmp(out + strlen(out) - 8, " bytes)\n") == 0);
    CHECK_EQ(live_allocs, before);
    /* each of the fold's three allocations, failing alone */
    for (int k = 0; k < 3; k++) {
        reset();
    room(1024);                         /* these tests are not about sizing */
        window_fn = win_300;
        if (k == 2)
            kzalloc_fail = 1;
        else
            kmalloc_fail = 1, kmalloc_pass = k;
        CHECK(run_cmd("profile 10 raw") != 0);
        CHECK(strncmp(out, "profile: no memory to fold 301 samples (", 40) == 0);
        CHECK_EQ(live_allocs, before);
    }
}

/* Two static functions may share a name: folded prints names, so their
 * stacks are one line, not two identical ones. */
static const uint64_t dup_addrs[] = { 0x1000, 0x2000, 0x3000 };
static const uint32_t dup_sizes[] = { 0x100, 0x100, 0x100 };
static const uint32_t dup_offs[] = { 0, 5, 10 };
static const char dup_names[] = "copy\0copy\0main";
static const struct symtab_image dup_syms = { 3, dup_addrs, dup_sizes, dup_offs, dup_names };
static const struct fstack st_main = { 1, { 0x3010 } };

static void win_dup(void)
{
    symtab_active = &dup_syms;
    tick(0, 5, 0x1010, &st_main);
    tick(1, 5, 0x2010, &st_main);
    tick(2, 5, 0x2020, &st_main);
}

TEST(folded_same_name_two_symbols)
{
    reset();
    room(1024);                         /* these tests are not about sizing */
    window_fn = win_dup;
    CHECK_EQ(run_cmd("profile 10 folded"), 0);
    CHECK_STR(got(),
        "# sonde folded build-id=" ID " source=tick 100Hz samples=3 dropped=0 cpus=3 ms=10\n"
        "burn;main;copy 3\n");
}
