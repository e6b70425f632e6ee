/* uapi/stream_ctl.h: the profile stream's control replies, the one line of
 * them a program reads. The kernel's `profile stream ...` (every kind's
 * start), `profile stop`, `profile status` and `profile keepalive <id>`
 * answer with this line first; human text may follow on other lines, and
 * no program reads it. The kernel (kernel/cmd/profile_stream.c), the
 * fleet simulator (tools/fleet/sim.c) and the collector
 * (tools/ingest/collect_shell.c) all link uapi/stream_ctl.c, which
 * formats and parses it; the Python fake kernel
 * (tests/tools/fake_stream_kernel.py) writes it by hand, and a unit test
 * parses what it writes with this parser. Freestanding: nothing but
 * <stdint.h> <stddef.h> <stdbool.h>.
 *
 * The line, in ASCII, at most SCTL_LINE_MAX bytes with its '\n':
 *
 *   stream v=1 op=OP result=RESULT state=STATE [KEY=VALUE ...]
 *
 * "stream", then single spaces between words, each word KEY=VALUE: a key
 * of 1-16 characters [a-z0-9_] starting with a letter, a value of 1-63
 * printable characters (no space, no '='). v comes first, and a line of
 * another version is not read further (its grammar may differ). op,
 * result and state must be there, every other key may be; a key twice
 * is malformed. A key this version does not know is skipped (a newer
 * kernel may add some), but a known key's value must be in its range:
 *
 *   op        start | stop | status | keepalive    what was asked
 *   result    ok       done: started, stopped, kept alive, or the status
 *             busy     start: the profiler is taken (a stream, or a window)
 *             none     stop, keepalive: no stream is running
 *             refused  keepalive: asked from elsewhere than the destination
 *             other    keepalive: another stream runs (id= names it)
 *             ending   keepalive: the stream is sending its END; stop:
 *                      asked to, and still ending after 3 s
 *             failed   start: the kernel could not (no memory, heap
 *                      profiling off, not asked over the UDP shell)
 *             invalid  the arguments were wrong (the text says which)
 *   state     streaming | ending   a stream runs (and is ending)
 *             ended    none runs; one ran since boot
 *             none     no stream since boot
 *   id        0x + 8 hex digits, not 0: the running stream, or (op=stop)
 *             the one that just ended. Only ever told to the stream's
 *             destination (its address and port): a keep-alive names it.
 *   last      0x + 8 hex digits, not 0: the last stream that ended
 *             (state=ended); to the destination of that stream only
 *   to        A.B.C.D:PORT (0-255 each, port 1-65535): where it streams
 *   kind      cpu | off | wall | allocs | lock | trace: what it records
 *   cpus      0-4096: CPUs streaming
 *   len       0-86400000: the length asked, ms (0: until stopped)
 *   age       0-SCTL_MS_MAX: ms since it started
 *   confirmed 0 | 1: a keep-alive from its destination came
 *   ka        0-SCTL_MS_MAX: ms since its last keep-alive (confirmed=1)
 *   reason    stopped | timeout | elapsed | unconfirmed: why it ended
 *             (as the END datagram's, uapi/profile_stream.h, and
 *             unconfirmed: never confirmed, so it sent no END)
 *   records datagrams drops sendfail karefused   0-2^64-1 each: records
 *             sent, datagrams sent, records the rings dropped, datagrams
 *             the network would not take, keep-alives refused
 *
 * Numbers are decimal without leading zeros ("0" itself is one). A
 * version that changes what a key means is another version.
 *
 * Wire format: prefix sctl_ and SCTL_. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SCTL_VERSION   1
#define SCTL_VERSION_MAX 65535     /* what v= may say and be reported */
/* A line's bytes, its '\n' included: the widest line the formatter can
 * write (every key, each at its longest value: 365 bytes) fits, with room
 * (tests/unit/test_stream_ctl.c formats it). */
#define SCTL_LINE_MAX  400
#define SCTL_KEY_MAX   16
#define SCTL_VALUE_MAX 63
#define SCTL_CPUS_MAX  4096
#define SCTL_LEN_MAX   86400000u   /* PROF_STREAM_MS_MAX */
#define SCTL_MS_MAX    1000000000000000ull   /* ~31,700 years of ms */

enum sctl_op { SCTL_OP_START = 1, SCTL_OP_STOP, SCTL_OP_STATUS, SCTL_OP_KEEPALIVE };
enum sctl_result {
    SCTL_OK = 1, SCTL_BUSY, SCTL_NONE, SCTL_REFUSED, SCTL_OTHER, SCTL_ENDING, SCTL_FAILED,
    SCTL_INVALID,
};
enum sctl_state { SCTL_ST_NONE = 1, SCTL_ST_STREAMING, SCTL_ST_ENDING, SCTL_ST_ENDED };
enum sctl_kind { SCTL_KIND_CPU = 1, SCTL_KIND_OFF, SCTL_KIND_WALL, SCTL_KIND_ALLOCS, SCTL_KIND_LOCK,
                 SCTL_KIND_TRACE };
/* The END's reasons keep their numbers (PSTR_END_*). */
enum sctl_reason {
    SCTL_END_STOPPED = 1, SCTL_END_TIMEOUT, SCTL_END_ELAPSED, SCTL_END_UNCONFIRMED,
};

/* Which optional keys a line has (sl_have). */
enum {
    SCTL_HAVE_ID = 1u << 0, SCTL_HAVE_LAST = 1u << 1, SCTL_HAVE_TO = 1u << 2,
    SCTL_HAVE_KIND = 1u << 3, SCTL_HAVE_CPUS = 1u << 4, SCTL_HAVE_LEN = 1u << 5,
    SCTL_HAVE_AGE = 1u << 6, SCTL_HAVE_CONFIRMED = 1u << 7, SCTL_HAVE_KA = 1u << 8,
    SCTL_HAVE_REASON = 1u << 9, SCTL_HAVE_RECORDS = 1u << 10,
    SCTL_HAVE_DATAGRAMS = 1u << 11, SCTL_HAVE_DROPS = 1u << 12,
    SCTL_HAVE_SENDFAIL = 1u << 13, SCTL_HAVE_KAREFUSED = 1u << 14,
};
/* The five counters, as the formatter writes them together. */
#define SCTL_HAVE_COUNTS (SCTL_HAVE_RECORDS | SCTL_HAVE_DATAGRAMS | SCTL_HAVE_DROPS | \
                          SCTL_HAVE_SENDFAIL | SCTL_HAVE_KAREFUSED)

struct sctl_line {
    uint16_t sl_v;                  /* parsed: the version the line says */
    uint8_t sl_op, sl_result, sl_state;   /* enum sctl_op, _result, _state */
    uint8_t sl_kind, sl_reason, sl_confirmed;
    uint32_t sl_have;               /* SCTL_HAVE_*: which below are set */
    uint32_t sl_id, sl_last;
    uint32_t sl_to_ip;              /* host order */
    uint16_t sl_to_port;
    uint16_t sl_cpus;
    uint32_t sl_len;
    uint64_t sl_age, sl_ka;
    uint64_t sl_records, sl_datagrams, sl_drops, sl_sendfail, sl_karefused;
};
/* No padding: two lines are the same when their bytes are (memcmp). */
_Static_assert(sizeof(struct sctl_line) == 88, "struct sctl_line has no padding");

/* The line of l into buf (cap bytes; SCTL_LINE_MAX + 1 always do), v=1, its
 * '\n' and a NUL after it: its length without the NUL, or 0 when cap is
 * too small or l holds a value out of its range (nothing a parser would
 * refuse is ever written). */
size_t sctl_format(char *buf, size_t cap, const struct sctl_line *l);

/* Parsing: 0 with *l filled, or why not. */
enum {
    SCTL_E_NOLINE  = -1,    /* no line begins "stream " (sctl_find) */
    SCTL_E_SYNTAX  = -2,    /* not words of KEY=VALUE, or a key or value too long */
    SCTL_E_LONG    = -3,    /* over SCTL_LINE_MAX bytes */
    SCTL_E_VERSION = -4,    /* v= is not SCTL_VERSION: l->sl_v says which (0 if unreadable) */
    SCTL_E_RANGE   = -5,    /* a known key's value out of its range */
    SCTL_E_DUP     = -6,    /* a key twice */
    SCTL_E_MISSING = -7,    /* v, op, result or state missing */
};
/* Whether the n bytes at s begin as a control line does ("stream "):
 * how a reader tells the control line from the text for people. */
#define SCTL_LEAD_LEN 7u
bool sctl_is_line(const char *s, size_t n);
/* The line at s (n bytes, up to its '\n' or the end; it need not be
 * NUL-terminated), which begins "stream ". */
int sctl_parse(const char *s, size_t n, struct sctl_line *l);
/* The first line of a reply (n bytes) that begins "stream ", parsed as
 * sctl_parse does; SCTL_E_NOLINE when no line does (a kernel older than
 * this grammar). */
int sctl_find(const char *text, size_t n, struct sctl_line *l);
/* What an error code says, for messages ("no control line", ...). */
const char *sctl_strerror(int code);

/* The words of the enums, for the formatter and for messages; NULL for a
 * value out of range. */
const char *sctl_op_name(unsigned op);
const char *sctl_result_name(unsigned r);
const char *sctl_state_name(unsigned s);
const char *sctl_kind_name(unsigned k);
const char *sctl_reason_name(unsigned r);
