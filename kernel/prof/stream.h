/* kernel/profstream.h: `profile stream`, the profiler's samples sent as
 * they are taken (kernel/profstream.c, docs/profiling.md "Streaming"),
 * in uapi/profile_stream.h's datagrams. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

struct printer;

#define PROFSTREAM_MS_MAX    86400000u  /* a stream's length: 0 (until stopped) or 1..this */
#define PROFSTREAM_DRAIN_MS  50         /* every ring drained at least this often */
#define PROFSTREAM_SRC_PORT  9100       /* the datagrams' source port */

/* The `profile` subcommands that belong to the stream: stream, stop,
 * keepalive and status (argv[1]). True if argv[1] is one of them, with
 * *rc the command's exit status (its output printed to p); false for any
 * other word, which the windowed `profile` parses. Task context. */
bool profstream_command(int argc, char **argv, struct printer *p, int *rc);

/* Start a stream of pid's samples (PROFILER_ALL: every task) to ip:port
 * (host order) for ms (0: until stopped), as `profile stream` does once it
 * has parsed its arguments and found the requester. 0, or 1 with the
 * reason printed to p (busy, no memory). Task context. */
int profstream_start(uint32_t ip, uint16_t port, uint32_t ms, int pid, struct printer *p);
/* End the running stream and print its summary, as `profile stop`: 0, or
 * 1 (none running, or still ending after 3 s). Task context. */
int profstream_stop(struct printer *p);

#ifdef SONDE_HOST_TEST
/* The stream task's body, for a host test to run in place of task_spawn. */
void profstream_test_task(void *arg);
#endif
