// LINK: net/udpshell.c net/udpshell_fresh.c uapi/udpshell.c uapi/udpshell_auth.c lib/sha256.c lib/printf.c lib/parse.c tests/unit/fake_net.c
/* tests/fuzz/fuzz_udpshell_auth.c: the authenticated UDP shell's receive
 * side (net/udpshell.c with a key): challenges, epochs, the window and
 * retransmits, driven by a script the input spells.
 *
 * The input is a list of pieces (fuzz.h); each piece's first byte picks
 * an action and the rest are its arguments: raw bytes as a datagram, a
 * tagged challenge, a tagged request (with this boot's epoch or another,
 * a nonce from a small range so that many repeat), the same bytes again
 * from another sender, the shell's task running what is queued, time
 * passing. Every request runs "echo N" with N its nonce.
 *
 * Invariants: no nonce runs twice (per boot, whoever sends it); a request
 * tagged for another epoch never runs; every datagram the shell sends is
 * tagged under the key with its epoch and flagged as a reply, and goes to
 * the address and port of a datagram the input delivered; a challenge is
 * answered with exactly one datagram no larger than itself; nothing is
 * sent for raw bytes, which carry no tag. */
#include <stdlib.h>
#include <string.h>
#include "fuzz.h"
#include "fake_net.h"
#include "kernel/console.h"
#include "kernel/sched.h"
#include "mm/heap.h"
#include "net/udpshell.h"
#include "uapi/byteorder.h"
#include "uapi/udpshell.h"

static struct task fake_task;
struct task *task_spawn(const char *name, task_fn fn, void *arg, int cpu, unsigned flags)
{
    return &fake_task;
}
struct task *task_current(void) { return &fake_task; }
void waitq_wait(struct waitq *wq, bool (*cond)(void *), void *arg) { abort(); }
void waitq_wake_all(struct waitq *wq) {}
void kprintf(const char *fmt, ...) {}
void *kmalloc(size_t size) { return malloc(size); }
void kfree(void *p) { free(p); }

#define NONCE_RANGE 4096
static uint8_t ran[NONCE_RANGE];      /* per input: how often each nonce ran */
static uint8_t told[NONCE_RANGE];     /* ... and whether it came with this boot's epoch */
static uint64_t base;                 /* this input's nonces: base + 1 .. base + NONCE_RANGE */
static int bad_runs;

static void run_line(char *line, struct printer *p)
{
    unsigned long long n;
    if (sscanf(line, "echo %llu", &n) != 1 || n <= base || n > base + NONCE_RANGE) {
        bad_runs++;                  /* only our requests may ever run */
        return;
    }
    ran[n - base - 1]++;
    pr_printf(p, "%llu\n", n);
}

static uint8_t key[USHP_KEY_LEN];
static uint64_t epoch;

/* Every datagram sent since the last look: a reply tagged by the shell. */
static void check_sent(uint32_t ip, uint16_t port, size_t from, bool challenge, size_t chal_len)
{
    for (size_t i = from; i < fake_nsent; i++) {
        struct fake_dgram *g = &fake_sent[i];
        struct ushp_hdr h;
        const uint8_t *pl;
        FUZZ_CHECK(ushp_parse_reply(g->data, g->len, &h, &pl) == 0);
        FUZZ_CHECK(ushp_auth_verify(key, g->data, g->len));
        FUZZ_CHECK((h.flags & (USHP_FLAG_AUTH | USHP_FLAG_REPLY)) ==
                   (USHP_FLAG_AUTH | USHP_FLAG_REPLY));
        FUZZ_CHECK(h.epoch == epoch);
        if (challenge) {
            FUZZ_CHECK(fake_nsent == from + 1 && g->len <= chal_len);
            FUZZ_CHECK(g->ip == ip && g->dport == port);
        }
    }
}

/* Requests already sent this input, to send again. */
#define KEEP 16
static struct { uint8_t d[USHP_AUTH_DGRAM_MAX]; size_t len; } kept[KEEP];
static unsigned nkept;

static void keep(const uint8_t *d, size_t n)
{
    memcpy(kept[nkept % KEEP].d, d, n);
    kept[nkept % KEEP].len = n;
    nkept++;
}

static void drain(void)
{
    size_t from = fake_nsent;
    while (udpshell_run_next())
        ;
    check_sent(0, 0, from, false, 0);
}

static void start_once(void)
{
    static bool started;
    if (started)
        return;
    memset(key, 0x3c, sizeof key);
    udpshell_set_runner(run_line);
    FUZZ_CHECK(udpshell_start_auth(9000, key, NULL) == 0);
    /* Learn the epoch as a client does. */
    uint8_t d[USHP_CHALLENGE_DGRAM];
    size_t n = ushp_build_challenge(d, sizeof d, key, 1, 1);
    fake_net_deliver(0x0a000002, 4000, d, n);
    FUZZ_CHECK(fake_nsent == 1);
    struct ushp_hdr h;
    const uint8_t *pl;
    FUZZ_CHECK(ushp_parse_reply(fake_sent[0].data, fake_sent[0].len, &h, &pl) == 0);
    epoch = h.epoch;
    FUZZ_CHECK(epoch != 0);
    started = true;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    start_once();
    drain();                         /* whatever the last input left queued */
    fake_net_clear();
    /* A fresh range of nonces for this input, above every earlier one. */
    base += 2 * NONCE_RANGE;
    memset(ran, 0, sizeof ran);
    memset(told, 0, sizeof told);
    nkept = 0;
    bad_runs = 0;
    struct fuzz_cur c = { d, n };
    const uint8_t *p;
    size_t m;
    while (fuzz_next(&c, &p, &m)) {
        if (m < 1)
            continue;
        uint8_t op = p[0] % 6;
        const uint8_t *a = p + 1;
        size_t k = m - 1;
        uint32_t ip = 0x0a000100 + (k ? a[0] % 8 : 0);
        uint16_t port = (uint16_t)(5000 + (k > 1 ? a[1] % 8 : 0));
        uint8_t dg[USHP_AUTH_DGRAM_MAX];
        size_t from = fake_nsent;
        switch (op) {
        case 0:                      /* raw bytes: nothing may answer them */
            fake_net_deliver(ip, port, a, k);
            FUZZ_CHECK(fake_nsent == from);
            break;
        case 1: {                    /* a challenge */
            uint64_t nonce = k > 3 ? get_be16(a + 2) + 1u : 1;
            size_t len = ushp_build_challenge(dg, sizeof dg, key, 7, nonce);
            fake_net_deliver(ip, port, dg, len);
            check_sent(ip, port, from, true, len);
            keep(dg, len);
            break;
        }
        case 2: {                    /* a request, this boot's epoch or another */
            uint64_t nonce = base + 1 + (k > 3 ? get_be16(a + 2) % NONCE_RANGE : 0);
            bool other = k > 4 && (a[4] & 1);
            char cmd[40];
            int len = snprintf(cmd, sizeof cmd, "echo %llu", (unsigned long long)nonce);
            size_t dl = ushp_build_auth(dg, sizeof dg, key, k > 5 ? a[5] : 0, 0, USHP_FLAG_LAST,
                                        nonce, other ? epoch ^ (k > 6 ? a[6] | 1u : 1u) : epoch,
                                        cmd, (size_t)len);
            if (!other)
                told[nonce - base - 1] = 1;
            fake_net_deliver(ip, port, dg, dl);
            keep(dg, dl);
            break;
        }
        case 3:                      /* something sent before, again, from anyone */
            if (nkept) {
                unsigned i = (k > 2 ? a[2] : 0) % (nkept < KEEP ? nkept : KEEP);
                fake_net_deliver(ip, port, kept[i].d, kept[i].len);
                if (get_be16(kept[i].d + USHP_OFF_FLAGS) & USHP_FLAG_CHALLENGE)
                    check_sent(ip, port, from, true, kept[i].len);
            }
            break;
        case 4:
            drain();
            break;
        case 5:
            fake_now_ns += (uint64_t)(k ? a[0] : 1) * 100000000ull;
            break;
        }
        FUZZ_CHECK(fake_nsent >= from);
    }
    drain();
    FUZZ_CHECK(bad_runs == 0);
    for (unsigned i = 0; i < NONCE_RANGE; i++)
        FUZZ_CHECK(ran[i] <= told[i]);
    return 0;
}
