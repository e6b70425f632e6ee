/* kernel/testing/fpjunk.c: `fpjunk <ms> [cpu]`, a shell command that exists
 * only for the system tests (tests/system/soak.py). kernel/testing/ holds
 * arch-independent code linked into every kernel so the tests can drive
 * it; nothing else calls into it.
 *
 * The sampler and `bt` walk frame-pointer chains that a real kernel can
 * leave in any state: a frame caught half built, a stack overwritten by a
 * bug. Every step must be proven inside a known stack, or the walk faults
 * in NMI context. fpjunk makes that the common case: its task runs a known
 * chain (fpjunk_task -> fpjunk_outer -> fpjunk_middle -> fpjunk_leaf ->
 * fpjunk_spin) and, over and over, overwrites the frame records of its
 * own older frames with random values (wild addresses, addresses inside
 * its stack, aligned or not, records pointing at themselves or at younger
 * ones, zero), spins while the tick or the counter samples it, then
 * restores them before any of those frames returns.
 *
 * A frame record is two words, the caller's frame pointer then the return
 * address, at the frame pointer, on both x86-64 (rbp) and arm64 (x29): the
 * layout the walker (kernel/stacktrace.c) reads. The kernel is built with
 * -fno-omit-frame-pointer and no sibling calls, so each function here has
 * one. Only the epilogue reads a record back, and the restore comes first:
 * if a record were left scribbled, the return through it would jump to a
 * random address. */
#include "hal/cpu.h"
#include "kernel/sched.h"
#include "kernel/shell.h"
#include "kernel/task.h"
#include "kernel/time.h"
#include "lib/parse.h"

#define FPJUNK_RECORDS 3           /* fpjunk_leaf's, fpjunk_middle's, fpjunk_outer's */
#define FPJUNK_MAX_MS 600000

static volatile uint64_t fpjunk_sink;

struct fpjunk_state {
    uint64_t rng;
    uint64_t deadline_ns;
};

static uint64_t fpjunk_rand(struct fpjunk_state *s)
{
    /* xorshift64: any bits will do, but never the same run twice. */
    s->rng ^= s->rng << 13;
    s->rng ^= s->rng >> 7;
    s->rng ^= s->rng << 17;
    return s->rng;
}

__attribute__((noinline)) static uint64_t fpjunk_spin(uint64_t n)
{
    uint64_t x = n;
    for (uint64_t i = 0; i < n; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    return x;
}

/* A value for a saved frame pointer: the kinds a corrupt stack holds. */
static uintptr_t fpjunk_fp(struct fpjunk_state *s, volatile uintptr_t *rec, uintptr_t sp)
{
    uint64_t r = fpjunk_rand(s);
    switch (r % 6) {
    case 0:  return (uintptr_t)(r >> 3) * 0x9e3779b97f4a7c15ull;   /* anywhere */
    case 1:  return sp + (uintptr_t)(r >> 8) % 16384 - 8192;       /* in or near the stack */
    case 2:  return (sp + (uintptr_t)(r >> 8) % 8192) & ~(uintptr_t)15;
    case 3:  return (uintptr_t)rec;                                /* a loop */
    case 4:  return sp - 64;                                       /* younger: downwards */
    default: return 0;
    }
}

/* A value for a saved return address. */
static uintptr_t fpjunk_ret(struct fpjunk_state *s)
{
    uint64_t r = fpjunk_rand(s);
    switch (r % 4) {
    case 0:  return (uintptr_t)r;
    case 1:  return (uintptr_t)fpjunk_spin + (uintptr_t)(r >> 8) % 4096;
    case 2:  return ~(uintptr_t)0;
    default: return 0;
    }
}

__attribute__((noinline)) static void fpjunk_leaf(struct fpjunk_state *s)
{
    volatile uintptr_t *rec[FPJUNK_RECORDS];
    uintptr_t saved[FPJUNK_RECORDS][2];
    uintptr_t sp = (uintptr_t)&rec;

    /* Find the records while the chain is still true. */
    rec[0] = __builtin_frame_address(0);
    for (int i = 1; i < FPJUNK_RECORDS; i++)
        rec[i] = (volatile uintptr_t *)rec[i - 1][0];
    while (time_ns() < s->deadline_ns && !task_should_stop()) {
        for (int i = 0; i < FPJUNK_RECORDS; i++) {
            saved[i][0] = rec[i][0];
            saved[i][1] = rec[i][1];
            rec[i][0] = fpjunk_fp(s, rec[i], sp);
            rec[i][1] = fpjunk_ret(s);
        }
        fpjunk_sink += fpjunk_spin(20000);
        for (int i = FPJUNK_RECORDS - 1; i >= 0; i--) {
            rec[i][0] = saved[i][0];
            rec[i][1] = saved[i][1];
        }
    }
}

__attribute__((noinline)) static void fpjunk_middle(struct fpjunk_state *s) { fpjunk_leaf(s); fpjunk_sink++; }
__attribute__((noinline)) static void fpjunk_outer(struct fpjunk_state *s) { fpjunk_middle(s); fpjunk_sink++; }

static void fpjunk_task(void *arg)
{
    struct fpjunk_state s = {
        .rng = cycles_now() | 1,
        .deadline_ns = time_ns() + (uint64_t)(uintptr_t)arg * 1000000,
    };
    fpjunk_outer(&s);
}

static int cmd_fpjunk(int argc, char **argv, struct printer *p)
{
    uint64_t ms, cpu = 0;
    if (argc < 2 || argc > 3) {
        pr_printf(p, "fpjunk: usage: fpjunk <ms> [cpu]\n");
        return 1;
    }
    if (!parse_range(argv[1], 1, FPJUNK_MAX_MS, &ms)) {
        pr_printf(p, "fpjunk: time '%s' out of range (1-%d ms)\n", argv[1], FPJUNK_MAX_MS);
        return 1;
    }
    if (argc == 3 && (!parse_range(argv[2], 0, cpu_count() - 1, &cpu) ||
                      !cpu_online((unsigned)cpu))) {
        pr_printf(p, "fpjunk: cpu '%s' is not an online cpu (0-%u)\n", argv[2], cpu_count() - 1);
        return 1;
    }
    struct task *t = task_spawn("fpjunk", fpjunk_task, (void *)(uintptr_t)ms, (int)cpu,
                                TASK_KILLABLE);
    if (!t) {
        pr_printf(p, "fpjunk: out of memory\n");
        return 1;
    }
    pr_printf(p, "fpjunk: %lu ms on cpu %lu, pid %d\n", ms, cpu, task_pid(t));
    return 0;
}
SHELL_COMMAND(fpjunk, "fpjunk", "fpjunk <ms> [cpu]  (test only) a task whose frame-pointer chain is random while sampled",
              cmd_fpjunk);
