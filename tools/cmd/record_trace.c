/* tools/cmd/record_trace.c: `sonde-prof record --trace`'s traces, from
 * the replies to their output (tools/cmd/record_trace.h).
 *
 * Written by OUT's suffix: .txt, the shell's timehist and summary
 * (tools/output/trace_text.h). Perfetto's .pftrace, Chrome's .json and
 * the page's .html timeline are writers of their own, refused here by
 * name until they are wired in.
 * Host pipeline: prefix sp_. */
#define _GNU_SOURCE
#include "tools/cmd/record_trace.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/model/trace.h"
#include "tools/output/trace_text.h"

static const char *prog = SP_CMD_PROG;

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcmp(s + n - k, suffix) == 0;
}

int sp_record_trace_out_ok(const char *out)
{
    if (ends_with(out, ".txt"))
        return 0;
    static const char *const later[] = { ".pftrace", ".json", ".html" };
    for (size_t i = 0; i < sizeof later / sizeof *later; i++) {
        if (ends_with(out, later[i])) {
            fprintf(stderr, "%s: -o %s: unsupported output suffix for --trace in this "
                    "build (%s is not written yet; written: .txt)\n", prog, out, later[i]);
            return -1;
        }
    }
    fprintf(stderr, "%s: -o %s: unknown extension for --trace (.txt; .pftrace, .json "
            ".html to come)\n", prog, out);
    return -1;
}

/* One host's reply into t, checked against its ELF and named. */
static int trace_of(struct sp_trace *t, const struct sp_rec_host *h, const char *name,
                    const char *elf, struct sp_profile *p, struct sp_cmd_elfs *es)
{
    unsigned map;
    char err[SP_ERR_MAX];
    if (sp_cmd_map_for(p, es, elf, &map))
        return -1;
    if (sp_trace_add_raw(t, h->text, h->len, name, name, elf, err, sizeof err) ||
        sp_check_build_id(name, t->st_hdr.th_build_id, elf, p->maps[map].pm_build_id, err,
                          sizeof err)) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return -1;
    }
    /* The ELF is open once, in record's profile: its facts for the
     * trace's own map, and its names for the trace's samples. */
    struct sp_map *m = &t->st_prof.maps[t->st_map];
    const struct sp_map *open = &p->maps[map];
    memcpy(m->pm_build_id, open->pm_build_id, sizeof m->pm_build_id);
    m->pm_start = open->pm_start;
    m->pm_limit = open->pm_limit;
    m->pm_dwarf = open->pm_dwarf;
    sp_elf_symbolize(&t->st_prof, t->st_map, es->e[map]);
    return 0;
}

int sp_record_trace_finish(const struct sp_cmd_opts *o, struct sp_rec_host *hs,
                           const char (*names)[HOSTADDR_NAME_MAX], unsigned n,
                           struct sp_profile *p, struct sp_cmd_elfs *es)
{
    struct sp_trace *ts = sp_xcalloc(n ? n : 1, sizeof *ts);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc = f ? EXIT_OK : EXIT_USAGE;
    for (unsigned i = 0; i < n && rc == EXIT_OK; i++) {
        sp_trace_init(&ts[i]);
        if (trace_of(&ts[i], &hs[i], names[i], o->elfs[o->nelfs == 1 ? 0 : i], p, es))
            rc = EXIT_USAGE;
        else if ((i && fputc('\n', f) == EOF) || sp_trace_text_write(&ts[i], f))
            rc = EXIT_USAGE;
    }
    if (f && fclose(f) != 0)
        rc = EXIT_USAGE;
    /* A raw file is kept only once its trace passed every check. */
    for (unsigned i = 0; i < o->nraws && rc == EXIT_OK; i++) {
        struct sp_cmd_out j = { NULL, NULL, hs[i].text, hs[i].len };
        if (sp_cmd_write_file(o->raws[i], &j))
            rc = EXIT_USAGE;
    }
    if (rc == EXIT_OK) {
        struct sp_cmd_out j = { NULL, NULL, buf, len };
        if (sp_cmd_write_file(o->out, &j))
            rc = EXIT_USAGE;
    }
    for (unsigned i = 0; i < n; i++)
        sp_trace_free(&ts[i]);
    free(ts);
    free(buf);
    return rc;
}
