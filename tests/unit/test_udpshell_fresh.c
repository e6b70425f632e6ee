// LINK: net/udpshell_fresh.c
/* tests/unit/test_udpshell_fresh.c: the authenticated shell's window of
 * accepted nonces (net/udpshell_fresh.c), checked against a model that
 * remembers every nonce ever accepted: a nonce is fresh exactly when it
 * was never accepted and is above the 65th highest accepted. */
#include "test.h"
#include <stdlib.h>
#include "net/udpshell_fresh.h"

static struct ushf f;

static struct ushf_req req(uint64_t nonce, uint32_t ip, uint16_t port, uint32_t seq)
{
    return (struct ushf_req){ .nonce = nonce, .ip = ip, .port = port, .seq = seq };
}

static void accept_nonce(uint64_t n)
{
    struct ushf_req r = req(n, 0x0a000001, 5000, (uint32_t)n);
    ushf_accept(&f, &r);
}

TEST(fresh_until_accepted_whoever_sends_it)
{
    ushf_init(&f);
    CHECK(!ushf_fresh(&f, 0));                  /* 0 is never a nonce */
    CHECK(ushf_fresh(&f, 1));
    CHECK(ushf_fresh(&f, UINT64_MAX));
    struct ushf_req r = req(1000, 0x0a000001, 5000, 7);
    ushf_accept(&f, &r);
    CHECK(!ushf_fresh(&f, 1000));
    /* The window has no sender in it: 20 other ports, 20 other hosts, all
     * see the nonce as used. */
    CHECK(ushf_fresh(&f, 999) && ushf_fresh(&f, 1001));
    CHECK_EQ(f.highest, 1000);
}

TEST(recent_matches_nonce_address_port_and_seq_exactly)
{
    ushf_init(&f);
    struct ushf_req r = req(77, 0x0a000001, 5000, 9);
    ushf_accept(&f, &r);
    CHECK(ushf_recent(&f, &r));
    struct ushf_req other[] = {
        req(78, 0x0a000001, 5000, 9), req(77, 0x0a000002, 5000, 9),
        req(77, 0x0a000001, 5001, 9), req(77, 0x0a000001, 5000, 10),
    };
    for (unsigned i = 0; i < sizeof other / sizeof other[0]; i++)
        CHECK(!ushf_recent(&f, &other[i]));
    /* USHF_RECENT later requests push it out. */
    for (unsigned i = 0; i < USHF_RECENT; i++)
        accept_nonce(100 + i);
    CHECK(!ushf_recent(&f, &r));
    CHECK(!ushf_fresh(&f, 77));                 /* still used */
}

/* Out of order within the window: a nonce below the top but never seen is
 * fresh, as long as fewer than 65 accepted nonces lie above it... */
TEST(reordered_nonces_are_taken_old_ones_refused)
{
    ushf_init(&f);
    for (uint64_t n = 1000; n < 1000 + USHF_NONCES; n++)
        accept_nonce(n);
    CHECK(ushf_fresh(&f, 500));                 /* 64 above it, none below: fresh */
    accept_nonce(500);                          /* now the floor */
    CHECK(!ushf_fresh(&f, 500));
    CHECK(!ushf_fresh(&f, 499));
    CHECK(ushf_fresh(&f, 501));
    CHECK(!ushf_fresh(&f, 1000));               /* kept */
    accept_nonce(5000);                         /* 1000 goes under the floor */
    CHECK_EQ(f.floor, 1000);
    CHECK(!ushf_fresh(&f, 1000) && !ushf_fresh(&f, 999) && !ushf_fresh(&f, 501));
    CHECK(ushf_fresh(&f, 4999));
}

/* Two clients whose clocks are a second apart: the one behind is refused
 * once the other has sent 65 requests in that second, since those sit
 * above its nonces... */
TEST(a_client_far_behind_is_refused_on_its_own_clock)
{
    ushf_init(&f);
    uint64_t t = 1000000000000ull;
    int refused = 0;
    for (int i = 0; i < 200; i++, t += 1000) {
        uint64_t a = t + 1000000000ull, b = t;
        accept_nonce(a);
        if (ushf_fresh(&f, b))
            accept_nonce(b);
        else
            refused++;
    }
    CHECK_EQ(refused, 200 - USHF_NONCES);
}

/* ...but not once it starts above the highest nonce the shell has seen
 * (the challenge tells it, docs/udpshell.md), and both clocks then run at
 * the same rate: requests interleave in any order within 63 of each other. */
TEST(a_client_shifted_above_the_highest_takes_turns)
{
    ushf_init(&f);
    uint64_t t = 1000000000000ull, skew = 1000000000ull;
    for (int i = 0; i < 100; i++, t += 1000)
        accept_nonce(t + skew);
    uint64_t shift = f.highest + 1 - t;        /* what the client computes */
    for (int i = 0; i < 500; i++, t += 1000) {
        uint64_t a = t + skew + (uint64_t)(i % 7) * 300, b = t + shift + (uint64_t)(i % 5) * 400;
        CHECK(ushf_fresh(&f, a));
        accept_nonce(a);
        CHECK(ushf_fresh(&f, b));
        accept_nonce(b);
    }
}

/* The model: every nonce ever accepted. Random nonces in a narrow range
 * (so that many repeat and many fall under the floor), checked one by one. */
static int cmp_desc(const void *x, const void *y)
{
    uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
    return a < b ? 1 : a > b ? -1 : 0;
}

TEST(matches_the_model_of_every_accepted_nonce)
{
    static uint64_t all[20000], sorted[20000];
    size_t n = 0;
    ushf_init(&f);
    srand(42);
    for (int i = 0; i < 20000; i++) {
        uint64_t x = (uint64_t)(rand() % 30000) + (uint64_t)i * 3;
        bool seen = false;
        for (size_t k = 0; k < n && !seen; k++)
            seen = all[k] == x;
        memcpy(sorted, all, n * sizeof *all);
        qsort(sorted, n, sizeof *sorted, cmp_desc);
        uint64_t floor = n > USHF_NONCES ? sorted[USHF_NONCES] : 0;
        bool want = x != 0 && !seen && x > floor;
        if (ushf_fresh(&f, x) != want) {
            CHECK(ushf_fresh(&f, x) == want);
            return;
        }
        if (want) {
            accept_nonce(x);
            all[n++] = x;
        }
        if (n == sizeof all / sizeof all[0])
            break;
    }
    CHECK(n > 1000);                            /* the check saw both answers */
}
