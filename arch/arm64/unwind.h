/* arch/arm64/unwind.h: the AArch64 leaf decoder behind hal/unwind.h. */
#pragma once
#include "hal/unwind.h"

struct leaf_state a64_leaf_state(const uint8_t *code, size_t before, size_t after);
