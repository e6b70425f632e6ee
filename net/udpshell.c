/* net/udpshell.c: the UDP shell (docs/udpshell.md). A request datagram
 * carries one command line; the command runs in this shell's own task and
 * its output goes back as reply chunks while it is being printed.
 *
 * Two contexts:
 *   - the UDP handler runs in the network receive task. It only checks the
 *     datagram, queues the request (bounded; full: dropped and counted) and
 *     wakes the shell task. Running a command there would stall every
 *     other frame for as long as the command takes (a `profile 2000`).
 *   - the shell task takes requests one at a time and runs them with
 *     the line runner the board glue gave (the shell's shell_run_line),
 *     the same as the serial shell, which is a different
 *     task and keeps working meanwhile.
 *
 * Retransmits: a client that misses part of a reply sends its request
 * again with the same sequence number. For each of the last USH_SENDERS
 * senders (ip, port) the shell keeps the last request (its sequence number
 * and command) and its reply's output (up to USH_KEEP_MAX bytes); a repeat
 * of that request, the same sequence number AND the same command, within
 * USH_KEEP_NS of the reply, is answered from the copy, chunk for chunk the
 * same datagrams, without running the command again. Anything else runs:
 * a new client that reuses an old one's port and starts at the same
 * sequence number sends a different command, or sends it later, and must
 * get its own answer, never the old client's. A repeat that arrives while its
 * request is still queued or running is dropped (the reply is on its way;
 * if it gets lost, the next retransmit finds the copy). A reply longer
 * than USH_KEEP_MAX is answered on retransmit with its first USH_KEEP_MAX
 * bytes and a line saying the rest was not kept, flagged last there.
 *
 * Authenticated mode (ushkey=, udpshell_start_auth; with ushid=, every tag
 * under that id's key, so kernels sharing a key are not interchangeable):
 * the handler checks
 * each request's tag before anything else and refuses, silently and
 * counted, an untagged or wrongly tagged one. A tagged challenge is
 * answered at once with the shell's boot epoch (drawn from the entropy
 * source at start, so no two boots and no two kernels share one); a
 * request tagged for another epoch (a previous boot, another kernel with
 * the same key) is refused. Then its nonce must be fresh in the one
 * window of the boot (net/udpshell_fresh.h), whoever sent it. A nonce
 * already seen is refused, with one exception the protocol needs: the
 * same (nonce, ip, port, seq) as a recently accepted request is its
 * retransmit, and goes to the shell task marked resend-only: answered
 * from the kept reply if there still is one, else dropped, never run. So
 * a captured request runs at most once, from whichever address: the tag
 * does not cover the sender, so whichever copy arrives first runs and its
 * sender gets the reply; later copies from that same (ip, port) are
 * answered from the kept reply (at most USH_RESENDS times), others
 * refused. A nonce is recorded only once its request is queued: one
 * dropped for a full queue must be acceptable when the client resends it.
 *
 * What the shell drops (malformed datagrams, a full queue, refused
 * requests) it counts itself, in struct udpshell_stats: `net` prints them
 * on the shell's own lines. */
#include "hal/entropy.h"
#include "kernel/console.h"
#include "kernel/sched.h"
#include "kernel/spinlock.h"
#include "kernel/time.h"
#include "lib/parse.h"
#include "lib/sha256.h"
#include "lib/string.h"
#include "mm/heap.h"
#include "net/net.h"
#include "net/udpshell.h"
#include "net/udpshell_fresh.h"

#define USH_SEND_WAIT_NS 2000000000ull  /* give up on a datagram after this */

struct ush_req {
    uint32_t ip;
    uint16_t port;
    uint32_t seq;
    uint64_t nonce;                 /* authenticated mode; else 0 */
    bool resend_only;               /* a retransmit by nonce: never run */
    char line[USHP_CMD_MAX + 1];
};

struct ush_cache {
    bool used, complete;            /* complete: the command finished */
    uint32_t ip, seq;
    uint16_t port;
    uint64_t nonce;                 /* the request's (authenticated mode) */
    uint64_t stamp;                 /* last use, for replacement */
    uint64_t done_ns;               /* time_ns() when the reply was finished */
    char line[USHP_CMD_MAX + 1];    /* the request's command, as received */
    char *buf;                      /* kept output, cap bytes */
    size_t cap, len;
    uint64_t total;                 /* output bytes the command printed */
    unsigned resends;               /* times sent again: at most USH_RESENDS */
    uint16_t id;                    /* its reply id */
    uint16_t cut_id;                /* the id of its copy cut at USH_KEEP_MAX; 0: none yet */
};

static struct {
    uint16_t port;
    spinlock_t lock;                /* queue, running and fresh, shared with the handler */
    struct ush_req q[USH_QUEUE];
    unsigned head, n;
    bool running;
    uint32_t run_ip, run_seq;
    uint16_t run_port;
    uint64_t run_nonce;
    struct waitq wq;
    struct udpshell_stats st;       /* relaxed atomics: statistics only */
    /* Authenticated mode. The key and epoch are set before the port is
     * bound and never change; the window is the handler's, under the lock. */
    bool auth;
    uint8_t key[USHP_KEY_LEN];      /* ushid='s key (ushp_id_key) when given */
    char id[USHP_ID_MAX + 1];       /* ushid=, or "" */
    uint64_t epoch;                 /* this boot's, never 0 */
    struct ushf fresh;
    /* The rest belongs to the shell task alone. */
    struct ush_cache cache[USH_SENDERS];
    struct task *req_task;          /* the task running a request, or NULL */
    uint32_t req_ip;                /* and that request's sender */
    uint16_t req_port;
    uint64_t clock;
    uint16_t last_id;               /* the last reply id given (0 is never one) */
    struct ushp_chunker ch;         /* 1.4 KB: kept off the task stack */
} ush = { .lock = SPINLOCK_INIT("udpshell-queue"), .wq = WAITQ_INIT("udpshell") };

/* Set once at boot, before the port is bound (udpshell_set_runner). */
static udpshell_run_fn ush_runner;

#define USH_COUNT(field) __atomic_fetch_add(&ush.st.field, 1, __ATOMIC_RELAXED)

/* ---- receive side: the network receive task ---- */

/* The same request: sender and seq, and in the authenticated mode the
 * nonce (a new nonce is a new request, whatever its seq). */
static bool ush_same(const struct ush_req *r, uint32_t ip, uint16_t port, uint32_t seq,
                     uint64_t nonce)
{
    return r->ip == ip && r->port == port && r->seq == seq && r->nonce == nonce;
}

/* Authenticated mode's gate, before the lock: the tag. False: refused,
 * counted. Open mode: a tagged request is refused (no key to check it). */
static bool ush_auth_ok(const struct ushp_hdr *h, const void *data, size_t len)
{
    bool tagged = h->flags & USHP_FLAG_AUTH;
    if (!ush.auth) {
        if (tagged)
            USH_COUNT(no_key);
        return !tagged;
    }
    if (!tagged) {
        USH_COUNT(unauth);
        return false;
    }
    if (!ushp_auth_verify(ush.key, data, len)) {
        USH_COUNT(bad_tag);
        return false;
    }
    return true;
}

/* Tell a key holder this boot's epoch (and the highest nonce accepted,
 * so that its nonces start above it). Answered from the receive task: a
 * 72-byte datagram, sent once; a lost one is the client's to ask again.
 * Nothing is run, so a replayed challenge gets the same answer, to its
 * (claimed) sender, no larger than the challenge. */
static void ush_challenge(uint32_t ip, uint16_t port, const struct ushp_hdr *h)
{
    uint8_t d[USHP_CHALLENGE_DGRAM];
    unsigned long f = spin_lock(&ush.lock);
    uint64_t highest = ush.fresh.highest;
    spin_unlock(&ush.lock, f);
    size_t n = ushp_build_challenge_reply(d, sizeof d, ush.key, h, ush.epoch, highest);
    USH_COUNT(challenges);
    (void)udp_send(ip, ush.port, port, d, n);
}

/* Authenticated mode, under ush.lock: may the request (nonce fresh, or
 * not) go on? Sets *resend_only for a retransmit of an accepted request;
 * false if refused (counted). */
static bool ush_fresh_ok(uint32_t ip, uint16_t port, const struct ushp_hdr *h,
                         bool *resend_only)
{
    struct ushf_req q = { .nonce = h->nonce, .ip = ip, .port = port, .seq = h->seq };
    *resend_only = false;
    if (ushf_fresh(&ush.fresh, h->nonce))
        return true;
    if (!ushf_recent(&ush.fresh, &q)) {
        USH_COUNT(replayed);
        return false;
    }
    *resend_only = true;            /* the client's retransmit (or a replay of it) */
    return true;
}

/* A request already queued or running (same sender, seq and nonce): its
 * reply is on the way, or will be. Under ush.lock. */
static bool ush_in_hand(uint32_t ip, uint16_t port, const struct ushp_hdr *h)
{
    if (ush.running && ush.run_ip == ip && ush.run_port == port && ush.run_seq == h->seq &&
        ush.run_nonce == h->nonce)
        return true;
    for (unsigned i = 0; i < ush.n; i++)
        if (ush_same(&ush.q[(ush.head + i) % USH_QUEUE], ip, port, h->seq, h->nonce))
            return true;
    return false;
}

/* Queue the request, under ush.lock, and record its nonce (authenticated
 * mode) only now: one dropped for a full queue must be acceptable when
 * the client resends it. False if the queue is full (counted). */
static bool ush_enqueue(uint32_t ip, uint16_t port, const struct ushp_hdr *h,
                        const uint8_t *payload, bool resend_only)
{
    if (ush.n == USH_QUEUE) {
        USH_COUNT(queue_full);
        return false;
    }
    struct ush_req *r = &ush.q[(ush.head + ush.n) % USH_QUEUE];
    r->ip = ip;
    r->port = port;
    r->seq = h->seq;
    r->nonce = h->nonce;
    r->resend_only = resend_only;
    memcpy(r->line, payload, h->len);       /* h->len <= USHP_CMD_MAX: parsed */
    r->line[h->len] = 0;
    ush.n++;
    if (ush.auth && !resend_only) {
        struct ushf_req q = { .nonce = h->nonce, .ip = ip, .port = port, .seq = h->seq };
        ushf_accept(&ush.fresh, &q);
    }
    return true;
}

/* The tag check, before the lock: true if the request may go on to be
 * queued (a challenge is answered here and goes no further). */
static bool ush_admit(uint32_t ip, uint16_t port, const struct ushp_hdr *h,
                      const void *data, size_t len)
{
    if (!ush_auth_ok(h, data, len))
        return false;               /* no reply: a forger learns nothing */
    if (!ush.auth)
        return true;
    if (h->flags & USHP_FLAG_CHALLENGE) {
        ush_challenge(ip, port, h);
        return false;
    }
    if (h->epoch != ush.epoch) {
        USH_COUNT(wrong_epoch);     /* a previous boot's, or another kernel's */
        return false;
    }
    return true;
}

static void ush_input(void *ctx, uint32_t src_ip, uint16_t src_port,
                      const void *data, size_t len)
{
    struct ushp_hdr h;
    const uint8_t *payload;
    /* A reply is never run, in either mode: answering one would let a
     * single forged datagram set two shells answering each other forever.
     * In the authenticated mode the flag is inside the tag, so one of our
     * own replies sent back at us cannot pass for a request either. */
    if (ushp_is_reply(data, len)) {
        USH_COUNT(replies);
        return;
    }
    int e = ushp_parse(data, len, &h, &payload);
    if (e != 0) {
        USH_COUNT(bad[-1 - e]);     /* e is one of the USHP_NREASONS reasons */
        return;
    }
    if (!ush_admit(src_ip, src_port, &h, data, len))
        return;
    bool resend_only = false, queued = false;
    unsigned long f = spin_lock(&ush.lock);
    if (!ush.auth || ush_fresh_ok(src_ip, src_port, &h, &resend_only)) {
        if (ush_in_hand(src_ip, src_port, &h))
            USH_COUNT(in_hand);     /* its reply is on the way, or will be */
        else
            queued = ush_enqueue(src_ip, src_port, &h, payload, resend_only);
    }
    spin_unlock(&ush.lock, f);
    if (!queued)
        return;
    /* A retransmit by nonce is counted when it is answered (ush_run): one
     * whose kept reply is gone is only `replayed`, never a request. */
    if (!resend_only)
        USH_COUNT(requests);
    waitq_wake_all(&ush.wq);
}

/* ---- the shell task ---- */

static bool ush_have_work(void *arg) { return ush.n > 0; }

/* Take the next request, and mark it running (under the lock, so the
 * handler never sees it in neither place). False if none is queued. */
static bool ush_take(struct ush_req *out)
{
    unsigned long f = spin_lock(&ush.lock);
    if (ush.n == 0) {
        spin_unlock(&ush.lock, f);
        return false;
    }
    *out = ush.q[ush.head];
    ush.head = (ush.head + 1) % USH_QUEUE;
    ush.n--;
    ush.running = true;
    ush.run_ip = out->ip;
    ush.run_port = out->port;
    ush.run_seq = out->seq;
    ush.run_nonce = out->nonce;
    spin_unlock(&ush.lock, f);
    return true;
}

static void ush_done(void)
{
    unsigned long f = spin_lock(&ush.lock);
    ush.running = false;
    spin_unlock(&ush.lock, f);
}

struct ush_dest {
    uint32_t ip;
    uint16_t port;
};

/* Send one reply datagram. A full TX ring or an unresolved next hop is a
 * moment's wait, not a lost chunk: retry for up to USH_SEND_WAIT_NS. */
static void ush_send(void *ctx, const void *dgram, size_t len)
{
    const struct ush_dest *d = ctx;
    uint64_t give_up = time_ns() + USH_SEND_WAIT_NS;
    for (;;) {
        int rc = udp_send(d->ip, ush.port, d->port, dgram, len);
        if (rc == 0)
            return;
        if (rc == NET_QUEUED) {
            /* Parked until ARP answers (8 frames at most): let the answer
             * come before sending the next chunk into the same queue. */
            sleep_ms(10);
            return;
        }
        if ((rc != NET_ERR_NOBUF && rc != NET_ERR_NOARP) || time_ns() > give_up)
            return;                 /* the client retransmits; the copy is kept */
        if (rc == NET_ERR_NOARP)
            sleep_ms(10);
        else
            yield();
    }
}

/* The chunker for a reply to seq (and nonce, authenticated). */
static void ush_chunker_start(uint32_t seq, uint16_t id, uint64_t nonce, struct ush_dest *d)
{
    if (ush.auth)
        ushp_chunker_init_auth(&ush.ch, seq, id, nonce, ush.epoch, ush.key, ush_send, d);
    else
        ushp_chunker_init(&ush.ch, seq, id, ush_send, d);
}

/* A reply id for one run's output: a client that sees two ids for one seq
 * knows the command ran twice and refuses to mix the two. They repeat only
 * after 65535 others, far beyond any client's retry window. */
static uint16_t ush_new_id(void)
{
    if (++ush.last_id == 0)
        ++ush.last_id;
    return ush.last_id;
}

static struct ush_cache *ush_cache_lookup(uint32_t ip, uint16_t port)
{
    for (int i = 0; i < USH_SENDERS; i++)
        if (ush.cache[i].used && ush.cache[i].ip == ip && ush.cache[i].port == port)
            return &ush.cache[i];
    return 0;
}

static struct ush_cache *ush_cache_find(uint32_t ip, uint16_t port)
{
    struct ush_cache *victim = &ush.cache[0];
    for (int i = 0; i < USH_SENDERS; i++) {
        struct ush_cache *c = &ush.cache[i];
        if (c->used && c->ip == ip && c->port == port)
            return c;
        if (!c->used)
            victim = c;
        else if (victim->used && c->stamp < victim->stamp)
            victim = c;
    }
    /* A new sender takes the oldest slot: its old reply is no longer
     * anyone's to retransmit, so its memory goes back now. */
    kfree(victim->buf);
    victim->buf = 0;
    victim->cap = victim->len = victim->total = 0;
    victim->used = false;
    victim->ip = ip;
    victim->port = port;
    return victim;
}

static void ush_cache_append(struct ush_cache *c, const char *s, size_t n)
{
    c->total += n;
    if (c->len + n > c->cap && c->cap < USH_KEEP_MAX) {
        size_t cap = c->cap ? c->cap : 4096;
        while (cap < c->len + n && cap < USH_KEEP_MAX)
            cap *= 2;
        char *nb = kmalloc(cap);
        if (nb) {                   /* no memory: keep what fits already */
            if (c->len)
                memcpy(nb, c->buf, c->len);
            kfree(c->buf);
            c->buf = nb;
            c->cap = cap;
        }
    }
    size_t k = c->cap - c->len < n ? c->cap - c->len : n;
    if (k) {
        memcpy(c->buf + c->len, s, k);
        c->len += k;
    }
}

/* The printer a command writes to: keeps a copy, and feeds the chunker,
 * which sends each 1400 bytes as soon as they are there. */
struct ush_out {
    struct printer pr;
    struct ush_cache *c;
};

static void ush_out_write(struct printer *p, const char *s, size_t n)
{
    struct ush_out *o = (struct ush_out *)p;
    ush_cache_append(o->c, s, n);
    ushp_chunker_write(&ush.ch, s, n);
}

/* The chunker as a printer, for the note after a cut-off copy. */
static void ush_chunker_pr_write(struct printer *p, const char *s, size_t n)
{
    ushp_chunker_write(&ush.ch, s, n);
}

static void ush_resend(struct ush_cache *c, struct ush_dest *d)
{
    struct printer chp = { ush_chunker_pr_write };
    /* A client needs a few resends at most (it sends 3 per silence); more
     * copies of one request are a flood, and each would draw the whole
     * reply again (up to 1 MiB) towards an address nobody checked. */
    if (c->resends >= USH_RESENDS) {
        USH_COUNT(resends_spent);
        return;
    }
    c->resends++;
    USH_COUNT(resent);
    /* A copy cut at USH_KEEP_MAX ends otherwise than the reply did: it
     * goes under an id of its own, so it is never mixed with the original;
     * one id for every such copy of this reply, which are all the same
     * datagrams. */
    uint16_t id = c->id;
    if (c->total > c->len) {
        if (c->cut_id == 0)
            c->cut_id = ush_new_id();
        id = c->cut_id;
    }
    ush_chunker_start(c->seq, id, c->nonce, d);
    ushp_chunker_write(&ush.ch, c->buf, c->len);
    if (c->total > c->len)
        pr_printf(&chp, "\nudpshell: reply was %lu bytes; only the first %zu are "
                  "kept for retransmission\n", (unsigned long)c->total, c->len);
    ushp_chunker_finish(&ush.ch);
}

/* A retransmit of the request whose reply c keeps: same sequence number,
 * same command, and recent. */
static bool ush_is_retransmit(const struct ush_cache *c, const struct ush_req *r)
{
    return c->used && c->complete && c->seq == r->seq && c->nonce == r->nonce &&
           strcmp(c->line, r->line) == 0 && time_ns() - c->done_ns < USH_KEEP_NS;
}

static void ush_run(struct ush_req *r)
{
    struct ush_dest d = { r->ip, r->port };
    if (r->resend_only) {
        /* Its nonce was used: the kept reply answers it, or nothing does.
         * Running it would run a captured request twice. */
        struct ush_cache *k = ush_cache_lookup(r->ip, r->port);
        if (k && ush_is_retransmit(k, r)) {
            USH_COUNT(requests);
            k->stamp = ++ush.clock;
            ush_resend(k, &d);
        } else {
            USH_COUNT(replayed);
        }
        return;
    }
    struct ush_cache *c = ush_cache_find(r->ip, r->port);
    c->stamp = ++ush.clock;
    if (ush_is_retransmit(c, r)) {
        ush_resend(c, &d);
        return;
    }
    if (c->used && c->complete && c->seq == r->seq)
        USH_COUNT(stale);           /* same seq, other command or too late: run it */
    c->used = true;
    c->complete = false;
    c->seq = r->seq;
    c->nonce = r->nonce;
    c->len = 0;
    c->total = 0;
    c->resends = 0;
    c->id = ush_new_id();
    c->cut_id = 0;
    strlcpy(c->line, r->line, sizeof c->line);

    /* A line typed with a newline (nc, echo) is still one command. */
    size_t n = strlen(r->line);
    while (n && (r->line[n - 1] == '\n' || r->line[n - 1] == '\r'))
        r->line[--n] = 0;

    struct ush_out out = { { ush_out_write }, c };
    ush_chunker_start(r->seq, c->id, r->nonce, &d);
    ush.req_ip = r->ip;
    ush.req_port = r->port;
    ush.req_task = task_current();
    ush_runner(r->line, &out.pr);
    ush.req_task = NULL;
    ushp_chunker_finish(&ush.ch);
    c->done_ns = time_ns();
    c->complete = true;
}

void udpshell_set_runner(udpshell_run_fn run)
{
    ush_runner = run;
}

/* Only the task running the request asks, and only it writes these: a
 * command the serial shell runs at the same time is another task, and
 * gets false. */
bool udpshell_requester(uint32_t *ip)
{
    uint16_t port;
    return udpshell_requester_addr(ip, &port);
}

bool udpshell_requester_addr(uint32_t *ip, uint16_t *port)
{
    if (!ush.req_task || ush.req_task != task_current())
        return false;
    *ip = ush.req_ip;
    *port = ush.req_port;
    return true;
}

/* The key and the epoch are set before the port is bound and never change:
 * no lock. */
bool udpshell_keyed(struct hmac_sha256 *m, uint64_t *epoch)
{
    if (!ush.auth)
        return false;
    hmac_sha256_init(m, ush.key, USHP_KEY_LEN);
    *epoch = ush.epoch;
    return true;
}

bool udpshell_run_next(void)
{
    struct ush_req r;
    if (!ush_take(&r))
        return false;
    ush_run(&r);
    ush_done();
    return true;
}

static void ush_task(void *arg)
{
    for (;;) {
        waitq_wait(&ush.wq, ush_have_work, NULL);
        udpshell_run_next();
    }
}

_Static_assert(sizeof(struct udpshell_stats) % sizeof(uint64_t) == 0,
               "udpshell_stats is read word by word: uint64_t fields only");

void udpshell_get_stats(struct udpshell_stats *out)
{
    const uint64_t *src = (const uint64_t *)&ush.st;
    uint64_t *dst = (uint64_t *)out;
    for (size_t i = 0; i < sizeof *out / sizeof(uint64_t); i++)
        dst[i] = __atomic_load_n(&src[i], __ATOMIC_RELAXED);
}

uint64_t udpshell_bad_total(const struct udpshell_stats *s)
{
    uint64_t n = 0;
    for (int i = 0; i < USHP_NREASONS; i++)
        n += s->bad[i];
    return n;
}

/* `net`'s udpshell lines. "bad udpshell N" keeps the name it had when the
 * stack counted it, which scripts grep for. */
static void ush_print_stats(struct printer *p)
{
    struct udpshell_stats s;
    udpshell_get_stats(&s);
    pr_printf(p, "udpshell port %u: requests %lu, resent from the kept reply %lu, "
              "resends spent %lu, retransmits in hand %lu, not replayed %lu\n"
              "udpshell drops: bad udpshell %lu "
              "(short %lu, magic %lu, len %lu, reserved %lu, too long %lu, challenge %lu), "
              "queue full %lu, replies %lu\n",
              ush.port, s.requests, s.resent, s.resends_spent, s.in_hand, s.stale,
              udpshell_bad_total(&s),
              s.bad[-1 - USHP_ESHORT], s.bad[-1 - USHP_EMAGIC], s.bad[-1 - USHP_ELEN],
              s.bad[-1 - USHP_ERESERVED], s.bad[-1 - USHP_ETOOLONG],
              s.bad[-1 - USHP_ECHALLENGE], s.queue_full,
              s.replies);
    if (ush.auth && ush.id[0])
        pr_printf(p, "udpshell auth: HMAC-SHA256 key, kernel id %s, boot epoch %016lx", ush.id,
                  ush.epoch);
    else if (ush.auth)
        pr_printf(p, "udpshell auth: HMAC-SHA256 key, boot epoch %016lx", ush.epoch);
    else
        pr_puts(p, "udpshell auth: none (open)");
    pr_printf(p, "; refused: unauthenticated %lu, bad tag %lu, wrong epoch %lu, replayed %lu, "
              "tagged without a key %lu; challenges answered %lu\n", s.unauth, s.bad_tag,
              s.wrong_epoch, s.replayed, s.no_key, s.challenges);
}

static struct net_app_stats ush_net_stats = { ush_print_stats, 0 };

int udpshell_start_auth(uint16_t port, const uint8_t key[USHP_KEY_LEN], const char *id)
{
    size_t idn = id ? strlen(id) : 0;
    if (id && ushp_check_id(id, idn) < 0) {
        kprintf("udpshell: ushid must be %s: the authenticated shell does not start\n",
                USHP_ID_RULE);
        return -1;
    }
    /* What matters is that epochs differ across boots and across kernels
     * sharing the key, so that a request captured on one is refused on
     * every other; drawn from the entropy source, they do (with
     * probability 1 - 2^-64), where a clock or a counter would repeat on
     * two machines or two boots started alike. */
    uint64_t epoch = 0;
    for (int i = 0; i < 4 && epoch == 0; i++)
        if (!entropy_get(&epoch, sizeof epoch))
            break;
    if (epoch == 0) {
        kprintf("udpshell: no entropy for the boot epoch (source: %s): the authenticated "
                "shell does not start\n", entropy_source() ? entropy_source() : "none");
        return -1;
    }
    /* Before the bind: no request may ever see the shell without its key. */
    if (id)
        ushp_id_key(key, id, ush.key);
    else
        memcpy(ush.key, key, USHP_KEY_LEN);
    memcpy(ush.id, id ? id : "", idn + 1);
    ush.epoch = epoch;
    ushf_init(&ush.fresh);
    ush.auth = true;
    if (udpshell_start(port) == 0)
        return 0;
    /* Not started: nothing may look keyed (udpshell_keyed would hand out
     * the wiped, all-zero key). */
    ush.auth = false;
    ush.epoch = 0;
    ush.id[0] = 0;
    secure_zero(ush.key, sizeof ush.key);
    return -1;
}

int udpshell_start(uint16_t port)
{
    if (!ush_runner) {
        kprintf("udpshell: no line runner given (udpshell_set_runner): not started\n");
        return -1;
    }
    ush.port = port;
    int rc = udp_bind(port, ush_input, NULL);
    if (rc != 0) {
        kprintf("udpshell: cannot bind UDP port %u (error %d): not started\n", port, rc);
        return -1;
    }
    if (!task_spawn("udpshell", ush_task, NULL, TASK_ANY_CPU, 0)) {
        udp_unbind(port);
        kprintf("udpshell: no memory for its task: not started\n");
        return -1;
    }
    net_app_stats_register(&ush_net_stats);
    return 0;
}
