/* arch/arm64/cpu.c: per-CPU setup (TPIDR_EL1, the vector base) and the
 * hal/cpu.h primitives.
 *
 * cycles_now() is the generic timer's virtual count (CNTVCT_EL0), shifted
 * left so that a microsecond is a whole number of units: QEMU's counter
 * runs at 62.5 MHz, and 62 per us would skew time_ns by 0.8%. The shift is
 * the smallest that makes the rate an integer per us (up to 8), else the
 * smallest that makes it at least 1000 per us (rounding error <= 0.1%). */
#include "arch/arm64/arm64.h"
#include "arch/arm64/percpu_arch.h"
#include "hal/cpu.h"
#include "kernel/percpu.h"

struct cpu cpus[MAX_CPUS];
static struct cpu_arch cpu_archs[MAX_CPUS];
static unsigned ncpus_started = 1;
static unsigned cycles_shift;
static uint64_t per_us;

extern char vectors[];

void cpu_arch_init(unsigned idx, uint64_t mpidr)
{
    struct cpu *c = &cpus[idx];
    struct cpu_arch *a = &cpu_archs[idx];

    write_sysreg(vbar_el1, (uint64_t)vectors);   /* before anything can fault */
    isb();
    c->self = c;
    c->index = idx;
    c->arch = a;
    c->rq_lock = (spinlock_t)SPINLOCK_INIT;
    a->mpidr = mpidr & MPIDR_AFF_MASK;
    c->hw_id = (uint32_t)(a->mpidr & 0xffffff);  /* Aff2.Aff1.Aff0, for `cpus` */
    write_sysreg(tpidr_el1, (uint64_t)c);        /* this_cpu() works from here on */
}

struct cpu *this_cpu(void)
{
    return (struct cpu *)read_sysreg(tpidr_el1);
}

unsigned cpu_index(void) { return this_cpu()->index; }
unsigned cpu_count(void) { return __atomic_load_n(&ncpus_started, __ATOMIC_ACQUIRE); }
void cpu_set_count(unsigned n) { __atomic_store_n(&ncpus_started, n, __ATOMIC_RELEASE); }
bool cpu_online(unsigned idx)
{
    return idx < MAX_CPUS && __atomic_load_n(&cpus[idx].online, __ATOMIC_ACQUIRE);
}

#define DAIF_I (1ul << 7)

unsigned long irq_save(void)
{
    unsigned long f = read_sysreg(daif);
    __asm__ volatile("msr daifset, #2" ::: "memory");
    return f;
}

void irq_restore(unsigned long flags)
{
    if (!(flags & DAIF_I))
        __asm__ volatile("msr daifclr, #2" ::: "memory");
}

bool irqs_enabled(void) { return !(read_sysreg(daif) & DAIF_I); }
void irq_enable(void) { __asm__ volatile("msr daifclr, #2" ::: "memory"); }
void cpu_relax(void) { __asm__ volatile("yield" ::: "memory"); }

/* WFI wakes on a pending interrupt even while it is masked, so masking
 * first and unmasking after cannot lose a wakeup that lands between the
 * caller's last check and the WFI. Interrupts are on when this returns. */
void cpu_idle(void)
{
    __asm__ volatile("msr daifset, #2\n\tdsb sy\n\twfi\n\tmsr daifclr, #2" ::: "memory");
}

void cycles_init(uint64_t cntfrq)
{
    unsigned s;
    for (s = 0; s <= 8; s++)
        if (((cntfrq << s) % 1000000) == 0 && (cntfrq << s) >= 1000000)
            break;
    if (s > 8)
        for (s = 0; s < 16 && (cntfrq << s) / 1000000 < 1000; s++)
            ;
    cycles_shift = s;
    per_us = (cntfrq << s) / 1000000;
}

uint64_t cycles_now(void)
{
    isb();                          /* no read of the counter ahead of earlier code */
    return read_sysreg(cntvct_el0) << cycles_shift;
}

uint64_t cycles_per_us(void) { return per_us ? per_us : 1; }

/* Not CPU cycles: units of the generic timer (scaled as above). */
const char *cycles_unit(void) { return "timer units"; }
