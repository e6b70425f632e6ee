/* arch/arm64/boot.S: from QEMU's -kernel entry to kmain.
 *
 * QEMU enters an ELF kernel at its physical entry point, MMU off, at EL1
 * (or EL2 with virtualization=on), with x0 = the device tree's physical
 * address for a Linux-style boot and 0 otherwise (arch/arm64/main.c copes
 * with both). Until the MMU is on, this code runs at physical addresses
 * while linked high, so it reaches its data only PC-relative (adr, adrp),
 * and jumps high through an absolute literal once translation is on.
 *
 * The page tables (4 KiB granule, 48-bit VAs, level 1 blocks of 1 GiB):
 *   TTBR1: 0xffff000000000000 + [0, 4 GiB): device memory below 1 GiB,
 *          normal write-back memory above (RAM starts at 1 GiB on virt)
 *   TTBR0: identity of [1 GiB, 4 GiB), so the instruction after the MMU
 *          switch still has a mapping; page 0 stays unmapped (null faults)
 * Secondary CPUs (PSCI CPU_ON, secondary_entry) reuse the same tables.
 *
 * Each CPU zeroes x18, its heap-profiling countdown (cpu_inline.h), before
 * any C: its first allocation crosses and draws a threshold at the rate
 * set then (or, off, sets INT64_MAX), as a zeroed struct cpu's countdown
 * did. A secondary started after `heapprof=R` samples at once. */
#include "arch/arm64/arm64.h"

#define PT_TABLE        3
#define PT_BLOCK        1
#define PT_AF           (1 << 10)
#define PT_SH_INNER     (3 << 8)
#define PT_ATTR(i)      ((i) << 2)
#define PT_PXN          (1 << 53)
#define PT_UXN          (1 << 54)
#define BLOCK_DEVICE    (PT_UXN | PT_PXN | PT_AF | PT_ATTR(0) | PT_BLOCK)
#define BLOCK_NORMAL    (PT_UXN | PT_AF | PT_SH_INNER | PT_ATTR(1) | PT_BLOCK)

/* MAIR: attr0 Device-nGnRE, attr1 Normal write-back read/write-allocate. */
#define MAIR_VALUE      0xff04
/* TCR: T0SZ = T1SZ = 16 (48-bit), write-back walks, inner shareable,
 * TG0 4 KiB (0), TG1 4 KiB (2). IPS is filled from ID_AA64MMFR0_EL1. */
#define TCR_VALUE       ((16 << 0) | (1 << 8) | (1 << 10) | (3 << 12) | \
                         (16 << 16) | (1 << 24) | (1 << 26) | (3 << 28) | (2 << 30))
/* SCTLR_EL1: the RES1 bits, M (MMU), C (data cache), SA (SP alignment
 * check), I (instruction cache). A (alignment check) stays off. */
#define SCTLR_RES1      0x30d00800
#define SCTLR_VALUE     (SCTLR_RES1 | (1 << 0) | (1 << 2) | (1 << 3) | (1 << 12))

    .section .text.boot, "ax"
    .globl _start
_start:
    mov x19, x0                         /* the DTB, if the loader passed one */
    mrs x20, CurrentEL                  /* the level we were entered at, for kmain */
    lsr x20, x20, #2
    bl el1_setup
    /* Zero .bss (page tables included) while still at physical addresses. */
    adrp x1, __bss_start
    add x1, x1, :lo12:__bss_start
    adrp x2, __bss_end
    add x2, x2, :lo12:__bss_end
1:  cmp x1, x2
    b.hs 2f
    stp xzr, xzr, [x1], #16
    b 1b
2:  bl build_tables
    bl mmu_on
    ldr x1, =boot_high
    br x1

/* Drop from EL2 to EL1 if entered at EL2; at EL1 return at once. Uses
 * x0-x1; x30 survives the eret. */
el1_setup:
    mrs x0, CurrentEL
    lsr x0, x0, #2
    cmp x0, #2
    b.ne 9f
    mov x0, #(1 << 31)                  /* HCR_EL2.RW: EL1 is AArch64 */
    msr hcr_el2, x0
    mrs x0, cnthctl_el2
    orr x0, x0, #3                      /* EL1 may use the physical counter and timer */
    msr cnthctl_el2, x0
    msr cntvoff_el2, xzr                /* virtual count = physical count */
    mrs x0, id_aa64pfr0_el1
    ubfx x0, x0, #24, #4                /* GIC system registers implemented? */
    cbz x0, 1f
    mrs x0, icc_sre_el2
    mov x1, #9
    orr x0, x0, x1                      /* SRE, and Enable: EL1 may use ICC_SRE_EL1 */
    msr icc_sre_el2, x0
    isb
1:  mrs x0, midr_el1
    msr vpidr_el2, x0
    mrs x0, mpidr_el1
    msr vmpidr_el2, x0
    mov x0, #0x33ff
    msr cptr_el2, x0                    /* no traps of EL1 to EL2 */
    msr hstr_el2, xzr
    ldr x0, =SCTLR_RES1
    msr sctlr_el1, x0
    mov x0, #0x3c5                      /* EL1h, D A I F masked */
    msr spsr_el2, x0
    adr x0, 9f
    msr elr_el2, x0
    eret
9:  ret

build_tables:
    adrp x0, pt_l0_lo
    adrp x1, pt_l1_lo
    orr x2, x1, #PT_TABLE
    str x2, [x0]
    adrp x0, pt_l0_hi
    adrp x3, pt_l1_hi
    orr x2, x3, #PT_TABLE
    str x2, [x0]
    ldr x2, =BLOCK_DEVICE               /* hi[0]: [0, 1 GiB) devices */
    str x2, [x3]
    ldr x2, =BLOCK_NORMAL
    mov x4, #1
1:  lsl x5, x4, #30                     /* hi[i], lo[i]: [i GiB, i+1 GiB) RAM */
    orr x5, x5, x2
    str x5, [x3, x4, lsl #3]
    str x5, [x1, x4, lsl #3]
    add x4, x4, #1
    cmp x4, #4
    b.lo 1b
    dsb ishst
    ret

/* Load the translation registers and turn the MMU and caches on. */
mmu_on:
    ldr x0, =MAIR_VALUE
    msr mair_el1, x0
    mrs x1, id_aa64mmfr0_el1
    and x1, x1, #7                      /* PARange -> TCR.IPS */
    ldr x0, =TCR_VALUE
    orr x0, x0, x1, lsl #32
    msr tcr_el1, x0
    adrp x0, pt_l0_lo
    msr ttbr0_el1, x0
    adrp x0, pt_l0_hi
    msr ttbr1_el1, x0
    isb
    tlbi vmalle1
    dsb nsh
    isb
    ldr x0, =SCTLR_VALUE
    msr sctlr_el1, x0
    isb
    ret

/* PSCI CPU_ON lands here: MMU off, x0 = the context id = our cpu index. */
    .globl secondary_entry
secondary_entry:
    mov x19, x0
    bl el1_setup
    bl mmu_on
    ldr x1, =secondary_high
    br x1

    .ltorg

    .text
boot_high:
    ldr x1, =boot_stack_top
    mov sp, x1
    mov x29, xzr                        /* the frame-pointer walk ends here */
    mov x30, xzr
    mov x18, xzr                        /* heap countdown: cross at once */
    mov x0, x19
    mov x1, x20
    bl kmain
1:  wfi
    b 1b

secondary_high:
    ldr x1, =ap_stack_tops              /* smp.c: each cpu's stack top */
    ldr x2, [x1, x19, lsl #3]
    mov sp, x2
    mov x29, xzr
    mov x30, xzr
    mov x18, xzr                        /* heap countdown: cross at once */
    mov x0, x19
    bl ap_entry
1:  wfi
    b 1b

    .bss
    .balign 4096
pt_l0_lo:   .skip 4096
pt_l1_lo:   .skip 4096
pt_l0_hi:   .skip 4096
pt_l1_hi:   .skip 4096
    .balign 16
    .globl boot_stack, boot_stack_top
boot_stack:
    .skip BOOT_STACK_SIZE
boot_stack_top:
