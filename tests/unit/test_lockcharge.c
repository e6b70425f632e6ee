// LINK: kernel/lockcharge.c
/* tests/unit/test_lockcharge.c: `profile lock`'s charging arithmetic
 * (kernel/lockcharge.c) on times given as arguments, so every figure
 * is exact: two holders in turn, waiters that overlap both, one that
 * waited under two holders split between them, the gap between a
 * release and the next hold charged to no one, and an account of an
 * older window forgotten. */
#include "test.h"
#include "kernel/lockcharge.h"

TEST(share_runs_from_the_later_of_hold_and_arrival)
{
    CHECK_EQ(lockcharge_share(100, 150, 300), 150);
    CHECK_EQ(lockcharge_share(200, 150, 300), 100);
    CHECK_EQ(lockcharge_share(200, 350, 300), 0);    /* arrived after the release */
}

/* A holds from 100 to 300; W1 (from 150) and W2 (from 200) wait. W1 takes
 * it at 310 and holds to 500, while W3 arrives at 400. W2 takes it at 505,
 * W3 at 605. W2 waited under A (100) and W1 (190); the gaps 300-310 and
 * 500-505, when no one held it, are no one's. */
TEST(mutex_two_holders_overlapping_waiters)
{
    struct lockcharge_acct a = { 0 };
    lockcharge_hold(&a, 1, 100);
    struct lockcharge_ticket w1 = lockcharge_arrive(&a, 1, 150);
    struct lockcharge_ticket w2 = lockcharge_arrive(&a, 1, 200);
    struct lockcharge_charge c = lockcharge_release(&a, 1, 300);
    CHECK_EQ(c.lcc_delay, 150 + 100);
    CHECK_EQ(c.lcc_waits, 2);

    lockcharge_leave(&a, &w1);
    lockcharge_hold(&a, 1, 310);
    struct lockcharge_ticket w3 = lockcharge_arrive(&a, 1, 400);
    c = lockcharge_release(&a, 1, 500);
    CHECK_EQ(c.lcc_delay, (500 - 310) + (500 - 400));
    CHECK_EQ(c.lcc_waits, 2);

    lockcharge_leave(&a, &w2);
    lockcharge_hold(&a, 1, 505);
    c = lockcharge_release(&a, 1, 600);
    CHECK_EQ(c.lcc_delay, 600 - 505);
    CHECK_EQ(c.lcc_waits, 1);

    lockcharge_leave(&a, &w3);
    lockcharge_hold(&a, 1, 605);
    c = lockcharge_release(&a, 1, 700);
    CHECK_EQ(c.lcc_delay, 0);
    CHECK_EQ(c.lcc_waits, 0);
    CHECK_EQ(a.lca_old + a.lca_new, 0);
    CHECK_EQ(a.lca_new_sum, 0);
}

/* A waiter that arrived after a release and before the next hold is
 * charged to the next holder from its hold's start. */
TEST(mutex_arrival_between_holders)
{
    struct lockcharge_acct a = { 0 };
    lockcharge_hold(&a, 3, 100);
    lockcharge_release(&a, 3, 200);
    struct lockcharge_ticket w = lockcharge_arrive(&a, 3, 210);
    lockcharge_hold(&a, 3, 220);
    struct lockcharge_charge c = lockcharge_release(&a, 3, 320);
    CHECK_EQ(c.lcc_delay, 100);
    CHECK_EQ(c.lcc_waits, 1);
    lockcharge_leave(&a, &w);
    CHECK_EQ(a.lca_old, 0);
}

/* A window that ended with waiters still counted leaves nothing behind:
 * the next window's account starts empty, and a hold from before it is
 * charged nothing; a ticket of the old window undoes nothing. */
TEST(mutex_older_window_forgotten)
{
    struct lockcharge_acct a = { 0 };
    lockcharge_hold(&a, 1, 100);
    struct lockcharge_ticket old = lockcharge_arrive(&a, 1, 150);
    lockcharge_arrive(&a, 1, 160);
    struct lockcharge_charge c = lockcharge_release(&a, 2, 300);
    CHECK_EQ(c.lcc_delay, 0);
    CHECK_EQ(c.lcc_waits, 0);
    struct lockcharge_ticket w = lockcharge_arrive(&a, 2, 400);
    lockcharge_leave(&a, &old);
    CHECK_EQ(a.lca_new, 1);
    c = lockcharge_release(&a, 2, 450);
    CHECK_EQ(c.lcc_delay, 0);               /* this hold's start was never seen */
    lockcharge_leave(&a, &w);
    lockcharge_hold(&a, 2, 460);
    lockcharge_arrive(&a, 2, 470);
    c = lockcharge_release(&a, 2, 500);
    CHECK_EQ(c.lcc_delay, 30);
    CHECK_EQ(c.lcc_waits, 1);
}

/* CPU 0 holds L from 100; CPUs 1 and 2 spin on it from 150 and 200, CPU 3
 * on another lock. CPU 1 takes L at 305 and releases it at 400: CPU 2's
 * wait is split, 100 to CPU 0 and 95 to CPU 1. The holder's own slot is
 * never counted. */
TEST(spin_two_holders_overlapping_waiters)
{
    static const int l = 0, m = 0;
    struct lockcharge_slot s[4] = { 0 };
    lockcharge_spin_begin(&s[0], &l, 90);    /* stale: its own CPU, skipped */
    lockcharge_spin_begin(&s[1], &l, 150);
    lockcharge_spin_begin(&s[2], &l, 200);
    lockcharge_spin_begin(&s[3], &m, 120);
    struct lockcharge_charge c = lockcharge_spin_charge(s, 4, 0, &l, 100, 300);
    CHECK_EQ(c.lcc_delay, 150 + 100);
    CHECK_EQ(c.lcc_waits, 2);

    lockcharge_spin_end(&s[0]);
    lockcharge_spin_end(&s[1]);
    c = lockcharge_spin_charge(s, 4, 1, &l, 305, 400);
    CHECK_EQ(c.lcc_delay, 95);
    CHECK_EQ(c.lcc_waits, 1);
    c = lockcharge_spin_charge(s, 4, 1, &m, 100, 400);
    CHECK_EQ(c.lcc_delay, 280);
    CHECK_EQ(c.lcc_waits, 1);
    lockcharge_spin_end(&s[2]);
    c = lockcharge_spin_charge(s, 4, 2, &l, 405, 500);
    CHECK_EQ(c.lcc_waits, 0);
}
