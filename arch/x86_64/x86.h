/* arch/x86_64/x86.h: instructions and registers, for arch code only.
 *
 * Host unit tests of arch code (pmu.c) define SONDE_HOST_TEST and link a
 * simulated CPU that implements these as ordinary functions. */
#pragma once
#include <stdint.h>

struct trap_frame;

#ifdef SONDE_HOST_TEST
uint64_t rdmsr(uint32_t msr);
void wrmsr(uint32_t msr, uint64_t val);
void cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4]);
uint64_t rdtsc(void);
static inline void pause(void) {}
#else
static inline uint64_t rdmsr(uint32_t msr)
{
    uint32_t lo, hi;
    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return ((uint64_t)hi << 32) | lo;
}
static inline void wrmsr(uint32_t msr, uint64_t val)
{
    __asm__ volatile("wrmsr" :: "c"(msr), "a"((uint32_t)val), "d"((uint32_t)(val >> 32)) : "memory");
}
/* r = {eax, ebx, ecx, edx} */
static inline void cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
    __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
}
static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
static inline void pause(void) { __asm__ volatile("pause" ::: "memory"); }
static inline void outb(uint16_t port, uint8_t v) { __asm__ volatile("outb %0, %1" :: "a"(v), "Nd"(port)); }
static inline uint8_t inb(uint16_t port) { uint8_t v; __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline void outw(uint16_t port, uint16_t v) { __asm__ volatile("outw %0, %1" :: "a"(v), "Nd"(port)); }
static inline uint16_t inw(uint16_t port) { uint16_t v; __asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline void outl(uint16_t port, uint32_t v) { __asm__ volatile("outl %0, %1" :: "a"(v), "Nd"(port)); }
static inline uint32_t inl(uint16_t port) { uint32_t v; __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline uint64_t read_cr2(void) { uint64_t v; __asm__ volatile("mov %%cr2, %0" : "=r"(v)); return v; }
static inline uint64_t read_cr3(void) { uint64_t v; __asm__ volatile("mov %%cr3, %0" : "=r"(v)); return v; }
static inline void write_cr3(uint64_t v) { __asm__ volatile("mov %0, %%cr3" :: "r"(v) : "memory"); }
#endif

/* Arch functions called from other arch files, by the file that defines
 * them (the LAPIC, IOAPIC, ACPI and SMP have headers of their own). */
void kmain(int proto, uint32_t info_phys);   /* main.c, from boot.S */
void paging_init(void);                      /* paging.c: unmap page 0 */
uint64_t tsc_calibrate(void);                /* tsc.c: TSC cycles per us, against the PIT */
void nmi_handler(struct trap_frame *tf);     /* nmi.c, from trap.c */

/* The LAPIC's LVT performance-counter entry (offset 0x340), this CPU. */
void lapic_write_lvt_pmc(uint32_t val);
#define LVT_DELIVERY_NMI (4u << 8)
#define LVT_MASKED (1u << 16)

/* The CPUID vendor string ("GenuineIntel", "AuthenticAMD"), made printable
 * (cpuinfo.c). */
void cpuid_vendor(char out[13]);
