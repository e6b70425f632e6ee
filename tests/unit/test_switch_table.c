// LINK: tools/switch/table.c
/* tests/unit/test_switch_table.c: the learning switch's forwarding
 * decision (tools/switch/table.c), as sonde-switch makes it per frame. */
#include "test.h"
#include "tools/switch/table.h"

static const uint8_t MAC_A[6] = { 0x52, 0x54, 0, 0x12, 0x34, 0x56 };
static const uint8_t MAC_B[6] = { 0x52, 0x54, 0, 0x12, 0x34, 0x57 };
static const uint8_t MAC_S[6] = { 0x52, 0x55, 10, 0, 2, 2 };
static const uint8_t BCAST[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t MCAST[6] = { 0x01, 0x00, 0x5e, 0, 0, 1 };

static const uint8_t *frame(const uint8_t *dst, const uint8_t *src)
{
    static uint8_t f[60];
    memset(f, 0, sizeof f);
    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    f[12] = 0x08;                    /* IPv4 */
    return f;
}

TEST(switch_floods_until_it_has_heard_the_destination)
{
    struct swt t;
    swt_init(&t, 3);
    CHECK_EQ(swt_frame(&t, 0, frame(MAC_B, MAC_A), 60), SWT_FLOOD);
    CHECK_EQ(swt_lookup(&t, MAC_A), 0);
    CHECK_EQ(swt_lookup(&t, MAC_B), -1);
    /* B answers: A was learnt, so the answer goes to A's port alone. */
    CHECK_EQ(swt_frame(&t, 1, frame(MAC_A, MAC_B), 60), 0);
    /* And now A to B goes to B's port alone: the third port (slirp, in
     * the pair) never sees it. */
    CHECK_EQ(swt_frame(&t, 0, frame(MAC_B, MAC_A), 60), 1);
}

TEST(switch_floods_broadcast_and_multicast_always)
{
    struct swt t;
    swt_init(&t, 3);
    swt_frame(&t, 1, frame(BCAST, MAC_B), 60);
    CHECK_EQ(swt_frame(&t, 0, frame(BCAST, MAC_A), 60), SWT_FLOOD);
    CHECK_EQ(swt_frame(&t, 2, frame(MCAST, MAC_S), 60), SWT_FLOOD);
}

TEST(switch_never_learns_a_group_source)
{
    struct swt t;
    swt_init(&t, 3);
    swt_frame(&t, 2, frame(MAC_A, BCAST), 60);
    CHECK_EQ(swt_lookup(&t, BCAST), -1);
    CHECK_EQ(t.used, 0);
}

TEST(switch_drops_what_stays_on_its_port_and_runts)
{
    struct swt t;
    swt_init(&t, 3);
    swt_frame(&t, 0, frame(BCAST, MAC_A), 60);
    swt_frame(&t, 0, frame(BCAST, MAC_B), 60);
    /* Both on port 0: the frame has already been heard by its target. */
    CHECK_EQ(swt_frame(&t, 0, frame(MAC_B, MAC_A), 60), SWT_DROP);
    CHECK_EQ(swt_frame(&t, 0, frame(MAC_B, MAC_A), 13), SWT_DROP);
    CHECK_EQ(swt_frame(&t, 3, frame(MAC_B, MAC_A), 60), SWT_DROP);
    CHECK_EQ(swt_frame(&t, -1, frame(MAC_B, MAC_A), 60), SWT_DROP);
}

TEST(switch_follows_a_station_that_moves)
{
    struct swt t;
    swt_init(&t, 3);
    swt_frame(&t, 1, frame(BCAST, MAC_B), 60);
    swt_frame(&t, 2, frame(BCAST, MAC_B), 60);
    CHECK_EQ(swt_lookup(&t, MAC_B), 2);
    CHECK_EQ(t.used, 1);
    CHECK_EQ(swt_frame(&t, 0, frame(MAC_B, MAC_A), 60), 2);
}

TEST(switch_full_table_replaces_the_longest_unheard)
{
    struct swt t;
    swt_init(&t, 2);
    uint8_t mac[6] = { 0x02, 0, 0, 0, 0, 0 };
    for (int i = 0; i < SWT_MACS; i++) {
        mac[5] = (uint8_t)i;
        swt_frame(&t, i & 1, frame(BCAST, mac), 60);
    }
    CHECK_EQ(t.used, SWT_MACS);
    mac[5] = 0;                      /* heard again: now the most recent */
    swt_frame(&t, 0, frame(BCAST, mac), 60);
    mac[5] = 200;                    /* a newcomer takes station 1's slot */
    swt_frame(&t, 1, frame(BCAST, mac), 60);
    CHECK_EQ(t.used, SWT_MACS);
    CHECK_EQ(swt_lookup(&t, mac), 1);
    mac[5] = 1;
    CHECK_EQ(swt_lookup(&t, mac), -1);
    mac[5] = 0;
    CHECK_EQ(swt_lookup(&t, mac), 0);
}
