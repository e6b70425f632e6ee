/* tools/symgen/table.h: the symbol table symgen builds from nm's output
 * (tools/symgen/table.c says how). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct sg_sym {
    uint64_t addr;
    uint64_t nm_size;       /* valid when has_size */
    bool has_size;
    char type;              /* nm's type letter */
    char *name;             /* owned, never truncated */
    size_t seq;             /* input order, to make the sort stable */
    uint32_t size;          /* final size, set by symgen_finish */
};

struct sg_table {
    struct sg_sym *syms;
    size_t n, cap;
};

/* Add every symbol line of nm's output in (others are skipped). */
void symgen_read(FILE *in, struct sg_table *t);
/* Keep text symbols, sort, fold aliases, set sizes. */
void symgen_finish(struct sg_table *t);
/* The assembler source of the finished table. */
void symgen_emit(const struct sg_table *t, FILE *out);
void symgen_free(struct sg_table *t);
