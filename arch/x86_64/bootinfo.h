/* arch/x86_64/bootinfo.h: what the boot loader told us, copied into the
 * kernel before anything can overwrite it. */
#pragma once
#include <stdint.h>

#define BOOT_PVH 1
#define BOOT_MB2 2
#define BOOT_MAX_REGIONS 64

struct boot_region { uint64_t base, len; };

struct boot_info {
    int proto;                     /* BOOT_PVH, BOOT_MB2, or 0 */
    char cmdline[512];
    struct boot_region ram[BOOT_MAX_REGIONS];   /* usable RAM */
    int nram;
    uint64_t rsdp_phys;            /* 0 if the loader gave none */
    uint8_t rsdp_copy[36];         /* Multiboot2 hands a copy, not an address */
    int has_rsdp_copy;
};

extern struct boot_info boot_info;
const char *bootinfo_parse(int proto, uint32_t info_phys);   /* NULL or an error */
