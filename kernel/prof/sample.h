/* kernel/prof/sample.h: the profiler's two entry points from interrupt
 * context, called by the trap code (kernel/prof/sample.c).
 *
 * Profiler core: prefix prof_ and PROF_. */
#pragma once
#include <stdbool.h>

struct trap_frame;

/* From every CPU's timer tick, interrupts off (a BUG_ON checks: the
 * rings have no lock). Gate closed: one atomic load. Open: arms this
 * CPU's counter if the probe found one usable, and samples only while
 * this CPU's counter is not armed. Closed with the counter still armed:
 * disarms it. Must be called on every online CPU. */
void prof_tick(const struct trap_frame *tf);

/* From the NMI handler, interrupts off (checked as above), on every NMI:
 * two NMIs sent close together can arrive as one, so the handler asks
 * every source each time, whoever else claimed it. True if the counter
 * overflowed (a sample was taken, or dropped because the gate is closed);
 * false means the NMI is not the counter's, and if nothing else claims
 * it the caller must treat it as genuine (panic): a foreign NMI is never
 * swallowed. On arm64 tf is the vector's short frame
 * (arch/arm64/vectors.S): only x0-x18, x29, x30, sp and pc hold the
 * interrupted values, so the frame is read through trap_regs (hal/irq.h)
 * and nothing else. */
bool prof_nmi(const struct trap_frame *tf);

struct prof_record;
/* One record of a kind other than the CPU's (the scheduler's off-CPU
 * time, the allocator's heap bytes) into this CPU's ring, from any
 * context: it takes the same guard the sampler does, with interrupts off
 * for its span, so it needs no lock and allocates nothing. Recorded only
 * while the gate is open to the record's kind and its pid passes the
 * filter; a full ring or a producer already inside (an NMI in the middle
 * of this) counts a drop, as the sampler does. True if recorded. The
 * caller checks its kind's gate bit first (prof_gate.pg_state): that one
 * load is all a closed gate costs it. */
bool prof_emit(const struct prof_record *rec);
/* n records of one kind and one pid (rec[0]'s) at once, side by side in
 * this CPU's ring, or none (a full ring counts one drop). */
bool prof_emit_n(const struct prof_record *rec, unsigned n);
