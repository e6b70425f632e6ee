/* arch/x86_64/unwind.h: the x86-64 leaf decoder behind hal/unwind.h. */
#pragma once
#include "hal/unwind.h"

struct leaf_state x86_leaf_state(const uint8_t *code, size_t before, size_t after);
