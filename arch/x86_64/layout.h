/* arch/x86_64/layout.h: the kernel's address space, shared by C and asm.
 *
 *   0                     .. 4 GiB    identity (boot, SMP trampoline; page 0 unmapped)
 *   0xffff800000000000    .. + RAM    direct map of physical memory
 *   0xffffffff80000000    .. + 1 GiB  the kernel image (-mcmodel=kernel)
 */
#pragma once

#define KERNEL_VMA      0xffffffff80000000
#define DIRECT_MAP      0xffff800000000000
#define BOOT_STACK_SIZE 16384
#define IST_STACK_SIZE  8192
#define IRQ_STACK_SIZE  16384
#define TRAMPOLINE_PA   0x8000

#define GDT_KCODE 0x08
#define GDT_KDATA 0x10
#define GDT_TSS   0x18

#ifndef __ASSEMBLY__
#include <stdint.h>
static inline void *phys_to_virt(uint64_t pa) { return (void *)(pa + DIRECT_MAP); }
static inline uint64_t virt_to_phys(const void *va)
{
    uint64_t v = (uint64_t)va;
    return v >= KERNEL_VMA ? v - KERNEL_VMA : v - DIRECT_MAP;
}
#endif
