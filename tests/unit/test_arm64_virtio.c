// LINK: arch/arm64/virtio.c lib/fdt.c kernel/irqname.c lib/printf.c
/* tests/unit/test_arm64_virtio.c: arch/arm64/virtio.c, the virtio-mmio
 * transports found in the device tree QEMU 7.2 builds for virt (the blob
 * test_fdt.c uses), and their interrupts attached through a fake GIC. */
#include "test.h"
#include "arch/arm64/dt.h"
#include "arch/arm64/gic.h"
#include "hal/virtio.h"
#include "kernel/irqname.h"
#include <string.h>
#include <stdlib.h>

#define BLOB "tests/unit/data/virt.dtb"

struct fdt boot_fdt;
struct fdt_machine boot_dt;

/* The fake GIC: one handler per INTID and what was enabled how. */
static irq_handler_fn fake_fn[GIC_MAX_INTID];
static void *fake_arg[GIC_MAX_INTID];
static int fake_enabled[GIC_MAX_INTID];           /* 1 level, 2 edge */

void gic_set_handler(unsigned intid, irq_handler_fn fn, void *arg)
{
    fake_fn[intid] = fn;
    fake_arg[intid] = arg;
}

irq_handler_fn gic_handler(unsigned intid, void **arg)
{
    *arg = fake_arg[intid];
    return fake_fn[intid];
}

void gic_enable_spi(unsigned intid, bool edge) { fake_enabled[intid] = edge ? 2 : 1; }

static uint8_t *blob;

static void open_blob(void)
{
    if (blob)
        return;
    FILE *f = fopen(BLOB, "rb");
    CHECK(f != NULL);
    if (!f)
        return;
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    blob = malloc(n);
    CHECK(fread(blob, 1, n, f) == n);
    fclose(f);
    CHECK(fdt_open(&boot_fdt, blob, n) == NULL);
}

TEST(virtio_dt_finds_the_32_windows)
{
    open_blob();
    struct virtio_mmio_dev d[VIRTIO_MMIO_MAX + 1];
    int n = virtio_mmio_find(d, VIRTIO_MMIO_MAX + 1);
    CHECK_EQ(n, 32);
    /* QEMU virt: window i at 0x0a000000 + 0x200 i, SPI 16 + i (INTID 48 + i),
     * whatever order the tree lists them in. */
    unsigned seen = 0;
    for (int i = 0; i < n; i++) {
        unsigned k = (unsigned)((d[i].base - 0x0a000000) / 0x200);
        CHECK(d[i].base >= 0x0a000000 && k < 32);
        CHECK_EQ(d[i].base, 0x0a000000 + 0x200ull * k);
        CHECK_EQ(d[i].size, 0x200);
        CHECK_EQ(d[i].irq, 48 + k);
        seen |= 1u << (k & 31);
    }
    CHECK_EQ(seen, 0xffffffffu);
    /* A short table: only as many as fit. */
    CHECK_EQ(virtio_mmio_find(d, 3), 3);
    CHECK_EQ(virtio_mmio_find(d, 0), 0);
}

TEST(virtio_dt_map_only_the_device_gigabyte)
{
    CHECK(virtio_mmio_map(0x0a003e00, 0x200) != NULL);
    CHECK(virtio_mmio_map(0x40000000, 0x200) == NULL);   /* RAM, not devices */
    CHECK(virtio_mmio_map(0x3fffff00, 0x200) == NULL);   /* runs past the gigabyte */
}

static int calls;
static void *got_arg;
static void on_irq(void *arg) { calls++; got_arg = arg; }

TEST(virtio_dt_irq_attach)
{
    int token;
    char name[IRQNAME_TEXT];
    CHECK(!irqname_get(79, name, sizeof name));
    CHECK_EQ(virtio_mmio_irq_attach(79, "virtio-net", on_irq, &token), 0);
    CHECK_EQ(fake_enabled[79], 1);                        /* level, not the tree's edge */
    CHECK(irqname_get(79, name, sizeof name) && strcmp(name, "virtio-net") == 0);
    void *arg;
    irq_handler_fn fn = gic_handler(79, &arg);
    CHECK(fn != NULL);
    if (fn)
        fn(NULL, arg);
    CHECK_EQ(calls, 1);
    CHECK(got_arg == &token);
    CHECK_EQ(virtio_mmio_irq_attach(79, "virtio-rng", on_irq, &token), -1);   /* taken */
    CHECK(irqname_get(79, name, sizeof name) && strcmp(name, "virtio-net") == 0);
    CHECK_EQ(virtio_mmio_irq_attach(27, "virtio-rng", on_irq, &token), -1);   /* a PPI */
    CHECK(!irqname_get(27, name, sizeof name));
    CHECK_EQ(virtio_mmio_irq_attach(GIC_MAX_INTID, "virtio-rng", on_irq, &token), -1);
    CHECK_EQ(fake_enabled[27], 0);
}
