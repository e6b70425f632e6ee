/* tools/ingest/stream.h: one kernel's profile stream (uapi/profile_stream.h)
 * as the host receives it, and its loss accounting (docs/continuous.md).
 *
 * No sockets and no clock of its own: the collector (tools/ingest/collect.c)
 * hands every parsed datagram of a stream to sp_stream_take with the time,
 * so unit tests drive it with datagrams built by the uapi encoder.
 *
 * What is counted, exactly:
 * - datagrams lost: gaps in seq (every datagram of a stream has the next
 *   one). A late datagram that fills a gap takes its count back; a copy
 *   (the END's, or one the network doubled) is a duplicate, not a gap.
 * - records lost on the wire: per CPU, the records numbered between one
 *   received batch and the next (first tells the index of each batch's
 *   first record), and those after the CPU's last received batch that
 *   its END total says were sent. Without an END, the latter cannot be
 *   known: sp_stream_finish marks the stream end_missing and the count is a
 *   lower bound.
 * - records dropped in the kernel (ring full, nested): the highest
 *   drops_total each CPU reported, its END total when there is one.
 * Records delivered + lost on the wire = records the kernel's rings gave
 * the stream, when the END came.
 *
 * What arrives is not trusted to be sane (a datagram can be forged where
 * the stream is not tagged, docs/continuous.md): a seq or a record index
 * that jumps SP_STREAM_SEQ_WIN datagrams or SP_STREAM_REC_JUMP records ahead
 * is refused and counted (far), so one forged number cannot make every
 * real datagram late; nor can a few forged jumps just short of that: the
 * seqs skipped over are believed only as far as a budget, SP_STREAM_JUMP_MAX
 * at most and SP_STREAM_JUMP_RATE more each second of the host's clock, and
 * a jump past what is left of it is refused and counted (far) as well,
 * unless the caller verified every datagram's tag (verified: -k); datagrams counted lost past the END's seq are not
 * lost (no real one is numbered there); a record whose pid the raw
 * profile cannot carry costs that record alone (bad_records), never the
 * profile.
 *
 * Host pipeline: prefix sp_. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "uapi/profile_stream.h"

#define SP_STREAM_CPUS      4096       /* CPU numbers 0 .. 4095, as the raw profile */
#define SP_STREAM_SEQ_WIN   65536      /* how late a datagram may come and still count,
                                        and how far ahead it may jump */
/* How far one CPU's record index may jump: every datagram of a seq jump
 * of SP_STREAM_SEQ_WIN lost, each with the most records a batch holds (a
 * depth-1 record is 16 bytes), rounded up. A kernel that loses more in a
 * row than that has long been given up on as silent. */
#define SP_STREAM_REC_JUMP  (SP_STREAM_SEQ_WIN * 128u)
/* The seqs a stream may skip (count lost) in a burst, and how many more a
 * second: a real kernel (a datagram per CPU per 100 ms drain, a few
 * hundred a second) that loses 8192 in a row has been silent for many
 * seconds and been given up on; two forged jumps of 65535 would take
 * 131070, and with them every real datagram's place in the window. */
#define SP_STREAM_JUMP_MAX  8192u
#define SP_STREAM_JUMP_RATE 1024u
#define SP_STREAM_TASKS_MAX 4096       /* pid -> name entries kept from METAs, at most */

struct sp_stream_cpu {
    bool seen;                  /* a batch or an END total came */
    uint32_t next;              /* the record index expected next */
    uint64_t received;
    uint64_t lost;              /* records in gaps not filled (yet) */
    uint32_t drops_total;       /* the highest reported */
};

struct sp_stream_task {
    uint32_t pid;
    char name[PSTR_TASK_MAX + 1];
};

struct sp_stream {
    uint32_t id;                /* the stream's id, from the kernel's reply */
    bool have_meta;
    struct pstr_meta meta;      /* the first META's */
    /* datagrams */
    uint64_t datagrams;         /* accepted, copies excluded */
    uint64_t dups;              /* copies of a seq already taken */
    uint64_t end_dups;          /* of which the END's (sent three times) */
    uint64_t late;              /* older than the window: not taken */
    uint64_t far;               /* a seq or a record index too far ahead: not taken */
    uint64_t malformed;         /* a payload the parsers refused */
    uint64_t other_builds;      /* METAs with another build id: not taken */
    uint64_t lost_dgrams;       /* gaps in seq not filled (yet) */
    uint32_t seq_next;          /* the highest seq taken + 1 */
    uint32_t jump_left;         /* seqs that may still be skipped (SP_STREAM_JUMP_MAX) */
    bool verified;              /* every datagram handed to it had the stream's tag
                                   verified (-k): a jump is believed whole */
    uint64_t jump_ms;           /* the host's time it was last refilled to */
    bool seq_any;
    uint8_t seq_seen[SP_STREAM_SEQ_WIN / 8];   /* bit seq % WIN: taken */
    /* records */
    struct sp_stream_cpu *cpus;   /* capcpus of them (at most SP_STREAM_CPUS),
                                     made as CPU numbers come */
    size_t capcpus;
    unsigned ncpus;               /* the highest CPU seen + 1 */
    uint64_t records;             /* received (bad ones included) */
    uint64_t bad_records;         /* received with a field the raw profile cannot
                                     carry (pid > PRAW_PID_MAX): not delivered */
    uint64_t lost_records;        /* lost on the wire (a lower bound without END) */
    /* the end */
    bool ended, end_missing;
    uint8_t end_reason;         /* PSTR_END_* */
    uint32_t end_seq;
    char other_build_id[PSTR_BUILD_ID_HEX + 1];  /* the last other one seen */
    uint64_t first_ms, last_ms; /* host clock at the first and last datagram */
    uint64_t first_t_ns, last_t_ns; /* the kernel's clock: earliest, latest seen */
    struct sp_stream_task *tasks; /* pid -> name, the latest META's word */
    size_t ntasks, captasks;
};

/* What sp_stream_take did with a datagram. */
#define SP_STREAM_TAKEN     0
#define SP_STREAM_DUP       1     /* a copy: ignored */
#define SP_STREAM_LATE      2     /* too old to tell from a copy: ignored */
#define SP_STREAM_MALFORMED 3     /* the payload parser refused it: ignored */
#define SP_STREAM_OTHER_BUILD 4   /* a META with another build id: another kernel
                                   (restarted) or a forgery; nothing taken,
                                   other_build_id set: the caller decides */
#define SP_STREAM_AFTER_END 5     /* a BATCH or META after the END: ignored */
#define SP_STREAM_FAR       6     /* seq or record index too far ahead: ignored */

/* Called once per record delivered, in datagram order (never for a bad
 * one: its pid fits the raw profile's range). */
typedef void (*sp_stream_record_fn)(void *ctx, uint16_t cpu, const struct pstr_record *r);

/* 0, or -1 out of memory. */
int sp_stream_init(struct sp_stream *s, uint32_t id);
void sp_stream_free(struct sp_stream *s);

/* One datagram of this stream (h->stream == s->id, checked by the
 * caller), received at now_ms. Records go to fn. A SP_STREAM_* code. */
int sp_stream_take(struct sp_stream *s, const struct pstr_hdr *h, uint64_t now_ms,
                 sp_stream_record_fn fn, void *ctx);

/* No more datagrams will be taken: without an END, end_missing. */
void sp_stream_finish(struct sp_stream *s);

/* How long the stream has run by the kernel's own clock, as far as the
 * datagrams taken tell (0 before two of them). */
uint64_t sp_stream_kernel_ms(const struct sp_stream *s);

/* Records dropped in the kernel, all CPUs. */
uint64_t sp_stream_drops(const struct sp_stream *s);

/* The latest META's name for pid, or NULL. */
const char *sp_stream_task(const struct sp_stream *s, uint32_t pid);

/* "stopped", "timeout", "elapsed" or "reason N". */
const char *sp_stream_end_reason(uint8_t reason);
