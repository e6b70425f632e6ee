/* tools/serve/api.h: the HTTP API `sonde-prof serve`'s page reads, apart
 * from any socket: a GET (a path and its query arguments) in, a status, a
 * content type and a body out. tools/serve/http.c hands it what
 * libmicrohttpd parsed; the unit tests call it directly.
 *
 *   GET /                       the page (tools/serve/page.h)
 *   GET /api/status             the clock, the kernels counted by state
 *                               (kernel_count, kernel_states), the records
 *                               received from them all, the first page of
 *                               their list, the kinds seen, the bound
 *   GET /api/kernels            a page of the kernels (state, last time,
 *                               authenticated, records/s over the last whole
 *                               bucket): offset (0-4096), limit (1-500,
 *                               default 50), q (a part of HOST:PORT), state;
 *                               with total and matched counts
 *   GET /api/timeline           the fleet's records per second ("total"),
 *                               and per bucket (records/s) the
 *                               SV_API_TIMELINE_TOP kernels with the most
 *                               records in the range, or the one kernel=
 *   GET /api/flame              the selection as a flame graph's tree
 *   GET /api/diff               two selections: the new one's tree, each
 *                               frame with its delta from the base
 *   GET /download/selection.pb.gz, /download/selection.folded
 *                               the selection as pprof or folded stacks
 *
 * Arguments (every one optional; anything else is refused):
 *   from, to            Unix ms (the wall clock), from < to <= now;
 *                       default the last SV_API_LIVE_MS (the live view)
 *   base_from, base_to  /api/diff: the base range, as from and to
 *   kernel              a kernel's index (0 .. n-1: this serve's, then
 *                       those other serves write into its store) or "all"
 *   pid                 0 .. 2147483647 or "all"
 *   cpu                 0 .. 4095 or "all"
 *   kind                cpu, offcpu, heap or lock (default cpu)
 *   by                  the tree's levels above the frames: kernel (a
 *                       frame per kernel, then the task), task (tasks
 *                       merged over the kernels) or frame (the fleet's
 *                       frames merged, no kernel nor task); default kernel
 *                       up to SV_API_BY_KERNEL_MAX kernels, frame beyond
 * A bad one is a 400 whose JSON names the argument, what it was and what
 * is allowed; an unknown path a 404; the body is {"error": "..."}, every
 * byte of the request it echoes outside printable ASCII written \xHH. A
 * reply whose JSON cannot be built is a 500 with a fixed body, never an
 * exit.
 *
 * Times in the JSON are Unix ms (the wall clock at serve's start, kept
 * steady by the monotonic clock since), so that a range outlives the
 * process: with a store, a restarted serve answers it from there.
 *
 * One lock (struct sv_lock) stands between serve's collector, which
 * writes the history and the kernels, and the HTTP thread that answers
 * from them: a request holds it only while it reads (its arguments
 * against the clock, a selection, from memory or the store's reading
 * connection, and the profile made from it, the kernels' facts), never
 * while it names frames, builds a tree, writes
 * JSON or sends (tools/cmd/serve.c says why a lock and not snapshots).
 *
 * Serve layer: prefix sv_. */
#pragma once
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tools/common/hostaddr.h"
#include "tools/model/model.h"
#include "tools/ingest/stream.h"
#include "tools/serve/hist.h"
#include "tools/serve/trace.h"
#include "tools/store/store.h"

#define SV_API_LIVE_MS   10000u     /* the live view: the last 10 s (one or two buckets) */
#define SV_API_ARGS_MAX  16
#define SV_API_ERROR_MAX 512        /* an error message, before its bytes are escaped */
#define SV_API_PAGE_DEFAULT 50u     /* /api/kernels: a page's kernels, by default */
#define SV_API_PAGE_MAX  500u       /* and at most */
#define SV_API_TIMELINE_TOP 8u      /* /api/timeline: the kernels drawn beside the fleet */
#define SV_API_BY_KERNEL_MAX 16u    /* a flame graph's frame per kernel, by default, up to */

/* One kernel as the API shows it; serve refreshes these from its
 * collector on every pass. */
struct sv_kernel {
    char name[HOSTADDR_NAME_MAX];    /* HOST:PORT as given */
    const char *state;              /* "starting", "streaming", "stopped", ... */
    uint64_t last_ms;               /* its last datagram, serve's clock; 0: none */
    bool authenticated;             /* its stream and shell are keyed (-k) */
    char note[SP_ERR_MAX];           /* what became of it, or "" */
    uint64_t lost, dropped;         /* on the wire; in the kernel */
    uint64_t received;              /* records that came, bad ones included */
    uint64_t behind;                /* not taken: a request held the history
                                       longer than serve could hold them */
    uint64_t covered_ms;            /* how long it was streamed (--sample: only
                                       its turns; else since its start) */
    const struct sp_stream *stream; /* its META (build id, source, task names) */
    unsigned map;                   /* its ELF among the state's maps */
};

/* The collector's and the requests' lock. The collector takes it only
 * when it is free and no request waits (sv_lock_try, sv_lock_waiting):
 * under load it would otherwise starve them (a mutex is not fair), and
 * it must never wait on one. */
struct sv_lock {
    pthread_mutex_t m;
    atomic_uint waiting;            /* requests waiting for it */
};
/* Each a no-op on NULL (one thread: the unit tests). */
void sv_lock_take(struct sv_lock *l);
void sv_lock_give(struct sv_lock *l);
/* The lock taken if it is free: true. */
bool sv_lock_try(struct sv_lock *l);
/* Whether a request waits for it. */
bool sv_lock_waiting(struct sv_lock *l);

/* A kernel another serve streams into the same store: what its own
 * serve wrote of it, and a stream standing for its META. */
struct sv_foreign {
    struct st_kernel k;
    struct sp_stream s;
    unsigned map;                   /* the ELF whose build id it has */
};
#define SV_FOREIGN_MAX 4096u

/* Names every location of map in p: libdw in serve, a table in tests. */
typedef void (*sv_symbolize_fn)(void *ctx, struct sp_profile *p, unsigned map);

struct sv_state {
    struct sv_lock *lock;           /* NULL: no other thread */
    struct sv_hist *h;
    struct sv_trace *tr;            /* --kind trace: each kernel's last minute
                                       of it (tools/serve/trace.h); else NULL */
    struct sv_kernel *k;            /* n of them, at most SV_HIST_KERNELS */
    unsigned n;
    const struct sp_map *maps;      /* the ELFs, build ids filled */
    unsigned nmaps;
    sv_symbolize_fn symbolize;
    void *sym_ctx;
    uint64_t started_unix_ms;
    const char *listen;             /* ADDR:PORT as bound */
    bool public_;                   /* --public: not loopback */
    const char *page;               /* the page's HTML, or NULL */
    size_t page_len;
    struct st_store *store;         /* closed buckets (tools/serve/persist.h); NULL:
                                       the history alone */
    struct sv_foreign *foreign;     /* other serves' kernels in the store */
    unsigned nforeign;
    uint64_t store_prior_ms;        /* the end of what the store held of this
                                       serve's kernels when it started (0: none) */
    uint64_t store_failed;          /* the store's writes and reads that failed */
    char store_error[ST_ERR_MAX];   /* the last refusal, or "" */
};

struct sv_arg {
    const char *key, *value;
};

struct sv_reply {
    unsigned status;                /* 200, 400, 404, 405 */
    const char *type;               /* its Content-Type */
    char *body;                     /* malloc'd */
    size_t len;
    const char *filename;           /* a download's name, or NULL */
    bool body_static;               /* body is the page's: not to be freed */
};

/* Answers GET path?args. Never fails: a bad request is a 4xx reply. */
void sv_api_get(const struct sv_state *st, const char *path, const struct sv_arg *args,
                unsigned nargs, struct sv_reply *out);
void sv_reply_free(struct sv_reply *r);

/* GET /api/trace?kernel=NAME[&from=MS&to=MS] (tools/serve/api_trace.c):
 * one kernel's trace over the range (Unix ms; default: the last
 * SV_API_TRACE_DEFAULT_MS it holds) as Chrome trace-event JSON
 * (tools/output/trace_json.h), its samples named; at most
 * SV_API_TRACE_EVENTS events (about 2 s of two CPUs switching 10,000
 * times a second; ~50 MB of JSON), else a 413 that says how many there
 * are, counted before anything is copied. */
#define SV_API_TRACE_DEFAULT_MS 2000u
#define SV_API_TRACE_EVENTS     200000u
void sv_api_trace(const struct sv_state *st, const struct sv_arg *args, unsigned nargs,
                  struct sv_reply *out);

/* A reply of status with {"error": msg}: for what the API never sees
 * (a method other than GET, too many arguments). */
void sv_api_error(struct sv_reply *out, unsigned status, const char *msg);
/* The same with the message printf's. */
void sv_api_errorf(struct sv_reply *out, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* An argument's decimal digits, no sign, at most max: 0, or -1. */
int sv_api_parse_u64(const char *s, uint64_t max, uint64_t *out);
