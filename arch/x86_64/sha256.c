/* arch/x86_64/sha256.c: hal/sha256.h's half on x86-64: none. QEMU's
 * default TCG CPU has no SHA extensions (CPUID.(EAX=7,ECX=0):EBX bit 29),
 * so the kernel keeps lib/sha256.c's C there. */
#include "hal/sha256.h"

sha256_blocks_fn *cpu_sha256_blocks(const char **what)
{
    *what = "x86-64's SHA extensions are not used";
    return 0;
}
