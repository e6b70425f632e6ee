/* tools/cmd/record_trace.h: `sonde-prof record --trace`'s second half
 * (tools/cmd/record_trace.c): the kernels' raw traces (`trace MS raw`,
 * uapi/trace_raw.h), gathered by record's window path, parsed into the
 * trace model, their samples named from the ELF, and written by OUT's
 * suffix.
 * Host pipeline: prefix sp_. */
#pragma once
#include "tools/cmd/report.h"
#include "tools/common/hostaddr.h"
#include "tools/ingest/collect.h"
#include "tools/ingest/trace_stream.h"

/* OUT's suffix is one a trace of n kernels is written as (.txt: any;
 * the others hold one): 0, or -1 said on stderr, naming what would do. */
int sp_record_trace_out_ok(const char *out, unsigned n);

/* Each host's reply (hs[i].text, from `trace MS raw`) parsed, checked
 * against its ELF (opened in p's maps, es, as record opens them), its
 * samples named, then OUT written (and -r's raw files). An exit status. */
int sp_record_trace_finish(const struct sp_cmd_opts *o, struct sp_rec_host *hs,
                           const char (*names)[HOSTADDR_NAME_MAX], unsigned n,
                           struct sp_profile *p, struct sp_cmd_elfs *es);

/* The traces c's kernels streamed (`trace stream`, record -d past
 * SP_RECORD_MS_MAX), gathered in g[i] for kernel i over covered_ms[i],
 * checked against their ELFs, named, and OUT written; each kernel's
 * events, drops and loss said on stderr. An exit status. */
int sp_record_trace_streamed(const struct sp_cmd_opts *o, const struct sp_collect *c,
                             struct sp_trace_gather *g, const uint64_t *covered_ms,
                             struct sp_profile *p, struct sp_cmd_elfs *es);
