/* tools/cmd/serve_opts.c: `sonde-prof serve`'s command line
 * (tools/cmd/serve_opts.h).
 * Serve layer: prefix sv_. */
#define _GNU_SOURCE
#include "tools/cmd/serve_opts.h"
#include <arpa/inet.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/common/hostaddr.h"
#include "tools/common/toolio.h"
#include "tools/store/store.h"

enum { EXIT_OK = 0, EXIT_USAGE = 2 };

#define MAX_KERNELS SV_HIST_KERNELS

static const char *prog = "sonde-prof serve";

static void usage(FILE *f)
{
    fprintf(f,
        "usage: sonde-prof serve [-l ADDR:PORT] [--public [--allow-host NAME ...]]\n"
        "                        [-k KEYFILE [--id ID ...]]\n"
        "                        [--max-stacks N] [--sample K --period P] [--retry P]\n"
        "                        [--store FILE|postgresql://USER@HOST:PORT/DB] [--retain D]\n"
        "                        -e ELF [-e ELF ...] HOST[:PORT] ...\n"
        "\n"
        "A live web view of running kernels: streams every HOST's samples (as\n"
        "record -d and top do), keeps the last hour in 10-second buckets, and\n"
        "serves a page with a live flame graph, a timeline of samples per second\n"
        "per kernel, filters, a diff of two ranges and downloads (docs/sonde-prof.md).\n"
        "  -l ADDR:PORT    where to listen (default %s; port 0: any free one).\n"
        "                  An address other than loopback needs --public\n"
        "  --public        listen on a non-loopback address: anyone who reaches it\n"
        "                  reads every profile (the page has no login); one address\n"
        "                  holds %u connections at most\n"
        "  --allow-host NAME  with --public: a name the page may be reached by\n"
        "                  (the Host header; up to %u). Without it only ADDR:PORT,\n"
        "                  localhost:PORT and 127.0.0.1:PORT are answered; any other\n"
        "                  Host is a 421 (a page elsewhere cannot rebind its name here)\n"
        "  -e ELF          the kernel ELF, once for all or once per HOST in order\n"
        "  -k KEYFILE      the shells' key (ushkey=), as for record; --id ID: a\n"
        "                  kernel's ushid=, once per HOST in order (- for none)\n"
        "  --max-stacks N  distinct stacks kept at once, %u-%u (default %u):\n"
        "                  the history's memory bound\n"
        "  --sample K --period P  stream only K kernels at a time, rotating every\n"
        "                  P (\"500ms\", \"10s\"); the others have no stream at all.\n"
        "                  Each kernel's covered_ms says how long it was streamed\n"
        "  --retry P       a kernel whose stream does not start (down, busy, not\n"
        "                  answering) is shown so and asked again every P (1 s to\n"
        "                  1 h, default 10 s); with --sample, at its next turn\n"
        "  --kind K        what every kernel streams: cpu (default: `profile\n"
        "                  stream`), off (`profile off stream`: where tasks wait),\n"
        "                  wall (`profile wall stream`), allocs (`profile allocs\n"
        "                  stream`: what was allocated, in bytes), lock\n"
        "                  (`profile lock stream`: waits charged to the holder) or\n"
        "                  trace (`trace stream`: every switch, wake, interrupt and\n"
        "                  sample; each kernel's last 60 s kept, in memory only)\n"
        "  --store S       where the history is kept past serve: an SQLite file\n"
        "                  (default %s in the working directory) or a PostgreSQL\n"
        "                  database. Several serves may share one named here (SQLite:\n"
        "                  on one machine), each answering for all\n"
        "  --retain D      how long the store keeps it (1h to 3650d, default 7d);\n"
        "                  older than an hour in minutes, than a day in 10 minutes\n"
        "The first line on stdout is the page's address and the store, once it\n"
        "listens. Every time in the API is Unix ms.\n",
        SERVE_DEFAULT_LISTEN, SV_HTTP_PER_ADDR, SV_HTTP_ALLOW_MAX, SV_HIST_STACKS_MIN,
        SV_HIST_STACKS_MAX, SV_HIST_STACKS_DEFAULT, ST_DEFAULT_FILE);
}


static int bad_usage(const char *what, const char *arg)
{
    fprintf(stderr, "%s: %s%s (see --help)\n", prog, what, arg ? arg : "");
    return EXIT_USAGE;
}

/* --period, --retry: "500ms", "10s" or a number of ms, min_ms to max_s. */
static int parse_period(const char *opt, const char *arg, unsigned min_ms, unsigned max_s,
                        unsigned *ms)
{
    char *end;
    unsigned long long v = strtoull(arg, &end, 10), scale = 1;
    if (*arg >= '0' && *arg <= '9' && strcmp(end, "s") == 0)
        scale = 1000;
    else if (!(*arg >= '0' && *arg <= '9') || (*end && strcmp(end, "ms") != 0))
        v = 0;
    if (v < 1 || v > max_s * 1000ull / scale || v * scale < min_ms) {
        fprintf(stderr, "%s: %s %s out of range (%u ms to %u s: \"500ms\", "
                "\"10s\", or a number of ms)\n", prog, opt, arg, min_ms, max_s);
        return -1;
    }
    *ms = (unsigned)(v * scale);
    return 0;
}

/* --kind: which stream every kernel is asked for (one profile at a time
 * runs in a kernel). */
static int parse_kind(const char *arg, const char **what)
{
    static const char *const kinds[][2] = {
        { "cpu", "" }, { "off", "off" }, { "wall", "wall" }, { "allocs", "allocs" },
        { "lock", "lock" }, { "trace", "trace" },
    };
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(arg, kinds[i][0]) == 0) {
            *what = kinds[i][1];
            return 0;
        }
    fprintf(stderr, "%s: --kind %s: not a kind (cpu, off, wall, allocs, lock or trace)\n", prog, arg);
    return -1;
}

/* --allow-host NAME: what a Host header's name may be (RFC 1123's
 * letters, digits, '-' and '.'). */
static bool host_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n < 1 || n > 253)
        return false;
    for (const char *c = name; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
              (*c >= '0' && *c <= '9') || *c == '-' || *c == '.'))
            return false;
    return true;
}

int sv_serve_parse_args(int argc, char **argv, struct serve_opts *o)
{
    static const struct option longopts[] = {
        { "public", no_argument, NULL, 'P' },
        { "allow-host", required_argument, NULL, 'A' },
        { "id", required_argument, NULL, 'I' },
        { "max-stacks", required_argument, NULL, 'S' },
        { "sample", required_argument, NULL, 'K' },
        { "period", required_argument, NULL, 'T' },
        { "retry", required_argument, NULL, 'R' },
        { "kind", required_argument, NULL, 'W' },
        { "store", required_argument, NULL, 'D' },
        { "retain", required_argument, NULL, 'N' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c, bad = 0;
    o->listen = SERVE_DEFAULT_LISTEN;
    o->max_stacks = SV_HIST_STACKS_DEFAULT;
    o->retry_ms = SERVE_RETRY_DEFAULT_MS;
    o->store = ST_DEFAULT_FILE;
    o->retain_ms = ST_RETAIN_DEFAULT;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":l:e:k:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'l': o->listen = optarg; break;
        case 'P': o->public_ = true; break;
        case 'A':
            if (!host_name_ok(optarg))
                return bad_usage("--allow-host: want a host name or an IPv4 address (letters, "
                                 "digits, '-' and '.', 1-253 of them, no port): ", optarg);
            bad |= tool_push_arg(prog, o->allow, &o->nallow, SV_HTTP_ALLOW_MAX, optarg,
                                 "--allow-host");
            break;
        case 'e': bad |= tool_push_arg(prog, o->elfs, &o->nelfs, MAX_KERNELS, optarg, "-e"); break;
        case 'k': o->keyfile = optarg; break;
        case 'I': bad |= tool_push_arg(prog, o->ids, &o->nids, MAX_KERNELS, optarg, "--id"); break;
        case 'S': {
            long v = tool_parse_long(prog, "--max-stacks", optarg, SV_HIST_STACKS_MIN,
                                     SV_HIST_STACKS_MAX);
            if (v < 0)
                return EXIT_USAGE;
            o->max_stacks = (unsigned)v;
            break;
        }
        case 'K': {
            long v = tool_parse_long(prog, "--sample", optarg, 1, MAX_KERNELS);
            if (v < 0)
                return EXIT_USAGE;
            o->sample = (unsigned)v;
            break;
        }
        case 'T':
            if (parse_period("--period", optarg, 100, 86400, &o->period_ms))
                return EXIT_USAGE;
            break;
        case 'R':
            if (parse_period("--retry", optarg, 1000, 3600, &o->retry_ms))
                return EXIT_USAGE;
            break;
        case 'W':
            if (parse_kind(optarg, &o->what))
                return EXIT_USAGE;
            break;
        case 'D': o->store = optarg, o->store_given = true; break;
        case 'N': {
            char err[ST_ERR_MAX];
            if (st_parse_duration(optarg, &o->retain_ms, err, sizeof err)) {
                fprintf(stderr, "%s: --retain %s\n", prog, err);
                return EXIT_USAGE;
            }
            break;
        }
        case 'h': usage(stdout); exit(EXIT_OK);
        case ':': return bad_usage("missing value for ", argv[optind - 1]);
        default: return bad_usage("unknown option ", argv[optind - 1]);
        }
    }
    for (; optind < argc; optind++)
        bad |= tool_push_arg(prog, o->hosts, &o->nhosts, MAX_KERNELS, argv[optind], "kernels");
    if (bad)
        return EXIT_USAGE;
    if (!o->nhosts)
        return bad_usage("no kernel to watch: give HOST[:PORT]", NULL);
    if (!o->nelfs)
        return bad_usage("no kernel ELF: give -e ELF (e.g. build/x86_64/kernel.elf)", NULL);
    if (o->nelfs != 1 && o->nelfs != o->nhosts)
        return bad_usage("give -e once, or once per HOST in order", NULL);
    if (o->nids && !o->keyfile)
        return bad_usage("--id needs -k KEYFILE", NULL);
    if (o->nids && o->nids != o->nhosts)
        return bad_usage("give --id once per HOST in order (- for none)", NULL);
    if (!o->sample != !o->period_ms)
        return bad_usage("give --sample K and --period P together", NULL);
    if (o->nallow && !o->public_)
        return bad_usage("--allow-host needs --public (on loopback the page is reached as "
                         "localhost or 127.0.0.1)", NULL);
    return EXIT_OK;
}

/* -l ADDR:PORT: port 0-65535 (0: the system picks); a non-loopback
 * address only with --public. */
int sv_serve_parse_listen(const struct serve_opts *o, struct sockaddr_in *out)
{
    char host[HOSTADDR_NAME_MAX], err[HOSTADDR_ERR_MAX];
    const char *colon = strrchr(o->listen, ':');
    if (!colon || colon == o->listen || (size_t)(colon - o->listen) >= sizeof host) {
        fprintf(stderr, "%s: -l %s: want ADDR:PORT (e.g. %s)\n", prog, o->listen,
                SERVE_DEFAULT_LISTEN);
        return -1;
    }
    char *end;
    long port = strtol(colon + 1, &end, 10);
    if (colon[1] < '0' || colon[1] > '9' || *end || port < 0 || port > 65535) {
        fprintf(stderr, "%s: -l %s: port '%s' out of range (0-65535; 0: any free port)\n",
                prog, o->listen, colon + 1);
        return -1;
    }
    memcpy(host, o->listen, (size_t)(colon - o->listen));
    host[colon - o->listen] = 0;
    if (hostaddr_parse(host, 1, out, err, sizeof err)) {
        fprintf(stderr, "%s: -l %s: %s\n", prog, o->listen, err);
        return -1;
    }
    out->sin_port = htons((uint16_t)port);
    bool loopback = (ntohl(out->sin_addr.s_addr) >> 24) == 127;
    if (!loopback && !o->public_) {
        fprintf(stderr, "%s: -l %s: not a loopback address: anyone who reaches it would "
                "read every profile; give --public to listen there anyway\n", prog,
                o->listen);
        return -1;
    }
    return 0;
}

