/* tools/sonde-prof.c: Sonde's profiles on the host: the subcommand named
 * first, each in a file of its own under tools/cmd/ (tools/cmd/cmd.h).
 *
 *   sonde-prof record [-d WINDOW] [-p PID] [-t SECS] [-k KEYFILE] -e ELF [-e ELF ...]
 *                     -o OUT [--per-kernel] HOST[:PORT] ...
 *   sonde-prof report -i RAW [-i RAW ...] -e ELF [-e ELF ...] -o OUT
 *                     [--kernel NAME ...] [--per-kernel]
 *   sonde-prof top | diff | serve | query ...
 *
 * Exit: 0 ok, 1 the remote said no, 2 usage, input or protocol error. */
#include <stdio.h>
#include <string.h>

#include "tools/cmd/cmd.h"
#include "tools/cmd/report.h"

static const char *prog = SP_CMD_PROG;

int main(int argc, char **argv)
{
    if (argc < 2) {
        sp_cmd_usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        sp_cmd_usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[1], "report") == 0)
        return sp_report_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "record") == 0)
        return sp_record_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "top") == 0)
        return sp_top_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "diff") == 0)
        return sp_diff_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "serve") == 0)
        return sv_serve_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "query") == 0)
        return sp_query_main(argc - 1, argv + 1);
    fprintf(stderr, "%s: unknown command '%s' (known: record, report, top, diff, serve, "
            "query; see --help)\n",
            prog, argv[1]);
    return EXIT_USAGE;
}

