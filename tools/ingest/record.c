/* tools/ingest/record.c: raw profiles from several kernels at once
 * (tools/ingest/record.h).
 * Host pipeline: prefix sp_. */
#define _GNU_SOURCE
#include "tools/ingest/record.h"
#include <stdlib.h>
#include <string.h>
#include "uapi/profile_raw.h"

void sp_record_command(char *buf, size_t cap, unsigned ms, const char *who)
{
    snprintf(buf, cap, "profile %u %s raw", ms, who);
}

void sp_record_command_what(char *buf, size_t cap, enum sp_record_what what, unsigned ms,
                            const char *who)
{
    if (what == SP_RECORD_HEAP)
        snprintf(buf, cap, "profile heap raw");
    else if (what == SP_RECORD_ALLOCS)
        snprintf(buf, cap, "profile allocs %u %s raw", ms, who);
    else if (what == SP_RECORD_OFF)
        snprintf(buf, cap, "profile off %u %s raw", ms, who);
    else if (what == SP_RECORD_LOCK)
        snprintf(buf, cap, "profile lock %u %s raw", ms, who);
    else if (what == SP_RECORD_TRACE)
        snprintf(buf, cap, "trace %u raw", ms);
    else
        sp_record_command(buf, cap, ms, who);
}

/* A reply that is not a raw profile is the kernel's answer in words:
 * quote its first line (at most 200 bytes) as what it said. */
static int refused(struct sp_rec_host *h)
{
    size_t n = strcspn(h->text, "\n");
    if (n > 200)
        n = 200;
    if (h->len == 0)
        fprintf(h->c.err, "%s: %s answered with nothing instead of a raw profile\n",
                h->c.prog, h->c.peer);
    else
        fprintf(h->c.err, "%s: %s said: %.*s\n", h->c.prog, h->c.peer, (int)n, h->text);
    return USHC_EXIT_REFUSED;
}

int sp_record_collect(const struct ushc_mux *m, struct sp_rec_host *hs,
                        unsigned n, const char *cmd)
{
    return sp_record_collect_as(m, hs, n, cmd, PRAW_MAGIC);
}

int sp_record_collect_as(const struct ushc_mux *m, struct sp_rec_host *hs, unsigned n,
                         const char *cmd, const char *magic)
{
    struct ushc **cs = calloc(n ? n : 1, sizeof *cs);
    const char **cmds = calloc(n ? n : 1, sizeof *cmds);
    int *rcs = calloc(n ? n : 1, sizeof *rcs);
    if (!cs || !cmds || !rcs) {
        fprintf(stderr, "sonde-prof: out of memory\n");
        exit(USHC_EXIT_PROTO);
    }
    for (unsigned i = 0; i < n; i++) {
        hs[i].text = NULL;
        hs[i].len = 0;
        hs[i].c.out = open_memstream(&hs[i].text, &hs[i].len);
        if (!hs[i].c.out) {
            fprintf(stderr, "sonde-prof: out of memory\n");
            exit(USHC_EXIT_PROTO);
        }
        cs[i] = &hs[i].c;
        cmds[i] = cmd;
    }
    ushc_run_all(m, cs, cmds, n, rcs);
    int worst = USHC_EXIT_OK;
    for (unsigned i = 0; i < n; i++) {
        fclose(hs[i].c.out);    /* text and len are final from here */
        hs[i].c.out = NULL;
        hs[i].rc = rcs[i];
        if (hs[i].rc == USHC_EXIT_OK &&
            strncmp(hs[i].text, magic, strlen(magic)) != 0)
            hs[i].rc = refused(&hs[i]);
        if (hs[i].rc == USHC_EXIT_PROTO || (hs[i].rc && worst == USHC_EXIT_OK))
            worst = hs[i].rc;
    }
    free(cs);
    free(cmds);
    free(rcs);
    return worst;
}

void sp_record_free(struct sp_rec_host *hs, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        free(hs[i].text);
        hs[i].text = NULL;
    }
}

int sp_check_build_id(const char *origin, const char *profile_id,
                        const char *elf, const char *elf_id,
                        char *err, size_t errcap)
{
    if (strcmp(profile_id, elf_id) == 0)
        return 0;
    snprintf(err, errcap, "build id mismatch: %s was recorded on a kernel with "
             "build id %s, but %s has build id %s", origin, profile_id, elf, elf_id);
    return -1;
}
