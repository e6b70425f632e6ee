/* tests/unit/fake_heap_table.c: heap profiling's in-use table
 * (mm/heapprof.c) with no heap around it, for tests of the commands and
 * readers that link the profiler's fakes (fake_profiler.c) rather than
 * mm/heap.c: no lock to take. */
#include "kernel/percpu.h"
#include "mm/heap.h"
#include "mm/heapprof.h"

uint32_t heapprof_copy_table(struct prof_record *out, uint32_t max, struct heapprof_stats *st)
{
    return heapprof_copy(out, max, st);
}

void heapprof_rate_set(uint32_t rate)
{
    heapprof_set_rate(rate);
}

/* As on x86-64: every countdown in memory, written at once. */
void cpu_heap_countdown_all(int64_t v, void (*refresh)(void))
{
    for (unsigned i = 0; i < MAX_CPUS; i++)
        cpus[i].heap_left = v;
}
