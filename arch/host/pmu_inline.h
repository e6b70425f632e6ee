/* arch/host/pmu_inline.h: hal/pmu.h's inline NMI acknowledgement for
 * host unit tests, the twin of arch/<arch>/pmu_inline.h. The host's PMU
 * is the one the test links: a fake table (test_pmu.c, the
 * profiler's tests), the simulated x86 counters (tests/unit/sim_pmu.c) or
 * the simulated PMUv3 (tests/unit/sim_pmu_a64.c). The first two reach
 * the counter through the table, as the x86-64 kernel does, so nothing is
 * defined here for them. A test of the arm64 backend defines
 * SONDE_HOST_PMUV3 (its "// CFLAGS:" line) and gets arm64's own inline
 * acknowledgement, which reads and writes the simulated registers through
 * pmu_reg_read and pmu_reg_write (arch/arm64/arm64.h): kernel/pmu_nmi.h's
 * claim then runs exactly as the arm64 kernel's does. */
#pragma once
#ifdef SONDE_HOST_PMUV3
#include "arch/arm64/pmu_inline.h"
#endif
