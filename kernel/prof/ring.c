/* kernel/prof/ring.c: each CPU's ring of records and the gate
 * (kernel/prof/ring.h). The producer's half is the sampler's
 * (kernel/prof/sample.c and the other producers, through
 * kernel/prof/ring_produce.h); this file owns the rings' memory, opens and
 * closes the gate for the session, and is the consumer's half.
 *
 * Barriers, each named by the one it pairs with:
 *   A: prof_ring_open's release of pg_state; pairs with the producers'
 *      acquire of it (B in kernel/prof/ring_produce.h): counts, filter
 *      and buffers are set.
 *   C: prof_ring_close's seq_cst clear, then the seq_cst scan of the
 *      guards in prof_ring_quiesce; pairs with D and I in
 *      kernel/prof/ring_produce.h (the guard's seq_cst store, then the
 *      seq_cst load of the gate; the guard's release).
 *   E: prof_ring_avail's acquire of pc_count; pairs with the producers'
 *      release of it (F in kernel/prof/ring_produce.h): every record
 *      counted is whole.
 *   G: prof_ring_release's release of pc_tail; pairs with the producers'
 *      acquire of it (H in kernel/prof/ring_produce.h): a slot is reused
 *      only after its copy is done.
 *
 * Profiler core: prefix prof_ and PROF_. */
#include "kernel/prof/ring.h"
#include "hal/cpu.h"
#include "kernel/panic.h"
#include "kernel/timer.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "mm/heap.h"

struct prof_cpu prof_cpus[MAX_CPUS];
struct prof_record prof_defer_recs[MAX_CPUS][PROF_DEFER];
struct prof_gate prof_gate = { 0, PROF_ALL };

/* A window is a whole number of ticks (kernel/prof/session.c), at most
 * half a tick longer than asked, a whole one below one tick. */
#define PROF_LATE_MS (1000 / TIMER_HZ)

/* The count is hz * (ms + PROF_LATE_MS) / 1000, then three margins:
 *  - the source may run up to 1/8 faster than planned (a core clocked
 *    above the TSC that set the period, or the period's +-1/4 jitter,
 *    whose sum over a window strays by about sqrt(n) / 7);
 *  - 16 records of slack;
 *  - at least PROF_RING_MIN (24 KiB a CPU). A short window whose end the
 *    host delays (a vCPU descheduled under TCG) still fits 2.5 s of
 *    ticks; with 64, a 1 ms window that the host stretched to 0.8 s
 *    dropped samples.
 * Rounded up to a power of two, so that growth is geometric: the smaller
 * rings left behind (never freed, see prof_ring_grow) add up to less than
 * the one in use. */
uint32_t prof_ring_records_for(unsigned ms, unsigned hz)
{
    uint64_t n = (uint64_t)hz * (ms + PROF_LATE_MS) / 1000;
    n += n / 8 + 16;
    uint32_t cap = PROF_RING_MIN;
    while (cap < n)
        cap *= 2;
    return cap;
}

/* Rings only grow and are never freed, not even the smaller one a bigger
 * one replaces: a CPU can be inside the sampler, past its gate check,
 * when another CPU closes the gate (the quiesce waits for it only a
 * bounded time), and freeing the ring under it would be a use-after-free
 * for the sake of reclaiming memory. So the rings end up big enough for
 * the longest window at the fastest source, kept for the life of the
 * kernel. Do not add a kfree here or on Stop. */
int prof_ring_grow(uint32_t want, struct prof_err *e)
{
    /* The sampler finds a slot with a mask. */
    BUG_ON(want == 0 || (want & (want - 1)) != 0);
    unsigned n = cpu_count();
    for (unsigned i = 0; i < n && i < MAX_CPUS; i++) {
        if (!cpu_online(i) || prof_cpus[i].pc_cap >= want)
            continue;
        size_t bytes = (size_t)want * sizeof(struct prof_record);
        struct prof_record *b = kmalloc(bytes);
        if (!b) {
            prof_refuse(e, PROF_ENOMEM, PROF_NOT_MEMORY, want);
            if (e) {
                e->pe_cpu = (int)i;
                e->pe_bytes = bytes;
            }
            return PROF_ENOMEM;
        }
        /* The last run's records move with the ring, so a report of it
         * again (after a reserve, or a start that fails on a later CPU)
         * reads them, not fresh memory. Published to that CPU by A; the
         * gate is closed, so no sampler reads either field now. */
        if (prof_cpus[i].pc_buf)
            memcpy(b, prof_cpus[i].pc_buf, prof_cpus[i].pc_cap * sizeof *b);
        prof_cpus[i].pc_buf = b;
        prof_cpus[i].pc_cap = want;
    }
    return PROF_OK;
}

unsigned prof_ring_open(int pid, unsigned kinds, bool pmu)
{
    unsigned ncpus = 0;
    for (unsigned i = 0; i < MAX_CPUS; i++) {
        struct prof_cpu *pc = &prof_cpus[i];
        pc->pc_count = pc->pc_tail = pc->pc_full = pc->pc_nested = 0;
        pc->pc_from_tick = pc->pc_other = 0;
        /* Atomic: a producer of the last window may still be at its
         * release's check (J). What it reads then is harmless: a drain
         * takes the guard and reads the gate (B) before it reads these,
         * and sees either the gate closed or them zeroed by A. */
        __atomic_store_n(&pc->pc_din, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&pc->pc_dout, 0, __ATOMIC_RELAXED);
        __atomic_store_n(&pc->pc_dwait, 0, __ATOMIC_RELAXED);
        pc->pc_in_window = pc->pc_buf && i < cpu_count() && cpu_online(i);
        ncpus += pc->pc_in_window;
    }
    __atomic_store_n(&prof_gate.pg_pid, pid, __ATOMIC_RELAXED);
    kinds &= PROF_GATE_KINDS;
    unsigned s = (pmu ? PROF_GATE_PMU : 0) | kinds |
                 (pid != PROF_ALL ? PROF_GATE_PID : 0) |
                 (kinds & (PROF_GATE_KIND(PROF_KIND_OFFCPU) | PROF_GATE_TRACE) ? PROF_GATE_SCHED : 0);
    __atomic_store_n(&prof_gate.pg_state, s, __ATOMIC_RELEASE);    /* A */
    return ncpus;
}

void prof_ring_close(void)
{
    unsigned s = __atomic_load_n(&prof_gate.pg_state, __ATOMIC_RELAXED);
    __atomic_store_n(&prof_gate.pg_state, s & ~(PROF_GATE_KINDS | PROF_GATE_PID | PROF_GATE_SCHED),
                     __ATOMIC_SEQ_CST);                                /* C */
}

unsigned prof_ring_gate(void)
{
    return __atomic_load_n(&prof_gate.pg_state, __ATOMIC_RELAXED);
}

/* A sampler holds its guard for microseconds: spin, bounded by the cycle
 * counter (sleep_ms would round each step up to a whole tick). A CPU
 * still inside at the end is a vCPU the host descheduled mid-sample,
 * under TCG, or a broken one. */
int prof_ring_quiesce(unsigned ms)
{
    uint64_t t0 = cycles_now(), limit = (uint64_t)ms * 1000 * cycles_per_us();
    for (unsigned i = 0; i < MAX_CPUS; i++) {
        while (__atomic_load_n(&prof_cpus[i].pc_inside, __ATOMIC_SEQ_CST)) {   /* C */
            if (cycles_now() - t0 >= limit)
                return (int)i;
            cpu_relax();
        }
    }
    return -1;
}

int prof_ring_put(unsigned cpu, const struct prof_record *r)
{
    if (cpu >= MAX_CPUS || !prof_cpus[cpu].pc_buf)
        return PROF_EINVAL;
    struct prof_cpu *pc = &prof_cpus[cpu];
    if (pc->pc_count - pc->pc_tail >= pc->pc_cap) {
        pc->pc_full++;
        return PROF_OK;
    }
    pc->pc_buf[pc->pc_count & (pc->pc_cap - 1)] = *r;
    if (r->pr_kind == PROF_KIND_CPU)
        pc->pc_from_tick += r->pr_tick;
    else
        pc->pc_other++;
    pc->pc_count++;
    return PROF_OK;
}

bool prof_ring_in_window(unsigned cpu)
{
    return cpu < MAX_CPUS && prof_cpus[cpu].pc_in_window;
}

uint32_t prof_ring_cap(unsigned cpu)
{
    return prof_cpus[cpu].pc_cap;
}

/* The tail is the drainer's own: a plain load. */
uint32_t prof_ring_avail(unsigned cpu, uint32_t *first)
{
    struct prof_cpu *pc = &prof_cpus[cpu];
    uint32_t head = __atomic_load_n(&pc->pc_count, __ATOMIC_ACQUIRE);   /* E */
    *first = pc->pc_tail;
    uint32_t n = head - pc->pc_tail;
    /* The sampler never lets head pass tail + cap (it drops instead); a
     * larger difference would mean the ring's invariant broke. */
    BUG_ON(n > pc->pc_cap);
    return n;
}

const struct prof_record *prof_ring_at(unsigned cpu, uint32_t idx)
{
    struct prof_cpu *pc = &prof_cpus[cpu];
    return &pc->pc_buf[idx & (pc->pc_cap - 1)];
}

void prof_ring_release(unsigned cpu, uint32_t upto)
{
    __atomic_store_n(&prof_cpus[cpu].pc_tail, upto, __ATOMIC_RELEASE);  /* G */
}

uint32_t prof_ring_drops(unsigned cpu)
{
    return __atomic_load_n(&prof_cpus[cpu].pc_full, __ATOMIC_RELAXED) + prof_ring_nested(cpu);
}

uint32_t prof_ring_nested(unsigned cpu)
{
    struct prof_cpu *pc = &prof_cpus[cpu];
    uint32_t n = __atomic_load_n(&pc->pc_nested, __ATOMIC_RELAXED);
    /* While the gate is open, what waits in the deferral is about to be
     * moved; once it is closed, nothing will move it. */
    if (!(prof_ring_gate() & PROF_GATE_KINDS))
        n += __atomic_load_n(&pc->pc_din, __ATOMIC_RELAXED) -
             __atomic_load_n(&pc->pc_dout, __ATOMIC_RELAXED);
    return n;
}

#ifdef SONDE_HOST_TEST
/* Only a host test may free the rings: no sampler can be inside here. */
void prof_ring_test_reset(void)
{
    for (unsigned i = 0; i < MAX_CPUS; i++) {
        kfree(prof_cpus[i].pc_buf);
        prof_cpus[i].pc_buf = NULL;
        prof_cpus[i].pc_cap = 0;
        prof_cpus[i].pc_count = 0;
        prof_cpus[i].pc_tail = 0;
    }
}

void prof_ring_test_at(unsigned cpu, uint32_t idx)
{
    prof_cpus[cpu].pc_count = prof_cpus[cpu].pc_tail = idx;
}

void prof_ring_test_set_inside(unsigned cpu, bool inside)
{
    __atomic_store_n(&prof_cpus[cpu].pc_inside, inside ? 1u : 0u, __ATOMIC_SEQ_CST);
}
#endif
