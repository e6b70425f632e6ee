/* kernel/profiler.h: the sampling profiler (docs/profiling.md).
 *
 * Two entry points run in interrupt context and are called by the trap
 * code: profiler_tick from every CPU's timer tick, profiler_nmi from the
 * NMI handler. Everything else runs in task context: the `profile` shell
 * command (registered in profiler.c) and the bench. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

struct trap_frame;
struct printer;

#define PROFILER_FRAMES       8     /* frame 0 is the interrupted pc */
#define PROFILER_CHAINS       128   /* the report's chain table */
#define PROFILER_RESERVE_MAX  65536 /* records per CPU profiler_reserve grants */
#define PROFILER_WINDOW_MIN   1     /* ms */
#define PROFILER_WINDOW_MAX   2000
#define PROFILER_WINDOW_DEF   1000
#define PROFILER_CHAINS_DEF   8
#define PROFILER_ALL          (-1)  /* pid filter: every task */

enum {
    PROFILER_OK = 0,
    PROFILER_EINVAL = -1,    /* an argument out of range (message printed) */
    PROFILER_EBUSY = -2,     /* a run (or report) is in progress */
    PROFILER_ENOMEM = -3,    /* a buffer or the chain table (message printed) */
};

/* From every CPU's timer tick, interrupts off (a BUG_ON checks: the
 * sampler's per-CPU buffers have no lock). Idle: one atomic load.
 * Active: arms this CPU's counter if the probe found one usable, and
 * samples only while this CPU's counter is not armed. Inactive with the
 * counter still armed: disarms it. Must be called on every online CPU. */
void profiler_tick(const struct trap_frame *tf);

/* From the NMI handler (interrupts off, checked as above), before
 * anything else claims the NMI. True if the NMI was the performance
 * counter's (a sample was taken, or dropped because no run is active);
 * false means it is not ours and the caller must treat it as a genuine
 * NMI (panic). Never swallows a foreign NMI. On arm64 tf is the
 * vector's short frame (arch/arm64/vectors.S): only x0-x18, x29, x30,
 * sp and pc hold the interrupted values, so the frame is read through
 * trap_regs (hal/irq.h) and nothing else. */
bool profiler_nmi(const struct trap_frame *tf);

/* What a report prints: the hottest chains with names and offsets; every
 * chain as folded stacks of names, root first; or every chain raw, as
 * addresses (uapi/profile_raw.h). */
enum profiler_format { PROFILER_TEXT, PROFILER_FOLDED, PROFILER_RAW };

/* One whole run, from the shell task: Start, sleep ms, Stop, Report to p.
 * ms 1..2000, pid PROFILER_ALL or a pid, chains 1..128. Returns
 * PROFILER_OK or a negative PROFILER_E*; every error has printed a
 * "profile: ..." line to p and started nothing. */
int profiler_run(unsigned ms, int pid, unsigned chains, struct printer *p);
/* The same, reported as fmt (chains matters only to PROFILER_TEXT). */
int profiler_run_format(unsigned ms, int pid, unsigned chains,
                        enum profiler_format fmt, struct printer *p);

/* Cycles (cycles_now) the last report took, fold to last line printed,
 * printing through its printer included (use a sink to time the fold). */
uint64_t profiler_report_cycles(void);

/* Bench: the permille-th quantile (nearest rank, 1..1000) of the sample
 * costs in the buffers as they stand (the last run, plus anything
 * injected since), in cycles_now() units. PROFILER_OK, PROFILER_EINVAL
 * (no run or no samples yet, permille out of range), PROFILER_EBUSY or
 * PROFILER_ENOMEM. Task context: allocates a copy of the costs. */
int profiler_cost_permille(unsigned permille, uint32_t *cost);

/* Bench and tests, task context: grow every online CPU's buffer to hold
 * at least records (rounded up to a power of two), as a long window
 * would; never shrinks. PROFILER_OK, PROFILER_EINVAL (records out of
 * 1..PROFILER_RESERVE_MAX), PROFILER_EBUSY or PROFILER_ENOMEM (each with
 * a "profile: ..." line to p). */
int profiler_reserve(uint32_t records, struct printer *p);

/* Bench and tests, with no run in progress, after at least one run: append
 * one record to cpu's buffer as if that CPU had sampled it (a full buffer
 * counts a drop, as the sampler does; a buffer holds what the longest
 * window so far needed, or what profiler_reserve asked for). depth 1..8;
 * frames[0] is the leaf. Returns PROFILER_OK, PROFILER_EBUSY, or
 * PROFILER_EINVAL (no buffer for that CPU, bad depth). */
int profiler_inject(unsigned cpu, int pid, const uintptr_t *frames,
                    unsigned depth, uint32_t cost);

/* Report the buffers as they stand (the last run's records plus anything
 * injected since), under the last run's window and pid filter, showing
 * chains chains. Same returns as profiler_run. */
int profiler_report_again(unsigned chains, struct printer *p);

#ifdef SONDE_HOST_TEST
void profiler_test_reset(void);   /* free every buffer, as at boot */
/* Mark cpu as inside the sampler (or not), as a sampler of the last run
 * that a descheduled vCPU left half way would. */
void profiler_test_set_inside(unsigned cpu, bool inside);
/* Put cpu's empty ring at index idx (both ends), to test the wrap of
 * the indices at 2^32 without 4 billion samples. */
void profiler_test_ring_at(unsigned cpu, uint32_t idx);
#endif
