/* tests/unit/sim_pmu_a64.c: the simulated PMUv3 of sim_pmu_a64.h. */
#include "sim_pmu_a64.h"
#include "fake_hal.h"
#include "arch/arm64/gic.h"
#include "hal/pmu.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sim_a64_cpu sim_a64[SIM_A64_CPUS];
struct sim_a64_log sim_a64_log[SIM_A64_LOG_MAX];
unsigned sim_a64_nlog, sim_a64_reads, sim_a64_writes, sim_a64_id_reads, sim_a64_nmi_ppi;
void (*sim_a64_write_hook)(enum pmu_reg r, uint64_t v);
void (*sim_a64_read_hook)(enum pmu_reg r);

static struct sim_a64_config cfg;

#define E   (1ull << 0)
#define D   (1ull << 3)
#define LC  (1ull << 6)
#define C   (1ull << 31)
#define FILTER_P (1ull << 31)

static struct sim_a64_cpu *cur(void)
{
    if (fake_cpu >= SIM_A64_CPUS) {
        fprintf(stderr, "sim_pmu_a64: fake_cpu %u out of range (0-%d)\n", fake_cpu, SIM_A64_CPUS - 1);
        abort();
    }
    return &sim_a64[fake_cpu];
}

void sim_a64_init(const struct sim_a64_config *c)
{
    cfg = *c;
    if (!cfg.num || !cfg.den) {
        cfg.num = 8;
        cfg.den = 1;
    }
    if (!cfg.pmcr_n)
        cfg.pmcr_n = 6;
    memset(sim_a64, 0, sizeof sim_a64);
    for (int i = 0; i < SIM_A64_CPUS; i++)
        sim_a64[i].last = fake_cycles;
    sim_a64_nlog = sim_a64_reads = sim_a64_writes = sim_a64_id_reads = 0;
    sim_a64_nmi_ppi = 0;
    sim_a64_write_hook = NULL;
    sim_a64_read_hook = NULL;
}

static void update_level(struct sim_a64_cpu *s)
{
    bool level = (s->pmcr & E) && (s->inten & s->ovs & C);
    if (level && !s->level)
        s->irqs++;
    s->level = level;
}

/* Counting at EL1: PMCR.E, PMCNTEN.C, and PMCCFILTR.P clear. */
static bool counting(const struct sim_a64_cpu *s)
{
    return cfg.counts && cfg.pmuver && cfg.pmuver != 0xf &&
           (s->pmcr & E) && (s->cnten & C) && !(s->ccfiltr & FILTER_P);
}

static void add(struct sim_a64_cpu *s, uint64_t n)
{
    if (!counting(s) || n == 0)
        return;
    if (s->pmcr & D)                  /* one increment per 64 cycles */
        n /= 64;
    uint64_t old = s->ccnt, sum = old + n;
    /* LC: overflow out of bit 63; else out of bit 31 (the low word wraps). */
    bool wrapped = (s->pmcr & LC) ? sum < old : (uint32_t)sum < (uint32_t)old || n > 0xffffffffull;
    s->ccnt = sum;
    if (wrapped)
        s->ovs |= C;
    update_level(s);
}

void sim_a64_count(uint64_t n)
{
    add(cur(), n);
}

/* Let the fake time since this cpu's last access pass on its counter. */
static void advance(void)
{
    struct sim_a64_cpu *s = cur();
    uint64_t dt = fake_cycles - s->last;
    s->last = fake_cycles;
    uint64_t t = dt * cfg.num + s->frac;
    s->frac = t % cfg.den;
    add(s, t / cfg.den);
}

bool sim_a64_irq_level(void)
{
    return cur()->level;
}

static void log_it(int reg, uint64_t val)
{
    if (sim_a64_nlog < SIM_A64_LOG_MAX)
        sim_a64_log[sim_a64_nlog++] = (struct sim_a64_log){fake_cpu, (enum pmu_reg)reg, val,
                                                           pmu_armed(), fake_irq_depth};
}

void sim_a64_log_clear(void) { sim_a64_nlog = 0; }

int sim_a64_log_find(int reg, unsigned from)
{
    for (unsigned i = from; i < sim_a64_nlog; i++)
        if ((int)sim_a64_log[i].reg == reg)
            return (int)i;
    return -1;
}

int sim_a64_log_last(int reg)
{
    for (int i = (int)sim_a64_nlog - 1; i >= 0; i--)
        if ((int)sim_a64_log[i].reg == reg)
            return i;
    return -1;
}

unsigned sim_a64_log_count(int reg)
{
    unsigned n = 0;
    for (unsigned i = 0; i < sim_a64_nlog; i++)
        n += (int)sim_a64_log[i].reg == reg;
    return n;
}

uint64_t pmu_reg_read(enum pmu_reg r)
{
    if (r == PMREG_ID_AA64DFR0) {
        sim_a64_id_reads++;
        return (uint64_t)cfg.pmuver << 8 | 0x6;        /* DebugVer 6 in 3:0 */
    }
    if (r == PMREG_MIDR) {
        sim_a64_id_reads++;
        return 0x410fd083;                             /* Cortex-A72 r0p3 */
    }
    sim_a64_reads++;
    advance();
    struct sim_a64_cpu *s = cur();
    uint64_t v = 0;
    switch (r) {
    case PMREG_PMCR:       v = (s->pmcr & 0xff) | (uint64_t)cfg.pmcr_n << 11 | 0x41ull << 24; break;
    case PMREG_PMCNTENSET: case PMREG_PMCNTENCLR: v = s->cnten; break;
    case PMREG_PMINTENSET: case PMREG_PMINTENCLR: v = s->inten; break;
    case PMREG_PMOVSSET:   case PMREG_PMOVSCLR:   v = s->ovs; break;
    case PMREG_PMCCNTR:    v = s->ccnt; break;
    case PMREG_PMCCFILTR:  v = s->ccfiltr; break;
    default:               break;
    }
    if (sim_a64_read_hook)
        sim_a64_read_hook(r);
    return v;
}

void pmu_reg_write(enum pmu_reg r, uint64_t v)
{
    sim_a64_writes++;
    advance();
    log_it(r, v);
    struct sim_a64_cpu *s = cur();
    switch (r) {
    case PMREG_PMCR:
        if (v & (1ull << 2))
            s->ccnt = 0;                               /* C: reset the cycle counter */
        s->pmcr = v & (E | D | LC | 0x30);
        break;
    case PMREG_PMCNTENSET: s->cnten |= v; break;
    case PMREG_PMCNTENCLR: s->cnten &= ~v; break;
    case PMREG_PMINTENSET: s->inten |= v; break;
    case PMREG_PMINTENCLR: s->inten &= ~v; break;
    case PMREG_PMOVSSET:   s->ovs |= v; break;
    case PMREG_PMOVSCLR:   s->ovs &= ~v; break;
    case PMREG_PMCCNTR:    s->ccnt = v; break;
    case PMREG_PMCCFILTR:  s->ccfiltr = v; break;
    default:               break;                      /* read only: ignored */
    }
    update_level(s);
    if (sim_a64_write_hook)
        sim_a64_write_hook(r, v);
}

void gic_set_nmi_ppi(unsigned intid)
{
    sim_a64_nmi_ppi = intid;
}

void gic_enable_ppi(unsigned intid)
{
    log_it(SIM_LOG_GIC_ENABLE, intid);
    if (intid == sim_a64_nmi_ppi && intid)
        cur()->ppi_enabled = true;
}
