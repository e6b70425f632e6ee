// LINK: lib/sha256.c lib/printf.c
/* tests/unit/test_sha256_boot.c: the boot's choice of SHA-256 block
 * function (kernel/sha256_boot.c) against fake CPU halves: none, one that
 * agrees with the C, and ones wrong only on some messages (more than one
 * block in a call, an odd address, a final block alone), each of which
 * the check must catch, keep the C and say why. */
#include "test.h"
#include <stdarg.h>
#include "sbuf.h"
#include "kernel/sha256_boot.c"

#define FAKE_KLOG_LEN 256
#include "fake_klog.h"

static sha256_blocks_fn *fake_fn;
static const char *fake_what;
sha256_blocks_fn *cpu_sha256_blocks(const char **what)
{
    *what = fake_what;
    return fake_fn;
}

static size_t calls;
static void good(uint32_t h[8], const uint8_t *p, size_t n) { calls++; sha256_blocks_c(h, p, n); }
/* Wrong when handed more than one block at once: only the 1432-byte
 * message (22 whole blocks in one call) shows it. */
static void bad_multi(uint32_t h[8], const uint8_t *p, size_t n)
{
    sha256_blocks_c(h, p, n);
    if (n > 1)
        h[3] ^= 1;
}
/* Wrong from an address that is not 4-aligned. */
static void bad_unaligned(uint32_t h[8], const uint8_t *p, size_t n)
{
    sha256_blocks_c(h, p, n);
    if ((uintptr_t)p & 3)
        h[0]++;
}
/* Wrong on a block that ends in the length's encoding of 0 bits: the
 * empty message's only block. */
static void bad_empty(uint32_t h[8], const uint8_t *p, size_t n)
{
    sha256_blocks_c(h, p, n);
    if (n == 1 && p[0] == 0x80 && p[63] == 0)
        h[7] ^= 0x80000000u;
}

static void boot(sha256_blocks_fn *fn, const char *what)
{
    klog[0] = 0;
    memset(&choice, 0, sizeof choice);
    sha256_blocks_install(sha256_blocks_c);
    fake_fn = fn;
    fake_what = what;
    sha256_boot_choose();
}

static void lscpu(char *out, size_t n)
{
    struct sbuf b = SBUF_INIT;
    sha256_boot_print(&b.pr);
    snprintf(out, n, "%s", b.s);
}

TEST(no_instructions_keeps_the_c)
{
    char ls[256];
    boot(0, "this CPU has no SHA-256 instructions (ID_AA64ISAR0_EL1.SHA2 = 0)");
    CHECK(sha256_blocks_installed() == sha256_blocks_c);
    CHECK_STR(klog, "sha256: portable C (this CPU has no SHA-256 instructions "
                    "(ID_AA64ISAR0_EL1.SHA2 = 0))\n");
    lscpu(ls, sizeof ls);
    CHECK_STR(ls, "sha256:       portable C (this CPU has no SHA-256 instructions "
                  "(ID_AA64ISAR0_EL1.SHA2 = 0))\n");
}

TEST(agreeing_instructions_are_installed)
{
    char ls[256];
    calls = 0;
    boot(good, "fake SHA-256 instructions");
    CHECK(sha256_blocks_installed() == good);
    CHECK(calls >= 6);                        /* every check message went through it */
    CHECK_STR(klog, "sha256: fake SHA-256 instructions, checked against the C on messages "
                    "of 0, 55, 56, 64 and 1432 bytes\n");
    lscpu(ls, sizeof ls);
    CHECK_STR(ls, "sha256:       fake SHA-256 instructions\n");
    /* Installed means used: a hash after boot goes through it. */
    uint8_t md[SHA256_LEN];
    calls = 0;
    sha256("abc", 3, md);
    CHECK_EQ(calls, 1);
    sha256_blocks_install(sha256_blocks_c);
}

TEST(wrong_on_many_blocks_keeps_the_c)
{
    char ls[256];
    boot(bad_multi, "fake SHA-256 instructions");
    CHECK(sha256_blocks_installed() == sha256_blocks_c);
    CHECK_STR(klog, "sha256: portable C: the fake SHA-256 instructions gave a wrong digest "
                    "of a 1432-byte message, so they are not used\n");
    lscpu(ls, sizeof ls);
    CHECK_STR(ls, "sha256:       portable C (the fake SHA-256 instructions failed the boot "
                  "check at 1432 bytes)\n");
}

TEST(wrong_at_an_odd_address_keeps_the_c)
{
    boot(bad_unaligned, "fake SHA-256 instructions");
    CHECK(sha256_blocks_installed() == sha256_blocks_c);
    CHECK_STR(klog, "sha256: portable C: the fake SHA-256 instructions gave a wrong digest "
                    "of a 1432-byte message at an odd address, so they are not used\n");
}

TEST(wrong_on_the_empty_message_keeps_the_c)
{
    boot(bad_empty, "fake SHA-256 instructions");
    CHECK(sha256_blocks_installed() == sha256_blocks_c);
    CHECK_STR(klog, "sha256: portable C: the fake SHA-256 instructions gave a wrong digest "
                    "of a 0-byte message, so they are not used\n");
}
