/* arch/x86_64/smp.h: starting the other CPUs. */
#pragma once

/* Start up to max-1 more CPUs from the MADT; returns how many run in all. */
unsigned smp_start(unsigned max);
