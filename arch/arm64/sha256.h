/* arch/arm64/sha256.h: the assembly block function (sha256_a64.S). Only
 * arch/arm64/sha256.c calls it, with interrupts masked: see there. */
#pragma once
#include <stddef.h>
#include <stdint.h>

void sha256_a64_blocks(uint32_t h[8], const uint8_t *p, size_t nblocks);
