/* tools/serve/writer.h: serve's writes to its store on a thread of their
 * own, with a connection of their own (st_open again), so that neither
 * the collector nor a request waits while a bucket of a fleet is written
 * (1000 kernels: tens of thousands of rows, about a second in SQLite).
 * The collector makes a closed bucket's rows under serve's lock (they
 * read the history) and queues them; the writer writes them in one
 * transaction each, in order, with the kernels' identities and, once a
 * minute, the retention pass. Reads stay on the state's own connection,
 * under the lock (tools/serve/persist.h): SQLite in WAL mode and
 * PostgreSQL both let one connection read while another writes.
 *
 * The queue holds at most SV_WRITER_QUEUE_MAX buckets: one past that is
 * not written and counted as failed ("behind"), never waited for.
 * Serve layer: prefix sv_. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tools/serve/api.h"
#include "tools/store/store.h"

#define SV_WRITER_QUEUE_MAX 8u      /* 80 s of buckets: at 1000 kernels ~26 MB each */
#define SV_WRITER_RETAIN_MS 60000u  /* the retention pass at most this often */

struct sv_writer;

/* Its own connection to uri; retain_ms as st_retain's. NULL with err. */
struct sv_writer *sv_writer_start(const char *uri, uint64_t retain_ms, char *err, size_t len);
/* Everything queued written, then the thread and connection ended. */
void sv_writer_stop(struct sv_writer *w);

/* A kernel's identity, written before any bucket queued after it. */
void sv_writer_kernel(struct sv_writer *w, const struct st_kernel *k);
/* The history's bucket index, its rows made now (the caller holds the
 * lock st is read under), written later; a retention pass after it when
 * the last was SV_WRITER_RETAIN_MS before now_ms. */
void sv_writer_bucket(struct sv_writer *w, const struct sv_state *st, uint64_t index,
                      uint64_t now_ms);

/* Writes that failed since the start, and the last one's error ("" none). */
uint64_t sv_writer_failed(struct sv_writer *w, char *err, size_t len);
