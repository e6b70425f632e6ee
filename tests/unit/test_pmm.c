// LINK: mm/pmm.c mm/heap.c mm/heapprof.c tests/unit/fake_heapprof.c
/* Host tests of mm/pmm.c over a fake direct map (a host buffer standing
 * for 64 pages of RAM at 16 MiB), and of heap profiling's whole-page
 * blocks: page_alloc is sampled by the same countdown into the same table
 * as kmalloc, page_free retires a sampled block exactly once, and the
 * heap's own pages (pmm_alloc) are never sampled a second time. */
#include "test.h"
#include "fake_hal.h"
#include "fake_heapprof.h"
#include "hal/mem.h"
#include "kernel/percpu.h"
#include "mm/heap.h"
#include "mm/heapprof.h"
#include "mm/pmm.h"
#include <stdlib.h>

#define RAM_BASE  (16ull << 20)
#define RAM_PAGES 64u

static unsigned char *ram;

void *pa_to_va(uint64_t pa)
{
    return ram + (pa - RAM_BASE);
}

uint64_t va_to_pa(const void *va)
{
    return RAM_BASE + (uint64_t)((const unsigned char *)va - ram);
}

static void setup(void)
{
    static bool done;
    if (!done) {
        ram = aligned_alloc(PAGE_SIZE, RAM_PAGES * PAGE_SIZE);
        const uint64_t region[1][2] = { { RAM_BASE, RAM_PAGES * PAGE_SIZE } };
        pmm_init(region, 1, 0, 0);
        done = true;
    }
    heapprof_test_reset();
    fake_hp_walk_n = 0;
    fake_cpu = 0;
}

static struct heapprof_stats stats_now(struct prof_record *r, uint32_t max, uint32_t *n)
{
    struct heapprof_stats st;
    uint32_t got = heapprof_copy_table(r, max, &st);
    if (n)
        *n = got;
    return st;
}

TEST(pmm_alloc_free_counts)
{
    setup();
    size_t before = pmm_free_pages();
    CHECK_EQ(pmm_total_pages(), RAM_PAGES);
    void *a = pmm_alloc(3);
    CHECK(a != NULL);
    CHECK_EQ(pmm_free_pages(), before - 3);
    CHECK(pmm_alloc(RAM_PAGES) == NULL);
    pmm_free(a, 3);
    CHECK_EQ(pmm_free_pages(), before);
}

/* Every page block sampled (rate 1, from the first): the table holds it with its size in
 * bytes and the chain from page_alloc's caller; page_free retires it once,
 * and only a block that was sampled. */
TEST(pmm_page_blocks_sampled)
{
    setup();
    void *first = page_alloc(1);                    /* sampling off: never sampled */
    heapprof_rate_set(1);
    heapprof_test_seed(0, 11);
    struct prof_record r[8];
    uint32_t n;
    struct heapprof_stats st = stats_now(r, 8, &n);
    CHECK_EQ(n, 0);
    void *a = page_alloc(2), *b = page_alloc(1);
    CHECK(a && b);
    st = stats_now(r, 8, &n);
    CHECK_EQ(n, 2);
    CHECK_EQ(st.hs_samples, 2);
    CHECK_EQ(st.hs_live, 2);
    uint64_t sizes = r[0].pr_size + r[1].pr_size;
    CHECK_EQ(sizes, 3 * PAGE_SIZE);
    CHECK_EQ(r[0].pr_weight, r[0].pr_size);          /* rate 1: weight = size */
    CHECK_EQ(r[0].pr_kind, PROF_KIND_HEAP);
    CHECK(r[0].pr_depth >= 1);
    page_free(a, 2);
    st = stats_now(r, 8, &n);
    CHECK_EQ(n, 1);
    CHECK_EQ(r[0].pr_size, PAGE_SIZE);
    CHECK_EQ(st.hs_retired, 1);
    /* The block taken while sampling was off: freed without a trace. */
    page_free(first, 1);
    page_free(b, 1);
    st = stats_now(r, 8, &n);
    CHECK_EQ(n, 0);
    CHECK_EQ(st.hs_retired, 2);
    CHECK_EQ(st.hs_missing, 0);
    CHECK_EQ(st.hs_live, 0);
    heapprof_rate_set(0);
}

/* The chain starts at page_alloc's caller: frame 0 is its return address
 * less one, the frames inside the allocator skipped. */
TEST(pmm_page_chain_from_caller)
{
    setup();
    heapprof_rate_set(1);
    heapprof_test_seed(0, 12);
    void *a = page_alloc(1);
    struct prof_record r[2];
    uint32_t n;
    stats_now(r, 2, &n);
    CHECK_EQ(n, 1);
    /* The fake walk is empty, so the chain is the site alone: within
     * this function, the call to page_alloc. */
    CHECK_EQ(r[0].pr_depth, 1);
    uintptr_t f0 = r[0].pr_frames[0];
    uintptr_t fn = (uintptr_t)&pmm_page_chain_from_caller;
    CHECK(f0 > fn && f0 < fn + 4096);
    page_free(a, 1);
    heapprof_rate_set(0);
}

/* The heap's own pages are not sampled twice: a large kmalloc at rate 1
 * is one sample of the bytes asked for, not of the pages under it; and
 * kfree retires it through its own mark, leaving nothing missing. */
TEST(pmm_heap_pages_not_sampled_twice)
{
    setup();
    heapprof_rate_set(1);
    heapprof_test_seed(0, 13);
    void *p = kmalloc(3 * PAGE_SIZE);
    void *q = kmalloc(100);
    struct prof_record r[8];
    uint32_t n;
    struct heapprof_stats st = stats_now(r, 8, &n);
    CHECK_EQ(n, 2);
    CHECK_EQ(r[0].pr_size + r[1].pr_size, 3 * PAGE_SIZE + 100);
    kfree(p);
    kfree(q);
    st = stats_now(r, 8, &n);
    CHECK_EQ(n, 0);
    CHECK_EQ(st.hs_retired, 2);
    CHECK_EQ(st.hs_missing, 0);
    heapprof_rate_set(0);
}

/* Off, page blocks are never sampled, and their countdown stays off. */
TEST(pmm_page_blocks_off)
{
    setup();
    void *a = page_alloc(4);
    CHECK(a != NULL);
    struct heapprof_stats st = stats_now(NULL, 0, NULL);
    CHECK_EQ(st.hs_samples, 0);
    CHECK(cpus[0].heap_left > INT64_MAX / 2);
    page_free(a, 4);
}
