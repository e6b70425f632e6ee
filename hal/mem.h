/* hal/mem.h: physical and virtual addresses, for portable code. */
#pragma once
#include <stdint.h>

void *pa_to_va(uint64_t pa);          /* through the direct map */
uint64_t va_to_pa(const void *va);    /* direct map or kernel image */

#define PMM_MAX_PHYS (4ull << 30)     /* RAM the direct map covers at boot */
