/* arch/x86_64/acpi.c: find the RSDP, walk the RSDT/XSDT to the MADT. */
#include "arch/x86_64/acpi.h"
#include "arch/x86_64/bootinfo.h"
#include "arch/x86_64/layout.h"
#include "lib/string.h"

struct madt_info madt;

struct sdt_header {
    char sig[4];
    uint32_t length;
    uint8_t revision, checksum;
    char oem[6], oem_table[8];
    uint32_t oem_rev, creator, creator_rev;
} __attribute__((packed));
_Static_assert(sizeof(struct sdt_header) == 36, "ACPI SDT header");

static int sum_ok(const void *p, size_t n)
{
    uint8_t s = 0;
    for (size_t i = 0; i < n; i++)
        s += ((const uint8_t *)p)[i];
    return s == 0;
}

static const uint8_t *scan_rsdp(uint64_t lo, uint64_t hi)
{
    for (uint64_t pa = lo; pa + 20 <= hi; pa += 16) {
        const uint8_t *p = phys_to_virt(pa);
        if (memcmp(p, "RSD PTR ", 8) == 0 && sum_ok(p, 20))
            return p;
    }
    return 0;
}

static const uint8_t *find_rsdp(void)
{
    if (boot_info.rsdp_phys)
        return phys_to_virt(boot_info.rsdp_phys);
    if (boot_info.has_rsdp_copy)
        return boot_info.rsdp_copy;
    uint64_t ebda = (uint64_t)*(const uint16_t *)phys_to_virt(0x40e) << 4;
    const uint8_t *r = ebda ? scan_rsdp(ebda, ebda + 1024) : 0;
    return r ? r : scan_rsdp(0xe0000, 0x100000);
}

static void parse_madt(const struct sdt_header *h)
{
    const uint8_t *p = (const uint8_t *)h;
    madt.lapic_phys = *(const uint32_t *)(p + 36);
    for (uint32_t off = 44; off + 2 <= h->length;) {
        uint8_t type = p[off], len = p[off + 1];
        if (len < 2 || off + len > h->length)
            break;
        const uint8_t *e = p + off;
        if (type == 0 && len >= 8) {                  /* processor local APIC */
            uint32_t flags = *(const uint32_t *)(e + 4);
            if (flags & 3) {                          /* enabled or online-capable */
                if (madt.ncpus < MAX_CPUS)
                    madt.lapic_ids[madt.ncpus++] = e[3];
                else
                    madt.cpus_skipped++;
            }
        } else if (type == 1 && len >= 12 && !madt.ioapic_phys) {
            madt.ioapic_phys = *(const uint32_t *)(e + 4);
            madt.ioapic_gsi_base = *(const uint32_t *)(e + 8);
        } else if (type == 2 && len >= 10 && madt.niso < 16) {
            madt.iso[madt.niso].irq = e[3];
            madt.iso[madt.niso].gsi = *(const uint32_t *)(e + 4);
            madt.iso[madt.niso].flags = *(const uint16_t *)(e + 8);
            madt.niso++;
        } else if (type == 5 && len >= 12) {
            madt.lapic_phys = *(const uint64_t *)(e + 4);
        }
        off += len;
    }
}

const char *acpi_init(void)
{
    const uint8_t *rsdp = find_rsdp();
    if (!rsdp)
        return "no RSDP found";
    uint8_t rev = rsdp[15];
    uint64_t root = rev >= 2 ? *(const uint64_t *)(rsdp + 24) : *(const uint32_t *)(rsdp + 16);
    unsigned esz = rev >= 2 ? 8 : 4;
    if (!root)
        return "RSDP names no root table";
    const struct sdt_header *rh = phys_to_virt(root);
    if (!sum_ok(rh, rh->length))
        return "root table checksum is bad";
    unsigned n = (rh->length - sizeof *rh) / esz;
    const uint8_t *ents = (const uint8_t *)rh + sizeof *rh;
    for (unsigned i = 0; i < n; i++) {
        uint64_t pa = esz == 8 ? *(const uint64_t *)(ents + i * 8) : *(const uint32_t *)(ents + i * 4);
        const struct sdt_header *h = phys_to_virt(pa);
        if (memcmp(h->sig, "APIC", 4) == 0 && sum_ok(h, h->length)) {
            parse_madt(h);
            return madt.ncpus ? 0 : "MADT lists no CPU";
        }
    }
    return "no MADT";
}
