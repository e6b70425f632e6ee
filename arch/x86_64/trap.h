/* arch/x86_64/trap.h: the one trap-frame layout every entry stub builds. */
#pragma once
#include <stdint.h>

struct trap_frame {
    uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
    uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
    uint64_t vector, error;
    uint64_t rip, cs, rflags, rsp, ss;    /* pushed by the CPU */
};
_Static_assert(sizeof(struct trap_frame) == 22 * 8, "trap frame layout (entry.S)");
_Static_assert(__builtin_offsetof(struct trap_frame, vector) == 15 * 8, "trap frame layout");
_Static_assert(__builtin_offsetof(struct trap_frame, rip) == 17 * 8, "trap frame layout");

enum {
    VEC_DE = 0, VEC_NMI = 2, VEC_UD = 6, VEC_DF = 8, VEC_GP = 13, VEC_PF = 14,
    VEC_MC = 18,
    VEC_IRQ_BASE = 32,          /* ISA IRQ n -> 32 + n (COM1 = 36) */
    VEC_DEVICE_BASE = 48,       /* PCI INTx and the like, from irq_alloc */
    VEC_TIMER = 0xf0,
    VEC_RESCHED = 0xf1,
    VEC_SPURIOUS = 0xff,
};

typedef void (*irq_handler_fn)(struct trap_frame *tf, void *arg);
void trap_init(void);                   /* build the IDT (boot CPU) */
void trap_load(void);                   /* lidt on this CPU */
void irq_set_handler(unsigned vector, irq_handler_fn fn, void *arg);
int irq_alloc_vector(irq_handler_fn fn, void *arg);   /* -1 if none left */
void trap_print_regs(const struct trap_frame *tf);          /* registers, for panic */
/* entry.S calls these with the frame it built: trap_dispatch for
 * exceptions and the NMI (on the IST stack where the IDT says so),
 * trap_irq for interrupts, on this CPU's interrupt stack. */
void trap_dispatch(struct trap_frame *tf);
void trap_irq(struct trap_frame *tf);
