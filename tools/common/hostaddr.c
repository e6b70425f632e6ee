/* tools/common/hostaddr.c: HOST[:PORT] to a sockaddr_in
 * (tools/common/hostaddr.h).
 * Shared by the host tools: prefix hostaddr_. */
#define _GNU_SOURCE
#include "tools/common/hostaddr.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

long hostaddr_port(const char *s)
{
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9')          /* strtol would take "+8" or " 8" */
        return -1;
    long v = strtol(s, &end, 10);
    if (*end || errno || v < 1 || v > 65535)
        return -1;
    return v;
}

/* Splits arg at its last ':' into host and port text; host is cut to cap. */
static const char *split(const char *arg, char *host, size_t cap)
{
    const char *colon = strrchr(arg, ':');
    size_t n = colon ? (size_t)(colon - arg) : strlen(arg);
    if (n >= cap)
        n = cap - 1;
    memcpy(host, arg, n);
    host[n] = 0;
    return colon ? colon + 1 : NULL;
}

int hostaddr_parse(const char *arg, int default_port, struct sockaddr_in *out,
                   char *err, size_t errcap)
{
    char host[256];
    if (strlen(arg) >= sizeof host) {
        snprintf(err, errcap, "host '%.40s...' is too long", arg);
        return -1;
    }
    const char *ptext = split(arg, host, sizeof host);
    long port = default_port;
    if (ptext && (port = hostaddr_port(ptext)) < 0) {
        snprintf(err, errcap, "'%s': port '%s' out of range (1-65535)", arg, ptext);
        return -1;
    }
    if (!host[0]) {
        snprintf(err, errcap, "'%s': no host before the port", arg);
        return -1;
    }
    memset(out, 0, sizeof *out);
    out->sin_family = AF_INET;
    out->sin_port = htons((uint16_t)port);
    /* A dotted address needs no resolver (and no DNS round trip). */
    if (inet_pton(AF_INET, host, &out->sin_addr) == 1)
        return 0;
    struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_DGRAM };
    struct addrinfo *res = NULL;
    int rc = getaddrinfo(host, NULL, &hints, &res);
    if (rc != 0 || !res) {
        snprintf(err, errcap, "cannot resolve '%s' to an IPv4 address: %s", host,
                 rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
        if (res)
            freeaddrinfo(res);
        return -1;
    }
    out->sin_addr = ((struct sockaddr_in *)res->ai_addr)->sin_addr;
    freeaddrinfo(res);
    return 0;
}

void hostaddr_name(const char *arg, int default_port, char *out, size_t cap)
{
    char host[256];
    const char *ptext = split(arg, host, sizeof host);
    if (ptext)
        snprintf(out, cap, "%s:%ld", host, hostaddr_port(ptext));
    else
        snprintf(out, cap, "%s:%d", host, default_port);
}
