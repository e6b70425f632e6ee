/* tools/cmd/cmd.h: sonde-prof's subcommands, one file each under
 * tools/cmd/ (tools/sonde-prof.c only picks one). Each takes argv[0] as
 * its own name and returns the exit status: 0 ok, 1 the remote said no,
 * 2 bad usage, input or protocol error.
 * Host pipeline: prefix sp_ (serve's: sv_). */
#pragma once

/* `record`: kernels profiled live (tools/cmd/record.c). */
int sp_record_main(int argc, char **argv);
/* `report`: raw profiles from files (tools/cmd/report.c). */
int sp_report_main(int argc, char **argv);
/* `top`: the command: options, naming with libdw, the feeds (a replayed
 * raw profile; live streams) and the terminal (ncurses, or plain lines
 * when stdout is not a terminal); the model and the screen are
 * tools/model/top.h and tools/output/top_view.h (tools/cmd/top.c). */
int sp_top_main(int argc, char **argv);
/* `diff BASE NEW -o OUT` (tools/cmd/diff.c). */
int sp_diff_main(int argc, char **argv);
/* `query --store S --from T ... -o OUT`: a range of serve's store
 * (tools/cmd/query.c). */
int sp_query_main(int argc, char **argv);
/* `serve`: 0 after SIGINT or SIGTERM, 1 when a kernel refused its
 * stream (tools/cmd/serve.c). */
int sv_serve_main(int argc, char **argv);
