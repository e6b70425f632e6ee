/* tools/symgen/table.c: turn `nm -n -S kernel.elf` into the kernel's symbol
 * table (the logic of tools/symgen, whose main() is tools/symgen.c).
 *
 * Reads nm's output on stdin and writes GNU assembler source on stdout that
 * defines, in section .rodata.symtab, the arrays struct symtab_image
 * (kernel/symtab.h) points at:
 *
 *   symtab_count      .quad N
 *   symtab_addrs      N x .quad   start addresses, strictly ascending
 *   symtab_sizes      N x .long   bytes covered by each symbol
 *   symtab_name_offs  N x .long   offset of each name in symtab_names
 *   symtab_names      the names, each NUL-terminated
 *   symtab_kernel     a struct symtab_image pointing at the above, so the
 *                     kernel needs no code to run before its first lookup
 *
 * Only text symbols are kept (nm types T t W w); data, bss, rodata and
 * absolute symbols are dropped. Aliases (several names at one address) are
 * folded into one entry, so a lookup is one binary search with no ties:
 * a global (uppercase type) name wins over a local one, then the
 * lexicographically smallest name.
 *
 * A symbol's size is nm's size column when nm printed one (or an alias's,
 * when the chosen name has none), else the distance to the next kept
 * symbol, and 0 for the last.
 *
 * The output must be the same bytes for the same input: the build links
 * the kernel three times and fails unless the tables of pass 2 and pass 3
 * compare equal (see the Makefile). So nothing here depends on time, the
 * environment or qsort's tie order.
 *
 * Lines that do not parse as "ADDR [SIZE] TYPE NAME" are skipped: nm prints
 * undefined weak symbols ("                 w name") with no address, and
 * those have no place in the table anyway.
 *
 * tests/unit/test_symgen_table.c links this file and calls it directly. */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/symgen/table.h"

static void *sg_xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (!p) {
        fprintf(stderr, "symgen: out of memory (%zu bytes)\n", n);
        exit(1);
    }
    return p;
}

static bool sg_is_text_type(char t)
{
    return t == 'T' || t == 't' || t == 'W' || t == 'w';
}

static bool sg_is_global_type(char t)
{
    return t >= 'A' && t <= 'Z';
}

/* Parse one hex token of 1..16 digits at *s, advancing past it. */
static bool sg_parse_hex(const char **s, uint64_t *out)
{
    const char *p = *s;
    uint64_t v = 0;
    int digits = 0;
    for (; isxdigit((unsigned char)*p); p++, digits++) {
        if (digits == 16)
            return false;
        int d = isdigit((unsigned char)*p) ? *p - '0'
                                           : tolower((unsigned char)*p) - 'a' + 10;
        v = v << 4 | (uint64_t)d;
    }
    if (digits == 0)
        return false;
    *s = p;
    *out = v;
    return true;
}

static const char *sg_skip_blanks(const char *p)
{
    while (*p == ' ' || *p == '\t')
        p++;
    return p;
}

/* One line of `nm -n -S`: "ADDR TYPE NAME" or "ADDR SIZE TYPE NAME".
 * Returns true and fills *out (name malloc'd) only for a text symbol;
 * false for any other symbol and for lines that do not parse. */
static bool symgen_parse_line(const char *line, struct sg_sym *out)
{
    const char *p = sg_skip_blanks(line);
    uint64_t addr, size = 0;
    bool has_size = false;

    if (!sg_parse_hex(&p, &addr) || (*p != ' ' && *p != '\t'))
        return false;
    p = sg_skip_blanks(p);

    /* A one-letter token followed by a blank is the type; anything longer
     * is nm's size column (always 16 digits with -S on 64-bit). */
    if (!(p[0] && (p[1] == ' ' || p[1] == '\t'))) {
        if (!sg_parse_hex(&p, &size) || (*p != ' ' && *p != '\t'))
            return false;
        has_size = true;
        p = sg_skip_blanks(p);
        if (!(p[0] && (p[1] == ' ' || p[1] == '\t')))
            return false;
    }
    char type = p[0];
    p = sg_skip_blanks(p + 1);

    size_t len = strlen(p);
    while (len > 0 && (p[len - 1] == '\n' || p[len - 1] == '\r' ||
                       p[len - 1] == ' ' || p[len - 1] == '\t'))
        len--;
    if (len == 0 || !sg_is_text_type(type))
        return false;

    out->addr = addr;
    out->nm_size = size;
    out->has_size = has_size;
    out->type = type;
    out->name = sg_xrealloc(NULL, len + 1);
    memcpy(out->name, p, len);
    out->name[len] = '\0';
    out->seq = 0;
    out->size = 0;
    return true;
}

static void symgen_add(struct sg_table *t, const struct sg_sym *s)
{
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 256;
        t->syms = sg_xrealloc(t->syms, t->cap * sizeof *t->syms);
    }
    t->syms[t->n] = *s;
    t->syms[t->n].seq = t->n;
    t->n++;
}

/* Read every line of in (any length: getline grows the buffer). */
void symgen_read(FILE *in, struct sg_table *t)
{
    char *line = NULL;
    size_t cap = 0;
    struct sg_sym s;
    while (getline(&line, &cap, in) != -1)
        if (symgen_parse_line(line, &s))
            symgen_add(t, &s);
    free(line);
}

static int sg_cmp_addr(const void *a, const void *b)
{
    const struct sg_sym *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    /* Equal addresses keep input order: qsort is not stable by itself. */
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Does a beat b as the one name shown for their shared address? */
static bool sg_better_alias(const struct sg_sym *a, const struct sg_sym *b)
{
    bool ga = sg_is_global_type(a->type), gb = sg_is_global_type(b->type);
    if (ga != gb)
        return ga;
    return strcmp(a->name, b->name) < 0;
}

static uint32_t sg_clamp32(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* Sort by address, fold aliases into one entry each, and set sizes. */
void symgen_finish(struct sg_table *t)
{
    if (t->n > 1)
        qsort(t->syms, t->n, sizeof *t->syms, sg_cmp_addr);

    size_t out = 0;
    for (size_t i = 0; i < t->n;) {
        size_t j = i, best = i;
        bool any_size = false;
        uint64_t alias_size = 0;
        for (; j < t->n && t->syms[j].addr == t->syms[i].addr; j++) {
            if (sg_better_alias(&t->syms[j], &t->syms[best]))
                best = j;
            if (t->syms[j].has_size && t->syms[j].nm_size > alias_size) {
                alias_size = t->syms[j].nm_size;
                any_size = true;
            }
        }
        struct sg_sym keep = t->syms[best];
        if (!keep.has_size && any_size) {
            keep.nm_size = alias_size;
            keep.has_size = true;
        }
        for (size_t k = i; k < j; k++)
            if (k != best)
                free(t->syms[k].name);
        t->syms[out++] = keep;
        i = j;
    }
    t->n = out;

    for (size_t i = 0; i < t->n; i++) {
        struct sg_sym *s = &t->syms[i];
        if (s->has_size)
            s->size = sg_clamp32(s->nm_size);
        else if (i + 1 < t->n)
            s->size = sg_clamp32(t->syms[i + 1].addr - s->addr);
        else
            s->size = 0;
    }
}

static void sg_label(FILE *out, const char *name)
{
    fprintf(out, "\t.globl %s\n\t.type %s, @object\n%s:\n", name, name, name);
}

/* A name as the body of an .ascii string: only printable ASCII passes
 * through; quotes, backslashes and anything else become octal escapes. */
static void sg_emit_string(FILE *out, const char *s)
{
    fputs("\t.asciz \"", out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\' || *p < 0x20 || *p >= 0x7f)
            fprintf(out, "\\%03o", *p);
        else
            fputc(*p, out);
    }
    fputs("\"\n", out);
}

void symgen_emit(const struct sg_table *t, FILE *out)
{
    fprintf(out, "/* Generated by tools/symgen from nm -n -S: %zu text symbols."
                 " Do not edit. */\n", t->n);
    fputs("\t.section .rodata.symtab, \"a\"\n\t.balign 8\n", out);

    sg_label(out, "symtab_count");
    fprintf(out, "\t.quad %zu\n", t->n);

    fputs("\t.balign 8\n", out);
    sg_label(out, "symtab_addrs");
    for (size_t i = 0; i < t->n; i++)
        fprintf(out, "\t.quad 0x%016llx\n", (unsigned long long)t->syms[i].addr);

    fputs("\t.balign 8\n", out);
    sg_label(out, "symtab_sizes");
    for (size_t i = 0; i < t->n; i++)
        fprintf(out, "\t.long 0x%x\n", (unsigned)t->syms[i].size);

    fputs("\t.balign 8\n", out);
    sg_label(out, "symtab_name_offs");
    uint64_t off = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (off > UINT32_MAX) {
            fprintf(stderr, "symgen: names exceed 4 GiB at symbol %zu\n", i);
            exit(1);
        }
        fprintf(out, "\t.long %llu\n", (unsigned long long)off);
        off += strlen(t->syms[i].name) + 1;
    }

    sg_label(out, "symtab_names");
    for (size_t i = 0; i < t->n; i++)
        sg_emit_string(out, t->syms[i].name);
    if (t->n == 0)
        fputs("\t.byte 0\n", out);   /* keep the label on a real byte */

    /* struct symtab_image { u64 count; 4 pointers }: the layout
     * kernel/symtab.c checks with _Static_assert. */
    fputs("\t.balign 8\n", out);
    sg_label(out, "symtab_kernel");
    fprintf(out, "\t.quad %zu\n", t->n);
    fputs("\t.quad symtab_addrs\n\t.quad symtab_sizes\n"
          "\t.quad symtab_name_offs\n\t.quad symtab_names\n", out);
    fputs("\t.size symtab_kernel, 40\n", out);
}

void symgen_free(struct sg_table *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->syms[i].name);
    free(t->syms);
    t->syms = NULL;
    t->n = t->cap = 0;
}
