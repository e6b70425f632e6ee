/* tools/output/html.h: the interactive flame graph, `-o FILE.html`: one
 * self-contained page (it loads nothing when opened, and its Content
 * Security Policy forbids it to) holding the profile as JSON
 * (tools/output/flame_json.h) and the page's modules (web/flame/: zoom,
 * search, tooltips, icicle) bundled with d3-flame-graph and inlined
 * (tools/output/web_assets.h). A trace's page (record --trace -o
 * FILE.html) is made the same way around the trace's Chrome JSON
 * (tools/output/trace_json.h): its timeline above a flame graph of the
 * range brushed on it (web/trace/).
 * Host pipeline: prefix sp_. */
#pragma once
#include <stdbool.h>
#include <stdio.h>
#include "tools/output/diff.h"
#include "tools/model/model.h"

/* A frame per kernel at the root when per_kernel or when the inputs name
 * more than one kernel. Returns 0, or -1 with err filled (inputs of
 * different kinds or views: one graph shows one; a write error). */
int sp_html_write(const struct sp_profile *p, bool per_kernel, const char *title,
                  FILE *f, char *err, size_t errcap);
/* A differential flame graph of d (both profiles of kind): sized by NEW,
 * red where it grew, blue where it shrank. 0, or -1 on a write error. */
int sp_html_write_diff(const struct sp_diff *d, unsigned kind, const char *title, FILE *f);
/* The trace's page: title (any text: written as HTML text) and json,
 * the whole document sp_trace_json_write wrote, NUL-terminated (written
 * to an open_memstream, say). The page reads that document and nothing
 * else, so the .json and the .html of one trace show the same events.
 * 0, or -1 on a write error. */
int sp_html_write_trace(FILE *f, const char *title, const char *json);
