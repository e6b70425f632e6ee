/* tools/serve/kernels.h: the kernels as the API lists them (paged and
 * searched, /api/kernels; the first page in /api/status): this serve's
 * own (index 0 .. n-1) and then those other serves write into its store
 * (state "elsewhere"). Read under the state's lock.
 * Serve layer: prefix sv_. */
#pragma once
#include <jansson.h>
#include <stdint.h>
#include "tools/serve/api.h"

/* Which kernels a list takes: a part of the name, a state. */
struct sv_kernel_match {
    const char *q, *state;          /* NULL: any */
};

/* The page of the kernels m takes, from the offset-th of them, at most
 * limit: {"total", "matched", "offset", "limit", "kernels": [...]}. */
json_t *sv_kernel_page(const struct sv_state *st, const struct sv_kernel_match *m,
                       uint64_t offset, uint64_t limit);

/* v as a JSON integer, INT64_MAX at most. */
json_t *sv_json_uint(uint64_t v);
/* What a kernel or the command line said may be any bytes: each one not
 * UTF-8 a U+FFFD, never a string jansson refuses. */
json_t *sv_json_str(const char *s);
