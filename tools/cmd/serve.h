/* tools/cmd/serve.h: `sonde-prof serve`, the command (tools/cmd/serve.c).
 * Serve layer: prefix sv_. */
#pragma once

/* argv[0] is "serve". Returns the exit status: 0 after SIGINT or SIGTERM,
 * 1 when a kernel refused its stream, 2 for bad usage or input. */
int sv_serve_main(int argc, char **argv);
