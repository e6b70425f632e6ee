/* kernel/time.c: the monotonic clock, from the calibrated cycle counter. */
#include "kernel/time.h"
#include "hal/cpu.h"

static uint64_t boot_cycles, per_us, ns_mult;

void time_init(uint64_t cycles_per_us)
{
    boot_cycles = cycles_now();
    per_us = cycles_per_us;
    ns_mult = cycles_per_us ? (1000ull << 32) / cycles_per_us : 0;
}

uint64_t time_ns_mult(void)
{
    return ns_mult;
}

uint64_t time_ns(void)
{
    if (!per_us)
        return 0;
    uint64_t d = cycles_now() - boot_cycles;
    /* d * 1000 / per_us without overflow for centuries of uptime */
    return d / per_us * 1000 + (d % per_us) * 1000 / per_us;
}
