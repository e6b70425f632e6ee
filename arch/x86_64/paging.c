/* arch/x86_64/paging.c: after boot, page 0 is unmapped, so a null pointer
 * faults instead of reading the real-mode vector table. The first 2 MiB of
 * the identity map become 4 KiB pages for that. */
#include "arch/x86_64/layout.h"
#include "arch/x86_64/x86.h"
#include "kernel/panic.h"
#include "mm/pmm.h"

void paging_init(void)
{
    uint64_t *pml4 = phys_to_virt(read_cr3() & ~0xfffull);
    uint64_t *pdpt = phys_to_virt(pml4[0] & ~0xfffull);
    uint64_t *pd = phys_to_virt(pdpt[0] & ~0xfffull);
    uint64_t *pt = page_alloc(1);
    if (!pt)
        panic("paging: no page for the low page table");
    for (int i = 0; i < 512; i++)
        pt[i] = (uint64_t)i * 4096 | 0x3;
    pt[0] = 0;
    /* The direct map shares this PD: its 0xffff800000000000 page 0 goes too. */
    pd[0] = virt_to_phys(pt) | 0x3;
    write_cr3(read_cr3());
}
