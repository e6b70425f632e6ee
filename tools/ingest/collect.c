/* tools/ingest/collect.c: the stream collector (tools/ingest/collect.h).
 *
 * One socket for everything: the kernels stream to it, and every shell
 * request goes out from it (sendto each kernel's shell), so that the
 * stream's destination is the address its start, keep-alives, status and
 * stop come from. What arrives is sorted by its sender: a kernel's shell
 * address is that shell's reply, anything else a stream's datagram.
 *
 * Host pipeline: prefix sp_. */
#define _GNU_SOURCE
#include "tools/ingest/collect_priv.h"
#include "tools/common/toolio.h"
#include "lib/sha256.h"
#include "uapi/byteorder.h"
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* ---- opening ----------------------------------------------------------- */

/* The local address the kernel at a is reached from. */
static int local_addr(const struct sockaddr_in *a, struct in_addr *out)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in me;
    socklen_t len = sizeof me;
    int rc = fd >= 0 && connect(fd, (const struct sockaddr *)a, sizeof *a) == 0 &&
             getsockname(fd, (struct sockaddr *)&me, &len) == 0 ? 0 : -1;
    if (fd >= 0)
        close(fd);
    if (rc == 0)
        *out = me.sin_addr;
    return rc;
}

static int open_kernel(struct sp_collect *c, struct sp_collect_kernel *k, const char *arg,
                       uint32_t seq)
{
    char err[HOSTADDR_ERR_MAX];
    hostaddr_name(arg, USHP_DEFAULT_PORT, k->name, sizeof k->name);
    if (hostaddr_parse(arg, USHP_DEFAULT_PORT, &k->shell, err, sizeof err)) {
        fprintf(c->o.err, "%s: %s\n", c->o.prog, err);
        return -1;
    }
    sp_collect_shell_init(c, k, seq);
    if (sp_stream_init(&k->s, 0)) {
        fprintf(c->o.err, "%s: out of memory\n", c->o.prog);
        return -1;
    }
    return 0;
}

/* Receiving: one recvmmsg takes this many datagrams. */
#define SP_COLLECT_RX_BATCH 64
struct sp_collect_rx {
    struct mmsghdr m[SP_COLLECT_RX_BATCH];
    struct iovec iov[SP_COLLECT_RX_BATCH];
    struct sockaddr_in from[SP_COLLECT_RX_BATCH];
    uint8_t buf[SP_COLLECT_RX_BATCH][USHP_AUTH_DGRAM_MAX + 1];
};

/* True when SO_RCVBUFFORCE did not give the socket want bytes (the
 * kernel reports twice what was set). */
static bool force_failed(int fd, int want)
{
    int got = 0;
    socklen_t n = sizeof got;
    return getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &n) != 0 || got < want;
}

/* The collector's socket: on the address that reaches every kernel when
 * they agree on one (127.0.0.1 for kernels under QEMU's user network, so
 * nothing beyond this host can send to it), else on every address. */
static int open_collector(struct sp_collect *c)
{
    struct sockaddr_in me = { .sin_family = AF_INET };
    me.sin_addr.s_addr = htonl(INADDR_ANY);
    for (unsigned i = 0; i < c->n; i++) {
        struct in_addr a;
        if (local_addr(&c->k[i].shell, &a) != 0 ||
            (i > 0 && a.s_addr != me.sin_addr.s_addr)) {
            me.sin_addr.s_addr = htonl(INADDR_ANY);
            break;
        }
        me.sin_addr = a;
    }
    c->fd = socket(AF_INET, SOCK_DGRAM, 0);
    c->rx = sp_collect_zalloc(c, 1, sizeof *c->rx);
    /* A second of a 1 kHz stream on many CPUs, and the datagrams that
     * wait while a `profile stop` is in flight: the kernel caps it at
     * rmem_max. A fleet of a thousand kernels needs more than any
     * default: past the cap when the collector may (CAP_NET_ADMIN). */
    int rcvbuf = 8 << 20, force = SP_COLLECT_RCVBUF, one = 1;
    socklen_t len = sizeof me;
    if (c->fd >= 0)
        (void)setsockopt(c->fd, SOL_SOCKET, SO_RCVBUFFORCE, &force, sizeof force);
    /* IP_RECVERR: the socket is not connected (it talks to every kernel),
     * so only the error queue says which shell's port was unreachable
     * (sp_collect_refused_shell). */
    if (c->fd < 0 ||
        (force_failed(c->fd, force) &&
         setsockopt(c->fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf)) ||
        setsockopt(c->fd, IPPROTO_IP, IP_RECVERR, &one, sizeof one) ||
        bind(c->fd, (const struct sockaddr *)&me, sizeof me) ||
        getsockname(c->fd, (struct sockaddr *)&me, &len)) {
        fprintf(c->o.err, "%s: the collector's socket: %s\n", c->o.prog, strerror(errno));
        return -1;
    }
    c->port = ntohs(me.sin_port);
    return 0;
}

int sp_collect_open(struct sp_collect *c, const struct sp_collect_opts *o, const char *const *hosts,
               unsigned n, sp_collect_record_fn fn, void *ctx)
{
    memset(c, 0, sizeof *c);
    c->o = *o;
    c->fd = -1;
    c->fn = fn;
    c->ctx = ctx;
    c->k = calloc(n ? n : 1, sizeof *c->k);
    c->pending_max = SP_COLLECT_PENDING_MAX + 2 * n;
    c->pending = calloc(c->pending_max, sizeof *c->pending);
    if (!c->k || !c->pending) {
        fprintf(o->err, "%s: out of memory\n", o->prog);
        return -1;
    }
    uint32_t seq;
    if (getrandom(&seq, sizeof seq, 0) != sizeof seq)
        seq = (uint32_t)time(NULL) ^ (uint32_t)getpid() << 16;
    int rc = 0;
    for (unsigned i = 0; i < n; i++) {
        c->n = i + 1;
        if (open_kernel(c, &c->k[i], hosts[i], seq + i * 0x10000u))
            rc = -1;
    }
    if (rc == 0 && open_collector(c))
        rc = -1;
    if (rc == 0)
        sp_collect_index(c);
    return rc;
}

/* ---- starting and stopping ------------------------------------------- */

int sp_collect_start(struct sp_collect *c, unsigned ms, const char *who)
{
    bool *all = sp_collect_zalloc(c, c->n, sizeof *all);
    for (unsigned i = 0; i < c->n; i++)
        all[i] = true;
    int rc = sp_collect_start_some(c, ms, who, all);
    free(all);
    return rc;
}

void sp_collect_rearm(struct sp_collect *c, unsigned i)
{
    struct sp_collect_kernel *k = &c->k[i];
    sp_stream_free(&k->s);
    if (sp_stream_init(&k->s, 0))
        sp_collect_out_of_memory(c);
    k->state = SP_COLLECT_IDLE;
    k->have_src = false;
    k->note[0] = 0;
    k->probe.on = false;
    k->said_forged = false;
}

int sp_collect_start_some(struct sp_collect *c, unsigned ms, const char *who, const bool *which)
{
    char (*bufs)[USHP_CMD_MAX + 1] = sp_collect_zalloc(c, c->n, sizeof *bufs);
    const char **cmds = sp_collect_zalloc(c, c->n, sizeof *cmds);
    char **texts = sp_collect_zalloc(c, c->n, sizeof *texts);
    int *rcs = sp_collect_zalloc(c, c->n, sizeof *rcs);
    bool *run = sp_collect_zalloc(c, c->n, sizeof *run);
    for (unsigned i = 0; i < c->n; i++) {
        bool kind = c->o.what && c->o.what[0];
        if (kind && strcmp(c->o.what, "trace") == 0)    /* every task's: its own command */
            snprintf(bufs[i], sizeof bufs[i], "trace stream %u %u", c->port, ms);
        else
            snprintf(bufs[i], sizeof bufs[i], "profile %s%sstream %u %u %s",
                     kind ? c->o.what : "", kind ? " " : "", c->port, ms, who);
        cmds[i] = bufs[i];
        run[i] = which[i];
    }
    c->stopping = false;
    c->t0 = tool_mono_ms();
    c->ms = ms;
    /* A stream's META may come before its id does: it waits. */
    c->starting = true;
    c->npending = 0;
    sp_collect_run_all(c, cmds, run, texts, rcs, sp_collect_input);
    c->starting = false;
    int worst = USHC_EXIT_OK;
    uint64_t now = tool_mono_ms();
    for (unsigned i = 0; i < c->n; i++) {
        struct sp_collect_kernel *k = &c->k[i];
        uint32_t id;
        run[i] = false;
        if (!which[i])
            continue;
        int started = rcs[i] == USHC_EXIT_OK ? sp_collect_parse_started(c, k, texts[i], &id) : -1;
        if (started == 0) {
            k->s.id = id;
            k->state = SP_COLLECT_STREAMING;
            k->start_ms = k->last_reply_ms = now;
            k->last_dgram_ms = now;
            /* At once: until this keep-alive comes, the kernel holds
             * the samples back. */
            sp_collect_keepalive(k, now);
            run[i] = true;
            continue;
        }
        k->state = SP_COLLECT_FAILED;
        /* Another version of the control grammar (said): that kernel is
         * left out, and the others stream on. */
        if (started == -2) {
            snprintf(k->note, sizeof k->note, "its stream did not start: it does not speak "
                     "stream control version %d", SCTL_VERSION);
            continue;
        }
        if (rcs[i] == USHC_EXIT_OK) {
            sp_collect_say_refused(c, k, texts[i]);
            rcs[i] = USHC_EXIT_REFUSED;
        }
        sp_collect_note_failed(k, rcs[i], texts[i]);
        if (rcs[i] == USHC_EXIT_PROTO || worst == USHC_EXIT_OK)
            worst = rcs[i];
    }
    bool any = false;
    for (unsigned i = 0; i < c->n; i++)
        any |= run[i];
    if (!any && worst == USHC_EXIT_OK)
        worst = USHC_EXIT_REFUSED;  /* every kernel asked spoke another version */
    sp_collect_index(c);            /* the ids are known now */
    /* One kernel that cannot stream fails the record, as one that cannot
     * answer `profile` does: the others' streams end now, not by timeout. */
    if (worst != USHC_EXIT_OK && !c->o.keep_going) {
        sp_collect_stop_some(c, run, sp_collect_input);
        for (unsigned i = 0; i < c->n; i++)
            if (run[i])
                c->k[i].state = SP_COLLECT_ENDED;
    }
    for (unsigned i = 0; i < c->npending; i++) {
        struct sp_collect_pending *q = &c->pending[i];
        sp_collect_datagram(c, &q->from, q->d, q->len, q->ms);
    }
    c->npending = 0;
    for (unsigned i = 0; i < c->n; i++)
        free(texts[i]);
    free(bufs);
    free(cmds);
    free(texts);
    free(rcs);
    free(run);
    return worst;
}


/* ---- datagrams --------------------------------------------------------- */

static bool is_loopback(struct in_addr a)
{
    return (ntohl(a.s_addr) >> 24) == 127;
}

static bool same_host(struct in_addr a, struct in_addr b)
{
    return a.s_addr == b.s_addr || (is_loopback(a) && is_loopback(b));
}

/* The datagrams of foreign ids past the named ones, since the last line. */
static void say_unsaid(struct sp_collect *c, uint64_t now_ms)
{
    fprintf(c->o.err, "%s: %llu more datagrams of streams not started by this collector "
            "(past the first %u stream ids, not named), in the last %llu s: ignored\n",
            c->o.prog, (unsigned long long)c->foreign_unsaid, SP_COLLECT_FOREIGN_SAID,
            (unsigned long long)(now_ms - c->foreign_said_ms) / 1000);
    c->foreign_unsaid = 0;
    c->foreign_said_ms = now_ms;
}

/* A datagram of a stream nobody here started: its id said once, for the
 * first SP_COLLECT_FOREIGN_SAID ids; past them, counted and said in one
 * line a minute at most (and at the end: sp_collect_close). */
static void say_foreign(struct sp_collect *c, const struct sockaddr_in *from, uint32_t id,
                        uint64_t now_ms)
{
    for (unsigned i = 0; i < c->nforeign_ids; i++)
        if (c->foreign_ids[i] == id)
            return;
    if (c->nforeign_ids == SP_COLLECT_FOREIGN_SAID) {
        if (!c->foreign_unsaid++ && !c->foreign_said_ms)
            c->foreign_said_ms = now_ms;    /* the first minute starts now */
        if (now_ms - c->foreign_said_ms >= SP_COLLECT_FOREIGN_EVERY_MS)
            say_unsaid(c, now_ms);
        return;
    }
    c->foreign_ids[c->nforeign_ids++] = id;
    char a[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &from->sin_addr, a, sizeof a);
    fprintf(c->o.err, "%s: datagrams of stream 0x%08x from %s:%u not started by this "
            "collector: ignored\n", c->o.prog, id, a, ntohs(from->sin_port));
}

static void note_loss(char *buf, size_t cap, const struct sp_stream *s)
{
    snprintf(buf, cap, "%llu records on the wire (%llu datagrams), "
             "%llu dropped in the kernel",
             (unsigned long long)s->lost_records, (unsigned long long)s->lost_dgrams,
             (unsigned long long)sp_stream_drops(s));
}

/* Kernel k is not the one that started its stream any more (its shell
 * said so: sp_collect_shell_datagram): said, how, its stream so far kept
 * and ended there (SP_COLLECT_RESTARTED). */
static void restarted(struct sp_collect *c, struct sp_collect_kernel *k, uint64_t now,
                      const char *how)
{
    if (k->state != SP_COLLECT_STREAMING)
        return;
    char loss[160];
    note_loss(loss, sizeof loss, &k->s);
    k->state = SP_COLLECT_RESTARTED;
    k->end_ms = now;
    double at = (double)(now - c->t0) / 1000;
    snprintf(k->note, sizeof k->note, "restarted at %.1f s (%s)", at, how);
    fprintf(c->o.err, "%s: kernel %s restarted at %.1f s (%s): its new stream is "
            "not mixed in; its profile so far is kept, lost: %s\n",
            c->o.prog, k->name, at, how, loss);
}

/* An END this collector did not ask for: the kernel's window ran out
 * (elapsed, as asked), or it heard no keep-alive, or someone else
 * stopped the stream. The last two are said. */
static void ended_early(struct sp_collect *c, struct sp_collect_kernel *k, uint64_t now)
{
    if (c->stopping || k->s.end_reason == PSTR_END_ELAPSED)
        return;
    double at = (double)(now - c->t0) / 1000;
    snprintf(k->note, sizeof k->note, "its stream ended at %.1f s: %s", at,
             sp_stream_end_reason(k->s.end_reason));
    fprintf(c->o.err, "%s: kernel %s: %s\n", c->o.prog, k->name, k->note);
}

struct deliver_ctx {
    struct sp_collect *c;
    unsigned kernel;
};

static void deliver(void *ctx, uint16_t cpu, const struct pstr_record *r)
{
    struct deliver_ctx *d = ctx;
    if (d->c->fn)
        d->c->fn(d->c->ctx, d->kernel, cpu, r);
}

/* With a key (-k, made k's own by its --id): true when the datagram is
 * tagged, and its tag is the one kernel k's key and boot epoch give it;
 * else counted in k and false.
 * Without a key, true: the stream is not tagged (nor can a tag be
 * checked). k's keyed state follows the epoch its shell told. */
static bool verified(const struct sp_collect *c, struct sp_collect_kernel *k,
                     const struct pstr_hdr *h, const void *d, size_t len)
{
    const uint8_t *key = sp_collect_key(c, k);
    if (!key)
        return true;
    if (!h->tagged) {
        k->untagged++;
        return false;
    }
    if (!k->keyed_ok || k->keyed_epoch != k->c.epoch) {
        if (!k->keyed && !(k->keyed = malloc(sizeof *k->keyed))) {
            k->bad_tag++;               /* cannot check it: not taken */
            return false;
        }
        struct hmac_sha256 m;
        hmac_sha256_init(&m, key, USHP_KEY_LEN);
        pstr_tag_begin(k->keyed, &m, k->c.epoch);
        secure_zero(&m, sizeof m);
        k->keyed_epoch = k->c.epoch;
        k->keyed_ok = true;
    }
    if (!pstr_verify(k->keyed, d, len)) {
        k->bad_tag++;
        return false;
    }
    return true;
}

/* Whether a stream with this id is being taken: while kernels start
 * (sp_collect_start_some), a running stream's datagrams go on being taken,
 * and only those of ids not known yet wait. */
static bool taken_now(const struct sp_collect *c, uint32_t id)
{
    size_t cursor = 0;
    for (int i; (i = sp_collect_next_by_id(c, id, &cursor)) >= 0;)
        if (c->k[i].state == SP_COLLECT_STREAMING || c->k[i].state == SP_COLLECT_ENDED)
            return true;
    return false;
}

void sp_collect_datagram(struct sp_collect *c, const struct sockaddr_in *from,
                    const void *d, size_t len, uint64_t now_ms)
{
    struct pstr_hdr h;
    if (pstr_parse(d, len, &h) != 0) {
        c->foreign++;
        return;
    }
    if (c->starting && !taken_now(c, h.stream)) {
        if (c->npending >= c->pending_max) {
            c->foreign++;
            return;
        }
        struct sp_collect_pending *q = &c->pending[c->npending++];
        q->from = *from;
        q->ms = now_ms;
        q->len = len;
        memcpy(q->d, d, len);
        return;
    }
    size_t cursor = 0;
    for (int ki; (ki = sp_collect_next_by_id(c, h.stream, &cursor)) >= 0;) {
        unsigned i = (unsigned)ki;
        struct sp_collect_kernel *k = &c->k[i];
        if (k->state == SP_COLLECT_IDLE || k->state == SP_COLLECT_FAILED ||
            !same_host(from->sin_addr, k->shell.sin_addr))
            continue;
        if (k->state != SP_COLLECT_STREAMING && k->state != SP_COLLECT_ENDED) {
            c->foreign++;           /* given up on: nothing more is taken */
            return;
        }
        if (!verified(c, k, &h, d, len))
            return;
        struct deliver_ctx dc = { c, i };
        k->s.verified = sp_collect_key(c, k) != NULL;   /* verified() checked its tag */
        int r = sp_stream_take(&k->s, &h, now_ms, deliver, &dc);
        if (r == SP_STREAM_OTHER_BUILD) {
            char how[64];
            snprintf(how, sizeof how, "build id %.12s... now", k->s.other_build_id);
            sp_collect_suspect(k, now_ms, how);
            return;
        }
        if (r != SP_STREAM_TAKEN)
            return;
        if (!k->have_src) {
            k->src = *from;
            k->have_src = true;
        }
        k->last_dgram_ms = now_ms;
        if (k->s.ended && k->state == SP_COLLECT_STREAMING) {
            k->state = SP_COLLECT_ENDED;
            k->end_ms = now_ms;
            ended_early(c, k, now_ms);
        }
        return;
    }
    /* A stream nobody here started. From where a kernel's own stream
     * came, it may be that kernel started again (by whoever): its shell
     * is asked, and only its word makes it so. */
    c->foreign++;
    for (unsigned i = 0; i < c->n; i++) {
        struct sp_collect_kernel *k = &c->k[i];
        if (k->have_src && k->src.sin_addr.s_addr == from->sin_addr.s_addr &&
            k->src.sin_port == from->sin_port && k->state == SP_COLLECT_STREAMING) {
            /* Untagged or forged under a key: not even a question. */
            if (!verified(c, k, &h, d, len))
                return;
            char how[64];
            snprintf(how, sizeof how, "a new stream 0x%08x", h.stream);
            sp_collect_suspect(k, now_ms, how);
            return;
        }
    }
    say_foreign(c, from, h.stream, now_ms);
}

/* ---- polling ----------------------------------------------------------- */

void sp_collect_input(struct sp_collect *c, const struct sockaddr_in *from, const void *d,
                 size_t len, uint64_t now_ms)
{
    struct sp_collect_kernel *k = sp_collect_shell_of(c, from);
    if (k && len >= 4 && get_be32(d) == USHP_MAGIC) {
        if (sp_collect_shell_datagram(c, k, d, len, now_ms))
            restarted(c, k, now_ms, k->probe.why);
    } else
        sp_collect_datagram(c, from, d, len, now_ms);
}

static void given_up(struct sp_collect *c, struct sp_collect_kernel *k, uint64_t now)
{
    char loss[160];
    note_loss(loss, sizeof loss, &k->s);
    double at = (double)(k->last_dgram_ms - c->t0) / 1000;
    /* Its shell answers if it replied well after its last datagram (a
     * keep-alive goes every second): a kernel that died between a
     * datagram and a reply to the keep-alive just before would otherwise
     * pass for one whose stream ended while it runs on. */
    bool shell = k->last_reply_ms > k->last_dgram_ms + SP_COLLECT_SHELL_AFTER_MS &&
                 now - k->last_reply_ms < c->o.silent_ms;
    k->state = SP_COLLECT_SILENT;
    k->end_ms = now;
    if (shell)
        snprintf(k->note, sizeof k->note, "stopped streaming at %.1f s though its "
                 "shell answers", at);
    else
        snprintf(k->note, sizeof k->note, "stopped answering at %.1f s", at);
    fprintf(c->o.err, "%s: kernel %s %s%s; its profile so far is kept, lost: %s, "
            "and what it sampled after %.1f s\n", c->o.prog, k->name, k->note,
            shell ? " (restarted, or its stream ended there)" : "", loss, at);
}

/* Whether silences may be judged now. A kernel whose datagrams wait in
 * the collector's own socket is not silent: while a backlog is being
 * read (the collector was descheduled, or fell behind a burst), no one
 * is given up on, for at most silent_ms more (a flood that never ends
 * must not keep a dead kernel alive). */
static bool judge_silence(struct sp_collect *c, uint64_t now, bool backlog)
{
    if (!backlog) {
        c->backlog_ms = 0;
        return true;
    }
    if (!c->backlog_ms)
        c->backlog_ms = now;
    return now - c->backlog_ms >= c->o.silent_ms;
}

static void due(struct sp_collect *c, uint64_t now, bool backlog)
{
    /* Once stopped, a kernel owes only its END: sp_collect_stop says so when
     * it does not come. */
    if (c->stopping)
        return;
    bool judge = judge_silence(c, now, backlog);
    for (unsigned i = 0; i < c->n; i++) {
        struct sp_collect_kernel *k = &c->k[i];
        if (k->state != SP_COLLECT_STREAMING)
            continue;
        if (!judge && now - k->last_dgram_ms >= c->o.silent_ms) {
            if (now - k->last_keepalive_ms >= SP_COLLECT_KEEPALIVE_MS && !k->probe.on)
                sp_collect_keepalive(k, now);
            continue;
        }
        if (now - k->last_dgram_ms >= c->o.silent_ms && c->ms &&
            sp_stream_kernel_ms(&k->s) + SP_COLLECT_KEEPALIVE_MS >= c->ms) {
            /* Silent once its window is over by its own clock: its END
             * was lost, which sp_collect_stop says. */
            k->state = SP_COLLECT_ENDED;
            k->end_ms = now;
        } else if (now - k->last_dgram_ms >= c->o.silent_ms) {
            given_up(c, k, now);
        } else if (k->probe.on) {
            /* Its answer is the reply the shell client waits for: the
             * keep-alives wait (the kernel waits PSTR_KEEPALIVE_MS, the
             * probe at most USHC_RETRIES seconds). */
            sp_collect_probe_due(k, now);
        } else if (now - k->last_keepalive_ms >= SP_COLLECT_KEEPALIVE_MS) {
            sp_collect_keepalive(k, now);
        }
    }
}

int sp_collect_poll(struct sp_collect *c, int timeout_ms)
{
    struct pollfd pfd = { .fd = c->fd, .events = POLLIN };
    /* Never sleep past a keep-alive that falls due. */
    if (timeout_ms > SP_COLLECT_KEEPALIVE_MS / 4)
        timeout_ms = SP_COLLECT_KEEPALIVE_MS / 4;
    int taken = 0, pr = poll(&pfd, 1, timeout_ms);
    uint64_t now = tool_mono_ms();
    if (pr < 0 && errno != EINTR) {
        fprintf(c->o.err, "%s: poll: %s\n", c->o.prog, strerror(errno));
        return -1;
    }
    /* Every datagram waiting, but a bounded number per call, so that the
     * keep-alives go out even under a flood; recvmmsg takes them in
     * batches (one system call for up to SP_COLLECT_RX_BATCH). */
    if (!c->rx)                     /* a collector a test put together */
        c->rx = sp_collect_zalloc(c, 1, sizeof *c->rx);
    struct sp_collect_rx *rx = c->rx;
    bool backlog = false;
    for (int budget = 4096; pr > 0 && !(backlog = budget <= 0);) {
        for (unsigned j = 0; j < SP_COLLECT_RX_BATCH; j++) {
            rx->iov[j] = (struct iovec){ rx->buf[j], sizeof rx->buf[j] };
            rx->m[j].msg_hdr = (struct msghdr){ .msg_name = &rx->from[j],
                                                .msg_namelen = sizeof rx->from[j],
                                                .msg_iov = &rx->iov[j], .msg_iovlen = 1 };
        }
        int got = recvmmsg(c->fd, rx->m, SP_COLLECT_RX_BATCH, MSG_DONTWAIT, NULL);
        if (got < 0 && errno == ECONNREFUSED) {
            /* A port refused a request: its shell's silence tells. */
            sp_collect_refused_shell(c);
            budget--;
            continue;
        }
        if (got <= 0)
            break;
        for (int j = 0; j < got; j++)
            sp_collect_input(c, &rx->from[j], rx->buf[j], rx->m[j].msg_len, now);
        taken += got;
        budget -= got;
        if (got < SP_COLLECT_RX_BATCH)
            break;                  /* the queue is empty */
    }
    /* What falls due (keep-alives each second, silences after seconds)
     * is looked for every SP_COLLECT_DUE_MS, not after every datagram: a
     * look walks every kernel, and a thousand kernels' datagrams come a
     * few at a time. */
    if (now - c->due_ms >= SP_COLLECT_DUE_MS || now < c->due_ms) {
        c->due_ms = now;
        due(c, now, backlog);
    }
    return taken;
}

uint64_t sp_collect_refused(const struct sp_collect_kernel *k)
{
    return k->forged + k->untagged + k->bad_tag + k->s.far + k->s.malformed;
}

bool sp_collect_active(const struct sp_collect *c)
{
    for (unsigned i = 0; i < c->n; i++)
        if (c->k[i].state == SP_COLLECT_STREAMING)
            return true;
    return false;
}

uint64_t sp_collect_elapsed_ms(const struct sp_collect *c)
{
    return tool_mono_ms() - c->t0;
}

void sp_collect_stop(struct sp_collect *c, uint64_t grace_ms)
{
    bool *run = sp_collect_zalloc(c, c->n, sizeof *run);
    bool any = false;
    for (unsigned i = 0; i < c->n; i++) {
        any |= run[i] = c->k[i].state == SP_COLLECT_STREAMING;
        c->k[i].probe.on = false;   /* the stop's reply is the one awaited now */
    }
    if (any)
        sp_collect_stop_some(c, run, sp_collect_input);
    c->stopping = true;
    uint64_t until = tool_mono_ms() + grace_ms;
    while (sp_collect_active(c) && tool_mono_ms() < until)
        sp_collect_poll(c, 100);
    for (unsigned i = 0; i < c->n; i++) {
        struct sp_collect_kernel *k = &c->k[i];
        if (k->state == SP_COLLECT_STREAMING) {
            k->state = SP_COLLECT_ENDED;
            k->end_ms = tool_mono_ms();
        }
        if (k->state == SP_COLLECT_FAILED || k->state == SP_COLLECT_IDLE)
            continue;
        sp_stream_finish(&k->s);
        if (k->s.end_missing && k->state == SP_COLLECT_ENDED) {
            char loss[160];
            note_loss(loss, sizeof loss, &k->s);
            snprintf(k->note, sizeof k->note, "its END never came: records sent "
                     "after its last datagram are not counted");
            fprintf(c->o.err, "%s: kernel %s: %s; lost: %s, and those\n", c->o.prog,
                    k->name, k->note, loss);
        }
    }
    free(run);
}

void sp_collect_close(struct sp_collect *c)
{
    if (c->foreign_unsaid)
        say_unsaid(c, tool_mono_ms());
    sp_collect_index_free(c);
    free(c->rx);
    c->rx = NULL;
    for (unsigned i = 0; i < c->n; i++) {
        sp_stream_free(&c->k[i].s);
        if (c->k[i].keyed) {
            secure_zero(c->k[i].keyed, sizeof *c->k[i].keyed);
            free(c->k[i].keyed);
        }
    }
    if (c->fd >= 0)
        close(c->fd);
    free(c->k);
    free(c->pending);
    c->k = NULL;
    c->pending = NULL;
    c->n = 0;
}
