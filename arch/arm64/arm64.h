/* arch/arm64/arm64.h: the address space, system registers and MMIO, for
 * arm64 arch code only (shared by C and asm).
 *
 *   0x40000000 ..                     identity map of RAM (TTBR0; boot and
 *                                     PSCI CPU_ON entry, MMU off -> on)
 *   0xffff000000000000 .. + 4 GiB     direct map of the low 4 GiB of
 *                                     physical space (TTBR1): devices below
 *                                     1 GiB, RAM above; the kernel image is
 *                                     linked inside it (PA 0x40200000)
 */
#pragma once

#define DIRECT_MAP      0xffff000000000000
#define KERNEL_PHYS     0x40200000
#define BOOT_STACK_SIZE 16384

/* SGIs (software-generated interrupts, INTID 0-15) this kernel uses. */
#define SGI_RESCHED     1
#define SGI_BACKTRACE   2
#define SGI_NMI_TEST    3          /* `panic nmi`: nobody claims it */

/* Trap frame kinds: the vector-table slot that was taken (vectors.S),
 * 0-3 from EL1 on SP_EL0 (never used), 4-7 from EL1 on SP_EL1 (the
 * kernel), 8-15 from EL0 (there is none). */
#define TF_SYNC         4
#define TF_IRQ          5
#define TF_FIQ          6
#define TF_SERROR       7

#ifndef __ASSEMBLY__
#include <stdint.h>

static inline void *phys_to_virt(uint64_t pa) { return (void *)(uintptr_t)(pa + DIRECT_MAP); }
static inline uint64_t virt_to_phys(const void *va) { return (uint64_t)(uintptr_t)va - DIRECT_MAP; }

#define read_sysreg(r) ({ uint64_t __v; __asm__ volatile("mrs %0, " #r : "=r"(__v)); __v; })
#define write_sysreg(r, v) __asm__ volatile("msr " #r ", %0" :: "r"((uint64_t)(v)) : "memory")
static inline void isb(void) { __asm__ volatile("isb" ::: "memory"); }
static inline void dsb_sy(void) { __asm__ volatile("dsb sy" ::: "memory"); }

static inline uint32_t mmio_read32(uint64_t pa) { return *(volatile uint32_t *)phys_to_virt(pa); }
static inline void mmio_write32(uint64_t pa, uint32_t v) { *(volatile uint32_t *)phys_to_virt(pa) = v; }
static inline uint64_t mmio_read64(uint64_t pa) { return *(volatile uint64_t *)phys_to_virt(pa); }
static inline void mmio_write64(uint64_t pa, uint64_t v) { *(volatile uint64_t *)phys_to_virt(pa) = v; }

/* MPIDR_EL1 affinity fields as one number: Aff3 in bits 32-39, Aff2.Aff1.Aff0
 * in bits 0-23, the same packing the device tree's cpu reg uses. */
#define MPIDR_AFF_MASK 0xff00ffffffull
#endif
