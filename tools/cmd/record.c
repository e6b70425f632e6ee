/* tools/cmd/record.c: `sonde-prof record [-d WINDOW] ... -e ELF ... -o OUT
 * HOST[:PORT] ...`: running kernels profiled over their UDP shells, every
 * HOST over the same window, into one output with every sample labelled
 * with its kernel (HOST:PORT).
 *
 * A window up to SP_RECORD_MS_MAX is `profile MS PID|all raw` on every
 * HOST at once (tools/ingest/record.c, with sonde-sh's protocol code),
 * each reply fed to report's steps (tools/cmd/report.h): add_text, then
 * finish. A longer window is a stream (tools/ingest/collect.c, in rounds
 * with --sample: tools/ingest/fleet.c), its records made into a raw
 * profile per kernel (tools/ingest/agg.c) and fed to the same steps.
 *
 * Exit: 0 ok, 1 the remote said no (a kernel refused or answered
 * `profile: busy`), 2 usage, input or protocol error (no answer in time
 * included).
 * Host pipeline: prefix sp_. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tools/cmd/cmd.h"
#include "tools/cmd/record_trace.h"
#include "tools/cmd/report.h"
#include "tools/common/hostaddr.h"
#include "tools/common/toolio.h"
#include "tools/ingest/agg.h"
#include "tools/ingest/collect.h"
#include "tools/ingest/fleet.h"
#include "tools/ingest/record.h"
#include "uapi/trace_raw.h"
#include "uapi/udpshell.h"

/* Windows up to SP_RECORD_MS_MAX are one `profile ... raw` reply;
 * longer ones are a stream (docs/continuous.md), up to a day. */
#define SP_STREAM_WINDOW_MAX_MS 86400000u
#define STREAM_SILENT_MS 3000   /* a streaming kernel silent this long is given up */
#define STREAM_END_WAIT_MS 2000 /* past the window: the kernel's own END */

static const char *prog = SP_CMD_PROG;

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
static int fleet_args_bad(const struct sp_cmd_opts *o, bool heap)
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

static int parse_record_args(int argc, char **argv, struct sp_cmd_opts *o)
{
    static const struct option longopts[] = {
        { "per-kernel", no_argument, NULL, 'K' },
        { "heap", no_argument, NULL, 'H' },
        { "allocs", no_argument, NULL, 'A' },
        { "off", no_argument, NULL, 'O' },
        { "wall", no_argument, NULL, 'W' },
        { "lock", no_argument, NULL, 'L' },
        { "trace", no_argument, NULL, 'R' },
        { "id", required_argument, NULL, 'I' },
        { "sample", required_argument, NULL, 'S' },
        { "period", required_argument, NULL, 'P' },
        { "stats", required_argument, NULL, 'T' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c, bad = 0, heap = 0, allocs = 0, off = 0, lock = 0, trace = 0;
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
        case 'L': lock = 1; break;
        case 'R': trace = 1; break;
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
        case 'r': bad |= sp_cmd_add_arg(o->raws, &o->nraws, optarg, "-r"); break;
        case 'I': bad |= sp_cmd_add_arg(o->ids, &o->nids, optarg, "--id"); break;
        case 'e': bad |= sp_cmd_add_arg(o->elfs, &o->nelfs, optarg, "-e"); break;
        case 'o': o->out = optarg; break;
        case 'K': o->per_kernel = 1; break;
        case 'h': sp_cmd_usage(stdout); exit(EXIT_OK);
        case ':': return sp_cmd_die_usage("missing value for ", argv[optind - 1]);
        default: return sp_cmd_die_usage("unknown option ", argv[optind - 1]);
        }
    }
    for (; optind < argc; optind++)
        bad |= sp_cmd_add_arg(o->inputs, &o->ninputs, argv[optind], "HOSTs");
    if (bad)
        return EXIT_USAGE;
    if (!o->ninputs)
        return sp_cmd_die_usage("no kernel to profile: give HOST[:PORT]", NULL);
    if (heap + allocs + off + o->wall + lock + trace > 1)
        return sp_cmd_die_usage("give one of --heap, --allocs, --off, --wall, --lock and "
                                "--trace", NULL);
    /* Past one `trace MS raw` window the trace is a stream, whose events
     * the raw grammar's window (ms= at most 2000) cannot hold. */
    if (trace && o->ms > SP_RECORD_MS_MAX && o->nraws)
        return sp_cmd_die_usage("-r keeps a window's raw trace (-d up to 2000 ms): a longer "
                                "trace is a stream, which has none", NULL);
    if (trace && o->stats)
        return sp_cmd_die_usage("--stats is a profile stream's accounting: not with --trace "
                                "(the trace's loss is said on stderr)", NULL);
    if (trace && o->pid_given)
        return sp_cmd_die_usage("--trace is every task's switches: -p does not apply", NULL);
    if (o->wall && o->nraws)
        return sp_cmd_die_usage("--wall is two profiles (CPU and off-CPU): -r does not apply", NULL);
    if (heap && o->pid_given)
        return sp_cmd_die_usage("--heap is every task's blocks in use: -p does not apply", NULL);
    o->what = heap ? SP_RECORD_HEAP : allocs ? SP_RECORD_ALLOCS
            : off || o->wall ? SP_RECORD_OFF : lock ? SP_RECORD_LOCK
            : trace ? SP_RECORD_TRACE : SP_RECORD_CPU;
    if (fleet_args_bad(o, heap))
        return EXIT_USAGE;
    if (heap)
        o->ms = 0;              /* no window: only the slack to wait */
    if (o->nraws && o->nraws != o->ninputs)
        return sp_cmd_die_usage("give -r once per HOST in order, or not at all", NULL);
    if (o->nids && o->nids != o->ninputs)
        return sp_cmd_die_usage("give --id once per HOST in order (- for a kernel without "
                         "ushid=), or not at all", NULL);
    if (o->nids && !o->keyfile)
        return sp_cmd_die_usage("--id names the kernels' ushid=, which only a key (-k) uses", NULL);
    if (trace) {
        int rc = sp_cmd_check_elfs(o, " (e.g. build/x86_64/kernel.elf)", "HOST in order");
        return rc ? rc : sp_record_trace_out_ok(o->out, o->ninputs) ? EXIT_USAGE : EXIT_OK;
    }
    return sp_cmd_check_elfs_out(o, " (e.g. build/x86_64/kernel.elf)", "HOST in order");
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
    /* --trace: each kernel's events, named from its stream's META */
    const struct sp_collect *c;
    struct sp_trace_gather tg[MAX_INPUTS];
};

static void stream_record(void *ctx, unsigned kernel, uint16_t cpu,
                          const struct pstr_record *r)
{
    struct stream_rec *sr = ctx;
    if (r->kind == PSTR_KIND_TRACE)
        sp_trace_gather_add(&sr->tg[kernel], &sr->c->k[kernel].s, cpu, r);
    else
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
                         struct sp_cmd_elfs *es, const struct sp_cmd_opts *o, char **texts,
                         size_t *lens, const struct sp_fleet_total *t)
{
    unsigned added = 0;
    for (unsigned i = 0; i < c->n; i++) {
        struct sp_collect_kernel *k = &c->k[i];
        /* Off-CPU time as its own raw profile; a wall stream's CPU
         * samples as another, the same kernel's (texts[MAX_INPUTS + i]);
         * an allocs stream's heap samples as a `profile allocs` window's. */
        unsigned kind = o->what == SP_RECORD_OFF      ? PRAW_KIND_OFFCPU
                      : o->what == SP_RECORD_ALLOCS ? PRAW_KIND_HEAP
                      : o->what == SP_RECORD_LOCK   ? PRAW_KIND_LOCK : PRAW_KIND_CPU;
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
            if (sp_cmd_add_text(p, es, texts[at], lens[at], k->name, k->name,
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

static int write_stats(const struct sp_cmd_opts *o, const struct sp_collect *c,
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

static int record_stream(const struct sp_cmd_opts *o, const uint8_t *const *keys, struct sp_profile *p,
                         struct sp_cmd_elfs *es)
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
              : o->what == SP_RECORD_ALLOCS ? "allocs" : o->what == SP_RECORD_LOCK ? "lock"
              : o->what == SP_RECORD_TRACE ? "trace" : NULL,
    };
    for (unsigned i = 0; i < o->ninputs; i++) {
        sp_agg_init(&sr.agg[i]);
        sp_trace_gather_init(&sr.tg[i]);
    }
    sr.c = &c;
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
    if (rc == EXIT_OK && o->what == SP_RECORD_TRACE) {
        uint64_t covered[MAX_INPUTS];
        for (unsigned i = 0; i < o->ninputs; i++)
            covered[i] = t[i].covered_ms;
        rc = sp_record_trace_streamed(o, &c, sr.tg, covered, p, es);
        for (unsigned i = 0; i < o->ninputs; i++) {
            sp_trace_gather_free(&sr.tg[i]);
            sp_agg_free(&sr.agg[i]);
        }
        free(t);
        sp_collect_close(&c);
        return rc;
    }
    if (rc == EXIT_OK)
        rc = stream_inputs(&c, &sr, p, es, o, texts, lens, t);
    if (rc == EXIT_OK && o->stats)
        rc = write_stats(o, &c, t);
    for (unsigned i = 0; i < o->nraws && rc == 0; i++) {
        if (!texts[i])
            continue;
        struct sp_cmd_out j = { NULL, NULL, texts[i], lens[i] };
        if (sp_cmd_write_file(o->raws[i], &j))
            rc = EXIT_USAGE;
    }
    if (rc == EXIT_OK)
        rc = sp_cmd_finish(p, es, o);
    for (unsigned i = 0; i < o->ninputs; i++) {
        sp_agg_free(&sr.agg[i]);
        sp_trace_gather_free(&sr.tg[i]);
        free(texts[i]);
        free(texts[MAX_INPUTS + i]);
        texts[i] = texts[MAX_INPUTS + i] = NULL;
    }
    free(t);
    sp_collect_close(&c);
    return rc;
}

int sp_record_main(int argc, char **argv)
{
    struct sp_cmd_opts o;
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
        struct sp_cmd_elfs es = { .n = 0 };
        sp_profile_init(&p);
        /* The ELFs first: a wrong path must not cost a stream. */
        for (unsigned i = 0; i < o.ninputs && rc == 0; i++) {
            unsigned map;
            if (sp_cmd_map_for(&p, &es, o.elfs[o.nelfs == 1 ? 0 : i], &map))
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
    struct sp_cmd_elfs es = { .n = 0 };
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
            if (sp_cmd_map_for(&p, &es, o.elfs[o.nelfs == 1 ? 0 : i], &map))
                rc = EXIT_USAGE;
        }
        hostaddr_name(o.inputs[i], USHP_DEFAULT_PORT, names[i], sizeof names[i]);
    }
    uint32_t seq;
    if (getrandom(&seq, sizeof seq, 0) != sizeof seq)
        seq = (uint32_t)time(NULL) ^ (uint32_t)getpid() << 16;
    for (unsigned i = 0; i < sk.n; i++) {
        hs[i].c = (struct ushc){
            .io = { &sk.fd[i], sock_send, NULL, tool_clock_ms },
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
        struct ushc_mux m = { &sk, socks_recv_any, tool_clock_ms };
        rc = sp_record_collect_as(&m, hs, o.ninputs, cmd,
                                  o.what == SP_RECORD_TRACE ? TRAW_MAGIC : PRAW_MAGIC);
    }
    if (o.what == SP_RECORD_TRACE) {
        if (rc == 0)
            rc = sp_record_trace_finish(&o, hs, names, o.ninputs, &p, &es);
    } else {
        for (unsigned i = 0; i < o.ninputs && rc == 0; i++)
            if (sp_cmd_add_text(&p, &es, hs[i].text, hs[i].len, names[i], names[i],
                                o.elfs[o.nelfs == 1 ? 0 : i]))
                rc = EXIT_USAGE;
        /* The raw texts are kept only once they passed every check: a
         * file under RAW is always one that `report` reads. */
        for (unsigned i = 0; i < o.nraws && rc == 0; i++) {
            struct sp_cmd_out j = { NULL, NULL, hs[i].text, hs[i].len };
            if (sp_cmd_write_file(o.raws[i], &j))
                rc = EXIT_USAGE;
        }
        if (rc == 0)
            rc = sp_cmd_finish(&p, &es, &o);
    }
    sp_record_free(hs, sk.n);
    for (unsigned i = 0; i < sk.n; i++)
        close(sk.fd[i]);
    for (unsigned m = 0; m < es.n; m++)
        sp_elf_close(es.e[m]);
    sp_profile_free(&p);
    return rc;
}
