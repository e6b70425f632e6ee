// LINK: kernel/shell.c lib/parse.c lib/lineedit.c lib/printf.c
/* tests/fuzz/fuzz_shell.c: the shell's argument handling, which every
 * serial or UDP-shell line goes through: kernel/shell.c's line splitting
 * and dispatch, and lib/parse.c's numbers, addresses and key=value words.
 *
 * Invariants, all against models written here: split_words finds the same
 * words (maximal runs of non-blanks) or refuses more than its maximum;
 * shell_run_line runs a command with exactly those words, NULL-terminated,
 * and says "too many words" or "unknown command" otherwise; parse_u64
 * accepts exactly the decimal or 0x-hex strings whose value fits, with
 * that value; a dotted quad that parses prints back the same; and
 * cmdline_parse keeps or counts as dropped every word. */
#include <ctype.h>
#include <string.h>
#include "fuzz.h"
#include "kernel/console.h"
#include "kernel/shell.h"
#include "lib/lineedit.h"
#include "lib/parse.h"

#define SHELL_MAX_ARGS 16              /* kernel/shell.c's MAX_ARGS */

/* shell_task's console, never called here. */
struct printer *console_printer(void) { abort(); }
int console_getc(void) { abort(); }

static struct { int calls, argc; char words[LINE_MAX + 1]; } ran;

static int cmd_fz(int argc, char **argv, struct printer *p)
{
    ran.calls++;
    ran.argc = argc;
    FUZZ_CHECK(argv[argc] == NULL);
    ran.words[0] = '\0';
    for (int i = 0; i < argc; i++)
        strcat(ran.words, argv[i]);
    return 0;
}
SHELL_COMMAND(fz, "fz", "fz [words]       records its words", cmd_fz);

static char said[4096];
static size_t said_len;
static void capture(struct printer *p, const char *s, size_t n)
{
    size_t k = n < sizeof said - 1 - said_len ? n : sizeof said - 1 - said_len;
    memcpy(said + said_len, s, k);
    said_len += k;
    said[said_len] = '\0';
}

static int blank(char c) { return c == ' ' || c == '\t'; }

/* Words and the line with blanks removed, as the model sees them. */
static int model_words(const char *s, char *joined, char *first)
{
    int n = 0;
    size_t j = 0;
    first[0] = '\0';
    for (size_t i = 0; s[i];) {
        while (blank(s[i]))
            i++;
        if (!s[i])
            break;
        size_t k = 0;
        while (s[i] && !blank(s[i])) {
            if (n == 0)
                first[k++] = s[i];
            joined[j++] = s[i++];
        }
        if (n == 0)
            first[k] = '\0';
        n++;
    }
    joined[j] = '\0';
    return n;
}

static void check_split(const char *line)
{
    char copy[LINE_MAX + 1], joined[LINE_MAX + 1], first[LINE_MAX + 1], got[LINE_MAX + 1];
    char *argv[SHELL_MAX_ARGS + 1];
    strcpy(copy, line);
    int want = model_words(line, joined, first);
    int n = split_words(copy, argv, SHELL_MAX_ARGS);
    if (want > SHELL_MAX_ARGS) {
        FUZZ_CHECK(n == -1);
        return;
    }
    FUZZ_CHECK(n == want);
    got[0] = '\0';
    for (int i = 0; i < n; i++) {
        FUZZ_CHECK(argv[i] >= copy && argv[i] < copy + sizeof copy);
        FUZZ_CHECK(i == 0 || argv[i] > argv[i - 1]);
        FUZZ_CHECK(argv[i][0] && !strchr(argv[i], ' ') && !strchr(argv[i], '\t'));
        strcat(got, argv[i]);
    }
    FUZZ_CHECK(strcmp(got, joined) == 0);
}

static void check_run(const char *line)
{
    char copy[LINE_MAX + 1], joined[LINE_MAX + 1], first[LINE_MAX + 1];
    struct printer pr = { capture };
    int want = model_words(line, joined, first);
    strcpy(copy, line);
    memset(&ran, 0, sizeof ran);
    said_len = 0;
    said[0] = '\0';
    shell_run_line(copy, &pr);
    if (want == 0) {
        FUZZ_CHECK(ran.calls == 0 && said_len == 0);
    } else if (want > SHELL_MAX_ARGS) {
        FUZZ_CHECK(ran.calls == 0 && strncmp(said, "too many words", 14) == 0);
    } else if (strcmp(first, "fz") == 0) {
        FUZZ_CHECK(ran.calls == 1 && ran.argc == want && strcmp(ran.words, joined) == 0);
    } else if (strcmp(first, "help") == 0) {
        FUZZ_CHECK(ran.calls == 0 && strstr(said, "fz [words]") != NULL);
    } else {
        FUZZ_CHECK(ran.calls == 0 && strncmp(said, "unknown command '", 17) == 0);
    }
}

static void check_numbers(const char *s)
{
    uint64_t v = 0, mv = 0;
    bool ok = parse_u64(s, &v);
    unsigned base = 10;
    const char *p = s;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p += 2;
    }
    bool mok = *p != '\0';
    for (; mok && *p; p++) {
        int dv = isdigit((unsigned char)*p) ? *p - '0'
               : base == 16 && isxdigit((unsigned char)*p) ? tolower((unsigned char)*p) - 'a' + 10
               : -1;
        mok = dv >= 0 && !__builtin_mul_overflow(mv, base, &mv) &&
              !__builtin_add_overflow(mv, (uint64_t)dv, &mv);
    }
    FUZZ_CHECK(ok == mok && (!ok || v == mv));

    uint32_t ip;
    if (parse_ipv4(s, &ip)) {
        char back[16];
        snprintf(back, sizeof back, "%u.%u.%u.%u", ip >> 24, ip >> 16 & 255, ip >> 8 & 255,
                 ip & 255);
        FUZZ_CHECK(strcmp(back, s) == 0);
    }
}

static void check_cmdline(const char *s)
{
    static struct cmdline cl;
    char joined[4096], first[4096];
    cmdline_parse(&cl, s);
    FUZZ_CHECK(cl.n >= 0 && cl.n <= CMDLINE_MAX_PARAMS && cl.dropped >= 0);
    FUZZ_CHECK(cl.n + cl.dropped == model_words(s, joined, first));
    for (int i = 0; i < cl.n; i++) {
        FUZZ_CHECK(cl.p[i].key >= cl.buf && cl.p[i].key < cl.buf + sizeof cl.buf);
        FUZZ_CHECK(cl.p[i].val >= cl.buf && cl.p[i].val < cl.buf + sizeof cl.buf);
        FUZZ_CHECK(cl.p[i].key[0] && !strchr(cl.p[i].key, '=') && !strchr(cl.p[i].key, ' '));
        FUZZ_CHECK(cmdline_get(&cl, cl.p[i].key) != NULL);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
    char line[4096];
    size_t k = n < sizeof line - 1 ? n : sizeof line - 1;
    memcpy(line, d, k);
    line[k] = '\0';
    check_cmdline(line);
    /* A shell line is at most LINE_MAX bytes: the line editor and the
     * UDP shell refuse longer ones before the shell sees them. */
    line[k < LINE_MAX ? k : LINE_MAX] = '\0';
    check_split(line);
    check_run(line);
    check_numbers(line);
    return 0;
}
