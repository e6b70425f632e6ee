/* tools/cmd/diff.c: `sonde-prof diff BASE NEW [-e ELF [-e ELF]] -o OUT
 * [--force]`: BASE and NEW loaded into one model as two inputs (raw
 * profiles against their ELFs, or pprof profiles named by their own
 * functions: tools/model/pprof_read.c), checked to compare, symbolized
 * once and written by tools/output/diff.c.
 * Host pipeline: prefix sp_. */
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "tools/cmd/cmd.h"
#include "tools/model/pprof_read.h"
#include "tools/model/sym.h"
#include "tools/output/diff.h"

#define DIFF_USAGE "usage: sonde-prof diff BASE NEW [-e ELF [-e ELF]] -o OUT [--force]\n"

static int diff_usage(const char *what, const char *arg)
{
    fprintf(stderr, "sonde-prof diff: %s%s (see sonde-prof diff --help)\n", what, arg ? arg : "");
    return 2;
}

/* A profile is named with its own kernel's ELF, or every name is wrong. */
static int diff_same_build(const char *path, const char *id, const struct sp_map *m,
                           char *err, size_t cap)
{
    if (strcmp(id, m->pm_build_id) == 0)
        return 0;
    snprintf(err, cap, "%s has build id %s but %s has %s: give the ELF of the kernel "
             "that made it (-e once per profile when they differ)", path, id, m->pm_path,
             m->pm_build_id[0] ? m->pm_build_id : "none");
    return -1;
}

/* A gzip stream's first two bytes: a .pb.gz, where a raw profile is text
 * beginning with '#'. */
static bool diff_is_pprof(const char *text, size_t len)
{
    return len >= 2 && (unsigned char)text[0] == 0x1f && (unsigned char)text[1] == 0x8b;
}

/* Loads path as input "base" or "new": a pprof profile named by its own
 * functions and lines, or a raw profile against the ELF of map m (none:
 * m is -1, and a raw profile is an error). */
static int diff_load(struct sp_profile *p, const char *path, const char *label, int m)
{
    char *text = NULL, err[SP_ERR_MAX];
    size_t len;
    int rc = sp_profile_read_file(path, &text, &len, err, sizeof err);
    if (rc == 0 && diff_is_pprof(text, len)) {
        rc = sp_pprof_read_mem(p, text, len, path, label, err, sizeof err);
    } else if (rc == 0 && m < 0) {
        snprintf(err, sizeof err, "%s is a raw profile: give -e ELF to name its addresses",
                 path);
        rc = -1;
    } else if (rc == 0) {
        rc = sp_profile_add_raw(p, text, len, path, label, (unsigned)m, err, sizeof err) ||
             diff_same_build(path, p->inputs[p->ninputs - 1].pi_hdr.ph_build_id,
                             &p->maps[m], err, sizeof err);
    }
    if (rc)
        fprintf(stderr, "sonde-prof diff: %s\n", err);
    free(text);
    return rc ? -1 : 0;
}

/* A heap profile's view, from its source: in use or allocated. */
static bool diff_heap_inuse(const struct praw_header *h)
{
    return strncmp(h->ph_source, "heap inuse", 10) == 0;
}

/* BASE and NEW compare: one kind (and for the heap one view), one build
 * unless force. 0, 1 (compare, with a warning printed), or 2. */
static int diff_comparable(const struct sp_profile *p, const char *const in[2], int force)
{
    const struct praw_header *b = &p->inputs[0].pi_hdr, *n = &p->inputs[1].pi_hdr;
    if (b->ph_kind != n->ph_kind) {
        fprintf(stderr, "sonde-prof diff: %s is a %s profile and %s a %s profile: "
                "only profiles of one kind compare\n", in[0], praw_kind_name(b->ph_kind),
                in[1], praw_kind_name(n->ph_kind));
        return 2;
    }
    if (b->ph_kind == PRAW_KIND_HEAP && diff_heap_inuse(b) != diff_heap_inuse(n)) {
        fprintf(stderr, "sonde-prof diff: %s is a heap %s profile and %s a heap %s profile: "
                "their sample types differ (inuse_* against alloc_*), only one view "
                "compares\n", in[0], diff_heap_inuse(b) ? "in-use" : "allocs", in[1],
                diff_heap_inuse(n) ? "in-use" : "allocs");
        return 2;
    }
    if (strcmp(b->ph_build_id, n->ph_build_id) != 0) {
        fprintf(stderr, "sonde-prof diff: %s: %s comes from build %s and %s from build "
                "%s: the kernels differ, so a chain may differ for that reason alone%s\n",
                force ? "warning" : "error", in[0], b->ph_build_id, in[1],
                n->ph_build_id, force ? " (compared by name, --force)" :
                "; give --force (and -e for each raw profile) to compare them by name anyway");
        return force ? 0 : 2;
    }
    return 0;
}

int sp_diff_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "force", no_argument, NULL, 'F' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *elf[2] = { 0 }, *out = NULL, *in[2] = { 0 };
    unsigned nelf = 0, nin = 0;
    int force = 0, c;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, ":e:o:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'e':
            if (nelf == 2)
                return diff_usage("-e given more than twice", NULL);
            elf[nelf++] = optarg;
            break;
        case 'o': out = optarg; break;
        case 'F': force = 1; break;
        case 'h':
            printf(DIFF_USAGE
                   "BASE and NEW are raw profiles (record -r, profile ... raw) or pprof\n"
                   "profiles (.pb.gz, as record writes them) of the same kind, either mixed.\n"
                   "  -e ELF   the kernel ELF, for raw profiles (a .pb.gz names its own\n"
                   "           frames): once for both, or BASE's then NEW's\n"
                   "  -o OUT   .txt chains by growth; .folded BASE NEW per stack\n"
                   "           (difffolded); .svg a differential flame graph (sized by\n"
                   "           NEW, red grew, blue shrank); .html the same, interactive\n"
                   "           (zoom, search, tooltips with both weights); .pb.gz NEW minus BASE for\n"
                   "           go tool pprof (BASE's samples negated, as -diff_base)\n"
                   "  --force  compare profiles of different build ids, by name\n");
            return 0;
        case ':': return diff_usage("missing value for ", argv[optind - 1]);
        default: return diff_usage("unknown option ", argv[optind - 1]);
        }
    }
    for (; optind < argc; optind++) {
        if (nin == 2)
            return diff_usage("more than two profiles: ", argv[optind]);
        in[nin++] = argv[optind];
    }
    if (nin != 2)
        return diff_usage("give BASE and NEW", NULL);
    if (!out)
        return diff_usage("no output: give -o OUT", NULL);
    if (!sp_diff_format_known(out))
        return diff_usage("unknown extension (known: .txt, .folded, .svg, .html, .pb.gz): ", out);
    struct sp_profile p;
    struct sp_elf *es[2] = { 0 };
    char err[SP_ERR_MAX] = "";
    int rc = 0;
    sp_profile_init(&p);
    for (unsigned i = 0; i < nelf && rc == 0; i++) {
        unsigned m = sp_profile_add_map(&p, elf[i]);
        if (!(es[m] = sp_elf_open(&p, m, err, sizeof err))) {
            fprintf(stderr, "sonde-prof diff: %s\n", err);
            rc = 2;
        }
    }
    /* The ELF maps come first (0, and 1 when given twice); a .pb.gz adds
     * maps of its own after them. */
    if (rc == 0 && (diff_load(&p, in[0], "base", nelf ? 0 : -1) ||
                    diff_load(&p, in[1], "new", nelf ? (int)nelf - 1 : -1)))
        rc = 2;
    if (rc == 0)
        rc = diff_comparable(&p, in, force);
    if (rc == 0) {
        for (unsigned m = 0; m < nelf; m++)
            sp_elf_symbolize(&p, m, es[m]);
        sp_profile_name_unknown(&p);
        err[0] = 0;
        if (sp_diff_write(&p, out, err, sizeof err)) {
            fprintf(stderr, "sonde-prof diff: %s\n", err);
            rc = 2;
        }
    }
    for (unsigned m = 0; m < 2; m++)
        if (es[m])
            sp_elf_close(es[m]);
    sp_profile_free(&p);
    return rc;
}
