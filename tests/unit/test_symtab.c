// LINK: kernel/symtab.c lib/printf.c lib/parse.c
/* tests/unit/test_symtab.c: lookups and formatting over a small
 * hand-built table shaped like symgen's output (`sym`, the command:
 * test_cmd_debug.c). */
#include "test.h"
#include "kernel/symtab.h"

/* kernel/symtab.c's host-test text range (not in the header). */
extern uintptr_t symtab_test_text_lo, symtab_test_text_hi;

/* kmain [0x1000,0x1040), gap, idle [0x1080,0x1090), then two size-0
 * labels: entry (runs to the next symbol) and the last one, tail. */
static const uint64_t t_addrs[] = { 0x1000, 0x1080, 0x10a0, 0x1100 };
static const uint32_t t_sizes[] = { 0x40, 0x10, 0, 0 };
static const uint32_t t_offs[] = { 0, 6, 11, 17 };
static const char t_names[] = "kmain\0idle\0entry\0tail";
static const struct symtab_image t_image = {
    4, t_addrs, t_sizes, t_offs, t_names,
};
static const struct symtab_image t_empty = { 0, t_addrs, t_sizes, t_offs, t_names };

static bool hit_is(uintptr_t addr, const char *name, uintptr_t start, size_t off)
{
    struct sym_hit h;
    if (!symtab_lookup(addr, &h))
        return false;
    return strcmp(h.name, name) == 0 && h.start == start && h.offset == off &&
           h.offset == addr - h.start;
}

TEST(symtab_lookup_inside_functions)
{
    symtab_active = &t_image;
    CHECK(hit_is(0x1000, "kmain", 0x1000, 0));        /* first byte */
    CHECK(hit_is(0x101a, "kmain", 0x1000, 0x1a));     /* middle */
    CHECK(hit_is(0x103f, "kmain", 0x1000, 0x3f));     /* last byte */
    CHECK(hit_is(0x1080, "idle", 0x1080, 0));
    CHECK(hit_is(0x108f, "idle", 0x1080, 0xf));
    struct sym_hit h;
    CHECK(symtab_lookup(0x1001, &h));
    CHECK_EQ(h.size, 0x40);
    CHECK(symtab_lookup(0x1001, NULL));               /* hit is optional */
    symtab_active = NULL;
}

TEST(symtab_lookup_misses)
{
    symtab_active = &t_image;
    struct sym_hit h;
    CHECK(!symtab_lookup(0x1040, &h));                /* one past kmain */
    CHECK(!symtab_lookup(0x107f, &h));                /* in the gap */
    CHECK(!symtab_lookup(0x1090, &h));                /* one past idle */
    CHECK(!symtab_lookup(0xfff, &h));                 /* below the first */
    CHECK(!symtab_lookup(0, &h));
    CHECK(!symtab_lookup(0x1101, &h));                /* above the last */
    CHECK(!symtab_lookup(UINTPTR_MAX, &h));
    symtab_active = NULL;
}

TEST(symtab_size0_runs_to_next_symbol)
{
    symtab_active = &t_image;
    CHECK(hit_is(0x10a0, "entry", 0x10a0, 0));
    CHECK(hit_is(0x10ff, "entry", 0x10a0, 0x5f));
    struct sym_hit h;
    CHECK(symtab_lookup(0x10c0, &h));
    CHECK_EQ(h.size, 0x60);
    /* The last size-0 symbol names only its own address. */
    CHECK(hit_is(0x1100, "tail", 0x1100, 0));
    CHECK(!symtab_lookup(0x1104, &h));
    symtab_active = NULL;
}

TEST(symtab_no_table)
{
    struct sym_hit h;
    symtab_active = NULL;
    CHECK(!symtab_lookup(0x1000, &h));
    CHECK_EQ(symtab_find("kmain"), 0);
    symtab_active = &t_empty;
    CHECK(!symtab_lookup(0x1000, &h));
    CHECK_EQ(symtab_find("kmain"), 0);
    symtab_active = NULL;
}

TEST(symtab_find_exact_names)
{
    symtab_active = &t_image;
    CHECK_EQ(symtab_find("kmain"), 0x1000);
    CHECK_EQ(symtab_find("idle"), 0x1080);
    CHECK_EQ(symtab_find("tail"), 0x1100);
    CHECK_EQ(symtab_find("kmai"), 0);                 /* no prefix match */
    CHECK_EQ(symtab_find("kmainx"), 0);
    CHECK_EQ(symtab_find(""), 0);
    CHECK_EQ(symtab_find(NULL), 0);
    symtab_active = NULL;
}

TEST(symtab_format_strings)
{
    char buf[64];
    symtab_active = &t_image;
    int n = symtab_format(0x101a, buf, sizeof buf);
    CHECK_STR(buf, "kmain+0x1a");
    CHECK_EQ(n, 10);
    symtab_format(0x1000, buf, sizeof buf);
    CHECK_STR(buf, "kmain+0x0");
    symtab_format(0x10ab, buf, sizeof buf);
    CHECK_STR(buf, "entry+0xb");
    n = symtab_format(0xffffffff80201234ull, buf, sizeof buf);
    CHECK_STR(buf, "0xffffffff80201234");
    CHECK_EQ(n, 18);
    symtab_format(0x1040, buf, sizeof buf);
    CHECK_STR(buf, "0x0000000000001040");
    /* Bounded: truncated and terminated, full length reported. */
    char small[6];
    memset(small, 'X', sizeof small);
    n = symtab_format(0x101a, small, sizeof small);
    CHECK_STR(small, "kmain");
    CHECK_EQ(n, 10);
    symtab_active = NULL;
}

TEST(symtab_text_contains_uses_the_range)
{
    symtab_test_text_lo = 0x1000;
    symtab_test_text_hi = 0x9000;
    CHECK(text_contains(0x1000));
    CHECK(text_contains(0x8fff));
    CHECK(!text_contains(0x9000));
    CHECK(!text_contains(0xfff));
    symtab_test_text_lo = symtab_test_text_hi = 0;
    CHECK(!text_contains(0x1000));
}
