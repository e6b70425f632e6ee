/* arch/x86_64/cpu.c: per-CPU setup (GDT, TSS, IST stacks, GS base) and the
 * hal/cpu.h primitives. */
#include "arch/x86_64/percpu_arch.h"
#include "arch/x86_64/x86.h"
#include "hal/cpu.h"
#include "kernel/cpus.h"
#include "kernel/percpu.h"
#include "kernel/stacks.h"
#include "lib/string.h"

#define MSR_GS_BASE 0xC0000101

static struct cpu_arch cpu_archs[MAX_CPUS];
static uint64_t tsc_per_us;

static const char *const ist_names[3] = { "nmi", "df", "mc" };

void cpu_arch_init(unsigned idx)
{
    struct cpu_arch *a = &cpu_archs[idx];
    struct cpu *c = cpu_setup(idx, a);
    wrmsr(MSR_GS_BASE, (uint64_t)c);       /* this_cpu() works from here on */

    a->gdt[0] = 0;
    a->gdt[1] = 0x00af9a000000ffffull;     /* kernel code, 64-bit */
    a->gdt[2] = 0x00cf92000000ffffull;     /* kernel data */
    uint64_t base = (uint64_t)&a->tss, limit = sizeof(a->tss) - 1;
    a->gdt[3] = (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x89ull << 40) |
                (((limit >> 16) & 0xf) << 48) | (((base >> 24) & 0xff) << 56);
    a->gdt[4] = base >> 32;
    for (int i = 0; i < 3; i++) {
        uintptr_t lo = (uintptr_t)a->ist_stack[i];
        a->tss.ist[i] = lo + IST_STACK_SIZE;    /* IST_NMI = 1 is ist[0] */
        stack_register(lo, lo + IST_STACK_SIZE, STACK_IST, (int)idx, ist_names[i], true);
    }
    uintptr_t irq_lo = (uintptr_t)a->irq_stack;
    stack_register(irq_lo, irq_lo + IRQ_STACK_SIZE, STACK_IRQ, (int)idx, "irq", true);
    c->irq_sp = irq_lo + IRQ_STACK_SIZE;
    a->tss.iomap_base = sizeof(a->tss);

    struct { uint16_t limit; uint64_t base; } __attribute__((packed)) gdtr = {
        sizeof(a->gdt) - 1, (uint64_t)a->gdt };
    __asm__ volatile("lgdt %0" :: "m"(gdtr));
    __asm__ volatile(
        "pushq %0\n\t"
        "leaq 1f(%%rip), %%rax\n\t"
        "pushq %%rax\n\t"
        "lretq\n"
        "1:\n\t"
        "movw %w1, %%ax\n\t"
        "movw %%ax, %%ds\n\t"
        "movw %%ax, %%es\n\t"
        "movw %%ax, %%ss\n\t"
        :: "i"(GDT_KCODE), "i"(GDT_KDATA) : "rax", "memory");
    __asm__ volatile("ltr %w0" :: "r"((uint16_t)GDT_TSS));
    wrmsr(MSR_GS_BASE, (uint64_t)c);       /* the data segment reload cleared it on some CPUs */
}

struct cpu *this_cpu(void)
{
    struct cpu *c;
    __asm__ volatile("movq %%gs:0, %0" : "=r"(c));
    return c;
}

_Static_assert(__builtin_offsetof(struct cpu, index) == CPU_OFF_INDEX, "cpu_inline.h reads index there");

unsigned long irq_save(void)
{
    unsigned long f;
    __asm__ volatile("pushfq; popq %0; cli" : "=r"(f) :: "memory");
    return f;
}

void irq_restore(unsigned long flags)
{
    if (flags & (1ul << 9))
        __asm__ volatile("sti" ::: "memory");
}

bool irqs_enabled(void)
{
    unsigned long f;
    __asm__ volatile("pushfq; popq %0" : "=r"(f));
    return f & (1ul << 9);
}

void irq_enable(void) { __asm__ volatile("sti" ::: "memory"); }
void cpu_relax(void) { pause(); }
void cpu_idle(void) { __asm__ volatile("sti; hlt" ::: "memory"); }
uint64_t cycles_now(void) { return rdtsc(); }
const char *cycles_unit(void) { return "cycles"; }      /* the TSC */
uint64_t cycles_per_us(void) { return tsc_per_us ? tsc_per_us : 1000; }
void cycles_set_rate(uint64_t per_us) { tsc_per_us = per_us; }

/* Every countdown is struct cpu's heap_left, in memory: written here,
 * under the heap lock that keeps each CPU's `sub %gs:` out meanwhile. */
void cpu_heap_countdown_all(int64_t v, void (*refresh)(void))
{
    for (unsigned i = 0; i < MAX_CPUS; i++)
        cpus[i].heap_left = v;
}
