/* kernel/prof/sample.h: the profiler's two entry points from interrupt
 * context, called by the trap code (kernel/prof/sample.c). */
#pragma once
#include <stdbool.h>

struct trap_frame;

/* From every CPU's timer tick, interrupts off (a BUG_ON checks: the
 * rings have no lock). Gate closed: one atomic load. Open: arms this
 * CPU's counter if the probe found one usable, and samples only while
 * this CPU's counter is not armed. Closed with the counter still armed:
 * disarms it. Must be called on every online CPU. */
void prof_tick(const struct trap_frame *tf);

/* From the NMI handler (interrupts off, checked as above), before
 * anything else claims the NMI. True if the NMI was the performance
 * counter's (a sample was taken, or dropped because the gate is closed);
 * false means it is not ours and the caller must treat it as a genuine
 * NMI (panic). Never swallows a foreign NMI. On arm64 tf is the
 * vector's short frame (arch/arm64/vectors.S): only x0-x18, x29, x30,
 * sp and pc hold the interrupted values, so the frame is read through
 * trap_regs (hal/irq.h) and nothing else. */
bool prof_nmi(const struct trap_frame *tf);
