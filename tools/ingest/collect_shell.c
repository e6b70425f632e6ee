/* tools/ingest/collect_shell.c: the collector's side of the kernels' UDP
 * shells (tools/ingest/collect_priv.h): every request from the
 * collector's own socket, so that a stream's destination is the address
 * its requests come from; several at once; the keep-alives; and the
 * question a suspected restart is put to the shell.
 *
 * Host pipeline: prefix sp_. */
#define _GNU_SOURCE
#include "tools/ingest/collect_priv.h"
#include "tools/common/toolio.h"
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
#include <sys/socket.h>

/* ushc's io.send for kernel k (ctx): from the collector's socket. A
 * "port unreachable" pending on the socket fails the next send whoever
 * it goes to: the error queue says whose it was. Another kernel's is
 * kept for the wait to report (shells_recv), and the send made again. */
static int shell_send(void *ctx, const void *d, size_t n)
{
    struct sp_collect_kernel *k = ctx;
    struct sp_collect *c = k->owner;
    if (c->send)
        return c->send(c->send_ctx, (unsigned)(k - c->k), d, n);
    for (int tries = 0; tries < 2; tries++) {
        if (sendto(c->fd, d, n, 0, (const struct sockaddr *)&k->shell, sizeof k->shell) >= 0)
            return 0;
        if (errno != ECONNREFUSED)
            return USHC_IO_ERROR;
        struct sp_collect_kernel *who = sp_collect_refused_shell(c);
        if (who == k)
            return USHC_IO_REFUSED;
        if (who)
            c->refused_late = who;
    }
    return USHC_IO_REFUSED;
}

const uint8_t *sp_collect_key(const struct sp_collect *c, const struct sp_collect_kernel *k)
{
    return c->o.keys ? c->o.keys[k - c->k] : c->o.key;
}

void sp_collect_shell_init(struct sp_collect *c, struct sp_collect_kernel *k, uint32_t seq)
{
    k->owner = c;
    k->c = (struct ushc){
        .io = { k, shell_send, NULL, tool_clock_ms },
        .seq = seq,
        .timeout_ms = c->o.shell_timeout_ms,
        .peer = k->name, .prog = c->o.prog, .err = c->o.err,
        .key = sp_collect_key(c, k),
    };
}

struct sp_collect_kernel *sp_collect_refused_shell(struct sp_collect *c)
{
    char ctl[512];
    uint8_t data[1];
    struct sockaddr_in to;
    struct iovec iov = { data, sizeof data };
    struct msghdr m = {
        .msg_name = &to, .msg_namelen = sizeof to, .msg_iov = &iov, .msg_iovlen = 1,
        .msg_control = ctl, .msg_controllen = sizeof ctl,
    };
    if (recvmsg(c->fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0 || m.msg_namelen < sizeof to)
        return NULL;
    for (struct cmsghdr *h = CMSG_FIRSTHDR(&m); h; h = CMSG_NXTHDR(&m, h)) {
        if (h->cmsg_level != IPPROTO_IP || h->cmsg_type != IP_RECVERR)
            continue;
        struct sock_extended_err e;
        memcpy(&e, CMSG_DATA(h), sizeof e);
        if (e.ee_origin == SO_EE_ORIGIN_ICMP && e.ee_errno == ECONNREFUSED)
            return sp_collect_shell_of(c, &to);
    }
    return NULL;
}

/* ushc_run_all's wait: on the collector's socket, for the shells of the
 * kernels in idx. Whatever else comes meanwhile (a stream's datagram,
 * another shell's late reply) goes to other, which takes it as
 * sp_collect_poll would, and the wait goes on (0: ushc_run_all calls again
 * with what is left). */
struct shells {
    struct sp_collect *c;
    unsigned *idx, m;
    sp_collect_input_fn other;
};

static long shells_recv(void *ctx, unsigned *which, void *buf, size_t cap,
                        uint64_t timeout_ms)
{
    struct shells *s = ctx;
    /* A refusal a send to another kernel came across (shell_send). */
    for (unsigned j = 0; s->c->refused_late && j < s->m; j++)
        if (&s->c->k[s->idx[j]] == s->c->refused_late) {
            s->c->refused_late = NULL;
            *which = j;
            return USHC_IO_REFUSED;
        }
    s->c->refused_late = NULL;
    struct pollfd pfd = { .fd = s->c->fd, .events = POLLIN };
    int pr = poll(&pfd, 1, (int)timeout_ms + 1);
    if (pr <= 0)
        return pr < 0 && errno != EINTR ? (*which = 0, USHC_IO_ERROR) : 0;
    struct sockaddr_in from;
    socklen_t flen = sizeof from;
    ssize_t got = recvfrom(s->c->fd, buf, cap, MSG_DONTWAIT, (struct sockaddr *)&from, &flen);
    if (got < 0) {
        /* An ICMP "port unreachable" about one of many: the error queue
         * names whose (IP_RECVERR); anything else, the shells' own
         * timeouts tell. */
        struct sp_collect_kernel *k = errno == ECONNREFUSED ? sp_collect_refused_shell(s->c) : NULL;
        for (unsigned j = 0; k && j < s->m; j++)
            if (&s->c->k[s->idx[j]] == k) {
                *which = j;
                return USHC_IO_REFUSED;
            }
        return 0;
    }
    struct sp_collect_kernel *k = sp_collect_shell_of(s->c, &from);
    for (unsigned j = 0; k && j < s->m; j++)
        if (&s->c->k[s->idx[j]] == k) {
            *which = j;
            return (long)got;
        }
    s->other(s->c, &from, buf, (size_t)got, tool_mono_ms());
    return 0;
}

/* Runs cmds[i] on every kernel i with run[i], all at once; each reply
 * into texts[i] (malloc'd, NUL-terminated), each status into rcs[i]. */
void sp_collect_run_all(struct sp_collect *c, const char *const *cmds, const bool *run,
                        char **texts, int *rcs, sp_collect_input_fn other)
{
    unsigned m = 0;
    struct ushc **cs = sp_collect_zalloc(c, c->n, sizeof *cs);
    const char **cm = sp_collect_zalloc(c, c->n, sizeof *cm);
    unsigned *idx = sp_collect_zalloc(c, c->n, sizeof *idx);
    int *r = sp_collect_zalloc(c, c->n, sizeof *r);
    size_t *lens = sp_collect_zalloc(c, c->n, sizeof *lens);
    for (unsigned i = 0; i < c->n; i++) {
        texts[i] = NULL;
        rcs[i] = USHC_EXIT_OK;
        if (!run[i])
            continue;
        c->k[i].c.out = open_memstream(&texts[i], &lens[i]);
        if (!c->k[i].c.out)
            sp_collect_out_of_memory(c);
        cs[m] = &c->k[i].c;
        cm[m] = cmds[i];
        idx[m++] = i;
    }
    struct shells sel = { c, idx, m, other };
    struct ushc_mux mux = { &sel, shells_recv, tool_clock_ms };
    ushc_run_all(&mux, cs, cm, m, r);
    for (unsigned j = 0; j < m; j++) {
        unsigned i = idx[j];
        fclose(c->k[i].c.out);          /* texts[i] is final from here */
        c->k[i].c.out = NULL;
        rcs[i] = r[j];
    }
    free(cs);
    free(cm);
    free(idx);
    free(r);
    free(lens);
}

/* The control line (uapi/stream_ctl.h) of kernel k's answer text: 0 and
 * *l, or the sctl_ code. A kernel that answers without one, or with
 * another version's, is said so once (by its address: a fleet may hold
 * kernels of several builds), and k->skew set; a malformed line is said
 * each time. */
int sp_collect_ctl(struct sp_collect *c, struct sp_collect_kernel *k, const char *text,
                   struct sctl_line *l)
{
    int rc = sctl_find(text ? text : "", text ? strlen(text) : 0, l);
    if (rc == SCTL_E_NOLINE || rc == SCTL_E_VERSION) {
        bool said = k->skew;
        k->skew = true;
        if (said)
            return rc;
        if (rc == SCTL_E_NOLINE)
            fprintf(c->o.err, "%s: kernel %s answers without a stream control line: it is "
                    "older than stream control version 1, and this collector speaks version "
                    "%d only: left out\n", c->o.prog, k->name, SCTL_VERSION);
        else
            fprintf(c->o.err, "%s: kernel %s speaks stream control version %u, this collector "
                    "version %d: left out\n", c->o.prog, k->name, (unsigned)l->sl_v,
                    SCTL_VERSION);
    } else if (rc != 0) {
        fprintf(c->o.err, "%s: kernel %s: %s in its answer (code %d)\n", c->o.prog, k->name,
                sctl_strerror(rc), rc);
    }
    return rc;
}

int sp_collect_parse_started(struct sp_collect *c, struct sp_collect_kernel *k, const char *text,
                             uint32_t *id)
{
    struct sctl_line l;
    int rc = sp_collect_ctl(c, k, text, &l);
    if (rc == SCTL_E_NOLINE || rc == SCTL_E_VERSION)
        return -2;
    if (rc != 0 || l.sl_op != SCTL_OP_START || l.sl_result != SCTL_OK ||
        !(l.sl_have & SCTL_HAVE_ID))
        return -1;
    *id = l.sl_id;
    return 0;
}

/* The first line of text for people: past the control line. */
static const char *human_line(const char *text, size_t *n)
{
    while (text && sctl_is_line(text, strlen(text))) {
        const char *nl = strchr(text, '\n');
        text = nl ? nl + 1 : NULL;
    }
    *n = text ? strcspn(text, "\n") : 0;
    return text;
}

void sp_collect_say_refused(struct sp_collect *c, struct sp_collect_kernel *k, const char *text)
{
    size_t n;
    text = human_line(text, &n);
    if (n > 200)
        n = 200;
    if (n == 0)
        fprintf(c->o.err, "%s: %s answered with nothing instead of a stream id\n",
                c->o.prog, k->name);
    else
        fprintf(c->o.err, "%s: %s said: %.*s\n", c->o.prog, k->name, (int)n, text);
}

void sp_collect_note_failed(struct sp_collect_kernel *k, int rc, const char *text)
{
    size_t n;
    text = human_line(text, &n);
    if (n)
        snprintf(k->note, sizeof k->note, "its stream did not start: it said: %.*s",
                 (int)(n > 100 ? 100 : n), text);
    else if (rc == USHC_EXIT_REFUSED)
        snprintf(k->note, sizeof k->note, "its stream did not start: nothing listens on "
                 "its shell's port");
    else
        snprintf(k->note, sizeof k->note, "its stream did not start: its shell did not "
                 "answer in time, or not as the protocol wants");
}

void sp_collect_stop_some(struct sp_collect *c, const bool *run, sp_collect_input_fn other)
{
    const char **cmds = sp_collect_zalloc(c, c->n, sizeof *cmds);
    char **texts = sp_collect_zalloc(c, c->n, sizeof *texts);
    int *rcs = sp_collect_zalloc(c, c->n, sizeof *rcs);
    for (unsigned i = 0; i < c->n; i++)
        cmds[i] = "profile stop";
    sp_collect_run_all(c, cmds, run, texts, rcs, other);
    for (unsigned i = 0; i < c->n; i++)
        free(texts[i]);
    free(cmds);
    free(texts);
    free(rcs);
}

/* ---- restarts, believed only from the shell ------------------------------ */

/* Kernel k's stream seems replaced (why): ask its shell `profile status`
 * from the stream's destination, which names the stream running there or
 * the last one. Once at a time, and at most every SP_COLLECT_PROBE_GAP_MS: a
 * flood of forged datagrams costs the kernel one request a second. */
void sp_collect_suspect(struct sp_collect_kernel *k, uint64_t now, const char *why)
{
    struct sp_collect_probe *p = &k->probe;
    k->forged++;                    /* until the shell says otherwise */
    if (k->state != SP_COLLECT_STREAMING || p->on ||
        (p->done_ms && now - p->done_ms < SP_COLLECT_PROBE_GAP_MS))
        return;
    static const char cmd[] = "profile status";
    p->len = ushc_build_request(&k->c, p->req, sizeof p->req, cmd, sizeof cmd - 1);
    if (!p->len)
        return;
    snprintf(p->why, sizeof p->why, "%s", why);
    p->on = true;
    p->sends = 1;
    p->sent_ms = now;
    (void)shell_send(k, p->req, p->len);
}

/* What `profile status`, asked from the stream's destination (which is
 * told ids), says of stream id: 1 it runs there, or it ran last (its END
 * was lost): no restart; 0 another stream runs or ran last, or none
 * since boot: the kernel restarted; -1 an answer this does not know
 * (said, sp_collect_ctl). */
static int status_says(struct sp_collect *c, struct sp_collect_kernel *k, const char *t,
                       uint32_t id)
{
    struct sctl_line l;
    if (sp_collect_ctl(c, k, t, &l) != 0 || l.sl_op != SCTL_OP_STATUS || l.sl_result != SCTL_OK)
        return -1;
    if (l.sl_state == SCTL_ST_STREAMING || l.sl_state == SCTL_ST_ENDING)
        return (l.sl_have & SCTL_HAVE_ID) && l.sl_id == id;
    if (l.sl_state == SCTL_ST_ENDED)
        return (l.sl_have & SCTL_HAVE_LAST) && l.sl_last == id;
    return 0;
}

/* The shell's answer to the probe (text, n bytes): true when it says k
 * restarted. */
static bool probe_answer(struct sp_collect *c, struct sp_collect_kernel *k, const uint8_t *text,
                         size_t n, uint64_t now)
{
    char t[USHP_CHUNK_MAX + 1];
    memcpy(t, text, n);
    t[n] = 0;
    k->probe.on = false;
    k->probe.done_ms = now;
    int says = status_says(c, k, t, k->s.id);
    if (says == 0) {
        k->forged--;                /* the kernel's own, after all */
        return true;
    } else if (says == 1 && !k->said_forged) {
        k->said_forged = true;
        fprintf(c->o.err, "%s: kernel %s: datagrams from its address that are not its "
                "stream's (%s), though its shell says its stream runs: ignored\n",
                c->o.prog, k->name, k->probe.why);
    }
    return false;
}

/* The probe's request again after a second without its answer; after
 * three sends, given up on: nothing is believed, and a shell that stays
 * silent is the silence check's business. */
void sp_collect_probe_due(struct sp_collect_kernel *k, uint64_t now)
{
    struct sp_collect_probe *p = &k->probe;
    if (!p->on || now - p->sent_ms < USHC_RETRY_MS)
        return;
    if (p->sends == USHC_RETRIES) {
        p->on = false;
        p->done_ms = now;
        return;
    }
    p->sends++;
    p->sent_ms = now;
    (void)shell_send(k, p->req, p->len);
}


void sp_collect_keepalive(struct sp_collect_kernel *k, uint64_t now)
{
    uint8_t req[USHP_HDR_LEN + USHP_AUTH_OVERHEAD + USHP_CMD_MAX];
    char cmd[64];
    int n = snprintf(cmd, sizeof cmd, "profile keepalive 0x%08x", k->s.id);
    size_t len = ushc_build_request(&k->c, req, sizeof req, cmd, (size_t)n);
    /* A keep-alive lost is covered by the next, a second later: the
     * kernel waits PSTR_KEEPALIVE_MS for one. */
    if (len)
        (void)shell_send(k, req, len);
    k->last_keepalive_ms = now;
}

/* A datagram from kernel k's shell: any reply that verifies says the
 * shell is alive; the one the probe awaits is its answer. */
bool sp_collect_shell_datagram(struct sp_collect *c, struct sp_collect_kernel *k, const void *d,
                               size_t len, uint64_t now)
{
    struct ushp_hdr h;
    const uint8_t *pl;
    int v = ushc_verify_reply(&k->c, d, len, &h, &pl);
    if (v != USHC_REPLY_OK && v != USHC_REPLY_OTHER)
        return false;
    k->last_reply_ms = now;
    /* The status is two lines, its control line first: one chunk, the last. */
    return v == USHC_REPLY_OK && k->probe.on && h.chunk == 0 && (h.flags & USHP_FLAG_LAST) &&
           probe_answer(c, k, pl, h.len, now);
}

