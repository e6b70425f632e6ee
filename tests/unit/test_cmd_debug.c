// LINK: kernel/cmd/debug.c kernel/symtab.c lib/printf.c lib/parse.c
/* tests/unit/test_cmd_debug.c: `sym` (kernel/cmd/debug.c) over a small
 * hand-built table shaped like symgen's output: an address named, one
 * outside every symbol, bad words refused with what was wrong. `bt` and
 * `console` are the system tests' (they need a live kernel's tasks and
 * UART); their parts are stubbed here only to link. */
#include "test.h"
#include <stdlib.h>
#include "kernel/backtrace.h"
#include "kernel/console_rx.h"
#include "kernel/shell.h"
#include "kernel/symtab.h"
#include "kernel/task.h"
#include "mm/heap.h"

static const uint64_t t_addrs[] = { 0x1000, 0x1080, 0x10a0, 0x1100 };
static const uint32_t t_sizes[] = { 0x40, 0x10, 0, 0 };
static const uint32_t t_offs[] = { 0, 6, 11, 17 };
static const char t_names[] = "kmain\0idle\0entry\0tail";
static const struct symtab_image t_image = {
    4, t_addrs, t_sizes, t_offs, t_names,
};

/* What bt and console call, never reached by these tests. */
int bt_task(int pid, uintptr_t *out, unsigned max, bool *first_is_pc) { abort(); }
void bt_print(struct printer *p, const uintptr_t *frames, unsigned n, bool first_is_pc) { abort(); }
void task_for_each_id(void (*fn)(int pid, const char *name, void *arg), void *arg) { abort(); }
bool task_exists(int pid) { abort(); }
int task_current_pid(void) { abort(); }
void console_rx_stats(struct console_rx_stats *st) { abort(); }
void *kmalloc(size_t n) { abort(); }
void kfree(void *p) { abort(); }

extern const struct shell_cmd __start_shell_cmds[], __stop_shell_cmds[];

static const struct shell_cmd *find_cmd(const char *name)
{
    for (const struct shell_cmd *c = __start_shell_cmds; c < __stop_shell_cmds; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return NULL;
}

/* Run `sym` with one argument list; the output lands in out. */
static int run_sym(char *out, size_t cap, int argc, const char *a1, const char *a2)
{
    const struct shell_cmd *c = find_cmd("sym");
    CHECK(c != NULL);
    if (!c)
        return -99;
    char w0[] = "sym", w1[64] = "", w2[64] = "";
    if (a1)
        snprintf(w1, sizeof w1, "%s", a1);
    if (a2)
        snprintf(w2, sizeof w2, "%s", a2);
    char *argv[] = { w0, w1, w2, NULL };
    struct buf_printer bp;
    buf_printer_init(&bp, out, cap);
    return c->fn(argc, argv, &bp.pr);
}

TEST(symtab_sym_command)
{
    char out[256];
    symtab_active = &t_image;
    CHECK_EQ(run_sym(out, sizeof out, 2, "0x101a", NULL), 0);
    CHECK_STR(out, "0x000000000000101a kmain+0x1a\n");
    CHECK_EQ(run_sym(out, sizeof out, 2, "4224", NULL), 0);   /* 0x1080 */
    CHECK_STR(out, "0x0000000000001080 idle+0x0\n");
    CHECK_EQ(run_sym(out, sizeof out, 2, "0x1040", NULL), 0);
    CHECK_STR(out, "0x0000000000001040: no symbol\n");

    CHECK(run_sym(out, sizeof out, 2, "0xzz", NULL) != 0);
    CHECK(strstr(out, "'0xzz'") != NULL);
    CHECK(run_sym(out, sizeof out, 1, NULL, NULL) != 0);
    CHECK(strstr(out, "usage: sym <addr>") != NULL);
    CHECK(run_sym(out, sizeof out, 3, "0x1000", "0x2000") != 0);
    CHECK(strstr(out, "usage: sym <addr>") != NULL);
    symtab_active = NULL;
}

