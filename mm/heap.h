/* mm/heap.h: the kernel heap. Size classes for small objects, whole pages
 * for large ones. Exhaustion returns NULL; callers handle it. SMP-safe. */
#pragma once
#include <stddef.h>

void *kmalloc(size_t size);
void *kzalloc(size_t size);
void kfree(void *ptr);

struct heap_stats {
    size_t in_use;        /* bytes handed out and not yet freed (requested sizes) */
    size_t pages;         /* pages the heap holds from the page allocator */
    size_t allocs, frees;
};
void heap_stats(struct heap_stats *st);
