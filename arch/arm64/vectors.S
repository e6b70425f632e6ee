/* arch/arm64/vectors.S: the exception vector table, the common entry and
 * exit, and arch_switch.
 *
 * Every exception is taken on SP_EL1, the stack of whatever ran (a task,
 * or a CPU's boot stack before its idle task): as on x86 without IST, an
 * interrupt runs on the interrupted task's stack, and sched_preempt may
 * switch away from inside it. Each slot builds the same struct trap_frame
 * (arch/arm64/trap.h); ELR_EL1 and SPSR_EL1 are restored from the frame,
 * not left in the registers, because a task switched in the middle of a
 * handler takes other exceptions before it returns.
 *
 * Below the frame sits a frame record {interrupted x29, interrupted pc},
 * and x29 points at it when C is called, so a frame-pointer walk started
 * inside any handler reaches the interrupted code and continues along its
 * chain.
 *
 * PSTATE.I is set by the hardware on entry and stays set until an
 * ordinary IRQ, acknowledged here, is masked by ICC_PMR_EL1 instead in
 * trap.c; only then may the pseudo-NMI (the PMU's PPI) nest on top
 * (cpu.c, gic.c).
 *
 * The IRQ slot acknowledges the interrupt itself (ICC_IAR1_EL1) and so
 * knows at once whether it is the PMU's: about a thousand a second on a
 * busy CPU while a profile runs, every one of them a cost charged to the
 * workload. That one takes the short path (pmu_nmi below); every other
 * interrupt goes to trap_common with its INTID in the frame.
 *
 * x18 is saved in the frame (a panic's dump shows it) but never restored
 * from it: it is this CPU's heap-profiling countdown (cpu_inline.h), not
 * the interrupted context's. A task preempted here may resume on another
 * CPU, whose x18 must stay its own; a handler may allocate or take a rate
 * change (ipi.c), and what it leaves in x18 is this CPU's new count.
 * Compiled code never writes x18 (-ffixed-x18), so the interrupted code
 * cannot tell. arch_switch leaves it alone for the same reason. */
#include "arch/arm64/arm64.h"

#define TF_SIZE (40 * 8)
#define FRAME   (TF_SIZE + 16)          /* the record, then the trap frame */
#define X(n)    (16 + (n) * 8)          /* offset of trap-frame word n from sp */

/* x0-x17 to and from their trap-frame slots: both paths save and
 * restore these (x0 and x1 are saved by the slot itself). */
.macro SAVE_X2_X17
    stp x2, x3, [sp, #X(2)]
    stp x4, x5, [sp, #X(4)]
    stp x6, x7, [sp, #X(6)]
    stp x8, x9, [sp, #X(8)]
    stp x10, x11, [sp, #X(10)]
    stp x12, x13, [sp, #X(12)]
    stp x14, x15, [sp, #X(14)]
    stp x16, x17, [sp, #X(16)]
.endm

.macro RESTORE_X0_X17
    ldp x0, x1, [sp, #X(0)]
    ldp x2, x3, [sp, #X(2)]
    ldp x4, x5, [sp, #X(4)]
    ldp x6, x7, [sp, #X(6)]
    ldp x8, x9, [sp, #X(8)]
    ldp x10, x11, [sp, #X(10)]
    ldp x12, x13, [sp, #X(12)]
    ldp x14, x15, [sp, #X(14)]
    ldp x16, x17, [sp, #X(16)]
.endm

.macro VENTRY kind
    .balign 128
    sub sp, sp, #FRAME
    stp x0, x1, [sp, #X(0)]
    mov x0, #\kind
    b trap_common
.endm

/* Slot 5, an IRQ from EL1 on SP_EL1: acknowledge, then take the short
 * path for the PMU's PPI or the common one for the rest. The dsb is
 * gic.h's (gic_acked): the handler's accesses after the acknowledge. */
.macro VENTRY_IRQ
    .balign 128
    sub sp, sp, #FRAME
    stp x0, x1, [sp, #X(0)]
    mrs x0, icc_iar1_el1
    dsb sy
    adrp x1, gic_nmi_fast_id
    ldr w1, [x1, #:lo12:gic_nmi_fast_id]
    cmp w0, w1
    b.eq pmu_nmi
    str x0, [sp, #X(38)]                /* intid: trap.c's irq() */
    mov x0, #TF_IRQ
    b trap_common
.endm

    .text
    .balign 2048
    .globl vectors
vectors:
    .set k, 0
    .rept 16
    .if k == TF_IRQ
    VENTRY_IRQ
    .else
    VENTRY k
    .endif
    .set k, k + 1
    .endr

/* The PMU's overflow, a pseudo-NMI, acknowledged by the slot. It saves
 * only what C may clobber (x0-x18, and x29/x30, which the frame record
 * and the call change) and what the sample reads (sp, pc); it runs with
 * PSTATE.I set from entry to eret, so no other exception can come in
 * between and ELR_EL1/SPSR_EL1 still hold this one's on the way out,
 * and it leaves ICC_PMR_EL1 alone. x19-x28 are the interrupted code's
 * throughout: C preserves them. prof_nmi (pseudo-NMI context: no
 * lock, no allocation) claims the overflow, reloads the counter and
 * samples; then the interrupt is ended here.
 *
 * An interrupt on the PPI with no overflow recorded is nobody's: then
 * the rest of the frame is filled in (x19-x28 hold the interrupted values
 * again, C having restored them) and trap_pmu_unclaimed panics with it
 * whole, as any other trap would. */
pmu_nmi:
    SAVE_X2_X17
    str x18, [sp, #X(18)]
    stp x29, x30, [sp, #X(29)]
    add x1, sp, #FRAME                  /* the SP before this exception */
    mrs x2, elr_el1
    stp x1, x2, [sp, #X(31)]            /* sp, pc */
    stp x29, x2, [sp]                   /* frame record: interrupted fp, pc */
    mov x29, sp
    str x0, [sp, #X(38)]                /* intid */
    add x0, sp, #16                     /* struct trap_frame * */
    bl prof_nmi
    tbz w0, #0, 1f                      /* a bool: only its low byte is defined */
    /* The counter's status is clear (the PMU backend's isb made it so):
     * end the interrupt, gic.h's gic_eoi inline. */
    ldr x0, [sp, #X(38)]
    msr icc_eoir1_el1, x0
    isb
    RESTORE_X0_X17                      /* not x18: this CPU's (above) */
    ldp x29, x30, [sp, #X(29)]
    add sp, sp, #FRAME
    eret
1:  str x19, [sp, #X(19)]
    stp x20, x21, [sp, #X(20)]
    stp x22, x23, [sp, #X(22)]
    stp x24, x25, [sp, #X(24)]
    stp x26, x27, [sp, #X(26)]
    str x28, [sp, #X(28)]
    mrs x3, spsr_el1
    str x3, [sp, #X(33)]                /* pstate */
    mrs x4, esr_el1
    mrs x5, far_el1
    stp x4, x5, [sp, #X(34)]            /* esr, far */
    mov x0, #TF_IRQ
    mrs x1, icc_pmr_el1                 /* never changed on this path */
    stp x0, x1, [sp, #X(36)]            /* kind, pmr */
    add x0, sp, #16
    bl trap_pmu_unclaimed               /* does not return */

trap_common:
    SAVE_X2_X17
    stp x18, x19, [sp, #X(18)]
    stp x20, x21, [sp, #X(20)]
    stp x22, x23, [sp, #X(22)]
    stp x24, x25, [sp, #X(24)]
    stp x26, x27, [sp, #X(26)]
    stp x28, x29, [sp, #X(28)]
    add x1, sp, #FRAME                  /* the SP before this exception */
    stp x30, x1, [sp, #X(30)]           /* x30, sp */
    mrs x2, elr_el1
    mrs x3, spsr_el1
    stp x2, x3, [sp, #X(32)]            /* pc, pstate */
    mrs x4, esr_el1
    mrs x5, far_el1
    stp x4, x5, [sp, #X(34)]            /* esr, far */
    stp x0, xzr, [sp, #X(36)]           /* kind, pmr (trap.c fills it for an IRQ) */
    stp x29, x2, [sp]                   /* frame record: interrupted fp, pc */
    mov x29, sp
    add x0, sp, #16                     /* struct trap_frame * */
    bl trap_dispatch
    /* PSTATE.I on before ELR/SPSR are reloaded: an exception taken between
     * here and the eret would overwrite them. trap.c's IRQ exit has set it
     * already (and put the interrupted PMR back); this covers every path. */
    msr daifset, #2
    ldp x2, x3, [sp, #X(32)]
    msr elr_el1, x2
    msr spsr_el1, x3
    RESTORE_X0_X17
    ldr x19, [sp, #X(19)]               /* not x18: this CPU's (above) */
    ldp x20, x21, [sp, #X(20)]
    ldp x22, x23, [sp, #X(22)]
    ldp x24, x25, [sp, #X(24)]
    ldp x26, x27, [sp, #X(26)]
    ldp x28, x29, [sp, #X(28)]
    ldr x30, [sp, #X(30)]
    add sp, sp, #FRAME
    eret

/* arch_switch(uint64_t *save_sp, uint64_t new_sp) (hal/task.h): a frame
 * record {x29, x30}, then the callee-saved x19-x28 below it; switch; pop
 * the other task's. Not x18: the CPU's, not the task's (above).
 * task.c's arch_stack_init lays out the same shape:
 *
 *   saved_sp -> x19 x20 ... x27 x28 | x29 x30     (x29, x30: a frame record)
 */
    .globl arch_switch
arch_switch:
    stp x29, x30, [sp, #-16]!
    mov x29, sp
    stp x27, x28, [sp, #-16]!
    stp x25, x26, [sp, #-16]!
    stp x23, x24, [sp, #-16]!
    stp x21, x22, [sp, #-16]!
    stp x19, x20, [sp, #-16]!
    mov x2, sp
    str x2, [x0]
    mov sp, x1
    ldp x19, x20, [sp], #16
    ldp x21, x22, [sp], #16
    ldp x23, x24, [sp], #16
    ldp x25, x26, [sp], #16
    ldp x27, x28, [sp], #16
    ldp x29, x30, [sp], #16
    ret

/* A fresh task's first "return" from arch_switch lands here with its entry
 * in x19: clear the link register so the entry's frame record ends the
 * chain with a zero return address, as a walk expects. */
    .globl arch_task_first
arch_task_first:
    mov x30, xzr
    br x19
