/* tools/cmd/serve_opts.h: `sonde-prof serve`'s command line (its usage,
 * the options parsed and checked, the listening address), apart from the
 * command itself (tools/cmd/serve.c).
 * Serve layer: prefix sv_. */
#pragma once
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include "tools/serve/hist.h"
#include "tools/serve/http.h"

#define SERVE_DEFAULT_LISTEN "127.0.0.1:8080"
#define SERVE_RETRY_DEFAULT_MS 10000 /* a kernel whose stream did not start: asked again */

struct serve_opts {
    const char *listen;
    bool public_;
    const char *allow[SV_HTTP_ALLOW_MAX];   /* --allow-host */
    unsigned nallow;
    const char *elfs[SV_HIST_KERNELS], *hosts[SV_HIST_KERNELS], *ids[SV_HIST_KERNELS];
    unsigned nelfs, nhosts, nids;
    const char *keyfile;
    unsigned max_stacks;
    unsigned sample, period_ms;     /* --sample K --period P: K kernels at a time */
    unsigned retry_ms;              /* --retry P */
    const char *what;               /* --kind: the stream's kind, as the
                                       collector's `what` ("" CPU samples) */
    const char *store;              /* --store */
    bool store_given;               /* named: it may be shared (persist.h) */
    uint64_t retain_ms;             /* --retain */
};

/* argv into o: 0, or 2 (a usage error, said on stderr); --help exits 0. */
int sv_serve_parse_args(int argc, char **argv, struct serve_opts *o);
/* o->listen as an address, refused unless loopback or --public: 0 or -1. */
int sv_serve_parse_listen(const struct serve_opts *o, struct sockaddr_in *out);
