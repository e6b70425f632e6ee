/* tools/fleet/sim.c: one simulated kernel (tools/fleet/sim.h).
 *
 * A record's content is a function of (kernel, CPU, index), so nothing
 * is kept per record: each CPU only knows how many it has sent, and the
 * records due by now are encoded when a batch of them is full or a
 * flush interval has passed, exactly as the kernel's stream task drains
 * its rings. Sequence numbers are given in sending order, so the only
 * reordering a collector sees is the one injected.
 *
 * Fleet generator: prefix fleet_. */
#define _GNU_SOURCE
#include "tools/fleet/sim.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NS_PER_S 1000000000ull
#define NS_PER_MS 1000000ull
/* Records of full depth a BATCH always holds (uapi/profile_stream.h). */
#define FLEET_BATCH_SURE ((PSTR_DGRAM_MAX - PSTR_HDR_LEN - PSTR_BATCH_HDR) / PSTR_REC_MAX_CPU)

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ x >> 31;
}

static uint64_t next_rng(struct fleet_kernel *k)
{
    k->rng += 0x9e3779b97f4a7c15ull;
    return mix64(k->rng);
}

/* A uniform draw in [0, 1). */
static double draw(struct fleet_kernel *k)
{
    return (double)(next_rng(k) >> 11) * (1.0 / 9007199254740992.0);
}

const char *fleet_cfg_check(const struct fleet_cfg *cfg)
{
    if (cfg->cpus < 1 || cfg->cpus > FLEET_CPUS_MAX)
        return "cpus out of range (1-8)";
    if (cfg->hz < 1 || cfg->hz > 1000000)
        return "rate out of range (1-1000000 Hz per CPU)";
    if (!(cfg->loss >= 0 && cfg->dup >= 0 && cfg->reorder >= 0 &&
          cfg->loss + cfg->dup + cfg->reorder <= 1))
        return "loss, duplicates and reordering out of range (each 0-1, together at most 1)";
    if (cfg->nbuilds < 1)
        return "no build id";
    for (unsigned i = 0; i < cfg->nbuilds; i++) {
        const char *b = cfg->build_ids[i];
        if (strlen(b) != PSTR_BUILD_ID_HEX || strspn(b, "0123456789abcdef") != PSTR_BUILD_ID_HEX)
            return "a build id is not 40 lowercase hex digits";
    }
    if (cfg->nstacks < 1 || cfg->nstacks > FLEET_STACKS_MAX)
        return "stacks out of range (1-256)";
    for (unsigned i = 0; i < cfg->nstacks; i++)
        if (cfg->depths[i] < 1 || cfg->depths[i] > PSTR_FRAMES)
            return "a stack's depth out of range (1-8)";
    return "";
}

void fleet_kernel_init(struct fleet_kernel *k, const struct fleet_cfg *cfg, unsigned idx,
                       fleet_send_fn send, void *ctx)
{
    memset(k, 0, sizeof *k);
    k->cfg = cfg;
    k->idx = idx;
    k->rng = mix64(cfg->seed ^ (uint64_t)idx << 32 ^ idx);
    k->send = send;
    k->send_ctx = ctx;
}

void fleet_task_name(unsigned idx, uint32_t pid, char *buf, size_t cap)
{
    if (pid == 0)
        snprintf(buf, cap, "idle");
    else
        snprintf(buf, cap, "k%u-t%u", idx, (unsigned)pid);
}

/* now - then, or 0 when then is later (a caller's clock read before a
 * request stamped the kernel with a later one). */
static uint64_t since(uint64_t now, uint64_t then)
{
    return now > then ? now - then : 0;
}

/* ---- sending ------------------------------------------------------------ */

static void out(struct fleet_kernel *k, const void *d, size_t n)
{
    k->held_passed |= k->held_len != 0;
    k->send(k->send_ctx, k->dest_ip, k->dest_port, d, n);
    k->n.datagrams++;
}

/* A held-back BATCH goes out after the datagram made after it: reordered,
 * when one did go out before it (the stream's last, held, goes before the
 * END, in order after all). */
static void release_held(struct fleet_kernel *k)
{
    if (!k->held_len)
        return;
    size_t n = k->held_len;
    k->held_len = 0;
    if (k->held_passed)
        k->n.reordered++;
    k->held_passed = false;
    out(k, k->held, n);
}

/* The datagram in k->w, finished and sent; a BATCH of count records
 * meets the injection first. */
static void emit(struct fleet_kernel *k, bool batch)
{
    size_t n = pstr_finish(&k->w);
    k->seq++;
    if (!batch) {
        out(k, k->w.buf, n);
        release_held(k);
        return;
    }
    const struct fleet_cfg *c = k->cfg;
    double r = draw(k);
    k->n.batches++;
    k->n.records += k->w.count;
    if (r < c->loss) {
        k->n.lost_dgrams++;
        k->n.lost_records += k->w.count;
        return;
    }
    if (r < c->loss + c->dup) {
        k->n.dups++;
        out(k, k->w.buf, n);
        out(k, k->w.buf, n);
    } else if (r < c->loss + c->dup + c->reorder && !k->held_len) {
        memcpy(k->held, k->w.buf, n);
        k->held_len = n;
        return;
    } else {
        out(k, k->w.buf, n);
    }
    release_held(k);
}

static void send_meta(struct fleet_kernel *k, uint64_t now_ns)
{
    const struct fleet_cfg *c = k->cfg;
    struct pstr_meta m = { .pid = PSTR_PID_ALL, .ms = k->ms,
                           .period_ns = (uint32_t)(NS_PER_S / c->hz),
                           .cpus = (uint16_t)c->cpus };
    memcpy(m.build_id, c->build_ids[k->idx % c->nbuilds], PSTR_BUILD_ID_HEX + 1);
    snprintf(m.source, sizeof m.source, "tick %uHz", c->hz);
    pstr_begin(&k->w, PSTR_META, 0, k->id, k->seq, now_ns);
    pstr_meta_head(&k->w, &m);
    for (uint32_t pid = 0; pid <= FLEET_TASKS; pid++) {
        char name[PSTR_TASK_MAX + 1];
        fleet_task_name(k->idx, pid, name, sizeof name);
        pstr_add_task(&k->w, pid, name);
    }
    emit(k, false);
}

/* Record i of cpu: its task and stack, from (kernel, cpu, i) alone. */
static bool add_record(struct fleet_kernel *k, unsigned cpu, uint32_t i)
{
    const struct fleet_cfg *c = k->cfg;
    uint64_t h = mix64((uint64_t)k->idx << 40 ^ (uint64_t)cpu << 32 ^ i);
    unsigned s = (unsigned)(h >> 8) % c->nstacks;
    return pstr_add_frames(&k->w, (uint32_t)(h % (FLEET_TASKS + 1)), PSTR_REC_TICK,
                           c->stacks[s], c->depths[s]);
}

/* Records a CPU owes by now_ns (at most the stream's length). */
static uint32_t due(const struct fleet_kernel *k, uint64_t now_ns)
{
    if (!k->confirmed || now_ns <= k->confirm_ns)
        return 0;
    uint64_t t = now_ns - k->confirm_ns;
    return (uint32_t)(t * k->cfg->hz / NS_PER_S);
}

/* cpu's records due by now_ns as batches: every full one, and the last,
 * partial, one too when flush. A generator that fell behind its schedule
 * (a busy host) makes at most FLEET_LAG_NS of records a call, or a full
 * batch where that is more (FLEET_BATCH_MOST: else a batch that waits to
 * be full never would be): it slows down evenly rather than bursting,
 * and what it never made is counted (unmade), not sent. */
static void drain_cpu(struct fleet_kernel *k, unsigned cpu, uint32_t upto, uint64_t now_ns,
                      bool flush)
{
    uint64_t cap = k->cfg->hz * FLEET_LAG_NS / NS_PER_S;
    if (cap < FLEET_BATCH_MOST)         /* a call can always fill a batch */
        cap = FLEET_BATCH_MOST;
    if (upto - k->sent[cpu] > cap)
        upto = k->sent[cpu] + (uint32_t)cap;
    while (k->sent[cpu] != upto) {
        /* Fewer than a batch holds at any depth: not full yet, so not
         * worth encoding before the flush. */
        if (!flush && upto - k->sent[cpu] < FLEET_BATCH_SURE)
            return;
        struct pstr_batch b = { .first = k->sent[cpu] };
        pstr_begin(&k->w, PSTR_BATCH, (uint16_t)cpu, k->id, k->seq, now_ns);
        pstr_batch_head(&k->w, &b);
        uint32_t i = b.first;
        while (i != upto && add_record(k, cpu, i))
            i++;
        if (i == upto && !flush)
            return;                 /* not full: waits for more, or the flush */
        k->sent[cpu] = i;
        emit(k, true);
    }
}

/* The stream's end: what is due goes out, then the END three times. */
static void finish(struct fleet_kernel *k, uint64_t now_ns, uint8_t reason)
{
    uint64_t last = now_ns;
    if (reason == PSTR_END_ELAPSED)
        last = k->t0_ns + k->ms * NS_PER_MS;
    for (unsigned c = 0; c < k->cfg->cpus; c++) {
        uint32_t upto = due(k, last);
        drain_cpu(k, c, upto, now_ns, true);
        k->n.unmade += upto - k->sent[c];
    }
    release_held(k);
    if (k->confirmed) {
        pstr_begin(&k->w, PSTR_END, 0, k->id, k->seq, now_ns);
        pstr_end_head(&k->w, reason);
        for (unsigned c = 0; c < k->cfg->cpus; c++) {
            struct pstr_end_cpu e = { .cpu = (uint16_t)c, .records = k->sent[c] };
            pstr_add_end_cpu(&k->w, &e);
        }
        size_t n = pstr_finish(&k->w);
        for (int copy = 0; copy < 3; copy++)
            out(k, k->w.buf, n);
        k->seq++;
        k->n.stream_ns += since(last, k->confirm_ns);
    }
    k->on = false;
    k->end_reason = reason;
}

void fleet_tick(struct fleet_kernel *k, uint64_t now_ns)
{
    if (!k->on)
        return;
    if (k->ms && since(now_ns, k->t0_ns) >= k->ms * NS_PER_MS) {
        finish(k, now_ns, PSTR_END_ELAPSED);
        return;
    }
    if (since(now_ns, k->ka_ns) >= PSTR_KEEPALIVE_MS * NS_PER_MS) {
        finish(k, now_ns, PSTR_END_TIMEOUT);
        return;
    }
    if (!k->confirmed)
        return;                     /* one META, sent at the start, until then */
    if (since(now_ns, k->meta_ns) >= FLEET_META_NS) {
        send_meta(k, now_ns);
        k->meta_ns = now_ns;
    }
    bool flush = since(now_ns, k->flush_ns) >= FLEET_FLUSH_NS;
    uint32_t upto = due(k, now_ns);
    for (unsigned c = 0; c < k->cfg->cpus; c++)
        drain_cpu(k, c, upto, now_ns, flush);
    if (flush)
        k->flush_ns = now_ns;
}

/* ---- the shell ---------------------------------------------------------- */

static void addr_text(char *buf, size_t cap, uint32_t ip, uint16_t port)
{
    snprintf(buf, cap, "%u.%u.%u.%u:%u", ip >> 24, ip >> 16 & 255, ip >> 8 & 255, ip & 255,
             port);
}

static bool parse_u32(const char *s, int base, uint32_t *v)
{
    char *end;
    if (!*s || *s == '-' || *s == '+')
        return false;
    unsigned long long x = strtoull(s, &end, base);
    if (*end || x > UINT32_MAX)
        return false;
    *v = (uint32_t)x;
    return true;
}

static void start(struct fleet_kernel *k, uint32_t port, uint32_t ms, uint32_t ip,
                  uint64_t now_ns)
{
    k->on = k->ever = true;
    k->confirmed = false;
    k->end_reason = 0;
    do
        k->id = (uint32_t)next_rng(k);
    while (k->id == 0);
    k->seq = 0;
    k->ms = ms;
    k->dest_ip = ip;
    k->dest_port = (uint16_t)port;
    k->t0_ns = k->ka_ns = k->meta_ns = k->flush_ns = now_ns;
    memset(k->sent, 0, sizeof k->sent);
    k->held_len = 0;
    k->n.streams++;
    send_meta(k, now_ns);
}

/* The control line (uapi/stream_ctl.h) of k's answer to op, as the
 * kernel's: the stream's state, and its id to its destination only. */
static struct sctl_line ctl_of(const struct fleet_kernel *k, bool peer, unsigned op,
                               unsigned res, uint64_t now_ns)
{
    struct sctl_line l = { .sl_op = (uint8_t)op, .sl_result = (uint8_t)res };
    l.sl_state = k->on ? SCTL_ST_STREAMING : k->ever ? SCTL_ST_ENDED : SCTL_ST_NONE;
    if (!k->ever)
        return l;
    l.sl_have = SCTL_HAVE_TO | SCTL_HAVE_KIND | SCTL_HAVE_CPUS;
    l.sl_to_ip = k->dest_ip;
    l.sl_to_port = k->dest_port;
    l.sl_kind = SCTL_KIND_CPU;
    l.sl_cpus = (uint16_t)k->cfg->cpus;
    if (peer && k->on) {
        l.sl_have |= SCTL_HAVE_ID;
        l.sl_id = k->id;
    } else if (peer) {
        l.sl_have |= SCTL_HAVE_LAST;
        l.sl_last = k->id;
    }
    if (k->on) {
        l.sl_have |= SCTL_HAVE_LEN | SCTL_HAVE_AGE | SCTL_HAVE_CONFIRMED;
        l.sl_len = k->ms;
        l.sl_age = since(now_ns, k->t0_ns) / NS_PER_MS;
        l.sl_confirmed = k->confirmed;
        if (k->confirmed) {
            l.sl_have |= SCTL_HAVE_KA;
            l.sl_ka = since(now_ns, k->ka_ns) / NS_PER_MS;
        }
    } else {
        l.sl_have |= SCTL_HAVE_REASON;
        l.sl_reason = k->end_reason == PSTR_END_TIMEOUT && !k->confirmed ? SCTL_END_UNCONFIRMED
                                                                          : k->end_reason;
    }
    return l;
}

/* The answer: l's control line, then the human text (fmt). */
static void say(const struct sctl_line *l, char *o, size_t cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void say(const struct sctl_line *l, char *o, size_t cap, const char *fmt, ...)
{
    size_t n = sctl_format(o, cap, l);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o + n, cap - n, fmt, ap);
    va_end(ap);
}

static void cmd_stream(struct fleet_kernel *k, char **w, int nw, uint32_t ip, uint16_t port,
                       uint64_t now_ns, char *o, size_t cap)
{
    uint32_t p, ms = 0;
    char dest[32];
    if (nw < 3 || nw > 5 || !parse_u32(w[2], 10, &p) || p < 1 || p > 65535 ||
        (nw > 3 && (!parse_u32(w[3], 10, &ms) || ms > 86400000))) {
        struct sctl_line l = ctl_of(k, false, SCTL_OP_START, SCTL_INVALID, now_ns);
        say(&l, o, cap, "profile: usage: profile stream PORT [MS [PID|all]] "
            "(PORT 1-65535, MS 0-86400000)\n");
        return;
    }
    if (k->on) {
        bool peer = ip == k->dest_ip && port == k->dest_port;
        struct sctl_line l = ctl_of(k, peer, SCTL_OP_START, SCTL_BUSY, now_ns);
        addr_text(dest, sizeof dest, k->dest_ip, k->dest_port);
        if (peer)
            say(&l, o, cap, "profile: busy (streaming id 0x%08x to %s)\n", k->id, dest);
        else
            say(&l, o, cap, "profile: busy (streaming to %s)\n", dest);
        return;
    }
    start(k, p, ms, ip, now_ns);
    addr_text(dest, sizeof dest, ip, (uint16_t)p);
    struct sctl_line l = ctl_of(k, port == p, SCTL_OP_START, SCTL_OK, now_ns);
    if (port == p)
        say(&l, o, cap, "profile: streaming id 0x%08x to %s, %u ms (fleet)\n", k->id, dest, ms);
    else
        say(&l, o, cap, "profile: streaming to %s, once a keep-alive from there confirms "
            "it\n", dest);
}

static void cmd_keepalive(struct fleet_kernel *k, char **w, int nw, bool peer,
                          uint64_t now_ns, char *o, size_t cap)
{
    uint32_t id;
    struct sctl_line l;
    if (nw != 3 || !parse_u32(w[2], 16, &id)) {
        l = ctl_of(k, peer, SCTL_OP_KEEPALIVE, SCTL_INVALID, now_ns);
        say(&l, o, cap, "profile: usage: profile keepalive ID (hex, 0x1-0xffffffff)\n");
    } else if (!k->on) {
        l = ctl_of(k, peer, SCTL_OP_KEEPALIVE, SCTL_NONE, now_ns);
        say(&l, o, cap, "profile: no stream running\n");
    } else if (!peer) {
        char dest[32];
        addr_text(dest, sizeof dest, k->dest_ip, k->dest_port);
        l = ctl_of(k, peer, SCTL_OP_KEEPALIVE, SCTL_REFUSED, now_ns);
        say(&l, o, cap, "profile: keep-alive refused: a stream is kept alive only from "
            "its destination, %s\n", dest);
    } else if (id != k->id) {
        l = ctl_of(k, peer, SCTL_OP_KEEPALIVE, SCTL_OTHER, now_ns);
        say(&l, o, cap, "profile: stream 0x%08x is not running (0x%08x is)\n", id, k->id);
    } else {
        k->ka_ns = now_ns;
        if (!k->confirmed) {
            k->confirmed = true;
            k->confirm_ns = k->meta_ns = k->flush_ns = now_ns;
        }
        l = ctl_of(k, peer, SCTL_OP_KEEPALIVE, SCTL_OK, now_ns);
        say(&l, o, cap, "profile: stream 0x%08x kept alive\n", id);
    }
}

static void cmd_status(struct fleet_kernel *k, bool peer, uint64_t now_ns, char *o, size_t cap)
{
    char dest[32], who[64];
    struct sctl_line l = ctl_of(k, peer, SCTL_OP_STATUS, SCTL_OK, now_ns);
    addr_text(dest, sizeof dest, k->dest_ip, k->dest_port);
    if (peer)
        snprintf(who, sizeof who, "id 0x%08x to %s", k->id, dest);
    else
        snprintf(who, sizeof who, "to %s", dest);
    if (k->on)
        say(&l, o, cap, "profile: streaming %s, %llu ms (fleet)\n", who,
            (unsigned long long)(since(now_ns, k->t0_ns) / NS_PER_MS));
    else if (k->ever && peer)
        say(&l, o, cap, "profile: no stream running; the last, 0x%08x, ended (fleet)\n", k->id);
    else if (k->ever)
        say(&l, o, cap, "profile: no stream running; the last, %s, ended (fleet)\n", who);
    else
        say(&l, o, cap, "profile: no stream since boot\n");
}

static void cmd_stop(struct fleet_kernel *k, bool peer, uint64_t now_ns, char *o, size_t cap)
{
    if (!k->on) {
        struct sctl_line l = ctl_of(k, peer, SCTL_OP_STOP, SCTL_NONE, now_ns);
        say(&l, o, cap, "profile: no stream running\n");
        return;
    }
    finish(k, now_ns, PSTR_END_STOPPED);
    /* The stream just ended: its id is id=, as the kernel's stop says. */
    struct sctl_line l = ctl_of(k, false, SCTL_OP_STOP, SCTL_OK, now_ns);
    if (peer) {
        l.sl_have |= SCTL_HAVE_ID;
        l.sl_id = k->id;
        say(&l, o, cap, "profile: stream 0x%08x stopped\n", k->id);
    } else {
        say(&l, o, cap, "profile: stream stopped\n");
    }
}

void fleet_shell(struct fleet_kernel *k, const char *cmd, size_t cmd_len, uint32_t from_ip,
                 uint16_t from_port, uint64_t now_ns, char *o, size_t cap)
{
    char line[256], *w[8], *save = NULL;
    int nw = 0;
    if (cmd_len >= sizeof line)
        cmd_len = sizeof line - 1;
    memcpy(line, cmd, cmd_len);
    line[cmd_len] = 0;
    for (char *t = strtok_r(line, " \t\r\n", &save); t && nw < 8;
         t = strtok_r(NULL, " \t\r\n", &save))
        w[nw++] = t;
    bool peer = k->ever && from_ip == k->dest_ip && from_port == k->dest_port;
    if (nw < 2 || strcmp(w[0], "profile") != 0)
        snprintf(o, cap, "fleet: only `profile stream|keepalive|status|stop` here\n");
    else if (strcmp(w[1], "stream") == 0)
        cmd_stream(k, w, nw, from_ip, from_port, now_ns, o, cap);
    else if (strcmp(w[1], "keepalive") == 0)
        cmd_keepalive(k, w, nw, peer, now_ns, o, cap);
    else if (strcmp(w[1], "status") == 0)
        cmd_status(k, peer, now_ns, o, cap);
    else if (strcmp(w[1], "stop") == 0)
        cmd_stop(k, peer, now_ns, o, cap);
    else
        snprintf(o, cap, "fleet: only `profile stream|keepalive|status|stop` here\n");
}
