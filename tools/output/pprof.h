/* tools/output/pprof.h: the profile as pprof's protobuf (profile.proto,
 * from Debian's golang-github-google-pprof-dev, compiled by protoc-c at
 * build time), gzip-compressed, as `go tool pprof` reads it.
 *
 * Sample types samples/count and cpu/nanoseconds (count x the source's
 * period); one mapping per kernel ELF with its build id; one location per
 * distinct address, its inlined frames as lines innermost first; labels
 * pid and cpu (numbers), task and kernel (strings).
 *
 * Host pipeline: prefix sp_. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "tools/model/model.h"

/* The serialized, uncompressed message in a malloc'd buffer (for tests,
 * and what sp_pprof_write compresses). */
uint8_t *sp_pprof_pack(const struct sp_profile *p, size_t *len);

/* Returns 0, or -1 with err on a compression or write error. */
int sp_pprof_write(const struct sp_profile *p, FILE *f, char *err, size_t errcap);
