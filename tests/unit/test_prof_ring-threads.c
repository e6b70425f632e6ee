// LINK: kernel/prof/sample.c kernel/prof/trace.c kernel/prof/trace_hooks.c kernel/prof/ring.c kernel/stacks.c kernel/stacktrace.c kernel/symtab.c lib/printf.c lib/parse.c arch/x86_64/unwind.c arch/arm64/unwind.c tests/unit/fake_unwind.c
// LIBS: -lpthread
// TSAN: yes
/* tests/unit/test_prof_ring-threads.c: each CPU's ring (kernel/prof/ring.c)
 * with its producer, its consumer and its closer on threads of their own,
 * for millions of records, as the kernel runs them on CPUs of their own:
 *  - PRODUCERS threads, each one CPU, produce through the kernel's two
 *    producer paths, compiled as the kernel compiles them
 *    (kernel/prof/produce.h inline, over arch/host/'s twins): the tick's
 *    sampler (prof_tick: prof_slot, prof_publish) and prof_emit_n (the
 *    claim of n slots the scheduler and the allocator use);
 *  - one consumer thread drains every ring as the stream's drainer does
 *    (prof_ring_avail, copy out with prof_ring_at, prof_ring_release),
 *    in uneven steps, sometimes stalling until a ring is full;
 *  - one closer thread ends a session again and again while the
 *    producers run (prof_ring_close, prof_ring_quiesce), has the
 *    consumer drain what is left, and opens the next (prof_ring_open).
 * Every record carries its producer and its number. Checked: each record
 * a producer got into a ring (its sample was captured, or prof_emit_n
 * said kept) arrives exactly once, in its ring, in order; nothing arrives
 * that was not kept; a close never loses a record that was in flight (the
 * next open zeroes the ring, so a record published after the last drain
 * would be missing at the end); and the drops the rings count are
 * attempts that were not kept.
 *
 * The ring's ordering is the kernel's own __atomic builtins (acquire,
 * release, seq_cst), not a hal/ barrier: on the host they are the same
 * C11 atomics, so this run exercises the ordering the kernel relies on.
 * scripts/unit.sh also builds and runs this file under ThreadSanitizer
 * (its "// TSAN: yes" line), which reports any access the ring's
 * barriers leave unordered. The fake CPU, clock and interrupt state are
 * per thread (tests/unit/fake_hal.c). */
#include "test.h"
#include "fake_hal.h"
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include "hal/pmu.h"
#include "kernel/percpu.h"
#include "kernel/pmu_nmi.h"
#include "kernel/prof/ring.h"
#include "kernel/prof/sample.h"
#include "kernel/sched.h"
#include "kernel/task.h"
#include "lib/printf.h"
#include "mm/heap.h"

#define PRODUCERS 3
#define RECORDS (1u << 20)              /* attempted by each producer */
#define MILESTONE (RECORDS / 64)        /* the closer ends a session each */
#define PID0 100                        /* producer p runs pid PID0 + p */

/* A record's first frame: its producer (p + 1 above bit 40) and number. */
#define ENC(p, seq) (((uintptr_t)(p) + 1) << 40 | (uintptr_t)(seq))
#define ENC_P(f) ((unsigned)((f) >> 40) - 1)
#define ENC_SEQ(f) ((uint32_t)((f) & 0xffffffffffull))

/* ---- the world the sampler and the ring need --------------------------- */

struct cpu cpus[MAX_CPUS];
static struct task running[MAX_CPUS];
struct cpu *this_cpu(void) { return &cpus[fake_cpu]; }

void *kmalloc(size_t n) { return malloc(n); }
void *kzalloc(size_t n) { return calloc(1, n); }
void kfree(void *p) { free(p); }

/* No counter in this run (the gate never has PROF_GATE_PMU): the tick
 * samples, and the PMU's task side is never reached. */
struct pmu_cpu pmu_cpus[MAX_CPUS];
struct pmu_nmi_params pmu_nmi;
bool pmu_armed(void) { return false; }
void pmu_arm(void) { abort(); }
void pmu_disarm(void) { abort(); }
bool pmu_nmi_claim_disarmed(struct pmu_cpu *me) { abort(); }

/* The sampler reads the trap frame once it has its slot, just before it
 * fills it (arch/host/trap_inline.h): that the read happened is how a
 * producer knows its tick's sample went into the ring (prof_tick says
 * nothing), for the slot is then published unconditionally. */
static _Thread_local bool captured;
static _Thread_local unsigned ncaptures;
static uint64_t in_flight;      /* yields inside a sample, slot held */
/* And every 16th sample gives the host's CPU away right there, between
 * its slot and its publish, as a vCPU the host deschedules mid-sample:
 * a close then finds a record in flight, and must wait for it (the
 * quiesce) before the last drain. */
static void on_capture(void)
{
    captured = true;
    if (++ncaptures % 16 == 0) {
        __atomic_fetch_add(&in_flight, 1, __ATOMIC_RELAXED);
        sched_yield();
    }
}

/* ---- shared state -------------------------------------------------------- */

static uint8_t kept[PRODUCERS][RECORDS / 8];    /* written by producer p */
static uint8_t seen[PRODUCERS][RECORDS / 8];    /* written by the consumer */
static uint32_t attempts[PRODUCERS];            /* producer p's progress */
static uint64_t not_kept[PRODUCERS];            /* attempts that were not kept */
static uint64_t kept_tick[PRODUCERS], kept_emit[PRODUCERS];
static unsigned producers_left = PRODUCERS;

/* The closer and the consumer hand the rings to each other. */
enum { OPEN, CLOSED, DRAINED, FINISHED };
static int phase = OPEN;

/* What the consumer and the closer found wrong, counted and checked on
 * the main thread (the harness's CHECK is not for other threads). */
static uint64_t bad_ring, bad_field, bad_order, bad_left, bad_quiesce, bad_open;
static uint64_t delivered, at_close, sessions, drops[PRODUCERS], full_stalls;
static uint64_t inside_at_close;        /* closes that found a producer inside */

static void bit_set(uint8_t *m, uint32_t i) { m[i / 8] |= (uint8_t)(1u << (i % 8)); }
static bool bit_get(const uint8_t *m, uint32_t i) { return m[i / 8] >> (i % 8) & 1; }

static uint32_t rnd(uint32_t *x)
{
    *x ^= *x << 13; *x ^= *x >> 17; *x ^= *x << 5;
    return *x;
}

static const unsigned kinds = PROF_GATE_CPU | PROF_GATE_KIND(PROF_KIND_HEAP);

/* ---- the producers: one a CPU -------------------------------------------- */

static void *producer(void *arg)
{
    unsigned p = (unsigned)(uintptr_t)arg;
    fake_cpu = p;
    uint32_t x = 0x9e3779b9u * (p + 1);
    for (uint32_t seq = 0; seq < RECORDS;) {
        uint32_t r = rnd(&x);
        bool ok;
        if (r & 1) {
            /* The tick's sample, interrupts off as the trap code calls it. */
            struct trap_frame tf = { ENC(p, seq), 0, 0 };
            captured = false;
            unsigned long f = irq_save();
            prof_tick(&tf);
            irq_restore(f);
            ok = captured;
            if (ok) {
                bit_set(kept[p], seq);
                kept_tick[p]++;
            } else {
                not_kept[p]++;
            }
            seq++;
        } else {
            /* One or two heap records at once, all or none. */
            unsigned n = (r & 2) && seq + 1 < RECORDS ? 2 : 1;
            struct prof_record rec[2];
            memset(rec, 0, sizeof rec);
            for (unsigned i = 0; i < n; i++) {
                rec[i].pr_pid = PID0 + (int)p;
                rec[i].pr_kind = PROF_KIND_HEAP;
                rec[i].pr_weight = 1 + i;
                rec[i].pr_size = n;
                rec[i].pr_depth = 1;
                rec[i].pr_frames[0] = ENC(p, seq + i);
            }
            ok = prof_emit_n(rec, n);
            if (ok) {
                for (unsigned i = 0; i < n; i++)
                    bit_set(kept[p], seq + i);
                kept_emit[p] += n;
            } else {
                not_kept[p]++;          /* the n are one thing lost */
            }
            seq += n;
        }
        __atomic_store_n(&attempts[p], seq, __ATOMIC_RELAXED);
        /* Not kept: the ring was full or the gate closed. Five threads
         * share the host's cores: let the consumer and the closer run
         * rather than spend the run's records on a closed gate. */
        if (!ok)
            sched_yield();
    }
    __atomic_fetch_sub(&producers_left, 1, __ATOMIC_RELEASE);
    return NULL;
}

/* ---- the consumer ---------------------------------------------------------- */

static uint32_t next_seq[PRODUCERS];    /* the lowest number still allowed */

/* One record copied out of ring c: in its own ring, whole, in order. */
static void check_record(unsigned c, const struct prof_record *r)
{
    uintptr_t f = r->pr_frames[0];
    if (ENC_P(f) != c) {
        bad_ring++;
        return;
    }
    uint32_t seq = ENC_SEQ(f);
    if (seq >= RECORDS || r->pr_pid != PID0 + (int)c || r->pr_depth != 1) {
        bad_field++;
        return;
    }
    if (r->pr_kind == PROF_KIND_CPU) {
        if (r->pr_tick != 1)
            bad_field++;
    } else if (r->pr_kind != PROF_KIND_HEAP || r->pr_size < 1 || r->pr_size > 2 ||
               r->pr_weight < 1 || r->pr_weight > r->pr_size) {
        bad_field++;
    }
    if (seq < next_seq[c] || bit_get(seen[c], seq))
        bad_order++;
    else
        bit_set(seen[c], seq);
    next_seq[c] = seq + 1;
}

/* Take at most max records out of ring c; returns how many. */
static uint32_t take(unsigned c, uint32_t max)
{
    uint32_t first;
    uint32_t n = prof_ring_avail(c, &first);
    if (n > max)
        n = max;
    for (uint32_t i = 0; i < n; i++) {
        struct prof_record copy = *prof_ring_at(c, first + i);
        check_record(c, &copy);
    }
    prof_ring_release(c, first + n);
    delivered += n;
    return n;
}

static void *consumer(void *arg)
{
    uint32_t x = 12345;
    for (unsigned round = 0;; round++) {
        int ph = __atomic_load_n(&phase, __ATOMIC_ACQUIRE);
        if (ph == CLOSED) {
            /* The closer has quiesced: whatever is in the rings now is
             * all there will be of this session. */
            for (unsigned c = 0; c < PRODUCERS; c++)
                at_close += take(c, UINT32_MAX);
            __atomic_store_n(&phase, DRAINED, __ATOMIC_RELEASE);
            while ((ph = __atomic_load_n(&phase, __ATOMIC_ACQUIRE)) == DRAINED)
                sched_yield();
            if (ph == FINISHED)
                return NULL;
            continue;
        }
        if (round % 64 == 63) {
            /* Stall until ring 0 is full, so that producers meet a full
             * ring and drop (or the session ends meanwhile). */
            uint32_t first;
            full_stalls++;
            while (prof_ring_avail(0, &first) < prof_ring_cap(0) &&
                   __atomic_load_n(&phase, __ATOMIC_ACQUIRE) == OPEN)
                sched_yield();
        }
        for (unsigned c = 0; c < PRODUCERS; c++)
            take(c, rnd(&x) % 300);
        if (rnd(&x) % 4 == 0)
            sched_yield();
    }
}

/* ---- the closer --------------------------------------------------------------- */

static uint64_t progress(void)
{
    uint64_t s = 0;
    for (unsigned p = 0; p < PRODUCERS; p++)
        s += __atomic_load_n(&attempts[p], __ATOMIC_RELAXED);
    return s;
}

static void *closer(void *arg)
{
    uint64_t next = MILESTONE;
    for (;;) {
        bool last = false;
        while (progress() < next) {
            if (__atomic_load_n(&producers_left, __ATOMIC_ACQUIRE) == 0) {
                last = true;
                break;
            }
            sched_yield();
        }
        next = progress() + MILESTONE;
        prof_ring_close();
        for (unsigned c = 0; c < PRODUCERS; c++)
            if (__atomic_load_n(&prof_cpus[c].pc_inside, __ATOMIC_SEQ_CST)) {
                inside_at_close++;      /* the quiesce has one to wait for */
                break;
            }
        /* Generous and bounded: at 1000 fake cycles a us, 10 s of them
         * is 10^10 spins, far more than any producer holds its guard. */
        if (prof_ring_quiesce(10000) != -1)
            bad_quiesce++;
        __atomic_store_n(&phase, CLOSED, __ATOMIC_RELEASE);
        while (__atomic_load_n(&phase, __ATOMIC_ACQUIRE) != DRAINED)
            sched_yield();
        for (unsigned c = 0; c < PRODUCERS; c++) {
            uint32_t first;
            if (prof_ring_avail(c, &first) != 0)
                bad_left++;
            drops[c] += prof_ring_drops(c);
        }
        sessions++;
        if (last || __atomic_load_n(&producers_left, __ATOMIC_ACQUIRE) == 0) {
            __atomic_store_n(&phase, FINISHED, __ATOMIC_RELEASE);
            return NULL;
        }
        if (prof_ring_open(PROF_ALL, kinds, false) != PRODUCERS)
            bad_open++;
        __atomic_store_n(&phase, OPEN, __ATOMIC_RELEASE);
    }
}

TEST(ring_threads_every_record_once_in_order)
{
    fake_ncpus = PRODUCERS;
    fake_online = (1u << PRODUCERS) - 1;
    for (unsigned c = 0; c < PRODUCERS; c++) {
        running[c].pid = PID0 + (int)c;
        cpus[c].current = &running[c];
    }
    fake_trap_read_hook = on_capture;
    char o[128];
    struct buf_printer b;
    buf_printer_init(&b, o, sizeof o);
    CHECK_EQ(prof_ring_grow(PROF_RING_MIN, NULL), PROF_OK);
    CHECK_EQ(prof_ring_open(PROF_ALL, kinds, false), PRODUCERS);

    pthread_t pt[PRODUCERS], ct, kt;
    for (unsigned p = 0; p < PRODUCERS; p++)
        CHECK_EQ(pthread_create(&pt[p], NULL, producer, (void *)(uintptr_t)p), 0);
    CHECK_EQ(pthread_create(&ct, NULL, consumer, NULL), 0);
    CHECK_EQ(pthread_create(&kt, NULL, closer, NULL), 0);
    for (unsigned p = 0; p < PRODUCERS; p++)
        pthread_join(pt[p], NULL);
    pthread_join(kt, NULL);
    pthread_join(ct, NULL);

    CHECK_EQ(bad_ring, 0);          /* a record in another CPU's ring */
    CHECK_EQ(bad_field, 0);         /* a record not whole */
    CHECK_EQ(bad_order, 0);         /* twice, or out of its producer's order */
    CHECK_EQ(bad_quiesce, 0);
    CHECK_EQ(bad_left, 0);          /* the last drain left records behind */
    CHECK_EQ(bad_open, 0);
    uint64_t total_kept = 0, total_drops = 0;
    for (unsigned p = 0; p < PRODUCERS; p++) {
        /* Exactly the kept ones arrived: none lost at a close, none
         * invented. */
        uint32_t lost = 0, extra = 0;
        for (uint32_t s = 0; s < RECORDS; s++) {
            lost += bit_get(kept[p], s) && !bit_get(seen[p], s);
            extra += !bit_get(kept[p], s) && bit_get(seen[p], s);
        }
        CHECK_EQ(lost, 0);
        CHECK_EQ(extra, 0);
        /* Every drop the ring counted is an attempt that was not kept
         * (the rest found the gate closed). */
        CHECK(drops[p] <= not_kept[p]);
        CHECK(kept_tick[p] > 0 && kept_emit[p] > 0);
        total_kept += kept_tick[p] + kept_emit[p];
        total_drops += drops[p];
    }
    CHECK_EQ(delivered, total_kept);
    CHECK(sessions >= 32);           /* the closer ran all along */
    /* and the case the quiesce is for arose (about 9 closes in 10 here,
     * each sample yielding with its slot held 1 time in 16). */
    CHECK(inside_at_close > 0);
    printf("  %u producers x %u records: %llu delivered (%llu by the drain after a close), "
           "%llu dropped, %llu sessions (%llu closed on a producer inside), %llu stalls, "
           "%llu yields mid-sample\n", PRODUCERS, RECORDS,
           (unsigned long long)delivered, (unsigned long long)at_close,
           (unsigned long long)total_drops, (unsigned long long)sessions,
           (unsigned long long)inside_at_close,
           (unsigned long long)full_stalls, (unsigned long long)in_flight);
}
