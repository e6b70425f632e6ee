/* tools/cmd/report.c: `sonde-prof report -i RAW ... -e ELF ... -o OUT`:
 * raw profiles (uapi/profile_raw.h) saved to files, to pprof, folded
 * stacks, a flame graph or the annotated text report; and the steps
 * record takes too (tools/cmd/report.h).
 *
 * One pipeline whatever the text's origin: raw text -> sp_profile_add_raw ->
 * build-id check -> symbolize -> one writer chosen by OUT's extension.
 *
 * Exit: 0 ok, 2 usage, input or output error. Output goes to a temporary
 * file renamed over OUT only once it is complete, so an error never
 * leaves a partial OUT behind.
 * Host pipeline: prefix sp_. */
#define _GNU_SOURCE
#include "tools/cmd/report.h"
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/cmd/cmd.h"
#include "tools/common/toolio.h"
#include "tools/output/flame_json.h"
#include "tools/output/folded.h"
#include "tools/output/html.h"
#include "tools/output/pprof.h"
#include "tools/output/svg.h"
#include "tools/output/text.h"
#include "uapi/udpshell.h"

static const char *prog = SP_CMD_PROG;

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

void sp_cmd_usage(FILE *f)
{
    fprintf(f,
        "usage: %s record [-d WINDOW] [-p PID] [-t SECS] [--trace] [-k KEYFILE [--id ID ...]] [-r RAW ...] -e ELF [-e ELF ...]\n"
        "                        [--sample K --period P] [--stats FILE]\n"
        "                        -o OUT [--per-kernel] HOST[:PORT] [HOST[:PORT] ...]\n"
        "       %s report -i RAW [-i RAW ...] -e ELF [-e ELF ...] -o OUT\n"
        "                        [--kernel NAME ...] [--per-kernel]\n"
        "       %s top [-w SECONDS] [-n ITERATIONS] [-k KEYFILE] -e ELF [-e ELF ...]\n"
        "                        HOST[:PORT] [HOST[:PORT] ...]   (see top --help)\n"
        "       %s diff BASE NEW [-e ELF [-e ELF]] -o OUT [--force]   (see diff --help)\n"
        "       %s serve [-l ADDR:PORT] [--public] [-k KEYFILE] -e ELF [-e ELF ...]\n"
        "                        HOST[:PORT] [HOST[:PORT] ...]   (see serve --help)\n"
        "       %s query [--store S] --from T [--to T] -e ELF -o OUT   (see query --help)\n"
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
        "  --lock         who held the locks tasks waited for (`profile lock`, -d\n"
        "                 1-%d ms): pprof's contentions/count and delay/nanoseconds\n"
        "                 as Go's mutex profile, each chain's lock as its root frame\n"
        "                 ([mutex NAME], [spin NAME]) above the holder's chain at\n"
        "                 its release; folded and svg in microseconds\n"
        "  --wall         on-CPU samples and off-CPU time together, always streamed\n"
        "                 (`profile wall stream`): pprof's wall/nanoseconds\n"
        "  --trace        a scheduling trace (`trace MS raw`, -d 1-%d ms): every\n"
        "                 switch, wake, interrupt and CPU sample in time order, the\n"
        "                 samples named from the ELF; -o .txt writes the shell's\n"
        "                 timehist and per-CPU summary (docs/sonde-prof.md)\n"
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
        prog, prog, prog, prog, prog, prog, prog, USHP_DEFAULT_PORT, SP_RECORD_MS_MAX, SP_RECORD_MS_MAX,
        SP_RECORD_MS_MAX, SP_RECORD_MS_MAX);
}

int sp_cmd_die_usage(const char *what, const char *arg)
{
    fprintf(stderr, "%s: %s%s%s\n", prog, what, arg ? arg : "",
            " (see --help)");
    return EXIT_USAGE;
}

static int pick_format(struct sp_cmd_opts *o)
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

int sp_cmd_check_elfs(struct sp_cmd_opts *o, const char *hint, const char *per)
{
    if (!o->nelfs)
        return sp_cmd_die_usage("no kernel ELF: give -e ELF", hint);
    if (!o->out)
        return sp_cmd_die_usage("no output: give -o OUT", NULL);
    if (o->nelfs != 1 && o->nelfs != o->ninputs)
        return sp_cmd_die_usage("give -e once, or once per ", per);
    return EXIT_OK;
}

int sp_cmd_check_elfs_out(struct sp_cmd_opts *o, const char *hint, const char *per)
{
    int rc = sp_cmd_check_elfs(o, hint, per);
    return rc ? rc : pick_format(o) ? EXIT_USAGE : EXIT_OK;
}

int sp_cmd_add_arg(const char **v, unsigned *n, const char *arg, const char *what)
{
    return tool_push_arg(prog, v, n, MAX_INPUTS, arg, what);
}

static int parse_report_args(int argc, char **argv, struct sp_cmd_opts *o)
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
        case 'i': bad |= sp_cmd_add_arg(o->inputs, &o->ninputs, optarg, "-i"); break;
        case 'e': bad |= sp_cmd_add_arg(o->elfs, &o->nelfs, optarg, "-e"); break;
        case 'k': bad |= sp_cmd_add_arg(o->kernels, &o->nkernels, optarg, "--kernel"); break;
        case 'o': o->out = optarg; break;
        case 'K': o->per_kernel = 1; break;
        case 'h': sp_cmd_usage(stdout); exit(EXIT_OK);
        case ':': return sp_cmd_die_usage("missing value for ", argv[optind - 1]);
        default: return sp_cmd_die_usage("unknown option ", argv[optind - 1]);
        }
    }
    if (bad)
        return EXIT_USAGE;
    if (optind < argc)
        return sp_cmd_die_usage("unexpected argument ", argv[optind]);
    if (!o->ninputs)
        return sp_cmd_die_usage("no input: give -i RAW", NULL);
    if (o->nkernels && o->nkernels != o->ninputs)
        return sp_cmd_die_usage("give --kernel once per -i, or not at all", NULL);
    return sp_cmd_check_elfs_out(o, "", "-i");
}

/* ---- the pipeline ---------------------------------------------------- */

int sp_cmd_map_for(struct sp_profile *p, struct sp_cmd_elfs *es, const char *path,
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

int sp_cmd_add_text(struct sp_profile *p, struct sp_cmd_elfs *es, const char *text,
                    size_t len, const char *origin, const char *kernel,
                    const char *elf)
{
    unsigned map;
    char err[SP_ERR_MAX];
    if (sp_cmd_map_for(p, es, elf, &map))
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

static int write_format(const struct sp_profile *p, const struct sp_cmd_opts *o, FILE *f,
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

static int write_job(const struct sp_cmd_out *j, FILE *f, char *err, size_t cap)
{
    if (j->text)
        return fwrite(j->text, 1, j->len, f) == j->len ? 0 : -1;
    return write_format(j->p, j->o, f, err, cap);
}

int sp_cmd_write_file(const char *path, const struct sp_cmd_out *j)
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

int sp_cmd_finish(struct sp_profile *p, struct sp_cmd_elfs *es, const struct sp_cmd_opts *o)
{
    for (unsigned m = 0; m < p->nmaps; m++)
        sp_elf_symbolize(p, m, es->e[m]);
    sp_profile_name_unknown(p);
    /* Lock delay has its own sample types (Go's mutex profile's): it
     * cannot share a profile with samples, off-CPU time or bytes. */
    for (unsigned i = 0; sp_profile_has_kind(p, PRAW_KIND_LOCK) && i < p->ninputs; i++)
        if (p->inputs[i].pi_hdr.ph_kind != PRAW_KIND_LOCK) {
            fprintf(stderr, "%s: %s is a %s profile: a lock profile merges only with lock "
                    "profiles\n", prog, p->inputs[i].pi_origin,
                    praw_kind_name(p->inputs[i].pi_hdr.ph_kind));
            return EXIT_USAGE;
        }
    /* A wall-clock profile's CPU half, scaled to the window. */
    sp_profile_wall_fill(p);
    struct sp_cmd_out j = { p, o, NULL, 0 };
    return sp_cmd_write_file(o->out, &j) ? EXIT_USAGE : EXIT_OK;
}

int sp_report_main(int argc, char **argv)
{
    struct sp_cmd_opts o;
    memset(&o, 0, sizeof o);
    int rc = parse_report_args(argc, argv, &o);
    if (rc)
        return rc;
    struct sp_profile p;
    struct sp_cmd_elfs es = { .n = 0 };
    sp_profile_init(&p);
    for (unsigned i = 0; i < o.ninputs && rc == 0; i++) {
        char *text, err[SP_ERR_MAX];
        size_t len;
        if (sp_profile_read_file(o.inputs[i], &text, &len, err, sizeof err)) {
            fprintf(stderr, "%s: %s\n", prog, err);
            rc = EXIT_USAGE;
            break;
        }
        if (sp_cmd_add_text(&p, &es, text, len, o.inputs[i],
                     o.nkernels ? o.kernels[i] : base_name(o.inputs[i]),
                     o.elfs[o.nelfs == 1 ? 0 : i]))
            rc = EXIT_USAGE;
        free(text);
    }
    if (rc == 0)
        rc = sp_cmd_finish(&p, &es, &o);
    for (unsigned m = 0; m < es.n; m++)
        sp_elf_close(es.e[m]);
    sp_profile_free(&p);
    return rc;
}
