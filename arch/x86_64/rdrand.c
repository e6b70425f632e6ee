/* arch/x86_64/rdrand.c: hal/entropy.h's CPU half on x86: RDRAND.
 *
 * CPUID.01H:ECX bit 30 says the instruction exists (Intel SDM vol. 2,
 * RDRAND; AMD APM vol. 3 CPUID Fn0000_0001_ECX). CF = 1 means the
 * destination holds a random value; CF = 0 means none was ready and the
 * destination is 0 (SDM vol. 1, 7.3.17). The retries are the portable
 * core's (kernel/entropy.c). */
#include "arch/x86_64/x86.h"
#include "hal/entropy.h"

#define CPUID_01_ECX_RDRAND (1u << 30)

const char *cpu_rng_name(void)
{
    uint32_t r[4];
    cpuid(1, 0, r);
    return (r[2] & CPUID_01_ECX_RDRAND) ? "rdrand" : 0;
}

bool cpu_rng_read(uint64_t *out)
{
    uint64_t v;
    bool ok;
    __asm__ volatile("rdrand %0" : "=r"(v), "=@ccc"(ok) :: "cc");
    *out = v;
    return ok;
}
