// LINK: lib/fdt.c
/* tests/fuzz/fuzz_fdt.c: the device-tree reader (lib/fdt.c), which the
 * arm64 kernel runs on whatever blob the boot loader hands it.
 *
 * Invariants: the walk in document order moves strictly forward, one
 * level deeper at most per step, and ends; each node's parent comes
 * before it, one level up; every name, property value and string the
 * reader returns lies inside the blob (strings terminated inside it); "/"
 * is the root; and fdt_machine_read's counts stay within their arrays. */
#include <string.h>
#include "fuzz.h"
#include "lib/fdt.h"

static const uint8_t *lo, *hi;

static void check_in_blob(const void *p, size_t n)
{
    const uint8_t *b = p;
    FUZZ_CHECK(b >= lo && b <= hi && n <= (size_t)(hi - b));
}

static void check_str(const char *s)
{
    if (!s)
        return;
    check_in_blob(s, 1);
    FUZZ_CHECK(memchr(s, 0, (size_t)(hi - (const uint8_t *)s)) != NULL);
}

static void check_node(const struct fdt *f, int node, int depth)
{
    check_str(fdt_name(f, node));
    int parent = fdt_parent(f, node);
    /* fdt_parent gives up below depth 32; -1 is then its honest answer. */
    FUZZ_CHECK(depth == 0 ? parent == -1 : (parent < node || (parent == -1 && depth >= 32)));
    uint32_t len;
    static const char *const names[] = { "reg", "compatible", "interrupts", "#address-cells" };
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; i++) {
        const void *v = fdt_prop(f, node, names[i], &len);
        if (v)
            check_in_blob(v, len);
    }
    check_str(fdt_prop_str(f, node, "compatible"));
    check_str(fdt_prop_str(f, node, "device_type"));
    uint64_t base, size;
    unsigned intid;
    fdt_reg(f, node, 0, &base, &size);
    fdt_reg(f, node, 1, &base, &size);
    fdt_irq(f, node, 0, &intid);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    /* A heap copy of exactly n bytes: ASan sees a read past it. */
    uint8_t *blob = malloc(n ? n : 1);
    FUZZ_CHECK(blob);
    memcpy(blob, d, n);
    lo = blob;
    hi = blob + n;
    struct fdt f;
    if (fdt_open(&f, blob, n) == NULL) {
        FUZZ_CHECK(f.size <= n);
        int depth = -1, prev = -1, steps = 0;
        int root = fdt_root(&f);
        FUZZ_CHECK(fdt_path(&f, "/") == root);
        for (int node = fdt_next_node(&f, -1, &depth); node >= 0;) {
            FUZZ_CHECK(node > prev && depth >= 0 && (size_t)node < n);
            FUZZ_CHECK(++steps <= (int)(n / 8) + 1);
            check_node(&f, node, depth);
            prev = node;
            int was = depth;
            node = fdt_next_node(&f, node, &depth);
            FUZZ_CHECK(node < 0 || depth <= was + 1);
        }
        fdt_path(&f, "/cpus/cpu@0");
        fdt_find_compatible(&f, -1, "arm,pl011");
    }
    struct fdt_machine m;
    memset(&m, 0, sizeof m);
    if (fdt_machine_read(blob, n, &m) == NULL) {
        FUZZ_CHECK(m.nmem >= 0 && m.nmem <= FDT_MAX_MEM);
        FUZZ_CHECK(m.ncpus <= FDT_MAX_CPUS);
        check_str(m.bootargs);
        FUZZ_CHECK(memchr(m.psci_method, 0, sizeof m.psci_method) != NULL);
    }
    free(blob);
    return 0;
}
