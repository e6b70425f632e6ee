/* kernel/cmd/bench.c: `bench profile`, the profiler's benchmark (bench/run.py
 * boots under -icount and reads these lines). Measured side by side in one
 * boot: a fixed burn workload with profiling off and on, the cost of a
 * sample (from the run's own header), and Report() over 4 x 2048 records.
 * `bench stream <port>` (bench/stream.py, over the UDP shell) times the
 * same workload with profiling off, under a windowed profile and under a
 * profile stream to the requester's port, side by side. */
#include "hal/cpu.h"
#include "kernel/cmd/burn.h"
#include "kernel/cmd/profile.h"
#include "kernel/prof/session.h"
#include "kernel/sched.h"
#include "kernel/shell.h"
#include "kernel/symtab.h"
#include "lib/sha256.h"
#include "lib/string.h"
#include "kernel/prof/stream.h"
#include "lib/parse.h"
#include "mm/heap.h"
#include "net/udpshell.h"
#include "uapi/profile_stream.h"


#define BENCH_ROUNDS 8000           /* burn_outer(20000) calls: ~0.9 s per worker */
#define BENCH_WINDOW_MS 1000        /* the profile over the workload */
#define BENCH_REPORT_RECS 8192      /* 4 CPUs x 2048: a 2000 ms window at ~1 kHz each */

static struct {
    volatile unsigned running;
    volatile uint64_t cycles[MAX_CPUS];
} work;

static void bench_worker(void *arg)
{
    unsigned cpu = (unsigned)(uintptr_t)arg;
    uint64_t t0 = cycles_now(), sink = 0;
    for (int i = 0; i < BENCH_ROUNDS; i++)
        sink += burn_outer(20000);
    work.cycles[cpu] = cycles_now() - t0 + (sink & 0);
    __atomic_fetch_sub(&work.running, 1, __ATOMIC_RELEASE);
}

/* What runs over the workload. */
enum bench_mode { BENCH_OFF, BENCH_WINDOW, BENCH_STREAM };
static struct { uint32_t ip; uint16_t port; } bench_dest;

/* One worker per online CPU; returns the sum of their times, 0 on failure.
 * Meanwhile nothing (the window's sleep), a windowed profile of
 * BENCH_WINDOW_MS (report to p), or a stream to bench_dest for as long. */
static uint64_t run_workload(enum bench_mode mode, struct printer *p)
{
    unsigned n = 0;
    memset((void *)work.cycles, 0, sizeof work.cycles);
    for (unsigned c = 0; c < cpu_count(); c++)
        if (cpu_online(c))
            n++;
    work.running = n;
    for (unsigned c = 0; c < cpu_count(); c++)
        if (cpu_online(c) && !task_spawn("benchwork", bench_worker, (void *)(uintptr_t)c, (int)c, 0))
            return 0;
    /* Both runs sleep one window first, so that the only difference is
     * the profile: polling every 5 ms instead would take the workers' CPU
     * at -smp 1 in the run without it (160 wakeups, worth ~0.01% there,
     * as much as the tick's samples). */
    if (mode == BENCH_WINDOW) {
        struct prof_window_spec ws = { .ws_kind = PROF_KIND_CPU, .ws_ms = BENCH_WINDOW_MS,
                                       .ws_pid = PROF_ALL, .ws_chains = 2,
                                       .ws_format = PROF_TEXT };
        cmd_profile_window(&ws, p);
    } else if (mode == BENCH_STREAM) {
        struct prof_sink sink;
        cmd_profile_udp_sink(&sink, bench_dest.ip, bench_dest.port);
        /* Its client waits on the shell's reply and cannot send a
         * keep-alive meanwhile: the bench confirms for it, which is safe
         * only because bench_stream ran for a key holder (see there). */
        sink.sk_confirmed = true;
        bool ok = cmd_profile_stream_sink(&sink, 0, PROF_ALL, PROF_STREAM_CPU, p) == 0;
        sleep_ms(BENCH_WINDOW_MS);
        if (ok)
            cmd_profile_stream_stop(p);
    } else {
        sleep_ms(BENCH_WINDOW_MS);
    }
    while (__atomic_load_n(&work.running, __ATOMIC_ACQUIRE))
        sleep_ms(5);
    uint64_t sum = 0;
    for (unsigned c = 0; c < cpu_count(); c++)
        sum += work.cycles[c];
    return sum;
}

static void sink_write(struct printer *p, const char *s, size_t n) {}

/* The fold's work depends on the records, not on which CPU holds them:
 * at -smp 1 (where the bench runs under icount) CPU 0 holds all 8192. */
static uint64_t bench_report(unsigned ncpu)
{
    struct printer sink = { sink_write };
    uintptr_t frames[PROF_FRAMES];
    uintptr_t spin = symtab_find("burn_spin"), inner = symtab_find("burn_inner");
    uintptr_t mid = symtab_find("burn_middle"), outer = symtab_find("burn_outer");
    struct prof_window_spec ws = { .ws_kind = PROF_KIND_CPU, .ws_ms = 1, .ws_pid = PROF_ALL,
                                   .ws_chains = 1, .ws_format = PROF_TEXT };
    prof_window_run(&ws, &sink, NULL);                       /* fresh counts */
    if (prof_session_reserve(BENCH_REPORT_RECS / ncpu, NULL) != PROF_OK)
        return 0;
    for (unsigned c = 0; c < ncpu; c++)
        for (unsigned k = 0; k < BENCH_REPORT_RECS / ncpu; k++) {
            /* 64 leaf offsets x 4 caller sites: many chains, as a real run */
            frames[0] = spin + (k % 64);
            frames[1] = inner + 4 + (k / 64) % 4;
            frames[2] = mid + 14;
            frames[3] = outer + 14;
            prof_inject(c, 1, frames, 4, 100);
        }
    prof_report_again(8, &sink, NULL);
    return prof_report_cycles();
}

/* What reading the clock itself costs: back-to-back cycles_now() reads.
 * Where a hypervisor intercepts the read, every sample's cost figure
 * includes two of these. */
static int bench_clock(struct printer *p)
{
    enum { N = 257 };
    uint64_t d[N];
    unsigned long f = irq_save();
    uint64_t prev = cycles_now();
    for (int i = 0; i < N; i++) {
        uint64_t now = cycles_now();
        d[i] = now - prev;
        prev = now;
    }
    irq_restore(f);
    for (int i = 1; i < N; i++)             /* insertion sort: 257 values */
        for (int j = i; j > 0 && d[j] < d[j - 1]; j--) {
            uint64_t t = d[j]; d[j] = d[j - 1]; d[j - 1] = t;
        }
    pr_printf(p, "bench: clock read %lu %s median (min %lu, max %lu) over %d reads\n",
              d[N / 2], cycles_unit(), d[0], d[N - 1], N);
    return 0;
}

/* The median of N runs of one SHA-256 job, in cycles (guest instructions
 * under -icount), interrupts masked so that no tick lands in a run. */
enum { SHA_RUNS = 15, SHA_DGRAM = 1432 };
enum sha_job { SHA_JOB_HMAC, SHA_JOB_SEAL, SHA_JOB_C, SHA_JOB_INSTALLED };

static uint64_t bench_sha_one(enum sha_job job, const struct hmac_sha256 *keyed,
                              const struct pstr_tag_key *tk, uint8_t *msg)
{
    uint64_t d[SHA_RUNS];
    uint8_t out[SHA256_LEN];
    for (int i = 0; i < SHA_RUNS; i++) {
        unsigned long f = irq_save();
        uint64_t t0 = cycles_now();
        if (job == SHA_JOB_SEAL) {          /* a full stream datagram's tag */
            pstr_seal(tk, msg, PSTR_DGRAM_MAX);
        } else if (job == SHA_JOB_HMAC) {   /* HMAC of all its bytes, as tags were before NH */
            struct hmac_sha256 m = *keyed;
            hmac_sha256_update(&m, msg, PSTR_DGRAM_MAX);
            hmac_sha256_final(&m, out);
        } else {
            sha256_with(job == SHA_JOB_C ? sha256_blocks_c : sha256_blocks_installed(),
                        msg, SHA_DGRAM, out);
        }
        d[i] = cycles_now() - t0;
        irq_restore(f);
    }
    for (int i = 1; i < SHA_RUNS; i++)
        for (int j = i; j > 0 && d[j] < d[j - 1]; j--) {
            uint64_t t = d[j]; d[j] = d[j - 1]; d[j - 1] = t;
        }
    return d[SHA_RUNS / 2];
}

/* What a profile-stream datagram's tag costs: pstr_seal of a full
 * datagram (NH and two SHA-256 blocks), next to HMAC-SHA256 of all its
 * bytes from a state keyed and given label and epoch (the tag before NH),
 * with the block function in use; and SHA-256 of 1432 bytes with the C
 * and with the block function in use. */
static int bench_sha256(struct printer *p)
{
    _Static_assert(PSTR_TAGGED_MAX <= SHA_DGRAM, "room for the sealed datagram");
    static uint8_t msg[SHA_DGRAM];
    static const uint8_t key[32] = { 1, 2, 3 };
    static struct pstr_tag_key tk;      /* ~1.5 KiB: not on the shell's stack */
    struct hmac_sha256 keyed;
    for (int i = 0; i < SHA_DGRAM; i++)
        msg[i] = (uint8_t)(i * 7);
    hmac_sha256_init(&keyed, key, sizeof key);
    pstr_tag_begin(&tk, &keyed, 1);
    hmac_sha256_update(&keyed, "SPRS-TAG\0\0\0\0\0\0\0\1", 16);
    uint64_t hmac = bench_sha_one(SHA_JOB_HMAC, &keyed, &tk, msg);
    uint64_t seal = bench_sha_one(SHA_JOB_SEAL, &keyed, &tk, msg);
    uint64_t c = bench_sha_one(SHA_JOB_C, &keyed, &tk, msg);
    uint64_t in = bench_sha_one(SHA_JOB_INSTALLED, &keyed, &tk, msg);
    secure_zero(&keyed, sizeof keyed);
    secure_zero(&tk, sizeof tk);
    /* ns too: under -icount shift=0 a nanosecond is a guest instruction,
     * whatever the clock's unit (arm64's generic timer ticks every 8 ns). */
    uint64_t per_us = cycles_per_us();
    const char *src = sha256_blocks_installed() == sha256_blocks_c ? "portable C"
                                                                   : "the CPU's instructions";
    pr_printf(p, "bench: pstr_seal of a %d-byte datagram %lu ns (NH, SHA-256 %s)\n",
              PSTR_DGRAM_MAX, seal * 1000 / per_us, src);
    pr_printf(p, "bench: hmac-sha256 of a %d-byte datagram %lu ns (%s)\n", PSTR_DGRAM_MAX,
              hmac * 1000 / per_us, src);
    pr_printf(p, "bench: sha256 of %d bytes: portable C %lu ns, in use %lu ns (median of %d)\n",
              SHA_DGRAM, c * 1000 / per_us, in * 1000 / per_us, SHA_RUNS);
    return 0;
}

/* One benchmark at a time: the workers' figures are shared state, and a
 * second run from the other shell sleeps until the first is done (seconds:
 * a sleeping lock, not a spinlock). */
static struct mutex bench_lock = MUTEX_INIT("bench");

static int bench_profile(struct printer *p)
{
    uint64_t off = run_workload(BENCH_OFF, p);
    uint64_t on = run_workload(BENCH_WINDOW, p);      /* the work lies inside the window */
    if (!off || !on) {
        pr_printf(p, "bench: could not start the workers\n");
        return 1;
    }
    pr_printf(p, "bench: workload off %lu cycles, on %lu cycles, ratio %lu.%04lu\n", off, on,
              on / off, (on % off) * 10000 / off);
    uint32_t p50 = 0, p99 = 0;
    if (prof_cost_permille(500, &p50) == PROF_OK &&
        prof_cost_permille(990, &p99) == PROF_OK)
        pr_printf(p, "bench: sample cost p50 %u p99 %u %s\n", p50, p99, cycles_unit());
    unsigned ncpu = cpu_count() < 4 ? cpu_count() : 4;
    uint64_t rep = bench_report(ncpu);
    pr_printf(p, "bench: report %ux%u records %lu cycles, %lu us\n", ncpu,
              BENCH_REPORT_RECS / ncpu, rep, rep / cycles_per_us());
    return 0;
}

/* The workload off, under a windowed profile and under a stream, in that
 * order, in one boot: the stream's price next to the window's. The stream
 * goes to the requester's port like `profile stream`'s, and is stopped
 * after as long as the window, which covers the same part of the work. */
static int bench_stream(const char *arg, struct printer *p)
{
    uint64_t v;
    if (!parse_u64(arg, &v) || v < 1 || v > 65535) {
        pr_printf(p, "bench: '%s' is not a port (1-65535)\n", arg);
        return 1;
    }
    if (!udpshell_requester(&bench_dest.ip)) {
        pr_puts(p, "bench: stream goes to the UDP shell client that asks; "
                "use it over the UDP shell\n");
        return 1;
    }
    /* The bench's stream starts confirmed (its client cannot send a
     * keep-alive while the shell runs this command), so only a requester
     * who holds the key may start it: an open shell cannot tell who
     * asked, and a spoofed request would aim a second of stream at
     * whoever the source address names. */
    struct hmac_sha256 m;
    uint64_t epoch;
    bool keyed = udpshell_keyed(&m, &epoch);
    secure_zero(&m, sizeof m);
    if (!keyed) {
        pr_puts(p, "bench: stream needs the authenticated shell (boot with ushkey=, "
                "ask with sonde-sh -k): it starts confirmed, and an open shell cannot "
                "tell who asked\n");
        return 1;
    }
    bench_dest.port = (uint16_t)v;
    uint64_t off = run_workload(BENCH_OFF, p);
    uint64_t win = run_workload(BENCH_WINDOW, p);
    uint64_t str = run_workload(BENCH_STREAM, p);
    if (!off || !win || !str) {
        pr_printf(p, "bench: could not start the workers\n");
        return 1;
    }
    pr_printf(p, "bench: stream workload off %lu cycles, window %lu cycles, stream %lu cycles\n",
              off, win, str);
    return 0;
}

/* Report() alone, over 4 x 2048 records where 4 CPUs are online: the
 * figure the target names, from a boot with the CPUs to hold them (the
 * counter's bench boot has one; bench/run.py boots again for this). */
static int bench_report_only(struct printer *p)
{
    unsigned ncpu = cpu_count() < 4 ? cpu_count() : 4;
    uint64_t rep = bench_report(ncpu);
    if (!rep) {
        pr_printf(p, "bench: no memory for the report's %u records\n", BENCH_REPORT_RECS);
        return 1;
    }
    pr_printf(p, "bench: report %ux%u records %lu cycles, %lu us\n", ncpu,
              BENCH_REPORT_RECS / ncpu, rep, rep / cycles_per_us());
    return 0;
}

static int cmd_bench(int argc, char **argv, struct printer *p)
{
    int rc;
    if (argc == 2 && strcmp(argv[1], "clock") == 0)
        return bench_clock(p);
    mutex_lock(&bench_lock);            /* bench sha256's buffers are static too */
    if (argc == 2 && strcmp(argv[1], "sha256") == 0) {
        rc = bench_sha256(p);
    } else if (argc == 2 && strcmp(argv[1], "profile") == 0) {
        rc = bench_profile(p);
    } else if (argc == 2 && strcmp(argv[1], "report") == 0) {
        rc = bench_report_only(p);
    } else if (argc == 3 && strcmp(argv[1], "stream") == 0) {
        rc = bench_stream(argv[2], p);
    } else {
        pr_printf(p, "bench: usage: bench profile | bench report | bench stream <port> | "
                  "bench clock | bench sha256\n");
        rc = 1;
    }
    mutex_unlock(&bench_lock);
    return rc;
}
SHELL_COMMAND(bench, "bench", "bench profile|report|stream <port>|clock|sha256  the profiler's "
              "benchmarks (bench/run.py, bench/stream.py); the clock's read cost; a stream "
              "datagram's tag", cmd_bench);
