// LINK: kernel/bootparams.c lib/parse.c lib/sha256.c uapi/udpshell.c uapi/udpshell_auth.c
/* tests/unit/test_bootparams.c: ushkey= on the kernel command line: the
 * key decoded, every copy of its digits overwritten, a bad or dropped value
 * refused with the rule named, and the value never printed. */
#include "test.h"
#include <stdarg.h>
#include "hal/pmu.h"
#include "kernel/bootparams.h"
#include "kernel/console.h"
#include "kernel/symtab.h"

static char printed[4096];
void kprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t n = strlen(printed);
    vsnprintf(printed + n, sizeof printed - n, fmt, ap);
    va_end(ap);
}
void pmu_set_mode(enum pmu_mode mode) {}
bool symtab_lookup(uintptr_t addr, struct sym_hit *hit) { return false; }
uintptr_t symtab_find(const char *name) { return 0; }

#define HEX "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
#define XS  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"

TEST(ushkey_decoded_and_wiped_everywhere)
{
    char text[] = "udpshell=9000 ushkey=" HEX " smp=2";
    printed[0] = 0;
    const struct cmdline *cl = boot_params_parse(text);
    CHECK_STR(text, "udpshell=9000 ushkey=" XS " smp=2");
    CHECK_STR(cmdline_get(cl, "ushkey"), XS);
    CHECK_STR(cmdline_get(cl, "smp"), "2");
    uint8_t key[32];
    CHECK_EQ(boot_param_ushkey(key), 1);
    CHECK_EQ(key[0], 0);
    CHECK_EQ(key[31], 0x1f);
    CHECK_EQ(boot_param_ushkey(key), -1);       /* one taker */
    CHECK_EQ(printed[0], 0);                    /* known, valid: nothing to say */
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
        printed[0] = 0;
        boot_params_parse(text);
        uint8_t key[32];
        CHECK_EQ(boot_param_ushkey(key), -1);
        CHECK(strstr(printed, "ushkey= must be 64 hex digits") != NULL);
        CHECK(strstr(printed, "will not start") != NULL);
        CHECK(strstr(printed, "0123456789abcdef") == NULL);
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
    printed[0] = 0;
    boot_params_parse(text);
    uint8_t key[32];
    CHECK_EQ(boot_param_ushkey(key), -1);
    CHECK(strstr(printed, "ushkey= was not read") != NULL);
    CHECK(strstr(text, HEX) == NULL);
    CHECK(strstr(printed, "0a0b0c") == NULL);
}
