/* kernel/prof/fold.h: the hash index both folds use (kernel/prof/fold.c),
 * the text report's and the exports'.
 *
 * Profiler core: prefix prof_ and PROF_. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Both folds (the text report, the exports) find a record's chain again in
 * time independent of the chains seen so far: every distinct key is
 * appended to an array its fold owns, the first time it is seen, and found
 * again through this open-addressing index. The index has twice the slots
 * of its array's capacity (so it is at most half full and a probe ends at
 * an empty slot); a slot holds an entry's position + 1, 0 when empty.
 * Arrays start small and double when full (amortised linear): sized for
 * every record up front they would cost more in page zeroing (the page
 * allocator clears what it hands out) than the whole fold. */
struct prof_index {
    uint32_t *slot;
    uint32_t cap;               /* entries the array holds; slots = 2 * cap */
    unsigned shift;             /* 64 - log2(slots): a hash's top bits index */
};

/* Multiplicative (Fibonacci) hashing: two instructions a word, and the
 * index takes the product's top bits, where every bit of the input has
 * had its say (the low bits of a product see only the low bits of its
 * factors). A key's hash is prof_mix folded over its words from a seed. */
static inline uint64_t prof_mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x9e3779b97f4a7c15ull;
}

/* A zeroed index for cap (a power of two) entries, replacing ix's slots;
 * false: no memory, and ix unchanged. */
bool prof_index_init(struct prof_index *ix, uint32_t cap);
void prof_index_free(struct prof_index *ix);
/* Where h's probe sequence starts; the next slot is (i + 1) & (2 cap - 1). */
static inline uint32_t prof_index_first(const struct prof_index *ix, uint64_t h)
{
    return (uint32_t)(h >> ix->shift);
}
/* The entry of hash h that same(ctx, position) accepts: its position + 1,
 * or 0 with *empty the slot where it belongs. Inline, with same a
 * static function at every call: the compare is inlined into the probe
 * loop, which every record of a fold runs. */
static inline uint32_t prof_index_find(const struct prof_index *ix, uint64_t h,
                                       bool (*same)(const void *ctx, uint32_t pos),
                                       const void *ctx, uint32_t **empty)
{
    uint32_t mask = 2 * ix->cap - 1;
    for (uint32_t i = prof_index_first(ix, h);; i = (i + 1) & mask) {
        uint32_t e = ix->slot[i];
        if (!e) {
            *empty = &ix->slot[i];
            return 0;
        }
        if (same(ctx, e - 1))
            return e;
    }
}
/* Double *arr, n entries of size bytes each (copied), and rebuild ix for
 * it, hashing entry i with hash(arr, i). False: no memory, nothing changed. */
bool prof_index_grow(struct prof_index *ix, void **arr, size_t size, uint32_t n,
                     uint64_t (*hash)(const void *arr, uint32_t i));
/* Room for entry n (the array's n-th, hash h) whose empty slot
 * prof_index_find gave: slot itself, or, when the array is full, the slot
 * after prof_index_grow. The caller writes n + 1 there once the entry is
 * filled in. NULL: no memory, nothing changed. */
uint32_t *prof_index_room(struct prof_index *ix, void **arr, size_t size, uint32_t n,
                          uint64_t (*hash)(const void *arr, uint32_t i), uint64_t h,
                          uint32_t *slot);

/* The k-th smallest of a[0..n) (0-based; n >= 1, k < n), exactly, in
 * expected linear time; reorders a. */
uint32_t prof_select(uint32_t *a, uint32_t n, uint32_t k);
