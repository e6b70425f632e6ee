/* kernel/prof/ring.h: each CPU's ring of records, and the gate that says
 * whether samplers may write them (kernel/prof/ring.c).
 *
 * One ring per CPU, single producer, single consumer: the sampler on that
 * CPU produces (kernel/prof/sample.c, interrupts off), and at most one
 * task consumes: a stream's drainer, or nobody during a window (its
 * records are then simply 0..n-1, read after Stop through a snapshot).
 * Indices count from 0 at the gate's opening and wrap at 2^32.
 *
 * The ring knows neither who fills it nor who reads it: the session opens
 * and closes the gate, the stream drains, the sampler writes.
 *
 * Profiler core: prefix prof_ and PROF_. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "hal/cpu.h"
#include "kernel/prof/record.h"

struct printer;

/* Records an NMI can leave while this CPU's guard is held: its sample
 * and its slice of a trace, twice over (a second NMI while the first's
 * pair is being moved). A power of two. */
#define PROF_DEFER 4u

/* Written only by its own CPU from its own tick or NMI, except that the
 * gate's opening zeroes the counters while it is closed and no CPU is
 * inside. */
struct prof_cpu {
    struct prof_record *pc_buf; /* never freed: see prof_ring_grow */
    uint32_t pc_cap;            /* records pc_buf holds, a power of two;
                                   set only while the gate is closed */
    uint32_t pc_count;          /* records written (the producer index);
                                   release-published */
    uint32_t pc_tail;           /* records drained (the consumer index):
                                   written only by the stream's drainer,
                                   release; 0 all through a window */
    uint32_t pc_from_tick;      /* of those, taken by the tick */
    uint32_t pc_other;          /* and of other kinds than the CPU's (the
                                   rest: CPU samples of the counter's NMI,
                                   counted at freeze) */
    uint32_t pc_full;           /* dropped: the ring was full */
    uint32_t pc_nested;         /* dropped: arrived inside the sampler */
    uint32_t pc_inside;         /* re-entrancy guard; Stop waits on it */
    bool pc_in_window;          /* online with a buffer when the gate opened */
    /* The deferral (kernel/prof/ring_produce.h): what an NMI recorded
     * while another producer of this CPU held the guard, waiting in
     * prof_defer_recs for that producer to move it into the ring. A ring
     * of its own, one writer at each end, both on this CPU. */
    uint32_t pc_din;            /* records deferred: the NMI's index */
    uint32_t pc_dout;           /* of those, moved on: the guard holder's */
    uint32_t pc_dwait;          /* set by the NMI once it deferred, cleared
                                   by the mover before it looks: the one
                                   word a release checks */
} __attribute__((aligned(64)));
/* One line a CPU: a producer reaches its CPU's struct with a shift of
 * the index (the deferral's records live apart for that reason). */
_Static_assert(sizeof(struct prof_cpu) == 64, "a CPU's ring state is one cache line");

extern struct prof_cpu prof_cpus[MAX_CPUS];
/* Each CPU's deferral: written and read only on that CPU. */
extern struct prof_record prof_defer_recs[MAX_CPUS][PROF_DEFER];

/* The gate: its flags and its pid filter side by side, so that the
 * sampler reaches both from one address. The flags are one word, so the
 * idle tick pays exactly one atomic load. A kind's bit says its producer
 * may record (PROF_GATE_CPU: the sampler samples; the scheduler's off-CPU
 * and the allocator's heap records have their own bits, and producers
 * other than the sampler record through prof_emit). PROF_GATE_PMU is set
 * once the probe said a counter is usable and never cleared (the probe's
 * answer is cached for the boot): an idle tick needs it to know there may
 * be a counter left armed to disarm. */
#define PROF_GATE_PMU       1u
#define PROF_GATE_KIND(k)   (2u << (k))
#define PROF_GATE_CPU       PROF_GATE_KIND(PROF_KIND_CPU)
#define PROF_GATE_TRACE     PROF_GATE_KIND(PROF_KIND_TRACE)
#define PROF_GATE_KINDS     ((PROF_GATE_KIND(PROF_KIND_MAX + 1) - PROF_GATE_KIND(0)) | \
                             PROF_GATE_TRACE)
/* Set with the kinds when the run is filtered to one pid (pg_pid is not
 * PROF_ALL): a producer's one test of the gate word then says both that
 * its kind is open and that every pid is wanted (prof_reserve_n). A bit
 * of its own, above every kind's. */
#define PROF_GATE_PID       (1u << 8)
/* Set with the kinds when the scheduler has a hook to call: an off-CPU
 * window or a trace. The switch's one test (prof_sched_on,
 * kernel/prof/offcpu_hooks.h) is of this bit, whichever of them runs. */
#define PROF_GATE_SCHED     (1u << 9)
_Static_assert(PROF_GATE_KIND(PROF_KIND_TRACE + 1) <= PROF_GATE_PID,
               "the kinds' bits are below the filter's");
struct prof_gate {
    unsigned pg_state;          /* PROF_GATE_PMU, PROF_GATE_KIND(k), PROF_GATE_PID */
    int pg_pid;                 /* PROF_ALL, or the one pid sampled */
};
extern struct prof_gate prof_gate;
/* The switch path reads pg_state by the gate's own symbol (prof_off_on). */
_Static_assert(offsetof(struct prof_gate, pg_state) == 0, "pg_state is the gate's first word");

/* The per-CPU ring size (records) a window of ms needs at hz samples per
 * second, margin included: a power of two, at least PROF_RING_MIN. */
#define PROF_RING_MIN 256u
uint32_t prof_ring_records_for(unsigned ms, unsigned hz);

/* Grow every online CPU's ring to hold at least want records (a power of
 * two); never shrinks, never frees. Gate closed. PROF_OK, or PROF_ENOMEM
 * with PROF_NOT_MEMORY in *e (the CPU and the bytes; e may be NULL). */
struct prof_err;
int prof_ring_grow(uint32_t want, struct prof_err *e);

/* Zero every ring's counts, mark the CPUs online with a ring as in the
 * window, set the filter (PROF_ALL or a pid), then open the gate to the
 * kinds (PROF_GATE_KIND bits) with release ordering: a producer that sees
 * its kind open sees all of the above. pmu: the counter samples where
 * armed. Returns the CPUs in the window. */
unsigned prof_ring_open(int pid, unsigned kinds, bool pmu);
/* Close the gate to every kind (seq_cst: Dekker's pattern with the
 * producers' guard, kernel/prof/sample.c). Producers already past their
 * check finish. */
void prof_ring_close(void);
/* Wait, at most ms, until no CPU is inside the sampler. -1 once every CPU
 * is out, else the first CPU still inside. */
int prof_ring_quiesce(unsigned ms);
/* The gate's flags as they stand (PROF_GATE_*). */
unsigned prof_ring_gate(void);

/* Append r to cpu's ring from task context, gate closed (bench and tests:
 * as if that CPU had sampled it). PROF_OK, PROF_EINVAL (no ring), or the
 * ring was full: counted as a drop, PROF_OK. */
int prof_ring_put(unsigned cpu, const struct prof_record *r);

/* The consumer's side, for the stream's one task: prof_ring_avail
 * (acquire of the producer index: the records it counts are whole), copy
 * each record out with prof_ring_at, then prof_ring_release (release of
 * the consumer index: the sampler reuses a slot only after the copy). */
bool prof_ring_in_window(unsigned cpu);
uint32_t prof_ring_cap(unsigned cpu);
/* Records waiting in cpu's ring, the oldest numbered *first. */
uint32_t prof_ring_avail(unsigned cpu, uint32_t *first);
/* The record numbered idx, waiting (between first and first + avail). */
const struct prof_record *prof_ring_at(unsigned cpu, uint32_t idx);
/* Every record before upto has been copied out: its slot is free. */
void prof_ring_release(unsigned cpu, uint32_t upto);
/* Samples cpu dropped since the gate opened (ring full, nested). */
uint32_t prof_ring_drops(unsigned cpu);
/* Of those, the nested: an NMI's records that found the deferral full,
 * and, once the gate is closed, those still in it (the gate closed
 * before their producer moved them: they will never be). */
uint32_t prof_ring_nested(unsigned cpu);

#ifdef SONDE_HOST_TEST
void prof_ring_test_reset(void);  /* free every ring, as at boot */
/* Mark cpu as inside the sampler (or not), as a sampler of the last run
 * that a descheduled vCPU left half way would. */
void prof_ring_test_set_inside(unsigned cpu, bool inside);
/* Put cpu's empty ring at index idx (both ends), to test the wrap of the
 * indices at 2^32 without 4 billion samples. */
void prof_ring_test_at(unsigned cpu, uint32_t idx);
#endif
