/* hal/irq.h: the trap frame as portable code sees it.
 *
 * The layout is the architecture's; portable code reads it only through
 * these accessors, so host tests can supply their own frame. */
#pragma once
#include <stdint.h>

struct trap_frame;

uintptr_t trap_pc(const struct trap_frame *tf);  /* interrupted instruction */
uintptr_t trap_sp(const struct trap_frame *tf);  /* interrupted stack pointer */
uintptr_t trap_fp(const struct trap_frame *tf);  /* interrupted frame pointer */
/* All of them in one call, for the sample path (three calls cost it ~20
 * instructions). tr_link: the interrupted link register, 0 where calls
 * push the return address (x86-64). */
struct trap_regs {
    uintptr_t tr_pc, tr_sp, tr_fp, tr_link;
};
void trap_regs(const struct trap_frame *tf, struct trap_regs *r);
/* nmi_window_inline(step), in the same inline halves: a point of a
 * producer of the profiler's rings where this CPU's NMI may land
 * (kernel/prof/ring_produce.h numbers them). Nothing in the kernel: an
 * NMI lands where it lands. The host twin runs a test's NMI at the step
 * it asked for, as a real one arriving there would. */
/* The same, inline for the sample path (as hal/cpu.h's reads):
 * arch/<arch>/trap_inline.h in the kernel build, which knows the layout;
 * the twin arch/host/trap_inline.h in host unit tests, which reads the
 * host's hand-built frame. As a call it cost each sample about 8 guest
 * instructions more. */
#if defined(SONDE_HOST_TEST)
#include "arch/host/trap_inline.h"
#elif !defined(SONDE_HOST_TEST) && defined(__x86_64__)
#include "arch/x86_64/trap_inline.h"
#elif !defined(SONDE_HOST_TEST) && defined(__aarch64__)
#include "arch/arm64/trap_inline.h"
#else
#error "hal/irq.h: no inline half for this build (kernel: x86_64 or arm64; host tests: SONDE_HOST_TEST)"
#endif

/* Print the saved registers (panic). */
void trap_print_regs(const struct trap_frame *tf);
/* Print this CPU's registers as they are now: a panic with no trap frame
 * (stack and frame pointer, flags, the paging and control registers). */
void cpu_print_regs_here(void);
