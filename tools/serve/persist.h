/* tools/serve/persist.h: serve's history (tools/serve/hist.h) kept in its
 * store (tools/store/store.h). Every bucket is written when it closes
 * (10 s), so a serve killed loses at most the open one; the kernels' own
 * stacks alone are written, never the fleet's (sv_hist_key_fleet: they
 * count the same records again), and a merged (by=frame) flame over the
 * store merges its per-kernel rows by ELF when it is asked
 * (tools/serve/query.c).
 *
 * Hot in memory, cold in the store: a range the history holds whole
 * (from at or after both its oldest bucket and serve's start; or, while
 * no bucket since the start has left memory, after the end of what the
 * store held of this serve's kernels when it started, sv_persist_start,
 * if that is earlier: the store has nothing more there) is answered
 * from memory alone, as if there were no store (the whole fleet's flame
 * from its fleet stacks: a few hundred entries a bucket); any other range,
 * or one that takes kernels other serves write, is the store's closed
 * buckets, every serve's kernels, and the history's open bucket, this
 * serve's. A range both hold gets the same counts from either. Either
 * way the selection is the store's form (struct st_sel), so one builder
 * makes its profile. Kernels are the store's by name: this serve's own
 * (indices 0 .. n-1, as the API numbers them) and then those other serves
 * write (n .. n + nforeign - 1).
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

/* The history's bucket index as the store's rows (malloc'd, *n of them;
 * the kernels' own stacks and what went over the bound). */
struct st_row *sv_persist_rows(const struct sv_state *st, uint64_t index, size_t *n);

/* The history's bucket index to st->store. 0, or -1 with err. */
int sv_persist_bucket(const struct sv_state *st, uint64_t index, char *err, size_t len);

/* Once this serve's kernels are named, before its first bucket: what
 * the store already holds of them (st->store_prior_ms), so that a range
 * before serve's start is still memory's when the store has nothing
 * there. 0, or -1 with err. */
int sv_persist_start(struct sv_state *st, char *err, size_t len);

/* [from, to) that f takes, as the store keeps it (out initialised here,
 * st_sel_free frees it). Without a store, the history alone. */
int sv_select(const struct sv_state *st, uint64_t from, uint64_t to,
              const struct sv_hist_filter *f, struct st_sel *out, char *err, size_t len);

/* st->foreign made again from the store: every kernel it names that is
 * not this serve's, whose build id one of st->maps has and whose newest
 * bucket ends at since_ms or later. */
int sv_foreign_load(struct sv_state *st, uint64_t since_ms, char *err, size_t len);
void sv_foreign_free(struct sv_state *st);
