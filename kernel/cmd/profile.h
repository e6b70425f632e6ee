/* kernel/cmd/profile.h: what the profile commands (kernel/cmd/profile.c,
 * kernel/cmd/profile_stream.c, kernel/cmd/profile_heap.c) share with each
 * other and with the other commands: the UDP binding of a stream's sink,
 * and a stream started and stopped with the commands' words. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "kernel/prof/prof.h"
#include "kernel/prof/stream.h"

#define CMD_STREAM_SRC_PORT  9100       /* a stream's datagrams' source port */

/* A sink that sends each datagram from CMD_STREAM_SRC_PORT to ip:port
 * (host order) over UDP. */
void cmd_profile_udp_sink(struct prof_sink *sk, uint32_t ip, uint16_t port);

#ifdef SONDE_HOST_TEST
/* Forget the shell's key as the sinks learnt it: the next sink asks again. */
void cmd_profile_test_reset(void);
#endif

struct printer;
struct prof_err;
struct prof_window_spec;
/* The core's refusal e (kernel/prof/prof.h) in words, as cmd's
 * (kernel/cmd/profile_say.c): "cmd: window 0 out of range (1-2000 ms)". */
void cmd_profile_say(const char *cmd, const struct prof_err *e, struct printer *p);
/* Run the window ws, its report to p or its refusal said: the command's
 * exit status. */
int cmd_profile_window(const struct prof_window_spec *ws, struct printer *p);
/* A command's own check refused value for why: said as the core's
 * refusal would be ("profile: ..."), and 1, the exit status. */
int cmd_profile_refuse(enum prof_why_not why, uint64_t value, struct printer *p);
/* `profile ... stream <port> [ms|0] [pid|all]` for the kinds of what
 * (PROF_STREAM_*, kernel/prof/session.h), argv[1] being "stream": the
 * one parser of a stream's arguments, for every kind's words before it.
 * The command's exit status. */
int cmd_profile_stream_start(int argc, char **argv, unsigned what, struct printer *p);
/* stream, stop, keepalive, status (argv[1], kernel/cmd/profile_stream.c):
 * true with *rc the command's exit status; false for any other word. */
bool cmd_profile_stream(int argc, char **argv, struct printer *p, int *rc);
/* A stream of what into sink for ms (0: until stopped), answered to p as
 * `profile stream` answers (its control line, uapi/stream_ctl.h, then
 * the text): the exit status. `bench stream`'s, whose sink is its own. */
int cmd_profile_stream_sink(const struct prof_sink *sink, uint32_t ms, int pid, unsigned what,
                            struct printer *p);
/* `profile stop`, answered to p: the exit status. */
int cmd_profile_stream_stop(struct printer *p);
/* `profile heap ...` and `profile allocs ...` (kernel/cmd/profile_heap.c):
 * true with *rc the command's exit status when argv[1] is heap or
 * allocs; false for any other word. */
bool cmd_profile_heap(int argc, char **argv, struct printer *p, int *rc);
