/* tools/model/pprof_read.h: a pprof profile (.pb.gz, as sp_pprof_write
 * writes it) read back into the model, so that `sonde-prof diff` takes
 * .pb.gz inputs as it takes raw ones (tools/model/pprof_read.c).
 *
 * The subset of profile.proto Sonde writes: the string table, mappings
 * (the first one's build id is the input's), locations with their lines
 * and functions (so the names come from the file: no ELF), samples with
 * the labels pid, cpu (numbers) and task (a string), and the sample types
 * that say the kind:
 *
 *   samples/count, cpu/nanoseconds                 a CPU profile
 *   samples/count, off_cpu/nanoseconds (cpu/nanoseconds and
 *     wall/nanoseconds beside them, as sonde-prof writes it)
 *                                                  an off-CPU profile: a
 *                     sample whose leaf is a reason ("[waitq NAME]") is an
 *                     off-CPU chain with that reason, weighing off_cpu;
 *                     one without, a wall profile's CPU half
 *   alloc_objects/count, alloc_space/bytes,
 *   inuse_objects/count, inuse_space/bytes         a heap profile: the
 *                     view (in use or allocated) is the default sample
 *                     type's, else the pair that holds values
 *
 * Anything else (another tool's sample types, a sample with more frames
 * than a raw chain holds, negative values as a differential profile has,
 * an index out of its table) is refused with what was wrong.
 *
 * Host pipeline: prefix sp_. */
#pragma once
#include <stddef.h>
#include "tools/model/model.h"

/* Adds the profile in the file at path to p as one input labelled kernel,
 * with maps of its own (after any already there) and its locations named.
 * 0, or -1 with err ("PATH: what was wrong"). */
int sp_pprof_read(struct sp_profile *p, const char *path, const char *kernel,
                  char *err, size_t errcap);

/* The same from the gzip-compressed bytes in memory; origin names them in
 * messages. */
int sp_pprof_read_mem(struct sp_profile *p, const void *gz, size_t len, const char *origin,
                      const char *kernel, char *err, size_t errcap);
