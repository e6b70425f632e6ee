/* hal/pmu.h: the performance-counter sample source, as the profiler sees it.
 *
 * One backend per architecture (arch/x86_64/pmu.c). The profiler never sees
 * a vendor: it asks once per run whether a counter really counts, then each
 * CPU arms and disarms its own counter from its own tick, and the NMI
 * handler asks whether an NMI was this counter's. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

struct printer;

enum pmu_mode {
    PMU_MODE_AUTO,    /* trust CPUID, then make the counter prove it counts */
    PMU_MODE_OFF,     /* pmu=off: never use a counter, tick only */
    PMU_MODE_ASSUME,  /* pmu=assume: act as if CPUID claimed this vendor's
                         counter (fault injection for the probe) */
};

/* Boot parameter pmu=..., set once before the first probe. */
void pmu_set_mode(enum pmu_mode mode);

/* Probe once per boot on the calling CPU (interrupts off inside, bounded by
 * about 10 us of cycle counter): true if a counter is usable. The answer is
 * cached and published with release ordering; later calls return it. */
bool pmu_probe(void);

/* Report header source name: "pmu/nmi intel fixed-ctr1", "pmu/nmi amd
 * perfctr0", "pmu/nmi amd perfmonv2", "pmu/pseudo-nmi arm64 pmuv3 cycles"
 * or "tick 100Hz". Valid after probe. */
const char *pmu_source_name(void);

/* NULL, or one line saying why a claimed counter is not used, e.g.
 * "pmu: intel fixed-ctr1 claimed by cpuid but did not count in 10 us: tick only".
 * Valid after probe. */
const char *pmu_probe_note(void);

/* On the calling CPU only (the control registers are per CPU). Interrupts
 * off. arm: sets the per-CPU armed flag, then programs and enables the
 * counter to overflow about every 1 ms. disarm: disables, then clears the
 * armed flag, so an overflow in flight is still claimed. */
void pmu_arm(void);
void pmu_disarm(void);
bool pmu_armed(void);

/* From the NMI (x86) or pseudo-NMI (arm64) handler: true if this CPU's
 * counter overflowed (it is then acknowledged and re-armed; on x86 the LVT
 * entry is rewritten, since a PMI masks it). False for an NMI that
 * is not the counter's. Lock-free, bounded, never faults. */
bool pmu_nmi_claim(void);

/* lscpu: vendor, family/model, what the part claims, probe outcome, source. */
void pmu_describe(struct printer *p);
