/* kernel/prof/stream.h: the profiler's samples sent as they are taken
 * (kernel/prof/stream.c, docs/profiling.md "Streaming"), in
 * uapi/profile_stream.h's datagrams, through a sink its caller supplies.
 * Task context throughout.
 *
 * Profiler core: prefix prof_ and PROF_. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct printer;

#define PROF_STREAM_MS_MAX    86400000u  /* a stream's length: 0 (until stopped) or 1..this */
/* Every ring is drained at least this often: a CPU or heap stream's
 * every 100 ms, an off-CPU stream's (up to 32,000 records a second a CPU,
 * kernel/prof/session.c) every 50 ms, which keeps its rings, sized for
 * four drains, at 8192 records (768 KiB a CPU). Each drain is a wakeup and
 * two context switches on a CPU that is being sampled. */
#define PROF_STREAM_DRAIN_MS      100
#define PROF_STREAM_DRAIN_OFF_MS  50

/* Where a stream's datagrams go. The core hands each finished datagram to
 * sk_send and never learns what carries it (kernel/cmd/profile.c binds
 * it to UDP and the client that asked). sk_is_peer says whether the
 * command running now was asked by the sink's own destination (for UDP:
 * from the very address and port the datagrams go to): only such a
 * request confirms and keeps the stream alive, and only it is told the
 * stream's id. sk_send answers:
 *   PROF_SINK_SENT   sent, or queued to be sent;
 *   PROF_SINK_AGAIN  no room right now: the stream retries for a while,
 *                    then counts the datagram lost;
 *   PROF_SINK_LOST   it never will be: counted lost at once.
 * sk_send gets the stream's own copy of the sink, so that sk_addr (the
 * sender's own, opaque to the core: an address) travels with the stream
 * and a second start cannot change where a running stream goes. sk_name
 * says where, for messages ("10.0.2.2:9100").
 *
 * sk_reserve, sk_commit and sk_cancel (optional, all three or none) let
 * the core encode a datagram straight into the carrier's own buffer (for
 * UDP: the network device's transmit buffer), so that it is never
 * copied: sk_reserve gives PSTR_DGRAM_MAX bytes, or NULL when it cannot
 * now (the core then encodes into its own and calls sk_send); sk_commit
 * sends len bytes of it and answers as sk_send, but never AGAIN (the
 * buffer is gone either way); sk_cancel gives it back unsent. One of the
 * two follows every reservation, before the next. */
enum { PROF_SINK_SENT = 0, PROF_SINK_AGAIN = 1, PROF_SINK_LOST = -1 };
struct prof_sink {
    int (*sk_send)(const struct prof_sink *sk, const void *d, size_t len);
    bool (*sk_is_peer)(const struct prof_sink *sk);
    void *(*sk_reserve)(const struct prof_sink *sk);
    int (*sk_commit)(const struct prof_sink *sk, void *buf, size_t len);
    void (*sk_cancel)(const struct prof_sink *sk, void *buf);
    /* The caller vouches that the destination wants the stream, which
     * then starts confirmed: `bench stream` alone, whose client cannot
     * send a keep-alive while the shell runs the bench. */
    bool sk_confirmed;
    uint64_t sk_addr;
    char sk_name[40];
};

/* Start a stream of pid's samples (PROF_ALL: every task) into sink (copied)
 * for ms (0: until stopped). 0, or 1 with the session's refusal in *e
 * (busy, no memory: the caller says it) or the reason printed to p.
 *
 * A new stream is unconfirmed: it sends one META and nothing more until
 * its destination's first keep-alive (prof_stream_keepalive from the
 * sink's peer) says it wants the stream. One never confirmed ends
 * silently (no END) after PSTR_KEEPALIVE_MS: a start asked in someone
 * else's name costs that someone one datagram at most. */
struct prof_err;
int prof_stream_start(const struct prof_sink *sink, uint32_t ms, int pid, struct prof_err *e,
                      struct printer *p);
/* The same for what the stream records (kernel/prof/session.h):
 * PROF_STREAM_CPU the samples (prof_stream_start), PROF_STREAM_OFF the
 * time tasks spend off their CPUs (`profile off ... stream`: each
 * interval with its reason and waker, uapi/profile_stream.h), or both
 * (`profile wall ... stream`), or PROF_STREAM_HEAP alone, at heap_rate,
 * the allocator's rate in force (mm owns it: the caller hands it in). */
int prof_stream_start_what(const struct prof_sink *sink, uint32_t ms, int pid, unsigned what,
                           uint32_t heap_rate, struct prof_err *e, struct printer *p);
/* End the running stream and print its summary, as `profile stop`: 0, or
 * 1 (none running, or still ending after 3 s). */
int prof_stream_stop(struct printer *p);
/* Keep stream id alive for another PSTR_KEEPALIVE_MS (and confirm a new
 * one), heeded only from the stream's destination (sk_is_peer): 0, or 1
 * with the reason (none running, another one running, or asked from
 * elsewhere; the id is named only to the destination). */
int prof_stream_keepalive(uint32_t id, struct printer *p);
/* The running stream, or the last one, and its counters (the id only to
 * that stream's destination): always 0. */
int prof_stream_status(struct printer *p);
/* `net`'s line: the running (or last) stream's counters. */
void prof_stream_print_net(struct printer *p);

#ifdef SONDE_HOST_TEST
/* The stream task's body, for a host test to run in place of task_spawn. */
void prof_stream_test_task(void *arg);
#endif
