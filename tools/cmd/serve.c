/* tools/cmd/serve.c: `sonde-prof serve`, a live web view of a fleet.
 *
 * Two threads. This one is the collector's loop: it polls the
 * collector's socket (every kernel's stream and shell,
 * tools/ingest/collect.h), sends the keep-alives, asks kernels again,
 * and puts records into the history (tools/serve/hist.h) stamped with
 * serve's clock as they arrive. libmicrohttpd's own thread answers the
 * page and the API (tools/serve/http.h), so that no request, however
 * slow, holds up a keep-alive: a kernel left 5 s without one ends its
 * stream.
 *
 * Between them, one lock (struct sv_lock, tools/serve/api.h), not
 * snapshots. A snapshot of the history is what a request must not pay
 * for: at a fleet's size the history is hundreds of MB, and a request
 * reads only its range's buckets. The lock guards what requests read:
 * the history and the API's view of the kernels (struct sv_kernel, each
 * with a copy of its stream's META and task names). The collector's own
 * state (its streams, shells, retries) is this thread's alone, and so
 * is the work that needs it: keep-alives and retries never wait for the
 * lock. Records wait in this thread's pending list (at most
 * SERVE_PENDING_MAX) and are put into the history when the lock is free
 * (pthread_mutex_trylock, never a wait), with the kernels' view; a
 * request holds the lock only while it reads (its selection, and the
 * profile made from it), never while it names frames, builds trees,
 * writes JSON or waits on its client. A request that holds it longer
 * than the pending list lasts makes the records past it lost, counted
 * per kernel (behind, in the API) and never silently. Every answer is
 * made from one consistent state of the history and the kernels.
 *
 * A kernel that stops answering is given up on by the collector after
 * SERVE_SILENT_MS and shown stopped, with the time of its last datagram;
 * the others go on, and the history stays served after every kernel has
 * stopped, until SIGINT or SIGTERM. A kernel whose stream does not start,
 * whose stream went silent or ended on a timeout, or that restarted, is
 * shown so, with why, and asked again every --retry (serve_retry).
 *
 * The store (tools/serve/persist.h): every bucket, as it closes, is
 * queued to a third thread that writes it with a connection of its own
 * (tools/serve/writer.h), so no write holds the lock. Hot in memory,
 * cold in the store: a range the history holds whole is answered from
 * memory, exactly as without a store (the whole fleet's flame from its
 * fleet stacks); any other from the store's closed buckets, read under
 * the lock through the state's connection, and memory's open one. Both
 * count the same for a range both hold; fleet stacks are never written.
 * The timeline is memory's alone. The options: tools/cmd/serve_opts.h.
 *
 * Serve layer: prefix sv_. */
#define _GNU_SOURCE
#include "tools/cmd/cmd.h"
#include <arpa/inet.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "tools/common/hostaddr.h"
#include "tools/common/toolio.h"
#include "tools/common/ushell_client.h"
#include "tools/ingest/collect.h"
#include "tools/ingest/fleet.h"
#include "tools/ingest/record.h"
#include "tools/model/sym.h"
#include "tools/serve/api.h"
#include "tools/serve/http.h"
#include "tools/cmd/serve_opts.h"
#include "tools/serve/page.h"
#include "tools/serve/persist.h"
#include "tools/serve/writer.h"
#include "tools/store/store.h"

enum { EXIT_OK = 0, EXIT_USAGE = 2 };

#define MAX_KERNELS         SV_HIST_KERNELS
#define SERVE_SHELL_TIMEOUT_MS 5000 /* a shell silent this long: its start fails */
#define SERVE_SILENT_MS     3000    /* a stream silent this long: that kernel stopped */
#define SERVE_STOP_WAIT_MS  1000    /* at the end: the kernels' ENDs */
#define SERVE_TICK_MS       100     /* the loop wakes at least this often */
#define SERVE_RETRY_SHELL_MS 1500   /* and waited for this long at most */
#define SERVE_PENDING_MAX   (1u << 18) /* records waiting for the lock: 0.65 s of
                                          1000 kernels x 4 CPUs x 100 Hz, ~55 MB */
#define SERVE_REFRESH_MS    100     /* the kernels' view made again this often */

static const char *prog = "sonde-prof serve";

/* ---- naming: one libdw handle per ELF, shared by every request ---------- */

_Static_assert(MAX_KERNELS <= SP_ELFSET_KERNELS, "a kernel without an ELF slot");

/* ---- the collector, and what the page is told of each kernel ------------ */

/* A record waiting for the lock, stamped when it came. */
struct serve_pend {
    uint64_t t_ms;
    uint16_t kernel, cpu;
    struct pstr_record r;
};

struct serve {
    struct serve_opts o;
    struct sv_state st;
    struct sp_elfset nm;
    struct sp_collect c;
    struct sv_lock lock;        /* the collector's and the requests' */
    struct sv_http *http;
    uint64_t t0;                /* serve's clock: started_unix_ms + tool_mono_ms() - t0 */
    int checked[MAX_KERNELS];   /* its META's build id: 0 not seen, 1 the ELF's, -1 not */
    char listen[HOSTADDR_NAME_MAX + 16];
    char retry_every[32];       /* "every 10 s", for the notes */
    bool opened;                /* the collector's socket is open */
    /* --sample: each kernel's finished streams, the round's kernels, the
     * round's number and start (collector's clock). */
    struct sp_fleet_total tot[MAX_KERNELS];
    bool which[MAX_KERNELS];
    unsigned round;
    uint64_t round_ms;
    uint64_t retry_at;          /* the next retry of kernels whose stream did not start */
    /* Records waiting for the lock; per kernel, those that found the list
     * full; the copies of the streams' METAs the API reads. */
    struct serve_pend *pend;
    size_t npend, cappend;
    uint64_t *behind;
    char (*idnote)[SP_ERR_MAX];     /* why a kernel's build id is not its ELF's */
    struct sp_stream *views;
    uint64_t refreshed_ms;
    struct sv_writer *writer;   /* the store's writes (tools/serve/writer.h) */
    uint64_t writer_failed;     /* its failures told so far */
};

/* Unix ms that never go back: the wall clock at the start, and the
 * monotonic clock since. */
static uint64_t serve_now(const struct serve *s)
{
    return s->st.started_unix_ms + tool_mono_ms() - s->t0;
}

/* ---- the store: kernels by name, each bucket as it closes ---------------- */

/* A store's refusal, on stderr once per new error, in /api/status. */
static void store_said(struct serve *s, const char *err)
{
    s->st.store_failed++;
    if (strcmp(s->st.store_error, err) != 0)
        fprintf(stderr, "%s: --store %s: %s\n", prog, s->o.store, err);
    snprintf(s->st.store_error, sizeof s->st.store_error, "%s", err);
}

/* What names a kernel's frames, for the serves that read it back. */
static void store_kernel(struct serve *s, unsigned k)
{
    const struct sp_collect_kernel *ck = &s->c.k[k];
    struct st_kernel sk = { .last_ms = 0 };
    snprintf(sk.name, sizeof sk.name, "%s", ck->name);
    snprintf(sk.build_id, sizeof sk.build_id, "%s", ck->s.meta.build_id);
    snprintf(sk.source, sizeof sk.source, "%s", ck->s.meta.source);
    if (s->writer)
        sv_writer_kernel(s->writer, &sk);
}

/* The kernels other serves write into a store named with --store, read
 * again: the default file is this serve's own, and whatever an earlier
 * serve there streamed is no other serve's fleet. Under the lock. */
static void store_foreign(struct serve *s)
{
    char err[ST_ERR_MAX];
    uint64_t now = serve_now(s), since = now > s->o.retain_ms ? now - s->o.retain_ms : 0;
    if (s->o.store_given && sv_foreign_load(&s->st, since, err, sizeof err))
        store_said(s, err);
}

/* A bucket closed (under the lock): its rows queued for the writer
 * (tools/serve/writer.h), what it failed to write since told, and other
 * serves' kernels read again. */
static void on_bucket_closed(void *ctx, const struct sv_hist *h, uint64_t index)
{
    struct serve *s = ctx;
    char err[ST_ERR_MAX];
    (void)h;
    sv_writer_bucket(s->writer, &s->st, index, serve_now(s));
    uint64_t failed = sv_writer_failed(s->writer, err, sizeof err);
    while (s->writer_failed < failed) {
        s->writer_failed++;
        store_said(s, err);
    }
    store_foreign(s);
}

/* Two connections: the state's, read under the lock, and the writer's. */
static int store_open(struct serve *s)
{
    char err[ST_ERR_MAX];
    s->st.store = st_open(s->o.store, err, sizeof err);
    if (s->st.store)
        s->writer = sv_writer_start(s->o.store, s->o.retain_ms, err, sizeof err);
    if (!s->st.store || !s->writer) {
        fprintf(stderr, "%s: --store %s\n", prog, err);
        return EXIT_USAGE;
    }
    sv_hist_on_close(s->st.h, on_bucket_closed, s);
    return EXIT_OK;
}

/* At the end, the collector stopped: the open bucket too (a restart in
 * the same 10 s adds to it), and all that was queued written. */
static void store_close(struct serve *s)
{
    if (s->writer)
        sv_writer_bucket(s->writer, &s->st, sv_hist_now(s->st.h) / SV_HIST_BUCKET_MS,
                         serve_now(s));
    sv_writer_stop(s->writer);
    s->writer = NULL;
    sv_foreign_free(&s->st);
    st_close(s->st.store);
    s->st.store = NULL;
}

/* A kernel's records count once its META names its ELF's build id: every
 * name would be wrong otherwise, and the page says why it shows none. */
static bool kernel_checked(struct serve *s, unsigned k)
{
    const struct sp_collect_kernel *ck = &s->c.k[k];
    if (s->checked[k] || !ck->s.have_meta)
        return s->checked[k] > 0;
    const struct sp_map *map = &s->nm.p.maps[s->nm.kmap[k]];
    char err[SP_ERR_MAX];
    if (sp_check_build_id(ck->name, ck->s.meta.build_id, map->pm_path, map->pm_build_id,
                          err, sizeof err)) {
        fprintf(stderr, "%s: %s: its samples are not shown\n", prog, err);
        snprintf(s->idnote[k], sizeof s->idnote[k], "%s", err);
        s->checked[k] = -1;
        return false;
    }
    s->checked[k] = 1;
    store_kernel(s, k);
    return true;
}

static void on_record(void *ctx, unsigned kernel, uint16_t cpu, const struct pstr_record *r)
{
    struct serve *s = ctx;
    if (kernel >= s->c.n || !kernel_checked(s, kernel))
        return;
    if (s->npend == SERVE_PENDING_MAX) {
        s->behind[kernel]++;
        return;
    }
    s->pend = sp_grow(s->pend, &s->cappend, s->npend + 1, sizeof *s->pend);
    s->pend[s->npend++] = (struct serve_pend){ serve_now(s), (uint16_t)kernel, cpu, *r };
}

/* What the API reads of a stream, copied: its META and task names. */
static void view_copy(struct sp_stream *v, const struct sp_stream *s)
{
    v->have_meta = s->have_meta;
    v->meta = s->meta;
    v->ncpus = s->ncpus;
    v->tasks = sp_grow(v->tasks, &v->captasks, s->ntasks + 1, sizeof *v->tasks);
    if (s->ntasks)              /* none yet: s->tasks may be NULL */
        memcpy(v->tasks, s->tasks, s->ntasks * sizeof *v->tasks);
    v->ntasks = s->ntasks;
}

static const char *state_name(enum sp_collect_state st)
{
    switch (st) {
    case SP_COLLECT_IDLE: return "starting";
    case SP_COLLECT_STREAMING: return "streaming";
    case SP_COLLECT_ENDED: return "ended";
    case SP_COLLECT_SILENT: return "stopped";
    case SP_COLLECT_RESTARTED: return "restarted";
    case SP_COLLECT_FAILED: return "failed";
    }
    return "unknown";
}

/* A kernel to ask again: its stream never started, went silent, ended
 * on a timeout (it heard no keep-alive: serve stalled, or they were
 * lost), or it restarted. One stopped by someone else's `profile stop`
 * is left so. */
static bool retriable(const struct sp_collect_kernel *ck)
{
    return ck->state == SP_COLLECT_FAILED || ck->state == SP_COLLECT_SILENT ||
           ck->state == SP_COLLECT_RESTARTED ||
           (ck->state == SP_COLLECT_ENDED && ck->s.end_reason == PSTR_END_TIMEOUT);
}

/* The API's view of every kernel, from the collector's. */
static void kernels_refresh(struct serve *s)
{
    for (unsigned i = 0; i < s->c.n; i++) {
        const struct sp_collect_kernel *ck = &s->c.k[i];
        struct sv_kernel *k = &s->st.k[i];
        k->state = state_name(ck->state);
        k->last_ms = ck->s.datagrams && ck->last_dgram_ms >= s->t0
                         ? s->st.started_unix_ms + ck->last_dgram_ms - s->t0 : 0;
        k->lost = s->tot[i].lost_records + ck->s.lost_records;
        k->behind = s->behind[i];
        k->received = s->tot[i].records + ck->s.records;
        view_copy(&s->views[i], &ck->s);
        k->dropped = s->tot[i].drops + sp_stream_drops(&ck->s);
        k->covered_ms = s->tot[i].covered_ms;
        if (ck->state == SP_COLLECT_STREAMING && (!s->o.sample || s->which[i]))
            k->covered_ms += tool_mono_ms() - ck->start_ms;
        else if (!s->o.sample && ck->end_ms > ck->start_ms && ck->start_ms)
            k->covered_ms += ck->end_ms - ck->start_ms;
        /* A build-id mismatch has its own note. */
        snprintf(k->note, sizeof k->note, "%s", s->checked[i] < 0 ? s->idnote[i] : ck->note);
        if (retriable(ck) && s->checked[i] >= 0)
            snprintf(k->note, sizeof k->note, "%.*s; asked again %s", 100, ck->note,
                     s->o.sample ? "at its next turn" : s->retry_every);
    }
}

/* Kernel i ready for a new stream. What its last one counted stays in
 * its totals (the caller's, under --sample: serve_round adds them), and
 * its build id is checked again (a restarted kernel may run another). */
static void rearm(struct serve *s, unsigned i)
{
    struct sp_collect_kernel *ck = &s->c.k[i];
    if (!s->o.sample && ck->state != SP_COLLECT_FAILED && ck->state != SP_COLLECT_IDLE)
        sp_fleet_add(&s->tot[i], ck, ck->end_ms > ck->start_ms ? ck->end_ms - ck->start_ms : 0);
    sp_collect_rearm(&s->c, i);
    if (s->checked[i] > 0)      /* a mismatch stays said until a META says otherwise */
        s->checked[i] = 0;
}

/* --sample K --period P: the last round's kernels stopped (they end
 * their streams themselves after P; a late one is stopped) and their
 * streams added to their totals, then the next K started for P. A kernel
 * to ask again (retriable) is, at its next turn. */
static int serve_round(struct serve *s)
{
    struct sp_collect *c = &s->c;
    if (s->round > 0) {
        sp_collect_stop(c, SERVE_STOP_WAIT_MS);
        for (unsigned i = 0; i < c->n; i++)
            if (s->which[i] && c->k[i].state != SP_COLLECT_FAILED) {
                uint64_t ms = c->k[i].end_ms > c->k[i].start_ms
                                  ? c->k[i].end_ms - c->k[i].start_ms : 0;
                sp_fleet_add(&s->tot[i], &c->k[i], ms < s->o.period_ms ? ms : s->o.period_ms);
            }
    }
    sp_fleet_pick(s->round++, s->o.sample, c->n, s->which);
    for (unsigned i = 0; i < c->n; i++) {
        s->which[i] = s->which[i] && (c->k[i].state == SP_COLLECT_IDLE ||
                                      c->k[i].state == SP_COLLECT_ENDED ||
                                      retriable(&c->k[i]));
        if (s->which[i])
            rearm(s, i);
    }
    s->round_ms = tool_mono_ms();
    return sp_collect_start_some(c, s->o.period_ms, "all", s->which);
}

/* The round is over: every kernel of it ended, or its period and the
 * stop's wait have passed. */
static bool round_over(const struct serve *s)
{
    uint64_t t = tool_mono_ms() - s->round_ms;
    return t >= s->o.period_ms && (!sp_collect_active(&s->c) ||
                                   t >= s->o.period_ms + SERVE_SILENT_MS);
}

static int collect_open(struct serve *s, const uint8_t *const *keys)
{
    struct sp_collect_opts po = {
        .prog = prog, .err = stderr, .keys = keys,
        .shell_timeout_ms = SERVE_SHELL_TIMEOUT_MS,
        .silent_ms = SERVE_SILENT_MS,
        .keep_going = true,
        .what = s->o.what,
    };
    if (sp_collect_open(&s->c, &po, s->o.hosts, s->o.nhosts, on_record, s))
        return EXIT_USAGE;
    s->opened = true;
    s->behind = sp_xcalloc(s->c.n, sizeof *s->behind);
    s->idnote = sp_xcalloc(s->c.n, sizeof *s->idnote);
    s->views = sp_xcalloc(s->c.n, sizeof *s->views);
    struct sv_kernel *ks = sp_xcalloc(s->c.n, sizeof *ks);
    for (unsigned i = 0; i < s->c.n; i++) {
        struct sv_kernel *k = &ks[i];
        snprintf(k->name, sizeof k->name, "%s", s->c.k[i].name);
        k->state = "starting";
        k->authenticated = keys != NULL;
        k->stream = &s->views[i];
        k->map = s->nm.kmap[i];
        sv_hist_set_map(s->st.h, i, k->map);
    }
    sv_lock_take(&s->lock);         /* the page may already ask */
    s->st.k = ks;
    s->st.n = s->c.n;
    sv_lock_give(&s->lock);
    snprintf(s->retry_every, sizeof s->retry_every, "every %.3g s", s->o.retry_ms / 1000.0);
    /* Streams until stopped (window 0). A kernel that cannot start one is
     * shown so, with why, and asked again (serve_retry); the others go on. */
    if (s->o.sample)
        serve_round(s);
    else
        sp_collect_start(&s->c, 0, "all");
    s->retry_at = tool_mono_ms() + s->o.retry_ms;
    for (unsigned i = 0; i < s->c.n; i++)
        if (s->c.k[i].state == SP_COLLECT_FAILED)
            fprintf(stderr, "%s: kernel %s: %s; asked again %s\n", prog, s->c.k[i].name,
                    s->c.k[i].note, s->o.sample ? "at its next turn" : s->retry_every);
    return EXIT_OK;
}

/* The retried kernel whose name line names, or -1. */
static int retried_in(const struct sp_collect *c, const bool *which, const char *line)
{
    for (unsigned i = 0; i < c->n; i++) {
        const char *at = which[i] ? strstr(line, c->k[i].name) : NULL;
        if (at && !(at[strlen(c->k[i].name)] >= '0' && at[strlen(c->k[i].name)] <= '9'))
            return (int)i;
    }
    return -1;
}

/* Every retry_ms: each kernel to ask again (retriable) is,
 * its shell waited for SERVE_RETRY_SHELL_MS at most (the other streams'
 * datagrams are taken meanwhile, and their keep-alives, a second apart,
 * can wait that long). Why it did not start is said on stderr when it
 * changed, not at every retry. */
static void serve_retry(struct serve *s)
{
    struct sp_collect *c = &s->c;
    bool which[MAX_KERNELS] = { false }, any = false;
    if (s->o.sample || tool_mono_ms() < s->retry_at)
        return;
    s->retry_at = tool_mono_ms() + s->o.retry_ms;
    for (unsigned i = 0; i < c->n; i++)
        any |= which[i] = retriable(&c->k[i]);
    char *said = NULL;
    size_t len = 0;
    FILE *quiet = any ? open_memstream(&said, &len) : NULL;
    if (!quiet)
        return;                     /* none, or out of memory: the next retry */
    char (*before)[SP_COLLECT_NOTE_MAX] = sp_xcalloc(c->n, sizeof *before);
    for (unsigned i = 0; i < c->n; i++) {
        if (!which[i])
            continue;
        snprintf(before[i], sizeof before[i], "%s", c->k[i].note);
        rearm(s, i);
        c->k[i].c.timeout_ms = SERVE_RETRY_SHELL_MS;
        c->k[i].c.err = quiet;
    }
    uint64_t t0 = c->t0;            /* the others' notes count from the first start */
    c->o.err = quiet;
    sp_collect_start_some(c, 0, "all", which);
    c->o.err = stderr;
    c->t0 = t0;
    fclose(quiet);
    for (char *save, *line = strtok_r(said, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
        if (retried_in(c, which, line) < 0)
            fprintf(stderr, "%s\n", line);     /* another kernel's news meanwhile */
    free(said);
    for (unsigned i = 0; i < c->n; i++) {
        if (!which[i])
            continue;
        c->k[i].c.err = stderr;
        c->k[i].c.timeout_ms = SERVE_SHELL_TIMEOUT_MS;
        if (c->k[i].state == SP_COLLECT_STREAMING)
            fprintf(stderr, "%s: kernel %s streams now\n", prog, c->k[i].name);
        else if (strcmp(before[i], c->k[i].note) != 0)
            fprintf(stderr, "%s: kernel %s: %s; asked again %s\n", prog, c->k[i].name,
                    c->k[i].note, s->retry_every);
    }
    free(before);
}

/* ---- the loop ------------------------------------------------------------ */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

/* Some kernel's META or task names came since its view was copied: the
 * records published with them would otherwise be shown unnamed. */
static bool views_stale(const struct serve *s)
{
    for (unsigned i = 0; i < s->c.n; i++)
        if (s->views[i].have_meta != s->c.k[i].s.have_meta ||
            s->views[i].ntasks != s->c.k[i].s.ntasks)
            return true;
    return false;
}

/* The pending records into the history, and (every SERVE_REFRESH_MS, or
 * when a META came) the kernels' view made again: under the lock, when
 * it is free and no request waits for it (the list is full: when it is
 * free), or at once with wait. */
static void serve_publish(struct serve *s, bool wait)
{
    uint64_t now = tool_mono_ms();
    bool refresh = wait || now - s->refreshed_ms >= SERVE_REFRESH_MS || views_stale(s);
    if (!s->npend && !refresh)
        return;
    if (!wait && !(s->npend == SERVE_PENDING_MAX || !sv_lock_waiting(&s->lock)))
        return;
    if (wait)
        sv_lock_take(&s->lock);
    else if (!sv_lock_try(&s->lock))
        return;
    for (size_t i = 0; i < s->npend; i++) {
        if (s->pend[i].r.kind == PSTR_KIND_TRACE && s->st.tr)
            sv_trace_add(s->st.tr, s->pend[i].kernel, s->pend[i].cpu, &s->pend[i].r,
                         s->pend[i].t_ms);
        else
            sv_hist_add(s->st.h, s->pend[i].kernel, s->pend[i].cpu, &s->pend[i].r,
                        s->pend[i].t_ms);
    }
    s->npend = 0;
    sv_hist_advance(s->st.h, serve_now(s));
    if (s->st.tr)
        sv_trace_advance(s->st.tr, serve_now(s));
    if (refresh) {
        kernels_refresh(s);
        s->refreshed_ms = now;
    }
    sv_lock_give(&s->lock);
}

static int run(struct serve *s)
{
    while (!stop) {
        struct pollfd p = { .fd = s->c.fd, .events = POLLIN };
        poll(&p, 1, SERVE_TICK_MS);
        if (sp_collect_poll(&s->c, 0) < 0)
            return EXIT_USAGE;
        if (s->o.sample && round_over(s))
            serve_round(s);             /* a kernel that did not start waits its turn */
        serve_retry(s);
        serve_publish(s, false);
    }
    return EXIT_OK;
}

static int keys_load(const struct serve_opts *o, uint8_t (*keys)[USHP_KEY_LEN],
                     const uint8_t **kp)
{
    for (unsigned i = 0; o->keyfile && i < o->nhosts; i++) {
        if (i == 0 && ushc_load_key(o->keyfile, keys[0], stderr, prog) < 0)
            return -1;
        memcpy(keys[i], keys[0], USHP_KEY_LEN);
        kp[i] = keys[i];
    }
    for (unsigned i = 0; o->keyfile && i < o->nids; i++)
        if (strcmp(o->ids[i], "-") != 0 && ushc_use_id(keys[i], o->ids[i], stderr, prog) < 0)
            return -1;
    return 0;
}

int sv_serve_main(int argc, char **argv)
{
    static struct serve s;
    int rc = sv_serve_parse_args(argc, argv, &s.o);
    if (rc)
        return rc;
    struct sockaddr_in addr;
    if (sv_serve_parse_listen(&s.o, &addr))
        return EXIT_USAGE;
    static uint8_t keys[MAX_KERNELS][USHP_KEY_LEN];
    static const uint8_t *kp[MAX_KERNELS];
    if (keys_load(&s.o, keys, kp))
        return EXIT_USAGE;
    sp_elfset_init(&s.nm);
    for (unsigned k = 0; k < s.o.nhosts && rc == 0; k++)
        if (sp_elfset_add(&s.nm, k, s.o.elfs[s.o.nelfs == 1 ? 0 : k], prog))
            rc = EXIT_USAGE;
    struct timeval tv;
    gettimeofday(&tv, NULL);
    s.t0 = tool_mono_ms();
    s.st.started_unix_ms = (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
    pthread_mutex_init(&s.lock.m, NULL);
    s.st.lock = &s.lock;
    s.st.h = sv_hist_new(s.o.max_stacks);
    if (s.o.what && strcmp(s.o.what, "trace") == 0)
        s.st.tr = sv_trace_new(SV_TRACE_KERNEL_EVENTS, SV_TRACE_KERNEL_SAMPLES);
    s.st.maps = s.nm.p.maps;
    s.st.nmaps = s.nm.p.nmaps;
    s.st.symbolize = sp_elfset_symbolize;
    s.st.sym_ctx = &s.nm;
    s.st.public_ = s.o.public_;
    s.st.page = sv_page_html(&s.st.page_len);
    char err[256];
    struct sv_http_opts ho = { s.o.public_, s.o.allow, s.o.nallow };
    if (rc == 0)
        rc = store_open(&s);
    if (rc == 0 && !(s.http = sv_http_start(&addr, &s.st, &ho, err, sizeof err))) {
        fprintf(stderr, "%s: -l %s: %s\n", prog, s.o.listen, err);
        rc = EXIT_USAGE;
    }
    if (rc == 0) {
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &addr.sin_addr, ip, sizeof ip);
        snprintf(s.listen, sizeof s.listen, "%s:%u", ip, sv_http_port(s.http));
        s.st.listen = s.listen;
        rc = collect_open(&s, s.o.keyfile ? kp : NULL);
        if (rc == 0)
            serve_publish(&s, true);
    }
    if (rc == 0) {
        sv_lock_take(&s.lock);  /* the page may already ask */
        if (sv_persist_start(&s.st, err, sizeof err))
            store_said(&s, err);
        store_foreign(&s);      /* once this serve's kernels are named */
        sv_lock_give(&s.lock);
    }
    if (rc == 0) {
        printf("%s: http://%s/ (%u kernel%s, store %s)\n", prog, s.listen, s.o.nhosts,
               s.o.nhosts > 1 ? "s" : "", s.o.store);
        fflush(stdout);
        struct sigaction sa = { .sa_handler = on_signal };
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        signal(SIGPIPE, SIG_IGN);
        rc = run(&s);
    }
    sv_http_stop(s.http);       /* no request reads past here */
    if (rc == 0)
        sp_collect_stop(&s.c, SERVE_STOP_WAIT_MS);
    for (unsigned i = 0; s.views && i < s.c.n; i++)
        free(s.views[i].tasks);
    free(s.views);
    free(s.behind);
    free(s.idnote);
    free(s.pend);
    if (s.opened)
        sp_collect_close(&s.c);
    store_close(&s);
    sv_hist_free(s.st.h);
    sv_trace_free(s.st.tr);
    free(s.st.k);
    sp_elfset_free(&s.nm);
    return rc;
}
