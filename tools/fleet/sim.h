/* tools/fleet/sim.h: one simulated Sonde kernel as a collector sees it,
 * for the fleet load generator (tools/fleet-gen.c, bench/fleet.py).
 *
 * A simulated kernel answers the UDP shell's stream commands as the
 * kernel does (kernel/prof/stream.c: `profile stream PORT MS WHO`,
 * `profile keepalive ID`, `profile status`, `profile stop`) and streams
 * the wire format of uapi/profile_stream.h, encoded by the uapi encoder
 * itself. As the kernel does, it sends one META until a keep-alive from
 * the stream's destination confirms the stream, names the stream's id
 * only to its destination, ends the stream after MS by its own clock or
 * after PSTR_KEEPALIVE_MS without a keep-alive, and sends its END three
 * times.
 *
 * What it injects is counted exactly: every BATCH datagram may be lost
 * (never sent), doubled (sent twice) or reordered (held back and sent
 * after the next datagram). The END and the METAs are never touched, so
 * with the END received a collector must find exactly: records received
 * = records sent - records in lost batches, datagrams lost = batches
 * lost, copies = batches doubled.
 *
 * No sockets and no clock of its own: the caller hands it the time and a
 * function that sends a datagram to the stream's destination, so a unit
 * test drives it with a fake clock and parses what it sends.
 *
 * Fleet generator: prefix fleet_. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "uapi/profile_stream.h"
#include "uapi/stream_ctl.h"

#define FLEET_CPUS_MAX    8
#define FLEET_TASKS       4          /* tasks per kernel, and the idle pid 0 */
#define FLEET_STACKS_MAX  256
#define FLEET_FLUSH_NS    100000000ull   /* a CPU's partial batch goes out this often,
                                            as the kernel drains its rings */
#define FLEET_META_NS     1000000000ull  /* a META about this often */
#define FLEET_LAG_NS      50000000ull    /* records made per CPU per tick, at most */
/* The most records a BATCH holds: those whose every frame is the previous
 * record's (a shared tail, uapi/profile_stream.h) are their fixed part
 * alone. A tick makes at least that many, where it is behind. */
#define FLEET_BATCH_MOST  ((PSTR_DGRAM_MAX - PSTR_HDR_LEN - PSTR_BATCH_HDR) / PSTR_REC_FIXED)
#define FLEET_REPLY_MAX   (SCTL_LINE_MAX + 200)   /* a control line, then the text */

/* What the whole fleet shares. */
struct fleet_cfg {
    unsigned cpus;                   /* 1 .. FLEET_CPUS_MAX */
    unsigned hz;                     /* records a second per CPU, >= 1 */
    /* Per BATCH datagram, in [0, 1], together at most 1. */
    double loss, dup, reorder;
    uint64_t seed;
    /* The builds: kernel i runs build i % nbuilds. */
    const char *const *build_ids;    /* PSTR_BUILD_ID_HEX lowercase hex each */
    unsigned nbuilds;
    /* The stacks its records are drawn from (the same for every kernel of
     * a build: addresses of that build's ELF), depth 1 .. PSTR_FRAMES. */
    const uint64_t (*stacks)[PSTR_FRAMES];
    const uint8_t *depths;
    unsigned nstacks;                /* 1 .. FLEET_STACKS_MAX */
};

/* A kernel's tally, over all its streams. */
struct fleet_counts {
    uint64_t streams;                /* started */
    uint64_t records;                /* records put in batches (sent or lost) */
    uint64_t lost_records;           /* in batches lost */
    uint64_t batches;                /* BATCH datagrams made */
    uint64_t lost_dgrams;            /* BATCHes never sent */
    uint64_t dups;                   /* BATCHes sent twice */
    uint64_t reordered;              /* BATCHes sent after the one made next */
    uint64_t datagrams;              /* sent, copies included */
    uint64_t stream_ns;              /* confirmed streaming time, by its clock */
    uint64_t unmade;                 /* due by the rate, never made: the generator
                                        fell behind (never sent, never counted) */
};

/* Sends one datagram to the stream's destination (dest_ip, dest_port,
 * host order). */
typedef void (*fleet_send_fn)(void *ctx, uint32_t dest_ip, uint16_t dest_port,
                              const void *d, size_t n);

struct fleet_kernel {
    const struct fleet_cfg *cfg;
    unsigned idx;                    /* its number in the fleet */
    uint64_t rng;
    fleet_send_fn send;
    void *send_ctx;
    /* The stream, while on (or the last one, for `profile status`). */
    bool on, ever, confirmed;
    uint8_t end_reason;              /* 0 while it runs */
    uint32_t id, seq, ms;
    uint32_t dest_ip;                /* host order */
    uint16_t dest_port;
    uint64_t t0_ns, ka_ns, meta_ns, flush_ns, confirm_ns;
    uint32_t sent[FLEET_CPUS_MAX];   /* per CPU: records sent (numbered from 0) */
    struct pstr_writer w;            /* the datagram being made */
    uint8_t held[PSTR_DGRAM_MAX];    /* a BATCH held back to go after the next */
    size_t held_len;
    bool held_passed;                /* a datagram went out after it */
    struct fleet_counts n;
};

/* "" when cfg is usable, else what is wrong and what is allowed. */
const char *fleet_cfg_check(const struct fleet_cfg *cfg);

void fleet_kernel_init(struct fleet_kernel *k, const struct fleet_cfg *cfg, unsigned idx,
                       fleet_send_fn send, void *ctx);

/* One shell command (its text, cmd_len bytes) from from_ip:from_port
 * (host order) at now_ns: the reply's text into out (NUL-terminated, at
 * most cap - 1 bytes), as the kernel words it. */
void fleet_shell(struct fleet_kernel *k, const char *cmd, size_t cmd_len, uint32_t from_ip,
                 uint16_t from_port, uint64_t now_ns, char *out, size_t cap);

/* Everything due by now_ns: records, batches, METAs, the END. */
void fleet_tick(struct fleet_kernel *k, uint64_t now_ns);

/* A task of kernel idx: pids 1 .. FLEET_TASKS, named "k<idx>-t<j>". */
void fleet_task_name(unsigned idx, uint32_t pid, char *buf, size_t cap);
