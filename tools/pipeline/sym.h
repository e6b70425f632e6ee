/* tools/pipeline/sym.h: naming kernel addresses with elfutils' libdw.
 *
 * The kernel is linked at a fixed address (not PIE), so a sampled address
 * is an address in the ELF as it stands. With DWARF, an address becomes
 * frames: the inlined calls at it, innermost first, each with file:line,
 * the way pprof and perf expand them. Without DWARF, the ELF symbol table
 * gives one frame per address and no file:line. */
#pragma once
#include <stddef.h>
#include "tools/pipeline/model.h"

struct prof_elf;

/* Opens the ELF and fills the map's build id, range and DWARF flag.
 * NULL with err (naming the file and why) on failure. */
struct prof_elf *prof_elf_open(struct prof *p, unsigned map,
                               char *err, size_t errcap);
void prof_elf_close(struct prof_elf *e);

/* Names every location of the map (see model.h: pl_sym, pl_frames). */
void prof_elf_symbolize(struct prof *p, unsigned map, struct prof_elf *e);
/* Names one location of e's map, unless it has been named. */
void prof_elf_name(struct prof *p, struct prof_elf *e, struct prof_loc *l);
