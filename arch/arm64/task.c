/* arch/arm64/task.c: the shape arch_switch (vectors.S) leaves on a stack:
 *
 *   saved_sp -> x19 x20 ... x27 x28 | x29 x30      (x29, x30: a frame record)
 */
#include "arch/arm64/arm64.h"
#include "hal/task.h"


#define SAVED_WORDS 12             /* x19-x28, x29, x30 */

uint64_t arch_stack_init(uintptr_t top, void (*entry)(void))
{
    /* A fresh task "returns" into arch_task_first, which enters entry
     * with x29 = 0 and x30 = 0: its frame record ends every backtrace. */
    uint64_t *sp = (uint64_t *)(top & ~(uintptr_t)15);
    sp -= SAVED_WORDS;
    for (int i = 0; i < SAVED_WORDS; i++)
        sp[i] = 0;
    sp[0] = (uint64_t)entry;                     /* x19 */
    sp[11] = (uint64_t)arch_task_first;          /* x30 */
    return (uint64_t)sp;
}

const unsigned arch_saved_fp_off = 10 * 8;

void arch_saved_frame(uint64_t saved_sp, uintptr_t *fp, uintptr_t *sp)
{
    *sp = saved_sp;
    *fp = saved_sp + arch_saved_fp_off;
}
