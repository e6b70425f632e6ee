// LINK: lib/printf.c lib/sha256.c
/* tests/unit/test_entropy.c: the portable entropy core (kernel/entropy.c)
 * against a fake CPU instruction: the source chosen, the bounded retries,
 * the repetition check, and failures that reach the caller as "no". */
#include "test.h"
#include <stdarg.h>
#include "sbuf.h"
#include "kernel/entropy.c"

static char klog[4096];
void kprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t n = strlen(klog);
    vsnprintf(klog + n, sizeof klog - n, fmt, ap);
    va_end(ap);
}

void mutex_lock(struct mutex *m) { m->locked++; }
void mutex_unlock(struct mutex *m) { m->locked--; }

/* The instruction: fake_rng_empty tries answer "none ready" before each
 * value; fake_rng_stuck repeats one value; else a counter-driven xorshift. */
static const char *fake_rng_name;
static int fake_rng_empty;
static bool fake_rng_stuck;
static int fake_rng_tries, fake_rng_left;
static uint64_t fake_rng_x;

const char *cpu_rng_name(void) { return fake_rng_name; }
bool cpu_rng_read(uint64_t *out)
{
    fake_rng_tries++;
    if (fake_rng_left > 0) {
        fake_rng_left--;
        *out = 0;
        return false;
    }
    fake_rng_left = fake_rng_empty;
    if (!fake_rng_stuck) {
        fake_rng_x ^= fake_rng_x << 13;
        fake_rng_x ^= fake_rng_x >> 7;
        fake_rng_x ^= fake_rng_x << 17;
    }
    *out = fake_rng_x;
    return true;
}

/* A fresh boot: the core's state and the fakes'. */
static void boot(const char *cpu, int empty, bool stuck)
{
    memset(&ent, 0, sizeof ent);
    ent_once = ONCE_NOT_RUN;
    klog[0] = 0;
    fake_rng_name = cpu;
    fake_rng_empty = fake_rng_left = empty;
    fake_rng_stuck = stuck;
    fake_rng_tries = 0;
    fake_rng_x = 0x0123456789abcdefull;
    entropy_init();
}

TEST(cpu_instruction_chosen_and_named)
{
    boot("rdrand", 0, false);
    CHECK_STR(entropy_source(), "rdrand");
    CHECK(strstr(klog, "entropy: rdrand (the CPU's instruction)\n") != NULL);
    uint8_t a[13], b[13];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    CHECK(entropy_get(a, sizeof a));
    CHECK(entropy_get(b, sizeof b));
    CHECK(memcmp(a, b, sizeof a) != 0);
    CHECK_EQ(ent_lock.locked, 0);              /* released on every path */
    entropy_init();                             /* idempotent: no second choice */
    CHECK_EQ(strlen(klog), strlen("entropy: rdrand (the CPU's instruction)\n"));
}

TEST(no_instruction_no_source_and_get_fails)
{
    boot(NULL, 0, false);
    CHECK(entropy_source() == NULL);
    CHECK(strstr(klog, "entropy: none") != NULL);
    uint8_t b[8] = { 0 };
    CHECK(!entropy_get(b, sizeof b));
    CHECK_EQ(fake_rng_tries, 0);                /* never asked a CPU without it */
}

TEST(source_is_null_before_init)
{
    memset(&ent, 0, sizeof ent);
    ent_once = ONCE_NOT_RUN;
    fake_rng_name = "rdrand";
    CHECK(entropy_source() == NULL);
    uint8_t b[8];
    CHECK(!entropy_get(b, sizeof b));
}

TEST(empty_tries_are_retried_up_to_ten)
{
    boot("rndr", 9, false);                     /* 9 empty, then a value */
    CHECK_STR(entropy_source(), "rndr");
    int before = fake_rng_tries;
    uint64_t w;
    CHECK(entropy_get(&w, sizeof w));
    CHECK_EQ(fake_rng_tries - before, 10);
    CHECK_EQ(ent.retries, 3 * 9);               /* the boot's 2 words, then this one */
}

TEST(eleven_empty_tries_refuse_the_source_at_boot)
{
    boot("rdrand", 10, false);                  /* a value only on the 11th try */
    CHECK(entropy_source() == NULL);
    CHECK(strstr(klog, "rdrand failed its start-up check (no value in 10 tries in a row)")
          != NULL);
    CHECK_EQ(fake_rng_tries, 10);               /* bounded: gave up, did not loop */
    uint8_t b[4];
    CHECK(!entropy_get(b, sizeof b));
}

TEST(stuck_value_refused_at_boot)
{
    boot("rdrand", 0, true);
    CHECK(entropy_source() == NULL);
    CHECK(strstr(klog, "the same 64-bit value twice in a row") != NULL);
}

TEST(failure_after_boot_reaches_the_caller_and_stays)
{
    boot("rdrand", 0, false);
    uint8_t b[64];
    CHECK(entropy_get(b, sizeof b));
    fake_rng_empty = fake_rng_left = 1000;      /* the generator dies */
    CHECK(!entropy_get(b, sizeof b));
    CHECK(strstr(klog, "entropy: rdrand failed: no value in 10 tries") != NULL);
    CHECK(entropy_source() == NULL);
    fake_rng_empty = fake_rng_left = 0;         /* back: still refused */
    int before = fake_rng_tries;
    CHECK(!entropy_get(b, sizeof b));
    CHECK_EQ(fake_rng_tries, before);
    CHECK_EQ(ent_lock.locked, 0);
}

TEST(repeat_across_calls_is_caught)
{
    boot("rdrand", 0, false);
    uint64_t w;
    CHECK(entropy_get(&w, sizeof w));
    fake_rng_stuck = true;                      /* the next word repeats the last */
    CHECK(!entropy_get(&w, sizeof w));
    CHECK(strstr(klog, "the same 64-bit value twice in a row") != NULL);
}

TEST(long_and_odd_lengths_filled_whole)
{
    boot("rdrand", 0, false);
    uint8_t b[203];
    memset(b, 0, sizeof b);
    uint64_t words = ent.words;
    CHECK(entropy_get(b, sizeof b));
    CHECK_EQ(ent.words - words, (203 + 7) / 8);
    int zeros = 0;                              /* ~0.8 expected of 203 random bytes */
    for (size_t i = 0; i < sizeof b; i++)
        zeros += b[i] == 0;
    CHECK(zeros < 8);
    CHECK(b[202] != 0 || b[201] != 0);          /* the tail was written */
    CHECK(entropy_get(b, 0));
}

TEST(lscpu_line)
{
    boot("rndr", 0, false);
    struct sbuf b = SBUF_INIT;
    entropy_print(&b.pr);
    CHECK(strcmp(b.s, "entropy:      rndr (2 words drawn, 0 empty tries)\n") == 0);
    boot(NULL, 0, false);
    struct sbuf n = SBUF_INIT;
    entropy_print(&n.pr);
    CHECK(strcmp(n.s, "entropy:      none\n") == 0);
    boot("rdrand", 0, true);
    struct sbuf f = SBUF_INIT;
    entropy_print(&f.pr);
    CHECK(strcmp(f.s, "entropy:      none (rdrand failed: the same 64-bit value twice in a row)\n") == 0);
}
