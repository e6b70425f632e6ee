/* tools/cmd/top.c: `sonde-prof top`, a live view of the hottest
 * kernel functions over the last W seconds.
 *
 * One loop, whatever feeds it: every pass takes what the feeds have
 * (non-blocking), moves the window to now, draws once a second or after
 * a key, and waits at most TICK_MS for a key. Sample times are the
 * host's monotonic clock when the loop took them, so every kernel's
 * seconds are the user's seconds.
 *
 * Host pipeline: prefix sp_. */
#define _GNU_SOURCE
#include "tools/cmd/cmd.h"
#include <curses.h>
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tools/ingest/collect.h"
#include "tools/model/model.h"
#include "tools/ingest/record.h"
#include "tools/model/sym.h"
#include "tools/model/top.h"
#include "tools/output/top_view.h"
#include "tools/common/ushell_client.h"
#include "tools/common/toolio.h"
#include "uapi/profile_raw.h"

enum { EXIT_OK = 0, EXIT_USAGE = 2 };

#define TICK_MS     100         /* feeds are drained at least this often */
#define MAX_KERNELS SP_TOP_KERNELS_MAX
#define LIVE_SHELL_TIMEOUT_MS 5000  /* a shell silent this long: start/stop fail */
#define LIVE_SILENT_MS        3000  /* a stream silent this long is given up on */
#define LIVE_STOP_WAIT_MS     1000  /* after q: the kernels' ENDs */

static const char *prog = "sonde-prof top";

static void usage(FILE *f)
{
    fprintf(f,
        "usage: sonde-prof top [-w SECONDS] [-n ITERATIONS] [-k KEYFILE] -e ELF [-e ELF ...]\n"
        "                      HOST[:PORT] [HOST[:PORT] ...]\n"
        "       sonde-prof top [-w SECONDS] [-n ITERATIONS] -e ELF [-e ELF ...]\n"
        "                      --replay RAW [--replay RAW ...]\n"
        "\n"
        "A live view of the hottest kernel functions over the last SECONDS, refreshed\n"
        "every second: self share (the function was running), total share (it was\n"
        "on the stack), a column per kernel when there are several. Keys: q quit,\n"
        "up/down select, enter or right: the selected function's callers, left or\n"
        "esc: back. When stdout is not a terminal, the table is printed every second\n"
        "as plain lines until SIGINT, SIGTERM or ITERATIONS.\n"
        "  HOST[:PORT]    a kernel's UDP shell; PORT default 9000\n"
        "  -w SECONDS     the window, %d-%d s (default 5)\n"
        "  -n ITERATIONS  stop after this many refreshes (default: never)\n"
        "  -e ELF         the kernel ELF, once for all or once per HOST/RAW in order\n"
        "  -k KEYFILE     the shells' key (ushkey=), as for record\n"
        "  --replay RAW   a raw profile (record -r) played again and again at its\n"
        "                 own rate, as if live; for trying top without a kernel\n"
        "  --off          where tasks wait instead (`profile off stream`): each\n"
        "                 interval off a CPU weighs its microseconds, its reason\n"
        "                 ([waitq NAME], [sleep], [runnable], ...) the leaf: self\n"
        "                 is time waiting for that reason, total time waiting in a\n"
        "                 function, callers what waited there (HOSTs only)\n"
        "  --lock         who made tasks wait for locks (`profile lock stream`):\n"
        "                 each wait weighs its microseconds, charged to the chain\n"
        "                 of the holder that released the lock, the lock ([mutex\n"
        "                 NAME], [spin NAME]) the leaf: self is the delay a lock\n"
        "                 caused, total the delay caused while holding in a\n"
        "                 function (HOSTs only)\n",
        SP_TOP_WINDOW_MIN, SP_TOP_WINDOW_MAX);
}

struct sp_top_opts {
    unsigned window;
    unsigned long iterations;           /* 0: until stopped */
    const char *elfs[MAX_KERNELS], *inputs[MAX_KERNELS];
    unsigned nelfs, ninputs;
    const char *keyfile;
    bool replay;
    bool off;                           /* --off: off-CPU time, not samples */
    bool lock;                          /* --lock: waits charged to holders */
};

static int bad_usage(const char *what, const char *arg)
{
    fprintf(stderr, "%s: %s%s (see --help)\n", prog, what, arg ? arg : "");
    return EXIT_USAGE;
}

static int push(const char **v, unsigned *n, const char *arg, const char *what)
{
    return tool_push_arg(prog, v, n, MAX_KERNELS, arg, what);
}

static int parse_args(int argc, char **argv, struct sp_top_opts *o)
{
    static const struct option longopts[] = {
        { "replay", required_argument, NULL, 'R' },
        { "off", no_argument, NULL, 'O' },
        { "lock", no_argument, NULL, 'L' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c, bad = 0, nreplay = 0;
    char *end;
    o->window = 5;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":w:n:e:k:h", longopts, NULL)) != -1) {
        switch (c) {
        case 'w': {
            long v = strtol(optarg, &end, 10);
            if (*optarg < '0' || *optarg > '9' || *end || v < SP_TOP_WINDOW_MIN ||
                v > SP_TOP_WINDOW_MAX) {
                fprintf(stderr, "%s: -w %s out of range (%d-%d s)\n", prog,
                        optarg, SP_TOP_WINDOW_MIN, SP_TOP_WINDOW_MAX);
                return EXIT_USAGE;
            }
            o->window = (unsigned)v;
            break;
        }
        case 'n': {
            unsigned long v = strtoul(optarg, &end, 10);
            if (*optarg < '0' || *optarg > '9' || *end || v < 1 || v > 1000000000) {
                fprintf(stderr, "%s: -n %s out of range (1-1000000000)\n", prog, optarg);
                return EXIT_USAGE;
            }
            o->iterations = v;
            break;
        }
        case 'e': bad |= push(o->elfs, &o->nelfs, optarg, "-e"); break;
        case 'k': o->keyfile = optarg; break;
        case 'R': bad |= push(o->inputs, &o->ninputs, optarg, "kernels"); nreplay++; break;
        case 'O': o->off = true; break;
        case 'L': o->lock = true; break;
        case 'h': usage(stdout); exit(EXIT_OK);
        case ':': return bad_usage("missing value for ", argv[optind - 1]);
        default: return bad_usage("unknown option ", argv[optind - 1]);
        }
    }
    o->replay = nreplay > 0;
    if (o->off && o->lock)
        return bad_usage("give one of --off and --lock", NULL);
    if ((o->off || o->lock) && o->replay)
        return bad_usage(o->off ? "--off watches live kernels: give HOSTs, not --replay"
                                : "--lock watches live kernels: give HOSTs, not --replay", NULL);
    if (o->replay && optind < argc)
        return bad_usage("give HOSTs or --replay, not both: ", argv[optind]);
    for (; optind < argc; optind++)
        bad |= push(o->inputs, &o->ninputs, argv[optind], "kernels");
    if (bad)
        return EXIT_USAGE;
    if (!o->ninputs)
        return bad_usage("no kernel to watch: give HOST[:PORT]", NULL);
    if (!o->nelfs)
        return bad_usage("no kernel ELF: give -e ELF (e.g. build/x86_64/kernel.elf)", NULL);
    if (o->nelfs != 1 && o->nelfs != o->ninputs)
        return bad_usage(o->replay ? "give -e once, or once per --replay in order"
                                   : "give -e once, or once per HOST in order", NULL);
    return EXIT_OK;
}

/* ---- naming: libdw, one location per distinct address ------------------- */

struct namer {
    struct sp_elfset set;
    char buf[32];
};
_Static_assert(MAX_KERNELS <= SP_ELFSET_KERNELS, "a kernel without an ELF slot");

/* `top --off`: an interval's reason is its leaf, a pseudo-address in the
 * last page of the address space (no kernel's code is there), the index
 * of its name ("[waitq virtio-rx]") in this table; `top --lock`'s lock
 * ("[mutex probe-m]") likewise. */
#define TOP_REASON_BASE 0xfffffffffffff000ull
#define TOP_REASONS_MAX 512
static char top_reasons[TOP_REASONS_MAX][PSTR_NAME_MAX + 16];
static unsigned top_nreasons;

static uint64_t top_reason_addr(unsigned why, const char *name)
{
    char buf[PSTR_NAME_MAX + 16];
    sp_reason_name(why, name, buf, sizeof buf);
    for (unsigned i = 0; i < top_nreasons; i++)
        if (strcmp(top_reasons[i], buf) == 0)
            return TOP_REASON_BASE + i;
    if (top_nreasons == TOP_REASONS_MAX)
        return TOP_REASON_BASE + TOP_REASONS_MAX;     /* "[other]" */
    memcpy(top_reasons[top_nreasons], buf, sizeof buf);
    return TOP_REASON_BASE + top_nreasons++;
}

/* The function the code belongs to: the outermost of an address's
 * inlined frames (top.h says why). */
static const char *namer_name(void *ctx, unsigned k, uint64_t addr, bool ret)
{
    struct namer *nm = ctx;
    if (addr >= TOP_REASON_BASE)
        return addr - TOP_REASON_BASE < top_nreasons ? top_reasons[addr - TOP_REASON_BASE]
                                                     : "[other]";
    unsigned map = nm->set.kmap[k];
    struct sp_loc *l = sp_loc_get(&nm->set.p, map, addr, ret);
    sp_elf_name(&nm->set.p, nm->set.elfs[map], l);
    if (l->pl_nframes)
        return l->pl_frames[l->pl_nframes - 1].pf_func;
    snprintf(nm->buf, sizeof nm->buf, "0x%llx", (unsigned long long)addr);
    return nm->buf;
}

/* ---- the replay feed --------------------------------------------------- */

/* A raw profile played in a loop at its own rate: samples / ms, each
 * chain's count in turn, so every full pass has the profile's shares. */
struct replay {
    unsigned kernel;
    struct praw_chain *chains;
    size_t nchains, cap;
    uint64_t samples;
    uint32_t ms;
    size_t at;                  /* the cursor: chain, and samples of it fed */
    uint32_t at_n;
    uint64_t fed, start_ns;
};

static int replay_chain(void *ctx, const struct praw_chain *c, unsigned line,
                        char *err, size_t cap)
{
    (void)line, (void)err, (void)cap;
    struct replay *r = ctx;
    r->chains = sp_grow(r->chains, &r->cap, r->nchains + 1, sizeof *r->chains);
    r->chains[r->nchains++] = *c;
    return 0;
}

static int replay_open(struct replay *r, unsigned k, const char *path,
                       struct namer *nm, struct sp_top_model *m)
{
    char *text, err[SP_ERR_MAX], why[PRAW_ERR_MAX];
    size_t len;
    struct praw_header h;
    memset(r, 0, sizeof *r);
    r->kernel = k;
    if (sp_profile_read_file(path, &text, &len, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return -1;
    }
    int rc = praw_parse(text, len, &h, replay_chain, r, why, sizeof why);
    free(text);
    if (rc) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, why);
        return -1;
    }
    const struct sp_map *map = &nm->set.p.maps[nm->set.kmap[k]];
    if (sp_check_build_id(path, h.ph_build_id, map->pm_path, map->pm_build_id,
                            err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return -1;
    }
    r->samples = h.ph_samples;
    r->ms = h.ph_ms ? h.ph_ms : 1000;
    const char *base = strrchr(path, '/');
    sp_top_set_kernel_info(m, k, base ? base + 1 : path, h.ph_source, h.ph_dropped);
    return 0;
}

/* Feeds the samples due by now_ns. */
static void replay_step(struct replay *r, struct sp_top_model *m, uint64_t now_ns)
{
    if (!r->samples)
        return;
    if (!r->start_ns)
        r->start_ns = now_ns;
    uint64_t due = (uint64_t)((double)(now_ns - r->start_ns) * (double)r->samples /
                              ((double)r->ms * 1e6));
    for (; r->fed < due; r->fed++) {
        const struct praw_chain *c = &r->chains[r->at];
        sp_top_add_sample(m, r->kernel, now_ns, c->pc_frames, c->pc_depth);
        if (++r->at_n == c->pc_count) {
            r->at_n = 0;
            r->at = (r->at + 1) % r->nchains;
        }
    }
}

/* ---- the terminal ------------------------------------------------------- */

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}


struct screen {
    bool tty;
    struct sp_top_grid g;
    struct sp_top_view v;
};

static void screen_size(struct screen *s)
{
    sp_top_grid_free(&s->g);
    sp_top_grid_init(&s->g, s->tty ? (unsigned)COLS : 0, s->tty ? (unsigned)LINES : 0);
}

static void draw(struct screen *s, const struct sp_top_model *m)
{
    sp_top_render(m, &s->v, &s->g);
    if (!s->tty) {
        unsigned last = s->g.h;
        while (last > 0 && !sp_top_grid_line(&s->g, last - 1)[0])
            last--;
        for (unsigned r = 0; r < last; r++)
            puts(sp_top_grid_line(&s->g, r));
        for (unsigned i = 0; i < s->g.w; i++)
            putchar('-');
        putchar('\n');
        fflush(stdout);
        return;
    }
    erase();
    for (unsigned r = 0; r < s->g.h && (int)r < LINES; r++) {
        if ((int)r == s->g.hl) {
            attron(A_REVERSE);
            mvprintw((int)r, 0, "%-*.*s", COLS, COLS, sp_top_grid_line(&s->g, r));
            attroff(A_REVERSE);
        } else {
            mvaddnstr((int)r, 0, sp_top_grid_line(&s->g, r), COLS);
        }
    }
    refresh();
}

/* A key from ncurses: -1 none, 0 handled, 1 quit. */
static int key(struct screen *s, const struct sp_top_model *m, int ch)
{
    unsigned rows = s->g.h > 8 ? s->g.h - 8 : 1;
    switch (ch) {
    case 'q': case 'Q': return 1;
    case KEY_UP: case 'k': sp_top_view_key(m, &s->v, SP_TOP_KEY_UP, rows); return 0;
    case KEY_DOWN: case 'j': sp_top_view_key(m, &s->v, SP_TOP_KEY_DOWN, rows); return 0;
    case KEY_PPAGE: sp_top_view_key(m, &s->v, SP_TOP_KEY_PGUP, rows); return 0;
    case KEY_NPAGE: case ' ': sp_top_view_key(m, &s->v, SP_TOP_KEY_PGDN, rows); return 0;
    case '\n': case '\r': case KEY_ENTER: case KEY_RIGHT: case 'l':
        sp_top_view_key(m, &s->v, SP_TOP_KEY_ENTER, rows);
        return 0;
    case KEY_LEFT: case 27: case KEY_BACKSPACE: case 127: case 'h':
        sp_top_view_key(m, &s->v, SP_TOP_KEY_BACK, rows);
        return 0;
    case KEY_RESIZE: screen_size(s); return 0;
    }
    return -1;
}

/* ---- the live feed: the kernels' profile streams ------------------------ */

struct live {
    struct sp_collect c;
    struct sp_top_model *m;
    const struct namer *nm;
    uint64_t now;               /* the time every record of a poll gets */
    bool off;                   /* --off: off-CPU intervals, weighed in µs */
    bool lock;                  /* --lock: waits by holder, weighed in µs */
    bool checked[MAX_KERNELS];  /* its META's build id matched the ELF */
    char err[SP_ERR_MAX];       /* why the view stops, or "" */
};

static void live_record(void *ctx, unsigned kernel, uint16_t cpu,
                        const struct pstr_record *r)
{
    (void)cpu;
    struct live *l = ctx;
    if (!l->off && !l->lock) {
        sp_top_add_sample(l->m, kernel, l->now, r->frames, r->depth);
        return;
    }
    uint64_t f[SP_TOP_DEPTH_MAX];
    unsigned d = 0;
    if (l->off && r->kind == PSTR_KIND_OFFCPU && r->why)
        f[d++] = top_reason_addr(r->why, r->name);
    else if (l->lock && r->kind == PSTR_KIND_LOCK)
        f[d++] = top_reason_addr(r->lkind == PSTR_LOCK_SPIN ? PRAW_WHY_SPIN : PRAW_WHY_MUTEX,
                                 r->name[0] ? r->name : "?");
    else
        return;
    /* The reason or lock below the chain: [reason, frames...], the chain
     * cut to fit (its outermost frame goes). Each chain frame is a return
     * address; the model names frame 0 as a pc, which is the reason. */
    for (unsigned i = 0; i < r->depth && d < SP_TOP_DEPTH_MAX; i++)
        f[d++] = r->frames[i];
    sp_top_add_weighted(l->m, kernel, l->now, f, d, (r->weight + 500) / 1000);
}

static const char *state_note(enum sp_collect_state st)
{
    switch (st) {
    case SP_COLLECT_STREAMING: case SP_COLLECT_IDLE: return "";
    case SP_COLLECT_ENDED: return " (ended)";
    case SP_COLLECT_SILENT: return " (silent)";
    case SP_COLLECT_RESTARTED: return " (restarted)";
    case SP_COLLECT_FAILED: return " (failed)";
    }
    return "";
}

/* Takes what came; the header follows each kernel's META, loss and state.
 * A META whose build id is not the ELF's stops the view: every name
 * would be wrong. */
static int live_step(struct live *l, uint64_t now)
{
    l->now = now;
    if (sp_collect_poll(&l->c, 0) < 0) {
        snprintf(l->err, sizeof l->err, "the collector's socket failed");
        return -1;
    }
    for (unsigned i = 0; i < l->c.n; i++) {
        const struct sp_collect_kernel *k = &l->c.k[i];
        char name[HOSTADDR_NAME_MAX + 16];
        snprintf(name, sizeof name, "%s%s", k->name, state_note(k->state));
        sp_top_set_kernel_info(l->m, i, name, k->s.have_meta ? k->s.meta.source : "",
                            k->s.lost_records + sp_stream_drops(&k->s));
        if (!k->s.have_meta || l->checked[i])
            continue;
        const struct sp_map *map = &l->nm->set.p.maps[l->nm->set.kmap[i]];
        if (sp_check_build_id(k->name, k->s.meta.build_id, map->pm_path,
                                map->pm_build_id, l->err, sizeof l->err))
            return -1;
        l->checked[i] = true;
    }
    return 0;
}

struct feeds {
    struct replay r[MAX_KERNELS];
    unsigned nr;
    struct live *live;
};

static int feeds_step(struct feeds *f, struct sp_top_model *m, uint64_t now)
{
    for (unsigned i = 0; i < f->nr; i++)
        replay_step(&f->r[i], m, now);
    return f->live ? live_step(f->live, now) : 0;
}

/* Sleeps until a key, a datagram or wait_ms. */
static void feeds_wait(const struct feeds *f, bool tty, int wait_ms)
{
    struct pollfd p[2];
    nfds_t n = 0;
    if (tty)
        p[n++] = (struct pollfd){ .fd = STDIN_FILENO, .events = POLLIN };
    if (f->live)
        p[n++] = (struct pollfd){ .fd = f->live->c.fd, .events = POLLIN };
    poll(n ? p : NULL, n, wait_ms);
}

static int run(struct sp_top_model *m, struct feeds *f, unsigned long iterations)
{
    struct screen s = { .tty = isatty(STDOUT_FILENO) };
    sp_top_view_init(&s.v);
    s.v.plain = !s.tty;
    if (s.tty) {
        initscr();
        cbreak();
        noecho();
        keypad(stdscr, TRUE);
        set_escdelay(25);
        curs_set(0);
        timeout(0);             /* keys are read once poll says there are some */
    }
    screen_size(&s);
    uint64_t next = tool_mono_ns();
    /* The replays start on the clock the refreshes count from, so the
     * table drawn at 1 s holds exactly one pass of each profile. */
    for (unsigned i = 0; i < f->nr; i++)
        f->r[i].start_ns = next;
    unsigned long drawn = 0;
    int rc = EXIT_OK;
    while (!stop && (!iterations || drawn < iterations)) {
        uint64_t now = tool_mono_ns();
        if (feeds_step(f, m, now)) {
            rc = EXIT_USAGE;
            break;
        }
        sp_top_advance(m, now);
        if (now >= next) {
            draw(&s, m);
            drawn++;
            next += 1000000000ull;
            if (next < now)     /* suspended a while: no burst of redraws */
                next = now + 1000000000ull;
            continue;
        }
        int wait = (int)((next - now) / 1000000) + 1;
        feeds_wait(f, s.tty, wait < TICK_MS ? wait : TICK_MS);
        int r = -1, ch;
        while (s.tty && (ch = getch()) != ERR) {
            int k = key(&s, m, ch);
            if (k == 1) {
                r = 1;
                break;
            }
            if (k == 0)
                r = 0;
        }
        if (r == 1)
            break;
        if (r == 0)
            draw(&s, m);
    }
    if (s.tty)
        endwin();
    sp_top_grid_free(&s.g);
    return rc;
}

/* Starts every kernel's stream (until stopped); the collector's messages
 * go to errs while the screen is ncurses', and to stderr after. */
static int live_open(struct live *l, const struct sp_top_opts *o, const uint8_t *key,
                     FILE *errs)
{
    struct sp_collect_opts po = {
        .prog = prog, .err = stderr, .key = key,
        .shell_timeout_ms = LIVE_SHELL_TIMEOUT_MS,
        .silent_ms = LIVE_SILENT_MS,
        .what = o->off ? "off" : o->lock ? "lock" : NULL,
    };
    l->off = o->off;
    l->lock = o->lock;
    if (sp_collect_open(&l->c, &po, o->inputs, o->ninputs, live_record, l))
        return EXIT_USAGE;
    for (unsigned i = 0; i < o->ninputs; i++)
        sp_top_set_kernel_info(l->m, i, l->c.k[i].name, "", 0);
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "%s: starting the streams of %u kernel%s ...\n", prog,
                o->ninputs, o->ninputs > 1 ? "s" : "");
    int rc = sp_collect_start(&l->c, 0, "all");
    if (rc == 0 && errs)
        l->c.o.err = errs;
    return rc;
}

int sp_top_main(int argc, char **argv)
{
    struct sp_top_opts o;
    memset(&o, 0, sizeof o);
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc;
    static uint8_t key_bytes[USHP_KEY_LEN];
    if (o.keyfile && ushc_load_key(o.keyfile, key_bytes, stderr, prog) < 0)
        return EXIT_USAGE;
    static struct namer nm;
    static struct feeds f;
    static struct live l;
    sp_elfset_init(&nm.set);
    struct sp_top_model *m = sp_top_new(o.window, namer_name, &nm);
    if (o.off)
        sp_top_set_unit(m, "us off-CPU");
    if (o.lock)
        sp_top_set_unit(m, "us of lock waits");
    for (unsigned k = 0; k < o.ninputs && rc == 0; k++) {
        if (sp_elfset_add(&nm.set, k, o.elfs[o.nelfs == 1 ? 0 : k], prog))
            rc = EXIT_USAGE;
        else if (o.replay && replay_open(&f.r[k], k, o.inputs[k], &nm, m))
            rc = EXIT_USAGE;
        f.nr = o.replay ? k + 1 : 0;
    }
    char *errbuf = NULL;
    size_t errlen = 0;
    FILE *errs = NULL;
    if (rc == 0 && !o.replay) {
        l.m = m;
        l.nm = &nm;
        if (isatty(STDOUT_FILENO))
            errs = open_memstream(&errbuf, &errlen);
        rc = live_open(&l, &o, o.keyfile ? key_bytes : NULL, errs);
        f.live = &l;
    }
    if (rc == 0) {
        struct sigaction sa = { .sa_handler = on_signal };
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        rc = run(m, &f, o.iterations);
    }
    if (f.live) {
        if (l.c.o.err == errs && errs)
            l.c.o.err = stderr;
        if (rc == 0 || l.err[0])
            sp_collect_stop(&l.c, LIVE_STOP_WAIT_MS);
        sp_collect_close(&l.c);
    }
    if (errs) {
        fclose(errs);
        if (errlen)
            fputs(errbuf, stderr);
        free(errbuf);
    }
    if (l.err[0])
        fprintf(stderr, "%s: %s\n", prog, l.err);
    for (unsigned i = 0; i < f.nr; i++)
        free(f.r[i].chains);
    sp_top_free(m);
    sp_elfset_free(&nm.set);
    return rc;
}
