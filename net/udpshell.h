/* net/udpshell.h: the UDP shell (docs/udpshell.md; its wire format is
 * uapi/udpshell.h). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "uapi/udpshell.h"

#define USH_QUEUE     8             /* requests waiting to run */
#define USH_SENDERS   4             /* senders whose last reply is kept */
#define USH_KEEP_MAX  (1u << 20)    /* bytes of a reply kept for retransmits */
/* How long a kept reply answers retransmits. A client resends after 1 s, at
 * most 3 times, so 10 s covers every retransmit of a live request with room
 * to spare; a request on the same (ip, port, seq) later than that is a new
 * client's and is run. */
#define USH_KEEP_NS   10000000000ull
/* How often a kept reply is sent again: a client resends at most 3 times
 * per silence, and copies beyond these are a flood (docs/udpshell.md,
 * "Amplification"): a request's output goes out at most 1 + USH_RESENDS
 * times while it is kept. */
#define USH_RESENDS   3

struct printer;

/* What runs a request's command line, printing its output to p: the
 * shell's own shell_run_line, given by the board glue (kernel/netboot.c)
 * before the shell starts. The network knows no shell: it is told how
 * to run a line. */
typedef void (*udpshell_run_fn)(char *line, struct printer *p);
void udpshell_set_runner(udpshell_run_fn run);

/* Bind port and start the shell's task (net_boot, from udpshell=PORT).
 * 0, or -1 with the reason on the console. */
int udpshell_start(uint16_t port);
/* The same, authenticated (ushkey=): every request must carry a valid
 * HMAC-SHA256 tag under key, this boot's epoch and a fresh nonce; replies
 * are tagged. With id (ushid=, a valid id; NULL: none) every tag is made
 * under ushp_id_key(key, id) instead: only clients given that id talk to
 * this kernel. The epoch comes from entropy_get: -1 (and the reason on the
 * console) without it, never an open or predictable shell. The key is
 * copied; the caller wipes its own. */
int udpshell_start_auth(uint16_t port, const uint8_t key[USHP_KEY_LEN], const char *id);

/* Take the oldest queued request and answer it: run its command, or send
 * the kept reply of a retransmit. False if nothing was queued. The shell's
 * task loops on it; host tests call it to play that task. */
bool udpshell_run_next(void);
/* From a command the UDP shell is running, in that same task: true, and
 * *ip the requesting client's address (host order). False anywhere else
 * (the serial shell, another task, no request running): commands that
 * answer by sending to the client (`profile stream`) refuse then. */
bool udpshell_requester(uint32_t *ip);
/* The same, with *port the client's source port (host order): a stream
 * heeds keep-alives only from the (ip, port) it sends to. */
bool udpshell_requester_addr(uint32_t *ip, uint16_t *port);

struct hmac_sha256;
/* For what the kernel sends a key holder besides replies (the profile
 * stream's tags, uapi/profile_stream.h): true, *m an HMAC-SHA256
 * initialised with the shell's key (its id's, with ushid=) and *epoch
 * this boot's epoch; false
 * (nothing written) when the shell has no key. The key itself never
 * leaves this file. */
bool udpshell_keyed(struct hmac_sha256 *m, uint64_t *epoch);

/* Since udpshell_start. Shown on `net`'s udpshell line. */
struct udpshell_stats {          /* all uint64_t: udpshell_get_stats copies it word by word */
    uint64_t requests;              /* queued to run, or a retransmit answered from the
                                       kept reply */
    uint64_t resent;                /* retransmits answered from the kept reply */
    uint64_t resends_spent;         /* retransmits refused: USH_RESENDS already sent */
    uint64_t in_hand;               /* retransmits of a queued or running request: ignored */
    uint64_t stale;                 /* same (ip, port, seq) as a kept reply but another
                                       command, or too late: run, not replayed */
    uint64_t queue_full;            /* dropped: the queue was full (the client retransmits) */
    uint64_t replies;               /* flagged USHP_FLAG_REPLY: never run (no loops) */
    uint64_t bad[USHP_NREASONS];    /* malformed, by reason: bad[-1 - USHP_E*] */
    /* Refused by the authenticated mode, no reply sent: */
    uint64_t unauth;                /* untagged request to a shell with a key */
    uint64_t bad_tag;               /* tag does not verify (forged, changed, wrong key) */
    uint64_t replayed;              /* nonce already used or too old, and not a
                                       retransmit the kept reply can answer (such a
                                       retransmit is not counted in requests) */
    uint64_t no_key;                /* tagged request to a shell without a key */
    uint64_t wrong_epoch;           /* tagged for another boot or another kernel */
    uint64_t challenges;            /* challenges answered (with the epoch) */
};
void udpshell_get_stats(struct udpshell_stats *out);
/* Every malformed datagram, whatever the reason. */
uint64_t udpshell_bad_total(const struct udpshell_stats *s);
