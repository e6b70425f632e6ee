/* uapi/profile_stream.h: the profile stream, as `profile stream` sends it
 * and sonde-prof (record -d, top) reads it (docs/continuous.md).
 *
 * A stream is the raw profile (uapi/profile_raw.h) cut into UDP
 * datagrams as the samples are taken: no symbols, addresses only, so the
 * host names them with the kernel ELF. The kernel sends, the collector
 * only receives (its keep-alives and `profile stop` go through the UDP
 * shell, which authenticates them when the kernel has a key). A kernel
 * whose shell has a key tags every datagram (below: "Tagged datagrams").
 *
 * Every datagram is a 32-byte header and a payload, all big-endian:
 *
 *   offset size field
 *        0    4 magic      0x53505253 ("SPRS")
 *        4    1 version    1
 *        5    1 type       PSTR_META, PSTR_BATCH or PSTR_END
 *        6    2 cpu        BATCH: the CPU whose samples these are; else 0
 *        8    4 stream     the stream's id, chosen by the kernel per stream
 *                          (a new stream, or a rebooted kernel, has another)
 *       12    4 seq        0, 1, 2, ... over every datagram of the stream,
 *                          whatever its type: a gap is a datagram lost
 *       16    8 t_ns       the kernel's clock (time since boot) at sending
 *       24    2 len        payload bytes; the datagram is exactly 32 + len
 *                          (32 + len + PSTR_TAG_LEN when tagged)
 *       26    2 count      BATCH: records; META: tasks; END: CPUs
 *       28    1 flags      PSTR_FLAG_TAGGED: a tag follows the payload
 *       29    3 reserved   zero
 *
 * BATCH payload: 12 bytes, then count records.
 *
 *        0    4 first      this CPU's index of the first record here: every
 *                          record a CPU's ring delivers is numbered from 0
 *                          at the stream's start, so a gap in first + count
 *                          from one batch to the CPU's next is records lost
 *                          on the wire, exactly
 *        4    4 drops      samples this CPU dropped (ring full, nested)
 *                          since its previous batch
 *        8    4 drops_total  the same since the stream's start (a lost
 *                          batch loses no drop count)
 *   record:
 *        0    4 pid        the task sampled (0: none, idle)
 *        4    1 depth      frames, 1 .. PSTR_FRAMES
 *        5    1 flags      PSTR_REC_TICK: taken by the tick, not the counter;
 *                          PSTR_REC_WEIGHT: a weight follows;
 *                          PSTR_REC_SIZE: a size follows the weight;
 *                          PSTR_REC_OFF: why and who (below) follow it;
 *                          PSTR_REC_LOCK: a lock's waits, kind and name
 *                          (below) follow it;
 *                          PSTR_REC_TRACE: a trace event's part (below)
 *                          follows it
 *        6    1 kind       what the record measures: PSTR_KIND_CPU (0), a
 *                          sample of the running pc; PSTR_KIND_OFFCPU (1),
 *                          time off the CPU; PSTR_KIND_HEAP (2), bytes;
 *                          PSTR_KIND_LOCK (3), time others waited on a lock;
 *                          PSTR_KIND_TRACE (4), an event of a trace
 *        7    1 tail       the outermost frames this record shares with the
 *                          record before it in the batch, not sent again
 *                          (0 .. depth; at most that record's depth; 0 in
 *                          a batch's first record and in every record but
 *                          a CPU sample's): see "Shared tails"
 *   (8    8 weight)        with PSTR_REC_WEIGHT, which every kind but
 *                          PSTR_KIND_CPU has and a CPU sample never has: how
 *                          much (nanoseconds off the CPU, bytes), at
 *                          least 1; a CPU sample weighs 1
 *  (16    8 size)          with PSTR_REC_SIZE, which a PSTR_KIND_HEAP
 *                          record has and no other kind: the sampled
 *                          block's requested size in bytes (0 .. 2^64-1),
 *                          so that a reader tells objects (weight / size,
 *                          at least 1) from bytes, as the raw profile's
 *                          OBJECTS does
 *  8|16|24 8*(depth-tail) frames  the interrupted pc, then return
 *                          addresses, innermost first (as in the raw
 *                          profile), the first depth - tail of them
 * A CPU sample is sent without a weight, so its 8 bytes of fixed part are
 * those the format had before it carried kinds (the kind byte was
 * reserved, zero). A reader of that format therefore reads a BATCH that
 * holds CPU samples alone; one holding any weighted record it refuses
 * whole (the flag and the kind byte were fields it required to be zero),
 * CPU samples in it included. Likewise a reader from before heap records
 * carried their size refuses a BATCH with a heap record (PSTR_REC_SIZE was
 * a flag bit it required to be zero) rather than misread its frames.
 *
 * Shared tails. Samples of one CPU taken close together mostly differ in
 * their innermost frames: the task's outer chain is the same. A record
 * with tail t sends only its first depth - t frames; its last t are the
 * previous record's last t (frames[depth - t + j] = prev[prev_depth - t +
 * j]), the previous record being the one before it in this datagram,
 * whatever its kind (its own frames, not a waker's). So every datagram
 * reads alone: a lost one takes no other's frames with it. A sample of a
 * loop five calls deep is 16 bytes instead of 56, and a datagram carries
 * three times as many. Only a CPU sample (kind 0) has a tail; every other
 * kind sends its frames whole (tail 0), so that the format keeps one
 * spelling for them, and the encoder always shares all it can. A reader
 * of the format before tails refuses a batch that has one (the byte was
 * reserved, zero).
 *
 * Off-CPU records (kind 1, `profile off ... stream`) also carry why the
 * task was away and who ended it: flag PSTR_REC_OFF, and after the weight
 *
 *       16    1 why        PSTR_WHY_SLEEP, _WAITQ, _MUTEX (blocked time,
 *                          from the switch-out to the wake), _PREEMPTED,
 *                          _RUNNABLE (from the wake, or the preemption, to
 *                          the switch-in: scheduler latency)
 *       17    1 name_len   0 .. PSTR_NAME_MAX: the wait queue's or mutex's
 *                          name (0 for the other reasons, or no name)
 *       18    1 wdepth     0 .. PSTR_FRAMES: the waker's chain (blocked
 *                          reasons only, and only with a waker >= 0)
 *       19    1 reserved   zero
 *       20    4 waker      who ended the wait: a pid; 0 the tick (a sleep,
 *                          or a wake from an interrupt with no task);
 *                          0xffffffff (-1) nobody yet (still waiting at the
 *                          stream's end), and always for runnable and
 *                          preempted records
 *       24    n name       '!'..'~' except ';' and ':'
 *   then the frames (depth - tail of them: the task's chain at its switch-out,
 *   frame 0 in schedule; a chain the walk could not take is one frame,
 *   0), then the waker's (wdepth of them: its chain at the wake).
 * One record is one interval of one task off its CPU: its blocked time
 * and who woke it together, so that no reader has to pair records. A
 * reader of the format before this flag refuses such a batch whole (an
 * unknown flag), as above.
 *
 * Lock records (kind 3, `profile lock ... stream`): the weight is the
 * delay in nanoseconds that waiters spent on one lock, charged to its
 * holder, and the frames are the holder's chain at the release. Flag
 * PSTR_REC_LOCK, and after the weight
 *
 *       16    4 waits      the waits that delay sums, at least 1
 *       20    1 lkind      PSTR_LOCK_SPIN (1) or PSTR_LOCK_MUTEX (2)
 *       21    1 name_len   0 .. PSTR_NAME_MAX: the lock's name (0: none)
 *       22    2 reserved   zero
 *       24    n name       '!'..'~' except ';' and ':'
 *   then the frames (depth of them; a lock record has no tail).
 * Version: the version byte stays 1. A reader from before lock records
 * refuses a batch holding one whole (kind 3 was out of its range and
 * PSTR_REC_LOCK a flag bit it required to be zero), as for the other
 * kinds, rather than misread its frames; batches of the other kinds are
 * unchanged.
 *
 * Trace records (kind 4, `trace stream`): one event of the scheduling
 * trace (uapi/trace_raw.h has the same events as text), its weight the
 * event's time in ns since the stream's start on the clock every CPU
 * shares (kernel/prof/trace.h), at least 1. A trace stream sends kind 4
 * alone: its CPU samples are trace events too, since they carry their
 * time. Flag PSTR_REC_TRACE, and after the weight
 *
 *       16    1 event      PSTR_TEV_SWITCH (1), _WAKE (2), _IRQ (3) or
 *                          _SAMPLE (4)
 *       17    1 arg        switch: why the task left (PSTR_LEFT_*: 0 idle
 *                          left, 1 sleep, 2 waitq, 3 mutex, 4 preempted,
 *                          5 exit, 6 yield); irq: its class (PSTR_IRQ_*:
 *                          1 tick, 2 device, 3 ipi, 4 nmi); wake: the class
 *                          of the interrupt it was made in, 0 for task
 *                          context; sample: 0
 *       18    1 name_len   0 .. PSTR_NAME_MAX: a switch's wait queue or
 *                          mutex (waitq and mutex only); an irq's, or a
 *                          wake-in-an-irq's, device name (kernel/irqname.h);
 *                          0 for a sample
 *       19    1 reserved   zero
 *       20    4 other      switch: the task coming in; wake: the task
 *                          woken; 0 for the others (0 is a CPU's idle task,
 *                          as pid is: the task leaving, the one running
 *                          where the wake was made, the one interrupted,
 *                          the one sampled)
 *       24    2 vector     irq, and a wake in one: the vector, 0 .. 1023;
 *                          else 0
 *       26    2 wcpu       wake: the woken task's CPU; else 0
 *       28    4 dur        irq: its slice's length in ns (exit - entry),
 *                          saturating; else 0
 *       32    n name       '!'..'~' except ';' and ':'
 *   then a sample's frames (depth 1 .. PSTR_FRAMES, no tail); the other
 *   events have depth 0 and no frames.
 * Version: the version byte stays 1; a reader from before trace records
 * refuses a batch holding one whole (kind 4 out of its range, flag 0x20
 * required zero).
 *
 * META payload: what the records need to be read; sent first, then about
 * every second (a collector that lost the first one learns it late, not
 * never), each time with the tasks alive then.
 *
 *        0   40 build_id   the kernel's GNU build id, lowercase hex
 *       40    1 source_len 1 .. PSTR_SOURCE_MAX
 *       41    n source     the sample source's name ("tick 100Hz", "pmu/...")
 *     41+n    4 pid        the pid filter; 0xffffffff: every task
 *     45+n    4 ms         the stream's length asked for; 0: until stopped
 *     49+n    4 period_ns  the counter's sampling period (PSTR_REC_TICK
 *                          records: the tick's, 1e9 / TIMER_HZ, always)
 *     53+n    2 cpus       CPUs streaming
 *     55+n    .. count tasks: pid (4), name_len (1, 1 .. 31), name
 *
 * END payload: the stream is over and why, with each CPU's totals, so
 * that records lost after a CPU's last received batch are counted too.
 * Sent three times (the same seq each time: a copy is not a gap).
 *
 *        0    1 reason     PSTR_END_*
 *        1    3 reserved   zero
 *   per CPU (count of them):
 *        0    2 cpu
 *        2    2 reserved   zero
 *        4    4 records    records the CPU's ring delivered in the stream
 *        8    4 drops_total
 *
 * A datagram is at most PSTR_DGRAM_MAX bytes: one Ethernet frame with
 * room to spare, never a fragment; a tagged one PSTR_TAG_LEN more.
 *
 * Tagged datagrams. A kernel whose UDP shell has a key (ushkey=) sets
 * PSTR_FLAG_TAGGED in every datagram and appends, after the payload, a
 * PSTR_TAG_LEN-byte tag: HMAC-SHA256 of a short digest of the datagram,
 * the digest NH (UMAC's hash, RFC 4418; Black et al. 1999) with 64-bit
 * words, so that hashing a datagram costs about an instruction a byte and
 * SHA-256 runs two blocks whatever its length. With n the datagram's
 * length before the tag (32 + len, the flag set), key the shell's and
 * epoch the shell's boot epoch (docs/udpshell.md, the challenge tells it):
 *
 *   M     = the n bytes, zeros appended up to a multiple of 16, read as
 *           64-bit little-endian words m_0 .. m_{w-1}
 *   NH_k(M) = sum over i < w/2 of ((m_2i + k_2i) mod 2^64) *
 *                                 ((m_2i+1 + k_2i+1) mod 2^64)   mod 2^128
 *   H     = NH_{k_0..}(M) || NH_{k_2..}(M)  (the second pass's key the
 *           first's shifted by two words: Toeplitz), each 16 bytes
 *           big-endian: 32 bytes
 *   tag   = HMAC-SHA256(key, "SPRS-TAG" || epoch (8, BE) || n (4, BE) || H)
 *
 * The NH key k is PSTR_NH_KEY_WORDS words, enough for a PSTR_DGRAM_MAX
 * datagram and the shift, made once per key and epoch: block j is
 * HMAC-SHA256(key, "SPRS-NHK" || epoch (8, BE) || j (4, BE)), j = 0, 1,
 * ..., the blocks concatenated and read as 64-bit little-endian words.
 *
 * Why it holds: NH is 2^-64-almost-universal on inputs of one length, the
 * two passes together 2^-128; n in the HMAC's input separates datagrams
 * of different lengths (two that pad alike among them), and the HMAC,
 * keyed, hides H, so a forger learns nothing of the hash's key from the
 * tags it sees. The 8-byte labels keep a stream's tags and NH keys from
 * ever being a shell datagram's tag (those begin with the shell's magic,
 * "NOSH"), and the epoch one boot's (or one kernel's, when a fleet shares
 * a key) from passing for another's. A collector with the key takes only
 * datagrams whose tag verifies (uapi/profile_stream_tag.c): none can be
 * forged, nor replayed from another boot. The tag does not stop a replay
 * within the same boot and stream; the sequence numbers make such a copy
 * a duplicate.
 *
 * The encoder and the parsers (uapi/profile_stream.c) are portable C with
 * no library calls, shared by the kernel and the host tools. The parsers
 * never read past the datagram and refuse anything malformed with a reason
 * (PSTR_E*), whatever the bytes.
 *
 * Wire format: prefix pstr_ and PSTR_. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "uapi/byteorder.h"

#define PSTR_MAGIC        0x53505253u
#define PSTR_VERSION      1
#define PSTR_HDR_LEN      32
#define PSTR_DGRAM_MAX    1400
#define PSTR_FRAMES       8
#define PSTR_SOURCE_MAX   63
#define PSTR_TASK_MAX     31
#define PSTR_BUILD_ID_HEX 40
#define PSTR_BATCH_HDR    12
#define PSTR_REC_FIXED    8          /* a record's bytes before its frames */
#define PSTR_REC_WEIGHT_LEN 8       /* the optional weight */
#define PSTR_REC_SIZE_LEN 8         /* a heap record's size */
#define PSTR_REC_MAX      (PSTR_REC_FIXED + PSTR_REC_WEIGHT_LEN + PSTR_REC_SIZE_LEN + \
                           8 * PSTR_FRAMES)
#define PSTR_REC_MAX_CPU  (PSTR_REC_FIXED + 8 * PSTR_FRAMES)   /* no weight */
#define PSTR_REC_OFF_LEN  8          /* an off-CPU record's why .. waker */
#define PSTR_NAME_MAX     31         /* a wait queue's or mutex's name */
#define PSTR_REC_MAX_OFF  (PSTR_REC_FIXED + PSTR_REC_WEIGHT_LEN + PSTR_REC_OFF_LEN + \
                           PSTR_NAME_MAX + 16 * PSTR_FRAMES)
#define PSTR_REC_LOCK_LEN 8          /* a lock record's waits .. reserved */
#define PSTR_REC_MAX_LOCK (PSTR_REC_FIXED + PSTR_REC_WEIGHT_LEN + PSTR_REC_LOCK_LEN + \
                           PSTR_NAME_MAX + 8 * PSTR_FRAMES)
#define PSTR_REC_TRACE_LEN 16        /* a trace record's event .. dur */
#define PSTR_REC_MAX_TRACE (PSTR_REC_FIXED + PSTR_REC_WEIGHT_LEN + PSTR_REC_TRACE_LEN + \
                            PSTR_NAME_MAX + 8 * PSTR_FRAMES)
#define PSTR_PID_ALL      0xffffffffu
#define PSTR_FLAG_TAGGED  0x01
#define PSTR_TAG_LEN      32         /* HMAC-SHA256 */
#define PSTR_KEY_LEN      32         /* the UDP shell's key (USHP_KEY_LEN) */
#define PSTR_TAG_LABEL    "SPRS-TAG"
#define PSTR_NHK_LABEL    "SPRS-NHK" /* the NH key's blocks */
/* NH's key: a word per 8 bytes of the largest datagram padded to 16, and
 * the second pass's shift of two. */
#define PSTR_NH_KEY_WORDS ((PSTR_DGRAM_MAX + 15) / 16 * 2 + 2)
#define PSTR_TAGGED_MAX   (PSTR_DGRAM_MAX + PSTR_TAG_LEN)

enum { PSTR_META = 1, PSTR_BATCH = 2, PSTR_END = 3 };
#define PSTR_REC_TICK     0x01
#define PSTR_REC_WEIGHT   0x02
#define PSTR_REC_SIZE     0x04
#define PSTR_REC_OFF      0x08      /* kind offcpu: why, name, waker follow the weight */
#define PSTR_REC_LOCK     0x10      /* kind lock: waits, lock kind, name follow the weight */
#define PSTR_REC_TRACE    0x20      /* kind trace: the event's part follows the weight */
/* A trace record's event, and its arg: a switch's reason (numbered as
 * uapi/trace_raw.h's TRAW_LEFT_*), an interrupt's class (TRAW_IRQ_*). */
enum { PSTR_TEV_SWITCH = 1, PSTR_TEV_WAKE = 2, PSTR_TEV_IRQ = 3, PSTR_TEV_SAMPLE = 4 };
#define PSTR_TEV_MAX      PSTR_TEV_SAMPLE
#define PSTR_LEFT_WAITQ   2
#define PSTR_LEFT_MUTEX   3
#define PSTR_LEFT_MAX     6
#define PSTR_IRQ_CLASS_MAX 4
#define PSTR_VEC_MAX      1023
/* A lock record's lock kind. */
enum { PSTR_LOCK_SPIN = 1, PSTR_LOCK_MUTEX = 2 };
#define PSTR_LOCK_MAX     PSTR_LOCK_MUTEX
/* An off-CPU record's reason, numbered as the kernel's (enum prof_why). */
enum {
    PSTR_WHY_SLEEP = 1, PSTR_WHY_WAITQ = 2, PSTR_WHY_MUTEX = 3,
    PSTR_WHY_PREEMPTED = 4, PSTR_WHY_RUNNABLE = 5,
};
#define PSTR_WHY_MAX      PSTR_WHY_RUNNABLE
#define PSTR_WAKER_NONE   (-1)
enum {
    PSTR_KIND_CPU = 0, PSTR_KIND_OFFCPU = 1, PSTR_KIND_HEAP = 2, PSTR_KIND_LOCK = 3,
    PSTR_KIND_TRACE = 4,
};
#define PSTR_KIND_MAX     PSTR_KIND_TRACE

enum {
    PSTR_END_STOPPED = 1,    /* `profile stop` */
    PSTR_END_TIMEOUT = 2,    /* no keep-alive for PSTR_KEEPALIVE_MS */
    PSTR_END_ELAPSED = 3,    /* the ms asked for have passed */
};
#define PSTR_KEEPALIVE_MS 5000   /* a stream without a keep-alive ends */

/* One Ethernet frame carries a tagged datagram too (1500 - 20 IPv4 - 8
 * UDP): no fragments, which the kernel's stack drops. */
_Static_assert(PSTR_TAGGED_MAX <= 1472, "a tagged datagram fits one frame");
_Static_assert(sizeof PSTR_TAG_LABEL - 1 == 8, "the tag's label is 8 bytes");
_Static_assert(sizeof PSTR_NHK_LABEL - 1 == 8, "the NH key's label is 8 bytes");

/* Every BATCH datagram holds at least this many records of any depth. */
_Static_assert((PSTR_DGRAM_MAX - PSTR_HDR_LEN - PSTR_BATCH_HDR) / PSTR_REC_MAX_CPU >= 18,
               "a batch holds 18 full-depth CPU samples");
_Static_assert((PSTR_DGRAM_MAX - PSTR_HDR_LEN - PSTR_BATCH_HDR) / PSTR_REC_MAX >= 15,
               "a batch holds 15 full-depth records of any kind");
_Static_assert((PSTR_DGRAM_MAX - PSTR_HDR_LEN - PSTR_BATCH_HDR) / PSTR_REC_MAX_OFF >= 7,
               "a batch holds 7 off-CPU records of the longest name and two full chains");
_Static_assert((PSTR_DGRAM_MAX - PSTR_HDR_LEN - PSTR_BATCH_HDR) / PSTR_REC_MAX_LOCK >= 10,
               "a batch holds 10 lock records of the longest name and a full chain");
_Static_assert((PSTR_DGRAM_MAX - PSTR_HDR_LEN - PSTR_BATCH_HDR) / PSTR_REC_MAX_TRACE >= 10,
               "a batch holds 10 trace records of the longest name and a full chain");

/* pstr_parse's and the payload parsers' reasons for refusing a datagram. */
#define PSTR_ESHORT     -1   /* shorter than its header or a field it declares */
#define PSTR_EMAGIC     -2   /* magic or version not ours */
#define PSTR_ELEN       -3   /* len disagrees with the datagram's size, or too big */
#define PSTR_ETYPE      -4   /* type unknown */
#define PSTR_ERESERVED  -5   /* a reserved field not zero */
#define PSTR_EFIELD     -6   /* a field out of its range (depth, name length, ...) */
#define PSTR_ECOUNT     -7   /* count disagrees with the payload */
#define PSTR_NREASONS   7

struct pstr_hdr {                   /* host byte order */
    uint8_t type;
    uint16_t cpu;
    uint32_t stream, seq;
    uint64_t t_ns;
    uint16_t count;
    const uint8_t *payload;         /* into the datagram */
    size_t len;
    bool tagged;                    /* PSTR_FLAG_TAGGED: the tag follows the payload
                                       (unverified: pstr_verify) */
};

struct pstr_record {
    uint32_t pid;
    uint8_t depth, flags;           /* PSTR_REC_TICK; PSTR_REC_WEIGHT,
                                       PSTR_REC_SIZE and PSTR_REC_OFF are the
                                       format's business, never set here */
    uint8_t kind;                   /* PSTR_KIND_* */
    uint64_t weight;                /* parsed: 1 when none was sent */
    uint64_t size;                  /* PSTR_KIND_HEAP: the block's requested
                                       size; 0 for every other kind */
    uint64_t frames[PSTR_FRAMES];
    /* Off-CPU only: why 0 when the record has no PSTR_REC_OFF part (every
     * other kind), else PSTR_WHY_*; the rest as the format says. */
    uint8_t why;
    uint8_t wdepth;
    int32_t waker;                  /* PSTR_WAKER_NONE: nobody */
    char name[PSTR_NAME_MAX + 1];   /* "" when none; a lock record's lock too */
    uint64_t wframes[PSTR_FRAMES];
    /* Lock only (0 for every other kind): the waits and PSTR_LOCK_*. */
    uint32_t waits;
    uint8_t lkind;
    /* Trace only (0 for every other kind): the event's part, weight its
     * time, name its queue's, mutex's or interrupt's; depth 0 but for a
     * sample. */
    uint8_t tev, targ;
    uint32_t tother;
    uint16_t tvec, twcpu;
    uint32_t tdur;
};

/* Whether why is blocked time (sleep, wait queue, mutex): the reasons
 * that have a waker. */
static inline bool pstr_why_blocked(unsigned why)
{
    return why == PSTR_WHY_SLEEP || why == PSTR_WHY_WAITQ || why == PSTR_WHY_MUTEX;
}

struct pstr_batch {
    uint32_t first, drops, drops_total;
};

struct pstr_meta {
    char build_id[PSTR_BUILD_ID_HEX + 1];
    char source[PSTR_SOURCE_MAX + 1];
    uint32_t pid, ms, period_ns;
    uint16_t cpus;
};

struct pstr_end_cpu {
    uint16_t cpu;
    uint32_t records, drops_total;
};

/* The header: 0 and *h filled, or a PSTR_E* reason. */
int pstr_parse(const void *dgram, size_t len, struct pstr_hdr *h);
/* What a PSTR_E* reason means, as a phrase for an error message. */
const char *pstr_strerror(int reason);

/* The payloads of a parsed header of the right type. Each checks the whole
 * payload first and only then calls fn once per item, in order, so a
 * refused datagram has called fn for nothing. 0, or a PSTR_E* reason. */
typedef void (*pstr_record_fn)(void *ctx, const struct pstr_record *r);
int pstr_batch_parse(const struct pstr_hdr *h, struct pstr_batch *b,
                     pstr_record_fn fn, void *ctx);
typedef void (*pstr_task_fn)(void *ctx, uint32_t pid, const char *name);
int pstr_meta_parse(const struct pstr_hdr *h, struct pstr_meta *m,
                    pstr_task_fn fn, void *ctx);
typedef void (*pstr_cpu_fn)(void *ctx, const struct pstr_end_cpu *c);
int pstr_end_parse(const struct pstr_hdr *h, uint8_t *reason,
                   pstr_cpu_fn fn, void *ctx);

/* The encoder: one datagram built in place. begin writes the header (len
 * and count are filled by finish); add_* append one item and return false,
 * writing nothing, when it would not fit (send this one, begin another)
 * or is out of range. finish returns the datagram's length. The datagram
 * is at buf: the writer's own mem after pstr_begin, or the caller's
 * PSTR_DGRAM_MAX bytes after pstr_begin_in (a kernel's transmit buffer,
 * so that nothing is copied). */
struct pstr_writer {
    uint8_t *buf;
    size_t len;
    uint16_t count;
    uint8_t last_depth;             /* the last record's depth, 0 when the next
                                       shares no tail with it */
    uint64_t last[PSTR_FRAMES];     /* its frames */
    uint8_t mem[PSTR_DGRAM_MAX];
};
void pstr_begin(struct pstr_writer *w, uint8_t type, uint16_t cpu,
                uint32_t stream, uint32_t seq, uint64_t t_ns);
void pstr_begin_in(struct pstr_writer *w, uint8_t *out, uint8_t type, uint16_t cpu,
                   uint32_t stream, uint32_t seq, uint64_t t_ns);
/* BATCH: right after pstr_begin, once. */
void pstr_batch_head(struct pstr_writer *w, const struct pstr_batch *b);
/* Any record. A CPU sample weighs 1: it is sent without a weight, and
 * r->weight is ignored; every other kind is sent with its weight, a heap
 * record with its size too (r->size, ignored for other kinds), and an
 * off-CPU one with r->why set with its PSTR_REC_OFF part, a lock one with
 * its PSTR_REC_LOCK part (r->waits, r->lkind, r->name); refused, as the
 * parser would refuse it, when a field is out of its range. */
bool pstr_add_record(struct pstr_writer *w, const struct pstr_record *r);
/* A run of CPU samples added to one datagram: pstr_run_begin takes the
 * writer's length, count, last depth and last pc into the run (locals,
 * so that a loop keeps them in registers while every store goes through
 * bytes, which may alias anything in memory), pstr_run_add adds one
 * sample as pstr_add_frames does, and pstr_run_end puts them back. The
 * last record's other frames stay in the writer; while the run lasts,
 * pc and not last[0] is its pc. */
struct pstr_run {
    uint8_t *p, *end;               /* where the next record goes; the datagram's end */
    uint32_t count;
    unsigned last_depth;
    uint64_t pc;                    /* the last record's frames[0] */
    uint64_t *last;                 /* the writer's */
};

static inline void pstr_run_begin(struct pstr_writer *w, struct pstr_run *r)
{
    r->p = w->buf + w->len;
    r->end = w->buf + PSTR_DGRAM_MAX;
    r->count = w->count;
    r->last_depth = w->last_depth;
    r->pc = w->last[0];
    r->last = w->last;
}

static inline void pstr_run_end(struct pstr_writer *w, const struct pstr_run *r)
{
    w->len = (size_t)(r->p - w->buf);
    w->count = (uint16_t)r->count;
    w->last_depth = (uint8_t)r->last_depth;
    w->last[0] = r->pc;
}

/* A CPU sample whose depth and outer frames (frames[1 .. depth)) are the
 * last record's, which the caller has compared (pstr_run_add does, and a
 * kernel's loop over a run of them may, holding the outer frames in
 * registers): its header, and its pc when that is not the last's, so 8
 * or 16 bytes. depth and flags are the caller's, checked (depth the
 * last's, flags 0 or PSTR_REC_TICK). pstr_run_put_same is for a caller
 * that has made sure that 16 bytes fit (PSTR_REC_SAME_MAX);
 * pstr_run_add_same looks, and is false, writing nothing, when the
 * record does not fit. */
#define PSTR_REC_SAME_MAX (PSTR_REC_FIXED + 8)
static inline __attribute__((always_inline)) void
pstr_run_put_same(struct pstr_run *r, uint32_t pid, uint8_t flags, uint64_t pc, unsigned depth)
{
    uint8_t *p = r->p;
    /* The tail is depth, or depth - 1 when the pc is the record's own. */
    uint64_t head = (uint64_t)pid << 32 | (uint64_t)flags << 16 | (uint64_t)depth << 24 | depth;
    if (pc == r->pc) {
        put_be64(p, head);
        r->p = p + PSTR_REC_FIXED;
    } else {
        put_be64(p, head - 1);
        put_be64(p + PSTR_REC_FIXED, pc);
        r->pc = pc;
        r->p = p + PSTR_REC_SAME_MAX;
    }
    r->count++;
}

static inline __attribute__((always_inline)) bool
pstr_run_add_same(struct pstr_run *r, uint32_t pid, uint8_t flags, uint64_t pc, unsigned depth)
{
    if (r->end - r->p < (ptrdiff_t)(pc == r->pc ? PSTR_REC_FIXED : PSTR_REC_SAME_MAX))
        return false;
    pstr_run_put_same(r, pid, flags, pc, depth);
    return true;
}

/* One CPU sample (kind cpu, weight 1) from its parts, frames[0 ..
 * depth): what a kernel adds straight from its own records, without a
 * struct pstr_record between; false, writing nothing, when it does not
 * fit or is out of range. Inline: the kernel's stream encodes ~1000
 * records a second per CPU, and a call, its checks and its loop were
 * most of a record's cost. The writer keeps the record before's frames:
 * the tail shared with it is found by one branch-free pass where only the
 * pc differs (the common case), else by comparing from the outermost
 * frame in; the fixed part is one 8-byte store (pid, depth, flags, kind
 * cpu 0, tail), each frame of its own a store into the datagram and one
 * into the writer's copy (the pc, while a run lasts, into the run's). */
_Static_assert(PSTR_FRAMES == 8, "pstr_run_add's unrolled compare covers every depth");
static inline __attribute__((always_inline)) bool
pstr_run_add(struct pstr_run *r, uint32_t pid, uint8_t flags, const uint64_t *frames,
             unsigned depth)
{
    if (depth < 1 || depth > PSTR_FRAMES || (flags & ~PSTR_REC_TICK))
        return false;
    unsigned last = r->last_depth;
    uint64_t *l = r->last;
    uint64_t head = (uint64_t)pid << 32 | (uint64_t)depth << 24 | (uint64_t)flags << 16;
    if (depth == last) {
        /* The common case, one task's loop sampled again: the same depth
         * and every frame but the pc the same (or all of them), told by
         * one pass without branches, unrolled from the deepest; a chain
         * as deep as a record holds (a deep one, cut) straight through. */
        uint64_t diff = 0;
        if (depth == PSTR_FRAMES) {
            diff = (frames[1] ^ l[1]) | (frames[2] ^ l[2]) | (frames[3] ^ l[3]) |
                   (frames[4] ^ l[4]) | (frames[5] ^ l[5]) | (frames[6] ^ l[6]) |
                   (frames[7] ^ l[7]);
        } else {
            switch (depth) {
            case 7: diff |= frames[6] ^ l[6]; /* fall through */
            case 6: diff |= frames[5] ^ l[5]; /* fall through */
            case 5: diff |= frames[4] ^ l[4]; /* fall through */
            case 4: diff |= frames[3] ^ l[3]; /* fall through */
            case 3: diff |= frames[2] ^ l[2]; /* fall through */
            case 2: diff |= frames[1] ^ l[1]; /* fall through */
            default: break;
            }
        }
        if (!diff)
            return pstr_run_add_same(r, pid, flags, frames[0], depth);
    }
    l[0] = r->pc;                       /* the writer's copy whole, as what follows reads it */
    unsigned most = depth < last ? depth : last, tail = 0;
    while (tail < most && frames[depth - 1 - tail] == l[last - 1 - tail])
        tail++;
    unsigned own = depth - tail;
    uint8_t *p = r->p;
    if (p + PSTR_REC_FIXED + 8 * (size_t)own > r->end)
        return false;
    put_be64(p, head | tail);
    /* The shared frames move to their places at this depth, as memmove
     * would (deeper: from the outermost in, so that none is overwritten
     * before it is read). */
    if (depth > last)
        for (unsigned j = tail; j-- > 0;)
            l[depth - tail + j] = l[last - tail + j];
    else if (depth < last)
        for (unsigned j = 0; j < tail; j++)
            l[depth - tail + j] = l[last - tail + j];
    uint8_t *f = p + PSTR_REC_FIXED;
    for (unsigned i = 0; i < own; i++) {
        put_be64(f + 8 * i, frames[i]);
        l[i] = frames[i];
    }
    r->last_depth = depth;
    r->pc = l[0];
    r->p = f + 8 * (size_t)own;
    r->count++;
    return true;
}

/* One CPU sample: a run of one. */
static inline bool pstr_add_frames(struct pstr_writer *w, uint32_t pid, uint8_t flags,
                                   const uint64_t *frames, unsigned depth)
{
    struct pstr_run r;
    pstr_run_begin(w, &r);
    bool ok = pstr_run_add(&r, pid, flags, frames, depth);
    pstr_run_end(w, &r);
    return ok;
}
/* META: right after pstr_begin, once (source cut to PSTR_SOURCE_MAX). */
void pstr_meta_head(struct pstr_writer *w, const struct pstr_meta *m);
/* A task's name is cut to PSTR_TASK_MAX; an empty one is sent as "-". */
bool pstr_add_task(struct pstr_writer *w, uint32_t pid, const char *name);
/* END: right after pstr_begin, once. */
void pstr_end_head(struct pstr_writer *w, uint8_t reason);
bool pstr_add_end_cpu(struct pstr_writer *w, const struct pstr_end_cpu *c);
size_t pstr_finish(struct pstr_writer *w);
/* The header's seq and t_ns rewritten, for a datagram filled over time
 * and numbered when it goes (any time before pstr_finish's length is
 * sent); and a BATCH's drop counts, likewise. */
void pstr_stamp(struct pstr_writer *w, uint32_t seq, uint64_t t_ns);
void pstr_batch_drops(struct pstr_writer *w, uint32_t drops, uint32_t drops_total);

/* ---- tags: uapi/profile_stream_tag.c (links lib/sha256.c) ----
 *
 * A key's and an epoch's state, made once (pstr_tag_begin) and read by
 * every pstr_seal and pstr_verify: HMAC-SHA256's two states after the
 * key's blocks, so that a tag costs two SHA-256 blocks, and NH's key.
 * Key material: secure_zero it when done. */
struct pstr_tag_key {
    uint32_t inner[8];              /* SHA-256 after the key ^ ipad block */
    uint32_t outer[8];              /* ... after the key ^ opad block */
    uint64_t epoch;
    uint64_t nh[PSTR_NH_KEY_WORDS];
};
struct hmac_sha256;
/* k for the key keyed was initialised with (hmac_sha256_init, nothing
 * given it since: the raw key is never needed) and epoch. */
void pstr_tag_begin(struct pstr_tag_key *k, const struct hmac_sha256 *keyed, uint64_t epoch);
/* Tag the finished n-byte datagram at d in place: PSTR_FLAG_TAGGED set,
 * the tag appended (d must have room for PSTR_TAG_LEN more). Its length,
 * n + PSTR_TAG_LEN; 0, and d untouched, when n is not a datagram's
 * (PSTR_HDR_LEN to PSTR_DGRAM_MAX). */
size_t pstr_seal(const struct pstr_tag_key *k, uint8_t *d, size_t n);
/* True when the len-byte datagram is tagged and its tag is the one k
 * gives its bytes, in time that does not depend on where a forged tag
 * goes wrong. Checks nothing else: pstr_parse it too. */
bool pstr_verify(const struct pstr_tag_key *k, const void *d, size_t len);
