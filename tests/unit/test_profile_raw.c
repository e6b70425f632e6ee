// LINK: uapi/profile_raw.c
/* tests/unit/test_profile_raw.c: the raw profile parser (uapi/profile_raw.h):
 * good input, every malformed kind with its message, truncation, limits,
 * and hostile bytes under ASan. */
#include "test.h"
#include "uapi/profile_raw.h"
#include <stdlib.h>

#define BID "0123456789abcdef0123456789abcdef01234567"
#define HDR(n) "# sonde raw build-id=" BID " source=tick 100Hz samples=" n \
               " dropped=2 cpus=1 ms=1000\n"

struct seen {
    unsigned n;
    struct praw_chain c[16];
    unsigned line[16];
};

static int collect(void *ctx, const struct praw_chain *c, unsigned line,
                   char *err, size_t cap)
{
    struct seen *s = ctx;
    if (s->n < 16) {
        s->c[s->n] = *c;
        s->line[s->n] = line;
    }
    s->n++;
    return 0;
}

static int parse(const char *text, struct seen *s, struct praw_header *h,
                 char *err)
{
    memset(s, 0, sizeof *s);
    return praw_parse(text, strlen(text), h, collect, s, err, PRAW_ERR_MAX);
}

/* The parse fails and the message holds want. */
static int rejects(const char *text, const char *want)
{
    struct seen s;
    struct praw_header h;
    char err[PRAW_ERR_MAX] = "";
    if (parse(text, &s, &h, err) != -1)
        return 0;
    if (!strstr(err, want)) {
        printf("  message \"%s\" lacks \"%s\"\n", err, want);
        return 0;
    }
    return 1;
}

TEST(raw_good_profile)
{
    struct seen s;
    struct praw_header h;
    char err[PRAW_ERR_MAX] = "";
    const char *t = "# sonde raw build-id=" BID " source=pmu/nmi intel "
                    "fixed-ctr1 samples=7 dropped=3 cpus=2 ms=2000\n"
                    "5 7 burn 1 ffffffff80104a1c ffffffff80104a5b 0\n"
                    "2 0 - 0 10\n";
    CHECK_EQ(parse(t, &s, &h, err), 0);
    CHECK_STR(err, "");
    CHECK_STR(h.ph_build_id, BID);
    CHECK_STR(h.ph_source, "pmu/nmi intel fixed-ctr1");
    CHECK_EQ(h.ph_samples, 7);
    CHECK_EQ(h.ph_dropped, 3);
    CHECK_EQ(h.ph_cpus, 2);
    CHECK_EQ(h.ph_ms, 2000);
    CHECK_EQ(s.n, 2);
    CHECK_EQ(s.c[0].pc_count, 5);
    CHECK_EQ(s.c[0].pc_pid, 7);
    CHECK_STR(s.c[0].pc_task, "burn");
    CHECK_EQ(s.c[0].pc_cpu, 1);
    CHECK_EQ(s.c[0].pc_depth, 3);
    CHECK_EQ(s.c[0].pc_frames[0], 0xffffffff80104a1cull);
    CHECK_EQ(s.c[0].pc_frames[1], 0xffffffff80104a5bull);
    CHECK_EQ(s.c[0].pc_frames[2], 0);
    CHECK_EQ(s.line[0], 2);
    CHECK_STR(s.c[1].pc_task, "-");
    CHECK_EQ(s.c[1].pc_depth, 1);
    CHECK_EQ(s.c[1].pc_frames[0], 0x10);
    CHECK_EQ(s.line[1], 3);
}

TEST(raw_empty_profile_and_eight_frames)
{
    struct seen s;
    struct praw_header h;
    char err[PRAW_ERR_MAX];
    CHECK_EQ(parse(HDR("0"), &s, &h, err), 0);
    CHECK_EQ(s.n, 0);
    CHECK_EQ(parse(HDR("4294967295") "4294967295 2147483647 t 4095 "
                   "ffffffffffffffff 1 2 3 4 5 6 7\n", &s, &h, err), 0);
    CHECK_EQ(s.c[0].pc_depth, 8);
    CHECK_EQ(s.c[0].pc_count, 4294967295u);
    CHECK_EQ(s.c[0].pc_frames[0], UINT64_MAX);
    CHECK_EQ(s.c[0].pc_frames[7], 7);
}

TEST(raw_source_with_spaces_runs_to_samples)
{
    struct seen s;
    struct praw_header h;
    char err[PRAW_ERR_MAX];
    CHECK_EQ(parse("# sonde raw build-id=" BID " source=a samples b "
                   "samples=0 dropped=0 cpus=0 ms=1\n", &s, &h, err), 0);
    CHECK_STR(h.ph_source, "a samples b");
}

TEST(raw_repeated_chains_add_up)
{
    struct seen s;
    struct praw_header h;
    char err[PRAW_ERR_MAX];
    CHECK_EQ(parse(HDR("3") "1 1 a 0 10\n2 1 a 0 10\n", &s, &h, err), 0);
    CHECK_EQ(s.n, 2);
}

/* Kinds: a profile without kind= is a CPU profile whose chains weigh their
 * counts (every profile written before kinds parses as before); another
 * kind's chains carry count:weight, and each kind refuses the other's
 * chain lines. */
TEST(raw_kinds_and_weights)
{
    struct seen s;
    struct praw_header h;
    char err[PRAW_ERR_MAX];
    CHECK_EQ(parse("# sonde raw build-id=" BID " source=tick 100Hz samples=3 dropped=0 "
                   "cpus=1 ms=10\n3 7 burn 1 ffffffff80104a1c\n", &s, &h, err), 0);
    CHECK_EQ(h.ph_kind, PRAW_KIND_CPU);
    CHECK_EQ(s.c[0].pc_weight, 3);
    int rc = parse("# sonde raw build-id=" BID " source=sched samples=5 dropped=1 "
                   "cpus=2 ms=1000 kind=offcpu\n"
                   "3:1500000000 7 burn 1 why=sleep waker=0 ffffffff80104a1c ffffffff80104a5b\n"
                   "2:18446744073709551615 0 - 0 why=runnable 1\n", &s, &h, err);
    CHECK_EQ(rc, 0);
    CHECK_EQ(h.ph_kind, PRAW_KIND_OFFCPU);
    CHECK_EQ(s.n, 2);
    CHECK_EQ(s.c[0].pc_count, 3);
    CHECK_EQ(s.c[0].pc_weight, 1500000000ull);
    CHECK_EQ(s.c[0].pc_depth, 2);
    CHECK_EQ(s.c[1].pc_weight, UINT64_MAX);
    CHECK_EQ(parse("# sonde raw build-id=" BID " source=heap samples=1 dropped=0 "
                   "cpus=1 ms=0 kind=heap\n1:524288:8192 7 burn 1 10\n", &s, &h, err), 0);
    CHECK_EQ(h.ph_kind, PRAW_KIND_HEAP);
    CHECK_EQ(s.c[0].pc_weight, 524288);
    CHECK_EQ(s.c[0].pc_objects, 8192);
    CHECK(rejects("# sonde raw build-id=" BID " source=x samples=1 dropped=0 cpus=1 "
                  "ms=1 kind=heap\n1:5 7 burn 1 10\n", "line 2: objects are missing"));
    CHECK(rejects("# sonde raw build-id=" BID " source=x samples=1 dropped=0 cpus=1 "
                  "ms=1 kind=heap\n1:5:0 7 burn 1 10\n", "line 2: objects is 0"));
    CHECK(rejects("# sonde raw build-id=" BID " source=x samples=1 dropped=0 cpus=1 "
                  "ms=1 kind=offcpu\n1:5:3 7 burn 1 10\n", "line 2: "));
    CHECK_EQ(parse("# sonde raw build-id=" BID " source=x samples=1 dropped=0 "
                   "cpus=1 ms=1 kind=cpu\n1 7 burn 1 10\n", &s, &h, err), 0);
    CHECK_EQ(h.ph_kind, PRAW_KIND_CPU);
    CHECK(rejects("# sonde raw build-id=" BID " source=x samples=1 dropped=0 cpus=1 "
                  "ms=1 kind=wall\n", "line 1: kind is not cpu, offcpu, heap or lock"));
    CHECK(rejects("# sonde raw build-id=" BID " source=x samples=1 dropped=0 cpus=1 "
                  "ms=1\n1:5 7 burn 1 10\n", "line 2: a CPU chain has no weight"));
    CHECK(rejects("# sonde raw build-id=" BID " source=x samples=1 dropped=0 cpus=1 "
                  "ms=1 kind=heap\n1 7 burn 1 10\n", "line 2: weight is missing"));
    CHECK(rejects("# sonde raw build-id=" BID " source=x samples=1 dropped=0 cpus=1 "
                  "ms=1 kind=heap\n1:0 7 burn 1 10\n", "line 2: weight is 0"));
    CHECK(rejects("# sonde raw build-id=" BID " source=x samples=1 dropped=0 cpus=1 "
                  "ms=1 kind=heap\n1:18446744073709551616 7 burn 1 10\n",
                  "line 2: weight is out of range"));
    CHECK_STR(praw_kind_name(PRAW_KIND_OFFCPU), "offcpu");
    CHECK(praw_kind_name(PRAW_KIND_MAX + 1) == NULL);
}

#define LOCKHDR(n) "# sonde raw build-id=" BID " source=locks samples=" n \
                   " dropped=0 cpus=2 ms=300 kind=lock\n"

/* The kernel's lock lines (`profile lock ... raw`): the lock's type and
 * name, the waits the releases ended, the holder's chain ("0" when the
 * walk found none). */
TEST(raw_lock_chains)
{
    struct seen s;
    struct praw_header h;
    char err[PRAW_ERR_MAX];
    CHECK_EQ(parse(LOCKHDR("4")
                   "3:1200000 7 burn-lock 0 lock=mutex:burn-lock-m waits=5 "
                   "ffffffff80104a1c ffffffff80104a5b\n"
                   "1:18446744073709551615 8 burn-spin 1 lock=spin:? waits=1 0\n",
                   &s, &h, err), 0);
    CHECK_EQ(h.ph_kind, PRAW_KIND_LOCK);
    CHECK_STR(praw_kind_name(PRAW_KIND_LOCK), "lock");
    CHECK_EQ(s.n, 2);
    CHECK_EQ(s.c[0].pc_count, 3);
    CHECK_EQ(s.c[0].pc_weight, 1200000);
    CHECK_EQ(s.c[0].pc_objects, 5);
    CHECK_EQ(s.c[0].pc_why, PRAW_WHY_MUTEX);
    CHECK_STR(s.c[0].pc_name, "burn-lock-m");
    CHECK_STR(s.c[0].pc_task, "burn-lock");
    CHECK_EQ(s.c[0].pc_depth, 2);
    CHECK_EQ(s.c[0].pc_frames[1], 0xffffffff80104a5bull);
    CHECK_EQ(s.c[0].pc_waker, PRAW_WAKER_NONE);
    CHECK_EQ(s.c[0].pc_wdepth, 0);
    CHECK_EQ(s.c[1].pc_why, PRAW_WHY_SPIN);
    CHECK_STR(s.c[1].pc_name, "?");
    CHECK_EQ(s.c[1].pc_weight, UINT64_MAX);
    CHECK_EQ(s.c[1].pc_depth, 1);
    CHECK_EQ(s.c[1].pc_frames[0], 0);
}

TEST(raw_lock_malformed)
{
    CHECK(rejects(LOCKHDR("1") "1 7 t 0 lock=spin:a waits=1 10\n",
                  "line 2: weight is missing"));
    CHECK(rejects(LOCKHDR("1") "1:5 7 t 0 why=spin:a 10\n", "line 2: expected \" lock=\""));
    CHECK(rejects(LOCKHDR("1") "1:5 7 t 0 lock=rw:a waits=1 10\n",
                  "line 2: lock is not spin:NAME or mutex:NAME"));
    CHECK(rejects(LOCKHDR("1") "1:5 7 t 0 lock=spin waits=1 10\n",
                  "line 2: lock is not spin:NAME or mutex:NAME"));
    CHECK(rejects(LOCKHDR("1") "1:5 7 t 0 lock=mutex: waits=1 10\n",
                  "line 2: the lock's name after ':' is missing"));
    CHECK(rejects(LOCKHDR("1") "1:5 7 t 0 lock=mutex:a:b waits=1 10\n",
                  "line 2: the lock's name has a character"));
    CHECK(rejects(LOCKHDR("1") "1:5 7 t 0 lock=mutex:0123456789abcdef0123456789abcdef "
                  "waits=1 10\n", "line 2: the lock's name is longer than 31"));
    CHECK(rejects(LOCKHDR("1") "1:5 7 t 0 lock=spin:a 10\n", "line 2: expected \" waits=\""));
    CHECK(rejects(LOCKHDR("1") "1:5 7 t 0 lock=spin:a waits=0 10\n", "line 2: waits is 0"));
    CHECK(rejects(LOCKHDR("1") "1:5 7 t 0 lock=spin:a waits=01 10\n",
                  "line 2: waits has a leading zero"));
    CHECK(rejects(LOCKHDR("1") "1:5 7 t 0 lock=spin:a waits=18446744073709551616 10\n",
                  "line 2: waits is out of range"));
    CHECK(rejects(LOCKHDR("1") "1:5 7 t 0 lock=spin:a waits=1\n",
                  "line 2: missing space before the holder's chain"));
    CHECK(rejects(LOCKHDR("1") "1:5 7 t 0 lock=spin:a waits=1 10 | 20\n",
                  "line 2: return address is not lowercase hex"));
    CHECK(rejects(LOCKHDR("1") "1:5 7 t 0 lock=spin:a waits=1 1 2 3 4 5 6 7 8 9\n",
                  "line 2: more than 8 frames"));
    CHECK(rejects(LOCKHDR("1") "1:5 7 t 0 lock=spin:a waits=1 0x10\n",
                  "line 2: the holder's chain is not lowercase hex"));
    CHECK(rejects(LOCKHDR("2") "1:5 7 t 0 lock=spin:a waits=1 10\n",
                  "chain counts add up to 1 but the header says samples=2"));
}

#define OFFHDR(n) "# sonde raw build-id=" BID " source=sched samples=" n \
                  " dropped=0 cpus=1 ms=1000 kind=offcpu\n"

/* The kernel's off-CPU lines (`profile off ... raw`): the reason with its
 * queue's name, the waker, the chain ("0" when the walk found none) and
 * after " |" the waker's chain. */
TEST(raw_offcpu_reasons_and_wakers)
{
    struct seen s;
    struct praw_header h;
    char err[PRAW_ERR_MAX];
    int rc = parse(OFFHDR("8")
                   "3:106224150 6 burn-wait 1 why=waitq:burn-q waker=7:burn-waker ffffffff8011063d "
                   "ffffffff801111ab | ffffffff801119f2 ffffffff80110000 a b c d e f\n"
                   "1:20000000 6 burn-wait 0 why=sleep waker=0 ffffffff8011063d\n"
                   "1:5000 5 shell 0 why=mutex:burn-m waker=-1 0\n"
                   "2:25135 6 burn-wait 1 why=runnable ffffffff8011063d\n"
                   "1:999 5 shell 0 why=preempted 10\n", &s, &h, err);
    CHECK_EQ(rc, 0);
    CHECK_EQ(s.n, 5);
    CHECK_EQ(s.c[0].pc_why, PRAW_WHY_WAITQ);
    CHECK_STR(s.c[0].pc_name, "burn-q");
    CHECK_EQ(s.c[0].pc_waker, 7);
    CHECK_STR(s.c[0].pc_wtask, "burn-waker");
    CHECK_EQ(s.c[0].pc_depth, 2);
    CHECK_EQ(s.c[0].pc_frames[1], 0xffffffff801111abull);
    CHECK_EQ(s.c[0].pc_wdepth, 8);
    CHECK_EQ(s.c[0].pc_wframes[0], 0xffffffff801119f2ull);
    CHECK_EQ(s.c[0].pc_wframes[7], 0xf);
    CHECK_EQ(s.c[0].pc_weight, 106224150);
    CHECK_EQ(s.c[1].pc_why, PRAW_WHY_SLEEP);
    CHECK_EQ(s.c[1].pc_waker, 0);
    CHECK_STR(s.c[1].pc_wtask, "");
    CHECK_EQ(s.c[1].pc_wdepth, 0);
    CHECK_EQ(s.c[2].pc_why, PRAW_WHY_MUTEX);
    CHECK_STR(s.c[2].pc_name, "burn-m");
    CHECK_EQ(s.c[2].pc_waker, PRAW_WAKER_NONE);
    CHECK_EQ(s.c[2].pc_depth, 1);
    CHECK_EQ(s.c[2].pc_frames[0], 0);
    CHECK_EQ(s.c[3].pc_why, PRAW_WHY_RUNNABLE);
    CHECK_EQ(s.c[3].pc_waker, PRAW_WAKER_NONE);
    CHECK_EQ(s.c[4].pc_why, PRAW_WHY_PREEMPTED);
    CHECK_STR(s.c[4].pc_name, "");
    /* A CPU profile's chains have no reason. */
    CHECK_EQ(parse(HDR("1") "1 7 burn 1 10\n", &s, &h, err), 0);
    CHECK_EQ(s.c[0].pc_why, PRAW_WHY_NONE);
    CHECK_EQ(s.c[0].pc_waker, PRAW_WAKER_NONE);
    CHECK_STR(praw_why_name(PRAW_WHY_MUTEX), "mutex");
    /* Spun on a spinlock: a name, no waker (not blocked time). */
    CHECK_EQ(parse(OFFHDR("4") "4:800000 9 burn-waiter 1 why=spin:probe-s ffffffff8011063d\n",
                   &s, &h, err), 0);
    CHECK_EQ(s.c[0].pc_why, PRAW_WHY_SPIN);
    CHECK_STR(s.c[0].pc_name, "probe-s");
    CHECK_EQ(s.c[0].pc_waker, PRAW_WAKER_NONE);
    CHECK_EQ(s.c[0].pc_weight, 800000);
    CHECK(rejects(OFFHDR("1") "1:5 7 burn 1 why=spin:s waker=0 10\n",
                  "line 2: waker= on a reason that is not blocked time"));
    CHECK_STR(praw_why_name(PRAW_WHY_SPIN), "spin");
    CHECK(praw_why_name(PRAW_WHY_MAX + 1) == NULL);
    CHECK(praw_why_name(PRAW_WHY_NONE) == NULL);
}

TEST(raw_offcpu_malformed)
{
    CHECK(rejects(OFFHDR("1") "1:5 7 burn 1 10\n", "line 2: expected \" why=\""));
    CHECK(rejects(OFFHDR("1") "1:5 7 burn 1 why=nap 10\n",
                  "line 2: why is not sleep, waitq, mutex, preempted, runnable or spin"));
    CHECK(rejects(OFFHDR("1") "1:5 7 burn 1 why=sleep:x waker=0 10\n",
                  "line 2: only a waitq, mutex or spin reason has a :NAME"));
    CHECK(rejects(OFFHDR("1") "1:5 7 burn 1 why=waitq: waker=0 10\n",
                  "line 2: the wait's name after ':' is missing"));
    CHECK(rejects(OFFHDR("1") "1:5 7 burn 1 why=waitq:a;b waker=0 10\n",
                  "line 2: the wait's name has a character"));
    CHECK(rejects(OFFHDR("1") "1:5 7 burn 1 why=waitq:0123456789abcdef0123456789abcdef "
                  "waker=0 10\n", "line 2: the wait's name is longer than 31"));
    CHECK(rejects(OFFHDR("1") "1:5 7 burn 1 why=waitq:q 10\n",
                  "line 2: waker= is missing"));
    CHECK(rejects(OFFHDR("1") "1:5 7 burn 1 why=runnable waker=3 10\n",
                  "line 2: waker= on a reason that is not blocked time"));
    CHECK(rejects(OFFHDR("1") "1:5 7 burn 1 why=sleep waker=-2 10\n",
                  "line 2: waker is not a decimal number"));
    CHECK(rejects(OFFHDR("1") "1:5 7 burn 1 why=sleep waker=2147483648 10\n",
                  "line 2: waker is out of range"));
    CHECK(rejects(OFFHDR("1") "1:5 7 burn 1 why=sleep waker=0:tick 10\n",
                  "line 2: the tick (waker=0) has no task name"));
    CHECK(rejects(OFFHDR("1") "1:5 7 burn 1 why=sleep waker=3: 10\n",
                  "line 2: task is missing"));
    CHECK(rejects(OFFHDR("1") "1:5 7 burn 1 why=sleep waker=-1 10 | 20\n",
                  "line 2: a waker's chain (after \" |\") with no waker"));
    CHECK(rejects(OFFHDR("1") "1:5 7 burn 1 why=sleep waker=1 10 |\n",
                  "line 2: missing space before the waker's chain"));
    CHECK(rejects(OFFHDR("1") "1:5 7 burn 1 why=sleep waker=1 10 | 1 2 3 4 5 6 7 8 9\n",
                  "line 2: more than 8 frames"));
    CHECK(rejects(OFFHDR("1") "1:5 7 burn 1 why=sleep waker=1 | 1\n",
                  "line 2: the chain is not lowercase hex"));
    CHECK(rejects(OFFHDR("1") "1:5 7 burn 1 why=sleep waker=1\n",
                  "line 2: missing space before the chain"));
}

TEST(raw_header_malformed)
{
    CHECK(rejects("", "line 1: empty input"));
    CHECK(rejects("# sonde folded build-id=" BID " source=x samples=0 "
                  "dropped=0 cpus=0 ms=1\n", "line 1: expected \"# sonde raw"));
    CHECK(rejects("# sonde raw build-id=0123 source=x samples=0 dropped=0 "
                  "cpus=0 ms=1\n", "line 1: build-id is not 40 hex digits"));
    CHECK(rejects("# sonde raw build-id=0123456789ABCDEF0123456789abcdef01234567"
                  " source=x samples=0 dropped=0 cpus=0 ms=1\n",
                  "build-id is not lowercase hex"));
    CHECK(rejects("# sonde raw build-id=" BID " source= samples=0 dropped=0 "
                  "cpus=0 ms=1\n", "source is empty"));
    CHECK(rejects("# sonde raw build-id=" BID " source=x dropped=0\n",
                  "no \" samples=\" after the source"));
    CHECK(rejects("# sonde raw build-id=" BID " source=x\tz samples=0 "
                  "dropped=0 cpus=0 ms=1\n", "non-printable"));
    CHECK(rejects("# sonde raw build-id=" BID " source=x samples=-1 "
                  "dropped=0 cpus=0 ms=1\n", "samples is not a decimal number"));
    CHECK(rejects("# sonde raw build-id=" BID " source=x samples=0 "
                  "dropped=0 cpus=0\n", "expected \" ms=\""));
    CHECK(rejects("# sonde raw build-id=" BID " source=x samples=0 "
                  "dropped=0 cpus=4097 ms=1\n", "cpus is out of range"));
    CHECK(rejects("# sonde raw build-id=" BID " source=x samples=0 "
                  "dropped=0 cpus=0 ms=1 extra\n", "unexpected text after ms="));
    CHECK(rejects("# sonde raw build-id=" BID " source=x samples=01 "
                  "dropped=0 cpus=0 ms=1\n", "samples has a leading zero"));
    CHECK(rejects("# sonde raw build-id=" BID " source=x samples="
                  "99999999999999999999 dropped=0 cpus=0 ms=1\n",
                  "samples is out of range"));
}

TEST(raw_source_too_long)
{
    char t[512];
    snprintf(t, sizeof t, "# sonde raw build-id=" BID " source=%064d "
             "samples=0 dropped=0 cpus=0 ms=1\n", 0);
    CHECK(rejects(t, "source is longer than 63"));
}

TEST(raw_chain_malformed)
{
    CHECK(rejects(HDR("1") "0 1 a 0 10\n", "line 2: count is 0"));
    CHECK(rejects(HDR("1") "x 1 a 0 10\n", "line 2: count is not a decimal"));
    CHECK(rejects(HDR("1") "1  1 a 0 10\n", "line 2: pid is missing"));
    CHECK(rejects(HDR("1") "1 2147483648 a 0 10\n", "pid is out of range"));
    CHECK(rejects(HDR("1") "1 1 a;b 0 10\n", "task has a character"));
    CHECK(rejects(HDR("1") "1 1 " "abcdefghijabcdefghijabcdefghijab 0 10\n",
                  "task is longer than 31"));
    CHECK(rejects(HDR("1") "1 1 a 4096 10\n", "cpu is out of range"));
    CHECK(rejects(HDR("1") "1 1 a 0\n", "missing space before pc"));
    CHECK(rejects(HDR("1") "1 1 a 0 0x10\n", "pc is not lowercase hex"));
    CHECK(rejects(HDR("1") "1 1 a 0 10 AB\n",
                  "return address is not lowercase hex"));
    CHECK(rejects(HDR("1") "1 1 a 0 10 \n", "return address is missing"));
    CHECK(rejects(HDR("1") "1 1 a 0 10000000000000000\n",
                  "pc has more than 16 hex digits"));
    CHECK(rejects(HDR("1") "1 1 a\n", "missing space before cpu"));
    CHECK(rejects(HDR("1") "\n", "line 2: count is missing"));
}

TEST(raw_too_many_frames)
{
    CHECK(rejects(HDR("1") "1 1 a 0 1 2 3 4 5 6 7 8 9\n",
                  "line 2: more than 8 frames"));
}

TEST(raw_huge_counts)
{
    CHECK(rejects(HDR("4294967296") "4294967296 1 a 0 10\n",
                  "line 2: count is out of range"));
    CHECK(rejects(HDR("1") "99999999999999999999999 1 a 0 10\n",
                  "count is out of range"));
}

TEST(raw_counts_must_match_header)
{
    CHECK(rejects(HDR("5") "3 1 a 0 10\n",
                  "line 2: chain counts add up to 3 but the header says "
                  "samples=5"));
    CHECK(rejects(HDR("2") "2 1 a 0 10\n1 1 a 0 11\n",
                  "line 3: chain counts exceed"));
}

TEST(raw_truncated_last_line)
{
    CHECK(rejects(HDR("1") "1 1 a 0 ff", "line 2: truncated"));
    CHECK(rejects("# sonde raw build-id=" BID, "line 1: truncated"));
}

TEST(raw_bad_bytes)
{
    CHECK(rejects(HDR("1") "1 1 a 0 10\r\n", "line 2: carriage return"));
    const char t[] = HDR("1") "1 1 a\0 0 10\n";
    struct praw_header h;
    char err[PRAW_ERR_MAX];
    CHECK_EQ(praw_parse(t, sizeof t - 1, &h, NULL, NULL, err, sizeof err), -1);
    CHECK(strstr(err, "line 2: NUL byte") != NULL);
}

static int stop_at_2(void *ctx, const struct praw_chain *c, unsigned line,
                     char *err, size_t cap)
{
    snprintf(err, cap, "stopped");
    return 7;
}

TEST(raw_callback_stops_parse)
{
    struct praw_header h;
    char err[PRAW_ERR_MAX];
    const char *t = HDR("1") "1 1 a 0 10\n";
    CHECK_EQ(praw_parse(t, strlen(t), &h, stop_at_2, NULL, err, sizeof err), 7);
    CHECK_STR(err, "stopped");
}

TEST(raw_error_message_is_cut_to_capacity)
{
    struct praw_header h;
    char err[8];
    memset(err, 'x', sizeof err);
    CHECK_EQ(praw_parse("junk\n", 5, &h, NULL, NULL, err, sizeof err), -1);
    CHECK_EQ(strlen(err), 7);
}

TEST(raw_source_periods)
{
    CHECK_EQ(praw_source_period_ns("pmu/nmi intel fixed-ctr1"), 1000000);
    CHECK_EQ(praw_source_period_ns("pmu/pseudo-nmi arm64 pmuv3 cycles"), 1000000);
    CHECK_EQ(praw_source_period_ns("tick 100Hz"), 10000000);
    CHECK_EQ(praw_source_period_ns("tick 250Hz"), 4000000);
    CHECK_EQ(praw_source_period_ns("tick 0Hz"), 0);
    CHECK_EQ(praw_source_period_ns("tick Hz"), 0);
    CHECK_EQ(praw_source_period_ns("tick 100Hzz"), 0);
    CHECK_EQ(praw_source_period_ns("tick 99999999999999999999999Hz"), 0);
    CHECK_EQ(praw_source_period_ns("pm"), 0);
    CHECK_EQ(praw_source_period_ns(""), 0);
}

/* Random mutations of a good profile: the parser must answer 0 or -1 and
 * never read outside the buffer (ASan watches; the copy is exactly len). */
TEST(raw_hostile_mutations_never_crash)
{
    const char good[] = HDR("7") "5 7 burn 1 ffffffff80104a1c 1 2 3\n"
                        "2 0 - 0 10\n";
    size_t n = sizeof good - 1;
    unsigned seed = 12345;
    static const char alphabet[] = " \n\r\t0123456789abcdefx;-#=\0\xff";
    for (int round = 0; round < 20000; round++) {
        size_t len = n;
        char *t = malloc(n);
        memcpy(t, good, n);
        int edits = 1 + round % 4;
        for (int k = 0; k < edits; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % len;
            seed = seed * 1103515245u + 12345u;
            t[at] = alphabet[(seed >> 8) % (sizeof alphabet - 1)];
        }
        seed = seed * 1103515245u + 12345u;
        if (round % 3 == 0)
            len = (seed >> 8) % (n + 1);
        struct praw_header h;
        char err[PRAW_ERR_MAX];
        int rc = praw_parse(t, len, &h, NULL, NULL, err, sizeof err);
        CHECK(rc == 0 || rc == -1);
        if (rc == -1)
            CHECK(strncmp(err, "line ", 5) == 0);
        free(t);
    }
}
