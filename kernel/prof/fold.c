/* kernel/prof/fold.c: the hash index both folds of a run use, the text
 * report's (kernel/prof/report.c) and the exports' (kernel/prof/export.c),
 * and the selection both use for quantiles.
 *
 * The index holds no entries itself: it maps a 64-bit hash to a position
 * in an array its user owns (distinct chains, resolved symbols), so one
 * piece of code serves every key the folds need, each compared by its
 * user. See kernel/prof/fold.h for the rules.
 *
 * Profiler core: prefix prof_ and PROF_. */
#include "kernel/prof/fold.h"
#include "lib/string.h"
#include "mm/heap.h"

bool prof_index_init(struct prof_index *ix, uint32_t cap)
{
    unsigned shift = 64;
    for (uint32_t s = 2 * cap; s > 1; s /= 2)
        shift--;
    uint32_t *slot = kzalloc(2 * (size_t)cap * sizeof *slot);
    if (!slot)
        return false;
    kfree(ix->slot);
    ix->slot = slot;
    ix->cap = cap;
    ix->shift = shift;
    return true;
}

void prof_index_free(struct prof_index *ix)
{
    kfree(ix->slot);
    ix->slot = NULL;
    ix->cap = 0;
}

/* The first empty slot on h's probe sequence. */
static uint32_t *prof_index_free_slot(const struct prof_index *ix, uint64_t h)
{
    uint32_t mask = 2 * ix->cap - 1;
    for (uint32_t i = prof_index_first(ix, h);; i = (i + 1) & mask)
        if (!ix->slot[i])
            return &ix->slot[i];
}

bool prof_index_grow(struct prof_index *ix, void **arr, size_t size, uint32_t n,
                     uint64_t (*hash)(const void *arr, uint32_t i))
{
    uint32_t cap = ix->cap * 2;
    char *bigger = kmalloc(cap * size);
    struct prof_index nix = { 0 };
    if (!bigger || !prof_index_init(&nix, cap)) {
        kfree(bigger);
        return false;
    }
    memcpy(bigger, *arr, n * size);
    kfree(*arr);
    *arr = bigger;
    for (uint32_t i = 0; i < n; i++)
        *prof_index_free_slot(&nix, hash(bigger, i)) = i + 1;
    kfree(ix->slot);
    *ix = nix;
    return true;
}

uint32_t *prof_index_room(struct prof_index *ix, void **arr, size_t size, uint32_t n,
                          uint64_t (*hash)(const void *arr, uint32_t i), uint64_t h,
                          uint32_t *slot)
{
    if (n < ix->cap)
        return slot;
    if (!prof_index_grow(ix, arr, size, n, hash))
        return NULL;
    return prof_index_free_slot(ix, h);
}

/* The k-th smallest of a[0..n) (0-based), exactly: Wirth's selection
 * (Hoare's partition around the current k-th, narrowing to the side
 * that holds k), expected linear; a is reordered, and on return nothing
 * below a[k] lies right of k. Signed indexes: j steps below 0. */
uint32_t prof_select(uint32_t *a, uint32_t n, uint32_t k)
{
    int64_t l = 0, m = (int64_t)n - 1, kk = k;
    while (l < m) {
        uint32_t x = a[kk];
        int64_t i = l, j = m;
        do {
            while (a[i] < x)
                i++;
            while (x < a[j])
                j--;
            if (i <= j) {
                uint32_t t = a[i];
                a[i] = a[j];
                a[j] = t;
                i++;
                j--;
            }
        } while (i <= j);
        if (j < kk)
            l = i;
        if (kk < i)
            m = j;
    }
    return a[kk];
}
