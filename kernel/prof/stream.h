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
#define PROF_STREAM_DRAIN_MS  50         /* every ring drained at least this often */

/* Where a stream's datagrams go. The core hands each finished datagram to
 * sk_send and never learns what carries it (kernel/cmd/profile.c binds
 * it to UDP and the client that asked). sk_send answers:
 *   PROF_SINK_SENT   sent, or queued to be sent;
 *   PROF_SINK_AGAIN  no room right now: the stream retries for a while,
 *                    then counts the datagram lost;
 *   PROF_SINK_LOST   it never will be: counted lost at once.
 * sk_send gets the stream's own copy of the sink, so that sk_addr (the
 * sender's own, opaque to the core: an address) travels with the stream
 * and a second start cannot change where a running stream goes. sk_name
 * says where, for messages ("10.0.2.2:9100"). */
enum { PROF_SINK_SENT = 0, PROF_SINK_AGAIN = 1, PROF_SINK_LOST = -1 };
struct prof_sink {
    int (*sk_send)(const struct prof_sink *sk, const void *d, size_t len);
    uint64_t sk_addr;
    char sk_name[40];
};

/* Start a stream of pid's samples (PROF_ALL: every task) into sink (copied)
 * for ms (0: until stopped). 0, or 1 with the reason printed to p (busy,
 * no memory). */
int prof_stream_start(const struct prof_sink *sink, uint32_t ms, int pid, struct printer *p);
/* End the running stream and print its summary, as `profile stop`: 0, or
 * 1 (none running, or still ending after 3 s). */
int prof_stream_stop(struct printer *p);
/* Keep stream id alive for another PSTR_KEEPALIVE_MS: 0, or 1 with the
 * reason (none running, another one running). */
int prof_stream_keepalive(uint32_t id, struct printer *p);
/* The running stream, or the last one, and its counters: always 0. */
int prof_stream_status(struct printer *p);
/* `net`'s line: the running (or last) stream's counters. */
void prof_stream_print_net(struct printer *p);

#ifdef SONDE_HOST_TEST
/* The stream task's body, for a host test to run in place of task_spawn. */
void prof_stream_test_task(void *arg);
#endif
