/* kernel/prof/fold_index.c: where the fold (kernel/prof/fold.c) keeps
 * its keys: items in chunks that double, found again through an
 * open-addressing index, and the addresses it resolved. See
 * kernel/prof/fold_index.h for the rules.
 *
 * Profiler core: prefix prof_ and PROF_. */
#include "kernel/prof/fold_index.h"
#include "kernel/symtab.h"
#include "mm/heap.h"

void *prof_items_grow(struct prof_items *t)
{
    uint32_t q = t->fi_n / PROF_ITEMS_CHUNK0 + 1;
    unsigned k = 31u - (unsigned)__builtin_clz(q);
    if (k >= PROF_ITEMS_CHUNKS)
        return NULL;
    if (!t->fi_chunk[k]) {
        t->fi_chunk[k] = kmalloc((size_t)(PROF_ITEMS_CHUNK0 << k) * t->fi_size);
        if (!t->fi_chunk[k])
            return NULL;
    }
    return prof_item(t, t->fi_n);
}

/* Chunks are allocated in order: the first NULL is the end. */
void prof_items_free(struct prof_items *t)
{
    for (unsigned k = 0; k < PROF_ITEMS_CHUNKS && t->fi_chunk[k]; k++) {
        kfree(t->fi_chunk[k]);
        t->fi_chunk[k] = NULL;
    }
}

bool prof_index_init(struct prof_index *ix, uint32_t cap)
{
    unsigned shift = 64;
    for (uint32_t s = 2 * cap; s > 1; s /= 2)
        shift--;
    uint32_t *slot = kzalloc(2 * (size_t)cap * sizeof *slot);
    if (!slot)
        return false;
    kfree(ix->fx_slot);
    ix->fx_slot = slot;
    ix->fx_cap = cap;
    ix->fx_shift = shift;
    return true;
}

void prof_index_free(struct prof_index *ix)
{
    kfree(ix->fx_slot);
    ix->fx_slot = NULL;
    ix->fx_cap = 0;
}

/* The first empty slot on h's probe sequence. */
static uint32_t *prof_index_free_slot(const struct prof_index *ix, uint64_t h)
{
    uint32_t mask = 2 * ix->fx_cap - 1;
    for (uint32_t i = prof_index_first(ix, h);; i = (i + 1) & mask)
        if (!ix->fx_slot[i])
            return &ix->fx_slot[i];
}

uint32_t *prof_index_grow(struct prof_index *ix, const struct prof_items *t, uint64_t h)
{
    struct prof_index nix = { 0 };
    if (!prof_index_init(&nix, ix->fx_cap * 2))
        return NULL;
    /* Chunk by chunk; items start with their hash (fe_hash, fs_hash). */
    for (uint32_t i = 0, k = 0; i < t->fi_n; k++) {
        const char *c = t->fi_chunk[k];
        for (uint32_t j = 0; j < PROF_ITEMS_CHUNK0 << k && i < t->fi_n; j++, i++)
            *prof_index_free_slot(&nix, *(const uint64_t *)(c + (size_t)j * t->fi_size)) = i + 1;
    }
    kfree(ix->fx_slot);
    *ix = nix;
    return prof_index_free_slot(ix, h);
}

/* ---- resolved addresses ---- */

/* FNV-1a of a name, so that equal names hash alike wherever they live. */
static uint64_t prof_hash_name(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

const struct prof_fold_sym *prof_syms_add(struct prof_items *t, struct prof_index *ix,
                                          uintptr_t addr, bool names, uint64_t h, uint32_t *slot)
{
    slot = prof_index_room(ix, t, h, slot);
    struct prof_fold_sym *y = slot ? prof_items_push(t) : NULL;
    if (!y)
        return NULL;
    struct sym_hit hit;
    y->fs_hash = h;
    y->fs_addr = addr;
    if (symtab_lookup(addr, &hit)) {
        y->fs_start = hit.start;
        y->fs_name = hit.name;
        y->fs_off = (uint32_t)hit.offset;
        y->fs_name_hash = names ? prof_hash_name(hit.name) : 0;
    } else {
        y->fs_start = addr;
        y->fs_name = NULL;
        y->fs_off = 0;
        y->fs_name_hash = 0;
    }
    *slot = ++t->fi_n;
    return y;
}
