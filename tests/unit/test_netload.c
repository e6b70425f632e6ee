// LINK: uapi/netload.c
/* tests/unit/test_netload.c: the netload format (uapi/netload.c) as
 * both ends use it: the header's bytes on the wire, parsing, and the
 * receiver's accounting of duplicates, reordering and loss. */
#include "test.h"
#include "uapi/netload.h"

TEST(nl_header_bytes_on_the_wire)
{
    uint8_t d[NL_HDR_LEN + 4];
    memset(d, 0xee, sizeof d);
    nl_build(d, 0x0102, 0x03040506, 0x0708090a0b0c0d0eull);
    const uint8_t want[NL_HDR_LEN] = { 'N', 'L', 'O', 'D', 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
                                       0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e };
    CHECK(memcmp(d, want, NL_HDR_LEN) == 0);
    CHECK_EQ(d[NL_HDR_LEN], 0xee);            /* nothing written past the header */
    nl_fill_pattern(d, sizeof d);
    CHECK_EQ(d[NL_HDR_LEN], NL_HDR_LEN);
    CHECK_EQ(d[NL_HDR_LEN + 3], NL_HDR_LEN + 3);
    CHECK(memcmp(d, want, NL_HDR_LEN) == 0);  /* the pattern leaves the header alone */
}

TEST(nl_parse_round_trip_and_refusals)
{
    uint8_t d[64];
    struct nl_hdr h;
    nl_build(d, 7, 99, 123456789);
    CHECK(nl_parse(d, NL_HDR_LEN, &h));
    CHECK_EQ(h.magic, NL_MAGIC);
    CHECK_EQ(h.run, 7);
    CHECK_EQ(h.seq, 99);
    CHECK_EQ(h.time_ns, 123456789);
    CHECK(!nl_parse(d, NL_HDR_LEN - 1, &h));  /* short */
    d[3] ^= 1;
    CHECK(!nl_parse(d, sizeof d, &h));        /* magic */
}

static uint8_t bits[8];                       /* a 64-datagram window */

TEST(nl_track_counts_dup_reorder_and_loss)
{
    struct nl_track t;
    nl_track_init(&t, bits, 64);
    CHECK_EQ(nl_track_lost(&t), 0);
    uint32_t seqs[] = { 0, 1, 3, 2, 3, 5 };   /* 2 late, 3 twice, 4 missing */
    for (size_t i = 0; i < sizeof seqs / sizeof seqs[0]; i++)
        nl_track_seq(&t, seqs[i], 100);
    CHECK_EQ(t.datagrams, 6);
    CHECK_EQ(t.bytes, 600);
    CHECK_EQ(t.dup, 1);
    CHECK_EQ(t.reordered, 1);
    CHECK_EQ(t.max_seq, 5);
    CHECK_EQ(nl_track_lost(&t), 1);
}

TEST(nl_track_window_slides)
{
    struct nl_track t;
    nl_track_init(&t, bits, 64);
    nl_track_seq(&t, 10, 1);
    nl_track_seq(&t, 10 + 63, 1);             /* 10 still inside the window */
    nl_track_seq(&t, 10, 1);
    CHECK_EQ(t.dup, 1);
    nl_track_seq(&t, 10 + 64 + 20, 1);        /* 10 now older than the window */
    nl_track_seq(&t, 10, 1);
    CHECK_EQ(t.dup, 1);
    CHECK_EQ(t.reordered, 1);
    /* A bit left over from seq 20 must not make 20 + 64 look like a dup. */
    nl_track_init(&t, bits, 64);
    nl_track_seq(&t, 20, 1);
    nl_track_seq(&t, 20 + 64 + 5, 1);         /* a jump past the window: clears it */
    nl_track_seq(&t, 20 + 64, 1);             /* same slot as 20: late, not a dup */
    CHECK_EQ(t.dup, 0);
    CHECK_EQ(t.reordered, 1);
    nl_track_init(&t, bits, 64);
    nl_track_seq(&t, 0, 1);
    nl_track_seq(&t, 40, 1);                  /* slides 1..40 bit by bit and by bytes */
    nl_track_seq(&t, 64, 1);                  /* slot of 0: cleared by the slide */
    nl_track_seq(&t, 64, 1);
    CHECK_EQ(t.dup, 1);
    CHECK_EQ(nl_track_lost(&t), 65 - 3);
}

TEST(nl_track_slide_clears_every_slot_it_passes)
{
    struct nl_track t;
    nl_track_init(&t, bits, 64);
    for (uint32_t s = 0; s < 64; s++)         /* every slot set */
        nl_track_seq(&t, s, 1);
    nl_track_seq(&t, 103, 1);                 /* slides over 64..102: bits, bytes, bits */
    nl_track_seq(&t, 70, 1);                  /* slot 6 */
    nl_track_seq(&t, 90, 1);                  /* slot 26, in the whole-byte part */
    nl_track_seq(&t, 101, 1);                 /* slot 37 */
    CHECK_EQ(t.dup, 0);
    CHECK_EQ(t.reordered, 3);
    /* Exactly one window back shares 103's slot: older than the window,
     * so late, not a duplicate. */
    nl_track_seq(&t, 103 - 64, 1);
    CHECK_EQ(t.dup, 0);
    CHECK_EQ(t.reordered, 4);
}
