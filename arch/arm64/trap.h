/* arch/arm64/trap.h: the one trap-frame layout every vector builds. */
#pragma once
#include <stdint.h>

struct trap_frame {
    uint64_t x[31];                /* x0-x30: x29 is the frame pointer, x30 the link register */
    uint64_t sp;                   /* the interrupted SP (SP_EL1: every context runs on it) */
    uint64_t pc;                   /* ELR_EL1 */
    uint64_t pstate;               /* SPSR_EL1 */
    uint64_t esr, far;             /* ESR_EL1, FAR_EL1 at entry */
    uint64_t kind;                 /* TF_* (arch/arm64/arm64.h): the vector slot */
    uint64_t pmr;                  /* ICC_PMR_EL1 at entry (IRQ only; trap.c): the exit restores it */
    uint64_t intid;                /* IRQ only: ICC_IAR1_EL1 as the vector read it */
    uint64_t pad;                  /* the frame stays a multiple of 16 bytes */
};
_Static_assert(sizeof(struct trap_frame) == 40 * 8, "trap frame layout (vectors.S)");
_Static_assert(__builtin_offsetof(struct trap_frame, sp) == 31 * 8, "trap frame layout");
_Static_assert(__builtin_offsetof(struct trap_frame, pc) == 32 * 8, "trap frame layout");
_Static_assert(__builtin_offsetof(struct trap_frame, esr) == 34 * 8, "trap frame layout");
_Static_assert(__builtin_offsetof(struct trap_frame, kind) == 36 * 8, "trap frame layout");
_Static_assert(__builtin_offsetof(struct trap_frame, intid) == 38 * 8, "trap frame layout");

void trap_dispatch(struct trap_frame *tf);
/* vectors.S's short path for the PMU's PPI, when prof_nmi claimed
 * nothing (trap.c). */
__attribute__((noreturn)) void trap_pmu_unclaimed(struct trap_frame *tf);
void trap_print_regs(const struct trap_frame *tf);

/* ipi.c: answer a backtrace request from pseudo-NMI context. */
void ipi_backtrace_answer(struct trap_frame *tf);
