/* tools/sonde-prof.c: Sonde's raw profiles (uapi/profile_raw.h) to pprof,
 * folded stacks, a flame graph or the annotated text report.
 *
 *   sonde-prof record [-d WINDOW] [-p PID] [-t SECS] [-k KEYFILE] -e ELF [-e ELF ...]
 *                     -o OUT [--per-kernel] HOST[:PORT] ...
 *   sonde-prof report -i RAW [-i RAW ...] -e ELF [-e ELF ...] -o OUT
 *                     [--kernel NAME ...] [--per-kernel]
 *
 * One pipeline whatever the text's origin: raw text -> sp_profile_add_raw ->
 * build-id check -> symbolize -> one writer chosen by OUT's extension.
 * `record` runs `profile MS PID|all raw` over the UDP shell of every HOST at
 * once (tools/pipeline/record.c, with sonde-sh's protocol code) and feeds
 * each reply to the same two steps: add_text, then finish. A window over
 * SP_RECORD_MS_MAX is a stream (tools/pipeline/collect.c), its records made
 * into a raw profile per kernel (tools/pipeline/agg.c) and fed to the same
 * steps.
 *
 * Exit: 0 ok, 1 the remote said no (record: a kernel refused or answered
 * `profile: busy`), 2 usage, input or protocol error (no answer in time
 * included). Output goes to a temporary file renamed over OUT only
 * once it is complete, so an error never leaves a partial OUT behind. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tools/pipeline/agg.h"
#include "tools/pipeline/collect.h"
#include "tools/pipeline/fleet.h"
#include "tools/pipeline/folded.h"
#include "tools/pipeline/flame_json.h"
#include "tools/pipeline/html.h"
#include "tools/pipeline/model.h"
#include "tools/common/hostaddr.h"
#include "tools/pipeline/pprof.h"
#include "tools/pipeline/record.h"
#include "tools/pipeline/svg.h"
#include "tools/pipeline/sym.h"
#include "tools/pipeline/text.h"
#include "tools/pipeline/diff.h"
#include "tools/pipeline/top_ui.h"
#include "tools/serve/serve.h"
#include "tools/common/toolio.h"
#include "uapi/udpshell.h"

enum { EXIT_OK = 0, EXIT_REFUSED = 1, EXIT_USAGE = 2 };

/* A fleet of a thousand kernels and more is one record (bench/fleet.py). */
#define MAX_INPUTS 4096
/* record: windows up to SP_RECORD_MS_MAX are one `profile ... raw` reply;
 * longer ones are a stream (docs/continuous.md), up to a day. */
#define SP_STREAM_WINDOW_MAX_MS 86400000u
#define STREAM_SILENT_MS 3000   /* a streaming kernel silent this long is given up */
#define STREAM_END_WAIT_MS 2000 /* past the window: the kernel's own END */

static const char *prog = "sonde-prof";

enum format { FMT_FOLDED, FMT_PPROF, FMT_SVG, FMT_TXT, FMT_HTML };

static const struct {
    const char *ext;
    enum format fmt;
} formats[] = {
    { ".folded", FMT_FOLDED },
    { ".pb.gz", FMT_PPROF },
    { ".svg", FMT_SVG },
    { ".txt", FMT_TXT },
    { ".html", FMT_HTML },
};

struct opts {
    const char *inputs[MAX_INPUTS], *elfs[MAX_INPUTS], *kernels[MAX_INPUTS];
    unsigned ninputs, nelfs, nkernels;
    const char *out;
    enum format fmt;
    int per_kernel;
    /* record: the inputs are HOST[:PORT]s */
    unsigned ms;
    const char *pid;            /* a pid, or "all" */
    const char *raws[MAX_INPUTS];   /* -r: where to keep each raw reply */
    unsigned nraws;
    double slack_s;             /* silence allowed beyond the window */
    const char *keyfile;        /* -k: the shells' key (ushkey=), or NULL */
    const char *ids[MAX_INPUTS];    /* --id: each kernel's ushid= ("-": none) */
    unsigned nids;
    enum sp_record_what what;   /* --heap, --allocs: a heap profile; --off */
    int wall;                   /* --wall: CPU samples and off-CPU time, streamed */
    int pid_given;              /* -p was given */
    unsigned sample, period_ms; /* --sample K --period P: K kernels at a time */
    const char *stats;          /* --stats FILE: each kernel's accounting */
};

static void usage(FILE *f)
{
    fprintf(f,
        "usage: %s record [-d WINDOW] [-p PID] [-t SECS] [-k KEYFILE [--id ID ...]] [-r RAW ...] -e ELF [-e ELF ...]\n"
        "                        [--sample K --period P] [--stats FILE]\n"
        "                        -o OUT [--per-kernel] HOST[:PORT] [HOST[:PORT] ...]\n"
        "       %s report -i RAW [-i RAW ...] -e ELF [-e ELF ...] -o OUT\n"
        "                        [--kernel NAME ...] [--per-kernel]\n"
        "       %s top [-w SECONDS] [-n ITERATIONS] [-k KEYFILE] -e ELF [-e ELF ...]\n"
        "                        HOST[:PORT] [HOST[:PORT] ...]   (see top --help)\n"
        "       %s diff BASE NEW [-e ELF [-e ELF]] -o OUT [--force]   (see diff --help)\n"
        "       %s serve [-l ADDR:PORT] [--public] [-k KEYFILE] -e ELF [-e ELF ...]\n"
        "                        HOST[:PORT] [HOST[:PORT] ...]   (see serve --help)\n"
        "       %s -h | --help\n"
        "\n"
        "record profiles running kernels over their UDP shells (`profile MS\n"
        "PID|all raw`), every HOST over the same window, and writes one output\n"
        "with every sample labelled with its kernel (HOST:PORT).\n"
        "  HOST[:PORT]    an IPv4 address or host name; PORT default %d\n"
        "  -d WINDOW      the window: \"500ms\", \"10s\", or a number of ms (default\n"
        "                 1000). Up to %d ms it is one `profile` reply; longer,\n"
        "                 up to a day, the kernels stream their samples as they are\n"
        "                 taken (`profile stream`), with a progress line on a\n"
        "                 terminal and the loss counted (docs/continuous.md)\n"
        "  -p PID         only this task (default: every task)\n"
        "  -t SECS        give up after the window plus SECS without an answer\n"
        "                 (0.1-3600, default 5; requests are resent every second)\n"
        "  -k KEYFILE     the shells' key (the kernels' ushkey=: 64 hex digits and\n"
        "                 at most a newline): requests tagged, replies verified.\n"
        "                 Keeping FILE private is up to you (chmod 600)\n"
        "  --id ID        with -k: a kernel's ushid=, once per HOST in order (- for\n"
        "                 one without); its shell is then believed under that id only\n"
        "  -r RAW         also keep each kernel's raw profile (once per HOST, in\n"
        "                 order), for `report` later\n"
        "  --heap         the heap in use now (`profile heap raw`), not a window:\n"
        "                 pprof's inuse_objects and inuse_space (the default),\n"
        "                 folded and svg in bytes (docs/profiling.md)\n"
        "  --allocs       what was allocated during the window (`profile allocs`;\n"
        "                 -d over %d ms: streamed, `profile allocs stream`):\n"
        "                 alloc_objects and alloc_space\n"
        "  --off          where tasks waited off their CPUs (`profile off`): pprof's\n"
        "                 off_cpu/nanoseconds, each chain's reason as its leaf frame\n"
        "                 ([waitq NAME], [sleep], [runnable], ...) and its waker as\n"
        "                 labels; folded and svg in microseconds (docs/sonde-prof.md)\n"
        "  --wall         on-CPU samples and off-CPU time together, always streamed\n"
        "                 (`profile wall stream`): pprof's wall/nanoseconds\n"
        "  --sample K     a stream: only K kernels at a time, rotating every\n"
        "  --period P     P (\"500ms\", \"10s\"); the others have no stream at all.\n"
        "                 Each kernel's report says the kernel-seconds it covers\n"
        "  --stats FILE   a stream: each kernel's accounting, one line each\n"
        "                 (docs/continuous.md)\n"
        "report symbolizes raw profiles saved to files.\n"
        "  -i RAW         a raw profile; repeat to merge several kernels\n"
        "  --kernel NAME  the kernel label of the inputs, once per -i in\n"
        "                 order (default: each input's file name)\n"
        "Both:\n"
        "  -e ELF         the kernel ELF (its build id must match the\n"
        "                 profile's): once for all, or once per HOST or -i\n"
        "  -o OUT         the output; its extension chooses the format:\n"
        "                   .pb.gz   pprof (go tool pprof)\n"
        "                   .folded  folded stacks (flamegraph.pl, speedscope)\n"
        "                   .svg     a flame graph\n"
        "                   .txt     the kernel's report with file:line\n"
        "                   .html    an interactive flame graph: zoom, search,\n"
        "                            tooltips with file:line; one file that\n"
        "                            loads nothing (open it in any browser)\n"
        "  --per-kernel   folded and svg: the kernel name as the root frame (html:\n"
        "                 always, when the inputs name more than one kernel)\n"
        "Exit status: 0 ok, 1 a kernel refused (busy, nothing listening),\n"
        "2 usage, input or protocol error, or no answer in time.\n",
        prog, prog, prog, prog, prog, prog, USHP_DEFAULT_PORT, SP_RECORD_MS_MAX, SP_RECORD_MS_MAX);
}

static int die_usage(const char *what, const char *arg)
{
    fprintf(stderr, "%s: %s%s%s\n", prog, what, arg ? arg : "",
            " (see --help)");
    return EXIT_USAGE;
}

static int pick_format(struct opts *o)
{
    size_t n = strlen(o->out);
    for (size_t i = 0; i < sizeof formats / sizeof *formats; i++) {
        size_t k = strlen(formats[i].ext);
        if (n > k && strcmp(o->out + n - k, formats[i].ext) == 0) {
            o->fmt = formats[i].fmt;
            return 0;
        }
    }
    fprintf(stderr, "%s: -o %s: unknown extension (known: .pb.gz, .folded, "
            ".svg, .txt, .html)\n", prog, o->out);
    return -1;
}

/* What report and record check alike once their inputs are known: the
 * ELFs (one for all, or one per input: per names an input, hint follows
 * the message for no ELF), the output and its format. */
static int check_elfs_out(struct opts *o, const char *hint, const char *per)
{
    if (!o->nelfs)
        return die_usage("no kernel ELF: give -e ELF", hint);
    if (!o->out)
        return die_usage("no output: give -o OUT", NULL);
    if (o->nelfs != 1 && o->nelfs != o->ninputs)
        return die_usage("give -e once, or once per ", per);
    return pick_format(o) ? EXIT_USAGE : EXIT_OK;
}

static int add_arg(const char **v, unsigned *n, const char *arg, const char *what)
{
    return tool_push_arg(prog, v, n, MAX_INPUTS, arg, what);
}

static int parse_report_args(int argc, char **argv, struct opts *o)
{
    static const struct option longopts[] = {
        { "kernel", required_argument, NULL, 'k' },
        { "per-kernel", no_argument, NULL, 'K' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c, bad = 0;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":i:e:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'i': bad |= add_arg(o->inputs, &o->ninputs, optarg, "-i"); break;
        case 'e': bad |= add_arg(o->elfs, &o->nelfs, optarg, "-e"); break;
        case 'k': bad |= add_arg(o->kernels, &o->nkernels, optarg, "--kernel"); break;
        case 'o': o->out = optarg; break;
        case 'K': o->per_kernel = 1; break;
        case 'h': usage(stdout); exit(EXIT_OK);
        case ':': return die_usage("missing value for ", argv[optind - 1]);
        default: return die_usage("unknown option ", argv[optind - 1]);
        }
    }
    if (bad)
        return EXIT_USAGE;
    if (optind < argc)
        return die_usage("unexpected argument ", argv[optind]);
    if (!o->ninputs)
        return die_usage("no input: give -i RAW", NULL);
    if (o->nkernels && o->nkernels != o->ninputs)
        return die_usage("give --kernel once per -i, or not at all", NULL);
    return check_elfs_out(o, "", "-i");
}

/* ---- the pipeline ---------------------------------------------------- */

struct elfs {
    struct sp_elf *e[MAX_INPUTS];
    unsigned n;
};

/* The map of an ELF path, opened on first use. */
static int map_for(struct sp_profile *p, struct elfs *es, const char *path,
                   unsigned *map)
{
    for (unsigned i = 0; i < p->nmaps; i++)
        if (strcmp(p->maps[i].pm_path, path) == 0) {
            *map = i;
            return 0;
        }
    char err[SP_ERR_MAX];
    unsigned m = sp_profile_add_map(p, path);
    es->e[m] = sp_elf_open(p, m, err, sizeof err);
    es->n = m + 1;
    if (!es->e[m]) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return -1;
    }
    /* Another path to a build already open is that map: locations are
     * per (map, address), so kernels of one build share every name and a
     * fleet of them costs one symbolisation, however its ELFs are named. */
    for (unsigned i = 0; i < m; i++)
        if (strcmp(p->maps[i].pm_build_id, p->maps[m].pm_build_id) == 0) {
            sp_elf_close(es->e[m]);
            es->e[m] = NULL;
            es->n = m;
            p->nmaps = m;
            *map = i;
            return 0;
        }
    if (!p->maps[m].pm_dwarf)
        fprintf(stderr, "%s: warning: %s has no DWARF debug info: names come "
                "from the ELF symbol table, without file:line or inlined "
                "frames\n", prog, path);
    *map = m;
    return 0;
}

/* Adds one raw text; the ELF's build id must be the one the kernel that
 * printed the text was built with, or every name would be wrong. */
static int add_text(struct sp_profile *p, struct elfs *es, const char *text,
                    size_t len, const char *origin, const char *kernel,
                    const char *elf)
{
    unsigned map;
    char err[SP_ERR_MAX];
    if (map_for(p, es, elf, &map))
        return -1;
    if (sp_profile_add_raw(p, text, len, origin, kernel, map, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return -1;
    }
    if (sp_check_build_id(origin, p->inputs[p->ninputs - 1].pi_hdr.ph_build_id,
                            elf, p->maps[map].pm_build_id, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return -1;
    }
    return 0;
}

static int write_format(const struct sp_profile *p, const struct opts *o, FILE *f,
                        char *err, size_t cap)
{
    switch (o->fmt) {
    case FMT_FOLDED:
        return sp_folded_write(p, o->per_kernel, f);
    case FMT_SVG: {
        char title[256];
        snprintf(title, sizeof title, "sonde: %s%s, %llu samples",
                 p->inputs[0].pi_kernel, p->ninputs > 1 ? " and others" : "",
                 (unsigned long long)sp_profile_total(p));
        return sp_svg_write(p, o->per_kernel, title, f);
    }
    case FMT_HTML: {
        char title[256];
        snprintf(title, sizeof title, "sonde: %s%s, %s", p->inputs[0].pi_kernel,
                 p->ninputs > 1 ? " and others" : "", sp_fj_view(&p->inputs[0]));
        return sp_html_write(p, o->per_kernel, title, f, err, cap);
    }
    case FMT_TXT:
        return sp_text_write(p, f);
    case FMT_PPROF:
        return sp_pprof_write(p, f, err, cap);
    }
    return -1;
}

struct out_job {
    const struct sp_profile *p;       /* a profile in o->fmt ... */
    const struct opts *o;
    const char *text;           /* ... or this text as it is */
    size_t len;
};

static int write_job(const struct out_job *j, FILE *f, char *err, size_t cap)
{
    if (j->text)
        return fwrite(j->text, 1, j->len, f) == j->len ? 0 : -1;
    return write_format(j->p, j->o, f, err, cap);
}

/* Writes path through a temporary file in the same directory, so the
 * rename is atomic and an error leaves no partial file. */
static int write_file(const char *path, const struct out_job *j)
{
    size_t n = strlen(path);
    char *tmp = malloc(n + 16);
    if (!tmp)
        return -1;
    snprintf(tmp, n + 16, "%s.tmp.XXXXXX", path);
    int fd = mkstemp(tmp);
    /* mkstemp makes the file 0600; the output is an ordinary file, so
     * give it the mode open(2) would have: 0666 less the umask. */
    mode_t mask = umask(0);
    umask(mask);
    if (fd >= 0)
        fchmod(fd, 0666 & ~mask);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        fprintf(stderr, "%s: %s: cannot create %s: %s\n", prog, path,
                tmp, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        free(tmp);
        return -1;
    }
    char err[SP_ERR_MAX] = "write error";
    int rc = write_job(j, f, err, sizeof err);
    if (fclose(f) != 0 && rc == 0)
        rc = -1;
    if (rc == 0 && rename(tmp, path) != 0) {
        snprintf(err, sizeof err, "rename to %s: %s", path, strerror(errno));
        rc = -1;
    }
    if (rc) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, err);
        unlink(tmp);
    }
    free(tmp);
    return rc;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* Names every address and writes OUT: what follows add_text for every
 * input, whether the text came from a file (report) or a live shell. */
static int finish(struct sp_profile *p, struct elfs *es, const struct opts *o)
{
    for (unsigned m = 0; m < p->nmaps; m++)
        sp_elf_symbolize(p, m, es->e[m]);
    sp_profile_name_unknown(p);
    /* A wall-clock profile's CPU half, scaled to the window. */
    sp_profile_wall_fill(p);
    struct out_job j = { p, o, NULL, 0 };
    return write_file(o->out, &j) ? EXIT_USAGE : EXIT_OK;
}

static int cmd_report(int argc, char **argv)
{
    struct opts o;
    memset(&o, 0, sizeof o);
    int rc = parse_report_args(argc, argv, &o);
    if (rc)
        return rc;
    struct sp_profile p;
    struct elfs es = { .n = 0 };
    sp_profile_init(&p);
    for (unsigned i = 0; i < o.ninputs && rc == 0; i++) {
        char *text, err[SP_ERR_MAX];
        size_t len;
        if (sp_profile_read_file(o.inputs[i], &text, &len, err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", prog, err);
            rc = EXIT_USAGE;
            break;
        }
        if (add_text(&p, &es, text, len, o.inputs[i],
                     o.nkernels ? o.kernels[i] : base_name(o.inputs[i]),
                     o.elfs[o.nelfs == 1 ? 0 : i]))
            rc = EXIT_USAGE;
        free(text);
    }
    if (rc == 0)
        rc = finish(&p, &es, &o);
    for (unsigned m = 0; m < es.n; m++)
        sp_elf_close(es.e[m]);
    sp_profile_free(&p);
    return rc;
}

/* ---- record: the network half ---------------------------------------- */

static int parse_ms(const char *opt, const char *arg, unsigned *ms);

/* -d: "500ms", "10s", or a bare number of ms (what -d always was). */
static int parse_window(const char *arg, unsigned *ms)
{
    return parse_ms("-d", arg, ms);
}

static int parse_ms(const char *opt, const char *arg, unsigned *ms)
{
    char *end;
    unsigned long long v = strtoull(arg, &end, 10), scale = 1;
    if (*arg >= '0' && *arg <= '9' && strcmp(end, "s") == 0)
        scale = 1000;
    else if (!(*arg >= '0' && *arg <= '9') || (*end && strcmp(end, "ms") != 0))
        v = 0;
    if (v < 1 || v > SP_STREAM_WINDOW_MAX_MS / scale) {
        fprintf(stderr, "%s: %s %s out of range (1 ms to %u s: \"500ms\", \"10s\", "
                "or a number of ms)\n", prog, opt, arg, SP_STREAM_WINDOW_MAX_MS / 1000);
        return -1;
    }
    *ms = (unsigned)(v * scale);
    return 0;
}

/* --sample, --period and --stats: a stream's, and together. */
static int fleet_args_bad(const struct opts *o, bool heap)
{
    bool stream = !heap && o->ms > SP_RECORD_MS_MAX;
    if ((o->sample || o->period_ms || o->stats) && !stream) {
        fprintf(stderr, "%s: --sample, --period and --stats are a stream's: give -d over "
                "%u ms, without --heap\n", prog, SP_RECORD_MS_MAX);
        return 1;
    }
    if (!o->sample != !o->period_ms) {
        fprintf(stderr, "%s: give --sample K and --period P together\n", prog);
        return 1;
    }
    if (o->period_ms > o->ms) {
        fprintf(stderr, "%s: --period %u ms out of range (1 ms up to -d, %u ms)\n", prog,
                o->period_ms, o->ms);
        return 1;
    }
    return 0;
}

static int parse_record_args(int argc, char **argv, struct opts *o)
{
    static const struct option longopts[] = {
        { "per-kernel", no_argument, NULL, 'K' },
        { "heap", no_argument, NULL, 'H' },
        { "allocs", no_argument, NULL, 'A' },
        { "off", no_argument, NULL, 'O' },
        { "wall", no_argument, NULL, 'W' },
        { "id", required_argument, NULL, 'I' },
        { "sample", required_argument, NULL, 'S' },
        { "period", required_argument, NULL, 'P' },
        { "stats", required_argument, NULL, 'T' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c, bad = 0, heap = 0, allocs = 0, off = 0;
    char *end;
    o->ms = 1000;
    o->pid = "all";
    o->slack_s = 5;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":d:p:t:k:r:e:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'k': o->keyfile = optarg; break;
        case 'd':
            if (parse_window(optarg, &o->ms))
                return EXIT_USAGE;
            break;
        case 'p': {
            long long v = strtoll(optarg, &end, 10);
            if (*optarg < '0' || *optarg > '9' || *end || v > PRAW_PID_MAX) {
                fprintf(stderr, "%s: -p %s is not a pid (0-%u)\n", prog, optarg,
                        PRAW_PID_MAX);
                return EXIT_USAGE;
            }
            o->pid = optarg;
            o->pid_given = 1;
            break;
        }
        case 'H': heap = 1; break;
        case 'A': allocs = 1; break;
        case 'O': off = 1; break;
        case 'W': o->wall = 1; break;
        case 'S': {
            unsigned long v = strtoul(optarg, &end, 10);
            if (*optarg < '0' || *optarg > '9' || *end || v < 1 || v > MAX_INPUTS) {
                fprintf(stderr, "%s: --sample %s out of range (1-%u kernels at a time)\n",
                        prog, optarg, MAX_INPUTS);
                return EXIT_USAGE;
            }
            o->sample = (unsigned)v;
            break;
        }
        case 'P':
            if (parse_ms("--period", optarg, &o->period_ms))
                return EXIT_USAGE;
            break;
        case 'T': o->stats = optarg; break;
        case 't':
            o->slack_s = strtod(optarg, &end);
            if (*optarg == 0 || *end || !(o->slack_s >= 0.1 && o->slack_s <= 3600)) {
                fprintf(stderr, "%s: -t %s out of range (0.1-3600 s)\n", prog, optarg);
                return EXIT_USAGE;
            }
            break;
        case 'r': bad |= add_arg(o->raws, &o->nraws, optarg, "-r"); break;
        case 'I': bad |= add_arg(o->ids, &o->nids, optarg, "--id"); break;
        case 'e': bad |= add_arg(o->elfs, &o->nelfs, optarg, "-e"); break;
        case 'o': o->out = optarg; break;
        case 'K': o->per_kernel = 1; break;
        case 'h': usage(stdout); exit(EXIT_OK);
        case ':': return die_usage("missing value for ", argv[optind - 1]);
        default: return die_usage("unknown option ", argv[optind - 1]);
        }
    }
    for (; optind < argc; optind++)
        bad |= add_arg(o->inputs, &o->ninputs, argv[optind], "HOSTs");
    if (bad)
        return EXIT_USAGE;
    if (!o->ninputs)
        return die_usage("no kernel to profile: give HOST[:PORT]", NULL);
    if (heap + allocs + off + o->wall > 1)
        return die_usage("give one of --heap, --allocs, --off and --wall", NULL);
    if (o->wall && o->nraws)
        return die_usage("--wall is two profiles (CPU and off-CPU): -r does not apply", NULL);
    if (heap && o->pid_given)
        return die_usage("--heap is every task's blocks in use: -p does not apply", NULL);
    o->what = heap ? SP_RECORD_HEAP : allocs ? SP_RECORD_ALLOCS
            : off || o->wall ? SP_RECORD_OFF : SP_RECORD_CPU;
    if (fleet_args_bad(o, heap))
        return EXIT_USAGE;
    if (heap)
        o->ms = 0;              /* no window: only the slack to wait */
    if (o->nraws && o->nraws != o->ninputs)
        return die_usage("give -r once per HOST in order, or not at all", NULL);
    if (o->nids && o->nids != o->ninputs)
        return die_usage("give --id once per HOST in order (- for a kernel without "
                         "ushid=), or not at all", NULL);
    if (o->nids && !o->keyfile)
        return die_usage("--id names the kernels' ushid=, which only a key (-k) uses", NULL);
    return check_elfs_out(o, " (e.g. build/x86_64/kernel.elf)", "HOST in order");
}

/* The sockets under ushc_io and ushc_mux: one connected UDP socket per
 * kernel, all waited on together with poll. */
struct socks {
    int fd[MAX_INPUTS];
    unsigned n, next;           /* next: where the fair scan starts */
};

static int sock_send(void *ctx, const void *d, size_t n)
{
    int fd = *(int *)ctx;
    if (send(fd, d, n, 0) >= 0)
        return 0;
    return errno == ECONNREFUSED ? USHC_IO_REFUSED : USHC_IO_ERROR;
}

static uint64_t mono_ms(void *ctx)
{
    (void)ctx;
    return tool_mono_ms();
}

static long socks_recv_any(void *ctx, unsigned *which, void *buf, size_t cap,
                           uint64_t timeout_ms)
{
    struct socks *s = ctx;
    return tool_recv_any(s->fd, s->n, &s->next, which, buf, cap, timeout_ms);
}

static int open_socket(const char *arg, const struct sockaddr_in *peer)
{
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0 || connect(fd, (const struct sockaddr *)peer, sizeof *peer) < 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, arg, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

/* ---- record: a stream, for windows over SP_RECORD_MS_MAX --------------- */

struct stream_rec {
    struct sp_agg agg[MAX_INPUTS];
};

static void stream_record(void *ctx, unsigned kernel, uint16_t cpu,
                          const struct pstr_record *r)
{
    struct stream_rec *sr = ctx;
    sp_agg_add(&sr->agg[kernel], cpu, r);
}

/* What the report says beside a kernel's loss: what became of it, and
 * what was refused (datagrams forged or not sane, records with a field
 * out of range); NULL when nothing. */
static const char *stream_note(struct sp_profile *p, const struct sp_collect_kernel *k)
{
    char note[SP_COLLECT_NOTE_MAX + 160];
    size_t n = (size_t)snprintf(note, sizeof note, "%s", k->note);
    uint64_t dgrams = sp_collect_refused(k), recs = k->s.bad_records;
    if (dgrams || recs)
        snprintf(note + n, sizeof note - n, "%srefused %llu datagrams (forged or not sane), "
                 "%llu records (a field out of range)", n ? "; " : "",
                 (unsigned long long)dgrams, (unsigned long long)recs);
    return note[0] ? sp_strdup(p, note) : NULL;
}

/* Each kernel's streams as a raw profile through add_text, with its loss
 * beside it (t: its streams summed). A kernel that never sent its META is
 * left out, said so. */
static int stream_inputs(struct sp_collect *c, struct stream_rec *sr, struct sp_profile *p,
                         struct elfs *es, const struct opts *o, char **texts,
                         size_t *lens, const struct sp_fleet_total *t)
{
    unsigned added = 0;
    for (unsigned i = 0; i < c->n; i++) {
        struct sp_collect_kernel *k = &c->k[i];
        /* Off-CPU time as its own raw profile; a wall stream's CPU
         * samples as another, the same kernel's (texts[MAX_INPUTS + i]);
         * an allocs stream's heap samples as a `profile allocs` window's. */
        unsigned kind = o->what == SP_RECORD_OFF      ? PRAW_KIND_OFFCPU
                      : o->what == SP_RECORD_ALLOCS ? PRAW_KIND_HEAP : PRAW_KIND_CPU;
        texts[i] = sp_agg_raw_drops(&sr->agg[i], &k->s, kind,
                                    (uint32_t)t[i].covered_ms, t[i].drops, &lens[i]);
        if (!texts[i] && k->skew)
            continue;               /* said: another control version */
        if (!texts[i]) {
            fprintf(stderr, "%s: kernel %s: %s: left out\n", prog, k->name,
                    o->sample && !t[i].streams ? "never sampled"
                                               : "no META came (no build id to check)");
            continue;
        }
        for (unsigned half = 0; half < 1u + (o->wall != 0); half++) {
            unsigned at = half ? MAX_INPUTS + i : i;
            if (half)
                texts[at] = sp_agg_raw_drops(&sr->agg[i], &k->s, PRAW_KIND_CPU,
                                             (uint32_t)t[i].covered_ms, t[i].drops, &lens[at]);
            if (add_text(p, es, texts[at], lens[at], k->name, k->name,
                         o->elfs[o->nelfs == 1 ? 0 : i]))
                return EXIT_USAGE;
            if (!o->nraws) {        /* parsed: a fleet's texts need not all be held */
                free(texts[at]);
                texts[at] = NULL;
            }
            struct sp_input *in = &p->inputs[p->ninputs - 1];
            in->pi_stream = true;
            in->pi_lost_records = t[i].lost_records;
            in->pi_lost_dgrams = t[i].lost_dgrams;
            in->pi_note = stream_note(p, k);
            if (o->sample) {
                char cov[96];
                sp_fleet_coverage(cov, sizeof cov, &t[i], o->period_ms);
                char *note = sp_xcalloc(1, strlen(cov) +
                                        (in->pi_note ? strlen(in->pi_note) : 0) + 3);
                sprintf(note, "%s%s%s", cov, in->pi_note ? "; " : "",
                        in->pi_note ? in->pi_note : "");
                in->pi_note = sp_strdup(p, note);
                free(note);
            }
        }
        added++;
    }
    if (!added) {
        fprintf(stderr, "%s: no kernel's stream came: nothing to write\n", prog);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

static int write_stats(const struct opts *o, const struct sp_collect *c,
                       const struct sp_fleet_total *t)
{
    FILE *f = fopen(o->stats, "w");
    int rc = f ? sp_fleet_write_stats(f, c, t) : -1;
    if (f && fclose(f) != 0)
        rc = -1;
    if (rc)
        fprintf(stderr, "%s: --stats %s: %s\n", prog, o->stats, strerror(errno));
    return rc ? EXIT_USAGE : EXIT_OK;
}

static int record_stream(const struct opts *o, const uint8_t *const *keys, struct sp_profile *p,
                         struct elfs *es)
{
    static struct stream_rec sr;
    static char *texts[2 * MAX_INPUTS];     /* [MAX_INPUTS + i]: a wall's CPU half */
    static size_t lens[2 * MAX_INPUTS];
    struct sp_collect c;
    struct sp_collect_opts po = {
        .prog = prog, .err = stderr, .key = keys ? keys[0] : NULL, .keys = keys,
        .shell_timeout_ms = (uint64_t)(o->slack_s * 1000),
        .silent_ms = STREAM_SILENT_MS,
        .what = o->wall ? "wall" : o->what == SP_RECORD_OFF ? "off"
              : o->what == SP_RECORD_ALLOCS ? "allocs" : NULL,
    };
    for (unsigned i = 0; i < o->ninputs; i++)
        sp_agg_init(&sr.agg[i]);
    struct sp_fleet_total *t = sp_xcalloc(o->ninputs, sizeof *t);
    int rc = sp_collect_open(&c, &po, o->inputs, o->ninputs, stream_record, &sr)
           ? EXIT_USAGE : EXIT_OK;
    bool tty = isatty(STDERR_FILENO);
    if (rc == EXIT_OK && tty)
        fprintf(stderr, "%s: streaming %u s from %u kernel%s to port %u ...\n",
                prog, o->ms / 1000, o->ninputs, o->ninputs > 1 ? "s" : "", c.port);
    struct sp_fleet_run run = { .prog = prog, .ms = o->ms, .who = o->pid, .sample = o->sample,
                                .period_ms = o->period_ms, .tty = tty,
                                .end_wait_ms = STREAM_END_WAIT_MS };
    if (rc == EXIT_OK)
        rc = sp_fleet_record(&c, &run, t);
    if (rc == EXIT_OK)
        rc = stream_inputs(&c, &sr, p, es, o, texts, lens, t);
    if (rc == EXIT_OK && o->stats)
        rc = write_stats(o, &c, t);
    for (unsigned i = 0; i < o->nraws && rc == 0; i++) {
        if (!texts[i])
            continue;
        struct out_job j = { NULL, NULL, texts[i], lens[i] };
        if (write_file(o->raws[i], &j))
            rc = EXIT_USAGE;
    }
    if (rc == EXIT_OK)
        rc = finish(p, es, o);
    for (unsigned i = 0; i < o->ninputs; i++) {
        sp_agg_free(&sr.agg[i]);
        free(texts[i]);
        free(texts[MAX_INPUTS + i]);
        texts[i] = texts[MAX_INPUTS + i] = NULL;
    }
    free(t);
    sp_collect_close(&c);
    return rc;
}

static int cmd_record(int argc, char **argv)
{
    struct opts o;
    memset(&o, 0, sizeof o);
    int rc = parse_record_args(argc, argv, &o);
    if (rc)
        return rc;
    /* One key per kernel: the shared key, made each kernel's own by its
     * --id (docs/udpshell.md, "Kernel ids"). */
    static uint8_t keys[MAX_INPUTS][USHP_KEY_LEN];
    static const uint8_t *kp[MAX_INPUTS];
    for (unsigned i = 0; o.keyfile && i < o.ninputs; i++) {
        if (i == 0 && ushc_load_key(o.keyfile, keys[0], stderr, prog) < 0)
            return EXIT_USAGE;
        memcpy(keys[i], keys[0], USHP_KEY_LEN);
        kp[i] = keys[i];
    }
    for (unsigned i = o.ninputs; o.keyfile && i-- > 0;) {
        const char *id = o.nids ? o.ids[i] : "-";
        if (strcmp(id, "-") != 0 && ushc_use_id(keys[i], id, stderr, prog) < 0)
            return EXIT_USAGE;
    }
    /* A wall profile's two halves come from one stream, whatever its length. */
    if (o.ms > SP_RECORD_MS_MAX || o.wall) {
        struct sp_profile p;
        struct elfs es = { .n = 0 };
        sp_profile_init(&p);
        /* The ELFs first: a wrong path must not cost a stream. */
        for (unsigned i = 0; i < o.ninputs && rc == 0; i++) {
            unsigned map;
            if (map_for(&p, &es, o.elfs[o.nelfs == 1 ? 0 : i], &map))
                rc = EXIT_USAGE;
        }
        if (rc == 0)
            rc = record_stream(&o, o.keyfile ? kp : NULL, &p, &es);
        for (unsigned m = 0; m < es.n; m++)
            sp_elf_close(es.e[m]);
        sp_profile_free(&p);
        return rc;
    }
    static struct sp_rec_host hs[MAX_INPUTS];
    static char names[MAX_INPUTS][HOSTADDR_NAME_MAX];
    struct socks sk = { .n = 0 };
    struct sp_profile p;
    struct elfs es = { .n = 0 };
    sp_profile_init(&p);
    /* Everything that can be checked before the window is: the hosts,
     * the ELFs (a wrong path must not cost a profile). */
    for (unsigned i = 0; i < o.ninputs && rc == 0; i++) {
        struct sockaddr_in a;
        char err[HOSTADDR_ERR_MAX];
        unsigned map;
        if (hostaddr_parse(o.inputs[i], USHP_DEFAULT_PORT, &a, err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", prog, err);
            rc = EXIT_USAGE;
        } else if ((sk.fd[i] = open_socket(o.inputs[i], &a)) < 0) {
            rc = EXIT_USAGE;
        } else {
            sk.n = i + 1;
            if (map_for(&p, &es, o.elfs[o.nelfs == 1 ? 0 : i], &map))
                rc = EXIT_USAGE;
        }
        hostaddr_name(o.inputs[i], USHP_DEFAULT_PORT, names[i], sizeof names[i]);
    }
    uint32_t seq;
    if (getrandom(&seq, sizeof seq, 0) != sizeof seq)
        seq = (uint32_t)time(NULL) ^ (uint32_t)getpid() << 16;
    for (unsigned i = 0; i < sk.n; i++) {
        hs[i].c = (struct ushc){
            .io = { &sk.fd[i], sock_send, NULL, mono_ms },
            .seq = seq + i * 0x10000u,
            /* The kernel says nothing until its window has passed. */
            .timeout_ms = o.ms + (uint64_t)(o.slack_s * 1000),
            .peer = names[i], .prog = prog, .err = stderr,
            .key = o.keyfile ? kp[i] : NULL,
        };
    }
    if (rc == 0) {
        char cmd[SP_RECORD_CMD_MAX];
        sp_record_command_what(cmd, sizeof cmd, o.what, o.ms, o.pid);
        if (isatty(STDERR_FILENO))
            fprintf(stderr, "%s: %s on %u kernel%s ...\n", prog, cmd, o.ninputs,
                    o.ninputs > 1 ? "s" : "");
        struct ushc_mux m = { &sk, socks_recv_any, mono_ms };
        rc = sp_record_collect(&m, hs, o.ninputs, cmd);
    }
    for (unsigned i = 0; i < o.ninputs && rc == 0; i++)
        if (add_text(&p, &es, hs[i].text, hs[i].len, names[i], names[i],
                     o.elfs[o.nelfs == 1 ? 0 : i]))
            rc = EXIT_USAGE;
    /* The raw texts are kept only once they passed every check: a file
     * under RAW is always one that `report` reads. */
    for (unsigned i = 0; i < o.nraws && rc == 0; i++) {
        struct out_job j = { NULL, NULL, hs[i].text, hs[i].len };
        if (write_file(o.raws[i], &j))
            rc = EXIT_USAGE;
    }
    if (rc == 0)
        rc = finish(&p, &es, &o);
    sp_record_free(hs, sk.n);
    for (unsigned i = 0; i < sk.n; i++)
        close(sk.fd[i]);
    for (unsigned m = 0; m < es.n; m++)
        sp_elf_close(es.e[m]);
    sp_profile_free(&p);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return EXIT_USAGE;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        usage(stdout);
        return EXIT_OK;
    }
    if (strcmp(argv[1], "report") == 0)
        return cmd_report(argc - 1, argv + 1);
    if (strcmp(argv[1], "record") == 0)
        return cmd_record(argc - 1, argv + 1);
    if (strcmp(argv[1], "top") == 0)
        return sp_top_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "diff") == 0)
        return sp_diff_main(argc - 1, argv + 1);
    if (strcmp(argv[1], "serve") == 0)
        return sv_serve_main(argc - 1, argv + 1);
    fprintf(stderr, "%s: unknown command '%s' (known: record, report, top, diff, serve; see --help)\n",
            prog, argv[1]);
    return EXIT_USAGE;
}
