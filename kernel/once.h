/* kernel/once.h: run something once per boot, however many CPUs ask at the
 * same moment, and publish what it wrote.
 *
 * The first caller runs fn; the others spin until it has finished (callers
 * use it for work bounded to microseconds, like the PMU probe). The state
 * is stored with release after fn and read with acquire, so whoever sees
 * ONCE_DONE also sees everything fn wrote. */
#pragma once
#include <stdbool.h>
#include "hal/cpu.h"

enum { ONCE_NOT_RUN, ONCE_RUNNING, ONCE_DONE };

static inline bool once_done(int *state)
{
    return __atomic_load_n(state, __ATOMIC_ACQUIRE) == ONCE_DONE;
}

static inline void once(int *state, void (*fn)(void))
{
    int expect = ONCE_NOT_RUN;
    if (__atomic_compare_exchange_n(state, &expect, ONCE_RUNNING, false,
                                    __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
        fn();
        __atomic_store_n(state, ONCE_DONE, __ATOMIC_RELEASE);
    } else {
        while (!once_done(state))
            cpu_relax();
    }
}
