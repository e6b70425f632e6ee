// LINK: net/udpshell.c net/udpshell_fresh.c uapi/udpshell.c uapi/udpshell_auth.c lib/sha256.c lib/printf.c lib/parse.c tests/unit/fake_net.c
/* tests/unit/test_udpshell-server_id.c: the real UDP shell started with a
 * key and a kernel id (ushid=): every tag, the challenge's answer included,
 * is under that id's key, so a request tagged for another kernel sharing
 * the key, or for none, is refused and counted, and nothing it answers
 * verifies for a client of another id. (One shell per process: the shell
 * with a key alone is test_udpshell-server_auth.c.) */
#include "test.h"
#include "sbuf.h"
#include <stdlib.h>
#include "fake_net.h"
#include "fake_hal.h"
#include "kernel/console.h"
#include "kernel/sched.h"
#include "kernel/shell.h"
#include "mm/heap.h"
#include "net/udpshell.h"
#include "uapi/byteorder.h"

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

static int nrun;
void shell_run_line(char *line, struct printer *p)
{
    nrun++;
    pr_printf(p, "ran %s\n", line);
}

static uint8_t key[32], k_alpha[32], k_beta[32];
static uint64_t epoch;

static struct udpshell_stats stats(void)
{
    struct udpshell_stats s;
    udpshell_get_stats(&s);
    return s;
}

/* Send a challenge tagged under k; the answer's epoch if one came that
 * verifies under k, else 0. */
static uint64_t challenge_under(const uint8_t *k, uint32_t ip)
{
    uint8_t d[USHP_CHALLENGE_DGRAM];
    fake_net_clear();
    fake_net_deliver(ip, 5000, d, ushp_build_challenge(d, sizeof d, k, 1, 42));
    if (fake_nsent != 1 || !ushp_auth_verify(k, fake_sent[0].data, fake_sent[0].len))
        return 0;
    return get_be64(fake_sent[0].data + USHP_HDR_LEN + USHP_NONCE_LEN);
}

static void start_once(void)
{
    static bool started;
    if (started)
        return;
    memset(key, 0x3c, sizeof key);
    ushp_id_key(key, "alpha", k_alpha);
    ushp_id_key(key, "beta", k_beta);
    udpshell_set_runner(shell_run_line);
    fake_entropy_name = "fake";
    CHECK_EQ(udpshell_start_auth(9000, key, "no/good"), -1);    /* a bad id: no shell */
    CHECK(fake_bound_fn == NULL);
    CHECK_EQ(udpshell_start_auth(9000, key, "alpha"), 0);
    epoch = challenge_under(k_alpha, 0x0a000001);
    CHECK(epoch != 0);
    started = true;
}

/* A challenge under the bare key or another id's key: silence, counted
 * as a bad tag (a client of kernel beta cannot learn alpha's epoch). */
TEST(id_challenge_of_another_id_is_refused)
{
    start_once();
    struct udpshell_stats s0 = stats();
    CHECK_EQ(challenge_under(k_beta, 0x0a000002), 0);
    CHECK_EQ(fake_nsent, 0);
    CHECK_EQ(challenge_under(key, 0x0a000002), 0);
    CHECK_EQ(fake_nsent, 0);
    CHECK_EQ(stats().bad_tag, s0.bad_tag + 2);
    CHECK_EQ(stats().challenges, s0.challenges);
}

/* A request for alpha's epoch but tagged for beta (a request captured on
 * kernel beta, or a client told the wrong id) never runs; the same under
 * alpha's key runs, and its reply verifies under alpha's key only. */
TEST(id_request_tagged_for_another_id_is_refused)
{
    start_once();
    uint8_t d[400];
    struct udpshell_stats s0 = stats();
    fake_net_clear();
    size_t n = ushp_build_auth(d, sizeof d, k_beta, 7, 0, USHP_FLAG_LAST, 1000, epoch,
                               "version", 7);
    fake_net_deliver(0x0a000003, 5001, d, n);
    n = ushp_build_auth(d, sizeof d, key, 8, 0, USHP_FLAG_LAST, 1001, epoch, "version", 7);
    fake_net_deliver(0x0a000003, 5001, d, n);
    while (udpshell_run_next())
        ;
    CHECK_EQ(nrun, 0);
    CHECK_EQ(fake_nsent, 0);
    CHECK_EQ(stats().bad_tag, s0.bad_tag + 2);
    n = ushp_build_auth(d, sizeof d, k_alpha, 9, 0, USHP_FLAG_LAST, 1002, epoch, "version", 7);
    fake_net_deliver(0x0a000003, 5001, d, n);
    while (udpshell_run_next())
        ;
    CHECK_EQ(nrun, 1);
    CHECK_EQ(fake_nsent, 1);
    CHECK(ushp_auth_verify(k_alpha, fake_sent[0].data, fake_sent[0].len));
    CHECK(!ushp_auth_verify(k_beta, fake_sent[0].data, fake_sent[0].len));
    CHECK(!ushp_auth_verify(key, fake_sent[0].data, fake_sent[0].len));
    fake_net_clear();
}

/* `net` names the id (never the key). */
TEST(id_net_names_the_kernel_id)
{
    start_once();
    struct sbuf b = SBUF_INIT;
    fake_app_stats->print(&b.pr);
    char want[100];
    snprintf(want, sizeof want, "udpshell auth: HMAC-SHA256 key, kernel id alpha, boot epoch "
             "%016lx", (unsigned long)epoch);
    CHECK(strstr(b.s, want) != NULL);
    CHECK(strstr(b.s, "3c3c") == NULL);
}
