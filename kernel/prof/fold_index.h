/* kernel/prof/fold_index.h: where the fold (kernel/prof/fold.h) keeps
 * its keys (kernel/prof/fold_index.c): items in chunks that double, and
 * an open-addressing index that finds an item again by its hash. Task
 * context.
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
    uint32_t q = i / PROF_ITEMS_CHUNK0 + 1;
    unsigned k = 31u - (unsigned)__builtin_clz(q);
    return t->fi_chunk[k] + (size_t)(i - PROF_ITEMS_CHUNK0 * ((1u << k) - 1)) * t->fi_size;
}

/* Room for item fi_n: its address, a new chunk allocated when the last is
 * full (the caller fills it in, then counts it in fi_n). NULL: no memory,
 * nothing changed. */
void *prof_items_push(struct prof_items *t);
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
