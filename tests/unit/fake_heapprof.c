/* tests/unit/fake_heapprof.c: fakes of the stack walk, prof_emit, the
 * profiler's gate, the current pid and each CPU's struct cpu (where the
 * countdown lives), for mm/heapprof.c on the host. */
#include "fake_heapprof.h"
#include "fake_hal.h"
#include "kernel/percpu.h"
#include "kernel/prof/ring.h"
#include "kernel/prof/sample.h"
#include "kernel/stacktrace.h"
#include "kernel/task.h"

uintptr_t fake_hp_walk[FAKE_HP_WALK_MAX];
unsigned fake_hp_walk_n;
int fake_hp_pid = 7;
struct prof_record fake_hp_emitted[FAKE_HP_EMIT_MAX];
unsigned fake_hp_nemit;
struct prof_gate prof_gate;
/* As GS base or TPIDR_EL1 would point at them (arch/host/cpu_inline.h). */
struct cpu cpus[MAX_CPUS];

struct cpu *this_cpu(void)
{
    return &cpus[fake_cpu];
}

bool fake_hp_by_ipi;
uint64_t fake_hp_ipi_pending;

void (*fake_hp_refresh)(void);

void cpu_heap_countdown_all(int64_t v, void (*refresh)(void))
{
    fake_hp_refresh = refresh;
    for (unsigned i = 0; i < MAX_CPUS; i++) {
        if (!fake_hp_by_ipi || i == fake_cpu)
            cpus[i].heap_left = v;
        else
            fake_hp_ipi_pending |= 1ull << i;
    }
}

unsigned st_capture_here(uintptr_t *out, unsigned max)
{
    unsigned n = fake_hp_walk_n < max ? fake_hp_walk_n : max;
    for (unsigned i = 0; i < n; i++)
        out[i] = fake_hp_walk[i];
    return n;
}

/* Kept only while the gate is open to the record's kind, as the real one. */
bool prof_emit(const struct prof_record *rec)
{
    if (!(prof_gate.pg_state & PROF_GATE_KIND(rec->pr_kind)) ||
        fake_hp_nemit == FAKE_HP_EMIT_MAX)
        return false;
    fake_hp_emitted[fake_hp_nemit++] = *rec;
    return true;
}

int task_current_pid(void)
{
    return fake_hp_pid;
}
