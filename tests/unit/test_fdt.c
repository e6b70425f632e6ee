// LINK: lib/fdt.c
/* tests/unit/test_fdt.c: lib/fdt.c on the device tree QEMU 7.2 builds for
 *   qemu-system-aarch64 -M virt,gic-version=3,dumpdtb=tests/unit/data/virt.dtb \
 *     -cpu cortex-a72 -smp 4 -m 512M -kernel K -append "smp=4 udpshell=9000"
 * (recorded once; -kernel only so that -append is accepted), and on
 * damaged copies of it: a truncated or corrupted tree must give "not
 * found" or an error, never a read outside the buffer (ASan watches). */
#include "test.h"
#include "lib/fdt.h"
#include <stdlib.h>

#define BLOB "tests/unit/data/virt.dtb"

static uint8_t *load(size_t *n)
{
    FILE *f = fopen(BLOB, "rb");
    CHECK(f != NULL);
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(*n);
    CHECK(fread(b, 1, *n, f) == *n);
    fclose(f);
    return b;
}

TEST(fdt_header)
{
    size_t n;
    uint8_t *b = load(&n);
    struct fdt f;
    CHECK(fdt_open(&f, b, n) == NULL);
    CHECK(f.size <= n);
    CHECK(fdt_open(&f, b, 39) != NULL);           /* no room for a header */
    CHECK(fdt_open(&f, b, f.size - 1) != NULL);   /* totalsize beyond the buffer */
    b[0] ^= 0xff;
    CHECK(fdt_open(&f, b, n) != NULL);            /* bad magic */
    free(b);
}

TEST(fdt_paths_and_props)
{
    size_t n;
    uint8_t *b = load(&n);
    struct fdt f;
    CHECK(fdt_open(&f, b, n) == NULL);
    int root = fdt_root(&f);
    CHECK(root >= 0);
    CHECK_STR(fdt_name(&f, root), "");
    CHECK_EQ(fdt_path(&f, "/"), root);
    int chosen = fdt_path(&f, "/chosen");
    CHECK(chosen > root);
    CHECK_STR(fdt_name(&f, chosen), "chosen");
    CHECK_EQ(fdt_parent(&f, chosen), root);
    CHECK_STR(fdt_prop_str(&f, chosen, "bootargs"), "smp=4 udpshell=9000");
    CHECK(fdt_prop(&f, chosen, "no-such-property", NULL) == NULL);
    CHECK_EQ(fdt_path(&f, "/no-such-node"), -1);
    CHECK_EQ(fdt_path(&f, "/cpus/cpu@9"), -1);
    int cpu1 = fdt_path(&f, "/cpus/cpu@1");
    CHECK(cpu1 >= 0);
    CHECK_STR(fdt_name(&f, cpu1), "cpu@1");
    CHECK_EQ(fdt_parent(&f, cpu1), fdt_path(&f, "/cpus"));
    uint64_t base = 99, size = 99;
    CHECK(fdt_reg(&f, cpu1, 0, &base, &size));    /* #size-cells 0 under /cpus */
    CHECK_EQ(base, 1);
    CHECK_EQ(size, 0);
    CHECK(!fdt_reg(&f, cpu1, 1, &base, &size));   /* one entry only */
    int mem = fdt_path(&f, "/memory");            /* memory@40000000 */
    CHECK(mem >= 0);
    CHECK(fdt_reg(&f, mem, 0, &base, &size));
    CHECK_EQ(base, 0x40000000);
    CHECK_EQ(size, 512ull << 20);
    free(b);
}

TEST(fdt_compatible)
{
    size_t n;
    uint8_t *b = load(&n);
    struct fdt f;
    CHECK(fdt_open(&f, b, n) == NULL);
    int uart = fdt_find_compatible(&f, -1, "arm,pl011");
    CHECK(uart >= 0);
    CHECK(fdt_is_compatible(&f, uart, "arm,primecell"));   /* second string of the list */
    CHECK(!fdt_is_compatible(&f, uart, "arm,pl01"));       /* whole strings only */
    CHECK_EQ(fdt_find_compatible(&f, uart, "arm,pl011"), -1);  /* only one */
    int mmio = fdt_find_compatible(&f, -1, "virtio,mmio"), count = 0;
    for (; mmio >= 0; mmio = fdt_find_compatible(&f, mmio, "virtio,mmio"))
        count++;
    CHECK_EQ(count, 32);                          /* virt's 32 virtio-mmio slots */
    free(b);
}

TEST(fdt_machine_virt)
{
    size_t n;
    uint8_t *b = load(&n);
    struct fdt_machine m;
    CHECK(fdt_machine_read(b, n, &m) == NULL);
    CHECK_EQ(m.nmem, 1);
    CHECK_EQ(m.mem[0][0], 0x40000000);
    CHECK_EQ(m.mem[0][1], 0x20000000);
    CHECK_STR(m.bootargs, "smp=4 udpshell=9000");
    CHECK_STR(m.psci_method, "hvc");
    CHECK_EQ(m.gic_version, 3);
    CHECK_EQ(m.gicd, 0x08000000);
    CHECK_EQ(m.gicd_size, 0x10000);
    CHECK_EQ(m.gicr, 0x080a0000);
    CHECK(m.gicr_size >= 4 * 0x20000);            /* room for 4 redistributors */
    CHECK_EQ(m.uart, 0x09000000);
    CHECK_EQ(m.uart_size, 0x1000);
    CHECK_EQ(m.uart_intid, 33);                   /* SPI 1 */
    CHECK_EQ(m.timer_intid[FDT_TIMER_SEC_PHYS], 29);
    CHECK_EQ(m.timer_intid[FDT_TIMER_PHYS], 30);
    CHECK_EQ(m.timer_intid[FDT_TIMER_VIRT], 27);
    CHECK_EQ(m.timer_intid[FDT_TIMER_HYP], 26);
    CHECK_EQ(m.pmu_intid, 23);                    /* PPI 7 */
    CHECK_EQ(m.ncpus, 4);
    for (unsigned i = 0; i < m.ncpus && i < 4; i++)
        CHECK_EQ(m.cpu_mpidr[i], i);
    CHECK_EQ(m.cpus_skipped, 0);
    free(b);
}

/* Every truncation of the structure block and a byte flipped anywhere in
 * it: no crash, no read outside the (exactly sized) copy. */
TEST(fdt_damaged)
{
    size_t n;
    uint8_t *b = load(&n);
    struct fdt f;
    CHECK(fdt_open(&f, b, n) == NULL);
    uint32_t used = f.off_strings + f.size_strings;   /* the rest is padding */
    if (f.off_struct + f.size_struct > used)
        used = f.off_struct + f.size_struct;
    unsigned found = 0, tries = 0;
    for (uint32_t pos = f.off_struct; pos < f.off_struct + f.size_struct; pos += 97) {
        uint8_t *c = malloc(used);
        memcpy(c, b, used);
        c[4] = (uint8_t)(used >> 24); c[5] = (uint8_t)(used >> 16);
        c[6] = (uint8_t)(used >> 8);  c[7] = (uint8_t)used;
        c[pos] ^= 0x5a;
        struct fdt_machine m;
        if (fdt_machine_read(c, used, &m) == NULL && m.uart == 0x09000000)
            found++;
        tries++;
        free(c);
    }
    /* Most flips hit property values that do not matter; some must not. */
    CHECK(found > 0 && found < tries);
    /* A header that claims more than the buffer holds is refused. */
    uint8_t *c = malloc(used);
    memcpy(c, b, used);
    struct fdt_machine m;
    CHECK(fdt_machine_read(c, used, &m) != NULL);    /* totalsize still 1 MiB */
    free(c);
    free(b);
}
