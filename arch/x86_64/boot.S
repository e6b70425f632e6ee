/* arch/x86_64/boot.S: from the boot loader to kmain.
 *
 * Two ways in, both in 32-bit protected mode with paging off:
 *   PVH (qemu -kernel): the Xen ELF note names pvh_start; EBX = hvm_start_info.
 *   Multiboot2 (GRUB):  the header's entry tag names mb2_start; EAX = magic,
 *                       EBX = the boot information.
 * Both build the same boot page tables (identity and direct map of the low
 * 4 GiB with 2 MiB pages, the kernel image at -2 GiB), enter long mode and
 * call kmain(protocol, info_phys) on the boot stack. This file lives at its
 * physical address (section .boot), so 32-bit code can use its symbols. */
#include "arch/x86_64/layout.h"
#include "arch/x86_64/longmode.h"

#define BOOT_PVH 1
#define BOOT_MB2 2

    .section .multiboot, "a"
    .balign 8
mb2_header:
    .long 0xe85250d6                    /* magic */
    .long 0                             /* architecture: i386 protected mode */
    .long mb2_header_end - mb2_header
    .long -(0xe85250d6 + 0 + (mb2_header_end - mb2_header))
    .balign 8                           /* entry address tag */
    .short 3, 0
    .long 12
    .long mb2_start
    .balign 8                           /* end tag */
    .short 0, 0
    .long 8
mb2_header_end:

    .section .note.Xen, "a", @note
    .balign 4
    .long 4                             /* name size: "Xen\0" */
    .long 4                             /* descriptor size */
    .long 18                            /* XEN_ELFNOTE_PHYS32_ENTRY */
    .asciz "Xen"
    .long pvh_start

    .section .boot.text, "ax"
    .code32
    .globl pvh_start
pvh_start:
    cli
    movl $BOOT_PVH, %edi
    movl %ebx, %esi
    jmp boot32

    .globl mb2_start
mb2_start:
    cli
    movl $BOOT_MB2, %edi
    movl %ebx, %esi
    cmpl $0x36d76289, %eax
    je boot32
    movl $0, %edi                       /* not a multiboot2 loader: kmain says so */

boot32:
    movl $boot_stack32_top, %esp
    /* Zero the boot page tables (they are .bss-like). */
    pushl %edi
    movl $boot_pml4, %edi
    xorl %eax, %eax
    movl $(boot_pt_end - boot_pml4) / 4, %ecx
    rep stosl
    popl %edi

    /* PML4[0] and PML4[256] share one PDPT: identity and direct map. */
    movl $boot_pdpt_low, %eax
    orl $0x3, %eax
    movl %eax, boot_pml4
    movl %eax, boot_pml4 + 256 * 8
    movl $boot_pdpt_high, %eax
    orl $0x3, %eax
    movl %eax, boot_pml4 + 511 * 8

    /* boot_pdpt_low[0..3] -> the four PDs; boot_pdpt_high[510] -> PD 0. */
    movl $boot_pd, %eax
    orl $0x3, %eax
    movl %eax, boot_pdpt_low
    movl %eax, boot_pdpt_high + 510 * 8
    addl $4096, %eax
    movl %eax, boot_pdpt_low + 8
    addl $4096, %eax
    movl %eax, boot_pdpt_low + 16
    addl $4096, %eax
    movl %eax, boot_pdpt_low + 24

    /* 2048 PD entries of 2 MiB: present, writable, large. */
    movl $boot_pd, %ebx
    xorl %ecx, %ecx
1:  movl %ecx, %eax
    shll $21, %eax
    orl $0x83, %eax
    movl %eax, (%ebx, %ecx, 8)
    movl %ecx, %eax
    shrl $11, %eax                      /* high half of the address: i >> 11 */
    movl %eax, 4(%ebx, %ecx, 8)
    incl %ecx
    cmpl $2048, %ecx
    jne 1b

    ENTER_LONG_MODE $boot_pml4

    lgdt boot_gdt_ptr
    ljmp $GDT_KCODE, $boot64

    .code64
boot64:
    movw $GDT_KDATA, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    xorw %ax, %ax
    movw %ax, %fs
    movw %ax, %gs
    movabsq $high64, %rax
    jmp *%rax

    .section .boot.data, "aw"
    .balign 16
    .globl boot_gdt
boot_gdt:
    .quad 0
    .quad 0x00af9a000000ffff            /* 0x08: 64-bit code, DPL 0 */
    .quad 0x00cf92000000ffff            /* 0x10: data */
boot_gdt_end:
    .globl boot_gdt_ptr
boot_gdt_ptr:
    .short boot_gdt_end - boot_gdt - 1
    .long boot_gdt
    .long 0

    .section .boot.bss, "aw", @nobits
    .balign 4096
    .globl boot_pml4
boot_pml4:      .skip 4096
boot_pdpt_low:  .skip 4096
boot_pdpt_high: .skip 4096
boot_pd:        .skip 4 * 4096
boot_pt_end:
    .skip 1024
boot_stack32_top:

    .text
    .code64
high64:
    movabsq $boot_stack_top, %rsp
    xorl %ebp, %ebp                     /* the frame-pointer walk ends here */
    lgdt boot_gdt_ptr_high(%rip)        /* GDT base through the high mapping */
    call kmain
1:  cli
    hlt
    jmp 1b

    .section .rodata
boot_gdt_ptr_high:
    .short boot_gdt_end - boot_gdt - 1
    .quad boot_gdt + KERNEL_VMA

    .bss
    .balign 16
    .globl boot_stack, boot_stack_top
boot_stack:
    .skip BOOT_STACK_SIZE
boot_stack_top:
