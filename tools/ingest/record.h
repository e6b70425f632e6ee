/* tools/ingest/record.h: `sonde-prof record`'s network half: one raw
 * profile from each of several kernels over their UDP shells, all over
 * the same window, with the protocol code sonde-sh uses
 * (tools/common/ushell_client.c), and the checks every reply must pass before
 * the report pipeline sees it. Apart from sockets, so that host tests
 * drive it with fake kernels and a fake clock.
 * Host pipeline: prefix sp_. */
#pragma once
#include <stddef.h>
#include <stdio.h>
#include "tools/common/ushell_client.h"

#define SP_RECORD_MS_MIN 1           /* the kernel's window limits (`profile`) */
#define SP_RECORD_MS_MAX 2000
#define SP_RECORD_CMD_MAX 64

struct sp_rec_host {
    /* The caller fills io.send and io.now_ms, seq, timeout_ms, peer (the
     * HOST:PORT that labels this kernel's samples), prog and err;
     * sp_record_collect sets out. */
    struct ushc c;
    char *text;                 /* the reply (malloc'd, NUL-terminated) */
    size_t len;
    int rc;                     /* USHC_EXIT_*: 0 only for a raw profile */
};

/* What record asks the kernels for: a CPU window, the heap in use now,
 * or the allocations of a window (docs/profiling.md). */
enum sp_record_what { SP_RECORD_CPU, SP_RECORD_HEAP, SP_RECORD_ALLOCS, SP_RECORD_OFF,
                      SP_RECORD_LOCK, SP_RECORD_TRACE };
/* "profile MS WHO raw", WHO a pid or "all"; "profile heap raw";
 * "profile allocs MS WHO raw"; "profile off MS WHO raw"; "profile
 * lock MS WHO raw"; or (a scheduling trace, every task) "trace MS raw". */
void sp_record_command(char *buf, size_t cap, unsigned ms, const char *who);
void sp_record_command_what(char *buf, size_t cap, enum sp_record_what what, unsigned ms,
                            const char *who);

/* Runs cmd on every host at once and checks each reply: a reply that is
 * not a raw profile (`profile: busy`, an error of the kernel's) is that
 * kernel saying no (USHC_EXIT_REFUSED), reported with what it said.
 * Returns the worst status over the hosts (2 over 1 over 0); every
 * failing host has its own message on its c.err. */
int sp_record_collect(const struct ushc_mux *m, struct sp_rec_host *hs,
                        unsigned n, const char *cmd);
/* The same for replies that begin with magic (uapi/trace_raw.h's
 * TRAW_MAGIC: a raw trace); sp_record_collect is this with PRAW_MAGIC. */
int sp_record_collect_as(const struct ushc_mux *m, struct sp_rec_host *hs, unsigned n,
                         const char *cmd, const char *magic);
void sp_record_free(struct sp_rec_host *hs, unsigned n);

/* The profile must come from the kernel the ELF is: 0, or -1 with err
 * naming both build ids (every name would be wrong otherwise). */
int sp_check_build_id(const char *origin, const char *profile_id,
                        const char *elf, const char *elf_id,
                        char *err, size_t errcap);
