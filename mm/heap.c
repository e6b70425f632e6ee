/* mm/heap.c: the kernel heap, on top of the page allocator (mm/pmm.h).
 *
 * Small requests (up to 2048 bytes) come from slab pages of one size class
 * each (16, 32, ... 2048). Larger ones take whole contiguous pages. Either
 * way the first bytes of the 4 KiB page an object lies in hold a header
 * with a magic number, so kfree finds everything it needs by masking the
 * pointer down to its page: no lookup table, no per-object prefix.
 *
 *   slab page:   [struct slab | req[nslots] | pad to 16 | obj 0 | obj 1 ...]
 *   large block: [struct large (32 bytes) | data ...] over npages pages
 *
 * Requested sizes are kept per object, for exact heap_stats.in_use: a
 * slab's header has one uint16_t per slot holding the requested size + 1,
 * or 0 while the slot is free. That same array makes a double free (slot
 * already 0) or a pointer inside an object (not on a slot boundary)
 * detectable at the cost of one load, so both panic. The +1 lets
 * kmalloc(0) hand out a real 16-byte object with 0 bytes requested.
 *
 * Each class keeps a list of its pages that have a free slot; a page's free
 * slots are chained through the objects themselves (a slot index in their
 * first two bytes). A page that becomes entirely free goes back to the
 * page allocator, except for one per class kept cached, so that a loop
 * doing kmalloc/kfree of one object does not hit the page allocator each
 * time. The header takes the front of every slab page, so the 2048 class
 * fits one object per page and the 1024 class three: classes that big are
 * rare here, and finding the header by masking is worth more than the
 * space.
 *
 * Heap profiling (mm/heapprof.h) rides on the same lock: the countdown
 * is per CPU (hal/cpu.h: struct cpu's heap_left, x18 on arm64) and runs
 * with interrupts off under it, a sampled block is
 * marked (a slot's req[] top bit, a large block's sampled word) and kfree
 * retires it from the in-use table in the critical section that frees
 * it. The sampled path's stack walk and prof_emit take no lock. The heap
 * takes its pages unsampled (pmm_alloc): the blocks it hands out are what
 * is sampled. Whole-page blocks others take with page_alloc are sampled
 * here too, under this lock (heapprof_pages).
 *
 * One spinlock protects everything. Never call kmalloc/kfree from NMI
 * context: it would deadlock against the CPU's own interrupted holder. */
#include <stdbool.h>
#include <stdint.h>
#include "mm/heap.h"
#include "mm/heapprof.h"
#include "mm/pmm.h"
#include "kernel/panic.h"
#include "kernel/spinlock.h"
#include "lib/string.h"

#define SLAB_MAGIC  0x534c4142u   /* "SLAB" */
#define LARGE_MAGIC 0x4c524745u   /* "LRGE" */
#define NCLASSES    8
#define MIN_SHIFT   4             /* smallest class: 16 bytes */
#define MAX_SMALL   2048
#define SLOT_NONE   0xffffu
#define OBJ_ALIGN   16
#define REQ_SAMPLED 0x8000u       /* req[] top bit: the object was sampled */
#define REQ_SIZE    0x7fffu
_Static_assert(MAX_SMALL + 1 <= REQ_SIZE, "a requested size + 1 fits below the sampled bit");

struct slab {
    uint32_t magic;
    uint16_t cls;
    uint16_t nslots;
    uint16_t nfree;
    uint16_t free_head;          /* first free slot, or SLOT_NONE */
    uint16_t first;              /* offset of slot 0 in the page */
    struct slab *prev, *next;    /* in its class's list of pages with room */
    uint16_t req[];              /* requested size + 1, | REQ_SAMPLED when
                                    sampled; 0 = slot free */
};

struct large {
    uint32_t magic;
    uint32_t sampled;            /* in heap profiling's in-use table */
    size_t npages;
    size_t req;
    size_t pad2;
};
_Static_assert(sizeof(struct large) % OBJ_ALIGN == 0,
               "large blocks must stay 16-byte aligned");
/* Slot 0 of any slab then starts past the slab header plus at least one
 * req[] entry, so strictly after where a large block's data starts: see
 * large_free. */
_Static_assert(sizeof(struct slab) >= sizeof(struct large),
               "a stale large pointer must never match a slab slot");

struct heap_class {
    struct slab *partial;        /* pages with a free slot; fully free last */
    unsigned nempty;             /* pages here with every slot free */
};

static spinlock_t heap_lock = SPINLOCK_INIT("heap");
static struct heap_class classes[NCLASSES];
static struct heap_stats stats;

static size_t class_size(unsigned cls)
{
    return (size_t)1 << (cls + MIN_SHIFT);
}

static unsigned class_of(size_t size)
{
    unsigned cls = 0;
    while (class_size(cls) < size)
        cls++;
    return cls;
}

static void *page_of(const void *p)
{
    return (void *)((uintptr_t)p & ~(PAGE_SIZE - 1));
}

static size_t align_up(size_t v, size_t a)
{
    return (v + a - 1) & ~(a - 1);
}

static void *slot_addr(struct slab *s, unsigned i)
{
    return (char *)s + s->first + (size_t)i * class_size(s->cls);
}

/* The most slots whose header, size array and objects fit in one page. */
static void slab_layout(unsigned cls, uint16_t *nslots, uint16_t *first)
{
    size_t sz = class_size(cls);
    size_t n = PAGE_SIZE / sz;
    size_t off;
    for (;; n--) {
        off = align_up(sizeof(struct slab) + n * sizeof(uint16_t), OBJ_ALIGN);
        if (off + n * sz <= PAGE_SIZE)
            break;
    }
    *nslots = (uint16_t)n;
    *first = (uint16_t)off;
}

/* ---- per-class list of pages with room ---- */

static void list_remove(struct heap_class *hc, struct slab *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        hc->partial = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->prev = s->next = NULL;
}

static void list_push_front(struct heap_class *hc, struct slab *s)
{
    s->prev = NULL;
    s->next = hc->partial;
    if (hc->partial)
        hc->partial->prev = s;
    hc->partial = s;
}

/* Fully free pages go last, so allocation fills used pages first and the
 * empty one stays empty (and cheap to give back). */
static void list_push_back(struct heap_class *hc, struct slab *s)
{
    struct slab **pp = &hc->partial, *prev = NULL;
    while (*pp) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    s->prev = prev;
    s->next = NULL;
    *pp = s;
}

/* ---- slabs ---- */

static struct slab *slab_new(unsigned cls)
{
    struct slab *s = pmm_alloc(1);
    if (!s)
        return NULL;
    s->magic = SLAB_MAGIC;
    s->cls = (uint16_t)cls;
    slab_layout(cls, &s->nslots, &s->first);
    s->nfree = s->nslots;
    /* Chain every slot: slot i points at i+1. The page came zeroed, so
     * req[] already says "all free". */
    for (unsigned i = 0; i < s->nslots; i++)
        *(uint16_t *)slot_addr(s, i) =
            (uint16_t)(i + 1 < s->nslots ? i + 1 : SLOT_NONE);
    s->free_head = 0;
    stats.pages++;
    return s;
}

static inline __attribute__((always_inline)) void *slab_take(struct heap_class *hc, struct slab *s,
                                                         size_t size)
{
    unsigned i = s->free_head;
    /* The link lives in a free object, where a use-after-free write can
     * reach it; check it before trusting it. */
    if (i >= s->nslots || s->req[i] != 0)
        return NULL;
    if (s->nfree == s->nslots)
        hc->nempty--;
    void *obj = slot_addr(s, i);
    s->free_head = *(uint16_t *)obj;
    s->req[i] = (uint16_t)(size + 1);
    if (--s->nfree == 0)
        list_remove(hc, s);
    return obj;
}

/* Called with the lock held. NULL with *corrupt set if a free list link
 * was bad (the caller panics after dropping the lock). Inlined, as
 * heap_alloc is: kmalloc's whole fast path is one function. */
static inline __attribute__((always_inline)) void *small_alloc(size_t size, void **corrupt)
{
    unsigned cls = class_of(size ? size : 1);
    struct heap_class *hc = &classes[cls];
    struct slab *s = hc->partial;

    if (!s) {
        s = slab_new(cls);
        if (!s)
            return NULL;
        hc->nempty++;
        list_push_front(hc, s);
    }
    void *obj = slab_take(hc, s, size);
    if (!obj)
        *corrupt = s;
    return obj;
}

/* ---- large blocks ---- */

static void *large_alloc(size_t size)
{
    size_t npages = (size + sizeof(struct large) + PAGE_SIZE - 1) / PAGE_SIZE;
    struct large *l = pmm_alloc(npages);
    if (!l)
        return NULL;
    l->magic = LARGE_MAGIC;
    l->npages = npages;
    l->req = size;
    stats.pages += npages;
    return l + 1;
}

/* ---- the interface ---- */

/* Mark p (just allocated, size bytes) as sampled: it is in the in-use
 * table until kfree retires it. */
static void heap_mark_sampled(void *p, size_t size)
{
    if (size <= MAX_SMALL) {
        struct slab *s = page_of(p);
        unsigned i = (unsigned)(((uintptr_t)p - (uintptr_t)s - s->first) / class_size(s->cls));
        s->req[i] |= REQ_SAMPLED;
    } else {
        ((struct large *)page_of(p))->sampled = 1;
    }
}

/* Heap lock held, the countdown crossed: sample the block at p through
 * heapprof_sample, whose site is the return address into the
 * allocator's caller. That address is read here, from the frame records
 * (-fno-omit-frame-pointer on both architectures, and in the host tests:
 * each is {caller's frame pointer, return address}), not passed in: an
 * allocator that took __builtin_return_address(0) held it in a
 * callee-saved register across every allocation, sampled or not (x86-64:
 * a push, a pop and a mov; arm64: xpaclri, a mov and a bigger frame), and
 * one that passed its __builtin_frame_address(0) had it copied into one
 * too. hops is how many frames lie between this function's caller and
 * the allocator: 0 when the allocator calls this itself (kmalloc and
 * kzalloc, heap_alloc inlined into them), 1 from heapprof_pages (called
 * by page_alloc, in another file). Never inlined, so that it has a
 * frame record of its own, whose saved frame pointer is its caller's.
 * Read raw, as the stack walk reads every
 * other frame (kernel/stacktrace_inline.h): the kernel is built without
 * return-address signing, so arm64 has no PAC bits to strip (the
 * xpaclri GCC put after __builtin_return_address was a no-op here), and
 * the site equals the walk's frame that heapprof matches it against. */
static __attribute__((noinline)) bool heap_sample(const void *p, size_t size, unsigned hops)
{
    const uintptr_t *rec = __builtin_frame_address(0);
    for (unsigned i = 0; i <= hops; i++)
        rec = (const uintptr_t *)rec[0];
    return heapprof_sample(p, size, rec[1]);
}

/* Inlined into kmalloc and kzalloc: a call between them and this would
 * cost every allocation a frame, a call and a return (7 instructions on
 * x86-64), more than heap profiling's own countdown; and heap_sample
 * counts on being called from the allocator itself. */
static inline __attribute__((always_inline)) void *heap_alloc(size_t size)
{
    void *p, *corrupt = NULL;

    /* So that size + header cannot wrap in large_alloc. */
    if (size > SIZE_MAX / 2)
        return NULL;
    unsigned long f = spin_lock(&heap_lock);
    p = size <= MAX_SMALL ? small_alloc(size, &corrupt) : large_alloc(size);
    if (p) {
        stats.in_use += size;
        stats.allocs++;
        if (heapprof_count(size) && heap_sample(p, size, 0))
            heap_mark_sampled(p, size);
    }
    spin_unlock(&heap_lock, f);
    if (corrupt)
        panic("kmalloc: free list of slab page %p is corrupt "
              "(use after free?)", corrupt);
    return p;
}

void *kmalloc(size_t size)
{
    return heap_alloc(size);
}

void *kzalloc(size_t size)
{
    void *p = heap_alloc(size);
    if (p)
        memset(p, 0, size);
    return p;
}

/* Why kfree refused a pointer, so that panic can run after the lock is
 * dropped: panic must not find the heap locked (its own reporting, or a
 * host test that survives panic, may come back to the heap). */
enum kfree_err { KF_OK, KF_FOREIGN, KF_MISALIGNED, KF_DOUBLE };

static enum kfree_err small_free(struct slab *s, void *ptr)
{
    if (s->cls >= NCLASSES)
        return KF_FOREIGN;                /* magic matched by chance */
    struct heap_class *hc = &classes[s->cls];
    size_t sz = class_size(s->cls);
    uintptr_t off = (uintptr_t)ptr - (uintptr_t)s;

    if (off < s->first || (off - s->first) % sz)
        return KF_MISALIGNED;
    unsigned i = (unsigned)((off - s->first) / sz);
    if (i >= s->nslots)
        return KF_MISALIGNED;
    if (s->req[i] == 0)
        return KF_DOUBLE;

    if (s->req[i] & REQ_SAMPLED)
        heapprof_retire(ptr);
    stats.in_use -= (s->req[i] & REQ_SIZE) - 1u;
    s->req[i] = 0;
    *(uint16_t *)ptr = s->free_head;
    s->free_head = (uint16_t)i;
    if (s->nfree++ == 0)
        list_push_front(hc, s);           /* it has room again */
    if (s->nfree == s->nslots) {
        if (hc->nempty >= 1) {
            /* One empty page per class is enough; give this one back. */
            list_remove(hc, s);
            s->magic = 0;                 /* a stale pointer now reads foreign */
            pmm_free(s, 1);
            stats.pages--;
        } else {
            hc->nempty++;
            list_remove(hc, s);
            list_push_back(hc, s);
        }
    }
    return KF_OK;
}

static enum kfree_err large_free(struct large *l, void *ptr)
{
    if (ptr != (void *)(l + 1))
        return KF_MISALIGNED;
    size_t npages = l->npages;
    if (l->sampled)
        heapprof_retire(ptr);
    stats.in_use -= l->req;
    stats.pages -= npages;
    /* Clear the magic first: a second kfree of this pointer then finds no
     * heap header and panics as foreign. If the page has meanwhile become
     * a slab page, the stale pointer (page + 32) still cannot name a slot,
     * since every class's slot 0 starts at 48 or beyond, so it panics as
     * an interior pointer instead of freeing someone else's object. */
    l->magic = 0;
    pmm_free(l, npages);
    return KF_OK;
}

void kfree(void *ptr)
{
    if (!ptr)
        return;
    void *page = page_of(ptr);
    enum kfree_err err;

    /* Reading the page header is only safe because every heap pointer
     * lies in the direct map. A wild pointer into unmapped space faults
     * here; that is the limit of "detectable cheaply". */
    unsigned long f = spin_lock(&heap_lock);
    uint32_t magic = *(uint32_t *)page;
    if (magic == SLAB_MAGIC)
        err = small_free(page, ptr);
    else if (magic == LARGE_MAGIC)
        err = large_free(page, ptr);
    else
        err = KF_FOREIGN;
    if (err == KF_OK)
        stats.frees++;
    spin_unlock(&heap_lock, f);

    switch (err) {
    case KF_OK:
        return;
    case KF_FOREIGN:
        panic("kfree: %p is not a heap pointer (no heap header at %p)",
              ptr, page);
    case KF_MISALIGNED:
        panic("kfree: %p is inside a heap block, not its start", ptr);
    case KF_DOUBLE:
        panic("kfree: double free of %p", ptr);
    }
}

uint32_t heapprof_copy_table(struct prof_record *out, uint32_t max, struct heapprof_stats *st)
{
    unsigned long f = spin_lock(&heap_lock);
    uint32_t n = heapprof_copy(out, max, st);
    spin_unlock(&heap_lock, f);
    return n;
}

void heapprof_rate_set(uint32_t rate)
{
    unsigned long f = spin_lock(&heap_lock);
    heapprof_set_rate(rate);
    spin_unlock(&heap_lock, f);
}

/* A page block's address is page-aligned, and no kmalloc block's is (a
 * header precedes each), so the two never meet in the table. */
void heapprof_pages(const void *va, size_t bytes)
{
    unsigned long f = spin_lock(&heap_lock);
    if (heapprof_count(bytes))
        heap_sample(va, bytes, 1);
    spin_unlock(&heap_lock, f);
}

void heapprof_pages_free(const void *va)
{
    unsigned long f = spin_lock(&heap_lock);
    heapprof_forget(va);
    spin_unlock(&heap_lock, f);
}

void heap_stats(struct heap_stats *st)
{
    unsigned long f = spin_lock(&heap_lock);
    *st = stats;
    spin_unlock(&heap_lock, f);
}
