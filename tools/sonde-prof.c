/* tools/sonde-prof.c: Sonde's raw profiles (uapi/profile_raw.h) to pprof,
 * folded stacks, a flame graph or the annotated text report.
 *
 *   sonde-prof report -i RAW [-i RAW ...] -e ELF [-e ELF ...] -o OUT
 *                     [--kernel NAME ...] [--per-kernel]
 *
 * One pipeline whatever the text's origin: raw text -> prof_add_raw ->
 * build-id check -> symbolize -> one writer chosen by OUT's extension.
 * A live `record` (`profile ... raw` run over the UDP shell) is meant to
 * be a thin layer over the same two steps: add_text with the reply's
 * text, then finish.
 *
 * Exit: 0 ok, 1 the remote said no (for `record`), 2 usage, input or
 * protocol error. Output goes to a temporary file renamed over OUT only
 * once it is complete, so an error never leaves a partial OUT behind. */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/prof_folded.h"
#include "tools/prof_model.h"
#include "tools/prof_pprof.h"
#include "tools/prof_svg.h"
#include "tools/prof_sym.h"
#include "tools/prof_text.h"

enum { EXIT_OK = 0, EXIT_REFUSED = 1, EXIT_USAGE = 2 };

#define MAX_INPUTS 64

static const char *prog = "sonde-prof";

enum format { FMT_FOLDED, FMT_PPROF, FMT_SVG, FMT_TXT };

static const struct {
    const char *ext;
    enum format fmt;
} formats[] = {
    { ".folded", FMT_FOLDED },
    { ".pb.gz", FMT_PPROF },
    { ".svg", FMT_SVG },
    { ".txt", FMT_TXT },
};

struct opts {
    const char *inputs[MAX_INPUTS], *elfs[MAX_INPUTS], *kernels[MAX_INPUTS];
    unsigned ninputs, nelfs, nkernels;
    const char *out;
    enum format fmt;
    int per_kernel;
};

static void usage(FILE *f)
{
    fprintf(f,
        "usage: %s report -i RAW [-i RAW ...] -e ELF [-e ELF ...] -o OUT\n"
        "                        [--kernel NAME ...] [--per-kernel]\n"
        "       %s -h | --help\n"
        "\n"
        "Symbolizes raw profiles (`profile [ms] [pid|all] raw` on a Sonde\n"
        "shell, saved to a file) with the kernel ELF and writes one output.\n"
        "  -i RAW         a raw profile; repeat to merge several kernels\n"
        "  -e ELF         the kernel ELF (its build id must match the\n"
        "                 profile's): once for all inputs, or once per -i\n"
        "  -o OUT         the output; its extension chooses the format:\n"
        "                   .pb.gz   pprof (go tool pprof)\n"
        "                   .folded  folded stacks (flamegraph.pl, speedscope)\n"
        "                   .svg     a flame graph\n"
        "                   .txt     the kernel's report with file:line\n"
        "  --kernel NAME  the kernel label of the inputs, once per -i in\n"
        "                 order (default: each input's file name)\n"
        "  --per-kernel   folded and svg: the kernel name as the root frame\n"
        "Exit status: 0 ok, 1 the remote refused, 2 usage or input error.\n",
        prog, prog);
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
            ".svg, .txt)\n", prog, o->out);
    return -1;
}

static int add_arg(const char **v, unsigned *n, const char *arg,
                   const char *what)
{
    if (*n == MAX_INPUTS) {
        fprintf(stderr, "%s: more than %d %s\n", prog, MAX_INPUTS, what);
        return -1;
    }
    v[(*n)++] = arg;
    return 0;
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
    if (!o->nelfs)
        return die_usage("no kernel ELF: give -e ELF", NULL);
    if (!o->out)
        return die_usage("no output: give -o OUT", NULL);
    if (o->nelfs != 1 && o->nelfs != o->ninputs)
        return die_usage("give -e once, or once per -i", NULL);
    if (o->nkernels && o->nkernels != o->ninputs)
        return die_usage("give --kernel once per -i, or not at all", NULL);
    return pick_format(o) ? EXIT_USAGE : EXIT_OK;
}

/* ---- the pipeline ---------------------------------------------------- */

struct elfs {
    struct prof_elf *e[MAX_INPUTS];
    unsigned n;
};

/* The map of an ELF path, opened on first use. */
static int map_for(struct prof *p, struct elfs *es, const char *path,
                   unsigned *map)
{
    for (unsigned i = 0; i < p->nmaps; i++)
        if (strcmp(p->maps[i].pm_path, path) == 0) {
            *map = i;
            return 0;
        }
    char err[PROF_ERR_MAX];
    unsigned m = prof_add_map(p, path);
    es->e[m] = prof_elf_open(p, m, err, sizeof err);
    es->n = m + 1;
    if (!es->e[m]) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return -1;
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
static int add_text(struct prof *p, struct elfs *es, const char *text,
                    size_t len, const char *origin, const char *kernel,
                    const char *elf)
{
    unsigned map;
    char err[PROF_ERR_MAX];
    if (map_for(p, es, elf, &map))
        return -1;
    if (prof_add_raw(p, text, len, origin, kernel, map, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return -1;
    }
    const char *want = p->inputs[p->ninputs - 1].pi_hdr.ph_build_id;
    if (strcmp(want, p->maps[map].pm_build_id) != 0) {
        fprintf(stderr, "%s: build id mismatch: %s was recorded on a kernel "
                "with build id %s, but %s has build id %s\n", prog, origin,
                want, elf, p->maps[map].pm_build_id);
        return -1;
    }
    return 0;
}

static int write_format(const struct prof *p, const struct opts *o, FILE *f,
                        char *err, size_t cap)
{
    switch (o->fmt) {
    case FMT_FOLDED:
        return prof_folded_write(p, o->per_kernel, f);
    case FMT_SVG: {
        char title[256];
        snprintf(title, sizeof title, "sonde: %s%s, %llu samples",
                 p->inputs[0].pi_kernel, p->ninputs > 1 ? " and others" : "",
                 (unsigned long long)prof_total(p));
        return prof_svg_write(p, o->per_kernel, title, f);
    }
    case FMT_TXT:
        return prof_text_write(p, f);
    case FMT_PPROF:
        return prof_pprof_write(p, f, err, cap);
    }
    return -1;
}

/* Writes OUT through a temporary file in the same directory, so the
 * rename is atomic and an error leaves no partial file. */
static int write_out(const struct prof *p, const struct opts *o)
{
    size_t n = strlen(o->out);
    char *tmp = malloc(n + 16);
    if (!tmp)
        return -1;
    snprintf(tmp, n + 16, "%s.tmp.XXXXXX", o->out);
    int fd = mkstemp(tmp);
    /* mkstemp makes the file 0600; the output is an ordinary file, so
     * give it the mode open(2) would have: 0666 less the umask. */
    mode_t mask = umask(0);
    umask(mask);
    if (fd >= 0)
        fchmod(fd, 0666 & ~mask);
    FILE *f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!f) {
        fprintf(stderr, "%s: %s: cannot create %s: %s\n", prog, o->out,
                tmp, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        free(tmp);
        return -1;
    }
    char err[PROF_ERR_MAX] = "write error";
    int rc = write_format(p, o, f, err, sizeof err);
    if (fclose(f) != 0 && rc == 0)
        rc = -1;
    if (rc == 0 && rename(tmp, o->out) != 0) {
        snprintf(err, sizeof err, "rename to %s: %s", o->out, strerror(errno));
        rc = -1;
    }
    if (rc) {
        fprintf(stderr, "%s: %s: %s\n", prog, o->out, err);
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
static int finish(struct prof *p, struct elfs *es, const struct opts *o)
{
    for (unsigned m = 0; m < p->nmaps; m++)
        prof_elf_symbolize(p, m, es->e[m]);
    prof_name_unknown(p);
    return write_out(p, o) ? EXIT_USAGE : EXIT_OK;
}

static int cmd_report(int argc, char **argv)
{
    struct opts o;
    memset(&o, 0, sizeof o);
    int rc = parse_report_args(argc, argv, &o);
    if (rc)
        return rc;
    struct prof p;
    struct elfs es = { .n = 0 };
    prof_init(&p);
    for (unsigned i = 0; i < o.ninputs && rc == 0; i++) {
        char *text, err[PROF_ERR_MAX];
        size_t len;
        if (prof_read_file(o.inputs[i], &text, &len, err, sizeof err)) {
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
        prof_elf_close(es.e[m]);
    prof_free(&p);
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
    fprintf(stderr, "%s: unknown command '%s' (known: report; see --help)\n",
            prog, argv[1]);
    return EXIT_USAGE;
}
