/* arch/x86_64/bootinfo.c: the PVH start info or the Multiboot2 tags. */
#include "arch/x86_64/bootinfo.h"
#include "arch/x86_64/layout.h"
#include "kernel/bootparams.h"
#include "lib/string.h"

struct boot_info boot_info;

struct hvm_start_info {
    uint32_t magic, version, flags, nr_modules;
    uint64_t modlist_paddr, cmdline_paddr, rsdp_paddr, memmap_paddr;
    uint32_t memmap_entries, reserved;
};
struct hvm_memmap_entry { uint64_t addr, size; uint32_t type, reserved; };
_Static_assert(sizeof(struct hvm_start_info) == 56, "PVH start info layout");

#define E820_RAM 1

static void add_ram(uint64_t base, uint64_t len)
{
    if (boot_info.nram < BOOT_MAX_REGIONS)
        boot_info.ram[boot_info.nram++] = (struct boot_region){ base, len };
}

/* The loader's text is wiped of ushkey='s value once copied: boot_info's
 * copy is then the only one, and boot_params_parse wipes that. The copy
 * keeps whole words only, and a key past its end is refused, not lost
 * (kernel/bootparams.c). */
static void copy_cmdline(char *s)
{
    if (s)
        boot_params_copy(boot_info.cmdline, sizeof boot_info.cmdline, s);
}

static const char *parse_pvh(uint32_t pa)
{
    const struct hvm_start_info *si = phys_to_virt(pa);
    if (si->magic != 0x336ec578)
        return "PVH start info has a bad magic";
    if (si->cmdline_paddr)
        copy_cmdline(phys_to_virt(si->cmdline_paddr));
    boot_info.rsdp_phys = si->rsdp_paddr;
    if (si->version < 1 || !si->memmap_paddr)
        return "PVH start info has no memory map (version 0)";
    const struct hvm_memmap_entry *e = phys_to_virt(si->memmap_paddr);
    for (uint32_t i = 0; i < si->memmap_entries; i++)
        if (e[i].type == E820_RAM)
            add_ram(e[i].addr, e[i].size);
    return 0;
}

static const char *parse_mb2(uint32_t pa)
{
    const uint8_t *p = phys_to_virt(pa);
    uint32_t total = *(const uint32_t *)p;
    for (uint32_t off = 8; off + 8 <= total;) {
        uint32_t type = *(const uint32_t *)(p + off);
        uint32_t size = *(const uint32_t *)(p + off + 4);
        if (type == 0 || size < 8)
            break;
        const uint8_t *body = p + off + 8;
        if (type == 1) {
            copy_cmdline((char *)body);
        } else if (type == 6) {
            uint32_t esz = *(const uint32_t *)body;
            for (uint32_t e = 16; esz >= 24 && e + esz <= size; e += esz) {
                const uint8_t *ent = p + off + e;
                if (*(const uint32_t *)(ent + 16) == E820_RAM)
                    add_ram(*(const uint64_t *)ent, *(const uint64_t *)(ent + 8));
            }
        } else if ((type == 14 || type == 15) && !boot_info.has_rsdp_copy) {
            uint32_t n = size - 8 < sizeof boot_info.rsdp_copy ? size - 8 : sizeof boot_info.rsdp_copy;
            memcpy(boot_info.rsdp_copy, body, n);
            boot_info.has_rsdp_copy = 1;
        }
        off += (size + 7) & ~7u;
    }
    return boot_info.nram ? 0 : "Multiboot2 info has no memory map";
}

const char *bootinfo_parse(int proto, uint32_t info_phys)
{
    boot_info.proto = proto;
    if (proto == BOOT_PVH)
        return parse_pvh(info_phys);
    if (proto == BOOT_MB2)
        return parse_mb2(info_phys);
    return "unknown boot protocol (neither PVH nor Multiboot2)";
}
