/* tools/ingest/collect_priv.h: what the collector's three files share, and
 * nothing else includes (tools/ingest/collect.h is the collector's face).
 * They call one way only: collect.c (opening, datagrams, polling) calls
 * collect_shell.c (the kernels' UDP shells) and collect_index.c (the
 * lookups); collect_shell.c calls collect_index.c; collect_index.c calls
 * neither. Every shell request goes out from the collector's socket (c->fd,
 * or c->send in tests) to kernel k's shell.
 *
 * Host pipeline: prefix sp_. */
#pragma once
#include <stdlib.h>
#include "tools/ingest/collect.h"
#include "uapi/stream_ctl.h"

/* Out of memory mid-collection: nothing sensible is left to do, and the
 * exit status of a collection that failed is USHC_EXIT_PROTO. Inline here
 * so that every one of the three files has it without calling another. */
_Noreturn static inline void sp_collect_out_of_memory(const struct sp_collect *c)
{
    fprintf(c->o.err, "%s: out of memory\n", c->o.prog);
    exit(USHC_EXIT_PROTO);
}

/* n zeroed elements of size bytes (at least one, so that no kernels is
 * not a failure), or sp_collect_out_of_memory. */
static inline void *sp_collect_zalloc(const struct sp_collect *c, size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p)
        sp_collect_out_of_memory(c);
    return p;
}

/* ---- tools/ingest/collect_index.c: the lookups ---- */
/* (Re)builds the lookups from every kernel's stream id and shell address. */
void sp_collect_index(struct sp_collect *c);
void sp_collect_index_free(struct sp_collect *c);
/* The kernel whose shell address from is, or NULL. */
struct sp_collect_kernel *sp_collect_shell_of(struct sp_collect *c, const struct sockaddr_in *from);
/* The kernels whose stream id is id, one per call: *cursor 0 at first;
 * a kernel's number, or -1 when there are no more. */
int sp_collect_next_by_id(const struct sp_collect *c, uint32_t id, size_t *cursor);

/* ---- tools/ingest/collect_shell.c: the kernels' shells ---- */
/* What a shell's wait does with a datagram that is not the reply it
 * waits for: collect.c's sp_collect_input, handed down so that the shell
 * side never calls up into the collector. */
typedef void (*sp_collect_input_fn)(struct sp_collect *c, const struct sockaddr_in *from,
                                    const void *d, size_t len, uint64_t now_ms);


/* k's shell client, its requests sent from c's socket, from seq on. */
void sp_collect_shell_init(struct sp_collect *c, struct sp_collect_kernel *k, uint32_t seq);
/* Kernel k's key: its own (o.keys), the shared one (o.key), or NULL. */
const uint8_t *sp_collect_key(const struct sp_collect *c, const struct sp_collect_kernel *k);

/* After a receive failed with ECONNREFUSED: the kernel whose shell port
 * the ICMP "port unreachable" on the error queue is about (the socket has
 * IP_RECVERR), taken off the queue; NULL when none is queued or it is no
 * kernel's. */
struct sp_collect_kernel *sp_collect_refused_shell(struct sp_collect *c);


/* Runs cmds[i] on every kernel i with run[i], all at once; each reply
 * into texts[i] (malloc'd, NUL-terminated), each status into rcs[i].
 * Whatever else arrives meanwhile goes to other. */
void sp_collect_run_all(struct sp_collect *c, const char *const *cmds, const bool *run,
                        char **texts, int *rcs, sp_collect_input_fn other);
/* `profile stop` to every kernel i with run[i]; other as above. */
void sp_collect_stop_some(struct sp_collect *c, const bool *run, sp_collect_input_fn other);

/* The control line (uapi/stream_ctl.h) of kernel k's answer text: 0 and
 * *l, or the sctl_ code. A kernel that answers without one, or in
 * another version, is said so on o.err once (its address named) and
 * k->skew set; a malformed line is said each time. */
int sp_collect_ctl(struct sp_collect *c, struct sp_collect_kernel *k, const char *text,
                   struct sctl_line *l);
/* The stream id kernel k's answer to `profile stream` announces (its
 * control line: op=start result=ok id=...): 0 and *id; -2 when k does
 * not speak this version of the grammar (said, sp_collect_ctl); -1 for
 * any other answer (a refusal: busy, failed, invalid). */
int sp_collect_parse_started(struct sp_collect *c, struct sp_collect_kernel *k, const char *text,
                             uint32_t *id);
/* "PROG: HOST said: <the answer's first line for people>" for a kernel
 * that refused (past its control line). */
void sp_collect_say_refused(struct sp_collect *c, struct sp_collect_kernel *k, const char *text);

/* k's note, for a kernel whose stream did not start: its answer's first
 * line (text), else what its shell's status rc (USHC_EXIT_*) says. */
void sp_collect_note_failed(struct sp_collect_kernel *k, int rc, const char *text);

/* `profile keepalive ID` to k (no wait for the reply). */
void sp_collect_keepalive(struct sp_collect_kernel *k, uint64_t now);

/* k's stream seems replaced (why, for the message): its shell is asked
 * `profile status` (see collect.h); the answer, through
 * sp_collect_shell_datagram, decides. Counted in k->forged until it does. */
void sp_collect_suspect(struct sp_collect_kernel *k, uint64_t now, const char *why);
/* The question again after a second unanswered; given up after
 * USHC_RETRIES sends. */
void sp_collect_probe_due(struct sp_collect_kernel *k, uint64_t now);

/* A datagram from k's shell address: true when it is the probe's answer
 * and says k restarted (the collector then ends k's stream there, with
 * k->probe.why saying how it was noticed). */
bool sp_collect_shell_datagram(struct sp_collect *c, struct sp_collect_kernel *k, const void *d,
                               size_t len, uint64_t now);
