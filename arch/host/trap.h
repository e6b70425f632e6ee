/* arch/host/trap.h: the host tests' trap frame, the twin of
 * arch/<arch>/trap.h. Host unit tests build one by hand (a fake
 * interrupted context) and hand it to the real sample path, which reads
 * it only through hal/irq.h; arch/host/trap_inline.h and
 * tests/unit/fake_hal.c are the two readers that know this layout. The
 * link register is not in the frame but in fake_trap_link
 * (tests/unit/fake_hal.h): 0, as on x86-64, unless a test says. */
#pragma once
#include <stdint.h>

struct trap_frame {
    uintptr_t pc, sp, fp;
};
