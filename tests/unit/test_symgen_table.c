// LINK: tools/symgen/table.c
/* tests/unit/test_symgen_table.c: symgen's table (tools/symgen/table.c) on a
 * recorded-style nm listing. */
#include <stdlib.h>
#include "test.h"
#include "tools/symgen/table.h"

#define SAMPLE "tests/unit/data/nm_sample.txt"

static void load_file(struct sg_table *t, const char *path)
{
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    if (!f)
        return;
    symgen_read(f, t);
    fclose(f);
    symgen_finish(t);
}

static void load_text(struct sg_table *t, const char *text)
{
    FILE *f = fmemopen((void *)text, strlen(text), "r");
    CHECK(f != NULL);
    if (!f)
        return;
    symgen_read(f, t);
    fclose(f);
    symgen_finish(t);
}

/* The emitted assembly, malloc'd. */
static char *emit(const struct sg_table *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f != NULL);
    if (!f)
        return NULL;
    symgen_emit(t, f);
    fclose(f);
    return buf;
}

static const struct sg_sym *find(const struct sg_table *t, const char *name)
{
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->syms[i].name, name) == 0)
            return &t->syms[i];
    return NULL;
}

/* The part of asm after "label:\n" up to the next label, malloc'd. */
static char *section_of(const char *text, const char *label)
{
    char want[64];
    snprintf(want, sizeof want, "\n%s:\n", label);
    const char *p = strstr(text, want);
    if (!p)
        return NULL;
    p += strlen(want);
    const char *end = strstr(p, "\t.globl");
    size_t n = end ? (size_t)(end - p) : strlen(p);
    char *s = malloc(n + 1);
    memcpy(s, p, n);
    s[n] = '\0';
    return s;
}

TEST(symgen_keeps_text_in_order)
{
    struct sg_table t = { 0 };
    load_file(&t, SAMPLE);
    static const struct { uint64_t addr; const char *name; uint32_t size; } want[] = {
        { 0xffffffff80200000ull, "_start", 0x60 },          /* 3 aliases, no size */
        { 0xffffffff80200060ull, "long_mode_entry", 0x60 }, /* distance */
        { 0xffffffff802000c0ull, "kmain", 0x51 },           /* nm size wins */
        { 0xffffffff80200120ull, "console_init", 0x2f },
        { 0xffffffff80200150ull, "memcpy", 0x42 },          /* global alias */
        { 0xffffffff802001a0ull, "profiler_sample", 0x1c3 },
        { 0xffffffff80200370ull, "irq_common", 0x70 },      /* smallest local */
        { 0xffffffff802003e0ull, "arch_idle_hook", 0x19 },
        { 0xffffffff80200400ull, NULL, 0xb0 },              /* the long name */
        { 0xffffffff802004c0ull, "udp_input.cold", 0x20 },
        { 0xffffffff802004e0ull, "_etext", 0 },             /* last: 0 */
    };
    size_t nwant = sizeof want / sizeof want[0];
    CHECK_EQ(t.n, nwant);
    for (size_t i = 0; i < nwant && i < t.n; i++) {
        CHECK_EQ(t.syms[i].addr, want[i].addr);
        CHECK_EQ(t.syms[i].size, want[i].size);
        if (want[i].name)
            CHECK_STR(t.syms[i].name, want[i].name);
    }
    if (t.n > 8) {
        /* Never truncated: the long name arrives whole. */
        CHECK_EQ(strlen(t.syms[8].name), 477);
        CHECK(strncmp(t.syms[8].name, "vnet_rx_stage0_", 15) == 0);
        CHECK(strstr(t.syms[8].name, "_stage59") != NULL);
    }
    for (size_t i = 1; i < t.n; i++)
        CHECK(t.syms[i - 1].addr < t.syms[i].addr);
    symgen_free(&t);
}

TEST(symgen_drops_data_absolute_and_aliases)
{
    struct sg_table t = { 0 };
    load_file(&t, SAMPLE);
    static const char *gone[] = {
        "__percpu_size_shift", "__kernel_phys_base",   /* A */
        "__profiler_test_hook",                         /* w, no address */
        "sonde_version", "hex_digits.0",                /* R r */
        "ticks", "boot_cpu_id",                         /* D d */
        "__bss_start", "boot_stack", "cpu_table", "_end", /* B b */
        "_stext", "entry32", "__memcpy_impl", "irq_common_entry", /* aliases */
    };
    for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++)
        CHECK(find(&t, gone[i]) == NULL);
    CHECK(find(&t, "memcpy") != NULL);
    symgen_free(&t);
}

TEST(symgen_alias_choice_ignores_input_order)
{
    /* Same aliases in two orders must give the same name. */
    const char *a = "ffffffff80200000 t zeta\n"
                    "ffffffff80200000 t alpha\n"
                    "ffffffff80200000 W beta\n"
                    "ffffffff80200000 T gamma\n";
    const char *b = "ffffffff80200000 T gamma\n"
                    "ffffffff80200000 W beta\n"
                    "ffffffff80200000 t alpha\n"
                    "ffffffff80200000 t zeta\n";
    struct sg_table ta = { 0 }, tb = { 0 };
    load_text(&ta, a);
    load_text(&tb, b);
    CHECK_EQ(ta.n, 1);
    CHECK_EQ(tb.n, 1);
    if (ta.n == 1 && tb.n == 1) {
        CHECK_STR(ta.syms[0].name, "beta");   /* global beats local alpha */
        CHECK_STR(tb.syms[0].name, "beta");
    }
    char *ea = emit(&ta), *eb = emit(&tb);
    CHECK(ea && eb && strcmp(ea, eb) == 0);
    free(ea);
    free(eb);
    symgen_free(&ta);
    symgen_free(&tb);
}

TEST(symgen_sorts_unsorted_input_and_takes_alias_size)
{
    const char *in = "ffffffff80200100 T late\n"
                     "ffffffff80200000 t early_alias\n"
                     "ffffffff80200000 0000000000000010 t early_b\n"
                     "ffffffff80200000 T early\n";
    struct sg_table t = { 0 };
    load_text(&t, in);
    CHECK_EQ(t.n, 2);
    if (t.n == 2) {
        CHECK_STR(t.syms[0].name, "early");
        CHECK_EQ(t.syms[0].size, 0x10);       /* from its sized alias */
        CHECK_STR(t.syms[1].name, "late");
        CHECK_EQ(t.syms[1].size, 0);
    }
    symgen_free(&t);
}

TEST(symgen_skips_malformed_lines)
{
    const char *in = "\n"
                     "kernel.elf:\n"
                     "nm: warning: something odd\n"
                     "ffffffff80200000\n"
                     "ffffffff80200000 T\n"
                     "zzzz T not_hex\n"
                     "ffffffff80200000 00000000000000zz T bad_size\n"
                     "11111111111111111 T too_many_digits\n"
                     "ffffffff80200010 0000000000000008 T good\r\n";
    struct sg_table t = { 0 };
    load_text(&t, in);
    CHECK_EQ(t.n, 1);
    if (t.n == 1) {
        CHECK_STR(t.syms[0].name, "good");
        CHECK_EQ(t.syms[0].addr, 0xffffffff80200010ull);
        CHECK_EQ(t.syms[0].size, 8);
    }
    symgen_free(&t);
}

TEST(symgen_reads_lines_of_several_kilobytes)
{
    size_t nlen = 6000;
    char *in = malloc(nlen + 64);
    int k = sprintf(in, "ffffffff80200000 0000000000000004 T ");
    for (size_t i = 0; i < nlen; i++)
        in[k + i] = (char)('a' + i % 26);
    strcpy(in + k + nlen, "\nffffffff80200004 T next\n");
    struct sg_table t = { 0 };
    load_text(&t, in);
    CHECK_EQ(t.n, 2);
    if (t.n == 2) {
        CHECK_EQ(strlen(t.syms[0].name), nlen);
        CHECK(memcmp(t.syms[0].name, in + k, nlen) == 0);
    }
    symgen_free(&t);
    free(in);
}

TEST(symgen_emits_the_arrays)
{
    struct sg_table t = { 0 };
    load_file(&t, SAMPLE);
    char *text = emit(&t);
    CHECK(text != NULL);
    if (!text) {
        symgen_free(&t);
        return;
    }
    CHECK(strstr(text, ".section .rodata.symtab, \"a\"") != NULL);
    CHECK(strstr(text, "\t.globl symtab_count\n") != NULL);

    char *count = section_of(text, "symtab_count");
    CHECK(count && strcmp(count, "\t.quad 11\n\t.balign 8\n") == 0);

    /* Addresses: one .quad per kept symbol, in order. */
    char *addrs = section_of(text, "symtab_addrs");
    CHECK(addrs != NULL);
    char line[64];
    const char *p = addrs;
    for (size_t i = 0; addrs && i < t.n; i++) {
        snprintf(line, sizeof line, "\t.quad 0x%016llx\n",
                 (unsigned long long)t.syms[i].addr);
        CHECK(strncmp(p, line, strlen(line)) == 0);
        p += strlen(line);
    }
    CHECK(addrs && strncmp(addrs, "\t.quad 0xffffffff80200000\n", 26) == 0);

    char *sizes = section_of(text, "symtab_sizes");
    CHECK(sizes && strncmp(sizes, "\t.long 0x60\n\t.long 0x60\n\t.long 0x51\n", 36) == 0);
    CHECK(sizes && strstr(sizes, "\t.long 0x1c3\n\t.long 0x70\n") != NULL);

    /* Offsets: _start\0 is 7 bytes, long_mode_entry\0 16, kmain\0 6. */
    char *offs = section_of(text, "symtab_name_offs");
    CHECK(offs && strncmp(offs, "\t.long 0\n\t.long 7\n\t.long 23\n\t.long 29\n", 38) == 0);

    char *names = section_of(text, "symtab_names");
    CHECK(names && strncmp(names, "\t.asciz \"_start\"\n\t.asciz \"long_mode_entry\"\n", 43) == 0);
    CHECK(names && strstr(names, "\t.asciz \"udp_input.cold\"\n") != NULL);
    CHECK(strstr(text, "memcpy_impl") == NULL);
    CHECK(strstr(text, "boot_stack") == NULL);

    char *img = section_of(text, "symtab_kernel");
    CHECK(img && strncmp(img, "\t.quad 11\n\t.quad symtab_addrs\n", 30) == 0);

    free(count);
    free(addrs);
    free(sizes);
    free(offs);
    free(names);
    free(img);
    free(text);
    symgen_free(&t);
}

TEST(symgen_escapes_odd_names)
{
    struct sg_table t = { 0 };
    load_text(&t, "ffffffff80200000 T we\"ird\\name\n");
    char *text = emit(&t);
    CHECK(text && strstr(text, "\t.asciz \"we\\042ird\\134name\"\n") != NULL);
    free(text);
    symgen_free(&t);
}

TEST(symgen_empty_input_gives_empty_table)
{
    struct sg_table t = { 0 };
    load_text(&t, "");
    CHECK_EQ(t.n, 0);
    char *text = emit(&t);
    CHECK(text != NULL);
    if (text) {
        char *count = section_of(text, "symtab_count");
        CHECK(count && strncmp(count, "\t.quad 0\n", 9) == 0);
        static const char *labels[] = { "symtab_addrs", "symtab_sizes",
                                        "symtab_name_offs", "symtab_names",
                                        "symtab_kernel" };
        for (size_t i = 0; i < 5; i++) {
            char want[64];
            snprintf(want, sizeof want, "\n%s:\n", labels[i]);
            CHECK(strstr(text, want) != NULL);
        }
        CHECK(strstr(text, "\t.long") == NULL);
        free(count);
    }
    free(text);
    symgen_free(&t);
}

TEST(symgen_output_is_deterministic)
{
    struct sg_table a = { 0 }, b = { 0 };
    load_file(&a, SAMPLE);
    load_file(&b, SAMPLE);
    char *ea = emit(&a), *eb = emit(&b);
    CHECK(ea && eb && strcmp(ea, eb) == 0);
    free(ea);
    free(eb);
    symgen_free(&a);
    symgen_free(&b);
}
