/* tools/ingest/collect.h: the stream collector: one UDP socket on the host
 * receiving the profile streams (uapi/profile_stream.h) of several
 * kernels at once, for `sonde-prof record -d` over 2 s and for any tool
 * that watches kernels live (docs/continuous.md). Every shell request
 * for the streams (start, keep-alives, status, stop) goes out from that
 * same socket: a kernel streams to the address its request came from
 * and heeds keep-alives only from there.
 *
 * Use, whatever the tool:
 *
 *     struct sp_collect c;
 *     struct sp_collect_opts o = { .prog = "sonde-prof", .err = stderr,
 *                             .shell_timeout_ms = 5000, .silent_ms = 3000 };
 *     if (sp_collect_open(&c, &o, hosts, n, on_record, ctx))  // exit 2
 *     rc = sp_collect_start(&c, ms, "all");  // USHC_EXIT_*; on failure every
 *                                            // stream started is stopped
 *     while (sp_collect_active(&c) && !done)
 *         sp_collect_poll(&c, 200);   // records -> on_record(ctx, k, cpu, r)
 *     sp_collect_stop(&c, 2000);      // `profile stop`, wait for the ENDs
 *     ... c.k[i].s: kernel i's stream and loss (tools/ingest/stream.h),
 *     ... c.k[i].state, c.k[i].note: what became of it
 *     sp_collect_close(&c);
 *
 * sp_collect_start confirms each stream with a first keep-alive as soon as
 * its id is known (until then a kernel sends one META and nothing else).
 * sp_collect_poll does everything between: it sends each kernel `profile
 * keepalive ID` every SP_COLLECT_KEEPALIVE_MS over its UDP shell, takes the
 * shells' replies (a shell that answers is alive), hands each datagram to its
 * kernel's stream, and gives up on a kernel that sent nothing for silent_ms:
 * a message naming it, its state SP_COLLECT_SILENT, its profile so far kept
 * (one silent once its window is over by its own clock has only lost its END:
 * SP_COLLECT_ENDED, and sp_collect_stop says so). The others go on.
 *
 * Nothing unverified is believed. A datagram is a kernel's when its
 * stream id is the one that kernel's shell announced and it comes from
 * that kernel's address (any loopback address for a loopback kernel:
 * QEMU's user network sends from one); anything else is counted in
 * c.foreign and its stream id said once (the first
 * SP_COLLECT_FOREIGN_SAID ids; past them, one line a minute counts the
 * datagrams of the ids not named, so a flood of random ids cannot fill
 * stderr; sp_collect_close says what is left). A kernel that seems to have
 * restarted (another stream id from where its stream came, or a META with
 * another build id) is asked `profile status`, and only when the answer
 * shows another stream or none is it taken to have restarted: noticed,
 * by name, its new stream not mixed in, the first kept and ended there
 * (SP_COLLECT_RESTARTED). Otherwise the datagram was forged, and counted
 * (k->forged).
 *
 * Its three files (collect.c, collect_shell.c, collect_index.c) share
 * tools/ingest/collect_priv.h, which no other file includes.
 *
 * Host pipeline: prefix sp_. */
#pragma once
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "tools/common/hostaddr.h"
#include "lib/sha256.h"
#include "tools/ingest/stream.h"
#include "tools/common/ushell_client.h"

#define SP_COLLECT_KEEPALIVE_MS 1000
#define SP_COLLECT_SHELL_AFTER_MS 250  /* a reply this long after the last
                                          datagram: the kernel lives on */
#define SP_COLLECT_RCVBUF       (256 << 20)  /* what a fleet's socket asks for: at
                                                2M records/s, 1.7 s of them */
#define SP_COLLECT_DUE_MS       20           /* keep-alives and silences looked at */

struct sp_collect_rx;
#define SP_COLLECT_NOTE_MAX     160

enum sp_collect_state {
    SP_COLLECT_IDLE,                 /* opened, no stream asked for */
    SP_COLLECT_STREAMING,
    SP_COLLECT_ENDED,                /* its END came */
    SP_COLLECT_SILENT,               /* given up on: nothing for silent_ms */
    SP_COLLECT_RESTARTED,            /* another kernel answers there now */
    SP_COLLECT_FAILED,               /* the stream never started */
};

/* A restart suspected: `profile status` asked, its answer awaited. */
struct sp_collect_probe {
    bool on;
    unsigned sends;                  /* the request, sent again after a second */
    uint64_t sent_ms, done_ms;       /* the last send; the last answer (or giving up) */
    uint8_t req[USHP_HDR_LEN + USHP_AUTH_OVERHEAD + USHP_CMD_MAX];
    size_t len;
    char why[64];                    /* what made it suspect, for the message */
};
#define SP_COLLECT_PROBE_GAP_MS 1000      /* a kernel is asked at most this often */

struct sp_collect;

struct sp_collect_kernel {
    char name[HOSTADDR_NAME_MAX];   /* HOST:PORT as given: the kernel label */
    struct sockaddr_in shell;        /* its UDP shell */
    struct sp_collect *owner;             /* the collector whose socket it is asked from */
    struct ushc c;                   /* the shell client: seq, key */
    enum sp_collect_state state;
    struct sp_stream s;              /* its stream, as received */
    struct sockaddr_in src;          /* where its stream's datagrams come from */
    bool have_src;
    uint64_t start_ms, last_dgram_ms, last_reply_ms, last_keepalive_ms;
    uint64_t end_ms;                      /* when it ended, went silent or restarted */
    char note[SP_COLLECT_NOTE_MAX];       /* what became of it, or "" */
    struct sp_collect_probe probe;
    uint64_t forged;                 /* from its address, not its stream: a restart
                                        its shell did not confirm */
    bool said_forged;                /* and that was said */
    bool skew;                       /* it answered without a control line of
                                        SCTL_VERSION (uapi/stream_ctl.h): said
                                        once, whatever rounds it is asked in */
    /* With a key (-k): datagrams with its stream's id (or from where its
     * stream comes) refused untagged, or with a tag that does not verify
     * under the key and its epoch; and that key and epoch's tag state
     * (~1.5 KiB, allocated at the first tagged datagram: none without -k). */
    uint64_t untagged, bad_tag;
    struct pstr_tag_key *keyed;
    uint64_t keyed_epoch;
    bool keyed_ok;
};

/* Datagrams of kernel k's refused as not its stream's or not sane
 * (forged, untagged or badly tagged under -k, malformed, a seq or index
 * far ahead): the report says so. */
uint64_t sp_collect_refused(const struct sp_collect_kernel *k);

typedef void (*sp_collect_record_fn)(void *ctx, unsigned kernel, uint16_t cpu,
                                const struct pstr_record *r);

struct sp_collect_opts {
    const char *prog;               /* every message's prefix */
    FILE *err;                      /* messages */
    const uint8_t *key;             /* the shells' key (-k), or NULL */
    const uint8_t *const *keys;     /* or each kernel's own, in order (a shared key
                                       made each kernel's by its ushid=), or NULL */
    uint64_t shell_timeout_ms;      /* start and stop: silence before giving up */
    uint64_t silent_ms;             /* streaming: no datagram this long, given up */
    const char *what;               /* NULL or "": CPU samples (`profile stream`);
                                       "off", "wall", "allocs" or "lock":
                                       `profile off|wall|allocs|lock stream`;
                                       "trace": `trace stream` */
    bool keep_going;                /* a kernel that cannot start its stream is
                                       left FAILED (its note says why) and the
                                       others stream on; else they are stopped */
};

/* Where a shell request to kernel k goes: 0, or USHC_IO_*. The collector's
 * socket unless a test puts its own here. */
typedef int (*sp_collect_send_fn)(void *ctx, unsigned k, const void *d, size_t n);

/* A stream datagram that came while the ids were not known yet (during
 * sp_collect_start): taken once they are. */
struct sp_collect_pending {
    struct sockaddr_in from;
    uint64_t ms;
    size_t len;
    uint8_t d[PSTR_TAGGED_MAX];
};
#define SP_COLLECT_PENDING_MAX 32   /* and two more per kernel: each sends a META
                                       at its start, before its id is known */

#define SP_COLLECT_FOREIGN_SAID  64     /* foreign stream ids named, once each */
#define SP_COLLECT_FOREIGN_EVERY_MS 60000 /* past them: one line this often */

struct sp_collect {
    struct sp_collect_opts o;
    int fd;                         /* the collector's socket: streams and shells */
    uint16_t port;                  /* its port: the kernels send there */
    sp_collect_send_fn send;        /* NULL: sendto on fd */
    void *send_ctx;
    struct sp_collect_kernel *k;
    unsigned n;
    sp_collect_record_fn fn;
    void *ctx;
    uint64_t t0;                    /* sp_collect_start's clock */
    bool stopping;                  /* sp_collect_stop: only ENDs awaited */
    unsigned ms;                    /* the window asked for; 0: until stopped */
    uint64_t foreign;               /* datagrams of no stream of ours */
    uint32_t foreign_ids[SP_COLLECT_FOREIGN_SAID];  /* stream ids already said */
    unsigned nforeign_ids;
    uint64_t foreign_unsaid;        /* datagrams of ids past them, not said yet */
    uint64_t foreign_said_ms;       /* when they were last counted in a line */
    bool starting;                  /* sp_collect_start: stream datagrams wait in pending */
    struct sp_collect_pending *pending;  /* pending_max of them */
    unsigned npending, pending_max;
    /* Lookups (tools/ingest/collect_index.c); NULL: kernel by kernel. */
    unsigned *by_id, *by_shell;
    size_t idx_cap;
    /* Receiving: recvmmsg's batch; since when a backlog has been read
     * (0: none), during which no kernel is judged silent. */
    struct sp_collect_rx *rx;
    uint64_t backlog_ms;
    uint64_t due_ms;                /* the last look at what falls due */
    /* A shell's "port unreachable" that failed a send to another kernel
     * (tools/ingest/collect_shell.c), for the wait to report; or NULL. */
    struct sp_collect_kernel *refused_late;
};

/* Resolves every HOST[:PORT] (hosts[i] names kernel i) and opens the
 * collector's socket, bound to the address that reaches the kernels (any
 * address when they are reached by different ones), on an ephemeral
 * port. 0, or -1 with the reason on o->err. */
int sp_collect_open(struct sp_collect *c, const struct sp_collect_opts *o, const char *const *hosts,
               unsigned n, sp_collect_record_fn fn, void *ctx);

/* `profile stream PORT MS WHO` on every kernel at once (WHO a pid or
 * "all"; MS 0 streams until stopped). Every reply must announce a stream
 * id; a kernel that says anything else refused (quoted, USHC_EXIT_REFUSED).
 * A kernel that did not start is FAILED, its note saying why. Returns the
 * worst USHC_EXIT_* over the kernels; when it is not 0, the streams that
 * did start are stopped again, unless o.keep_going. Datagrams of streams
 * already running are taken meanwhile, so kernels may be started (again)
 * while others stream. */
int sp_collect_start(struct sp_collect *c, unsigned ms, const char *who);

/* The same on the kernels i with which[i] only; the others are left as
 * they are. A fleet sampled K kernels at a time (record --sample) starts
 * each round so, each kernel of it rearmed first. */
int sp_collect_start_some(struct sp_collect *c, unsigned ms, const char *who, const bool *which);
/* Kernel i ready for a new stream: its stream's state made anew (what
 * the last one counted is the caller's to keep first), IDLE. */
void sp_collect_rearm(struct sp_collect *c, unsigned i);

/* Waits up to timeout_ms for datagrams and handles whatever is due
 * (keep-alives, silences). Returns the datagrams taken, or -1 on a socket
 * error (reported). */
int sp_collect_poll(struct sp_collect *c, int timeout_ms);

/* True while some kernel is still streaming. */
bool sp_collect_active(const struct sp_collect *c);

/* Milliseconds since sp_collect_start. */
uint64_t sp_collect_elapsed_ms(const struct sp_collect *c);

/* Ends it: `profile stop` to every kernel still streaming, then waits up
 * to grace_ms for their ENDs. A kernel whose END never came is said so
 * (its records after its last datagram cannot be counted). */
void sp_collect_stop(struct sp_collect *c, uint64_t grace_ms);

/* One datagram that came to the collector's socket, as sp_collect_poll
 * takes it: a shell's reply (from a kernel's shell address), else a
 * stream's. For tests. */
void sp_collect_input(struct sp_collect *c, const struct sockaddr_in *from,
                      const void *d, size_t len, uint64_t now_ms);
/* One stream datagram. For tests. */
void sp_collect_datagram(struct sp_collect *c, const struct sockaddr_in *from,
                    const void *d, size_t len, uint64_t now_ms);

void sp_collect_close(struct sp_collect *c);
