/* arch/x86_64/tsc.c: the TSC rate, measured against the PIT.
 *
 * Channel 2 counts down 10 ms (mode 0, gate through port 0x61); the TSC
 * is read at both ends. Five runs, the median kept: a vCPU thread the host
 * deschedules mid-run makes one run long, never all of them. */
#include "arch/x86_64/x86.h"
#include <stdint.h>

#define PIT_HZ 1193182
#define RUNS 5

static uint64_t measure_10ms(void)
{
    uint16_t count = PIT_HZ / 100;
    uint8_t gate = inb(0x61);
    outb(0x61, (gate & ~0x03));                 /* gate low, speaker off */
    outb(0x43, 0xb0);                           /* ch2, lo/hi, mode 0 */
    outb(0x42, count & 0xff);
    outb(0x42, count >> 8);
    uint64_t t0 = rdtsc();
    outb(0x61, (gate & ~0x02) | 0x01);          /* gate high: count starts */
    uint64_t limit = t0 + (1ull << 36);          /* a broken PIT must not hang boot */
    while (!(inb(0x61) & 0x20) && rdtsc() < limit)
        ;
    return rdtsc() - t0;
}

/* TSC cycles per microsecond. */
uint64_t tsc_calibrate(void)
{
    uint64_t r[RUNS];
    for (int i = 0; i < RUNS; i++)
        r[i] = measure_10ms();
    for (int i = 1; i < RUNS; i++)             /* insertion sort, five values */
        for (int j = i; j > 0 && r[j] < r[j - 1]; j--) {
            uint64_t t = r[j]; r[j] = r[j - 1]; r[j - 1] = t;
        }
    uint64_t per_us = r[RUNS / 2] / 10000;
    return per_us ? per_us : 1;
}
