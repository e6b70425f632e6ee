/* tools/pipeline/sym.h: naming kernel addresses with elfutils' libdw.
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
#include "tools/pipeline/model.h"

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
