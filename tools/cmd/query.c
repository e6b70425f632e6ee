/* tools/cmd/query.c: `sonde-prof query`, a range of a serve's store read
 * without a running serve: the store's buckets (tools/store/store.h) put
 * in the model as serve puts them (tools/serve/query.c), named with the
 * ELFs given, written by report's writers in the format OUT's extension
 * names (tools/cmd/report.h).
 * Host pipeline: prefix sp_. */
#define _GNU_SOURCE
#include "tools/cmd/cmd.h"
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "tools/cmd/report.h"
#include "tools/serve/persist.h"
#include "tools/serve/query.h"
#include "uapi/profile_raw.h"

static const char *prog = "sonde-prof query";

static void usage(FILE *f)
{
    fprintf(f,
        "usage: sonde-prof query [--store S] --from T [--to T] [--kernel HOST:PORT]\n"
        "                        [--kind cpu|offcpu|heap] -e ELF [-e ELF ...] -o OUT\n"
        "\n"
        "A range of what `sonde-prof serve` kept in its store, without a serve:\n"
        "  --store S   an SQLite file (default %s) or postgresql://USER@HOST:PORT/DB\n"
        "  --from T, --to T  the range [from, to): Unix ms, \"now\", or \"now-D\" with D\n"
        "              a number and ms, s, m, h or d (\"now-1h\"); --to defaults to now.\n"
        "              Whole buckets are answered: 10 s for the last hour, a minute\n"
        "              for the last day, 10 minutes before\n"
        "  --kernel K  one kernel, by its name in the store (HOST:PORT as serve had it)\n"
        "  --kind K    cpu (default), offcpu or heap\n"
        "  -e ELF      the kernels' ELFs: each kernel is named by the one with its\n"
        "              build id; a kernel none has is left out, and said so\n"
        "  -o OUT      .pb.gz, .folded, .svg, .txt or .html\n",
        ST_DEFAULT_FILE);
}

static uint64_t unix_ms(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
}

/* Unix ms, "now" or "now-D". 0, or -1 said. */
static int parse_time(const char *opt, const char *arg, uint64_t now, uint64_t *out)
{
    static const struct { const char *unit; uint64_t ms; } units[] = {
        { "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 }, { "d", 86400000 },
    };
    char *end;
    if (strcmp(arg, "now") == 0) {
        *out = now;
        return 0;
    }
    if (arg[0] >= '0' && arg[0] <= '9') {
        unsigned long long v = strtoull(arg, &end, 10);
        if (!*end && v <= now) {
            *out = v;
            return 0;
        }
    } else if (strncmp(arg, "now-", 4) == 0 && arg[4] >= '0' && arg[4] <= '9') {
        unsigned long long v = strtoull(arg + 4, &end, 10);
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            if (strcmp(end, units[i].unit) == 0 && v <= now / units[i].ms) {
                *out = now - v * units[i].ms;
                return 0;
            }
    }
    fprintf(stderr, "%s: %s %s: not a time (Unix ms 0-%" PRIu64 ", \"now\", or \"now-D\" "
            "with D a number and ms, s, m, h or d, e.g. now-1h)\n", prog, opt, arg, now);
    return -1;
}

static int parse_kind(const char *arg, unsigned *kind)
{
    for (unsigned k = 0; k <= PRAW_KIND_MAX; k++)
        if (strcmp(arg, praw_kind_name(k)) == 0) {
            *kind = k;
            return 0;
        }
    fprintf(stderr, "%s: --kind %s: not a kind (cpu, offcpu, heap or lock)\n", prog, arg);
    return -1;
}

struct query_opts {
    struct sp_cmd_opts o;       /* -e and -o, checked as report checks them */
    const char *store, *kernel;
    uint64_t from, to;
    unsigned kind;
};

static int parse_args(int argc, char **argv, struct query_opts *q)
{
    static const struct option longopts[] = {
        { "store", required_argument, NULL, 'S' },
        { "from", required_argument, NULL, 'F' },
        { "to", required_argument, NULL, 'T' },
        { "kernel", required_argument, NULL, 'K' },
        { "kind", required_argument, NULL, 'W' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    uint64_t now = unix_ms();
    bool from = false;
    int c, bad = 0;
    q->store = ST_DEFAULT_FILE;
    q->to = now;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":e:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'e': bad |= sp_cmd_add_arg(q->o.elfs, &q->o.nelfs, optarg, "-e"); break;
        case 'o': q->o.out = optarg; break;
        case 'S': q->store = optarg; break;
        case 'F': bad |= parse_time("--from", optarg, now, &q->from); from = true; break;
        case 'T': bad |= parse_time("--to", optarg, now, &q->to); break;
        case 'K': q->kernel = optarg; break;
        case 'W': bad |= parse_kind(optarg, &q->kind); break;
        case 'h': usage(stdout); exit(EXIT_OK);
        case ':': return sp_cmd_die_usage("missing value for ", argv[optind - 1]);
        default: return sp_cmd_die_usage("unknown option ", argv[optind - 1]);
        }
    }
    if (bad)
        return EXIT_USAGE;
    if (optind < argc)
        return sp_cmd_die_usage("unexpected argument ", argv[optind]);
    if (!from)
        return sp_cmd_die_usage("no range: give --from T (Unix ms, or now-1h)", NULL);
    if (q->to <= q->from) {
        fprintf(stderr, "%s: --from %" PRIu64 " --to %" PRIu64 ": an empty range (want "
                "from < to)\n", prog, q->from, q->to);
        return EXIT_USAGE;
    }
    q->o.ninputs = q->o.nelfs;      /* any number of ELFs: one per build */
    return sp_cmd_check_elfs_out(&q->o, " (the kernels' ELFs, one per build)", "ELF");
}

/* The ELFs, each a build; the kernels the store names that one of them
 * names, as serve's state (none of them streaming here). */
static int query_state(struct query_opts *q, struct sp_elfset *nm, struct sv_state *st)
{
    char err[ST_ERR_MAX];
    if (q->o.nelfs > SP_ELFSET_MAX) {
        fprintf(stderr, "%s: %u ELFs: at most %u builds\n", prog, q->o.nelfs, SP_ELFSET_MAX);
        return EXIT_USAGE;
    }
    for (unsigned i = 0; i < q->o.nelfs; i++)
        if (sp_elfset_add(nm, i, q->o.elfs[i], prog))
            return EXIT_USAGE;
    st->maps = nm->p.maps;
    st->nmaps = nm->p.nmaps;
    st->symbolize = sp_elfset_symbolize;
    st->sym_ctx = nm;
    st->store = st_open(q->store, err, sizeof err);
    if (!st->store) {
        fprintf(stderr, "%s: --store %s\n", prog, err);
        return EXIT_USAGE;
    }
    if (sv_foreign_load(st, 0, err, sizeof err)) {
        fprintf(stderr, "%s: --store %s: %s\n", prog, q->store, err);
        return EXIT_USAGE;
    }
    size_t n;
    struct st_kernel *ks = st_kernels(st->store, &n, err, sizeof err);
    for (size_t i = 0; ks && i < n; i++)
        if (!sv_kernel_name_known(st, ks[i].name) && (!q->kernel || strcmp(q->kernel, ks[i].name) == 0))
            fprintf(stderr, "%s: kernel %s (build %s): no -e ELF has its build id: left out\n",
                    prog, ks[i].name, ks[i].build_id[0] ? ks[i].build_id : "unknown");
    free(ks);
    return EXIT_OK;
}

int sp_query_main(int argc, char **argv)
{
    static struct query_opts q;
    int rc = parse_args(argc, argv, &q);
    if (rc)
        return rc;
    struct sp_elfset nm;
    struct sv_state st;
    memset(&st, 0, sizeof st);
    sp_elfset_init(&nm);
    rc = query_state(&q, &nm, &st);
    struct st_sel sel;
    st_sel_init(&sel);
    char err[ST_ERR_MAX];
    struct st_filter f = { q.kernel, -1, -1, q.kind, sv_kernel_ok, &st };   /* named ones */
    if (rc == 0 && st_select(st.store, q.from, q.to, &f, &sel, err, sizeof err)) {
        fprintf(stderr, "%s: --store %s: %s\n", prog, q.store, err);
        rc = EXIT_USAGE;
    }
    if (rc == 0) {
        struct sp_profile p;
        sv_query_profile(&st, &sel, q.kind, sel.to_ms - sel.from_ms, false, &p);
        sv_query_name(&st, &p);
        struct sp_cmd_out out = { &p, &q.o, NULL, 0 };
        rc = sp_cmd_write_file(q.o.out, &out) ? EXIT_USAGE : EXIT_OK;
        if (rc == 0)
            fprintf(stderr, "%s: %" PRIu64 " records of %" PRIu64 " to %" PRIu64 " (Unix ms) "
                    "in %s\n", prog, sel.samples, sel.from_ms, sel.to_ms, q.o.out);
        sp_profile_free(&p);
    }
    st_sel_free(&sel);
    sv_foreign_free(&st);
    st_close(st.store);
    sp_elfset_free(&nm);
    return rc;
}
