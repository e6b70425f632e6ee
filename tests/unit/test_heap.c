// LINK: mm/heap.c mm/heapprof.c tests/unit/fake_heapprof.c
/* Host tests of mm/heap.c over a fake page allocator (aligned_alloc pages,
 * counted, with a budget to simulate exhaustion) and a fake panic that
 * longjmps back into the test (tests/unit/fake_hal.c). */
#include "test.h"
#include "fake_hal.h"
#include "mm/heap.h"
#include "mm/heapprof.h"
#include "mm/pmm.h"
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>

/* ---- fake mm/pmm.h ---- */

struct fake_block { void *va; size_t n; };
static struct fake_block *blocks;     /* live pmm_alloc blocks */
static size_t nblocks, capblocks;
static void **quarantined;            /* freed but kept (see fake_quarantine) */
static size_t nquar, capquar;

static size_t fake_outstanding;       /* pages handed out, not yet freed */
static size_t fake_budget;            /* 0: unlimited; else max outstanding */
static bool fake_quarantine;          /* keep freed pages mapped (and poisoned) */
static int fake_bad_page_free;        /* pmm_free of something not live */

void *pmm_alloc(size_t npages)
{
    if (npages == 0 || (fake_budget && fake_outstanding + npages > fake_budget))
        return NULL;
    void *p = aligned_alloc(PAGE_SIZE, npages * PAGE_SIZE);
    if (!p)
        return NULL;
    memset(p, 0, npages * PAGE_SIZE);
    if (nblocks == capblocks) {
        capblocks = capblocks ? capblocks * 2 : 256;
        blocks = realloc(blocks, capblocks * sizeof *blocks);
    }
    blocks[nblocks++] = (struct fake_block){ p, npages };
    fake_outstanding += npages;
    return p;
}

void pmm_free(void *va, size_t npages)
{
    for (size_t i = 0; i < nblocks; i++) {
        if (blocks[i].va != va)
            continue;
        if (blocks[i].n != npages)
            fake_bad_page_free++;
        fake_outstanding -= blocks[i].n;
        blocks[i] = blocks[--nblocks];
        /* Poison, so a heap that kept using a freed page trips the
         * pattern checks. */
        memset(va, 0xdd, npages * PAGE_SIZE);
        if (fake_quarantine) {
            if (nquar == capquar) {
                capquar = capquar ? capquar * 2 : 64;
                quarantined = realloc(quarantined, capquar * sizeof *quarantined);
            }
            quarantined[nquar++] = va;
        } else {
            free(va);
        }
        return;
    }
    fake_bad_page_free++;
}

static void quarantine_release(void)
{
    for (size_t i = 0; i < nquar; i++)
        free(quarantined[i]);
    nquar = 0;
    fake_quarantine = false;
}


/* kfree(p), expecting it to panic; true if it did, exactly once. */
static bool kfree_panics(void *p)
{
    int before = fake_panic_calls;
    fake_panic_msg[0] = '\0';
    fake_panic_armed = true;
    if (setjmp(fake_panic_jb) == 0)
        kfree(p);
    fake_panic_armed = false;
    return fake_panic_calls == before + 1;
}

/* ---- helpers ---- */

static uint64_t rng_state;

static uint64_t rng(void)
{
    /* xorshift64: fixed seed, so a failure reproduces. */
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

static unsigned char pattern(size_t id, size_t i)
{
    return (unsigned char)(id * 131 + i * 7 + 1);
}

static void fill(unsigned char *p, size_t n, size_t id)
{
    for (size_t i = 0; i < n; i++)
        p[i] = pattern(id, i);
}

static bool intact(const unsigned char *p, size_t n, size_t id)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != pattern(id, i))
            return false;
    return true;
}

struct live { unsigned char *p; size_t n, id; };

static int by_addr(const void *a, const void *b)
{
    const struct live *x = a, *y = b;
    return x->p < y->p ? -1 : x->p > y->p;
}

/* No two live blocks overlap: sort by address, compare neighbours. */
static bool no_overlap(const struct live *lv, size_t n)
{
    struct live *s = malloc((n ? n : 1) * sizeof *s);
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (lv[i].p)
            s[m++] = lv[i];
    qsort(s, m, sizeof *s, by_addr);
    bool ok = true;
    for (size_t i = 1; i < m; i++)
        if (s[i - 1].p + (s[i - 1].n ? s[i - 1].n : 1) > s[i].p)
            ok = false;
    free(s);
    return ok;
}

/* Every test leaves the heap as it found it; this checks the part of that
 * it can: bytes in use back to the start, pages held all accounted for. */
static void check_balanced(const struct heap_stats *before)
{
    struct heap_stats st;
    heap_stats(&st);
    CHECK_EQ(st.in_use, before->in_use);
    CHECK_EQ(st.allocs - before->allocs, st.frees - before->frees);
    CHECK_EQ(st.pages, fake_outstanding);
    CHECK(st.pages <= 8);          /* at most one cached page per class */
    CHECK_EQ(fake_bad_page_free, 0);
}

/* ---- tests ---- */

TEST(heap_every_class_and_large)
{
    struct heap_stats b, st;
    heap_stats(&b);
    static const size_t sizes[] = { 1, 15, 16, 17, 32, 33, 64, 100, 128, 200,
                                    256, 500, 512, 1000, 1024, 1025, 2047,
                                    2048, 2049, 4000, 4064, 4065, 4096, 12345,
                                    65536 };
    enum { N = sizeof sizes / sizeof sizes[0] };
    struct live lv[N];
    size_t total = 0;
    for (size_t i = 0; i < N; i++) {
        lv[i].p = kmalloc(sizes[i]);
        lv[i].n = sizes[i];
        lv[i].id = i;
        CHECK(lv[i].p != NULL);
        if (!lv[i].p)
            return;
        CHECK_EQ((uintptr_t)lv[i].p % 16, 0);
        fill(lv[i].p, lv[i].n, i);
        total += sizes[i];
    }
    heap_stats(&st);
    CHECK_EQ(st.in_use - b.in_use, total);
    CHECK_EQ(st.allocs - b.allocs, N);
    CHECK_EQ(st.pages, fake_outstanding);
    CHECK(no_overlap(lv, N));
    for (size_t i = 0; i < N; i++) {
        CHECK(intact(lv[i].p, lv[i].n, i));
        kfree(lv[i].p);
    }
    check_balanced(&b);
}

TEST(heap_in_use_is_requested_bytes)
{
    struct heap_stats b, st;
    heap_stats(&b);
    void *a = kmalloc(5), *c = kmalloc(3000), *z = kmalloc(0);
    CHECK(a && c && z);
    heap_stats(&st);
    CHECK_EQ(st.in_use - b.in_use, 3005);
    CHECK_EQ(st.allocs - b.allocs, 3);
    kfree(c);
    heap_stats(&st);
    CHECK_EQ(st.in_use - b.in_use, 5);
    kfree(a);
    kfree(z);
    check_balanced(&b);
}

TEST(heap_kfree_null)
{
    struct heap_stats b, st;
    heap_stats(&b);
    kfree(NULL);
    heap_stats(&st);
    CHECK_EQ(st.frees, b.frees);
    CHECK_EQ(st.in_use, b.in_use);
}

TEST(heap_kzalloc_zeroes)
{
    struct heap_stats b;
    heap_stats(&b);
    /* Dirty blocks, free them, then kzalloc the same sizes: the heap hands
     * back the dirty memory (LIFO), and kzalloc must clear it. */
    static const size_t sizes[] = { 24, 300, 2048, 5000 };
    for (size_t k = 0; k < 4; k++) {
        unsigned char *d = kmalloc(sizes[k]);
        CHECK(d != NULL);
        if (!d)
            return;
        memset(d, 0xee, sizes[k]);
        kfree(d);
        unsigned char *z = kzalloc(sizes[k]);
        CHECK(z != NULL);
        if (!z)
            return;
        size_t nonzero = 0;
        for (size_t i = 0; i < sizes[k]; i++)
            nonzero += z[i] != 0;
        CHECK_EQ(nonzero, 0);
        kfree(z);
    }
    check_balanced(&b);
}

/* Thousands of mixed allocations and frees with random sizes: every live
 * block keeps its own pattern and no two overlap, and everything comes
 * back at the end. */
TEST(heap_stress_random)
{
    enum { SLOTS = 600, OPS = 30000 };
    static struct live lv[SLOTS];
    struct heap_stats b, st;
    heap_stats(&b);
    memset(lv, 0, sizeof lv);
    rng_state = 0x9e3779b97f4a7c15ull;
    size_t expect_in_use = 0, nalloc = 0, bad = 0;

    for (size_t op = 0; op < OPS; op++) {
        size_t k = rng() % SLOTS;
        if (lv[k].p) {
            bad += !intact(lv[k].p, lv[k].n, lv[k].id);
            kfree(lv[k].p);
            expect_in_use -= lv[k].n;
            lv[k].p = NULL;
            continue;
        }
        /* Half small (the classes), half anywhere in 1..10000. */
        size_t n = rng() % 2 ? 1 + rng() % 2048 : 1 + rng() % 10000;
        lv[k].p = kmalloc(n);
        CHECK(lv[k].p != NULL);
        if (!lv[k].p)
            break;
        CHECK_EQ((uintptr_t)lv[k].p % 16, 0);
        lv[k].n = n;
        lv[k].id = op;
        fill(lv[k].p, n, op);
        expect_in_use += n;
        nalloc++;
        if (op % 2500 == 0) {
            CHECK(no_overlap(lv, SLOTS));
            heap_stats(&st);
            CHECK_EQ(st.in_use - b.in_use, expect_in_use);
            CHECK_EQ(st.pages, fake_outstanding);
        }
    }
    CHECK(nalloc > 5000);
    CHECK(no_overlap(lv, SLOTS));
    for (size_t k = 0; k < SLOTS; k++) {
        if (lv[k].p) {
            bad += !intact(lv[k].p, lv[k].n, lv[k].id);
            kfree(lv[k].p);
            lv[k].p = NULL;
        }
    }
    CHECK_EQ(bad, 0);
    heap_stats(&st);
    CHECK_EQ(st.allocs - b.allocs, nalloc);
    CHECK_EQ(st.frees - b.frees, nalloc);
    check_balanced(&b);
}

/* Freeing every object of a class gives its pages back but one. */
TEST(heap_slab_pages_returned)
{
    enum { N = 2000 };
    static void *p[N];
    struct heap_stats b, st;
    heap_stats(&b);
    for (int i = 0; i < N; i++) {
        p[i] = kmalloc(48);
        CHECK(p[i] != NULL);
        if (!p[i])
            return;
    }
    heap_stats(&st);
    CHECK(st.pages >= b.pages + N * 64 / PAGE_SIZE);   /* it did grow */
    for (int i = 0; i < N; i += 2)                      /* every other one */
        kfree(p[i]);
    for (int i = 1; i < N; i += 2)
        kfree(p[i]);
    heap_stats(&st);
    CHECK(st.pages <= b.pages + 1);
    check_balanced(&b);
}

TEST(heap_exhaustion)
{
    enum { MAXP = 4096 };
    static void *p[MAXP];
    struct heap_stats b, st;
    heap_stats(&b);

    /* No page to spare: a large request fails cleanly. */
    fake_budget = fake_outstanding;
    CHECK(kmalloc(10000) == NULL);
    heap_stats(&st);
    CHECK_EQ(st.allocs, b.allocs);
    CHECK_EQ(st.in_use, b.in_use);

    /* 40 spare pages: fill them with small and large blocks until NULL. */
    fake_budget = fake_outstanding + 40;
    int n = 0;
    while (n < MAXP && (p[n] = kmalloc(n % 3 ? 200 : 6000)) != NULL)
        n++;
    CHECK(n > 0 && n < MAXP);
    CHECK(fake_outstanding <= fake_budget);
    /* Small ones still fit in the partly used slab page; large ones not. */
    CHECK(kmalloc(6000) == NULL);
    CHECK(kzalloc(6000) == NULL);
    heap_stats(&st);
    CHECK_EQ(st.allocs - b.allocs, (size_t)n);

    /* Free a few; allocation works again. */
    for (int i = 0; i < n && i < 9; i++) {
        kfree(p[i]);
        p[i] = NULL;
    }
    void *again = kmalloc(6000);
    CHECK(again != NULL);
    kfree(again);

    fake_budget = 0;
    for (int i = 0; i < n; i++)
        kfree(p[i]);
    check_balanced(&b);
    void *after = kmalloc(100000);     /* unlimited again */
    CHECK(after != NULL);
    kfree(after);
}

TEST(heap_double_free_small_panics)
{
    struct heap_stats b, st;
    heap_stats(&b);
    void *keep = kmalloc(40);           /* keeps the slab page alive */
    void *p = kmalloc(40);
    CHECK(keep && p);
    kfree(p);
    EXPECT_PANIC(kfree(p), "double free");
    heap_stats(&st);
    CHECK_EQ(st.frees - b.frees, 1);    /* the refused free counted nothing */
    /* The lock was dropped before panic: the heap still works. */
    void *q = kmalloc(40);
    CHECK(q != NULL);
    kfree(q);
    kfree(keep);
    check_balanced(&b);
}

TEST(heap_interior_pointer_panics)
{
    struct heap_stats b;
    heap_stats(&b);
    char *p = kmalloc(100);
    CHECK(p != NULL);
    EXPECT_PANIC(kfree(p + 16), "inside");
    char *l = kmalloc(9000);
    CHECK(l != NULL);
    EXPECT_PANIC(kfree(l + 32), "inside");
    kfree(p);
    kfree(l);
    check_balanced(&b);
}

TEST(heap_foreign_pointer_panics)
{
    struct heap_stats b;
    heap_stats(&b);
    /* A zeroed page the heap never saw. */
    unsigned char *page = aligned_alloc(PAGE_SIZE, PAGE_SIZE);
    memset(page, 0, PAGE_SIZE);
    EXPECT_PANIC(kfree(page + 64), "not a heap pointer");
    free(page);
    check_balanced(&b);
}

TEST(heap_double_free_large_panics)
{
    struct heap_stats b;
    heap_stats(&b);
    /* Keep the freed pages mapped so the second kfree reads a cleared
     * header, as it would in the kernel's direct map. */
    fake_quarantine = true;
    void *p = kmalloc(20000);
    CHECK(p != NULL);
    kfree(p);
    EXPECT_PANIC(kfree(p), "not a heap pointer");
    /* Same for slab objects whose page went back to the page allocator
     * (700 bytes: class 1024, three per page, so 9 objects take 3 pages,
     * and freeing 8 gives one page back and caches one): each second
     * kfree panics, as a double free or as a foreign pointer. */
    void *keep = kmalloc(700), *extra[8];
    for (int i = 0; i < 8; i++)
        extra[i] = kmalloc(700);
    for (int i = 0; i < 8; i++)
        kfree(extra[i]);
    CHECK(fake_outstanding <= b.pages + 2);
    for (int i = 0; i < 8; i++) {
        CHECK(kfree_panics(extra[i]));
        CHECK(strstr(fake_panic_msg, "double free") ||
              strstr(fake_panic_msg, "not a heap pointer"));
    }
    kfree(keep);
    check_balanced(&b);
    quarantine_release();
}

/* ---- heap profiling (mm/heapprof.h) ---- */

static struct heapprof_stats stats_now(void)
{
    struct heapprof_stats st;
    static struct prof_record r[HEAPPROF_BLOCKS];
    heapprof_copy_table(r, HEAPPROF_BLOCKS, &st);
    return st;
}

/* Sampling every allocation (rate 1, from the first one after the rate
 * is set): each sampled block, small or large, is in the in-use table
 * until kfree retires it, exactly once;
 * the heap's own accounting is untouched by the mark. */
TEST(heap_sampled_frees)
{
    struct heap_stats before;
    heap_stats(&before);
    heapprof_test_reset();
    heapprof_set_rate(1);
    void *p[40];
    for (unsigned i = 0; i < 40; i++)
        p[i] = kmalloc(i < 30 ? 16 + i * 50 : 5000 + i * 100);
    struct heapprof_stats st = stats_now();
    CHECK_EQ(st.hs_live, 40);
    struct heap_stats mid;
    heap_stats(&mid);
    size_t want = 0;
    for (unsigned i = 0; i < 40; i++)
        want += i < 30 ? 16 + i * 50 : 5000 + i * 100;
    CHECK_EQ(mid.in_use - before.in_use, want);
    for (unsigned i = 0; i < 40; i += 2)
        kfree(p[i]);
    st = stats_now();
    CHECK_EQ(st.hs_live, 20);
    for (unsigned i = 1; i < 40; i += 2)
        kfree(p[i]);
    st = stats_now();
    CHECK_EQ(st.hs_live, 0);
    CHECK_EQ(st.hs_retired, 40);
    CHECK_EQ(st.hs_missing, 0);
    heapprof_set_rate(0);
    check_balanced(&before);
}

/* A sampled block freed twice still panics as a double free, and the
 * second kfree retires nothing. */
TEST(heap_sampled_double_free_panics)
{
    struct heap_stats before;
    heap_stats(&before);
    heapprof_test_reset();
    heapprof_set_rate(1);
    void *small = kmalloc(64), *big = kmalloc(3 * PAGE_SIZE);
    CHECK_EQ(stats_now().hs_live, 2);
    kfree(small);
    CHECK(kfree_panics(small));
    CHECK(strstr(fake_panic_msg, "double free") != NULL);
    fake_quarantine = true;             /* keep big's pages mapped */
    kfree(big);
    CHECK(kfree_panics(big));
    quarantine_release();
    struct heapprof_stats st = stats_now();
    CHECK_EQ(st.hs_live, 0);
    CHECK_EQ(st.hs_retired, 2);
    CHECK_EQ(st.hs_missing, 0);
    heapprof_set_rate(0);
    check_balanced(&before);
}

/* More live samples than the table holds: the rest are counted, never
 * marked, and their frees retire nothing. */
TEST(heap_sampled_table_full)
{
    struct heap_stats before;
    heap_stats(&before);
    heapprof_test_reset();
    heapprof_set_rate(1);
    unsigned n = HEAPPROF_BLOCKS + 10;
    void **p = malloc(n * sizeof *p);
    for (unsigned i = 0; i < n; i++)
        p[i] = kmalloc(32);
    struct heapprof_stats st = stats_now();
    CHECK_EQ(st.hs_live, HEAPPROF_BLOCKS);
    CHECK_EQ(st.hs_overflow, 10);
    for (unsigned i = 0; i < n; i++)
        kfree(p[i]);
    st = stats_now();
    CHECK_EQ(st.hs_live, 0);
    CHECK_EQ(st.hs_retired, HEAPPROF_BLOCKS);
    CHECK_EQ(st.hs_missing, 0);
    free(p);
    heapprof_set_rate(0);
    check_balanced(&before);
}

/* Off (the default), kmalloc never reaches the sampler. */
TEST(heap_profiling_off_samples_nothing)
{
    heapprof_test_reset();
    void *p = kmalloc(100000);
    kfree(p);
    CHECK_EQ(stats_now().hs_samples, 0);
}

/* A sampled block's chain starts at the call to kmalloc or kzalloc:
 * frame 0 is its return address less one, read from the allocator's
 * frame record only when the block is sampled, so it lies within this
 * function (the fake walk is empty: the chain is the site alone). */
TEST(heap_sampled_chain_from_caller)
{
    struct heap_stats before;
    heap_stats(&before);
    heapprof_test_reset();
    heapprof_set_rate(1);
    void *small = kmalloc(64), *big = kzalloc(3 * PAGE_SIZE);
    struct prof_record r[4];
    struct heapprof_stats st;
    CHECK_EQ(heapprof_copy_table(r, 4, &st), 2);
    uintptr_t fn = (uintptr_t)&heap_sampled_chain_from_caller;
    for (unsigned i = 0; i < 2; i++) {
        CHECK_EQ(r[i].pr_depth, 1);
        CHECK(r[i].pr_frames[0] > fn && r[i].pr_frames[0] < fn + 4096);
    }
    kfree(small);
    kfree(big);
    heapprof_set_rate(0);
    check_balanced(&before);
}
