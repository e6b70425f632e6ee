/* kernel/irqname.c: the interrupt vectors' names (kernel/irqname.h).
 *
 * Each slot is a pointer written once, by compare-and-swap from NULL, so
 * writers need no lock between them and a reader sees either no name or
 * a whole one (the strings themselves never change). */
#include "kernel/irqname.h"
#include "lib/printf.h"
#include "lib/string.h"

static const char *irqname_tab[IRQNAME_VECTORS][IRQNAME_SHARE];

static bool irqname_valid(const char *name)
{
    size_t n = 0;
    for (; name[n]; n++) {
        char c = name[n];
        if (n == IRQNAME_LEN)
            return false;
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
              c == '.'))
            return false;
    }
    return n > 0;
}

int irqname_set(unsigned vec, const char *name)
{
    if (vec >= IRQNAME_VECTORS || !name || !irqname_valid(name))
        return -1;
    for (unsigned i = 0; i < IRQNAME_SHARE; i++) {
        const char **slot = &irqname_tab[vec][i];
        const char *old = NULL;
        /* W: pairs with R in irqname_get(): the string is whole before
         * its pointer is seen. */
        if (__atomic_compare_exchange_n(slot, &old, name, false, __ATOMIC_RELEASE,
                                        __ATOMIC_ACQUIRE))
            return 0;
        if (strcmp(old, name) == 0)
            return 0;                  /* already this vector's */
    }
    return -1;
}

bool irqname_get(unsigned vec, char *buf, size_t n)
{
    if (vec >= IRQNAME_VECTORS || n == 0)
        return false;
    size_t at = 0;
    bool any = false;
    for (unsigned i = 0; i < IRQNAME_SHARE; i++) {
        /* R: pairs with W in irqname_set(). */
        const char *s = __atomic_load_n(&irqname_tab[vec][i], __ATOMIC_ACQUIRE);
        if (!s)
            break;
        int w = fmt_snprintf(buf + at, n - at, "%s%s", any ? "+" : "", s);
        at += w < 0 ? 0 : (size_t)w;
        if (at >= n)
            at = n - 1;
        any = true;
    }
    return any;
}

void irqname_text(unsigned vec, const char *class, char *buf, size_t n)
{
    if (!irqname_get(vec, buf, n))
        fmt_snprintf(buf, n, "%s %u", class, vec);
}

void irqname_reset(void)
{
    for (unsigned v = 0; v < IRQNAME_VECTORS; v++)
        for (unsigned i = 0; i < IRQNAME_SHARE; i++)
            __atomic_store_n(&irqname_tab[v][i], NULL, __ATOMIC_RELAXED);
}
