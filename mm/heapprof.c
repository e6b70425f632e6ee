/* mm/heapprof.c: sampled heap profiling (mm/heapprof.h): the per-CPU
 * countdown's thresholds, the scaling, and the table of live sampled
 * blocks.
 *
 * The arithmetic is integer only (the kernel has no FPU state to spare
 * and no libm): a threshold is rate * -ln(U), with the logarithm taken
 * bit by bit by repeated squaring; the scaling's 1 - e^(-t) is a Taylor
 * series after range reduction by ln 2, in 60-bit fixed point. The host
 * tests check both against libm (tests/unit/test_heapprof.c).
 *
 * The table: HEAPPROF_BLOCKS entries, hashed by block address into
 * chains of 16-bit indices, free entries on a list. No allocation, no
 * lock of its own: the heap's lock covers it (mm/heap.c).
 *
 * Allocator profiling: prefix heapprof_ and HEAPPROF_. */
#include "mm/heapprof.h"
#include "kernel/percpu.h"
#include "kernel/prof/ring.h"
#include "kernel/prof/sample.h"
#include "kernel/stacktrace.h"
#include "kernel/task.h"
#include "lib/string.h"

#define HEAPPROF_NONE     0xffffu
#define HEAPPROF_BUCKETS  4096u
#define HEAPPROF_LN2_Q32  2977044472ull       /* ln 2 in 1/2^32ths, rounded */
#define HEAPPROF_ONE_Q60  (1ull << 60)
#define HEAPPROF_LN2_Q60  799144290325165824ull /* ln 2 in 1/2^60ths, rounded */
/* A chain is walked a little deeper than a record holds, to find the
 * allocation site below the allocator's own frames. */
#define HEAPPROF_WALK     (PROF_FRAMES + 4)

_Static_assert(HEAPPROF_BLOCKS < HEAPPROF_NONE, "entries are named by 16-bit indices");

uint32_t heapprof_rate;
static uint32_t heapprof_gen;
struct heapprof_cpu heapprof_cpus[MAX_CPUS];

struct heapprof_block {
    uintptr_t hb_ptr;           /* 0: a free entry */
    uint64_t hb_size;
    uint64_t hb_weight;
    int32_t hb_pid;
    uint16_t hb_next;           /* in its bucket, or in the free list */
    uint8_t hb_depth;
    uintptr_t hb_frames[PROF_FRAMES];
};

static struct heapprof_block heapprof_blocks[HEAPPROF_BLOCKS];
static uint16_t heapprof_bucket[HEAPPROF_BUCKETS];
static uint16_t heapprof_free_head;
static bool heapprof_ready;           /* buckets and free list built */
static struct heapprof_stats heapprof_st;

/* ---- the arithmetic ---- */

uint64_t heapprof_rand(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* log2(m) in 1/2^32ths, m >= 1: the integer part from the top bit, the
 * fraction one bit per squaring of the mantissa. */
static uint64_t heapprof_log2_q32(uint64_t m)
{
    unsigned e = 63u - (unsigned)__builtin_clzll(m);
    uint64_t y = e <= 62 ? m << (62 - e) : m >> 1;  /* mantissa in [1,2), Q62 */
    uint64_t r = (uint64_t)e << 32;
    for (int bit = 31; bit >= 0; bit--) {
        y = (uint64_t)(((unsigned __int128)y * y) >> 62);
        if (y >= 1ull << 63) {                      /* >= 2: halve, bit is 1 */
            y >>= 1;
            r |= 1ull << bit;
        }
    }
    return r;
}

uint64_t heapprof_draw(uint64_t *state, uint32_t rate)
{
    /* U = m / 2^53, m in 1..2^53: never 0, so -ln U is finite. */
    uint64_t m = (heapprof_rand(state) >> 11) + 1;
    uint64_t neg_log2 = (53ull << 32) - heapprof_log2_q32(m);     /* -log2 U, Q32 */
    unsigned __int128 t = (unsigned __int128)rate * neg_log2 * HEAPPROF_LN2_Q32;
    return (uint64_t)(t >> 64);
}

/* e^(-r) in Q60 for r in [0, ln 2] (Q60), by its Taylor series: the
 * terms fall below 2^-60 well before the twentieth. */
static uint64_t heapprof_exp_neg_q60(uint64_t r)
{
    uint64_t sum = HEAPPROF_ONE_Q60, term = HEAPPROF_ONE_Q60;
    for (unsigned n = 1; n < 24 && term; n++) {
        term = (uint64_t)(((unsigned __int128)term * r) >> 60) / n;
        sum = n & 1 ? sum - term : sum + term;
    }
    return sum;
}

/* (num << 60) / den, floored, for num < den <= 2^32: two long-division
 * steps of 30 and 30 bits, so no 128-bit division (no libgcc). */
static uint64_t heapprof_div_q60(uint64_t num, uint64_t den)
{
    uint64_t a = num << 30;
    uint64_t q1 = a / den, r1 = a % den;
    return (q1 << 30) + (r1 << 30) / den;
}

/* 1 - e^(-size/rate) in Q60, at least 1. */
static uint64_t heapprof_one_minus_exp_q60(uint64_t size, uint32_t rate)
{
    uint64_t whole = size / rate, rem = size % rate;
    if (whole >= 42)
        return HEAPPROF_ONE_Q60;          /* e^-42 < 2^-60 */
    uint64_t frac = heapprof_div_q60(rem, rate);          /* Q60, < 1 */
    /* t = k ln2 + r, r in [0, ln2): e^-t = e^-r / 2^k. Small t (the
     * common case: a block much smaller than the rate) keeps all 60
     * bits; larger t goes through Q56, which holds 42. */
    uint64_t k = 0, r = frac;
    if (whole || frac >= HEAPPROF_LN2_Q60) {
        uint64_t t56 = (whole << 56) + (frac >> 4), ln2_56 = HEAPPROF_LN2_Q60 >> 4;
        k = t56 / ln2_56;
        r = (t56 - k * ln2_56) << 4;
    }
    uint64_t e = heapprof_exp_neg_q60(r);
    e = k >= 64 ? 0 : e >> k;
    uint64_t d = HEAPPROF_ONE_Q60 - e;
    return d ? d : 1;
}

uint64_t heapprof_scale(uint64_t size, uint32_t rate)
{
    if (size == 0 || rate == 0)
        return size;
    uint64_t d = heapprof_one_minus_exp_q60(size, rate);
    /* size * 2^60 / d without 128-bit division: shift size up as far as
     * it goes (a bits) and d down by the rest; d >= size/rate * 2^60 keeps
     * the divisor above 2^32 for any rate <= 2^30. */
    unsigned a = (unsigned)__builtin_clzll(size) - 1;
    if (a > 60)
        a = 60;
    uint64_t div = d >> (60 - a);
    if (div == 0)
        div = 1;
    return ((size << a) + div / 2) / div;
}

uint64_t heapprof_objects_q16(uint64_t weight, uint64_t size)
{
    if (size == 0)
        return 1u << 16;
    if (weight < 1ull << 47)
        return ((weight << 16) + size / 2) / size;
    return weight / size << 16;
}

/* ---- the table ---- */

static void heapprof_init(void)
{
    for (unsigned i = 0; i < HEAPPROF_BUCKETS; i++)
        heapprof_bucket[i] = HEAPPROF_NONE;
    for (unsigned i = 0; i < HEAPPROF_BLOCKS; i++) {
        heapprof_blocks[i].hb_ptr = 0;
        heapprof_blocks[i].hb_next = (uint16_t)(i + 1 < HEAPPROF_BLOCKS ? i + 1 : HEAPPROF_NONE);
    }
    heapprof_free_head = 0;
    heapprof_ready = true;
}

static unsigned heapprof_hash(uintptr_t p)
{
    return (unsigned)((p >> 4) * 0x9e3779b97f4a7c15ull >> 52) & (HEAPPROF_BUCKETS - 1);
}

static bool heapprof_insert(const void *ptr, size_t size, uint64_t weight, int pid,
                      const uintptr_t *frames, unsigned depth)
{
    if (!heapprof_ready)
        heapprof_init();
    if (heapprof_free_head == HEAPPROF_NONE)
        return false;
    uint16_t i = heapprof_free_head;
    struct heapprof_block *b = &heapprof_blocks[i];
    heapprof_free_head = b->hb_next;
    unsigned h = heapprof_hash((uintptr_t)ptr);
    b->hb_ptr = (uintptr_t)ptr;
    b->hb_size = size;
    b->hb_weight = weight;
    b->hb_pid = pid;
    b->hb_depth = (uint8_t)depth;
    memcpy(b->hb_frames, frames, depth * sizeof *frames);
    b->hb_next = heapprof_bucket[h];
    heapprof_bucket[h] = i;
    heapprof_st.hs_live++;
    return true;
}

static bool heapprof_remove(const void *ptr)
{
    uint16_t *pp = heapprof_ready ? &heapprof_bucket[heapprof_hash((uintptr_t)ptr)] : NULL;
    for (; pp && *pp != HEAPPROF_NONE; pp = &heapprof_blocks[*pp].hb_next) {
        struct heapprof_block *b = &heapprof_blocks[*pp];
        if (b->hb_ptr != (uintptr_t)ptr)
            continue;
        uint16_t i = *pp;
        *pp = b->hb_next;
        b->hb_ptr = 0;
        b->hb_next = heapprof_free_head;
        heapprof_free_head = i;
        heapprof_st.hs_live--;
        heapprof_st.hs_retired++;
        return true;
    }
    return false;
}

void heapprof_retire(const void *ptr)
{
    if (!heapprof_remove(ptr))
        heapprof_st.hs_missing++;
}

bool heapprof_forget(const void *ptr)
{
    return heapprof_remove(ptr);
}

/* ---- sampling ---- */

static void heapprof_seed(struct heapprof_cpu *c, unsigned cpu)
{
    /* A sampling generator needs no secrecy, only distinct streams: the
     * cycle counter and the CPU's index, mixed. */
    c->hc_rng = cycles_now() ^ ((uint64_t)cpu << 48) ^ 0x5ad0c0ffee123457ull;
    heapprof_rand(&c->hc_rng);
    c->hc_seeded = true;
}

/* The chain from the allocation site out: frame 0 is the call to the
 * allocator (its return address less one, so that it names the caller's
 * own line), then the site's callers. The walk starts inside the
 * allocator: its frames up to the site are skipped. */
static unsigned heapprof_chain(uintptr_t site, uintptr_t *out)
{
    uintptr_t walk[HEAPPROF_WALK];
    unsigned n = st_capture_here(walk, HEAPPROF_WALK), i = 0;
    while (i < n && walk[i] != site)
        i++;
    out[0] = site - 1;
    unsigned depth = 1;
    for (i++; i < n && depth < PROF_FRAMES; i++)
        out[depth++] = walk[i];
    return depth;
}

bool heapprof_sample(const void *ptr, size_t size, uintptr_t site)
{
    unsigned cpu = cpu_index();
    struct heapprof_cpu *c = &heapprof_cpus[cpu];
    uint32_t rate = heapprof_rate, gen = __atomic_load_n(&heapprof_gen, __ATOMIC_RELAXED);
    if (rate == 0) {
        /* Off: a countdown no allocations use up, so that the fast path
         * needs no test of the rate. */
        cpu_heap_left_set(INT64_MAX);
        c->hc_gen = gen;
        return false;
    }
    if (!c->hc_seeded)
        heapprof_seed(c, cpu);
    if (c->hc_gen != gen) {
        /* A threshold of the old rate (or none yet) was crossed: it says
         * nothing at this rate. This allocation counts against the fresh
         * one instead, so that the first allocation after a rate change
         * is sampled with the same chance as any other (a large block
         * right after `profile heap rate` is not missed). */
        c->hc_gen = gen;
        int64_t left = (int64_t)heapprof_draw(&c->hc_rng, rate) - (int64_t)size;
        if (left >= 0) {
            cpu_heap_left_set(left);
            return false;
        }
    }
    cpu_heap_left_set((int64_t)heapprof_draw(&c->hc_rng, rate));
    uint64_t c0 = cycles_now();
    struct prof_record r = {
        .pr_pid = task_current_pid(),
        .pr_kind = PROF_KIND_HEAP,
        .pr_weight = heapprof_scale(size, rate),
        .pr_size = size,
    };
    r.pr_depth = (uint8_t)heapprof_chain(site, r.pr_frames);
    heapprof_st.hs_samples++;
    bool kept = heapprof_insert(ptr, size, r.pr_weight, r.pr_pid, r.pr_frames, r.pr_depth);
    if (!kept)
        heapprof_st.hs_overflow++;
    /* A `profile allocs` window, when one is open: one load otherwise. */
    if (__atomic_load_n(&prof_gate.pg_state, __ATOMIC_RELAXED) & PROF_GATE_KIND(PROF_KIND_HEAP)) {
        uint64_t cost = cycles_now() - c0;
        r.pr_cost = cost > UINT32_MAX ? UINT32_MAX : (uint32_t)cost;
        prof_emit(&r);
    }
    return kept;
}

/* The countdown a rate change gives a CPU that has not drawn at it yet:
 * 0, so that its next allocation crosses and draws a fresh threshold (the
 * generation check above), or, off, INT64_MAX, so that none crosses. */
static int64_t heapprof_fresh_left(uint32_t rate)
{
    return rate ? 0 : INT64_MAX;
}

void heapprof_set_rate(uint32_t rate)
{
    /* R: the rate, then the generation released; pairs with A in
     * heapprof_cpu_refresh, which reads the generation outside the heap
     * lock and then the rate: it sees this rate or a newer one. */
    __atomic_store_n(&heapprof_rate, rate, __ATOMIC_RELAXED);
    __atomic_add_fetch(&heapprof_gen, 1, __ATOMIC_RELEASE);
    /* The heap lock keeps every CPU out of its countdown meanwhile
     * (x86-64 subtracts in place, not atomically); arm64's others take
     * theirs by SGI once their interrupts are on (hal/cpu.h). */
    cpu_heap_countdown_all(heapprof_fresh_left(rate), heapprof_cpu_refresh);
}

void heapprof_cpu_refresh(void)
{
    uint32_t gen = __atomic_load_n(&heapprof_gen, __ATOMIC_ACQUIRE);   /* A: pairs with R */
    /* This CPU took the heap lock after the change and has drawn at the
     * new rate already (or set off): that threshold stands. Overwriting
     * it with 0 would sample its next allocation whatever its size. */
    if (heapprof_cpus[cpu_index()].hc_gen == gen)
        return;
    cpu_heap_left_set(heapprof_fresh_left(__atomic_load_n(&heapprof_rate, __ATOMIC_RELAXED)));
}

uint32_t heapprof_copy(struct prof_record *out, uint32_t max, struct heapprof_stats *st)
{
    uint32_t n = 0;
    for (unsigned i = 0; heapprof_ready && i < HEAPPROF_BLOCKS && n < max; i++) {
        const struct heapprof_block *b = &heapprof_blocks[i];
        if (!b->hb_ptr)
            continue;
        struct prof_record *r = &out[n++];
        memset(r, 0, sizeof *r);
        r->pr_pid = b->hb_pid;
        r->pr_kind = PROF_KIND_HEAP;
        r->pr_depth = b->hb_depth;
        r->pr_weight = b->hb_weight;
        r->pr_size = b->hb_size;
        memcpy(r->pr_frames, b->hb_frames, b->hb_depth * sizeof *b->hb_frames);
    }
    if (st) {
        *st = heapprof_st;
        st->hs_rate = heapprof_rate;
    }
    return n;
}

#ifdef SONDE_HOST_TEST
void heapprof_test_reset(void)
{
    heapprof_init();
    memset(&heapprof_st, 0, sizeof heapprof_st);
    memset(heapprof_cpus, 0, sizeof heapprof_cpus);
    for (unsigned i = 0; i < MAX_CPUS; i++)
        cpus[i].heap_left = INT64_MAX;
    heapprof_rate = 0;
    heapprof_gen = 0;
}

void heapprof_test_seed(unsigned cpu, uint64_t seed)
{
    heapprof_cpus[cpu].hc_rng = seed;
    heapprof_cpus[cpu].hc_seeded = true;
}
#endif
