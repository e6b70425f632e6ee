/* tools/serve/persist.h: serve's history (tools/serve/hist.h) kept in its
 * store (tools/store/store.h). Every bucket is written when it closes
 * (10 s), so a serve killed loses at most the open one; a selection is
 * the store's closed buckets, every serve's kernels, and the history's
 * open bucket, this serve's. Kernels are the store's by name: this
 * serve's own (indices 0 .. n-1, as the API numbers them) and then those
 * other serves write (n .. n + nforeign - 1).
 * Serve layer: prefix sv_. */
#pragma once
#include "tools/serve/api.h"
#include "tools/store/store.h"

/* The name of kernel index i, this serve's or another's; NULL past them. */
const char *sv_kernel_name(const struct sv_state *st, int64_t i);

/* name is this serve's kernel, or one of st->foreign. */
bool sv_kernel_name_known(const struct sv_state *st, const char *name);

/* The same as a store filter's kernel_ok, st its ctx. */
bool sv_kernel_ok(const void *st, const char *name);

/* The history's bucket index to st->store. 0, or -1 with err. */
int sv_persist_bucket(const struct sv_state *st, uint64_t index, char *err, size_t len);

/* [from, to) that f takes, as the store keeps it (out initialised here,
 * st_sel_free frees it). Without a store, the history alone. */
int sv_select(const struct sv_state *st, uint64_t from, uint64_t to,
              const struct sv_hist_filter *f, struct st_sel *out, char *err, size_t len);

/* st->foreign made again from the store: every kernel it names that is
 * not this serve's, whose build id one of st->maps has and whose newest
 * bucket ends at since_ms or later. */
int sv_foreign_load(struct sv_state *st, uint64_t since_ms, char *err, size_t len);
void sv_foreign_free(struct sv_state *st);
