/* kernel/symtab.c: address-to-name lookups in the table tools/symgen bakes
 * into the image, the "is this kernel text" test the stack walker relies
 * on, and the `sym` shell command.
 *
 * The table is read-only data written at build time, so lookups take no
 * lock and touch nothing but the table: symtab_lookup and text_contains
 * are safe in NMI context. */
#include "kernel/symtab.h"
#include "lib/printf.h"
#include "lib/string.h"

#ifdef SONDE_HOST_TEST
/* Host tests install their own table and text range. */
const struct symtab_image *symtab_active;
uintptr_t symtab_test_text_lo, symtab_test_text_hi;
#else
/* symgen emits the arrays and, next to them, a struct symtab_image that
 * points at them (symtab_kernel), so there is nothing to set up at boot:
 * a lookup from the very first exception works. Pass 1 of the link gets
 * an empty table (count 0), never a missing one. */
_Static_assert(offsetof(struct symtab_image, count) == 0, "symgen layout");
_Static_assert(offsetof(struct symtab_image, addrs) == 8, "symgen layout");
_Static_assert(offsetof(struct symtab_image, sizes) == 16, "symgen layout");
_Static_assert(offsetof(struct symtab_image, name_offs) == 24, "symgen layout");
_Static_assert(offsetof(struct symtab_image, names) == 32, "symgen layout");
_Static_assert(sizeof(struct symtab_image) == 40, "symgen layout");

extern const uint64_t symtab_count;
extern const uint64_t symtab_addrs[];
extern const uint32_t symtab_sizes[];
extern const uint32_t symtab_name_offs[];
extern const char symtab_names[];
extern const struct symtab_image symtab_kernel;

const struct symtab_image *symtab_active = &symtab_kernel;

extern char _stext[], _etext[];   /* from the linker script */
#endif

bool text_contains(uintptr_t addr)
{
#ifdef SONDE_HOST_TEST
    return addr >= symtab_test_text_lo && addr < symtab_test_text_hi;
#else
    return addr >= (uintptr_t)_stext && addr < (uintptr_t)_etext;
#endif
}

/* Index of the last symbol starting at or below addr, or -1. */
static long symtab_floor(const struct symtab_image *t, uintptr_t addr)
{
    uint64_t lo = 0, hi = t->count;     /* answer in [lo-1, hi) */
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (t->addrs[mid] <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (long)lo - 1;
}

bool symtab_lookup(uintptr_t addr, struct sym_hit *hit)
{
    const struct symtab_image *t = symtab_active;
    if (!t || t->count == 0)
        return false;
    long i = symtab_floor(t, addr);
    if (i < 0)
        return false;

    uintptr_t start = t->addrs[i];
    size_t size = t->sizes[i];
    if (size == 0) {
        /* No size from nm (assembly labels mostly): the symbol runs to
         * the next one. The last such symbol has no next, so it only
         * names its own first byte; guessing further would put a name on
         * whatever follows the table's end. */
        if ((uint64_t)i + 1 < t->count)
            size = t->addrs[i + 1] - start;
        else if (addr != start)
            return false;
    }
    if (size != 0 && addr - start >= size)
        return false;   /* in a gap after the symbol (padding, no symbol) */

    if (hit) {
        hit->name = t->names + t->name_offs[i];
        hit->start = start;
        hit->size = size;
        hit->offset = addr - start;
    }
    return true;
}

uintptr_t symtab_find(const char *name)
{
    const struct symtab_image *t = symtab_active;
    if (!t || !name)
        return 0;
    for (uint64_t i = 0; i < t->count; i++)
        if (strcmp(t->names + t->name_offs[i], name) == 0)
            return t->addrs[i];
    return 0;
}

int symtab_format(uintptr_t addr, char *buf, size_t n)
{
    struct sym_hit h;
    if (symtab_lookup(addr, &h))
        return fmt_snprintf(buf, n, "%s+0x%lx", h.name, (unsigned long)h.offset);
    return fmt_snprintf(buf, n, "0x%016lx", (unsigned long)addr);
}

/* A return address points just past its call, which may be the last
 * instruction of a function (a call to a noreturn function): name the
 * function that holds the call, with the offset of the address itself. */
int symtab_format_ret(uintptr_t ret, char *buf, size_t n)
{
    struct sym_hit h;
    if (ret && symtab_lookup(ret - 1, &h))
        return fmt_snprintf(buf, n, "%s+0x%lx", h.name, (unsigned long)(h.offset + 1));
    return fmt_snprintf(buf, n, "0x%016lx", (unsigned long)ret);
}
