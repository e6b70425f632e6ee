/* kernel/sha256_boot.c: which SHA-256 block function the kernel runs.
 * The CPU's own instructions when the architecture offers them
 * (hal/sha256.h) and they give the C's digest on every check message;
 * else lib/sha256.c's C. A wrong block function would not crash anything:
 * every tag the kernel makes would just be refused by the host, and every
 * request's tag refused by the kernel. So it is checked before it is
 * trusted, and a mismatch is printed, not hidden. */
#include "kernel/sha256_boot.h"
#include "hal/sha256.h"
#include "kernel/console.h"
#include "lib/printf.h"

/* Empty; one block less 9 bytes (the padding fits, one final block);
 * 56 (it does not: two); one whole block; a profile-stream datagram
 * (22 whole blocks in one call, then the tail). The last is hashed again
 * from an odd address: datagrams sit at any alignment. */
static const size_t check_len[] = { 0, 55, 56, 64, 1432 };
#define CHECK_MAX   1432
#define CHECK_SKEW  3

static uint8_t check_msg[CHECK_MAX + CHECK_SKEW];

static struct {
    const char *what;       /* the CPU's function, or why it has none */
    const char *why_not;    /* set when the CPU's function was refused */
    size_t bad_len;
} choice;

/* 0 when fn agrees with the C on every check message, else 1 + the
 * index of the first it got wrong (the skewed one is the last). */
static unsigned first_mismatch(sha256_blocks_fn *fn)
{
    unsigned n = sizeof check_len / sizeof check_len[0];
    for (size_t i = 0; i < sizeof check_msg; i++)
        check_msg[i] = (uint8_t)(i * 167 + 13);
    for (unsigned i = 0; i <= n; i++) {
        size_t len = i < n ? check_len[i] : CHECK_MAX;
        const uint8_t *m = i < n ? check_msg : check_msg + CHECK_SKEW;
        uint8_t want[SHA256_LEN], got[SHA256_LEN];
        sha256_with(sha256_blocks_c, m, len, want);
        sha256_with(fn, m, len, got);
        for (int b = 0; b < SHA256_LEN; b++)
            if (want[b] != got[b])
                return i + 1;
    }
    return 0;
}

void sha256_boot_choose(void)
{
    sha256_blocks_fn *fn = cpu_sha256_blocks(&choice.what);
    if (!fn) {
        sha256_blocks_install(sha256_blocks_c);
        kprintf("sha256: portable C (%s)\n", choice.what);
        return;
    }
    unsigned bad = first_mismatch(fn);
    if (bad) {
        unsigned n = sizeof check_len / sizeof check_len[0];
        choice.bad_len = bad <= n ? check_len[bad - 1] : CHECK_MAX;
        choice.why_not = bad <= n ? "" : " at an odd address";
        sha256_blocks_install(sha256_blocks_c);
        kprintf("sha256: portable C: the %s gave a wrong digest of a %zu-byte message%s, "
                "so they are not used\n", choice.what, choice.bad_len, choice.why_not);
        return;
    }
    sha256_blocks_install(fn);
    kprintf("sha256: %s, checked against the C on messages of 0, 55, 56, 64 and 1432 bytes\n",
            choice.what);
}

void sha256_boot_print(struct printer *p)
{
    if (sha256_blocks_installed() != sha256_blocks_c)
        pr_printf(p, "sha256:       %s\n", choice.what);
    else if (choice.why_not)
        pr_printf(p, "sha256:       portable C (the %s failed the boot check at %zu bytes%s)\n",
                  choice.what, choice.bad_len, choice.why_not);
    else
        pr_printf(p, "sha256:       portable C (%s)\n",
                  choice.what ? choice.what : "not chosen yet");
}
