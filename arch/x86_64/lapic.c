/* arch/x86_64/lapic.c: the local APIC in xAPIC (MMIO) mode. TCG offers no
 * x2APIC. Its timer is each CPU's 100 Hz tick. */
#include "arch/x86_64/lapic.h"
#include "arch/x86_64/layout.h"
#include "arch/x86_64/trap.h"
#include "arch/x86_64/x86.h"
#include "hal/cpu.h"
#include "kernel/timer.h"

#define LAPIC_ID        0x020
#define LAPIC_EOI       0x0b0
#define LAPIC_SVR       0x0f0
#define LAPIC_ICR_LO    0x300
#define LAPIC_ICR_HI    0x310
#define LAPIC_LVT_TIMER 0x320
#define LAPIC_LVT_PMC   0x340
#define LAPIC_LVT_LINT0 0x350
#define LAPIC_LVT_LINT1 0x360
#define LAPIC_TIMER_INIT 0x380
#define LAPIC_TIMER_CUR 0x390
#define LAPIC_TIMER_DIV 0x3e0

#define ICR_PENDING     (1u << 12)
#define TIMER_PERIODIC  (1u << 17)

uint64_t lapic_phys = 0xfee00000;
static uint32_t timer_count_10ms;
static uint32_t timer_period;          /* the count every CPU's tick reloads */

static inline volatile uint32_t *reg(unsigned off)
{
    return (volatile uint32_t *)phys_to_virt(lapic_phys + off);
}
static inline uint32_t lapic_read(unsigned off) { return *reg(off); }
static inline void lapic_write(unsigned off, uint32_t v) { *reg(off) = v; }

void lapic_init(void)
{
    /* Global enable in the APIC base MSR, then software enable. */
    wrmsr(0x1b, rdmsr(0x1b) | (1u << 11));
    lapic_write(LAPIC_SVR, 0x100 | VEC_SPURIOUS);
    lapic_write(LAPIC_LVT_LINT0, LVT_MASKED);
    lapic_write(LAPIC_LVT_LINT1, LVT_DELIVERY_NMI);
    lapic_write(LAPIC_LVT_PMC, LVT_MASKED);
    lapic_eoi();
}

void lapic_eoi(void) { lapic_write(LAPIC_EOI, 0); }
uint32_t lapic_id(void) { return lapic_read(LAPIC_ID) >> 24; }
void lapic_write_lvt_pmc(uint32_t val) { lapic_write(LAPIC_LVT_PMC, val); }

/* LAPIC timer counts (divide by 16) in 10 ms of TSC time. One run can be
 * stretched by the host descheduling this vCPU mid-measurement, and a boot
 * calibrated on such a run would tick slowly for its whole life; five runs
 * and the median, each scaled by the TSC time it really took. */
static uint32_t measure_10ms(uint64_t per_us)
{
    lapic_write(LAPIC_TIMER_INIT, 0xffffffff);
    uint64_t t0 = rdtsc(), t1;
    while ((t1 = rdtsc()) - t0 < per_us * 10000)
        pause();
    uint32_t counted = 0xffffffff - lapic_read(LAPIC_TIMER_CUR);
    uint64_t t2 = rdtsc();
    /* The count was read between t1 and t2: take the middle. */
    uint64_t elapsed = (t1 + t2) / 2 - t0;
    return (uint32_t)((uint64_t)counted * (per_us * 10000) / elapsed);
}

void lapic_timer_calibrate(void)
{
    uint64_t per_us = cycles_per_us();
    uint32_t r[5];
    lapic_write(LAPIC_TIMER_DIV, 0x3);             /* divide by 16 */
    lapic_write(LAPIC_LVT_TIMER, LVT_MASKED);
    for (int i = 0; i < 5; i++)
        r[i] = measure_10ms(per_us);
    lapic_write(LAPIC_TIMER_INIT, 0);
    for (int i = 1; i < 5; i++)
        for (int j = i; j > 0 && r[j] < r[j - 1]; j--) {
            uint32_t t = r[j]; r[j] = r[j - 1]; r[j - 1] = t;
        }
    timer_count_10ms = r[2];
}

/* Each CPU's tick starts at its own phase of the period: CPU i at
 * (i x 5/8 mod 1) of it, spread evenly whatever the count of CPUs (the
 * golden-ratio sequence, to a byte). Ticks that fall due together on
 * every CPU meet in whatever they share (the run queues, the scheduler's
 * lock). And under QEMU's -icount, where the vCPUs take turns on one
 * host thread and each turn lasts until the next timer deadline, aligned
 * ticks make one CPU's turn a whole period long: the others' ticks fall
 * due twice before they run again and one is lost (4-5% at -smp 4). The
 * wait is at most one period, once per CPU at boot; the start lands in
 * the first 1/64 of the period after the phase. */
static void lapic_timer_phase(unsigned hz)
{
    uint64_t period = cycles_per_us() * 1000000 / hz;
    uint64_t phase = period * ((cpu_index() * 158u) & 0xff) / 256;
    while ((rdtsc() - phase) % period >= period / 64)
        pause();
}

void lapic_timer_start(unsigned hz)
{
    lapic_timer_phase(hz);
    lapic_write(LAPIC_TIMER_DIV, 0x3);
    lapic_write(LAPIC_LVT_TIMER, TIMER_PERIODIC | VEC_TIMER);
    timer_period = (uint32_t)((uint64_t)timer_count_10ms * 100 / hz);
    lapic_write(LAPIC_TIMER_INIT, timer_period);
}

/* The periodic count reloads when the timer fires, so what it has
 * counted down since is how long ago the tick fell due. One MMIO read
 * (an exit under KVM): the period is the one every CPU started with. */
bool lapic_timer_prompt(void)
{
    uint32_t period = timer_period;
    return timer_tick_prompt(period - lapic_read(LAPIC_TIMER_CUR), period);
}

static void icr_send(uint32_t apic_id, uint32_t lo)
{
    unsigned long f = irq_save();
    while (lapic_read(LAPIC_ICR_LO) & ICR_PENDING)
        pause();
    lapic_write(LAPIC_ICR_HI, apic_id << 24);
    lapic_write(LAPIC_ICR_LO, lo);
    while (lapic_read(LAPIC_ICR_LO) & ICR_PENDING)
        pause();
    irq_restore(f);
}

void lapic_send_ipi(uint32_t apic_id, uint32_t vector) { icr_send(apic_id, vector); }
void lapic_send_nmi(uint32_t apic_id) { icr_send(apic_id, 4u << 8); }
void lapic_send_init(uint32_t apic_id) { icr_send(apic_id, (5u << 8) | (1u << 14)); }
void lapic_send_sipi(uint32_t apic_id, uint32_t page) { icr_send(apic_id, (6u << 8) | page); }
