/* arch/x86_64/trap.c: the IDT and where each vector goes. */
#include "arch/x86_64/trap.h"
#include "arch/x86_64/lapic.h"
#include "arch/x86_64/percpu_arch.h"
#include "arch/x86_64/x86.h"
#include "hal/cpu.h"
#include "hal/irq.h"
#include "kernel/console.h"
#include "kernel/panic.h"
#include "kernel/prof/trace_hooks.h"
#include "kernel/timer.h"


struct idt_entry {
    uint16_t off_lo, sel;
    uint8_t ist, type;
    uint16_t off_mid;
    uint32_t off_hi, zero;
} __attribute__((packed));
_Static_assert(sizeof(struct idt_entry) == 16, "IDT gate layout");

extern char trap_stubs[];     /* entry.S: 256 stubs, 16 bytes apart */
static struct idt_entry idt[256];
static struct { irq_handler_fn fn; void *arg; } handlers[256];
static unsigned next_device_vector = VEC_DEVICE_BASE;

static const char *const exception_names[32] = {
    "divide error", "debug", "NMI", "breakpoint", "overflow", "bound range",
    "invalid opcode", "device not available", "double fault",
    "coprocessor segment overrun", "invalid TSS", "segment not present",
    "stack-segment fault", "general protection fault", "page fault",
    "reserved", "x87 floating-point", "alignment check", "machine check",
    "SIMD floating-point", "virtualization", "control protection",
};

uintptr_t trap_pc(const struct trap_frame *tf) { return tf->rip; }
uintptr_t trap_sp(const struct trap_frame *tf) { return tf->rsp; }
uintptr_t trap_fp(const struct trap_frame *tf) { return tf->rbp; }

/* Once per sample, from the sampler only: without the -pg nop GCC drops
 * this leaf's frame, which matters only to a sample taken inside it, and
 * that one (a nested NMI) the sampler drops anyway. */
__attribute__((no_instrument_function))
void trap_regs(const struct trap_frame *tf, struct trap_regs *r)
{
    trap_regs_inline(tf, r);
}

static void idt_set(unsigned v, unsigned ist)
{
    uint64_t a = (uint64_t)(trap_stubs + v * 16);
    idt[v] = (struct idt_entry){
        .off_lo = a & 0xffff, .sel = GDT_KCODE, .ist = ist,
        .type = 0x8e,                       /* present, interrupt gate */
        .off_mid = (a >> 16) & 0xffff, .off_hi = a >> 32,
    };
}

void trap_init(void)
{
    for (unsigned v = 0; v < 256; v++)
        idt_set(v, 0);
    idt_set(VEC_NMI, IST_NMI);
    idt_set(VEC_DF, IST_DF);
    idt_set(VEC_MC, IST_MC);
}

void trap_load(void)
{
    struct { uint16_t limit; uint64_t base; } __attribute__((packed)) idtr = {
        sizeof(idt) - 1, (uint64_t)idt };
    __asm__ volatile("lidt %0" :: "m"(idtr));
}

void irq_set_handler(unsigned vector, irq_handler_fn fn, void *arg)
{
    handlers[vector].arg = arg;
    __atomic_store_n(&handlers[vector].fn, fn, __ATOMIC_RELEASE);
}

int irq_alloc_vector(irq_handler_fn fn, void *arg)
{
    unsigned v = __atomic_fetch_add(&next_device_vector, 1, __ATOMIC_RELAXED);
    if (v >= VEC_TIMER)
        return -1;
    irq_set_handler(v, fn, arg);
    return (int)v;
}

void trap_print_regs(const struct trap_frame *tf)
{
    kprintf("  rip %016lx  rsp %016lx  rbp %016lx  rflags %016lx\n",
                   tf->rip, tf->rsp, tf->rbp, tf->rflags);
    kprintf("  rax %016lx  rbx %016lx  rcx %016lx  rdx %016lx\n",
                   tf->rax, tf->rbx, tf->rcx, tf->rdx);
    kprintf("  rsi %016lx  rdi %016lx  r8  %016lx  r9  %016lx\n",
                   tf->rsi, tf->rdi, tf->r8, tf->r9);
    kprintf("  r10 %016lx  r11 %016lx  r12 %016lx  r13 %016lx\n",
                   tf->r10, tf->r11, tf->r12, tf->r13);
    kprintf("  r14 %016lx  r15 %016lx  cs %lx  cr3 %016lx\n",
                   tf->r14, tf->r15, tf->cs, read_cr3());
}

void cpu_print_regs_here(void)
{
    uint64_t rsp, rbp, rflags, cr0, cr4;
    __asm__ volatile("mov %%rsp, %0; mov %%rbp, %1; pushfq; popq %2; mov %%cr0, %3; mov %%cr4, %4"
                     : "=r"(rsp), "=r"(rbp), "=r"(rflags), "=r"(cr0), "=r"(cr4));
    kprintf("  rsp %016lx  rbp %016lx  rflags %016lx\n", rsp, rbp, rflags);
    kprintf("  cr0 %016lx  cr3 %016lx  cr4 %016lx\n", cr0, read_cr3(), cr4);
}

static void exception(struct trap_frame *tf)
{
    const char *name = exception_names[tf->vector] ? exception_names[tf->vector] : "reserved";
    if (tf->vector == VEC_PF)
        panic_trap(tf, "%s (vector %lu, error 0x%lx, cr2 0x%lx)", name,
                   tf->vector, tf->error, read_cr2());
    panic_trap(tf, "%s (vector %lu, error 0x%lx)", name, tf->vector, tf->error);
}

/* Exceptions and the NMI (entry.S), on the interrupted stack or an IST. */
void trap_dispatch(struct trap_frame *tf)
{
    if (tf->vector == VEC_NMI)
        nmi_handler(tf);
    else
        exception(tf);
}

/* Timer and device interrupts, on this CPU's interrupt stack (entry.S
 * calls sched_preempt afterwards, back on the task's stack). */
static void trap_irq_handle(struct trap_frame *tf, unsigned v)
{
    if (v == VEC_TIMER) {
        bool prompt = lapic_timer_prompt();
        lapic_eoi();
        timer_tick(tf);
        /* One PAUSE per prompt tick: nothing on hardware, but under QEMU
         * TCG it ends this vCPU's turn, and under -icount (QEMU before
         * 8.1) the vCPU after a busy one otherwise never gets a turn
         * with time in it: docs/qemu-icount.md. */
        if (prompt)
            cpu_relax();
        return;
    }
    irq_handler_fn fn = __atomic_load_n(&handlers[v].fn, __ATOMIC_ACQUIRE);
    if (fn)
        fn(tf, handlers[v].arg);
    lapic_eoi();                    /* VEC_RESCHED has no handler: the
                                       preemption after us is its work */
}

/* Each interrupt is a slice of the trace (kernel/prof/trace_hooks.h):
 * the tick, the IPIs (VEC_RESCHED and above) and the devices'. */
void trap_irq(struct trap_frame *tf)
{
    unsigned v = (unsigned)tf->vector;

    if (v == VEC_SPURIOUS)
        return;                     /* no EOI for a spurious interrupt */
    bool traced = prof_trace_irq_on();
    if (traced)
        prof_trace_irq_enter(v, v == VEC_TIMER ? PROF_TRACE_IRQ_TICK
                                : v >= VEC_RESCHED ? PROF_TRACE_IRQ_IPI : PROF_TRACE_IRQ_DEVICE);
    trap_irq_handle(tf, v);
    if (traced)
        prof_trace_irq_exit();
}
