/* lib/fdt.h: reading a flattened device tree (the DTB a boot loader or
 * QEMU hands the kernel). Read-only, no allocation, every offset checked
 * against the blob's size, so a corrupt tree gives "not found", never a
 * fault. Portable: host-tested on a blob recorded from QEMU virt.
 *
 * Nodes are named by their offset in the structure block (an int, -1 for
 * none). Interrupt specifiers are read as the GIC's three cells
 * <type number flags> and returned as GIC INTIDs (SPI n = 32 + n,
 * PPI n = 16 + n). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fdt {
    const uint8_t *blob;
    uint32_t size;                 /* totalsize, trusted only after fdt_open */
    uint32_t off_struct, size_struct;
    uint32_t off_strings, size_strings;
};

/* Check the header (magic, version, blocks inside totalsize <= avail).
 * NULL, or what is wrong. */
const char *fdt_open(struct fdt *f, const void *blob, size_t avail);
static inline uint32_t fdt_be32(const void *p)
{
    const uint8_t *b = p;
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

int fdt_root(const struct fdt *f);
/* "/chosen", "/cpus/cpu@1": a component without '@' matches the name
 * before the unit address. -1 if absent. */
int fdt_path(const struct fdt *f, const char *path);
/* Next node in document order after node (-1: the root), with its depth
 * (root 0). -1 at the end. */
int fdt_next_node(const struct fdt *f, int node, int *depth);
int fdt_parent(const struct fdt *f, int node);
const char *fdt_name(const struct fdt *f, int node);
/* A property's value and length, NULL if absent. */
const void *fdt_prop(const struct fdt *f, int node, const char *name, uint32_t *len);
const char *fdt_prop_str(const struct fdt *f, int node, const char *name);  /* NUL-terminated or NULL */
bool fdt_is_compatible(const struct fdt *f, int node, const char *compat);
/* The first node after 'after' (-1: from the start) compatible with compat. */
int fdt_find_compatible(const struct fdt *f, int after, const char *compat);
/* Entry idx of the node's reg, in the parent's #address-cells/#size-cells. */
bool fdt_reg(const struct fdt *f, int node, unsigned idx, uint64_t *base, uint64_t *size);
/* Entry idx of the node's interrupts (GIC 3-cell form) as an INTID. */
bool fdt_irq(const struct fdt *f, int node, unsigned idx, unsigned *intid);

/* What an arm64 kernel wants from the tree, gathered in one pass. */
#define FDT_MAX_MEM 8
#define FDT_MAX_CPUS 64

enum { FDT_TIMER_SEC_PHYS, FDT_TIMER_PHYS, FDT_TIMER_VIRT, FDT_TIMER_HYP };

struct fdt_machine {
    uint64_t mem[FDT_MAX_MEM][2];  /* {base, size} of each memory reg entry */
    int nmem;
    const char *bootargs;          /* /chosen bootargs (in the blob), or NULL */
    char psci_method[4];           /* "hvc", "smc" or "" (no /psci node) */
    int gic_version;               /* 3 for arm,gic-v3; 0 if none found */
    uint64_t gicd, gicd_size;      /* distributor */
    uint64_t gicr, gicr_size;      /* first redistributor region */
    uint64_t uart, uart_size;      /* the first arm,pl011 */
    unsigned uart_intid;           /* 0 if none */
    unsigned timer_intid[4];       /* by FDT_TIMER_*, 0 if absent */
    unsigned pmu_intid;            /* arm,armv8-pmuv3 PPI, 0 if absent */
    uint64_t cpu_mpidr[FDT_MAX_CPUS];  /* /cpus/cpu@N reg, document order */
    unsigned ncpus;
    unsigned cpus_skipped;         /* beyond FDT_MAX_CPUS */
};

/* NULL, or why the tree cannot be used (a missing piece is left 0). */
const char *fdt_machine_read(const void *blob, size_t avail, struct fdt_machine *m);
