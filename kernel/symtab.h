/* kernel/symtab.h: the kernel's own table of text symbols, baked into the
 * image by the three-pass link (tools/symgen), and lookups into it. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The table symgen emits (see tools/symgen/table.c for the layout). */
struct symtab_image {
    uint64_t count;
    const uint64_t *addrs;      /* sorted ascending */
    const uint32_t *sizes;
    const uint32_t *name_offs;  /* into names */
    const char *names;          /* NUL-terminated names, one blob */
};

/* The kernel's table; host tests point this at their own. */
extern const struct symtab_image *symtab_active;

struct sym_hit {
    const char *name;
    uintptr_t start;
    size_t size;
    size_t offset;              /* addr - start */
};

/* Binary search. False for an address below the first symbol, past the end
 * of the symbol it falls after, or when there is no table. NMI-safe. */
bool symtab_lookup(uintptr_t addr, struct sym_hit *hit);
/* Exact name to start address; 0 if none. Linear: shell use only. */
uintptr_t symtab_find(const char *name);
/* "name+0x1a", or "0xffffffff80201234" when nothing resolves. */
int symtab_format(uintptr_t addr, char *buf, size_t n);
/* The same for a return address: names the function holding the call. */
int symtab_format_ret(uintptr_t ret, char *buf, size_t n);
/* Is addr inside kernel text? (kernel: [_stext, _etext)) NMI-safe. */
bool text_contains(uintptr_t addr);
/* Kernel text as [*lo, *hi), for a caller that tests many addresses (the
 * stack walk) without a call for each. NMI-safe. Inline: the walk runs it
 * once per sample, and as a call it cost ~10 instructions there. */
#ifdef SONDE_HOST_TEST
extern uintptr_t symtab_test_text_lo, symtab_test_text_hi;
static inline void text_bounds(uintptr_t *lo, uintptr_t *hi)
{
    *lo = symtab_test_text_lo;
    *hi = symtab_test_text_hi;
}
#else
extern char _stext[], _etext[];   /* from the linker script */
static inline void text_bounds(uintptr_t *lo, uintptr_t *hi)
{
    *lo = (uintptr_t)_stext;
    *hi = (uintptr_t)_etext;
}
#endif
