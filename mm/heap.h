/* mm/heap.h: the kernel heap. Size classes for small objects, whole pages
 * for large ones. Exhaustion returns NULL; callers handle it. SMP-safe. */
#pragma once
#include <stddef.h>
#include <stdint.h>

void *kmalloc(size_t size);
void *kzalloc(size_t size);
void kfree(void *ptr);

struct heap_stats {
    size_t in_use;        /* bytes handed out and not yet freed (requested sizes) */
    size_t pages;         /* pages the heap holds from the page allocator */
    size_t allocs, frees;
};
void heap_stats(struct heap_stats *st);

struct prof_record;
struct heapprof_stats;
/* The in-use table of heap profiling (mm/heapprof.h), copied under the
 * heap's lock: at most max live sampled blocks as heap records, and the
 * table's figures to st (may be NULL). Returns the records copied. */
uint32_t heapprof_copy_table(struct prof_record *out, uint32_t max, struct heapprof_stats *st);

/* Heap profiling's side of the heap lock, for callers outside mm/heap.c:
 * set the rate (heapprof_set_rate, which sets every CPU's countdown),
 * and count down, sample and retire whole-page blocks from page_alloc and
 * page_free (mm/pmm.c), at bytes each. heapprof_pages must be called
 * by page_alloc itself: a sampled block's chain starts at the return
 * address in its caller's frame record (the address into page_alloc's
 * caller), read only when the block is sampled. */
void heapprof_rate_set(uint32_t rate);
void heapprof_pages(const void *va, size_t bytes);
void heapprof_pages_free(const void *va);
