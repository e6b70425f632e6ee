/* tools/cmd/top.h: `sonde-prof top`, the command: options, naming
 * with libdw, the feeds (a replayed raw profile; live streams) and the
 * terminal (ncurses, or plain lines when stdout is not a terminal).
 * The model and the screen are tools/model/top.h and top_view.h.
 * Host pipeline: prefix sp_. */
#pragma once

/* argv[0] is "top". Returns the exit status: 0, or 2 for bad usage or
 * input. */
int sp_top_main(int argc, char **argv);
