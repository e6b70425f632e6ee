/* arch/x86_64/task.c: the shape arch_switch (entry.S) leaves on a stack:
 *
 *   saved_sp -> r15 r14 r13 r12 rbx | rbp ret      (rbp, ret: a frame record)
 */
#include "hal/task.h"

uint64_t arch_stack_init(uintptr_t top, void (*entry)(void))
{
    /* A zero return address above entry's, so rsp is aligned as after any
     * call and every backtrace ends at entry; rbp = 0 ends the chain. */
    uint64_t *sp = (uint64_t *)top;
    *--sp = 0;
    *--sp = (uint64_t)entry;
    for (int i = 0; i < 6; i++)
        *--sp = 0;
    return (uint64_t)sp;
}

const unsigned arch_saved_fp_off = 5 * 8;

void arch_saved_frame(uint64_t saved_sp, uintptr_t *fp, uintptr_t *sp)
{
    *sp = saved_sp;
    *fp = saved_sp + arch_saved_fp_off;
}
