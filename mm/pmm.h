/* mm/pmm.h: the physical page allocator, 4 KiB pages. SMP-safe.
 * Pages are returned as direct-map virtual addresses. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define PAGE_SIZE 4096ul

/* Contiguous, zeroed; NULL if none. Heap profiling samples these blocks
 * as it samples kmalloc's (mm/heapprof.h): same countdown, same table,
 * and page_free retires a sampled block from it. */
void *page_alloc(size_t npages);
void page_free(void *va, size_t npages);
/* The same, never sampled: the heap's own slab pages and large blocks,
 * which heap profiling sees as the blocks kmalloc hands out instead. */
void *pmm_alloc(size_t npages);
void pmm_free(void *va, size_t npages);
size_t pmm_total_pages(void);
size_t pmm_free_pages(void);

/* ram: {base, len} pairs of usable RAM; [res_lo, res_hi) and the first MiB
 * are kept out. Returns bytes of RAM ignored above PMM_MAX_PHYS. */
uint64_t pmm_init(const uint64_t (*ram)[2], int n, uint64_t res_lo, uint64_t res_hi);
