/* tools/cmd/report.h: `sonde-prof report`'s steps, which `record` takes
 * too once its kernels answered: the options both parse, the ELFs opened
 * once per build, a raw text checked against its ELF and added, and the
 * output written (symbolized, in the format OUT's extension names, through
 * a temporary file renamed over OUT once complete).
 * Host pipeline: prefix sp_. */
#pragma once
#include <stdio.h>
#include "tools/ingest/record.h"
#include "tools/model/model.h"
#include "tools/model/sym.h"

enum { EXIT_OK = 0, EXIT_REFUSED = 1, EXIT_USAGE = 2 };

/* A fleet of a thousand kernels and more is one record (bench/fleet.py). */
#define MAX_INPUTS 4096

/* Every message's prefix. */
#define SP_CMD_PROG "sonde-prof"

enum format { FMT_FOLDED, FMT_PPROF, FMT_SVG, FMT_TXT, FMT_HTML };

struct sp_cmd_opts {
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

/* sonde-prof's usage: record's and report's options, the others' lines. */
void sp_cmd_usage(FILE *f);
/* "sonde-prof: WHAT ARG (see --help)" on stderr; EXIT_USAGE. */
int sp_cmd_die_usage(const char *what, const char *arg);
/* What report and record check alike once their inputs are known: the
 * ELFs (one for all, or one per input: per names an input, hint follows
 * the message for no ELF), the output and its format. */
int sp_cmd_check_elfs_out(struct sp_cmd_opts *o, const char *hint, const char *per);
/* The same without the output's format (a trace's are its own). */
int sp_cmd_check_elfs(struct sp_cmd_opts *o, const char *hint, const char *per);
/* A repeatable option's value kept in v: 0, or -1 said. */
int sp_cmd_add_arg(const char **v, unsigned *n, const char *arg, const char *what);

struct sp_cmd_elfs {
    struct sp_elf *e[MAX_INPUTS];
    unsigned n;
};

/* The map of an ELF path, opened on first use (a second path to a build
 * already open is that build's map): 0 and *map, or -1 said. */
int sp_cmd_map_for(struct sp_profile *p, struct sp_cmd_elfs *es, const char *path,
                   unsigned *map);
/* Adds one raw text; the ELF's build id must be the one the kernel that
 * printed the text was built with, or every name would be wrong. 0, or
 * -1 said. */
int sp_cmd_add_text(struct sp_profile *p, struct sp_cmd_elfs *es, const char *text,
                    size_t len, const char *origin, const char *kernel, const char *elf);

struct sp_cmd_out {
    const struct sp_profile *p;       /* a profile in o->fmt ... */
    const struct sp_cmd_opts *o;
    const char *text;           /* ... or this text as it is */
    size_t len;
};

/* Writes path through a temporary file in the same directory, so the
 * rename is atomic and an error leaves no partial file: 0, or -1 said. */
int sp_cmd_write_file(const char *path, const struct sp_cmd_out *j);
/* Names every address and writes OUT: what follows sp_cmd_add_text for
 * every input, whether the text came from a file (report) or a live
 * shell. An exit status. */
int sp_cmd_finish(struct sp_profile *p, struct sp_cmd_elfs *es, const struct sp_cmd_opts *o);
