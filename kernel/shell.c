/* kernel/shell.c: the command shell. The serial shell is a task reading
 * the console; the UDP shell (net/udpshell.c) feeds shell_run_line too. */
#include "kernel/shell.h"
#include "kernel/console.h"
#include "kernel/task.h"
#include "lib/lineedit.h"
#include "lib/parse.h"
#include "lib/string.h"

#define MAX_ARGS 16

extern const struct shell_cmd __start_shell_cmds[], __stop_shell_cmds[];

static const struct shell_cmd *lookup(const char *name)
{
    for (const struct shell_cmd *c = __start_shell_cmds; c < __stop_shell_cmds; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return 0;
}

void shell_run_line(char *line, struct printer *p)
{
    char *argv[MAX_ARGS + 1];
    int argc = split_words(line, argv, MAX_ARGS);
    if (argc < 0) {
        pr_printf(p, "too many words (at most %d)\n", MAX_ARGS);
        return;
    }
    if (argc == 0)
        return;
    argv[argc] = 0;
    const struct shell_cmd *c = lookup(argv[0]);
    if (!c) {
        pr_printf(p, "unknown command '%s' (try help)\n", argv[0]);
        return;
    }
    c->fn(argc, argv, p);
}

static int cmd_help(int argc, char **argv, struct printer *p)
{
    /* Sorted by name without a copy: repeatedly print the next larger. */
    const char *last = "";
    for (;;) {
        const struct shell_cmd *best = 0;
        for (const struct shell_cmd *c = __start_shell_cmds; c < __stop_shell_cmds; c++)
            if (strcmp(c->name, last) > 0 && (!best || strcmp(c->name, best->name) < 0))
                best = c;
        if (!best)
            return 0;
        pr_printf(p, "  %s\n", best->usage);
        last = best->name;
    }
}
SHELL_COMMAND(help, "help", "help             this list", cmd_help);

void shell_task(void *arg)
{
    struct printer *p = console_printer();
    static struct lineedit le;
    le_init(&le);
    pr_puts(p, "> ");
    for (;;) {
        char c = (char)console_getc();
        switch (le_feed(&le, c, p)) {
        case LE_MORE:
            continue;
        case LE_LINE:
            shell_run_line(le.buf, p);
            break;
        case LE_CANCEL:
            break;
        case LE_TOOLONG:
            pr_printf(p, "line too long (at most %d bytes): ignored\n", LINE_MAX);
            break;
        }
        pr_puts(p, "> ");
    }
}
