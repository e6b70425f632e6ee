/* tools/common/hostaddr.h: "HOST" or "HOST:PORT" to an IPv4 socket address, for
 * every host tool (sonde-sh, netload, sonde-prof).
 *
 * HOST is a dotted IPv4 address or a name, resolved with getaddrinfo
 * (AF_INET only: the kernel speaks IPv4). PORT is 1-65535. Errors are
 * usage errors (exit 2 in every tool) and the message names the argument
 * and what is allowed.
 *
 * Shared by the host tools: prefix hostaddr_. */
#pragma once
#include <netinet/in.h>
#include <stddef.h>

#define HOSTADDR_ERR_MAX 256
#define HOSTADDR_NAME_MAX 280      /* "HOST:PORT" as given, for messages */

/* Parses arg; with no ":PORT", the port is default_port (1-65535).
 * Returns 0 with *out filled, or -1 with err saying what was wrong. */
int hostaddr_parse(const char *arg, int default_port, struct sockaddr_in *out,
                   char *err, size_t errcap);

/* A port number 1-65535 from text; -1 if it is not one. */
long hostaddr_port(const char *s);

/* "HOST:PORT" as the user wrote HOST, for messages and labels. */
void hostaddr_name(const char *arg, int default_port, char *out, size_t cap);
