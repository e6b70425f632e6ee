// LINK: kernel/bootparams.c lib/parse.c lib/sha256.c uapi/udpshell.c uapi/udpshell_auth.c mm/heapprof.c tests/unit/fake_heapprof.c
/* tests/unit/test_bootparams.c: ushkey= on the kernel command line: the
 * key decoded, every copy of its digits overwritten, a bad or dropped value
 * refused with the rule named, and the value never printed. */
#include "test.h"
#include <stdarg.h>
#include "hal/pmu.h"
#include "kernel/bootparams.h"
#include "kernel/console.h"
#include "kernel/symtab.h"
#include "mm/heapprof.h"
#include "uapi/udpshell.h"

#include "fake_klog.h"
void pmu_set_mode(enum pmu_mode mode) {}
bool symtab_lookup(uintptr_t addr, struct sym_hit *hit) { return false; }
uintptr_t symtab_find(const char *name) { return 0; }

#define HEX "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
#define XS  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"

TEST(ushkey_decoded_and_wiped_everywhere)
{
    char text[] = "udpshell=9000 ushkey=" HEX " smp=2";
    klog[0] = 0;
    const struct cmdline *cl = boot_params_parse(text);
    CHECK_STR(text, "udpshell=9000 ushkey=" XS " smp=2");
    CHECK_STR(cmdline_get(cl, "ushkey"), XS);
    CHECK_STR(cmdline_get(cl, "smp"), "2");
    uint8_t key[32];
    CHECK_EQ(boot_param_ushkey(key), 1);
    CHECK_EQ(key[0], 0);
    CHECK_EQ(key[31], 0x1f);
    CHECK_EQ(boot_param_ushkey(key), -1);       /* one taker */
    CHECK_EQ(klog[0], 0);                    /* known, valid: nothing to say */
}

TEST(ushkey_absent)
{
    char text[] = "udpshell=9000";
    boot_params_parse(text);
    uint8_t key[32];
    CHECK_EQ(boot_param_ushkey(key), 0);
}

TEST(ushkey_bad_value_refused_and_never_printed)
{
    const char *bad[] = { "ushkey=" HEX "0", "ushkey=0123456789abcdefg123456789abcdef"
                          "0123456789abcdef0123456789abcdef", "ushkey", "ushkey=" };
    for (int i = 0; i < 4; i++) {
        char text[200];
        snprintf(text, sizeof text, "%s udpshell=9000", bad[i]);
        klog[0] = 0;
        boot_params_parse(text);
        uint8_t key[32];
        CHECK_EQ(boot_param_ushkey(key), -1);
        CHECK(strstr(klog, "ushkey= must be 64 hex digits") != NULL);
        CHECK(strstr(klog, "will not start") != NULL);
        CHECK(strstr(klog, "0123456789abcdef") == NULL);
        CHECK(strstr(text, "0123456789abcdef") == NULL);
    }
}

TEST(ushkey_dropped_word_is_refused_not_ignored)
{
    /* 32 words fill the table: the 33rd, the key, is dropped. */
    char text[1024] = "";
    for (int i = 0; i < CMDLINE_MAX_PARAMS; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "w%d=1 ", i);
    strcat(text, "ushkey=" HEX);
    klog[0] = 0;
    boot_params_parse(text);
    uint8_t key[32];
    CHECK_EQ(boot_param_ushkey(key), -1);
    CHECK(strstr(klog, "ushkey= was not read") != NULL);
    CHECK(strstr(text, HEX) == NULL);
    CHECK(strstr(klog, "0a0b0c") == NULL);
}

/* x86's path: the loader's line copied into a 512-byte buffer first. */
static char copy[512];

static void loader_reset(void)
{
    char none[1] = "";
    boot_params_copy(copy, sizeof copy, none);
}

TEST(ushkey_past_the_loader_copy_is_refused_not_lost)
{
    /* 600 bytes, the key last: today's copy would end before it. */
    char loader[700] = "udpshell=9000";
    for (int i = 0; strlen(loader) < 600 - 72; i++)
        snprintf(loader + strlen(loader), sizeof loader - strlen(loader), " pad%d=%s", i,
                 "pppppppppppppppppppppppppppppppppppppppppppppppppp");
    strcat(loader, " ushkey=" HEX);
    klog[0] = 0;
    boot_params_copy(copy, sizeof copy, loader);
    CHECK(strstr(loader, HEX) == NULL);         /* the loader's text wiped at once */
    CHECK(strstr(loader, "ushkey=" XS) != NULL);
    CHECK(strstr(copy, "ushkey") == NULL);      /* not in the copy */
    CHECK(strlen(copy) <= 511);
    size_t n = strlen(copy);                    /* whole words: a prefix cut at a space */
    CHECK(n > 400 && strncmp(copy, loader, n) == 0);
    CHECK(copy[n - 1] == ' ' || loader[n] == ' ');
    const struct cmdline *cl = boot_params_parse(copy);
    uint8_t key[32];
    CHECK_EQ(boot_param_ushkey(key), -1);
    CHECK(strstr(klog, "boot: ushkey= was not read") != NULL);
    CHECK(strstr(klog, "will not start") != NULL);
    CHECK(strstr(klog, "boot: the command line is ") != NULL);
    CHECK(strstr(klog, "0a0b0c") == NULL);
    CHECK_STR(cmdline_get(cl, "udpshell"), "9000");   /* the rest still read */
    loader_reset();
}

TEST(ushkey_in_the_copy_and_another_past_it_is_refused)
{
    /* The last key given is the one meant: an earlier one read while a
     * later one was lost must not be used either. */
    char loader[800] = "ushkey=" HEX " udpshell=9000";
    while (strlen(loader) < 600)
        strcat(loader, " pad=pppppppppppppppppppppppppppppppppppppppppppp");
    strcat(loader, " ushkey=ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff");
    klog[0] = 0;
    boot_params_copy(copy, sizeof copy, loader);
    CHECK(strstr(loader, "ffffffff") == NULL);
    CHECK(strstr(loader, HEX) == NULL);
    boot_params_parse(copy);
    CHECK(strstr(copy, HEX) == NULL);           /* the copy's key wiped too */
    uint8_t key[32];
    CHECK_EQ(boot_param_ushkey(key), -1);
    CHECK(strstr(klog, "boot: ushkey= was not read") != NULL);
    loader_reset();
}

TEST(ushkey_in_a_short_loader_line_works_and_is_wiped_twice)
{
    char loader[] = "udpshell=9000 ushkey=" HEX;
    klog[0] = 0;
    boot_params_copy(copy, sizeof copy, loader);
    CHECK_STR(loader, "udpshell=9000 ushkey=" XS);
    boot_params_parse(copy);
    CHECK_STR(copy, "udpshell=9000 ushkey=" XS);
    uint8_t key[32];
    CHECK_EQ(boot_param_ushkey(key), 1);
    CHECK_EQ(key[31], 0x1f);
    CHECK_EQ(klog[0], 0);
    loader_reset();
}

TEST(ushkey_twice_second_dropped_whole_line_is_refused)
{
    /* arm64's path (the whole line parsed): a first key read, a second
     * dropped past the 32 words, is refused rather than the first used. */
    char text[1024] = "ushkey=" HEX;
    for (int i = 1; i < CMDLINE_MAX_PARAMS; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), " w%d=1", i);
    strcat(text, " ushkey=" HEX);
    klog[0] = 0;
    boot_params_parse(text);
    uint8_t key[32];
    CHECK_EQ(boot_param_ushkey(key), -1);
    CHECK(strstr(klog, "ushkey= was not read") != NULL);
    CHECK(strstr(text, HEX) == NULL);
}

TEST(bare_ushkey_word_does_not_make_up_for_a_lost_key)
{
    /* Found by tests/fuzz/fuzz_bootparams.c: a bare "ushkey" in the copy
     * was counted against the key= word lost past it, and an earlier key
     * was then used. */
    char loader[800] = "ushkey ushkey=" HEX " udpshell=9000";
    while (strlen(loader) < 600)
        strcat(loader, " pad=pppppppppppppppppppppppppppppppppppppppppppp");
    strcat(loader, " ushkey=ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff");
    klog[0] = 0;
    boot_params_copy(copy, sizeof copy, loader);
    boot_params_parse(copy);
    uint8_t key[32];
    CHECK_EQ(boot_param_ushkey(key), -1);
    CHECK(strstr(klog, "boot: ushkey= was not read") != NULL);
    loader_reset();
}

/* heapprof=R|off: the rate in bytes, off, or the default with a message
 * naming the allowed range. */
TEST(ushid_taken_when_valid)
{
    char text[] = "udpshell=9000 ushkey=" HEX " ushid=node-7.a_b";
    klog[0] = 0;
    boot_params_parse(text);
    char id[USHP_ID_MAX + 1];
    CHECK_EQ(boot_param_ushid(id), 1);
    CHECK_STR(id, "node-7.a_b");
    CHECK_EQ(klog[0], 0);                    /* a known parameter */
    char none[] = "udpshell=9000";
    boot_params_parse(none);
    CHECK_EQ(boot_param_ushid(id), 0);
}

/* A bad id: refused, with the allowed form in the message. */
TEST(ushid_bad_value_refused_naming_the_rule)
{
    const char *bad[] = { "ushid=", "ushid=a/b", "ushid=ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" };
    for (int i = 0; i < 3; i++) {
        char text[200], id[USHP_ID_MAX + 1];
        snprintf(text, sizeof text, "udpshell=9000 %s", bad[i]);
        klog[0] = 0;
        boot_params_parse(text);
        CHECK_EQ(boot_param_ushid(id), -1);
        CHECK(strstr(klog, "boot: ushid=") != NULL);
        CHECK(strstr(klog, USHP_ID_RULE) != NULL);
        CHECK(strstr(klog, "the UDP shell will not start") != NULL);
    }
    CHECK(strstr(klog, "...' (36 characters)") != NULL);   /* the long one, cut */
}

TEST(heapprof_param)
{
    char a[] = "heapprof=4096";
    boot_params_parse(a);
    boot_param_heapprof();
    CHECK_EQ(heapprof_rate, 4096);
    char b[] = "heapprof=off";
    boot_params_parse(b);
    boot_param_heapprof();
    CHECK_EQ(heapprof_rate, 0);
    char c[] = "smp=2";
    boot_params_parse(c);
    boot_param_heapprof();
    CHECK_EQ(heapprof_rate, HEAPPROF_RATE_DEF);
    char d[] = "heapprof=0";
    klog[0] = 0;
    boot_params_parse(d);
    boot_param_heapprof();
    CHECK_EQ(heapprof_rate, HEAPPROF_RATE_DEF);
    CHECK(strstr(klog, "heapprof='0'") && strstr(klog, "1-1073741824"));
    char e[] = "heapprof=2000000000";
    klog[0] = 0;
    boot_params_parse(e);
    boot_param_heapprof();
    CHECK_EQ(heapprof_rate, HEAPPROF_RATE_DEF);
    CHECK(strstr(klog, "heapprof='2000000000'") != NULL);
}
