/* tests/unit/fake_unwind.h: hal/unwind.h for host tests. Both
 * architectures' real decoders are linked; a knob picks the one the
 * walk sees, and the fake trap frame's link register is a knob too. */
#pragma once
#include <stdint.h>
#include "hal/unwind.h"

enum fake_arch { FAKE_X86, FAKE_A64 };
extern enum fake_arch fake_unwind_arch;    /* FAKE_X86 unless a test says */
extern uintptr_t fake_link;                /* what unwind_link returns */
