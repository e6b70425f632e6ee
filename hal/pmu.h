/* hal/pmu.h: the performance-counter sample source, as the profiler sees it,
 * and the contract between the portable PMU core and its backends.
 *
 * kernel/pmu.c is the core: the pmu= mode, the probe (run once, cached and
 * published), the per-CPU armed flags and their ordering around arm and
 * disarm, the notes and the lscpu lines. It drives one table of operations
 * per counter, chosen once by the probe: arch/x86_64/pmu.c has Intel fixed
 * counter 1, AMD core counter 0 and AMD PerfMonV2; arch/arm64/pmu.c has the
 * PMUv3 cycle counter. The profiler never sees a vendor: it asks once per
 * run whether a counter really counts, then each CPU arms and disarms its
 * own counter from its own tick, and the NMI (x86) or pseudo-NMI (arm64)
 * handler asks whether its interrupt was this counter's. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

struct printer;

enum pmu_mode {
    PMU_MODE_AUTO,    /* trust CPUID / ID_AA64DFR0_EL1, then make the counter prove it counts */
    PMU_MODE_OFF,     /* pmu=off: never use a counter, tick only */
    PMU_MODE_ASSUME,  /* pmu=assume: act as if the hardware offered its
                         counter (fault injection for the probe) */
};

/* Boot parameter pmu=..., set once before the first probe. */
void pmu_set_mode(enum pmu_mode mode);

/* Probe once per boot on the calling CPU (interrupts off inside, bounded by
 * about 10 us of cycles_now()): true if a counter is usable. The answer is
 * cached and published with release ordering; later calls return it. */
bool pmu_probe(void);

/* Report header source name: the counter's ("pmu/nmi intel fixed-ctr1",
 * "pmu/pseudo-nmi arm64 pmuv3 cycles", ...) or "tick 100Hz" (TIMER_HZ).
 * Valid after probe. */
const char *pmu_source_name(void);

/* NULL, or one line saying why an offered counter is not used, e.g.
 * "pmu: intel fixed-ctr1 claimed by cpuid but did not count in 10 us: tick only".
 * Valid after probe. */
const char *pmu_probe_note(void);

/* On the calling CPU only (the control registers are per CPU), with
 * interrupts off. arm: sets the per-CPU armed flag, then programs and
 * enables the counter to overflow about every 1 ms (each period drawn
 * within +-1/4 of it, the mean exact). disarm: disables,
 * then clears the armed flag, so an overflow in flight is still claimed. */
void pmu_arm(void);
void pmu_disarm(void);
bool pmu_armed(void);

/* From the NMI (x86) or pseudo-NMI (arm64) handler: true if this CPU's
 * counter overflowed (it is then acknowledged and reloaded; on x86 the LVT
 * entry is rewritten, since a PMI masks it). False for an interrupt that
 * is not the counter's. Lock-free, bounded, never faults. */
bool pmu_nmi_claim(void);

/* lscpu, after cpu_describe (hal/cpu.h): what the hardware offers, the
 * mode, the probe's outcome and the profile source. */
void pmu_describe(struct printer *p);

/* ---- The backend contract (kernel/pmu.c over arch/<arch>/pmu.c) ---- */

#define PMU_PROBE_BUDGET_US 10      /* the probe's bound, in us of cycles_now() */
#define PMU_RATE_BUDGET_US  200     /* ... where it measures a moving counter's rate */
#define PMU_PERIOD_US       1000    /* about 1 kHz of samples per busy CPU */

/* What a backend's po_offer answers. */
enum pmu_offer {
    PMU_OFFER_NONE,     /* the hardware does not offer this counter */
    PMU_OFFER_HW,       /* it does (CPUID, ID_AA64DFR0_EL1) */
    PMU_OFFER_ASSUMED,  /* pmu=assume: acting as if it did */
};

/* Where in lscpu the core hands over to the backend's own lines. */
enum pmu_describe_at {
    PMU_AT_OFFER,       /* the rest of "pmu claims:   ...": what the hardware says */
    PMU_AT_ASSUMED,     /* the rest of "pmu=assume:  acting as if ..." */
    PMU_AT_WIRING,      /* whole lines before "probe:" (arm64: the interrupt) */
    PMU_AT_COUNTS,      /* whole lines after "probe:", while a counter is the source */
};

/* One counter. The core calls the probe ops with interrupts off, arm and
 * disarm from the owning CPU's tick (interrupts off, but the counter's
 * NMI can arrive between any two of their writes), and po_nmi_ack from
 * the NMI, only after the probe has published this table:
 * until then its registers may not even exist. */
struct pmu_ops {
    const char *po_name;            /* report source name */
    const char *po_what;            /* the counter in notes: "intel fixed-ctr1" */
    const char *po_counter;         /* the counter in lscpu's probe line */
    const char *po_offered_by;      /* what offers it: "cpuid" */
    /* The probe runs its whole budget and the period is the counter's
     * measured rate x PMU_PERIOD_US; else the probe stops at the first
     * move and the period is cycles_per_us() x PMU_PERIOD_US. */
    bool po_measure_rate;
    /* An overflow the hardware still flags after disarm is this counter's
     * and is claimed (acknowledged, not reloaded): true only where nothing
     * else raises the counter's interrupt (arm64's PPI, unlike x86's
     * shared NMI, where a stopped counter's stale state must not swallow
     * a genuine NMI). */
    bool po_claims_when_disarmed;
    uint64_t po_max_period;         /* what -period may be loaded at most */

    enum pmu_offer (*po_offer)(bool assume);
    /* NULL, or why a counter that counts still cannot be the source. */
    const char *(*po_refuse)(void);
    /* Count from 0 without the interrupt; returns what po_probe_stop
     * needs to put things back as they were. */
    uint64_t (*po_probe_start)(void);
    uint64_t (*po_probe_read)(void);
    void (*po_probe_stop)(uint64_t saved);
    void (*po_arm)(uint64_t period);   /* load -period, enable last */
    void (*po_disarm)(void);           /* stop; leave the overflow status */
    /* NMI context: did the counter overflow? If so, reload it (unless
     * period is 0) so that the next overflow is a period away, and
     * acknowledge the overflow; true. False, touching nothing more, if
     * it had not. One call per NMI: the check and the acknowledgement
     * share the call and the registers they read. */
    bool (*po_nmi_ack)(uint64_t period);
};

/* An architecture's counters, defined by its backend. */
struct pmu_backends {
    const struct pmu_ops *const *pb_ops;   /* by preference, NULL-terminated */
    const char *pb_family;                 /* "no <family> claimed" in lscpu */
    void (*pb_describe)(struct printer *p, enum pmu_describe_at at);
};
extern const struct pmu_backends pmu_backends;

/* Overflows claimed on all CPUs since boot, and of them those claimed
 * after disarm (po_claims_when_disarmed), for a backend's lscpu lines. */
void pmu_overflow_counts(uint64_t *claimed, uint64_t *stale);

/* Where an architecture has one counter backend only (arm64: PMUv3's
 * cycle counter), the kernel build gets its po_nmi_ack inline, as
 * pmu_nmi_ack_inline with PMU_NMI_ACK_INLINE defined, and the NMI
 * (kernel/pmu_nmi.h) calls it directly instead of through the table: the
 * call's frame and return were some ten instructions of every counter
 * sample. x86-64, with three backends, keeps the table. Host unit tests
 * get the twin, arch/host/pmu_inline.h: the table, or arm64's own inline
 * acknowledgement over the simulated PMUv3 where the test asks for it. */
#if defined(SONDE_HOST_TEST)
#include "arch/host/pmu_inline.h"
#elif !defined(SONDE_HOST_TEST) && defined(__aarch64__)
#include "arch/arm64/pmu_inline.h"
#endif

#ifdef SONDE_HOST_TEST
/* Forget the cached probe, the mode and every CPU's flags, as at boot,
 * but with the period's jitter off, so that tests of the backends see
 * exact periods; pmu_test_jitter(true) turns it back on. */
void pmu_test_reset(void);
void pmu_test_jitter(bool on);
#endif
