/* arch/x86_64/trampoline.S: where a secondary CPU starts, copied to
 * TRAMPOLINE_PA (below 1 MiB, SIPI page 8). Real mode -> protected mode ->
 * long mode on the kernel's page tables (which keep the low identity map),
 * then a jump to ap_entry on the stack the boot CPU left in tramp_stack.
 * Everything here is addressed as TRAMPOLINE_PA + (label - trampoline_start). */
#include "arch/x86_64/layout.h"
#include "arch/x86_64/longmode.h"

#define T(x) (TRAMPOLINE_PA + (x) - trampoline_start)

    .section .rodata
    .balign 16
    .globl trampoline_start, trampoline_end
    .globl tramp_cr3, tramp_stack, tramp_entry
    .code16
trampoline_start:
    cli
    cld
    xorw %ax, %ax
    movw %ax, %ds
    lgdtl T(tramp_gdt_ptr)
    movl %cr0, %eax
    orl $1, %eax
    movl %eax, %cr0
    ljmpl $0x08, $T(tramp32)

    .code32
tramp32:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    ENTER_LONG_MODE T(tramp_cr3)
    ljmp $0x18, $T(tramp64)

    .code64
tramp64:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    movq T(tramp_stack), %rsp
    xorl %ebp, %ebp
    movq T(tramp_entry), %rax
    call *%rax
1:  hlt
    jmp 1b

    .balign 8
tramp_gdt:
    .quad 0
    .quad 0x00cf9a000000ffff            /* 0x08: 32-bit code */
    .quad 0x00cf92000000ffff            /* 0x10: data */
    .quad 0x00af9a000000ffff            /* 0x18: 64-bit code */
tramp_gdt_ptr:
    .short 31
    .long T(tramp_gdt)
    .balign 8
tramp_cr3:   .quad 0
tramp_stack: .quad 0
tramp_entry: .quad 0
trampoline_end:
