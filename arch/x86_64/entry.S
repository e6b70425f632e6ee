/* arch/x86_64/entry.S: the 256 interrupt entry stubs and the common path.
 *
 * Every vector builds the same struct trap_frame (arch/x86_64/trap.h): the
 * CPU's push, an error code (a zero where the CPU pushes none), the vector,
 * then the general registers. Before calling C, the common path pushes a
 * frame record [interrupted rbp, interrupted rip] and points rbp at it, so a
 * frame-pointer walk started inside any handler reaches the interrupted code
 * and continues along its chain. */
#include "arch/x86_64/layout.h"

/* Vectors where the CPU pushes an error code. */
#define HAS_ERR(v) ((v) == 8 || ((v) >= 10 && (v) <= 14) || (v) == 17 || (v) == 21 || (v) == 29 || (v) == 30)

    .text
    .balign 16
    .globl trap_stubs
trap_stubs:
    .set vec, 0
    .rept 256
    .balign 16
    .if HAS_ERR(vec)
    pushq $vec
    .else
    pushq $0
    pushq $vec
    .endif
    jmp trap_common
    .set vec, vec + 1
    .endr

trap_common:
    cld
    pushq %rax
    pushq %rbx
    pushq %rcx
    pushq %rdx
    pushq %rsi
    pushq %rdi
    pushq %rbp
    pushq %r8
    pushq %r9
    pushq %r10
    pushq %r11
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, %rdi                     /* struct trap_frame * */
    pushq 17*8(%rdi)                    /* frame record: interrupted rip */
    pushq %rbp                          /*               interrupted rbp */
    movq %rsp, %rbp
    cmpq $32, 15*8(%rdi)                /* vector */
    jae 1f
    call trap_dispatch                  /* exceptions, NMI: on this stack (or IST) */
    jmp 2f
    /* Device and timer interrupts run on this CPU's interrupt stack; they
     * never nest (interrupt gates, and no handler enables interrupts), so
     * its top is always free. The switch back comes before sched_preempt:
     * a task switch must leave from the interrupted task's own stack,
     * where its trap frame is. rbx is saved in the trap frame already. */
1:  movq %rsp, %rbx
    movq %gs:8, %rsp                    /* struct cpu.irq_sp */
    call trap_irq
    movq %rbx, %rsp
    call sched_preempt
2:  addq $16, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %r11
    popq %r10
    popq %r9
    popq %r8
    popq %rbp
    popq %rdi
    popq %rsi
    popq %rdx
    popq %rcx
    popq %rbx
    popq %rax
    addq $16, %rsp                      /* vector, error code */
    iretq

/* arch_switch(uint64_t *save_sp, uint64_t new_sp) (hal/task.h): a frame
 * record, then the callee-saved registers on this stack; switch; restore
 * the other task's. task.c's arch_stack_init lays out the same shape. */
    .globl arch_switch
arch_switch:
    pushq %rbp
    movq %rsp, %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
