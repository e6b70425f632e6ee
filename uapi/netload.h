/* uapi/netload.h: the netload payload, spoken by the kernel side
 * (net/netload.c) and the host peer (tools/netload.c); both link
 * uapi/netload.c, so it is freestanding: nothing but <stdint.h>
 * <stddef.h> <stdbool.h>.
 *
 * Every netload datagram starts with an 18-byte header, big-endian:
 *
 *   offset size field
 *        0    4 magic    0x4E4C4F44 ("NLOD")
 *        4    2 run id   chosen by the sender per run; the receiver locks onto
 *                        the first run it sees and counts others as foreign
 *        6    4 seq      0, 1, 2, ... within the run
 *       10    8 time_ns  the sender's clock when it built the datagram
 *
 * and is padded to the run's size (18..1472 bytes) with a fixed pattern
 * (byte i of the datagram = i & 0xff) that the receiver does not check. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NL_MAGIC     0x4E4C4F44u
#define NL_HDR_LEN   18
#define NL_SIZE_MIN  NL_HDR_LEN
#define NL_SIZE_MAX  1472              /* one Ethernet frame: 1500 - 20 - 8 */
#define NL_SIZE_DEF  1024

#define NL_OFF_MAGIC 0
#define NL_OFF_RUN   4
#define NL_OFF_SEQ   6
#define NL_OFF_TIME  10
_Static_assert(NL_OFF_TIME + 8 == NL_HDR_LEN, "netload header is 18 bytes");
_Static_assert(NL_SIZE_MAX == 1500 - 20 - 8, "a netload datagram fills one frame at most");

struct nl_hdr {                        /* host byte order */
    uint32_t magic;
    uint16_t run;
    uint32_t seq;
    uint64_t time_ns;
};

/* Fill the padding once per run (it does not change between datagrams). */
void nl_fill_pattern(uint8_t *buf, size_t size);
/* Write the header into buf (at least NL_HDR_LEN bytes). */
void nl_build(uint8_t *buf, uint16_t run, uint32_t seq, uint64_t time_ns);
/* True, with *h filled, if buf is a netload datagram: long enough, right magic. */
bool nl_parse(const uint8_t *buf, size_t len, struct nl_hdr *h);

/* The receiver's accounting of one run's sequence numbers.
 *
 * A bitmap window (the caller's memory, nbits a power of two) remembers
 * which of the last nbits sequence numbers arrived, to tell a duplicate
 * from a late (reordered) datagram. A datagram older than the window is
 * counted as reordered and assumed not a duplicate.
 *
 *   unique   = datagrams - dup
 *   lost     = (highest seq + 1) - unique     (senders start at 0; a
 *              datagram still in flight at the end counts as lost)
 *   reordered: arrived after a higher sequence number had. */
struct nl_track {
    uint64_t datagrams, bytes, dup, reordered;
    uint32_t max_seq;                  /* valid when datagrams > 0 */
    uint8_t *bits;
    uint32_t nbits;
};

void nl_track_init(struct nl_track *t, uint8_t *bits, uint32_t nbits);
/* Account one datagram of the run (len = its size in bytes). */
void nl_track_seq(struct nl_track *t, uint32_t seq, size_t len);
uint64_t nl_track_lost(const struct nl_track *t);
