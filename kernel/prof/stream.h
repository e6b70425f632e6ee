/* kernel/prof/stream.h: the profiler's samples sent as they are taken
 * (kernel/prof/stream.c, docs/profiling.md "Streaming"), in
 * uapi/profile_stream.h's datagrams, through a sink its caller supplies.
 * Task context throughout.
 *
 * Profiler core: prefix prof_ and PROF_. */
#pragma once
#include "kernel/prof/prof.h"
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
 * sk_send and never learns what carries it (kernel/cmd/profile_stream.c binds
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

/* What the stream has counted: relaxed atomics while it runs. */
struct prof_stream_counters {
    uint64_t records, datagrams, send_failed, drops;
    uint64_t ka_refused;            /* keep-alives from elsewhere than the destination */
};

/* What a control call did and the stream it is about, for the command
 * layer to word (kernel/cmd/profile_stream.c: a line of uapi/stream_ctl.h
 * and the text for people). The core prints nothing of the stream's. */
enum prof_stream_answer {
    PROF_STREAM_DONE = 0,           /* started, stopped, kept alive; the status */
    PROF_STREAM_BUSY,               /* start: the profiler is held (the prof_err) */
    PROF_STREAM_REFUSED_START,      /* start: the session would not (the prof_err) */
    PROF_STREAM_NO_WRITERS,         /* start: no memory for the batch writers */
    PROF_STREAM_NO_TASK,            /* start: no memory for the stream's task */
    PROF_STREAM_NONE,               /* stop, keep-alive: none is running */
    PROF_STREAM_NOT_PEER,           /* keep-alive asked from elsewhere than the destination */
    PROF_STREAM_OTHER,              /* keep-alive for an id not running (sf_id runs) */
    PROF_STREAM_ENDING,             /* keep-alive: it is sending its END; stop: still
                                       ending after PROF_STREAM_STOP_WAIT_MS */
};
enum prof_stream_state {
    PROF_STREAM_NEVER = 0,          /* no stream since boot */
    PROF_STREAM_RUNNING,
    PROF_STREAM_ENDING_NOW,         /* running, its END on its way */
    PROF_STREAM_ENDED,              /* none running: the last one is described */
};
/* Why a stream ended that never sent its END: no keep-alive from its
 * destination ever confirmed it. The kernel's own, never on the wire. */
#define PROF_STREAM_UNCONFIRMED  0x80

struct prof_stream_facts {
    uint8_t sf_answer;              /* enum prof_stream_answer */
    uint8_t sf_state;               /* enum prof_stream_state */
    bool sf_peer;                   /* asked by that stream's destination: its id may
                                       be told (to no one else) */
    bool sf_counted;                /* sf_c and sf_reason are that stream's as it ended
                                       (ENDED), or as they stand (running) */
    uint32_t sf_id;                 /* the stream running, or the last one; 0: none */
    uint64_t sf_addr;               /* its sink's sk_addr (the command layer's) */
    char sf_to[40];                 /* its sink's sk_name */
    unsigned sf_what;               /* PROF_STREAM_CPU | _OFF, or _HEAP */
    unsigned sf_ncpus;              /* running: the CPUs streaming */
    uint32_t sf_ms;                 /* the length asked (0: until stopped) */
    uint64_t sf_age_ms;             /* running: since it started */
    bool sf_confirmed;              /* running: its destination's keep-alive came */
    uint64_t sf_ka_ms;              /* confirmed: since the last keep-alive */
    uint8_t sf_reason;              /* ended: PSTR_END_* or PROF_STREAM_UNCONFIRMED */
    struct prof_stream_counters sf_c;
};

/* A stream to start: pid's records (PROF_ALL: every task) of what
 * (kernel/prof/session.h: PROF_STREAM_CPU the samples, PROF_STREAM_OFF
 * the time tasks spend off their CPUs, each interval with its reason and
 * waker, both for the wall-clock view, or PROF_STREAM_HEAP the
 * allocator's samples) into sink (copied) for ms (0: until stopped). */
struct prof_stream_ask {
    const struct prof_sink *sa_sink;
    uint32_t sa_ms;
    int sa_pid;
    unsigned sa_what;
    prof_busy_note_fn sa_note;      /* the busy messages' note while this stream
                                       holds the profiler (kernel/prof/session.h):
                                       the command layer's words; or NULL */
    uint32_t sa_heap_rate;          /* _HEAP: the allocator's rate in force (mm
                                       owns it: the command hands it in) */
};

/* Start it: 0, or 1 and f->sf_answer says why (BUSY and REFUSED_START:
 * the session's refusal in *e, busy, heap off, no memory for the rings).
 * f: the new stream (its id, to its sink's peer only), or on BUSY the one
 * that holds the profiler, if a stream does.
 *
 * A new stream is unconfirmed: it sends one META and nothing more until
 * its destination's first keep-alive (prof_stream_keepalive from the
 * sink's peer) says it wants the stream. One never confirmed ends
 * silently (no END) after PSTR_KEEPALIVE_MS: a start asked in someone
 * else's name costs that someone one datagram at most. */
int prof_stream_start(const struct prof_stream_ask *a, struct prof_stream_facts *f,
                      struct prof_err *e);
/* End the running stream, as `profile stop`, waiting for its END: 0 and
 * f the stream as it ended (sf_counted unless another had already
 * replaced it), or 1 (NONE: none running; ENDING: still ending after
 * 3 s). */
int prof_stream_stop(struct prof_stream_facts *f);
/* Keep stream id alive for another PSTR_KEEPALIVE_MS (and confirm a new
 * one), heeded only from the stream's destination (sk_is_peer): 0, or 1
 * (NONE, NOT_PEER, OTHER, ENDING). A refusal to anyone but the
 * destination says nothing of the id, right or wrong: f->sf_peer is
 * false and sf_id is not for telling. */
int prof_stream_keepalive(uint32_t id, struct prof_stream_facts *f);
/* The running stream, or the last one, and its counters; a stream whose
 * END is on its way is waited for first (a collector asks right after
 * it): always 0. */
int prof_stream_status(struct prof_stream_facts *f);
/* The same, as it stands now, without waiting (busy notes, `net`). */
void prof_stream_now(struct prof_stream_facts *f);

#ifdef SONDE_HOST_TEST
/* The stream task's body, for a host test to run in place of task_spawn. */
void prof_stream_test_task(void *arg);
#endif
