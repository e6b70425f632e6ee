/* kernel/bootparams.c: the kernel command line (key=value words) and the
 * boot-time symbol table self-test. */
#include "kernel/bootparams.h"
#include "hal/cpu.h"
#include "hal/pmu.h"
#include "kernel/console.h"
#include "kernel/panic.h"
#include "kernel/symtab.h"
#include "lib/sha256.h"
#include "lib/string.h"
#include "uapi/udpshell.h"

static struct cmdline cmdline;
static const char *const known_params[] = { "smp", "pmu", "ip", "mask", "gw", "udpshell",
                                            "ushkey" };

/* ushkey=: decoded here, at parse time, so that every copy of the text can
 * be wiped at once; net_boot takes it later with boot_param_ushkey. */
static int ushkey_state;                /* 0 none, 1 valid, -1 given but unusable */
static uint8_t ushkey[USHP_KEY_LEN];

static void ushkey_take(char *raw)
{
    const char *s = cmdline_get(&cmdline, "ushkey");
    ushkey_state = 0;
    secure_zero(ushkey, sizeof ushkey);
    int words = cmdline_wipe(raw, "ushkey");
    if (s) {
        size_t n = strlen(s);
        ushkey_state = ushp_parse_key(s, n, ushkey) == 0 ? 1 : -1;
        /* Never the value itself: a near miss is most of a key. */
        if (ushkey_state < 0)
            kprintf("boot: ushkey= must be %s; got %zu characters: the UDP shell will "
                    "not start\n", USHP_KEY_RULE, n);
    } else if (words) {
        /* Dropped (past the first words or bytes): starting the shell open
         * would silently ignore the authentication asked for. */
        ushkey_state = -1;
        kprintf("boot: ushkey= was not read (past the first %d words or %zu bytes): "
                "the UDP shell will not start\n", CMDLINE_MAX_PARAMS, sizeof cmdline.buf);
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

void symtab_selftest(uintptr_t fn, const char *name)
{
    struct sym_hit h;
    if (!symtab_lookup(fn + 1, &h) || strcmp(h.name, name) != 0 || h.offset != 1 ||
        symtab_find(name) != fn)
        panic("symtab self-test: %s+0x1 does not resolve to itself", name);
}
