/* tools/pipeline/collect.h: the stream collector: one UDP socket on the host
 * receiving the profile streams (uapi/profile_stream.h) of several
 * kernels at once, for `sonde-prof record -d` over 2 s and for any tool
 * that watches kernels live (docs/continuous.md).
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
 *     ... c.k[i].s: kernel i's stream and loss (tools/pipeline/stream.h),
 *     ... c.k[i].state, c.k[i].note: what became of it
 *     sp_collect_close(&c);
 *
 * sp_collect_poll does everything between: it sends each kernel `profile
 * keepalive ID` every SP_COLLECT_KEEPALIVE_MS over its UDP shell, takes the
 * shells' replies (a shell that answers is alive), hands each datagram to its
 * kernel's stream, and gives up on a kernel that sent nothing for silent_ms:
 * a message naming it, its state SP_COLLECT_SILENT, its profile so far kept
 * (one silent once its window is over by its own clock has only lost its END:
 * SP_COLLECT_ENDED, and sp_collect_stop says so). The others go on. A
 * datagram is a kernel's when its stream id is the one that kernel's shell
 * announced and it comes from that kernel's address (any loopback address for
 * a loopback kernel: QEMU's user network sends from one). Anything else is
 * counted in c.foreign and its stream id said once. A kernel that restarts
 * mid-record is noticed, by name, and its new stream is not mixed in: the
 * first stream is kept and ended there (SP_COLLECT_RESTARTED).
 *
 * Host pipeline: prefix sp_. */
#pragma once
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "tools/common/hostaddr.h"
#include "tools/pipeline/stream.h"
#include "tools/common/ushell_client.h"

#define SP_COLLECT_KEEPALIVE_MS 1000
#define SP_COLLECT_NOTE_MAX     160

enum sp_collect_state {
    SP_COLLECT_IDLE,                 /* opened, no stream asked for */
    SP_COLLECT_STREAMING,
    SP_COLLECT_ENDED,                /* its END came */
    SP_COLLECT_SILENT,               /* given up on: nothing for silent_ms */
    SP_COLLECT_RESTARTED,            /* another kernel answers there now */
    SP_COLLECT_FAILED,               /* the stream never started */
};

struct sp_collect_kernel {
    char name[HOSTADDR_NAME_MAX];   /* HOST:PORT as given: the kernel label */
    struct sockaddr_in shell;        /* its UDP shell */
    int fd;                          /* a UDP socket connected to the shell */
    struct ushc c;                   /* the shell client: seq, key */
    enum sp_collect_state state;
    struct sp_stream s;              /* its stream, as received */
    struct sockaddr_in src;          /* where its stream's datagrams come from */
    bool have_src;
    uint64_t start_ms, last_dgram_ms, last_reply_ms, last_keepalive_ms;
    uint64_t end_ms;                      /* when it ended, went silent or restarted */
    char note[SP_COLLECT_NOTE_MAX];       /* what became of it, or "" */
};

typedef void (*sp_collect_record_fn)(void *ctx, unsigned kernel, uint16_t cpu,
                                const struct pstr_record *r);

struct sp_collect_opts {
    const char *prog;               /* every message's prefix */
    FILE *err;                      /* messages */
    const uint8_t *key;             /* the shells' key (-k), or NULL */
    uint64_t shell_timeout_ms;      /* start and stop: silence before giving up */
    uint64_t silent_ms;             /* streaming: no datagram this long, given up */
};

struct sp_collect {
    struct sp_collect_opts o;
    int fd;                         /* the collector's socket */
    uint16_t port;                  /* its port: the kernels send there */
    struct sp_collect_kernel *k;
    unsigned n;
    sp_collect_record_fn fn;
    void *ctx;
    uint64_t t0;                    /* sp_collect_start's clock */
    bool stopping;                  /* sp_collect_stop: only ENDs awaited */
    unsigned ms;                    /* the window asked for; 0: until stopped */
    uint64_t foreign;               /* datagrams of no stream of ours */
    uint32_t foreign_ids[16];       /* stream ids already said */
    unsigned nforeign_ids;
};

/* Resolves every HOST[:PORT] (hosts[i] names kernel i), opens a socket to
 * each shell and the collector's socket, bound to the address that reaches
 * the kernels (any address when they are reached by different ones), on
 * an ephemeral port. 0, or -1 with the reason on o->err. */
int sp_collect_open(struct sp_collect *c, const struct sp_collect_opts *o, const char *const *hosts,
               unsigned n, sp_collect_record_fn fn, void *ctx);

/* `profile stream PORT MS WHO` on every kernel at once (WHO a pid or
 * "all"; MS 0 streams until stopped). Every reply must announce a stream
 * id; a kernel that says anything else refused (quoted, USHC_EXIT_REFUSED).
 * Returns the worst USHC_EXIT_* over the kernels; when it is not 0, the
 * streams that did start are stopped again. */
int sp_collect_start(struct sp_collect *c, unsigned ms, const char *who);

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

/* One datagram, as sp_collect_poll takes it: for tests. */
void sp_collect_datagram(struct sp_collect *c, const struct sockaddr_in *from,
                    const void *d, size_t len, uint64_t now_ms);

void sp_collect_close(struct sp_collect *c);
