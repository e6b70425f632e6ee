// LINK: kernel/cpus.c
/* tests/unit/test_cpus.c: kernel/cpus.c, the CPUs as portable code
 * counts them (cpu_setup, cpu_index, cpu_count, cpu_online) and the boot
 * CPU's start of the others (cpus_start) over a fake wake-up hook: which
 * CPUs run, the count while one starts and after it fails, whose stack
 * is freed and whose is kept, the boot CPU skipped, max obeyed, the
 * messages. Fakes: this_cpu over fake_cpu, a clock that moves, a heap
 * that counts, kprintf into a buffer. */
#include "test.h"
#include "fake_hal.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "hal/cpu.h"
#include "kernel/cpus.h"
#include "kernel/percpu.h"
#include "kernel/task.h"

struct cpu *this_cpu(void) { return &cpus[fake_cpu]; }

/* A CPU that claims at once and reports when the clock reaches
 * report_at_ns (0: none pending): a slow setup. */
static uint64_t now_ns, report_at_ns;
uint64_t time_ns(void)
{
    now_ns += 1000000;                      /* 1 ms a read */
    if (report_at_ns && now_ns >= report_at_ns) {
        report_at_ns = 0;
        cpus_start_report();
    }
    return now_ns;
}

static int live_stacks, kmalloc_fail;
void *kmalloc(size_t n)
{
    if (kmalloc_fail > 0 && kmalloc_fail-- > 0)
        return NULL;
    live_stacks++;
    return malloc(n);
}
void kfree(void *p)
{
    live_stacks--;
    free(p);
}

static char log_buf[2048];
/* Through a call the compiler cannot see into, so CHECK_STR's message
 * buffer does not trip -Wformat-truncation on the whole buffer. */
static __attribute__((noinline)) const char *logged(void) { return log_buf; }
void kprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t n = strlen(log_buf);
    vsnprintf(log_buf + n, sizeof log_buf - n, fmt, ap);
    va_end(ap);
}

/* The fake wake: by hardware id, what the CPU does when woken. */
enum wake_as { WAKE_RUNS, WAKE_REFUSED, WAKE_SILENT, WAKE_SLOW_SETUP, WAKE_HUNG };
static enum wake_as how[8];
static unsigned woken, count_at_wake[8], idx_at_wake[8];
static void *kept[8];                  /* stacks the silent CPUs were given */
static void *stack_of[8];

static const char *fake_wake(unsigned idx, uint64_t hw, void *stack)
{
    count_at_wake[woken] = cpu_count();
    idx_at_wake[woken++] = idx;
    stack_of[hw] = stack;
    memset(stack, 0xa5, TASK_STACK_SIZE);  /* the whole stack is ours */
    if (how[hw] == WAKE_REFUSED)
        return "refused by the fake";
    if (how[hw] == WAKE_RUNS) {
        fake_cpu = idx;                     /* as the new CPU: claims, sets itself up, reports */
        CHECK(cpus_start_claim());
        cpu_setup(idx, NULL);
        cpus_start_report();
        fake_cpu = 0;
    } else if (how[hw] == WAKE_SLOW_SETUP || how[hw] == WAKE_HUNG) {
        CHECK(cpus_start_claim());          /* in time, then slow to report */
        CHECK(cpus_start_answered());
        if (how[hw] == WAKE_SLOW_SETUP)
            report_at_ns = now_ns + 3ull * CPUS_START_WAIT_MS * 1000000;
    } else {
        kept[hw] = stack;
    }
    return NULL;
}

static const uint64_t ids[] = { 0, 1, 2, 3, 4, 5 };

static void fresh(void)
{
    memset(how, 0, sizeof how);
    memset(kept, 0, sizeof kept);
    memset(stack_of, 0, sizeof stack_of);
    report_at_ns = 0;
    woken = 0;
    log_buf[0] = 0;
    live_stacks = 0;
    kmalloc_fail = 0;
    cpu_set_count(1);
}

TEST(cpus_setup_index_count_online)
{
    fresh();
    memset(cpus, 0x5a, sizeof cpus[0] * 3);
    int arch;
    struct cpu *c = cpu_setup(2, &arch);
    CHECK(c == &cpus[2]);
    CHECK(c->self == c);
    CHECK_EQ(c->index, 2);
    CHECK(c->arch == &arch);
    CHECK_EQ(c->rq_lock.locked, 0);
    fake_cpu = 2;
    CHECK_EQ(cpu_index(), 2);
    fake_cpu = 0;
    CHECK_EQ(cpu_count(), 1);              /* the boot CPU, before any other */
    cpu_set_count(3);
    CHECK_EQ(cpu_count(), 3);
    c->online = false;
    CHECK(!cpu_online(2));
    c->online = true;
    CHECK(cpu_online(2));
    CHECK(!cpu_online(MAX_CPUS));          /* out of range: no read past the array */
    CHECK(!cpu_online(~0u));
    c->online = false;
    cpu_set_count(1);
}

TEST(cpus_start_runs_each_but_the_boot_cpu)
{
    fresh();
    struct cpus_boot b = { ids, 4, 2, "apic id", fake_wake };
    CHECK_EQ(cpus_start(&b, 8), 4);
    CHECK_EQ(woken, 3);                     /* 0, 1, 3: never 2, itself */
    CHECK_EQ(idx_at_wake[0], 1);
    CHECK_EQ(idx_at_wake[1], 2);
    CHECK_EQ(idx_at_wake[2], 3);
    CHECK(stack_of[2] == NULL);
    CHECK_EQ(count_at_wake[0], 2);          /* its index counted before it runs */
    CHECK_EQ(count_at_wake[2], 4);
    CHECK_EQ(cpu_count(), 4);
    CHECK_EQ(live_stacks, 3);               /* theirs now, never freed */
    CHECK_STR(logged(), "");
    for (unsigned i = 0; i < 4; i++)
        free(stack_of[i]);                  /* the test's own cleanup */
}

TEST(cpus_start_skips_the_refused)
{
    fresh();
    how[1] = WAKE_REFUSED;
    struct cpus_boot b = { ids, 4, 0, "mpidr", fake_wake };
    CHECK_EQ(cpus_start(&b, 8), 3);         /* 0, 2 and 3 run */
    CHECK_EQ(cpu_count(), 3);
    CHECK_EQ(woken, 3);
    /* The failure gave its index back: 2 ran as index 1, 3 as index 2. */
    CHECK_EQ(idx_at_wake[0], 1);
    CHECK_EQ(idx_at_wake[1], 1);
    CHECK_EQ(idx_at_wake[2], 2);
    CHECK_EQ(live_stacks, 2);               /* the refused stack is freed */
    CHECK_STR(logged(), "smp: cpu with mpidr 0x1 not started (refused by the fake): skipped\n");
    free(stack_of[2]);
    free(stack_of[3]);
}

/* A CPU asked and silent is given up on, and none after it is woken: it
 * may still wake, and a CPU woken after it could share its index or
 * (x86's trampoline) its stack. Seen under load: a late CPU ran as the
 * next one's index, two idle tasks "idle1". */
TEST(cpus_start_gives_up_the_silent_and_stops_there)
{
    fresh();
    how[2] = WAKE_SILENT;
    uint64_t t0 = now_ns;
    struct cpus_boot b = { ids, 5, 0, "mpidr", fake_wake };
    CHECK_EQ(cpus_start(&b, 8), 2);         /* 0 and 1 run; 3 and 4 are never woken */
    CHECK_EQ(cpu_count(), 2);
    CHECK_EQ(woken, 2);
    CHECK(stack_of[3] == NULL && stack_of[4] == NULL);
    /* The silent one was waited for, for the whole wait and no more. */
    CHECK(now_ns - t0 >= CPUS_START_WAIT_MS * 1000000ull);
    CHECK(now_ns - t0 < (CPUS_START_WAIT_MS + 10) * 1000000ull);
    CHECK_EQ(live_stacks, 2);               /* its stack is kept: it may wake on it */
    CHECK(kept[2] != NULL);
    CHECK_STR(logged(), "smp: cpu with mpidr 0x2 did not start in 200 ms: given up, and no "
                        "further cpus started\n");
    /* It wakes at last: its claim fails, so it stops before touching anything. */
    CHECK(!cpus_start_claim());
    CHECK(!cpus_start_answered());
    CHECK_EQ(cpu_count(), 2);
    free(stack_of[1]);
    free(stack_of[2]);
}

/* One that claimed in time but takes longer than the wait to set up is
 * waited for (it runs as its index: it cannot be given up on). */
TEST(cpus_start_waits_for_a_claimed_cpu_to_report)
{
    fresh();
    how[1] = WAKE_SLOW_SETUP;
    struct cpus_boot b = { ids, 3, 0, "apic id", fake_wake };
    CHECK_EQ(cpus_start(&b, 8), 3);
    CHECK_EQ(woken, 2);
    CHECK_EQ(idx_at_wake[1], 2);
    CHECK_STR(logged(), "");
    CHECK(!cpus_start_claim());             /* no start waits for a claim now */
    free(stack_of[1]);
    free(stack_of[2]);
}

TEST(cpus_start_panics_when_a_claimed_cpu_never_reports)
{
    fresh();
    how[1] = WAKE_HUNG;
    struct cpus_boot b = { ids, 3, 0, "apic id", fake_wake };
    EXPECT_PANIC(cpus_start(&b, 8), "smp: cpu with apic id 0x1 began its start as cpu 1 and "
                                    "did not finish it in 10000 ms");
    CHECK_EQ(woken, 1);
    free(stack_of[1]);
}

TEST(cpus_start_obeys_max_and_memory)
{
    fresh();
    struct cpus_boot b = { ids, 6, 0, "apic id", fake_wake };
    CHECK_EQ(cpus_start(&b, 3), 3);         /* max counts the boot CPU */
    CHECK_EQ(woken, 2);
    free(stack_of[1]);
    free(stack_of[2]);
    fresh();
    CHECK_EQ(cpus_start(&b, 1), 1);
    CHECK_EQ(woken, 0);
    fresh();
    kmalloc_fail = 1;                       /* the first stack: none */
    CHECK_EQ(cpus_start(&b, 3), 3);         /* 2 and 3 run instead */
    CHECK_EQ(idx_at_wake[0], 1);
    CHECK(stack_of[1] == NULL);
    CHECK_STR(logged(), "smp: no memory for a stack: cpu with apic id 0x1 skipped\n");
    free(stack_of[2]);
    free(stack_of[3]);
}
