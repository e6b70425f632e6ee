/* tools/model/sym.h: naming kernel addresses with elfutils' libdw.
 *
 * The kernel is linked at a fixed address (not PIE), so a sampled address
 * is an address in the ELF as it stands. With DWARF, an address becomes
 * frames: the inlined calls at it, innermost first, each with file:line,
 * the way pprof and perf expand them. Without DWARF, the ELF symbol table
 * gives one frame per address and no file:line.
 *
 * Host pipeline: prefix sp_. */
#pragma once
#include <stddef.h>
#include "tools/model/model.h"

struct sp_elf;

/* Opens the ELF and fills the map's build id, range and DWARF flag.
 * NULL with err (naming the file and why) on failure. */
struct sp_elf *sp_elf_open(struct sp_profile *p, unsigned map,
                               char *err, size_t errcap);
void sp_elf_close(struct sp_elf *e);

/* Names every location of the map (see model.h: pl_sym, pl_frames). */
void sp_elf_symbolize(struct sp_profile *p, unsigned map, struct sp_elf *e);
/* Names one location of e's map, unless it has been named. */
void sp_elf_name(struct sp_profile *p, struct sp_elf *e, struct sp_loc *l);

/* The ELFs of several kernels, each opened once however many kernels
 * share it: kernel k's addresses are named through map kmap[k] of p
 * (live views, `top` and `serve`, name as they go). */
#define SP_ELFSET_MAX     16            /* distinct ELFs */
#define SP_ELFSET_KERNELS 4096          /* kernels, as many as serve takes */
struct sp_elfset {
    struct sp_profile p;              /* its maps; `top` adds locations */
    struct sp_elf *elfs[SP_ELFSET_MAX];   /* by map */
    unsigned kmap[SP_ELFSET_KERNELS];     /* kernel -> map */
};
void sp_elfset_init(struct sp_elfset *s);
/* Gives kernel k (< SP_ELFSET_KERNELS) the ELF at path, opening it unless
 * an earlier kernel did. -1 when it cannot be opened, or would be the
 * 17th distinct ELF, said on stderr after prog; a warning when it has no
 * DWARF. */
int sp_elfset_add(struct sp_elfset *s, unsigned k, const char *path, const char *prog);
void sp_elfset_free(struct sp_elfset *s);
/* Names every location of map in p (a profile whose maps are s->p's, in
 * order) with that map's ELF: ctx is s. */
void sp_elfset_symbolize(void *ctx, struct sp_profile *p, unsigned map);
