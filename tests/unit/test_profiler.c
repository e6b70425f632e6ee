// LINK: kernel/profiler.c kernel/profiler_report.c kernel/symtab.c lib/printf.c lib/parse.c
/* Host tests of kernel/profiler.c: the real sample path driven through
 * profiler_tick and profiler_nmi with fake trap frames during a fake
 * window (sleep_ms runs a callback), the fold and the report checked as
 * exact text, and the `profile` command's arguments and errors.
 *
 * Fakes here: tasks, sleep, heap, the PMU and the stack walk (a trap
 * frame's fp points at a struct fstack listing the return addresses).
 * Names come from the real kernel/symtab.c over a tiny table installed as
 * symtab_active. hal/cpu.h comes from fake_hal.c. */
#include "test.h"
#include "fake_hal.h"
#include <stdlib.h>

#include "hal/cpu.h"
#include "hal/irq.h"
#include "hal/pmu.h"
#include "kernel/profiler.h"
#include "kernel/shell.h"
#include "kernel/stacktrace.h"
#include "kernel/symtab.h"
#include "kernel/task.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "mm/heap.h"

/* ---- fakes ---------------------------------------------------------- */

static int fake_pid = 5;
static int fake_tasks[] = { 1, 5, 7, 12 };

int task_current_pid(void) { return fake_pid; }

bool task_exists(int pid)
{
    for (unsigned i = 0; i < sizeof fake_tasks / sizeof fake_tasks[0]; i++)
        if (fake_tasks[i] == pid)
            return true;
    return false;
}

/* The first sleep of a run is its window: run the window callback there,
 * then (if asked) make the window exactly fake_window_cycles long. */
static void (*window_fn)(void);
static uint64_t fake_window_cycles;
static unsigned sleeps;
static uint64_t last_sleep_ms;

void sleep_ms(uint64_t ms)
{
    sleeps++;
    last_sleep_ms = ms;
    void (*fn)(void) = window_fn;
    window_fn = NULL;
    uint64_t entry = fake_cycles;
    if (fn)
        fn();
    if (fake_window_cycles)
        fake_cycles = entry - fake_cycles_step + fake_window_cycles;
}

static int kmalloc_fail, kzalloc_fail;  /* fail the next N calls */
static long live_allocs;

void *kmalloc(size_t n)
{
    if (kmalloc_fail > 0) {
        kmalloc_fail--;
        return NULL;
    }
    live_allocs++;
    return malloc(n);
}

void *kzalloc(size_t n)
{
    if (kzalloc_fail > 0) {
        kzalloc_fail--;
        return NULL;
    }
    live_allocs++;
    return calloc(1, n);
}

void kfree(void *p)
{
    if (p)
        live_allocs--;
    free(p);
}

static bool pmu_usable;
static const char *pmu_name = "tick 100Hz";
static const char *pmu_note;
static bool pmu_claim;
static bool armed[64];
static unsigned arms, disarms, probes;

bool pmu_probe(void) { probes++; return pmu_usable; }
const char *pmu_source_name(void) { return pmu_name; }
const char *pmu_probe_note(void) { return pmu_note; }
static uint64_t arm_fails;          /* bit i: cpu i's counter never arms */
void pmu_arm(void) { arms++; armed[fake_cpu] = !(arm_fails >> fake_cpu & 1); }
void pmu_disarm(void) { disarms++; armed[fake_cpu] = false; }
bool pmu_armed(void) { return armed[fake_cpu]; }
bool pmu_nmi_claim(void) { return pmu_claim; }

/* A fake stack: what st_walk returns for a frame pointer pointing here. */
struct fstack {
    unsigned n;
    uintptr_t ret[10];
};
static uint64_t walk_cycles;        /* cycles a walk "takes" */
static void (*walk_hook)(void);     /* runs inside the sample: a nested NMI */

unsigned st_walk(uintptr_t fp, uintptr_t sp, uintptr_t *out, unsigned max)
{
    const struct fstack *s = (const struct fstack *)fp;
    unsigned n = 0;
    for (; s && n < s->n && n < max; n++)
        out[n] = s->ret[n];
    fake_cycles += walk_cycles;
    void (*h)(void) = walk_hook;
    walk_hook = NULL;
    if (h)
        h();
    return n;
}

/* As kernel/stacktrace.c's, over the fake walk above. */
unsigned st_capture_trap(const struct trap_frame *tf, uintptr_t *out, unsigned max)
{
    out[0] = trap_pc(tf);
    return 1 + st_walk(trap_fp(tf), trap_sp(tf), out + 1, max - 1);
}

/* In symgen's layout. burn_spin starts where burn_inner ends, so a
 * return address at burn_spin's first byte belongs to burn_inner. */
static const uint64_t t_addrs[] = { 0x1000, 0x2000, 0x3000, 0x3080, 0x4000 };
static const uint32_t t_sizes[] = { 0x400, 0x100, 0x80, 0x20, 0x40 };
static const uint32_t t_offs[] = { 0, 11, 20, 31, 41 };
static const char t_names[] = "burn_outer\0burn_mid\0burn_inner\0burn_spin\0idle_loop";
static const struct symtab_image t_syms = { 5, t_addrs, t_sizes, t_offs, t_names };

/* ---- helpers -------------------------------------------------------- */

static char out[1 << 16];
static struct buf_printer bp;

/* The output, through a call the compiler cannot see into, so CHECK_STR's
 * message buffer does not trip -Wformat-truncation on a 64 KiB array. */
__attribute__((noinline)) static const char *got(void) { return out; }

/* The commands as registered in this link, found by name. */
extern const struct shell_cmd __start_shell_cmds[], __stop_shell_cmds[];

static shell_fn cmd_fn(const char *name)
{
    for (const struct shell_cmd *c = __start_shell_cmds; c < __stop_shell_cmds; c++)
        if (strcmp(c->name, name) == 0)
            return c->fn;
    abort();
}

static int run_cmd(const char *line)
{
    char copy[256];
    char *argv[8];
    snprintf(copy, sizeof copy, "%s", line);
    int argc = split_words(copy, argv, 8);
    buf_printer_init(&bp, out, sizeof out);
    return cmd_fn(argv[0])(argc, argv, &bp.pr);
}

static void reset(void)
{
    symtab_active = &t_syms;
    fake_online = 0xf;
    fake_ncpus = 4;
    fake_cpu = 0;
    fake_cycles_step = 1;
    fake_pid = 5;
    fake_window_cycles = 0;
    walk_cycles = 0;
    walk_hook = NULL;
    window_fn = NULL;
    pmu_usable = false;
    pmu_name = "tick 100Hz";
    pmu_note = NULL;
    pmu_claim = false;
    memset(armed, 0, sizeof armed);
    arm_fails = 0;
    arms = disarms = 0;
    kmalloc_fail = kzalloc_fail = 0;
}

static struct trap_frame frame(uintptr_t pc, const struct fstack *st)
{
    struct trap_frame tf = { pc, 0x7000, (uintptr_t)st };
    return tf;
}

/* Both entry points run with interrupts off, as the trap code calls them. */
static void tick(unsigned cpu, int pid, uintptr_t pc, const struct fstack *st)
{
    fake_cpu = cpu;
    fake_pid = pid;
    struct trap_frame tf = frame(pc, st);
    unsigned long f = irq_save();
    profiler_tick(&tf);
    irq_restore(f);
}

static bool nmi(unsigned cpu, int pid, uintptr_t pc, const struct fstack *st)
{
    fake_cpu = cpu;
    fake_pid = pid;
    struct trap_frame tf = frame(pc, st);
    unsigned long f = irq_save();
    bool ours = profiler_nmi(&tf);
    irq_restore(f);
    return ours;
}

/* Leaf lines: "12.5% ..." at the start of a line. */
static unsigned count_leaves(void)
{
    unsigned n = 0;
    for (const char *s = out; s && *s; s = strchr(s, '\n'), s = s ? s + 1 : s) {
        const char *q = s;
        while (*q >= '0' && *q <= '9')
            q++;
        if (q > s && q[0] == '.' && q[1] >= '0' && q[1] <= '9' && q[2] == '%')
            n++;
    }
    return n;
}

/* burn_inner <- burn_mid+0x44 <- burn_outer+0x1b2, and a sibling path. */
static const struct fstack st_a = { 2, { 0x2044, 0x11b2 } };
static const struct fstack st_b = { 2, { 0x2048, 0x11b2 } };

/* ---- report format -------------------------------------------------- */

static void win_span(void)
{
    tick(0, 5, 0x301a, &st_a);
    tick(0, 5, 0x303e, &st_a);
    tick(1, 5, 0x3010, &st_b);
    tick(2, 7, 0x3030, &st_a);
    tick(2, 7, 0x3010, &st_b);
    tick(0, 5, 0x3020, &st_a);
}

TEST(report_leaf_span_callers_by_address)
{
    reset();
    fake_window_cycles = 1000000;
    window_fn = win_span;
    CHECK_EQ(run_cmd("profile"), 0);
    CHECK_EQ(last_sleep_ms, 1000);
    CHECK_STR(got(),
        "profiled 1000 ms\n"
        "6 samples on 3 cpus, 0 dropped, source tick 100Hz\n"
        "sample cost 1 cycles median (min 1, max 1), 0.000% of cpu time\n"
        "66.7% 4 burn_inner+0x1a..0x3e\n"
        "        <- burn_mid+0x44\n"
        "        <- burn_outer+0x1b2\n"
        "33.3% 2 burn_inner+0x10\n"
        "        <- burn_mid+0x48\n"
        "        <- burn_outer+0x1b2\n");
}

/* The report's table and overflow set are freed; the buffers are kept. */
TEST(report_frees_what_it_allocates)
{
    reset();
    long before = live_allocs;
    window_fn = win_span;
    CHECK_EQ(run_cmd("profile 10"), 0);
    CHECK_EQ(live_allocs, before);
    CHECK(before >= 4);                 /* the 4 CPUs' buffers, never freed */
}

static void win_sixteenth(void)
{
    tick(3, 5, 0x3001, NULL);
    for (int i = 0; i < 15; i++)
        tick(i % 4, 5, 0x2002, NULL);
}

TEST(report_percent_rounds_half_up)
{
    reset();
    window_fn = win_sixteenth;
    CHECK_EQ(run_cmd("profile 5"), 0);
    CHECK(strstr(out, "\n93.8% 15 burn_mid+0x2\n6.3% 1 burn_inner+0x1\n") != NULL);
}

/* Costs 100, 200, 3000 and 500 cycles: the median of an even count is the
 * mean of the middle two, (200 + 500) / 2; the share is 3800 cycles over
 * window x 4 cpus, rounded half up to 3 decimals. */
static void win_costs(void)
{
    static const uint64_t c[] = { 99, 199, 2999, 499 };
    for (int i = 0; i < 4; i++) {
        walk_cycles = c[i];
        tick(i, 5, 0x3000, NULL);
    }
    walk_cycles = 0;
}

TEST(report_sample_cost_line)
{
    reset();
    fake_window_cycles = 60800;
    window_fn = win_costs;
    CHECK_EQ(run_cmd("profile 2000 all 1"), 0);
    /* 3800 / (60800 * 4) = 1.5625% */
    CHECK(strstr(out, "\nsample cost 350 cycles median (min 100, max 3000), "
                      "1.563% of cpu time\n") != NULL);
    reset();
    fake_window_cycles = 6080000;
    window_fn = win_costs;
    CHECK_EQ(run_cmd("profile 2000 all 1"), 0);
    CHECK(strstr(out, "(min 100, max 3000), 0.016% of cpu time\n") != NULL);
}

/* Four chains of one sample each, recorded in some order across CPUs. */
static const struct fstack st_1100 = { 1, { 0x1100 } };
static const struct fstack st_1200 = { 1, { 0x1200 } };
static const uintptr_t tie_pc[4] = { 0x9000, 0x3005, 0x3005, 0x2010 };
static const struct fstack *tie_st[4] = { &st_1100, &st_1200, &st_1100, NULL };
static const unsigned *tie_perm;

static void win_ties(void)
{
    for (int i = 0; i < 4; i++) {
        unsigned k = tie_perm[i];
        tick(3 - (unsigned)i, 5, tie_pc[k], tie_st[k]);
    }
}

TEST(report_ties_are_deterministic)
{
    static const unsigned p1[4] = { 0, 1, 2, 3 }, p2[4] = { 3, 2, 1, 0 };
    static const char want[] =
        "25.0% 1 burn_mid+0x10\n"
        "25.0% 1 burn_inner+0x5\n"
        "        <- burn_outer+0x100\n"
        "25.0% 1 burn_inner+0x5\n"
        "        <- burn_outer+0x200\n"
        "25.0% 1 0x9000\n"
        "        <- burn_outer+0x100\n";
    static char first[4096];
    reset();
    tie_perm = p1;
    window_fn = win_ties;
    CHECK_EQ(run_cmd("profile 10"), 0);
    CHECK(strstr(out, want) != NULL);
    CHECK(strlen(out) < sizeof first);
    memcpy(first, out, sizeof first - 1);
    reset();
    tie_perm = p2;
    window_fn = win_ties;
    CHECK_EQ(run_cmd("profile 10"), 0);
    CHECK(strcmp(out, first) == 0);
}

static const struct fstack st_junk = { 1, { 0x8888 } };

static void win_unresolved(void)
{
    tick(1, 5, 0x9abc, &st_junk);
    tick(1, 5, 0x9abd, &st_junk);   /* unresolved leaves fold by address */
}

TEST(report_unresolved_addresses_in_hex)
{
    reset();
    window_fn = win_unresolved;
    CHECK_EQ(run_cmd("profile 10"), 0);
    CHECK(strstr(out, "\n50.0% 1 0x9abc\n        <- 0x0000000000008888\n"
                      "50.0% 1 0x9abd\n        <- 0x0000000000008888\n") != NULL);
}

/* The callers' lines are the kernel's own symtab_format_ret: a return
 * address is named from the byte before it (the call), with the offset of
 * the address itself, so one just past a function's last byte (a call to
 * a noreturn function) names that function, not the next one. */
TEST(symtab_format_ret_names_the_call)
{
    reset();
    char buf[64];
    symtab_format_ret(0x3080, buf, sizeof buf);
    CHECK_STR(buf, "burn_inner+0x80");
    symtab_format(0x3080, buf, sizeof buf);
    CHECK_STR(buf, "burn_spin+0x0");
    symtab_format_ret(0x2044, buf, sizeof buf);
    CHECK_STR(buf, "burn_mid+0x44");
    symtab_format_ret(0x2001, buf, sizeof buf);
    CHECK_STR(buf, "burn_mid+0x1");
    symtab_format_ret(0x2000, buf, sizeof buf);     /* byte before: a gap */
    CHECK_STR(buf, "0x0000000000002000");
    symtab_format_ret(0x8888, buf, sizeof buf);
    CHECK_STR(buf, "0x0000000000008888");
    symtab_format_ret(0, buf, sizeof buf);
    CHECK_STR(buf, "0x0000000000000000");
    CHECK_EQ(symtab_format_ret(0xffffffff80201234ull, buf, sizeof buf), 18);
    CHECK_STR(buf, "0xffffffff80201234");
}

static const struct fstack st_end = { 1, { 0x3080 } };
static void win_call_at_end(void) { tick(0, 5, 0x3084, &st_end); }

TEST(report_caller_at_function_end)
{
    reset();
    window_fn = win_call_at_end;
    CHECK_EQ(run_cmd("profile 10"), 0);
    CHECK(strstr(out, "\n100.0% 1 burn_spin+0x4\n        <- burn_inner+0x80\n") != NULL);
}

/* A deep stack keeps frame 0 and the first 7 return addresses. */
static const struct fstack st_deep = { 9, { 0x1001, 0x1002, 0x1003, 0x1004,
                                            0x1005, 0x1006, 0x1007, 0x1008,
                                            0x1009 } };
static void win_deep(void) { tick(0, 5, 0x3000, &st_deep); }

TEST(report_depth_is_at_most_8)
{
    reset();
    window_fn = win_deep;
    CHECK_EQ(run_cmd("profile 10"), 0);
    CHECK(strstr(out, "<- burn_outer+0x7\n") != NULL);
    CHECK(strstr(out, "<- burn_outer+0x8\n") == NULL);
}

/* 128 chains of one sample fill the table; 5 more, of 2 samples each,
 * do not fit. */
static const struct fstack *over_st(unsigned i)
{
    static struct fstack s[133];
    s[i].n = 1;
    s[i].ret[0] = 0x1100 + i;
    return &s[i];
}

static void win_overflow(void)
{
    for (unsigned i = 0; i < 133; i++)
        tick(0, 5, 0x301a, over_st(i));
    for (unsigned i = 128; i < 133; i++)
        tick(0, 5, 0x301a, over_st(i));
}

TEST(report_overflow_line_counts_exactly)
{
    reset();
    long before = live_allocs;
    window_fn = win_overflow;
    CHECK_EQ(run_cmd("profile 10 all 1"), 0);
    CHECK(strstr(out, "\n138 samples on 1 cpus, 0 dropped, source tick 100Hz\n") != NULL);
    CHECK(strstr(out, "\n0.7% 1 burn_inner+0x1a\n"
                      "        <- burn_outer+0x100\n"
                      "5 more chains did not fit the 128-chain table (10 samples)\n")
          != NULL);
    CHECK_EQ(live_allocs, before);
    /* All 128 that fit, in order, then the line. */
    reset();
    window_fn = win_overflow;
    CHECK_EQ(run_cmd("profile 10 all 128"), 0);
    CHECK_EQ(count_leaves(), 128);
    CHECK(strstr(out, "\n0.7% 1 burn_inner+0x1a\n        <- burn_outer+0x17f\n5 more") != NULL);
}

static void win_fill(void)
{
    for (int i = 0; i < 1025; i++)
        tick(1, 5, 0x3000 + (i & 7), NULL);
}

TEST(report_full_buffer_drops_and_counts)
{
    reset();
    window_fn = win_fill;
    CHECK_EQ(run_cmd("profile 10 all 1"), 0);
    CHECK(strstr(out, "\n1024 samples on 1 cpus, 1 dropped, source tick 100Hz\n") != NULL);
    CHECK(strstr(out, "\n100.0% 1024 burn_inner+0x0..0x7\n") != NULL);
}

static void win_pid7_only(void)
{
    tick(0, 5, 0x3000, NULL);
    tick(1, 7, 0x2000, NULL);
    tick(2, 5, 0x3000, NULL);
}

TEST(report_pid_filter_at_sample_time)
{
    reset();
    window_fn = win_pid7_only;
    CHECK_EQ(run_cmd("profile 500 7"), 0);
    CHECK_EQ(last_sleep_ms, 500);
    CHECK(strstr(out, "\n1 samples on 1 cpus, 0 dropped, source tick 100Hz\n") != NULL);
    CHECK(strstr(out, "\n100.0% 1 burn_mid+0x0\n") != NULL);
    CHECK(strstr(out, "burn_inner") == NULL);
}

TEST(report_empty_pid_filter)
{
    reset();
    window_fn = win_pid7_only;          /* nothing from pid 12 */
    CHECK_EQ(run_cmd("profile 500 12"), 0);
    CHECK_STR(got(),
        "profiled 500 ms\n"
        "0 samples on 0 cpus, 0 dropped, source tick 100Hz\n"
        "no samples for pid 12: that task may have been asleep the whole window\n");
}

TEST(report_empty_counter_and_tick)
{
    reset();
    pmu_usable = true;
    pmu_name = "pmu/nmi intel fixed-ctr1";
    CHECK_EQ(run_cmd("profile 200"), 0);
    CHECK_STR(got(),
        "profiled 200 ms\n"
        "0 samples on 0 cpus, 0 dropped, source pmu/nmi intel fixed-ctr1\n"
        "no samples: the counter counts unhalted cycles, so a CPU that spent "
        "the window in hlt contributes nothing; this machine was idle\n");
    reset();
    CHECK_EQ(run_cmd("profile 200"), 0);
    CHECK_STR(got(),
        "profiled 200 ms\n"
        "0 samples on 0 cpus, 0 dropped, source tick 100Hz\n"
        "no samples\n");
}

TEST(report_probe_note_after_line_2)
{
    reset();
    pmu_note = "counter claimed (intel fixed-ctr1) but did not count in 10 us: tick only";
    window_fn = win_deep;
    CHECK_EQ(run_cmd("profile 10"), 0);
    static const char want[] =
        "profiled 10 ms\n1 samples on 1 cpus, 0 dropped, source tick 100Hz\n"
        "counter claimed (intel fixed-ctr1) but did not count in 10 us: "
        "tick only\nsample cost ";
    CHECK(strncmp(out, want, strlen(want)) == 0);
}

TEST(report_chain_table_alloc_failure)
{
    reset();
    window_fn = win_deep;
    kzalloc_fail = 1;
    long before = live_allocs;
    CHECK(run_cmd("profile 10") != 0);
    CHECK(strncmp(out, "profile: no memory for the chain table (", 40) == 0);
    CHECK_EQ(live_allocs, before);
    CHECK_EQ(run_cmd("profile 10"), 0);   /* not left busy */
}

/* ---- the sample path ------------------------------------------------ */

static bool nested_ret;
static void nested_nmi(void) { nested_ret = nmi(2, 5, 0x3000, NULL); }
static void win_nested(void)
{
    walk_hook = nested_nmi;
    tick(2, 5, 0x2000, NULL);
}

TEST(sample_reentry_is_dropped_not_nested)
{
    reset();
    pmu_claim = true;
    nested_ret = false;
    window_fn = win_nested;
    CHECK_EQ(run_cmd("profile 10"), 0);
    CHECK(nested_ret);
    CHECK(strstr(out, "\n1 samples on 1 cpus, 1 dropped, source tick 100Hz\n") != NULL);
    CHECK(strstr(out, "\n100.0% 1 burn_mid+0x0\n") != NULL);
}

static bool nmi_ret_foreign, nmi_ret_ours;
static unsigned arms_after_first_tick;
static void win_counter(void)
{
    tick(0, 5, 0x3000, NULL);           /* arms, does not sample */
    arms_after_first_tick = arms;
    tick(0, 5, 0x3001, NULL);           /* armed: the counter samples now */
    pmu_claim = false;
    nmi_ret_foreign = nmi(0, 5, 0x3002, NULL);
    pmu_claim = true;
    nmi_ret_ours = nmi(0, 5, 0x2004, NULL);
    nmi(1, 5, 0x2004, NULL);
}

TEST(sample_counter_arms_on_tick_and_tick_stops_sampling)
{
    reset();
    pmu_usable = true;
    pmu_name = "pmu/nmi intel fixed-ctr1";
    window_fn = win_counter;
    CHECK_EQ(run_cmd("profile 10"), 0);
    CHECK_EQ(arms_after_first_tick, 1);
    CHECK_EQ(arms, 1);
    CHECK(!nmi_ret_foreign);
    CHECK(nmi_ret_ours);
    CHECK(strstr(out, "\n2 samples on 2 cpus, 0 dropped, source pmu/nmi intel fixed-ctr1\n"
                      "sample cost") != NULL);
    CHECK(strstr(out, "\n100.0% 2 burn_mid+0x4\n") != NULL);

    /* After Stop: the next tick disarms, once; an overflow still in
     * flight is claimed but not recorded. */
    CHECK(armed[0]);
    tick(0, 5, 0x3000, NULL);
    CHECK(!armed[0]);
    CHECK_EQ(disarms, 1);
    tick(0, 5, 0x3000, NULL);
    CHECK_EQ(disarms, 1);
    CHECK(nmi(1, 5, 0x3000, NULL));
    pmu_claim = false;
    CHECK(!nmi(1, 5, 0x3000, NULL));
    buf_printer_init(&bp, out, sizeof out);
    CHECK_EQ(profiler_report_again(8, &bp.pr), 0);
    CHECK(strstr(out, "\n2 samples on 2 cpus,") != NULL);
}

TEST(sample_idle_tick_touches_nothing)
{
    reset();
    tick(0, 5, 0x3000, NULL);
    tick(1, 5, 0x3000, NULL);
    CHECK_EQ(arms + disarms, 0);
    /* Not active: an NMI is claimed or not by the counter alone. */
    CHECK(!nmi(0, 5, 0x3000, NULL));
}

/* Called with interrupts on, either entry point could race the sampler on
 * its own CPU: the precondition is checked, not assumed. */
TEST(sample_entry_with_interrupts_on_panics)
{
    reset();
    struct trap_frame tf = frame(0x3000, NULL);
    CHECK(irqs_enabled());
    EXPECT_PANIC(profiler_tick(&tf), "irqs_enabled()");
    EXPECT_PANIC(profiler_nmi(&tf), "irqs_enabled()");
    CHECK_EQ(arms + disarms, 0);
}

/* A counter run where cpu 1's counter never arms: its tick goes on
 * sampling, and the report says which cpu's samples came from where,
 * after the header lines the spec fixes. */
static void win_mixed(void)
{
    tick(0, 5, 0x3000, NULL);           /* arms */
    tick(1, 5, 0x3001, NULL);           /* cannot arm: samples */
    for (int i = 0; i < 3; i++)
        nmi(0, 5, 0x3002, NULL);
    tick(1, 5, 0x3003, NULL);
    tick(0, 5, 0x3004, NULL);           /* armed: no sample */
}

TEST(report_mixed_sources_say_which_cpu)
{
    reset();
    pmu_usable = true;
    pmu_claim = true;
    pmu_name = "pmu/nmi intel fixed-ctr1";
    arm_fails = 1u << 1;
    fake_window_cycles = 1000000;
    window_fn = win_mixed;
    CHECK_EQ(run_cmd("profile 10 all 1"), 0);
    CHECK_STR(got(),
        "profiled 10 ms\n"
        "5 samples on 2 cpus, 0 dropped, source pmu/nmi intel fixed-ctr1\n"
        "sample cost 1 cycles median (min 1, max 1), 0.000% of cpu time\n"
        "cpus: 0 pmu 3, 1 tick 2, 2 none, 3 none\n"
        "100.0% 5 burn_inner+0x1..0x3\n");
    CHECK_EQ(run_cmd("profile_cpus"), 0);
    CHECK_STR(got(), "cpus: 0 pmu 3, 1 tick 2, 2 none, 3 none\n");
    CHECK(run_cmd("profile_cpus now") != 0);
    CHECK_STR(got(), "profile_cpus: takes no arguments\n");
}

/* Every cpu on the counter, or every cpu on the tick: the header's source
 * says it all and no line is added; profile_cpus still tells. */
TEST(report_single_source_adds_no_line)
{
    reset();
    pmu_usable = true;
    pmu_name = "pmu/nmi intel fixed-ctr1";
    window_fn = win_counter;
    CHECK_EQ(run_cmd("profile 10"), 0);
    CHECK(strstr(out, "cpus:") == NULL);
    CHECK_EQ(run_cmd("profile_cpus"), 0);
    CHECK_STR(got(), "cpus: 0 pmu 1, 1 pmu 1, 2 none, 3 none\n");
    reset();
    window_fn = win_span;
    CHECK_EQ(run_cmd("profile 10"), 0);
    CHECK(strstr(out, "cpus:") == NULL);
    CHECK_EQ(run_cmd("profile_cpus"), 0);
    CHECK_STR(got(), "cpus: 0 tick 3, 1 tick 1, 2 tick 2, 3 none\n");
    /* Injected records count as the last run's source. */
    uintptr_t f[1] = { 0x3000 };
    CHECK_EQ(profiler_inject(3, 5, f, 1, 40), 0);
    CHECK_EQ(run_cmd("profile_cpus"), 0);
    CHECK_STR(got(), "cpus: 0 tick 3, 1 tick 1, 2 tick 2, 3 tick 1\n");
}

/* ---- inject and report_again (the bench's hooks) -------------------- */

TEST(inject_and_report_again)
{
    reset();
    CHECK_EQ(run_cmd("profile 1"), 0);   /* fresh counts */
    uintptr_t f[3] = { 0x3010, 0x2044, 0x11b2 };
    for (int i = 0; i < 1025; i++)
        CHECK_EQ(profiler_inject(3, 5, f, 3, 40), 0);
    CHECK_EQ(profiler_inject(3, 5, f, 0, 40), PROFILER_EINVAL);
    CHECK_EQ(profiler_inject(3, 5, f, 9, 40), PROFILER_EINVAL);
    CHECK_EQ(profiler_inject(40, 5, f, 3, 40), PROFILER_EINVAL);   /* no buffer */
    buf_printer_init(&bp, out, sizeof out);
    uint64_t before = fake_cycles;
    CHECK_EQ(profiler_report_again(1, &bp.pr), 0);
    CHECK(strstr(out, "\n1024 samples on 1 cpus, 1 dropped, source tick 100Hz\n"
                      "sample cost 40 cycles median (min 40, max 40), ") != NULL);
    CHECK(strstr(out, "\n100.0% 1024 burn_inner+0x10\n        <- burn_mid+0x44\n") != NULL);
    CHECK(profiler_report_cycles() > 0);
    CHECK(profiler_report_cycles() < fake_cycles - before);
}

/* Drops are the records that did not fit, summed over cpus, exactly:
 * both full buffers' overflow and a nested sample. */
TEST(report_drops_exact_when_buffers_fill)
{
    reset();
    pmu_claim = true;
    window_fn = win_nested;             /* cpu 2: 1 sample, 1 nested drop */
    CHECK_EQ(run_cmd("profile 1"), 0);
    uintptr_t f[2] = { 0x3010, 0x2044 };
    for (int i = 0; i < 1024 + 37; i++)
        CHECK_EQ(profiler_inject(0, 5, f, 2, 40), 0);
    for (int i = 0; i < 1023 + 5; i++)
        CHECK_EQ(profiler_inject(2, 5, f, 2, 40), 0);
    buf_printer_init(&bp, out, sizeof out);
    CHECK_EQ(profiler_report_again(1, &bp.pr), 0);
    CHECK(strstr(out, "\n2048 samples on 2 cpus, 43 dropped, source tick 100Hz\n") != NULL);
}

/* ---- Start: busy, buffers ------------------------------------------- */

static int busy_rc;
static char busy_out[256];
static void win_busy(void)
{
    tick(0, 5, 0x3000, NULL);
    struct buf_printer b2;
    buf_printer_init(&b2, busy_out, sizeof busy_out);
    char a0[] = "profile", a1[] = "1";
    char *argv[] = { a0, a1 };
    busy_rc = cmd_fn("profile")(2, argv, &b2.pr);
    tick(1, 5, 0x3000, NULL);
}

TEST(start_second_run_is_busy)
{
    reset();
    unsigned s0 = sleeps;
    window_fn = win_busy;
    CHECK_EQ(run_cmd("profile 100"), 0);
    CHECK(busy_rc != 0);
    CHECK_STR(busy_out, "profile: busy\n");
    CHECK_EQ(sleeps - s0, 1);            /* the second run slept no window */
    CHECK(strstr(out, "\n2 samples on 2 cpus, 0 dropped") != NULL);
    /* and the profiler is free again afterwards */
    CHECK_EQ(run_cmd("profile 1"), 0);
}

static void win_cpu5(void) { tick(5, 5, 0x3000, NULL); tick(4, 5, 0x3000, NULL); }

TEST(start_buffer_for_cpu_online_later)
{
    reset();
    fake_ncpus = 6;
    fake_online = 0x2f;                  /* cpu 5 came online; cpu 4 is not */
    unsigned s0 = sleeps, p0 = probes;
    kmalloc_fail = 1;
    CHECK_EQ(run_cmd("profile 10"), 1);
    CHECK(strncmp(out, "profile: no memory for cpu 5's sample buffer (", 46) == 0);
    CHECK_EQ(sleeps, s0);                /* started nothing */
    CHECK_EQ(probes, p0);
    window_fn = win_cpu5;
    CHECK_EQ(run_cmd("profile 10"), 0);
    /* cpu 4 has no buffer: its tick records nothing (and is no drop) */
    CHECK(strstr(out, "\n1 samples on 1 cpus, 0 dropped") != NULL);
}

/* ---- the command's arguments ---------------------------------------- */

struct bad { const char *line, *msg; };

TEST(command_errors_start_nothing)
{
    static const struct bad bad[] = {
        { "profile 0", "profile: window 0 out of range (1-2000 ms)\n" },
        { "profile 2001", "profile: window 2001 out of range (1-2000 ms)\n" },
        { "profile abc", "profile: window 'abc' is not a number (1-2000 ms)\n" },
        { "profile -5", "profile: window '-5' is not a number (1-2000 ms)\n" },
        { "profile 500 all 0", "profile: chains 0 out of range (1-128)\n" },
        { "profile 500 all 129", "profile: chains 129 out of range (1-128)\n" },
        { "profile 500 all x", "profile: chains 'x' is not a number (1-128)\n" },
        { "profile 500 99999", "profile: pid 99999: no such task\n" },
        { "profile 500 4294967301", "profile: pid 4294967301: no such task\n" },
        { "profile 500 xyz", "profile: pid 'xyz' is not a number or 'all'\n" },
        { "profile 500 all 3 4", "profile: too many arguments (usage: profile "
                                 "[ms] [pid|all] [chains])\n" },
    };
    reset();
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        unsigned s0 = sleeps, p0 = probes;
        CHECK(run_cmd(bad[i].line) != 0);
        CHECK_STR(got(), bad[i].msg);
        CHECK_EQ(sleeps, s0);
        CHECK_EQ(probes, p0);
    }
}

static void win_ten_chains(void)
{
    static struct fstack s[10];
    for (unsigned i = 0; i < 10; i++) {
        s[i].n = 1;
        s[i].ret[0] = 0x1000 + i;
        for (unsigned k = 0; k <= i; k++)
            tick(k % 4, 5, 0x3000, &s[i]);
    }
}


TEST(command_defaults_and_spec_examples)
{
    reset();
    window_fn = win_ten_chains;
    CHECK_EQ(run_cmd("profile"), 0);
    CHECK_EQ(last_sleep_ms, 1000);
    CHECK_EQ(count_leaves(), 8);
    CHECK(strstr(out, "\n18.2% 10 burn_inner+0x0\n        <- burn_outer+0x9\n") != NULL);

    reset();
    window_fn = win_ten_chains;
    CHECK_EQ(run_cmd("profile 2000 all 3"), 0);
    CHECK_EQ(last_sleep_ms, 2000);
    CHECK_EQ(count_leaves(), 3);
    static const char head[] =
        "profiled 2000 ms\n55 samples on 4 cpus, 0 dropped, source tick 100Hz\n";
    CHECK(strncmp(out, head, strlen(head)) == 0);

    reset();
    window_fn = win_ten_chains;
    CHECK_EQ(run_cmd("profile 500 12"), 0);
    CHECK_EQ(last_sleep_ms, 500);
    CHECK(strstr(out, "no samples for pid 12") != NULL);

    reset();
    window_fn = win_ten_chains;
    CHECK_EQ(run_cmd("profile 1 all 128"), 0);
    CHECK_EQ(count_leaves(), 10);
}

TEST(run_rejects_bad_ranges)
{
    reset();
    buf_printer_init(&bp, out, sizeof out);
    CHECK_EQ(profiler_run(0, PROFILER_ALL, 8, &bp.pr), PROFILER_EINVAL);
    CHECK_STR(got(), "profile: window 0 out of range (1-2000 ms)\n");
    buf_printer_init(&bp, out, sizeof out);
    CHECK_EQ(profiler_run(10, PROFILER_ALL, 200, &bp.pr), PROFILER_EINVAL);
    CHECK_STR(got(), "profile: chains 200 out of range (1-128)\n");
}
