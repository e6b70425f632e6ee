/* tests/unit/fake_unwind.c: hal/unwind.h over both real decoders. */
#include "fake_unwind.h"
#include "arch/arm64/unwind.h"
#include "arch/x86_64/unwind.h"

enum fake_arch fake_unwind_arch = FAKE_X86;
uintptr_t fake_link;

struct leaf_state unwind_leaf_state(const uint8_t *code, size_t before, size_t after)
{
    if (fake_unwind_arch == FAKE_A64)
        return a64_leaf_state(code, before, after);
    return x86_leaf_state(code, before, after);
}

uintptr_t unwind_link(const struct trap_frame *tf)
{
    return fake_link;
}
