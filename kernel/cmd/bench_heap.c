/* kernel/cmd/bench_heap.c: `bench_heap`, heap profiling's price (make
 * bench, bench/run.py): a kmalloc+kfree pair with sampling off, on at the
 * default rate (the average, samples included) and sampled every time,
 * and an allocation-heavy workload's slowdown at the default rate, with
 * the samples it took (the slowdown's cause: docs/bench.md). Under
 * -icount shift=0 on x86-64 a cycle is a guest instruction. Interrupts
 * are off across each loop: no tick lands in the figures. */
#include "hal/cpu.h"
#include "kernel/shell.h"
#include "lib/printf.h"
#include "mm/heap.h"
#include "mm/heapprof.h"

#define BH_PAIRS     100000u
#define BH_SAMPLED   5000u
#define BH_WORK      65536u            /* the workload: 16 MiB in 256-byte objects */

/* Cycles per kmalloc(size)+kfree pair over n pairs. */
static __attribute__((noinline)) uint64_t bh_pairs(unsigned n, size_t size)
{
    unsigned long f = irq_save();
    uint64_t t0 = cycles_now();
    for (unsigned i = 0; i < n; i++) {
        void *volatile p = kmalloc(size);
        kfree(p);
    }
    uint64_t t = cycles_now() - t0;
    irq_restore(f);
    return t;
}

/* Allocation-heavy: 64 live objects of mixed sizes, each replaced in
 * turn; cycles for BH_WORK replacements. */
static __attribute__((noinline)) uint64_t bh_workload(void)
{
    void *live[64] = { 0 };
    unsigned long f = irq_save();
    uint64_t t0 = cycles_now();
    for (unsigned i = 0; i < BH_WORK; i++) {
        unsigned k = i & 63;
        kfree(live[k]);
        live[k] = kmalloc(32 + (i * 97) % 480);
    }
    for (unsigned k = 0; k < 64; k++)
        kfree(live[k]);
    uint64_t t = cycles_now() - t0;
    irq_restore(f);
    return t;
}

static int cmd_bench_heap(int argc, char **argv, struct printer *p)
{
    if (argc != 1) {
        pr_puts(p, "bench_heap: takes no arguments\n");
        return 1;
    }
    uint32_t was = heapprof_rate;
    heapprof_rate_set(0);
    bh_pairs(1000, 64);                         /* warm: the class's page exists */
    bh_workload();                              /* and the workload's classes' */
    uint64_t off = bh_pairs(BH_PAIRS, 64), w_off = bh_workload();
    heapprof_rate_set(HEAPPROF_RATE_DEF);
    struct heapprof_stats s0, s1;
    uint64_t on = bh_pairs(BH_PAIRS, 64);
    heapprof_copy_table(NULL, 0, &s0);
    uint64_t w_on = bh_workload();
    heapprof_copy_table(NULL, 0, &s1);
    heapprof_rate_set(1);                       /* every allocation sampled */
    uint64_t all = bh_pairs(BH_SAMPLED, 64);
    heapprof_rate_set(was);
    unsigned long slow = w_on > w_off ? (unsigned long)((w_on - w_off) * 100000 / w_off) : 0;
    pr_printf(p, "bench_heap: pair off %lu.%02lu on %lu.%02lu sampled %lu %s per kmalloc+kfree "
              "(64 bytes, rate %u)\n", (unsigned long)(off / BH_PAIRS),
              (unsigned long)(off % BH_PAIRS * 100 / BH_PAIRS), (unsigned long)(on / BH_PAIRS),
              (unsigned long)(on % BH_PAIRS * 100 / BH_PAIRS), (unsigned long)(all / BH_SAMPLED),
              cycles_unit(), HEAPPROF_RATE_DEF);
    pr_printf(p, "bench_heap: workload off %lu on %lu %s, slowdown %lu.%03lu%%, %lu samples "
              "taken\n", (unsigned long)w_off, (unsigned long)w_on, cycles_unit(), slow / 1000,
              slow % 1000, (unsigned long)(s1.hs_samples - s0.hs_samples));
    return 0;
}
SHELL_COMMAND(bench_heap, "bench_heap", "bench_heap       heap profiling's cost: kmalloc+kfree pairs off, on, sampled; a workload's slowdown",
              cmd_bench_heap);
