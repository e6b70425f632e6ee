/* kernel/shell.h: shell commands. Each file registers its own with
 * SHELL_COMMAND; the shell finds them in the shell_cmds section. A handler
 * writes only through the printer it is given (serial, UDP reply, test). */
#pragma once
#include "lib/printf.h"

typedef int (*shell_fn)(int argc, char **argv, struct printer *p);

struct shell_cmd {
    const char *name;
    const char *usage;      /* one line: "profile [ms] [pid|all] [chains]" */
    shell_fn fn;            /* argv[0] is the command name; returns 0 or error */
};

#define SHELL_COMMAND(ident, nm, us, handler)                               \
    __attribute__((used, section("shell_cmds"), aligned(8)))                \
    static const struct shell_cmd shell_cmd_##ident = { nm, us, handler }

/* Run one command line through the table (used by serial and UDP shells). */
void shell_run_line(char *line, struct printer *p);

/* The serial shell: the boot CPU spawns it as the task "shell". */
void shell_task(void *arg);
