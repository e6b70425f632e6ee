/* arch/x86_64/longmode.h: the step from 32-bit protected mode into long
 * mode, shared by the boot CPU (boot.S) and the others (trampoline.S).
 * Order matters (SDM vol. 3, 10.8.5): PAE, then CR3, then EFER.LME (and
 * NXE), then paging, which activates long mode. */
#pragma once

#define CR4_PAE     (1 << 5)
#define MSR_EFER    0xC0000080
#define EFER_LME    (1 << 8)
#define EFER_NXE    (1 << 11)
#define CR0_PE      1
#define CR0_WP      (1 << 16)
#define CR0_PG      (1 << 31)

#ifdef __ASSEMBLY__
/* pml4: an operand giving the page-table root's physical address. */
.macro ENTER_LONG_MODE pml4
    movl %cr4, %eax
    orl $CR4_PAE, %eax
    movl %eax, %cr4
    movl \pml4, %eax
    movl %eax, %cr3
    movl $MSR_EFER, %ecx
    rdmsr
    orl $(EFER_LME | EFER_NXE), %eax
    wrmsr
    movl %cr0, %eax
    orl $(CR0_PG | CR0_WP | CR0_PE), %eax
    movl %eax, %cr0
.endm
#endif
