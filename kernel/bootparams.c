/* kernel/bootparams.c: the kernel command line (key=value words) and the
 * boot-time symbol table self-test. */
#include "kernel/bootparams.h"
#include "hal/cpu.h"
#include "hal/pmu.h"
#include "kernel/console.h"
#include "kernel/panic.h"
#include "kernel/symtab.h"
#include "lib/sha256.h"
#include "mm/heapprof.h"
#include "lib/string.h"
#include "uapi/udpshell.h"

static struct cmdline cmdline;
static const char *const known_params[] = { "smp", "pmu", "ip", "mask", "gw", "udpshell",
                                            "ushkey", "ushid", "heapprof" };

/* ushkey=: decoded here, at parse time, so that every copy of the text can
 * be wiped at once; net_boot takes it later with boot_param_ushkey. */
static int ushkey_state;                /* 0 none, 1 valid, -1 given but unusable */
static uint8_t ushkey[USHP_KEY_LEN];

/* The loader's own line, where the kernel parses a copy of it (x86): what
 * the copy may have lost. */
static struct {
    size_t len;                         /* the loader's line, in bytes */
    int cut_words;                      /* words past the copy's end */
    int key_words;                      /* ushkey words in the whole line */
} loader;

void boot_params_copy(char *dst, size_t size, char *text)
{
    loader.len = strlen(text);
    loader.cut_words = cmdline_copy(dst, size, text);
    loader.key_words = cmdline_count(text, "ushkey");
    cmdline_wipe(text, "ushkey");
}

static int parsed_count(const char *key)
{
    int n = 0;
    for (int i = 0; i < cmdline.n; i++)
        n += strcmp(cmdline.p[i].key, key) == 0;
    return n;
}

/* Fails closed: if any ushkey word of the line (ushkey=... or a bare
 * ushkey) was not parsed (past the first words or bytes, here or in the
 * loader's copy), the key is refused even when another one was read, since
 * the last one given is the one meant. Starting the shell open, or with an
 * older key, would silently ignore the authentication asked for. Bare
 * words count on both sides: one parsed must not make up for a key lost. */
static void ushkey_take(char *raw)
{
    const char *s = cmdline_get(&cmdline, "ushkey");
    ushkey_state = 0;
    secure_zero(ushkey, sizeof ushkey);
    int words = cmdline_count(raw, "ushkey");
    cmdline_wipe(raw, "ushkey");
    if (loader.key_words > words)
        words = loader.key_words;
    if (parsed_count("ushkey") < words) {
        ushkey_state = -1;
        kprintf("boot: ushkey= was not read (past the first %d words or %zu bytes of the "
                "command line): the UDP shell will not start\n", CMDLINE_MAX_PARAMS,
                sizeof cmdline.buf - 1);
    } else if (s) {
        size_t n = strlen(s);
        ushkey_state = ushp_parse_key(s, n, ushkey) == 0 ? 1 : -1;
        /* Never the value itself: a near miss is most of a key. */
        if (ushkey_state < 0)
            kprintf("boot: ushkey= must be %s; got %zu characters: the UDP shell will "
                    "not start\n", USHP_KEY_RULE, n);
    }
    /* The parsed copy: this file's own buffer, split in place. */
    for (int i = 0; i < cmdline.n; i++)
        if (strcmp(cmdline.p[i].key, "ushkey") == 0)
            for (char *v = (char *)cmdline.p[i].val; *v; v++)
                *v = 'x';
}

int boot_param_ushkey(uint8_t key[USHP_KEY_LEN])
{
    int st = ushkey_state;
    if (st > 0) {
        memcpy(key, ushkey, USHP_KEY_LEN);
        secure_zero(ushkey, sizeof ushkey);     /* one taker: no copy left here */
        ushkey_state = -1;
    }
    return st;
}

int boot_param_ushid(char *id)
{
    const char *s = cmdline_get(&cmdline, "ushid");
    if (!s)
        return 0;
    size_t n = strlen(s);
    _Static_assert(USHP_ID_MAX == 31, "the message below shows at most 31 characters");
    if (ushp_check_id(s, n) < 0) {
        kprintf("boot: ushid='%.31s%s' (%zu characters) must be %s: the UDP shell will not "
                "start\n", s, n > USHP_ID_MAX ? "..." : "", n, USHP_ID_RULE);
        return -1;
    }
    memcpy(id, s, n + 1);
    return 1;
}

const struct cmdline *boot_params_parse(char *text)
{
    cmdline_parse(&cmdline, text);
    ushkey_take(text);
    for (int i = 0; i < cmdline.n; i++) {
        bool known = false;
        for (unsigned k = 0; k < sizeof known_params / sizeof known_params[0]; k++)
            known |= strcmp(cmdline.p[i].key, known_params[k]) == 0;
        if (!known)
            kprintf("boot: unknown parameter '%s' ignored\n", cmdline.p[i].key);
    }
    if (loader.cut_words)
        kprintf("boot: the command line is %zu bytes, the kernel keeps %zu: its last %d words "
                "ignored\n", loader.len, sizeof cmdline.buf - 1, loader.cut_words);
    if (cmdline.dropped)
        kprintf("boot: %d words ignored (no key, past the first %d, or past %zu bytes)\n",
                cmdline.dropped, CMDLINE_MAX_PARAMS, sizeof cmdline.buf);
    return &cmdline;
}

unsigned boot_param_smp(void)
{
    const char *s = cmdline_get(&cmdline, "smp");
    uint64_t n;
    if (!s)
        return MAX_CPUS;
    if (!parse_range(s, 1, MAX_CPUS, &n)) {
        kprintf("boot: smp='%s' out of range (1-%d): using all cpus\n", s, MAX_CPUS);
        return MAX_CPUS;
    }
    return (unsigned)n;
}

void boot_param_pmu(void)
{
    const char *s = cmdline_get(&cmdline, "pmu");
    if (!s || strcmp(s, "auto") == 0)
        pmu_set_mode(PMU_MODE_AUTO);
    else if (strcmp(s, "off") == 0)
        pmu_set_mode(PMU_MODE_OFF);
    else if (strcmp(s, "assume") == 0)
        pmu_set_mode(PMU_MODE_ASSUME);
    else
        kprintf("boot: pmu='%s' is not one of auto, off, assume: using auto\n", s);
}

void boot_param_heapprof(void)
{
    const char *s = cmdline_get(&cmdline, "heapprof");
    uint64_t r;
    if (!s) {
        heapprof_set_rate(HEAPPROF_RATE_DEF);
    } else if (strcmp(s, "off") == 0) {
        heapprof_set_rate(0);
    } else if (parse_range(s, HEAPPROF_RATE_MIN, HEAPPROF_RATE_MAX, &r)) {
        heapprof_set_rate((uint32_t)r);
    } else {
        kprintf("boot: heapprof='%s' is not off or a rate in bytes (%u-%u): using %u\n",
                s, HEAPPROF_RATE_MIN, HEAPPROF_RATE_MAX, HEAPPROF_RATE_DEF);
        heapprof_set_rate(HEAPPROF_RATE_DEF);
    }
}

void symtab_selftest(uintptr_t fn, const char *name)
{
    struct sym_hit h;
    if (!symtab_lookup(fn + 1, &h) || strcmp(h.name, name) != 0 || h.offset != 1 ||
        symtab_find(name) != fn)
        panic("symtab self-test: %s+0x1 does not resolve to itself", name);
}
