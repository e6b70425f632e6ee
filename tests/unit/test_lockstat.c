// LIBS: -lpthread
/* tests/unit/test_lockstat.c: kernel/lockstat.c, lock_stat's counts as
 * the locks' own inline paths (kernel/spinlock.h) and the contended path
 * (kernel/spinlock.c) feed them: acquisitions counted exactly, holds
 * timed on a fake clock (one unit a ns), a contention's wait, names
 * merged across CPUs, "?" for a lock never named, the gate closed
 * counting nothing and leaving the word as it was, the order by wait. */
#include "test.h"
#include "fake_hal.h"
#include <pthread.h>
#include <string.h>
#include "kernel/lockstat.h"
#include "kernel/spinlock.h"

static spinlock_t la = SPINLOCK_INIT("test-a");
static spinlock_t lb = SPINLOCK_INIT("test-b");
static spinlock_t unnamed;

static struct lockstat_row rows[8];
static struct lockstat_info info;

static const struct lockstat_row *row(const char *name, enum lock_kind kind, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        if (!strcmp(rows[i].plr_name, name) && rows[i].plr_kind == kind)
            return &rows[i];
    return NULL;
}

static void fresh(void)
{
    fake_cpu = 0;
    fake_ncpus = 2;
    fake_cycles_step = 0;
    fake_cycles_per_us = 1000;
    lockstat_set(false);
    lockstat_reset();
}

/* A pair held for hold units of the fake clock. */
static void pair(spinlock_t *l, uint64_t hold)
{
    unsigned long f = spin_lock(l);
    fake_cycles += hold;
    spin_unlock(l, f);
}

TEST(lockstat_off_counts_nothing_and_leaves_the_word_free)
{
    fresh();
    pair(&la, 10);
    CHECK_EQ(la.locked, 0);
    CHECK_EQ(lockstat_read(rows, 8, &info), 0);
    CHECK(!info.pli_on);
}

TEST(lockstat_counts_every_acquisition_and_times_each_hold)
{
    fresh();
    lockstat_set(true);
    for (int i = 1; i <= 5; i++)
        pair(&la, 100 * (uint64_t)i);          /* 100 .. 500 */
    fake_cpu = 1;                              /* the same name on another CPU */
    pair(&la, 50);
    pair(&lb, 7);
    unsigned n = lockstat_read(rows, 8, &info);
    CHECK(info.pli_on);
    CHECK_EQ(n, 2);
    const struct lockstat_row *a = row("test-a", LOCK_SPIN, n);
    CHECK(a != NULL);
    CHECK_EQ(a->plr_acquisitions, 6);
    CHECK_EQ(a->plr_contentions, 0);
    CHECK_EQ(a->plr_hold_ns, 1550);
    CHECK_EQ(a->plr_hold_max_ns, 500);
    CHECK_EQ(a->plr_wait_ns, 0);
    CHECK_EQ(row("test-b", LOCK_SPIN, n)->plr_hold_ns, 7);
    CHECK_EQ(la.locked, 0);
    CHECK_EQ(info.pli_resolution_ns, 1);
}

TEST(lockstat_names_an_unnamed_lock_and_resets)
{
    fresh();
    lockstat_set(true);
    pair(&unnamed, 3);
    unsigned n = lockstat_read(rows, 8, &info);
    CHECK_EQ(n, 1);
    CHECK(!strcmp(rows[0].plr_name, "?"));
    CHECK_EQ(rows[0].plr_acquisitions, 1);
    lockstat_reset();
    CHECK_EQ(lockstat_read(rows, 8, &info), 0);
    pair(&unnamed, 3);                        /* counts again, from zero */
    CHECK_EQ(lockstat_read(rows, 8, &info), 1);
    CHECK_EQ(rows[0].plr_acquisitions, 1);
}

TEST(lockstat_a_hold_begun_while_on_is_timed_to_its_end)
{
    fresh();
    lockstat_set(true);
    unsigned long f = spin_lock(&la);
    CHECK(la.stat.lh_timed);
    lockstat_set(false);
    fake_cycles += 9;
    spin_unlock(&la, f);
    CHECK_EQ(la.locked, 0);
    CHECK_EQ(lockstat_read(rows, 8, &info), 1);
    CHECK_EQ(rows[0].plr_acquisitions, 1);
    CHECK_EQ(rows[0].plr_hold_ns, 9);
    CHECK(!la.stat.lh_timed);
    pair(&la, 5);                             /* off: neither counted nor timed */
    CHECK_EQ(lockstat_read(rows, 8, &info), 1);
    CHECK_EQ(rows[0].plr_acquisitions, 1);
    CHECK_EQ(rows[0].plr_hold_ns, 9);
}

/* A holder on another thread (CPU 1) keeps test-b until the waiter
 * (CPU 0) is in the contended path; the waiter's clock moves one unit a
 * read, so its wait is what its own reads saw. */
static volatile int held, go;

static void *holder(void *arg)
{
    (void)arg;
    fake_cpu = 1;
    unsigned long f = spin_lock(&lb);
    __atomic_store_n(&held, 1, __ATOMIC_RELEASE);
    while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
        ;
    spin_unlock(&lb, f);
    return NULL;
}

TEST(lockstat_a_contention_counts_its_wait_and_orders_the_table)
{
    fresh();
    lockstat_set(true);
    pair(&la, 1);
    held = go = 0;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, holder, NULL) == 0);
    while (!__atomic_load_n(&held, __ATOMIC_ACQUIRE))
        ;
    go = 1;                                   /* it releases while we spin, or before */
    fake_cycles_step = 1;
    unsigned long f = spin_lock(&lb);
    spin_unlock(&lb, f);
    pthread_join(t, NULL);
    unsigned n = lockstat_read(rows, 8, &info);
    const struct lockstat_row *b = row("test-b", LOCK_SPIN, n);
    CHECK(b != NULL);
    CHECK_EQ(b->plr_acquisitions, 2);
    CHECK(b->plr_contentions <= 1);
    if (b->plr_contentions) {                 /* the wait: two clock reads a unit apart at least */
        CHECK(b->plr_wait_ns >= 1);
        CHECK_EQ(b->plr_wait_max_ns, b->plr_wait_ns);
        CHECK(!strcmp(rows[0].plr_name, "test-b"));   /* the most waited first */
    }
    CHECK_EQ(lb.locked, 0);
}
