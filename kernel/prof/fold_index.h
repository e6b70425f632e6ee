/* kernel/prof/fold_index.h: where the fold (kernel/prof/fold.h) keeps
 * its keys (kernel/prof/fold_index.c): items in chunks that double, and
 * an open-addressing index that finds an item again by its hash; and
 * the addresses the fold resolved, kept in such items. Task context.
 *
 * The arrays start small and grow a chunk at a time, so that nothing they
 * hold moves or is copied as they grow: sized for every record up front
 * they would cost more in page zeroing (the page allocator clears what it
 * hands out) than the whole fold.
 *
 * Profiler core: prefix prof_ and PROF_. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Multiplicative (Fibonacci) hashing: two instructions a word, and the
 * index takes the product's top bits, where every bit of the input has
 * had its say (the low bits of a product see only the low bits of its
 * factors). A key's hash is prof_mix folded over its words. */
static inline uint64_t prof_mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x9e3779b97f4a7c15ull;
}

/* Chunk k holds 64 << k items; item i of chunk k is item 64 (2^k - 1) + i
 * of the whole. Every item starts with its 64-bit hash. */
#define PROF_ITEMS_CHUNK0 64u
#define PROF_ITEMS_CHUNKS 24    /* ~2^30 items: more than any snapshot holds */

struct prof_items {
    char *fi_chunk[PROF_ITEMS_CHUNKS];
    uint32_t fi_n;              /* items held */
    uint32_t fi_size;           /* bytes an item */
};

static inline void *prof_item(const struct prof_items *t, uint32_t i)
{
    /* Most folds never leave the first chunk: its item without the
     * divide and the bit scan (bench report: ~40 instructions a record
     * before, for its two lookups). */
    if (__builtin_expect(i < PROF_ITEMS_CHUNK0, 1))
        return t->fi_chunk[0] + (size_t)i * t->fi_size;
    uint32_t q = i / PROF_ITEMS_CHUNK0 + 1;
    unsigned k = 31u - (unsigned)__builtin_clz(q);
    return t->fi_chunk[k] + (size_t)(i - PROF_ITEMS_CHUNK0 * ((1u << k) - 1)) * t->fi_size;
}

/* Room for item fi_n: its address, a new chunk allocated when the last is
 * full (the caller fills it in, then counts it in fi_n). NULL: no memory,
 * nothing changed. Inline but for the new chunk (prof_items_grow). */
void *prof_items_grow(struct prof_items *t);
static inline void *prof_items_push(struct prof_items *t)
{
    uint32_t q = t->fi_n / PROF_ITEMS_CHUNK0 + 1;
    unsigned k = 31u - (unsigned)__builtin_clz(q);
    if (k < PROF_ITEMS_CHUNKS && t->fi_chunk[k])
        return prof_item(t, t->fi_n);
    return prof_items_grow(t);
}
void prof_items_free(struct prof_items *t);

/* Twice the slots of the items it has room for (so at most half full,
 * and a probe ends at an empty slot); a slot holds an item's position + 1,
 * 0 when empty. */
struct prof_index {
    uint32_t *fx_slot;
    uint32_t fx_cap;            /* items it has room for; slots = 2 * cap */
    unsigned fx_shift;          /* 64 - log2(slots): a hash's top bits index */
};

/* A zeroed index for cap (a power of two) items, replacing ix's slots;
 * false: no memory, and ix unchanged. */
bool prof_index_init(struct prof_index *ix, uint32_t cap);
void prof_index_free(struct prof_index *ix);

/* Where h's probe sequence starts; the next slot is (i + 1) & (2 cap - 1). */
static inline uint32_t prof_index_first(const struct prof_index *ix, uint64_t h)
{
    return (uint32_t)(h >> ix->fx_shift);
}

/* ix doubled, every item of t in it again; the empty slot for t's next
 * item, of hash h. NULL: no memory, nothing changed. */
uint32_t *prof_index_grow(struct prof_index *ix, const struct prof_items *t, uint64_t h);

/* Room in ix for t's next item, of hash h, whose empty slot the probe
 * found: that slot, or, when ix is full, the one after it grew. NULL: no
 * memory, nothing changed. */
static inline uint32_t *prof_index_room(struct prof_index *ix, const struct prof_items *t,
                                        uint64_t h, uint32_t *slot)
{
    return t->fi_n < ix->fx_cap ? slot : prof_index_grow(ix, t, h);
}

/* One distinct address, looked up once (the symbol lookup is the dearest
 * step of a key, and a hot function's few offsets recur in thousands of
 * records). */
struct prof_fold_sym {
    uint64_t fs_hash;           /* of fs_addr */
    uintptr_t fs_addr;
    uintptr_t fs_start;         /* symbol start, or fs_addr */
    const char *fs_name;        /* NULL: did not resolve */
    uint64_t fs_name_hash;      /* names: FNV-1a of fs_name */
    uint32_t fs_off;
};

/* addr's entry in t (struct prof_fold_sym items) through ix, looked up
 * and added the first time (names: with its name's hash). NULL only when
 * t or ix had to grow and could not. prof_syms_add: the first time, at
 * the empty slot the lookup ended on (h: addr's hash). */
const struct prof_fold_sym *prof_syms_add(struct prof_items *t, struct prof_index *ix,
                                          uintptr_t addr, bool names, uint64_t h, uint32_t *slot);

/* Inline: every record asks for its leaf. */
static inline const struct prof_fold_sym *prof_syms_resolve(struct prof_items *t,
                                                            struct prof_index *ix,
                                                            uintptr_t addr, bool names)
{
    uint64_t h = prof_mix(0, addr);
    uint32_t mask = 2 * ix->fx_cap - 1;
    for (uint32_t i = prof_index_first(ix, h);; i = (i + 1) & mask) {
        uint32_t e = ix->fx_slot[i];
        if (!e)
            return prof_syms_add(t, ix, addr, names, h, &ix->fx_slot[i]);
        const struct prof_fold_sym *y = prof_item(t, e - 1);
        if (y->fs_addr == addr)
            return y;
    }
}
