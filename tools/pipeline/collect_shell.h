/* tools/pipeline/collect_shell.h: the stream collector's side of the
 * kernels' UDP shells (tools/pipeline/collect_shell.c), for the collector
 * itself (tools/pipeline/collect.c). Every request goes out from the
 * collector's socket (c->fd, or c->send in tests) to kernel k's shell. */
#pragma once
#include "tools/pipeline/collect.h"

/* k's shell client, its requests sent from c's socket, from seq on. */
void pcoll_shell_init(struct pcoll *c, struct pcoll_kernel *k, uint32_t seq);

/* The kernel whose shell address from is, or NULL. */
struct pcoll_kernel *pcoll_shell_of(struct pcoll *c, const struct sockaddr_in *from);

/* Runs cmds[i] on every kernel i with run[i], all at once; each reply
 * into texts[i] (malloc'd, NUL-terminated), each status into rcs[i].
 * Whatever else arrives meanwhile is taken as pcoll_input takes it. */
void pcoll_run_all(struct pcoll *c, const char *const *cmds, const bool *run,
                   char **texts, int *rcs);
/* `profile stop` to every kernel i with run[i]. */
void pcoll_stop_some(struct pcoll *c, const bool *run);

/* The stream id in the kernel's answer to `profile stream`, which starts
 * "profile: streaming id 0x1a2b3c4d to ..." (a busy kernel's answer
 * starts "profile: busy"). 0 and *id, or -1 when it is not such an
 * answer. */
int pcoll_parse_started(const char *text, uint32_t *id);
/* "PROG: HOST said: <the answer's first line>" for a kernel that refused. */
void pcoll_say_refused(struct pcoll *c, struct pcoll_kernel *k, const char *text);

/* `profile keepalive ID` to k (no wait for the reply). */
void pcoll_keepalive(struct pcoll_kernel *k, uint64_t now);

/* k's stream seems replaced (why, for the message): its shell is asked
 * `profile status` (see collect.h); the answer, through
 * pcoll_shell_datagram, decides. Counted in k->forged until it does. */
void pcoll_suspect(struct pcoll_kernel *k, uint64_t now, const char *why);
/* The question again after a second unanswered; given up after
 * USHC_RETRIES sends. */
void pcoll_probe_due(struct pcoll_kernel *k, uint64_t now);

/* A datagram from k's shell address. */
void pcoll_shell_datagram(struct pcoll *c, struct pcoll_kernel *k, const void *d,
                          size_t len, uint64_t now);
