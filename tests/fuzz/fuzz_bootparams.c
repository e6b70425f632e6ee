// LINK: kernel/bootparams.c lib/parse.c lib/sha256.c uapi/udpshell.c uapi/udpshell_auth.c mm/heapprof.c tests/unit/fake_heapprof.c
/* tests/fuzz/fuzz_bootparams.c: the kernel command line as x86 takes it
 * (kernel/bootparams.c): the loader's text copied into 512 bytes
 * (boot_params_copy), then parsed (boot_params_parse), with ushkey=.
 *
 * Invariants: the copy is a prefix of the loader's text, at most 511
 * bytes, cut only between words; no ushkey= value survives in the
 * loader's text or the copy (every byte 'x'); a key is accepted only if
 * the line's last ushkey= word lies wholly inside the copy, is 64 hex
 * digits and was parsed, never when some ushkey= word was lost; and the
 * messages are the same when every key is replaced by another of the same
 * length and validity: they never show a key's value. */
#include <stdarg.h>
#include <string.h>
#include "fuzz.h"
#include "hal/pmu.h"
#include "kernel/bootparams.h"
#include "kernel/console.h"
#include "kernel/symtab.h"

static char printed[8192];
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

static int sp(char c) { return c == ' ' || c == '\t'; }

static int is_hex64(const char *v, size_t n)
{
    if (n != 64)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!strchr("0123456789abcdefABCDEF", v[i]))
            return 0;
    return 1;
}

/* x86's path over text (a writable twin of line): copy, parse, take the
 * key. The copy's length in *n, the messages in printed; returns
 * boot_param_ushkey's answer. */
static int boot(const char *line, char *text, char *copy, size_t *n)
{
    printed[0] = '\0';
    boot_params_copy(copy, 512, text);
    *n = strlen(copy);
    size_t len = strlen(line);
    FUZZ_CHECK(*n <= 511 && strncmp(copy, line, *n) == 0);     /* a prefix, whole words */
    FUZZ_CHECK(*n == len || *n == 0 || sp(line[*n]) || sp(line[*n - 1]));
    boot_params_parse(copy);
    uint8_t key[32];
    return boot_param_ushkey(key);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    char *orig = malloc(size + 1), *text = malloc(size + 1), *canon = malloc(size + 1);
    memcpy(orig, data, size);
    orig[size] = '\0';
    memcpy(text, orig, size + 1);
    memcpy(canon, orig, size + 1);
    size_t len = strlen(orig), n, n2;
    static char copy[512], copy2[512];

    int k = boot(orig, text, copy, &n);
    static char seen[sizeof printed];
    memcpy(seen, printed, sizeof seen);

    /* Every ushkey= word of the line: wiped everywhere. canon is the line
     * with each value replaced by one of the same length and validity. */
    size_t last_at = 0, last_len = 0;
    int any = 0, lost = 0;
    for (size_t i = 0; i < len;) {
        while (i < len && sp(orig[i]))
            i++;
        size_t w = i;
        while (i < len && !sp(orig[i]))
            i++;
        if (i - w < 7 || strncmp(orig + w, "ushkey=", 7) != 0)
            continue;
        any = 1;
        last_at = w;
        last_len = i - w;
        lost |= i > n;
        int valid = is_hex64(orig + w + 7, i - w - 7);
        for (size_t j = w + 7; j < i; j++) {
            FUZZ_CHECK(text[j] == 'x');
            FUZZ_CHECK(j >= n || copy[j] == 'x');
            canon[j] = valid ? '0' : 'x';
        }
    }
    if (k == 1) {
        FUZZ_CHECK(any && !lost);
        FUZZ_CHECK(last_at + last_len <= n && is_hex64(orig + last_at + 7, last_len - 7));
    }
    if (lost)
        FUZZ_CHECK(k == -1);
    /* The messages depend on a key's length and validity, never its value. */
    char *canon_line = strdup(canon);
    int k2 = boot(canon_line, canon, copy2, &n2);
    free(canon_line);
    FUZZ_CHECK(k2 == k && n2 == n && strcmp(printed, seen) == 0);
    free(orig);
    free(text);
    free(canon);
    return 0;
}
