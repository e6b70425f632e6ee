/* kernel/cmd/profile.h: what the profile commands (kernel/cmd/profile.c)
 * share with the other commands: the UDP binding of a stream's sink. */
#pragma once
#include <stdbool.h>
#include <stdint.h>
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
/* `profile ... stream <port> [ms|0] [pid|all]` for the kinds of what
 * (PROF_STREAM_*, kernel/prof/session.h), argv[1] being "stream": the
 * one parser of a stream's arguments, for every kind's words before it.
 * The command's exit status. */
int cmd_profile_stream_start(int argc, char **argv, unsigned what, struct printer *p);
/* `profile heap ...` and `profile allocs ...` (kernel/cmd/profile_heap.c):
 * true with *rc the command's exit status when argv[1] is heap or
 * allocs; false for any other word. */
bool cmd_profile_heap(int argc, char **argv, struct printer *p, int *rc);
