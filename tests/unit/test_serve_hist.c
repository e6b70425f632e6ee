// LINK: tools/serve/hist.c tools/model/model.c uapi/profile_raw.c
/* tests/unit/test_serve_hist.c: `sonde-prof serve`'s bucketed history
 * (tools/serve/hist.c): buckets and their eviction after the hour, the
 * memory bound by distinct stacks (whatever the samples), ranges merged
 * over buckets and widened to them, the filters, the per-second rate. */
#include "test.h"
#include "tools/serve/hist.h"
#include "uapi/profile_raw.h"

#define B SV_HIST_BUCKET_MS

static struct pstr_record rec(uint32_t pid, uint64_t pc, uint8_t kind, uint64_t weight)
{
    struct pstr_record r;
    memset(&r, 0, sizeof r);
    r.pid = pid;
    r.depth = 2;
    r.kind = kind;
    r.weight = weight;
    r.frames[0] = pc;
    r.frames[1] = 0x9000;
    return r;
}

static uint64_t sel_samples(const struct sv_hist *h, uint64_t from, uint64_t to,
                            int kernel, int64_t pid, int cpu)
{
    struct sv_hist_filter f = { kernel, pid, cpu, PSTR_KIND_CPU, false };
    struct sv_hist_sel s;
    if (sv_hist_select(h, from, to, &f, &s))
        return UINT64_MAX;
    uint64_t n = s.samples;
    sv_hist_sel_free(&s);
    return n;
}

TEST(hist_counts_one_stack_per_bucket_entry)
{
    struct sv_hist *h = sv_hist_new(64);
    struct pstr_record r = rec(7, 0x1000, PSTR_KIND_CPU, 1);
    for (unsigned i = 0; i < 1000; i++)
        CHECK(sv_hist_add(h, 0, 1, &r, 100 + i));
    /* Its own stack and the fleet's (hist.h): 1000 samples, two entries. */
    CHECK_EQ(sv_hist_live_stacks(h), 2);
    CHECK_EQ(sv_hist_entries(h), 2);
    CHECK_EQ(sel_samples(h, 0, B, -1, -1, -1), 1000);
    sv_hist_free(h);
}

TEST(hist_select_merges_buckets_and_widens_the_range)
{
    struct sv_hist *h = sv_hist_new(64);
    struct pstr_record a = rec(7, 0x1000, PSTR_KIND_CPU, 1);
    struct pstr_record b = rec(7, 0x2000, PSTR_KIND_CPU, 1);
    /* 10 records in bucket 0, 20 in bucket 1 (10 of a, 10 of b), 40 in bucket 3. */
    for (unsigned i = 0; i < 10; i++)
        sv_hist_add(h, 0, 0, &a, 5000);
    for (unsigned i = 0; i < 10; i++) {
        sv_hist_add(h, 0, 0, &a, B + 1);
        sv_hist_add(h, 0, 0, &b, B + 2);
    }
    for (unsigned i = 0; i < 40; i++)
        sv_hist_add(h, 0, 0, &b, 3 * B + 500);
    struct sv_hist_filter f = { -1, -1, -1, PSTR_KIND_CPU, false };
    struct sv_hist_sel s;
    CHECK(sv_hist_select(h, 0, 4 * B, &f, &s) == 0);
    CHECK_EQ(s.samples, 70);
    CHECK_EQ(s.n, 2);                       /* a and b, merged over buckets */
    for (size_t i = 0; i < s.n; i++)
        CHECK_EQ(s.counts[i], s.keys[i]->frames[0] == 0x1000 ? 20 : 50);
    CHECK_EQ(s.from_ms, 0);
    CHECK_EQ(s.to_ms, 3 * B + 500);         /* cut at now */
    sv_hist_sel_free(&s);
    /* [B + 5000, B + 6000) lies in bucket 1: widened to all of it. */
    CHECK(sv_hist_select(h, B + 5000, B + 6000, &f, &s) == 0);
    CHECK_EQ(s.from_ms, B);
    CHECK_EQ(s.to_ms, 2 * B);
    CHECK_EQ(s.samples, 20);
    sv_hist_sel_free(&s);
    /* Crossing a boundary takes both buckets. */
    CHECK_EQ(sel_samples(h, B - 1, B + 1, -1, -1, -1), 30);
    /* An empty bucket counts nothing; an empty or reversed range is refused. */
    CHECK_EQ(sel_samples(h, 2 * B, 3 * B, -1, -1, -1), 0);
    CHECK(sv_hist_select(h, 5, 5, &f, &s) == -1);
    CHECK(sv_hist_select(h, 6, 5, &f, &s) == -1);
    /* A range past now is cut to now. */
    CHECK(sv_hist_select(h, 0, 100 * B, &f, &s) == 0);
    CHECK_EQ(s.to_ms, 3 * B + 500);
    sv_hist_sel_free(&s);
    sv_hist_free(h);
}

TEST(hist_filters_kernel_pid_cpu_kind)
{
    struct sv_hist *h = sv_hist_new(64);
    struct pstr_record p7 = rec(7, 0x1000, PSTR_KIND_CPU, 1);
    struct pstr_record p8 = rec(8, 0x1000, PSTR_KIND_CPU, 1);
    struct pstr_record off = rec(7, 0x1000, PSTR_KIND_OFFCPU, 5000);
    sv_hist_add(h, 0, 0, &p7, 10);          /* kernel 0, pid 7, cpu 0 */
    sv_hist_add(h, 0, 1, &p7, 11);          /* kernel 0, pid 7, cpu 1 */
    sv_hist_add(h, 1, 0, &p8, 12);          /* kernel 1, pid 8, cpu 0 */
    sv_hist_add(h, 1, 0, &p8, 13);
    sv_hist_add(h, 1, 2, &off, 14);         /* another kind */
    CHECK_EQ(sel_samples(h, 0, B, -1, -1, -1), 4);
    CHECK_EQ(sel_samples(h, 0, B, 0, -1, -1), 2);
    CHECK_EQ(sel_samples(h, 0, B, 1, -1, -1), 2);
    CHECK_EQ(sel_samples(h, 0, B, 2, -1, -1), 0);
    CHECK_EQ(sel_samples(h, 0, B, -1, 8, -1), 2);
    CHECK_EQ(sel_samples(h, 0, B, -1, -1, 1), 1);
    CHECK_EQ(sel_samples(h, 0, B, 0, 7, 0), 1);
    struct sv_hist_filter f = { -1, -1, -1, PSTR_KIND_OFFCPU, false };
    struct sv_hist_sel s;
    CHECK(sv_hist_select(h, 0, B, &f, &s) == 0);
    CHECK_EQ(s.samples, 1);
    CHECK_EQ(s.weight, 5000);
    CHECK_EQ(s.n, 1);
    CHECK_EQ(s.keys[0]->cpu, 2);
    sv_hist_sel_free(&s);
    CHECK_EQ(sv_hist_kinds(h), 1u << PSTR_KIND_CPU | 1u << PSTR_KIND_OFFCPU);
    sv_hist_free(h);
}

TEST(hist_keeps_the_hour_and_evicts_older_buckets)
{
    struct sv_hist *h = sv_hist_new(64);
    struct pstr_record a = rec(7, 0x1000, PSTR_KIND_CPU, 1);
    struct pstr_record b = rec(7, 0x2000, PSTR_KIND_CPU, 1);
    sv_hist_add(h, 0, 0, &a, 0);            /* a: only in bucket 0 */
    sv_hist_add(h, 0, 0, &b, 0);
    sv_hist_add(h, 0, 0, &b, 3600 * 1000);  /* b: also an hour later */
    /* An hour later bucket 0 is still held: the whole last hour is kept. */
    CHECK_EQ(sv_hist_oldest(h), 0);
    CHECK_EQ(sel_samples(h, 0, 3601 * 1000, -1, -1, -1), 3);
    CHECK_EQ(sv_hist_live_stacks(h), 4);    /* a and b, each its fleet's too */
    /* One bucket more and bucket 0 leaves; a dies with it, b lives on. */
    sv_hist_advance(h, 3600 * 1000 + B);
    CHECK_EQ(sv_hist_oldest(h), B);
    CHECK_EQ(sel_samples(h, 0, 3700 * 1000, -1, -1, -1), 1);
    CHECK_EQ(sv_hist_live_stacks(h), 2);
    CHECK_EQ(sv_hist_entries(h), 2);
    /* A record older than the history is refused; the rate of a second no
     * longer held is 0. */
    CHECK(!sv_hist_add(h, 0, 0, &a, 5));
    CHECK_EQ(sv_hist_rate(h, PSTR_KIND_CPU, 0), 0);
    CHECK_EQ(sv_hist_rate(h, PSTR_KIND_CPU, 3600), 1);
    CHECK_EQ(sv_hist_kernel_records(h, 0, PSTR_KIND_CPU, 0), 0);
    /* After the stack table was reindexed, b is still found, and a comes
     * back as a new stack. */
    sv_hist_add(h, 0, 0, &b, 3600 * 1000 + B);
    sv_hist_add(h, 0, 0, &a, 3600 * 1000 + B);
    CHECK_EQ(sv_hist_live_stacks(h), 4);
    CHECK_EQ(sel_samples(h, 0, 3700 * 1000, -1, -1, -1), 3);
    /* Two hours on, everything has left. */
    sv_hist_advance(h, 7300 * 1000);
    CHECK_EQ(sv_hist_live_stacks(h), 0);
    CHECK_EQ(sv_hist_entries(h), 0);
    CHECK_EQ(sel_samples(h, 0, 7300 * 1000, -1, -1, -1), 0);
    sv_hist_free(h);
}

TEST(hist_memory_is_bounded_by_distinct_stacks)
{
    enum { MAX = 32 };
    struct sv_hist *h = sv_hist_new(MAX);
    /* A million samples of 8 stacks: 8 stacks and at most 8 entries a bucket. */
    for (unsigned i = 0; i < 1000000; i++) {
        struct pstr_record r = rec(7, 0x1000 + (i % 8) * 16, PSTR_KIND_CPU, 1);
        sv_hist_add(h, 0, 0, &r, i / 100);  /* 10 s of samples */
    }
    CHECK_EQ(sv_hist_live_stacks(h), 16);   /* each its fleet's too */
    CHECK(sv_hist_entries(h) <= 2 * 16);    /* 10 s may touch two buckets */
    CHECK_EQ(sel_samples(h, 0, 2 * B, -1, -1, -1), 1000000);
    /* 100 distinct stacks into a table of 32, 16 free: 8 kept (each
     * with its fleet's), 92 records over. */
    for (unsigned i = 0; i < 100; i++) {
        struct pstr_record r = rec(9, 0x50000 + i * 16, PSTR_KIND_CPU, 1);
        CHECK(sv_hist_add(h, 1, 0, &r, 3 * B));
    }
    CHECK_EQ(sv_hist_live_stacks(h), MAX);
    CHECK_EQ(sv_hist_over(h), 92);
    struct sv_hist_filter f = { 1, -1, -1, PSTR_KIND_CPU, false };
    struct sv_hist_sel s;
    CHECK(sv_hist_select(h, 3 * B, 4 * B, &f, &s) == 0);
    CHECK_EQ(s.samples, 8);
    CHECK_EQ(s.over, 92);
    sv_hist_sel_free(&s);
    /* A stack already kept is still counted when the table is full. */
    struct pstr_record r = rec(7, 0x1000, PSTR_KIND_CPU, 1);
    sv_hist_add(h, 0, 0, &r, 3 * B);
    CHECK_EQ(sel_samples(h, 3 * B, 4 * B, 0, -1, -1), 1);
    /* Once the old buckets leave, their slots take new stacks again. */
    sv_hist_advance(h, 4 * B + 3600 * 1000);
    CHECK_EQ(sv_hist_live_stacks(h), 0);
    struct pstr_record n = rec(9, 0x70000, PSTR_KIND_CPU, 1);
    CHECK(sv_hist_add(h, 0, 0, &n, 4 * B + 3600 * 1000));
    CHECK_EQ(sv_hist_live_stacks(h), 2);
    CHECK_EQ(sv_hist_over(h), 92);
    sv_hist_free(h);
}

TEST(hist_rate_per_second_and_per_kernel_bucket)
{
    struct sv_hist *h = sv_hist_new(64);
    struct pstr_record r = rec(7, 0x1000, PSTR_KIND_CPU, 1);
    for (unsigned i = 0; i < 30; i++)
        sv_hist_add(h, 0, 0, &r, 2000 + i);     /* second 2, kernel 0 */
    for (unsigned i = 0; i < 5; i++)
        sv_hist_add(h, 1, 0, &r, 3999);         /* second 3, kernel 1 */
    for (unsigned i = 0; i < 7; i++)
        sv_hist_add(h, 1, 0, &r, 12000);        /* the next bucket, kernel 1 */
    /* The fleet's per second; each kernel's per bucket. */
    CHECK_EQ(sv_hist_rate(h, PSTR_KIND_CPU, 2), 30);
    CHECK_EQ(sv_hist_rate(h, PSTR_KIND_CPU, 3), 5);
    CHECK_EQ(sv_hist_rate(h, PSTR_KIND_CPU, 12), 7);
    CHECK_EQ(sv_hist_rate(h, PSTR_KIND_OFFCPU, 2), 0);
    CHECK_EQ(sv_hist_rate(h, SV_HIST_KINDS, 2), 0);
    CHECK_EQ(sv_hist_kernel_records(h, 0, PSTR_KIND_CPU, 0), 30);
    CHECK_EQ(sv_hist_kernel_records(h, 1, PSTR_KIND_CPU, 0), 5);
    CHECK_EQ(sv_hist_kernel_records(h, 1, PSTR_KIND_CPU, 1), 7);
    CHECK_EQ(sv_hist_kernel_records(h, 0, PSTR_KIND_CPU, 1), 0);
    CHECK_EQ(sv_hist_kernel_records(h, 1, PSTR_KIND_OFFCPU, 0), 0);
    CHECK_EQ(sv_hist_kernel_records(h, SV_HIST_KERNELS, PSTR_KIND_CPU, 0), 0);
    uint64_t n[3] = { 0, 0, 0 };
    sv_hist_kernel_sums(h, PSTR_KIND_CPU, 0, 20000, n, 3);
    CHECK_EQ(n[0], 30);
    CHECK_EQ(n[1], 12);
    CHECK_EQ(n[2], 0);
    sv_hist_free(h);
}

/* The whole fleet: every one of SV_HIST_KERNELS kernels kept apart, by
 * kernel filter and in the per-kernel counts; a table too small for them
 * counts the rest over the bound, per kernel. */
TEST(hist_holds_every_kernel_of_the_fleet)
{
    CHECK_EQ(SV_HIST_KERNELS, 4096);
    struct sv_hist *h = sv_hist_new(2 * SV_HIST_KERNELS);   /* own and fleet's */
    for (unsigned k = 0; k < SV_HIST_KERNELS; k++) {
        struct pstr_record r = rec(k + 1, 0x1000 + k, PSTR_KIND_CPU, 1);
        for (unsigned i = 0; i <= k % 3; i++)
            CHECK(sv_hist_add(h, k, 0, &r, 1000 + k));
    }
    CHECK_EQ(sv_hist_live_stacks(h), 2 * SV_HIST_KERNELS);
    CHECK_EQ(sel_samples(h, 0, 10000, -1, -1, -1), 1366 * 1 + 1365 * 2 + 1365 * 3);
    CHECK_EQ(sel_samples(h, 0, 10000, 4095, -1, -1), 1);     /* 4095 % 3 == 0 */
    CHECK_EQ(sel_samples(h, 0, 10000, 4094, -1, -1), 3);
    CHECK_EQ(sv_hist_kernel_records(h, 4094, PSTR_KIND_CPU, 0), 3);
    static uint64_t n[SV_HIST_KERNELS];
    sv_hist_kernel_sums(h, PSTR_KIND_CPU, 0, 10000, n, SV_HIST_KERNELS);
    unsigned bad = 0;
    for (unsigned k = 0; k < SV_HIST_KERNELS; k++)
        bad += n[k] != k % 3 + 1u;
    CHECK_EQ(bad, 0);
    sv_hist_free(h);
    /* 32 stacks for 64 kernels, each with its fleet's: 16 kept, 48 over,
     * each counted as its own kernel's. */
    h = sv_hist_new(32);
    for (unsigned k = 0; k < 64; k++) {
        struct pstr_record r = rec(k + 1, 0x1000 + k, PSTR_KIND_CPU, 1);
        CHECK(sv_hist_add(h, 1000 + k, 0, &r, 5));
    }
    struct sv_hist_sel s;
    struct sv_hist_filter f = { 1063, -1, -1, PSTR_KIND_CPU, false };
    CHECK_EQ(sv_hist_select(h, 0, 10, &f, &s), 0);
    CHECK_EQ(s.n, 0);
    CHECK_EQ(s.over, 1);
    sv_hist_sel_free(&s);
    CHECK_EQ(sv_hist_over(h), 48);
    CHECK_EQ(sv_hist_kernel_records(h, 1063, PSTR_KIND_CPU, 0), 1);
    sv_hist_free(h);
}

/* A merged selection of the whole fleet reads the fleet's stacks: every
 * kernel's records of one chain as one, pid and CPU 0; the ELFs apart. */
TEST(hist_fleet_stacks_merge_kernels_of_one_elf)
{
    struct sv_hist *h = sv_hist_new(64);
    sv_hist_set_map(h, 2, 1);                   /* kernel 2 runs another ELF */
    for (unsigned k = 0; k < 3; k++) {
        struct pstr_record r = rec(10 + k, 0x1000, PSTR_KIND_CPU, 1);
        for (unsigned i = 0; i < 5; i++)
            sv_hist_add(h, k, (uint16_t)i, &r, 100);
    }
    struct sv_hist_filter f = { -1, -1, -1, PSTR_KIND_CPU, true };
    struct sv_hist_sel s;
    CHECK_EQ(sv_hist_select(h, 0, 1000, &f, &s), 0);
    CHECK_EQ(s.samples, 15);
    CHECK_EQ(s.n, 2);                           /* one per ELF */
    for (size_t i = 0; i < s.n; i++) {
        CHECK(sv_hist_key_fleet(s.keys[i]));
        CHECK_EQ(s.keys[i]->pid, 0);
        CHECK_EQ(s.counts[i], sv_hist_key_map(s.keys[i]) == 1 ? 5u : 10u);
    }
    sv_hist_sel_free(&s);
    /* Not merged, or narrowed: the kernels' own. */
    f.merged = false;
    CHECK_EQ(sv_hist_select(h, 0, 1000, &f, &s), 0);
    CHECK_EQ(s.n, 15);                          /* 3 kernels x 5 CPUs */
    sv_hist_sel_free(&s);
    f.merged = true;
    f.kernel = 1;
    CHECK_EQ(sv_hist_select(h, 0, 1000, &f, &s), 0);
    CHECK_EQ(s.n, 5);
    CHECK(!sv_hist_key_fleet(s.keys[0]));
    sv_hist_sel_free(&s);
    sv_hist_free(h);
}

TEST(hist_refuses_what_it_cannot_hold)
{
    struct sv_hist *h = sv_hist_new(64);
    struct pstr_record r = rec(7, 0x1000, PSTR_KIND_CPU, 1);
    CHECK(!sv_hist_add(h, SV_HIST_KERNELS, 0, &r, 0));
    r.kind = SV_HIST_KINDS;
    CHECK(!sv_hist_add(h, 0, 0, &r, 0));
    r.kind = PSTR_KIND_CPU;
    r.depth = 0;
    CHECK(!sv_hist_add(h, 0, 0, &r, 0));
    CHECK_EQ(sv_hist_live_stacks(h), 0);
    sv_hist_free(h);
}

TEST(hist_keeps_off_cpu_reasons_apart)
{
    struct sv_hist *h = sv_hist_new(1024);
    struct pstr_record q = rec(7, 0x1000, PSTR_KIND_OFFCPU, 1000);
    q.why = PSTR_WHY_WAITQ;
    strcpy(q.name, "virtio-rx");
    struct pstr_record m = q;
    m.why = PSTR_WHY_MUTEX;         /* same chain, same name, another reason */
    struct pstr_record s = q;
    s.why = PSTR_WHY_SLEEP;
    s.name[0] = 0;
    CHECK(sv_hist_add(h, 0, 0, &q, 10));
    CHECK(sv_hist_add(h, 0, 0, &q, 11));
    CHECK(sv_hist_add(h, 0, 0, &m, 12));
    CHECK(sv_hist_add(h, 0, 0, &s, 13));
    CHECK_EQ(sv_hist_live_stacks(h), 6);    /* each its fleet's too */
    struct sv_hist_filter f = { -1, -1, -1, PSTR_KIND_OFFCPU, false };
    struct sv_hist_sel sel;
    CHECK_EQ(sv_hist_select(h, 0, B, &f, &sel), 0);
    CHECK_EQ(sel.n, 3);
    unsigned seen = 0;
    for (size_t i = 0; i < sel.n; i++) {
        uint8_t why;
        const char *name;
        CHECK(sv_hist_reason(h, sel.keys[i]->reason, &why, &name));
        if (why == PSTR_WHY_WAITQ && strcmp(name, "virtio-rx") == 0) {
            seen |= 1;
            CHECK_EQ(sel.weights[i], 2000);
        } else if (why == PSTR_WHY_MUTEX && strcmp(name, "virtio-rx") == 0)
            seen |= 2;
        else if (why == PSTR_WHY_SLEEP && name[0] == 0)
            seen |= 4;
    }
    CHECK_EQ(seen, 7);
    sv_hist_sel_free(&sel);
    CHECK(!sv_hist_reason(h, 0, &(uint8_t){ 0 }, &(const char *){ NULL }));
    /* Names past the table: kept under their why alone, never lost. */
    for (unsigned i = 0; i < SV_HIST_REASONS + 10; i++) {
        snprintf(q.name, sizeof q.name, "q%u", i);
        q.frames[0] = 0x1000;
        CHECK(sv_hist_add(h, 0, 0, &q, 20));
    }
    CHECK_EQ(sv_hist_select(h, 0, B, &f, &sel), 0);
    uint64_t bare = 0;
    for (size_t i = 0; i < sel.n; i++) {
        uint8_t why;
        const char *name;
        CHECK(sv_hist_reason(h, sel.keys[i]->reason, &why, &name));
        if (why == PSTR_WHY_WAITQ && name[0] == 0)
            bare += sel.counts[i];
    }
    CHECK(bare >= 10);
    CHECK_EQ(sel.samples, 4 + SV_HIST_REASONS + 10);
    sv_hist_sel_free(&sel);
    sv_hist_free(h);
}

/* A lock's records: the lock by type and name is the chain's (a spinlock
 * and a mutex of one name apart), and a chain counts the waits. */
TEST(hist_keeps_locks_apart_and_counts_their_waits)
{
    struct sv_hist *h = sv_hist_new(1024);
    struct pstr_record m = rec(7, 0x1000, PSTR_KIND_LOCK, 4000);
    m.lkind = PSTR_LOCK_MUTEX;
    m.waits = 2;
    strcpy(m.name, "probe");
    struct pstr_record sp = m;
    sp.lkind = PSTR_LOCK_SPIN;
    sp.waits = 3;
    struct pstr_record unnamed = m;
    unnamed.name[0] = 0;
    CHECK(sv_hist_add(h, 0, 0, &m, 10));
    CHECK(sv_hist_add(h, 0, 0, &m, 11));
    CHECK(sv_hist_add(h, 0, 0, &sp, 12));
    CHECK(sv_hist_add(h, 0, 0, &unnamed, 13));
    struct sv_hist_filter f = { -1, -1, -1, PSTR_KIND_LOCK, false };
    struct sv_hist_sel sel;
    CHECK_EQ(sv_hist_select(h, 0, B, &f, &sel), 0);
    CHECK_EQ(sel.n, 3);
    unsigned seen = 0;
    for (size_t i = 0; i < sel.n; i++) {
        uint8_t why;
        const char *name;
        CHECK(sv_hist_reason(h, sel.keys[i]->reason, &why, &name));
        if (why == PRAW_WHY_MUTEX && strcmp(name, "probe") == 0) {
            seen |= 1;
            CHECK_EQ(sel.counts[i], 4);
            CHECK_EQ(sel.weights[i], 8000);
        } else if (why == PRAW_WHY_SPIN && strcmp(name, "probe") == 0) {
            seen |= 2;
            CHECK_EQ(sel.counts[i], 3);
        } else if (why == PRAW_WHY_MUTEX && strcmp(name, "?") == 0) {
            seen |= 4;
        }
    }
    CHECK_EQ(seen, 7);
    sv_hist_sel_free(&sel);
    /* Names past the table: a spinlock is still a spinlock, a mutex a
     * mutex, kept under their type alone. */
    struct pstr_record q = rec(7, 0x2000, PSTR_KIND_OFFCPU, 10);
    q.why = PSTR_WHY_WAITQ;
    for (unsigned i = 0; i < SV_HIST_REASONS; i++) {
        snprintf(q.name, sizeof q.name, "q%u", i);
        CHECK(sv_hist_add(h, 0, 0, &q, 20));
    }
    struct pstr_record late = sp;
    strcpy(late.name, "late");
    late.frames[0] = 0x3000;
    CHECK(sv_hist_add(h, 0, 0, &late, 30));
    CHECK_EQ(sv_hist_select(h, 0, B, &f, &sel), 0);
    bool spun = false;
    for (size_t i = 0; i < sel.n; i++) {
        uint8_t why;
        const char *name;
        if (sel.keys[i]->frames[0] == 0x3000 &&
            sv_hist_reason(h, sel.keys[i]->reason, &why, &name))
            spun = why == PRAW_WHY_SPIN && name[0] == 0;
    }
    CHECK(spun);
    sv_hist_sel_free(&sel);
    sv_hist_free(h);
}

/* ---- the store's hooks: a bucket closed once, its entries read ------------ */

struct closed {
    uint64_t idx[8];
    unsigned n;
    uint64_t count, weight, over;
    unsigned entries;
    unsigned fleet;                 /* fleet stacks told: the store would count twice */
};

static void on_closed(void *ctx, const struct sv_hist *h, uint64_t index)
{
    struct closed *c = ctx;
    (void)h;
    if (c->n < 8)
        c->idx[c->n++] = index;
}

static void on_entry(void *ctx, const struct sv_hist_key *key, unsigned kernel, unsigned kind,
                     uint64_t count, uint64_t weight)
{
    struct closed *c = ctx;
    (void)kernel, (void)kind;
    if (!key) {
        c->over += count;
        return;
    }
    c->entries++;
    c->fleet += sv_hist_key_fleet(key);
    c->count += count;
    c->weight += weight;
}

TEST(hist_tells_each_bucket_closed_once_before_it_leaves)
{
    struct sv_hist *h = sv_hist_new(64);
    struct closed c = { .n = 0 };
    sv_hist_on_close(h, on_closed, &c);
    struct pstr_record a = rec(7, 0x1000, PSTR_KIND_CPU, 1);
    uint64_t t0 = 1796187120000ull;             /* Unix ms, a bucket's start */
    sv_hist_add(h, 0, 0, &a, t0 + 5);
    sv_hist_add(h, 0, 0, &a, t0 + 9000);
    CHECK_EQ(c.n, 0);                           /* still open */
    sv_hist_add(h, 0, 0, &a, t0 + B + 1);
    CHECK_EQ(c.n, 1);
    CHECK_EQ(c.idx[0], t0 / B);
    sv_hist_advance(h, t0 + B + 500);
    CHECK_EQ(c.n, 1);                           /* the same bucket: no news */
    sv_hist_advance(h, t0 + 5 * B);             /* bucket 1 closed; 2-4 never held */
    CHECK_EQ(c.n, 2);
    CHECK_EQ(c.idx[1], t0 / B + 1);
    sv_hist_advance(h, t0 + 100000 * B);        /* a day later: nothing held to tell */
    CHECK_EQ(c.n, 2);
    sv_hist_free(h);
}

TEST(hist_bucket_entries_and_over_read_back)
{
    struct sv_hist *h = sv_hist_new(SV_HIST_STACKS_MIN);
    struct pstr_record r = rec(7, 0x1000, PSTR_KIND_CPU, 1);
    for (unsigned i = 0; i < SV_HIST_STACKS_MIN + 5; i++) {    /* 5 over the bound */
        r.frames[0] = 0x1000 + i;
        sv_hist_add(h, 0, 0, &r, 100);
    }
    sv_hist_add(h, 0, 0, &r, 200);              /* a stack over the bound, again */
    r.frames[0] = 0x1000;
    sv_hist_add(h, 0, 0, &r, 300);              /* a held one, counted twice */
    /* Each record kept holds two stacks, its kernel's and its fleet's:
     * half the bound's stacks are the kernel's; the fleet's are never
     * told (a store given both would count every record twice). */
    const unsigned own = SV_HIST_STACKS_MIN / 2, records = SV_HIST_STACKS_MIN + 5 + 2;
    struct closed c = { .n = 0 };
    sv_hist_bucket_each(h, 0, on_entry, &c);
    CHECK_EQ(c.entries, own);
    CHECK_EQ(c.fleet, 0);
    CHECK_EQ(c.count, own + 1);
    CHECK_EQ(c.weight, own + 1);
    CHECK_EQ(c.over, records - (own + 1));
    struct closed none = { .n = 0 };
    sv_hist_bucket_each(h, 1, on_entry, &none);  /* not held */
    CHECK_EQ(none.entries + none.over, 0);
    sv_hist_free(h);
}
