/* tools/cmd/record_trace.c: `sonde-prof record --trace`'s traces, from
 * the replies to their output (tools/cmd/record_trace.h).
 *
 * Written by OUT's suffix: .txt, the shell's timehist and summary
 * (tools/output/trace_text.h), each kernel's in turn; .pftrace,
 * Perfetto's trace format (tools/output/trace_pftrace.h); .json, Chrome's
 * trace-event JSON (tools/output/trace_json.h); .html, the trace's page
 * around that JSON (tools/output/html.h). The last three hold one
 * kernel's trace. Past SP_RECORD_MS_MAX the traces come by `trace
 * stream` (tools/ingest/trace_stream.h) and are written the same way.
 * Host pipeline: prefix sp_. */
#define _GNU_SOURCE
#include "tools/cmd/record_trace.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tools/ingest/trace_stream.h"
#include "tools/model/trace.h"
#include "tools/output/html.h"
#include "tools/output/trace_json.h"
#include "tools/output/trace_pftrace.h"
#include "tools/output/trace_text.h"

static const char *prog = SP_CMD_PROG;

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcmp(s + n - k, suffix) == 0;
}

int sp_record_trace_out_ok(const char *out, unsigned n)
{
    static const char *const known[] = { ".txt", ".pftrace", ".json", ".html" };
    for (size_t i = 0; i < sizeof known / sizeof *known; i++) {
        if (!ends_with(out, known[i]))
            continue;
        if (i && n != 1) {
            fprintf(stderr, "%s: -o %s holds one kernel's trace: give one HOST (%u given), or "
                    "-o FILE.txt for each in turn\n", prog, out, n);
            return -1;
        }
        return 0;
    }
    fprintf(stderr, "%s: -o %s: unknown extension for --trace (.txt, .pftrace, .json, .html)\n",
            prog, out);
    return -1;
}

/* ts[0 .. n) written to OUT by its suffix: 0, or -1 said. */
static int write_traces(const char *out, const struct sp_trace *ts, unsigned n)
{
    bool text = ends_with(out, ".txt");
    if (!text && n != 1) {
        fprintf(stderr, "%s: -o %s holds one kernel's trace: give one HOST (%u given), or "
                "-o FILE.txt for each in turn\n", prog, out, n);
        return -1;
    }
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc = f ? 0 : -1;
    for (unsigned i = 0; text && rc == 0 && i < n; i++)
        if ((i && fputc('\n', f) == EOF) || sp_trace_text_write(&ts[i], f))
            rc = -1;
    if (!text && rc == 0 && ends_with(out, ".pftrace"))
        rc = sp_trace_pftrace_write(&ts[0], f);
    else if (!text && rc == 0 && ends_with(out, ".json"))
        rc = sp_trace_json_write(&ts[0], f);
    else if (!text && rc == 0) {
        /* The page holds the JSON the .json would: written first, then
         * the page around it. */
        char *json = NULL;
        size_t jlen = 0;
        FILE *j = open_memstream(&json, &jlen);
        char title[200];
        snprintf(title, sizeof title, "sonde trace: %s, %u ms", ts[0].st_kernel,
                 ts[0].st_hdr.th_ms);
        /* Closed whatever the write did: the stream's buffer is ours. */
        int wrc = j ? sp_trace_json_write(&ts[0], j) : -1;
        if (j && fclose(j) != 0)
            wrc = -1;
        rc = wrc || sp_html_write_trace(f, title, json) ? -1 : 0;
        free(json);
    }
    if (f && fclose(f) != 0)
        rc = -1;
    if (rc == 0) {
        struct sp_cmd_out o = { NULL, NULL, buf, len };
        rc = sp_cmd_write_file(out, &o) ? -1 : 0;
    } else {
        fprintf(stderr, "%s: -o %s: the trace could not be written\n", prog, out);
    }
    free(buf);
    return rc;
}

/* With rc EXIT_OK, ts[0 .. n) written to OUT; then freed. An exit status. */
static int write_free(const char *out, struct sp_trace *ts, unsigned n, int rc)
{
    if (rc == EXIT_OK && write_traces(out, ts, n))
        rc = EXIT_USAGE;
    for (unsigned i = 0; i < n; i++)
        sp_trace_free(&ts[i]);
    free(ts);
    return rc;
}

/* t's samples named with its ELF, which record opened (p's map). */
static void name_samples(struct sp_trace *t, const struct sp_profile *p, unsigned map,
                         struct sp_cmd_elfs *es)
{
    /* The ELF is open once, in record's profile: its facts for the
     * trace's own map, and its names for the trace's samples. */
    struct sp_map *m = &t->st_prof.maps[t->st_map];
    const struct sp_map *open = &p->maps[map];
    memcpy(m->pm_build_id, open->pm_build_id, sizeof m->pm_build_id);
    m->pm_start = open->pm_start;
    m->pm_limit = open->pm_limit;
    m->pm_dwarf = open->pm_dwarf;
    sp_elf_symbolize(&t->st_prof, t->st_map, es->e[map]);
    sp_profile_name_unknown(&t->st_prof);
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
    name_samples(t, p, map, es);
    return 0;
}

int sp_record_trace_finish(const struct sp_cmd_opts *o, struct sp_rec_host *hs,
                           const char (*names)[HOSTADDR_NAME_MAX], unsigned n,
                           struct sp_profile *p, struct sp_cmd_elfs *es)
{
    struct sp_trace *ts = sp_xcalloc(n ? n : 1, sizeof *ts);
    int rc = EXIT_OK;
    for (unsigned i = 0; i < n; i++)
        sp_trace_init(&ts[i]);
    for (unsigned i = 0; i < n && rc == EXIT_OK; i++)
        if (trace_of(&ts[i], &hs[i], names[i], o->elfs[o->nelfs == 1 ? 0 : i], p, es))
            rc = EXIT_USAGE;
    /* A raw file is kept only once its trace passed every check. */
    for (unsigned i = 0; i < o->nraws && rc == EXIT_OK; i++) {
        struct sp_cmd_out j = { NULL, NULL, hs[i].text, hs[i].len };
        if (sp_cmd_write_file(o->raws[i], &j))
            rc = EXIT_USAGE;
    }
    return write_free(o->out, ts, n, rc);
}

int sp_record_trace_streamed(const struct sp_cmd_opts *o, const struct sp_collect *c,
                             struct sp_trace_gather *g, const uint64_t *covered_ms,
                             struct sp_profile *p, struct sp_cmd_elfs *es)
{
    struct sp_trace *ts = sp_xcalloc(c->n ? c->n : 1, sizeof *ts);
    unsigned n = 0;
    int rc = EXIT_OK;
    for (unsigned i = 0; i < c->n && rc == EXIT_OK; i++) {
        const struct sp_collect_kernel *k = &c->k[i];
        const char *elf = o->elfs[o->nelfs == 1 ? 0 : i];
        unsigned map;
        char err[SP_ERR_MAX] = "";
        if (!k->s.have_meta) {
            fprintf(stderr, "%s: kernel %s: no META came (no build id to check): left out\n",
                    prog, k->name);
            continue;
        }
        struct sp_trace *t = &ts[n];
        sp_trace_init(t);
        uint64_t ms = covered_ms[i] > UINT32_MAX ? UINT32_MAX : covered_ms[i];
        if (sp_cmd_map_for(p, es, elf, &map) ||
            sp_trace_gather_build(&g[i], &k->s, (uint32_t)ms, k->name, k->name, elf, t, err,
                                  sizeof err) ||
            sp_check_build_id(k->name, t->st_hdr.th_build_id, elf, p->maps[map].pm_build_id,
                              err, sizeof err)) {
            if (err[0])
                fprintf(stderr, "%s: %s\n", prog, err);
            sp_trace_free(t);
            rc = EXIT_USAGE;
            break;
        }
        name_samples(t, p, map, es);
        uint64_t dropped = 0;
        for (unsigned cpu = 0; cpu < t->st_hdr.th_cpus; cpu++)
            dropped += t->st_hdr.th_dropped[cpu];
        fprintf(stderr, "%s: kernel %s: %zu events in %" PRIu64 " ms, %" PRIu64 " dropped in "
                "the kernel, %" PRIu64 " lost on the wire%s\n", prog, k->name, t->st_nev, ms,
                dropped, k->s.lost_records, k->s.end_missing ? " (at least: no END came)" : "");
        n++;
    }
    if (rc == EXIT_OK && !n) {
        fprintf(stderr, "%s: no kernel's trace came: nothing to write\n", prog);
        rc = EXIT_USAGE;
    }
    return write_free(o->out, ts, n, rc);
}
