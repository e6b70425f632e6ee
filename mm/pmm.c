/* mm/pmm.c: the physical page allocator: one bit per 4 KiB page of the low
 * 4 GiB (the part of RAM the boot direct map covers), first fit with a
 * roving hint. Pages come back zeroed, as direct-map addresses.
 *
 * page_alloc and page_free are pmm_alloc and pmm_free with heap
 * profiling's hooks (mm/heap.h), which take the heap's lock: never with
 * pmm_lock held, since the heap takes pmm_lock under its own. */
#include "mm/pmm.h"
#include "mm/heap.h"
#include "hal/mem.h"
#include "kernel/spinlock.h"
#include "lib/string.h"

#define NPAGES (PMM_MAX_PHYS / PAGE_SIZE)

static uint64_t used[NPAGES / 64];     /* 1 = used or not RAM */
static size_t total_pages, free_pages, hint;
static spinlock_t pmm_lock = SPINLOCK_INIT("pmm");

static bool is_used(size_t i) { return used[i / 64] >> (i % 64) & 1; }
static void set_used(size_t i) { used[i / 64] |= 1ull << (i % 64); }
static void set_free(size_t i) { used[i / 64] &= ~(1ull << (i % 64)); }

/* ram: usable regions; [res_lo, res_hi) and everything below 1 MiB stay
 * reserved (kernel image, boot data, real-mode structures). Returns the
 * number of bytes of RAM ignored above PMM_MAX_PHYS. */
uint64_t pmm_init(const uint64_t (*ram)[2], int n, uint64_t res_lo, uint64_t res_hi)
{
    uint64_t ignored = 0;
    memset(used, 0xff, sizeof used);
    for (int r = 0; r < n; r++) {
        uint64_t lo = (ram[r][0] + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
        uint64_t hi = (ram[r][0] + ram[r][1]) & ~(PAGE_SIZE - 1);
        if (hi > PMM_MAX_PHYS) {
            ignored += hi - (lo > PMM_MAX_PHYS ? lo : PMM_MAX_PHYS);
            hi = PMM_MAX_PHYS;
        }
        for (uint64_t pa = lo; pa < hi; pa += PAGE_SIZE) {
            if (pa < 0x100000 || (pa >= res_lo && pa < res_hi))
                continue;
            if (is_used(pa / PAGE_SIZE)) {
                set_free(pa / PAGE_SIZE);
                total_pages++;
            }
        }
    }
    free_pages = total_pages;
    return ignored;
}

void *pmm_alloc(size_t npages)
{
    if (npages == 0)
        return 0;
    unsigned long f = spin_lock(&pmm_lock);
    for (size_t pass = 0; pass < 2; pass++) {
        size_t start = pass ? 0 : hint, run = 0;
        size_t end = pass ? (hint + npages < NPAGES ? hint + npages : NPAGES) : NPAGES;
        for (size_t i = start; i < end; i++) {
            if (is_used(i)) {
                run = 0;
                if ((i % 64) == 0 && used[i / 64] == ~0ull)
                    i += 63;               /* skip a full word at once */
                continue;
            }
            if (++run == npages) {
                size_t first = i + 1 - npages;
                for (size_t j = first; j <= i; j++)
                    set_used(j);
                free_pages -= npages;
                hint = i + 1;
                spin_unlock(&pmm_lock, f);
                void *va = pa_to_va((uint64_t)first * PAGE_SIZE);
                memset(va, 0, npages * PAGE_SIZE);
                return va;
            }
        }
    }
    spin_unlock(&pmm_lock, f);
    return 0;
}

void pmm_free(void *va, size_t npages)
{
    size_t first = va_to_pa(va) / PAGE_SIZE;
    unsigned long f = spin_lock(&pmm_lock);
    for (size_t j = first; j < first + npages; j++)
        set_free(j);
    free_pages += npages;
    spin_unlock(&pmm_lock, f);
}

void *page_alloc(size_t npages)
{
    void *va = pmm_alloc(npages);
    if (va)
        heapprof_pages(va, npages * PAGE_SIZE);
    return va;
}

/* Retired before the pages are free: once free they may be handed out,
 * and sampled, again. */
void page_free(void *va, size_t npages)
{
    heapprof_pages_free(va);
    pmm_free(va, npages);
}

size_t pmm_total_pages(void) { return total_pages; }
size_t pmm_free_pages(void) { return free_pages; }
