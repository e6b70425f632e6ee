/* tests/unit/test_spinlock.c: kernel/spinlock.h's names. A lock named
 * where it is defined (SPINLOCK_INIT) or at run time (spin_init), and
 * one never initialised (all zeroes), which still locks and unlocks and
 * is reported as "?". */
#include "test.h"
#include "fake_hal.h"
#include <string.h>
#include "kernel/spinlock.h"

static spinlock_t named = SPINLOCK_INIT("test-named");
static spinlock_t zeroes;

TEST(spinlock_names_where_defined_and_at_init)
{
    CHECK(strcmp(spin_name(&named), "test-named") == 0);
    spinlock_t l;
    memset(&l, 0xa5, sizeof l);
    spin_init(&l, "test-init");
    CHECK(strcmp(spin_name(&l), "test-init") == 0);
    CHECK(l.locked == 0);
    unsigned long f = spin_lock(&l);
    CHECK(l.locked != 0);
    spin_unlock(&l, f);
    CHECK(l.locked == 0);
}

TEST(spinlock_zero_filled_works_and_is_unnamed)
{
    CHECK(strcmp(spin_name(&zeroes), "?") == 0);
    unsigned long f = spin_lock(&zeroes);
    CHECK(zeroes.locked != 0);
    spin_unlock(&zeroes, f);
    CHECK(zeroes.locked == 0);
    f = spin_lock(&zeroes);          /* and again: the unlock freed it */
    spin_unlock(&zeroes, f);
    CHECK(zeroes.locked == 0);
}
