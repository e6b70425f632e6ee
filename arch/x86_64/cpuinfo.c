/* arch/x86_64/cpuinfo.c: what the CPU says it is, from CPUID: the vendor
 * string, family/model/stepping, the brand string and the hypervisor.
 *
 * Apart from cpu.c because it is ordinary C over cpuid(): host unit tests
 * link it against a simulated CPU (tests/unit/sim_pmu.c), which cpu.c's
 * GDT and segment work could not be. */
#include "arch/x86_64/x86.h"
#include "hal/cpu.h"
#include "lib/printf.h"

#define CPUID_HYPERVISOR (1u << 31)    /* 1h ECX */

/* CPUID hands strings out four bytes to a register, low byte first. */
static void copy_reg(char *dst, uint32_t r)
{
    for (int i = 0; i < 4; i++)
        dst[i] = (char)(r >> (8 * i));
}

/* CPUID strings come from whoever answers CPUID: print only what is printable. */
static void sanitize(char *s)
{
    for (; *s; s++)
        if (*s < 0x20 || *s > 0x7e)
            *s = '?';
}

/* Three registers in the given order, as one printable string. */
static void cpuid_string(char out[13], uint32_t a, uint32_t b, uint32_t c)
{
    copy_reg(out, a);
    copy_reg(out + 4, b);
    copy_reg(out + 8, c);
    out[12] = 0;
    sanitize(out);
}

void cpuid_vendor(char out[13])
{
    uint32_t r[4];
    cpuid(0, 0, r);
    cpuid_string(out, r[1], r[3], r[2]);     /* EBX EDX ECX */
}

static void describe_model(struct printer *p)
{
    uint32_t r[4];
    cpuid(1, 0, r);
    unsigned base_family = (r[0] >> 8) & 0xf;
    unsigned family = base_family, model = (r[0] >> 4) & 0xf;
    if (base_family == 0xf)
        family += (r[0] >> 20) & 0xff;
    if (base_family == 0x6 || base_family == 0xf)
        model |= ((r[0] >> 16) & 0xf) << 4;
    pr_printf(p, "family:       %u (0x%x) model %u (0x%x) stepping %u\n",
              family, family, model, model, r[0] & 0xf);
}

static void describe_brand(struct printer *p)
{
    uint32_t r[4];
    char brand[49] = {0};
    cpuid(0x80000000, 0, r);
    if (r[0] >= 0x80000004) {
        for (unsigned i = 0; i < 3; i++) {
            cpuid(0x80000002 + i, 0, r);
            for (int j = 0; j < 4; j++)
                copy_reg(brand + 16 * i + 4 * j, r[j]);
        }
    }
    sanitize(brand);
    char *b = brand;          /* Intel pads the brand string with spaces */
    while (*b == ' ')
        b++;
    int n = 0;
    for (int i = 0; b[i]; i++)
        if (b[i] != ' ')
            n = i + 1;
    b[n] = 0;
    pr_printf(p, "model name:   %s\n", n ? b : "(none)");
}

static void describe_hypervisor(struct printer *p)
{
    uint32_t r[4];
    cpuid(1, 0, r);
    if (!(r[2] & CPUID_HYPERVISOR)) {
        pr_puts(p, "hypervisor:   none\n");
        return;
    }
    char sig[13];
    cpuid(0x40000000, 0, r);
    cpuid_string(sig, r[1], r[2], r[3]);
    pr_printf(p, "hypervisor:   %s\n", sig[0] ? sig : "yes (no signature)");
}

void cpu_describe(struct printer *p)
{
    char vendor[13];
    cpuid_vendor(vendor);
    pr_printf(p, "vendor:       %s\n", vendor);
    describe_model(p);
    describe_brand(p);
    pr_printf(p, "cpus:         %u\n", cpu_count());
    describe_hypervisor(p);
}
