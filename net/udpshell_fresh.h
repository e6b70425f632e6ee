/* net/udpshell_fresh.h: what the authenticated UDP shell remembers of the
 * requests it has accepted this boot, so that none runs twice
 * (docs/udpshell.md, "Freshness").
 *
 * One window for the whole boot, whoever sent the request: the
 * USHF_NONCES highest nonces accepted, kept one by one, and a floor at or
 * above every other nonce ever accepted. A nonce is fresh when it is above
 * the floor and not among the kept ones. Freshness therefore does not
 * depend on the sender's address or port: a captured request sent again
 * from a new port is as stale as from its own.
 *
 * Why kept nonces and not a top nonce with a bitmap of the 63 below it
 * (IPsec's window): clients take the wall clock in nanoseconds as nonce,
 * on hosts whose clocks differ by far more than 63 ns, so a bitmap over
 * nonce values would refuse every client but the one whose clock runs
 * furthest ahead. Keeping the nonces themselves tolerates 63 requests of
 * disorder between clients, whatever the distance between their values.
 *
 * And the last USHF_RECENT accepted requests exactly (nonce, address,
 * port, seq): a datagram whose nonce is not fresh is a retransmit only if
 * it matches one of them; it is then answered from the kept reply, never
 * run again.
 *
 * Plain data and no lock: the UDP shell holds its own around every call. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#define USHF_NONCES 64              /* highest nonces kept one by one */
#define USHF_RECENT 8               /* accepted requests a retransmit may repeat */

struct ushf_req {
    uint64_t nonce;
    uint32_t ip, seq;
    uint16_t port;
};

struct ushf {
    uint64_t floor;                 /* every accepted nonce not in kept[] is <= floor */
    uint64_t kept[USHF_NONCES];     /* unordered; all above floor */
    unsigned nkept;
    uint64_t highest;               /* the highest nonce accepted; 0: none yet */
    struct ushf_req recent[USHF_RECENT];
    unsigned nrecent, next_recent;  /* a ring: next_recent is overwritten next */
};

/* Nothing accepted yet: every nonce but 0 is fresh. */
void ushf_init(struct ushf *f);
/* Above the floor and not among the kept nonces. */
bool ushf_fresh(const struct ushf *f, uint64_t nonce);
/* Record an accepted request (its nonce fresh: checked by the caller). The
 * lowest kept nonce is pushed under the floor once USHF_NONCES are kept. */
void ushf_accept(struct ushf *f, const struct ushf_req *r);
/* True if r is one of the last USHF_RECENT accepted requests, field for
 * field: the only stale datagram the shell may answer (from its kept reply). */
bool ushf_recent(const struct ushf *f, const struct ushf_req *r);
