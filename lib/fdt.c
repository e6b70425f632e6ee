/* lib/fdt.c: reading a flattened device tree (Devicetree Specification,
 * chapter 5: header, structure block of tokens, strings block).
 *
 * Structure tokens are big-endian u32s on 4-byte boundaries:
 *   BEGIN_NODE name\0 (padded to 4) | END_NODE | PROP len nameoff value
 *   (padded to 4) | NOP | END.
 * Every read is bounds-checked against the structure block, and every
 * string against its block, so a truncated or garbled tree ends a search
 * early instead of reading outside the blob. */
#include "lib/fdt.h"
#include "lib/string.h"

#define FDT_MAGIC      0xd00dfeed
#define TOK_BEGIN_NODE 1
#define TOK_END_NODE   2
#define TOK_PROP       3
#define TOK_NOP        4
#define TOK_END        9

const char *fdt_open(struct fdt *f, const void *blob, size_t avail)
{
    const uint8_t *b = blob;
    f->blob = 0;
    if (!blob || avail < 40)
        return "no room for a device tree header";
    if (fdt_be32(b) != FDT_MAGIC)
        return "bad magic (not a flattened device tree)";
    uint32_t total = fdt_be32(b + 4);
    if (total < 40 || total > avail)
        return "totalsize is out of range";
    uint32_t version = fdt_be32(b + 20), last_comp = fdt_be32(b + 24);
    if (version < 16 && last_comp > 17)
        return "unsupported version";
    f->blob = b;
    f->size = total;
    f->off_struct = fdt_be32(b + 8);
    f->off_strings = fdt_be32(b + 12);
    f->size_strings = fdt_be32(b + 32);
    f->size_struct = version >= 17 ? fdt_be32(b + 36) : total - f->off_struct;
    if (f->off_struct > total || f->size_struct > total - f->off_struct ||
        f->off_strings > total || f->size_strings > total - f->off_strings ||
        (f->off_struct & 3)) {
        f->blob = 0;
        return "a block lies outside the blob";
    }
    return 0;
}

/* The u32 at structure offset off, or TOK_END if it is out of bounds. */
static uint32_t word(const struct fdt *f, int off)
{
    if (!f->blob || off < 0 || (uint32_t)off + 4 > f->size_struct)
        return TOK_END;
    return fdt_be32(f->blob + f->off_struct + off);
}

/* Length of a NUL-terminated string at structure offset off, -1 if it
 * runs off the block. */
static int struct_strlen(const struct fdt *f, int off)
{
    const char *s = (const char *)f->blob + f->off_struct;
    for (uint32_t i = (uint32_t)off; i < f->size_struct; i++)
        if (s[i] == 0)
            return (int)(i - (uint32_t)off);
    return -1;
}

static const char *string_at(const struct fdt *f, uint32_t nameoff)
{
    if (nameoff >= f->size_strings)
        return 0;
    const char *s = (const char *)f->blob + f->off_strings + nameoff;
    for (uint32_t i = nameoff; i < f->size_strings; i++)
        if (f->blob[f->off_strings + i] == 0)
            return s;
    return 0;
}

/* The offset of the token after the one at off; -1 at END or on garbage.
 * *tok is the token at off. */
static int next_token(const struct fdt *f, int off, uint32_t *tok)
{
    *tok = word(f, off);
    switch (*tok) {
    case TOK_BEGIN_NODE: {
        int n = struct_strlen(f, off + 4);
        if (n < 0)
            return -1;
        return (off + 4 + n + 1 + 3) & ~3;
    }
    case TOK_PROP: {
        uint32_t len = word(f, off + 4);
        if (len > f->size_struct)
            return -1;
        return (int)((off + 12 + len + 3) & ~3u);
    }
    case TOK_END_NODE:
    case TOK_NOP:
        return off + 4;
    default:
        return -1;
    }
}

int fdt_root(const struct fdt *f)
{
    int off = 0;
    uint32_t tok;
    while (off >= 0) {
        int next = next_token(f, off, &tok);
        if (tok == TOK_BEGIN_NODE)
            return off;
        if (tok != TOK_NOP)
            return -1;
        off = next;
    }
    return -1;
}

int fdt_next_node(const struct fdt *f, int node, int *depth)
{
    uint32_t tok;
    if (node < 0) {
        *depth = 0;
        return fdt_root(f);
    }
    int d = *depth;
    int off = next_token(f, node, &tok);
    if (tok != TOK_BEGIN_NODE)
        return -1;
    while (off >= 0) {
        int here = off;
        off = next_token(f, here, &tok);
        if (tok == TOK_BEGIN_NODE) {
            *depth = d + 1;
            return here;
        }
        if (tok == TOK_END_NODE && --d < 0)
            return -1;
    }
    return -1;
}

const char *fdt_name(const struct fdt *f, int node)
{
    if (word(f, node) != TOK_BEGIN_NODE || struct_strlen(f, node + 4) < 0)
        return 0;
    return (const char *)f->blob + f->off_struct + node + 4;
}

int fdt_parent(const struct fdt *f, int node)
{
    /* Walk from the root, remembering the last node seen at each depth. */
    int stack[32];
    int depth, n = fdt_next_node(f, -1, &depth);
    while (n >= 0) {
        if (depth >= 32)
            return -1;
        stack[depth] = n;
        if (n == node)
            return depth > 0 ? stack[depth - 1] : -1;
        n = fdt_next_node(f, n, &depth);
    }
    return -1;
}

/* Does node name "cpu@1" match path component comp (length n)? */
static bool name_matches(const char *name, const char *comp, size_t n)
{
    if (strncmp(name, comp, n) != 0)
        return false;
    bool comp_has_unit = false;
    for (size_t i = 0; i < n; i++)
        comp_has_unit |= comp[i] == '@';
    return name[n] == 0 || (name[n] == '@' && !comp_has_unit);
}

int fdt_path(const struct fdt *f, const char *path)
{
    int node = fdt_root(f);
    if (node < 0 || path[0] != '/')
        return -1;
    const char *p = path + 1;
    int depth = 0;
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        int want = depth + 1, d = depth, found = -1;
        for (int c = fdt_next_node(f, node, &d); c >= 0 && d > depth; c = fdt_next_node(f, c, &d)) {
            const char *name = fdt_name(f, c);
            if (d == want && name && name_matches(name, p, n)) {
                found = c;
                break;
            }
        }
        if (found < 0)
            return -1;
        node = found;
        depth = want;
        p += n;
        if (*p == '/')
            p++;
    }
    return node;
}

const void *fdt_prop(const struct fdt *f, int node, const char *name, uint32_t *len)
{
    uint32_t tok;
    int off = next_token(f, node, &tok);
    if (tok != TOK_BEGIN_NODE)
        return 0;
    while (off >= 0) {
        int here = off;
        off = next_token(f, here, &tok);
        if (tok == TOK_NOP)
            continue;
        if (tok != TOK_PROP)
            return 0;             /* properties come before subnodes */
        uint32_t plen = word(f, here + 4);
        const char *pname = string_at(f, word(f, here + 8));
        /* In 64 bits: a length near 2^32 wraps a 32-bit sum back inside
         * the block, and the value would run off the end of the blob. */
        if ((uint64_t)here + 12 + plen > f->size_struct)
            return 0;
        if (pname && strcmp(pname, name) == 0) {
            if (len)
                *len = plen;
            return f->blob + f->off_struct + here + 12;
        }
    }
    return 0;
}

const char *fdt_prop_str(const struct fdt *f, int node, const char *name)
{
    uint32_t len;
    const char *s = fdt_prop(f, node, name, &len);
    if (!s || len == 0 || s[len - 1] != 0)
        return 0;
    return s;
}

bool fdt_is_compatible(const struct fdt *f, int node, const char *compat)
{
    uint32_t len;
    const char *s = fdt_prop(f, node, "compatible", &len);
    if (!s)
        return false;
    /* A list of NUL-terminated strings. */
    for (uint32_t i = 0; i < len;) {
        uint32_t j = i;
        while (j < len && s[j])
            j++;
        if (j == len)
            return false;          /* unterminated */
        if (strcmp(s + i, compat) == 0)
            return true;
        i = j + 1;
    }
    return false;
}

int fdt_find_compatible(const struct fdt *f, int after, const char *compat)
{
    int depth = 0;
    if (after >= 0) {
        /* Depth does not matter for document order: track from the root. */
        int d, n = fdt_next_node(f, -1, &d);
        while (n >= 0 && n != after)
            n = fdt_next_node(f, n, &d);
        if (n < 0)
            return -1;
        depth = d;
    }
    for (int n = fdt_next_node(f, after, &depth); n >= 0; n = fdt_next_node(f, n, &depth))
        if (fdt_is_compatible(f, n, compat))
            return n;
    return -1;
}

static uint32_t cells(const struct fdt *f, int node, const char *name, uint32_t def)
{
    uint32_t len;
    const void *p = node >= 0 ? fdt_prop(f, node, name, &len) : 0;
    return p && len == 4 ? fdt_be32(p) : def;
}

static uint64_t read_cells(const uint8_t *p, uint32_t n)
{
    uint64_t v = 0;
    for (uint32_t i = 0; i < n; i++)
        v = v << 32 | fdt_be32(p + 4 * i);
    return v;
}

bool fdt_reg(const struct fdt *f, int node, unsigned idx, uint64_t *base, uint64_t *size)
{
    int parent = fdt_parent(f, node);
    uint32_t ac = cells(f, parent, "#address-cells", 2);
    uint32_t sc = cells(f, parent, "#size-cells", 1);
    uint32_t len;
    const uint8_t *p = fdt_prop(f, node, "reg", &len);
    if (!p || ac == 0 || ac > 2 || sc > 2)
        return false;
    uint32_t entry = 4 * (ac + sc);
    if ((uint64_t)(idx + 1) * entry > len)
        return false;
    p += idx * entry;
    *base = read_cells(p, ac);
    if (size)
        *size = read_cells(p + 4 * ac, sc);
    return true;
}

bool fdt_irq(const struct fdt *f, int node, unsigned idx, unsigned *intid)
{
    uint32_t len;
    const uint8_t *p = fdt_prop(f, node, "interrupts", &len);
    if (!p || (uint64_t)(idx + 1) * 12 > len)
        return false;
    p += idx * 12;
    uint32_t type = fdt_be32(p), num = fdt_be32(p + 4);
    if (type == 0 && num < 988)
        *intid = 32 + num;         /* SPI */
    else if (type == 1 && num < 16)
        *intid = 16 + num;         /* PPI */
    else
        return false;
    return true;
}

/* ---- the machine summary ---- */

static void read_memory(const struct fdt *f, struct fdt_machine *m)
{
    int depth;
    for (int n = fdt_next_node(f, -1, &depth); n >= 0; n = fdt_next_node(f, n, &depth)) {
        const char *type = fdt_prop_str(f, n, "device_type");
        if (depth != 1 || !type || strcmp(type, "memory") != 0)
            continue;
        uint64_t base, size;
        for (unsigned i = 0; m->nmem < FDT_MAX_MEM && fdt_reg(f, n, i, &base, &size); i++)
            if (size) {
                m->mem[m->nmem][0] = base;
                m->mem[m->nmem][1] = size;
                m->nmem++;
            }
    }
}

static void read_cpus(const struct fdt *f, struct fdt_machine *m)
{
    int cpus = fdt_path(f, "/cpus"), depth = 1;
    if (cpus < 0)
        return;
    for (int n = fdt_next_node(f, cpus, &depth); n >= 0 && depth > 1; n = fdt_next_node(f, n, &depth)) {
        const char *type = fdt_prop_str(f, n, "device_type");
        uint64_t mpidr;
        if (depth != 2 || !type || strcmp(type, "cpu") != 0 || !fdt_reg(f, n, 0, &mpidr, 0))
            continue;
        if (m->ncpus < FDT_MAX_CPUS)
            m->cpu_mpidr[m->ncpus++] = mpidr;
        else
            m->cpus_skipped++;
    }
}

const char *fdt_machine_read(const void *blob, size_t avail, struct fdt_machine *m)
{
    struct fdt f;
    memset(m, 0, sizeof *m);
    const char *err = fdt_open(&f, blob, avail);
    if (err)
        return err;

    read_memory(&f, m);
    int chosen = fdt_path(&f, "/chosen");
    if (chosen >= 0)
        m->bootargs = fdt_prop_str(&f, chosen, "bootargs");

    int psci = fdt_path(&f, "/psci");
    const char *method = psci >= 0 ? fdt_prop_str(&f, psci, "method") : 0;
    if (method && (strcmp(method, "hvc") == 0 || strcmp(method, "smc") == 0))
        memcpy(m->psci_method, method, 4);

    int gic = fdt_find_compatible(&f, -1, "arm,gic-v3");
    if (gic >= 0 && fdt_reg(&f, gic, 0, &m->gicd, &m->gicd_size) &&
        fdt_reg(&f, gic, 1, &m->gicr, &m->gicr_size))
        m->gic_version = 3;

    int uart = fdt_find_compatible(&f, -1, "arm,pl011");
    if (uart >= 0 && fdt_reg(&f, uart, 0, &m->uart, &m->uart_size) &&
        !fdt_irq(&f, uart, 0, &m->uart_intid))
        m->uart_intid = 0;

    int timer = fdt_find_compatible(&f, -1, "arm,armv8-timer");
    for (unsigned i = 0; timer >= 0 && i < 4; i++)
        if (!fdt_irq(&f, timer, i, &m->timer_intid[i]))
            m->timer_intid[i] = 0;

    int pmu = fdt_find_compatible(&f, -1, "arm,armv8-pmuv3");
    if (pmu >= 0 && !fdt_irq(&f, pmu, 0, &m->pmu_intid))
        m->pmu_intid = 0;

    read_cpus(&f, m);
    if (!m->nmem)
        return "no memory node";
    return 0;
}
