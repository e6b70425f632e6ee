/* kernel/cmd/trace.c: `trace`, the scheduling trace in words: what ran on
 * each CPU, when, for how long, and why it left (perf sched timehist),
 * each CPU's summary, or the map of which task ran where (perf sched
 * map). The facts are the profiler core's (kernel/prof/trace.h): a
 * window of switch, wake and interrupt records folded in time order.
 *
 * Commands: prefix cmd_trace_. */
#include "hal/cpu.h"
#include "kernel/cmd/profile.h"
#include "kernel/buildid.h"
#include "kernel/irqname.h"
#include "kernel/prof/session.h"
#include "kernel/prof/trace.h"
#include "kernel/shell.h"
#include "kernel/task.h"
#include "lib/parse.h"
#include "lib/printf.h"
#include "lib/string.h"
#include "mm/heap.h"
#include "uapi/trace_raw.h"

#define CMD_TRACE_USAGE "trace [ms] [cpu,...] [map|raw]"
#define CMD_TRACE_TOP 3         /* tasks the summary names per CPU */
#define CMD_TRACE_IDS 260       /* the map's two-letter ids: A0..Z9 */

struct cmd_trace {
    struct printer *ct_p;
    unsigned ct_cpus;           /* bit i: CPU i asked for (0: all) */
    bool ct_map;
    bool ct_raw;                /* uapi/trace_raw.h's grammar, for sonde-prof */
    struct prof_trace_fold *ct_fold;
    /* the map's state */
    int ct_cur[MAX_CPUS];       /* pid running on each CPU (0: not seen) */
    bool ct_cur_idle[MAX_CPUS];
    int ct_ids[CMD_TRACE_IDS];  /* pid of each two-letter id */
    unsigned ct_nids;
};

/* ns as ms with three decimals (µs). */
static void cmd_trace_ms(char *buf, size_t cap, uint64_t ns)
{
    fmt_snprintf(buf, cap, "%lu.%03lu", (unsigned long)(ns / 1000000),
                 (unsigned long)(ns / 1000 % 1000));
}

/* ns as µs with three decimals (ns): an interrupt's slice. */
static void cmd_trace_us(char *buf, size_t cap, uint64_t ns)
{
    fmt_snprintf(buf, cap, "%lu.%03lu", (unsigned long)(ns / 1000), (unsigned long)(ns % 1000));
}

/* "name[pid]", or "<idle>" for a CPU's idle task. */
static void cmd_trace_task(char *buf, size_t cap, int pid, bool idle)
{
    char name[TASK_NAME_MAX];
    if (idle)
        fmt_snprintf(buf, cap, "<idle>");
    else if (task_name(pid, name))
        fmt_snprintf(buf, cap, "%s[%d]", name, pid);
    else
        fmt_snprintf(buf, cap, "?[%d]", pid);      /* it has exited since */
}

static const char *cmd_trace_left_word(unsigned left)
{
    static const char *const words[] = {
        [PROF_TRACE_LEFT_NONE] = "-",
        [PROF_TRACE_LEFT_SLEEP] = "sleep",
        [PROF_TRACE_LEFT_WAITQ] = "waitq",
        [PROF_TRACE_LEFT_MUTEX] = "mutex",
        [PROF_TRACE_LEFT_PREEMPTED] = "preempted",
        [PROF_TRACE_LEFT_EXIT] = "exit",
        [PROF_TRACE_LEFT_YIELD] = "yield",
    };
    return left <= PROF_TRACE_LEFT_MAX ? words[left] : "?";
}

/* ---- the timehist ---------------------------------------------------- */

static void cmd_trace_row_text(const struct prof_trace_row *r, struct cmd_trace *ct)
{
    char t[24], w[24], d[24], run[24], who[TASK_NAME_MAX + 16];
    cmd_trace_ms(t, sizeof t, r->tr_ns);
    cmd_trace_ms(w, sizeof w, r->tr_wait);
    cmd_trace_ms(d, sizeof d, r->tr_delay);
    cmd_trace_ms(run, sizeof run, r->tr_run);
    cmd_trace_task(who, sizeof who, r->tr_pid, r->tr_idle);
    pr_printf(ct->ct_p, "%12s [%04u]  %-22s %10s %10s %10s%s  %s", t, r->tr_cpu, who, w, d, run,
              r->tr_partial ? "+" : " ", cmd_trace_left_word(r->tr_left));
    if (r->tr_left == PROF_TRACE_LEFT_WAITQ || r->tr_left == PROF_TRACE_LEFT_MUTEX)
        pr_printf(ct->ct_p, " %s", r->tr_name ? r->tr_name : "?");
    cmd_trace_task(who, sizeof who, r->tr_next, r->tr_next_idle);
    pr_printf(ct->ct_p, " => %s", who);
    /* A wake inside an interrupt other than the tick: the task it
     * interrupted is not who woke it (the tick's own wakes end sleeps). */
    unsigned class = PROF_IRQ_CLASS(r->tr_wirq);
    if (r->tr_wirq && class != PROF_TRACE_IRQ_TICK) {
        cmd_trace_task(who, sizeof who, r->tr_waker, task_is_idle(r->tr_waker));
        char irq[IRQNAME_TEXT];
        irqname_text(PROF_IRQ_VEC1(r->tr_wirq) - 1, prof_trace_irq_name(class), irq, sizeof irq);
        pr_printf(ct->ct_p, " (woken by irq %s on CPU %u, during %s)", irq,
                  PROF_IRQ_CPU(r->tr_wirq), who);
    }
    pr_puts(ct->ct_p, "\n");
}

/* ---- the map ----------------------------------------------------------- */

/* pid's two-letter id (A0, B0, ... Z9), given on first sight, its
 * legend then printed; "??" once all are given. */
static void cmd_trace_id(struct cmd_trace *ct, int pid, char id[3], bool *fresh)
{
    *fresh = false;
    unsigned i = 0;
    while (i < ct->ct_nids && ct->ct_ids[i] != pid)
        i++;
    if (i == ct->ct_nids) {
        if (i == CMD_TRACE_IDS) {
            id[0] = id[1] = '?';
            id[2] = '\0';
            return;
        }
        ct->ct_ids[ct->ct_nids++] = pid;
        *fresh = true;
    }
    id[0] = (char)('A' + i % 26);
    id[1] = (char)('0' + i / 26);
    id[2] = '\0';
}

static void cmd_trace_row_map(const struct prof_trace_row *r, struct cmd_trace *ct)
{
    ct->ct_cur[r->tr_cpu] = r->tr_next;
    ct->ct_cur_idle[r->tr_cpu] = r->tr_next_idle;
    char id[3], t[24];
    bool fresh = false;
    for (unsigned c = 0; c < cpu_count() && c < MAX_CPUS; c++) {
        if (ct->ct_cpus && !(ct->ct_cpus >> c & 1))
            continue;
        const char *mark = c == r->tr_cpu ? "*" : " ";
        if (!ct->ct_cur[c] || ct->ct_cur_idle[c]) {
            pr_printf(ct->ct_p, " %s%s", mark, ct->ct_cur[c] ? ". " : "  ");
            continue;
        }
        bool f;
        cmd_trace_id(ct, ct->ct_cur[c], id, &f);
        fresh |= f && c == r->tr_cpu;
        pr_printf(ct->ct_p, " %s%s", mark, id);
    }
    cmd_trace_ms(t, sizeof t, r->tr_ns);
    pr_printf(ct->ct_p, "  %12s ms", t);
    if (fresh && !r->tr_next_idle) {
        char who[TASK_NAME_MAX + 16];
        cmd_trace_id(ct, r->tr_next, id, &fresh);
        cmd_trace_task(who, sizeof who, r->tr_next, false);
        pr_printf(ct->ct_p, "  %s => %s", id, who);
    }
    pr_puts(ct->ct_p, "\n");
}

static void cmd_trace_row(const struct prof_trace_row *r, void *arg)
{
    struct cmd_trace *ct = arg;
    if (ct->ct_map)
        cmd_trace_row_map(r, ct);
    else
        cmd_trace_row_text(r, ct);
}

/* ---- the summary ------------------------------------------------------- */

/* Per mille of whole, rounded, printed as a share with one decimal. */
static void cmd_trace_share(char *buf, size_t cap, uint64_t part, uint64_t whole)
{
    uint64_t pm = whole ? (part * 1000 + whole / 2) / whole : 0;
    fmt_snprintf(buf, cap, "%lu.%lu%%", (unsigned long)(pm / 10), (unsigned long)(pm % 10));
}

static void cmd_trace_top(const struct prof_trace_fold *f, unsigned cpu, struct printer *p)
{
    const struct prof_trace_task *top[CMD_TRACE_TOP] = { 0 };
    for (unsigned i = 0; i < PROF_TRACE_TASKS; i++) {
        const struct prof_trace_task *t = &f->tf_task[i];
        if (!t->tt_pid || t->tt_idle || t->tt_cpu != cpu || !t->tt_run)
            continue;
        for (unsigned k = 0; k < CMD_TRACE_TOP; k++) {
            if (!top[k] || t->tt_run > top[k]->tt_run) {
                for (unsigned j = CMD_TRACE_TOP - 1; j > k; j--)
                    top[j] = top[j - 1];
                top[k] = t;
                break;
            }
        }
    }
    pr_puts(p, "  longest:");
    if (!top[0])
        pr_puts(p, " none");
    for (unsigned k = 0; k < CMD_TRACE_TOP && top[k]; k++) {
        char who[TASK_NAME_MAX + 16], run[24], md[24];
        cmd_trace_task(who, sizeof who, top[k]->tt_pid, false);
        cmd_trace_ms(run, sizeof run, top[k]->tt_run);
        cmd_trace_ms(md, sizeof md, top[k]->tt_max_delay);
        pr_printf(p, "%s %s %s ms (%u runs, max delay %s ms)", k ? ";" : "", who, run,
                  (unsigned)top[k]->tt_runs, md);
    }
    pr_puts(p, "\n");
}

static void cmd_trace_cpu(const struct prof_trace_fold *f, unsigned cpu, struct printer *p)
{
    const struct prof_trace_cpu_sum *c = &f->tf_cpu[cpu];
    if (c->cs_cur < 0) {
        /* No switch, wake, slice or sample: who ran there is unknown. */
        pr_printf(p, "cpu %u: nothing recorded in the window, dropped %u (%u nested)\n", cpu,
                  (unsigned)c->cs_dropped, (unsigned)c->cs_nested);
        return;
    }
    uint64_t busy = 0;
    for (unsigned i = 0; i < PROF_TRACE_TASKS; i++) {
        const struct prof_trace_task *t = &f->tf_task[i];
        if (t->tt_pid && !t->tt_idle && t->tt_cpu == cpu)
            busy += t->tt_run;
    }
    char bs[16], b[24], id[24], is[16], ir[24];
    cmd_trace_share(bs, sizeof bs, busy, f->tf_ns);
    cmd_trace_ms(b, sizeof b, busy);
    cmd_trace_ms(id, sizeof id, c->cs_idle);
    cmd_trace_share(is, sizeof is, c->cs_irq, f->tf_ns);
    cmd_trace_ms(ir, sizeof ir, c->cs_irq);
    pr_printf(p, "cpu %u: busy %s (%s ms), idle %s ms, interrupts %s (%s ms), switches %u, "
              "wakes %u, samples %u, dropped %u (%u nested)\n", cpu, bs, b, id, is, ir,
              (unsigned)c->cs_switches, (unsigned)c->cs_wakes, (unsigned)c->cs_samples,
              (unsigned)c->cs_dropped, (unsigned)c->cs_nested);
    pr_puts(p, "  slices:");
    bool any = false;
    for (unsigned k = 0; k <= PROF_TRACE_IRQ_MAX; k++) {
        if (!c->cs_irqs[k])
            continue;
        char lo[24], hi[24];
        cmd_trace_us(lo, sizeof lo, c->cs_irq_min[k]);
        cmd_trace_us(hi, sizeof hi, c->cs_irq_max[k]);
        pr_printf(p, "%s %s %u (%s-%s us)", any ? ";" : "", prof_trace_irq_name(k),
                  (unsigned)c->cs_irqs[k], lo, hi);
        any = true;
    }
    pr_puts(p, any ? "\n" : " none\n");
    cmd_trace_top(f, cpu, p);
}

/* ---- raw: uapi/trace_raw.h's grammar ---------------------------------- */

_Static_assert((int)PROF_TRACE_LEFT_MAX == (int)TRAW_LEFT_MAX &&
               (int)PROF_TRACE_IRQ_MAX == (int)TRAW_CLASS_MAX &&
               PROF_FRAMES <= TRAW_FRAMES && MAX_CPUS <= TRAW_CPUS,
               "the raw trace's numbering is the profiler's");

/* s into out (cap bytes) as one word of the grammar: '!'..'~', no ';'
 * (nor ':' when colon is false), cut to cap - 1; "-" when empty. */
static void cmd_trace_raw_word(char *out, size_t cap, const char *s, bool colon)
{
    size_t n = 0;
    for (; s[n] && n + 1 < cap; n++) {
        char c = s[n];
        out[n] = c < '!' || c > '~' || c == ';' || (!colon && c == ':') ? '_' : c;
    }
    if (n == 0)
        out[n++] = '-';
    out[n] = '\0';
}

/* " PID TASK": a CPU's idle is 0 <idle>; a task gone since is "-". */
static void cmd_trace_raw_task(struct printer *p, int pid)
{
    char name[TASK_NAME_MAX], word[TRAW_TASK_MAX + 1];
    if (task_is_idle(pid)) {
        pr_puts(p, " 0 " TRAW_IDLE_TASK);
        return;
    }
    cmd_trace_raw_word(word, sizeof word, task_name(pid, name) ? name : "", true);
    pr_printf(p, " %d %s", pid, word);
}

/* " VEC CLASS[ IRQNAME]" or, for a wake, ":"-joined after "irq=". */
static void cmd_trace_raw_irq(struct printer *p, unsigned vec, unsigned class, char sep)
{
    char name[IRQNAME_TEXT];
    pr_printf(p, "%u%c%s", vec, sep, prof_trace_irq_name(class));
    if (class != PROF_TRACE_IRQ_NMI && irqname_get(vec, name, sizeof name))
        pr_printf(p, "%c%s", sep, name);
}

/* Whether r is an event of the grammar: a sample with its frames, a
 * switch, a wake, a slice of a known class. */
static bool cmd_trace_raw_is(const struct prof_record *r)
{
    if (r->pr_kind == PROF_KIND_CPU)
        return r->pr_depth >= 1;
    if (r->pr_why == PROF_TRACE_IRQ)
        return r->pr_cost >= 1 && r->pr_cost <= PROF_TRACE_IRQ_MAX;
    if (r->pr_why == PROF_TRACE_WAKE)
        return !r->pr_frames[0] || (r->pr_frames[1] >= 1 && r->pr_frames[1] <= PROF_TRACE_IRQ_MAX);
    return r->pr_why == PROF_TRACE_SWITCH;
}

static void cmd_trace_raw_event(struct printer *p, const struct prof_record *r, unsigned cpu)
{
    unsigned long ns = (unsigned long)prof_trace_ns(prof_trace_time(r));
    if (r->pr_kind == PROF_KIND_CPU) {
        pr_printf(p, "P %lu %u", ns, cpu);
        cmd_trace_raw_task(p, r->pr_pid);
        for (unsigned k = 0; k < r->pr_depth && k < PROF_FRAMES; k++)
            pr_printf(p, " %lx", (unsigned long)r->pr_frames[k]);
    } else if (r->pr_why == PROF_TRACE_IRQ) {
        pr_printf(p, "I %lu %u %lu ", ns, cpu, (unsigned long)prof_trace_ns(r->pr_weight));
        cmd_trace_raw_irq(p, (unsigned)r->pr_waker, r->pr_cost, ' ');
        pr_printf(p, " %d", task_is_idle(r->pr_pid) ? 0 : r->pr_pid);
    } else if (r->pr_why == PROF_TRACE_WAKE) {
        pr_printf(p, "W %lu %u", ns, cpu);
        cmd_trace_raw_task(p, r->pr_waker);
        cmd_trace_raw_task(p, r->pr_pid);
        pr_printf(p, " %u", r->pr_cost < MAX_CPUS ? r->pr_cost : cpu);
        if (r->pr_frames[0]) {
            pr_puts(p, " irq=");
            cmd_trace_raw_irq(p, (unsigned)r->pr_frames[0] - 1, (unsigned)r->pr_frames[1], ':');
        }
    } else {
        char name[TRAW_NAME_MAX + 1];
        unsigned left = r->pr_cost <= PROF_TRACE_LEFT_MAX ? r->pr_cost : PROF_TRACE_LEFT_SLEEP;
        pr_printf(p, "S %lu %u", ns, cpu);
        cmd_trace_raw_task(p, r->pr_pid);
        pr_printf(p, " %s", cmd_trace_left_word(left));
        if ((left == PROF_TRACE_LEFT_WAITQ || left == PROF_TRACE_LEFT_MUTEX) && r->pr_name) {
            cmd_trace_raw_word(name, sizeof name, r->pr_name, false);
            pr_printf(p, ":%s", name);
        }
        cmd_trace_raw_task(p, r->pr_waker);
    }
    pr_puts(p, "\n");
}

/* The window's events in time order, counted first for the header's
 * events=, so that a reader catches a lost line. */
static void cmd_trace_raw(const struct prof_snapshot *s, struct cmd_trace *ct)
{
    struct printer *p = ct->ct_p;
    struct prof_trace_iter *it = kzalloc(sizeof *it);
    if (!it) {
        pr_printf(p, "trace: no memory for the raw trace's iterator (%lu bytes)\n",
                  (unsigned long)sizeof *it);
        return;
    }
    unsigned cpus = cpu_count() < MAX_CPUS ? cpu_count() : MAX_CPUS;
    for (unsigned i = cpus; i < MAX_CPUS; i++)
        if (s->ps_recs[i])
            cpus = i + 1;
    const struct prof_record *r;
    unsigned cpu;
    unsigned long events = 0;
    prof_trace_iter_init(it, s);
    while ((r = prof_trace_iter_next(it, &cpu)))
        events += cmd_trace_raw_is(r) && (!ct->ct_cpus || (ct->ct_cpus >> cpu & 1));
    pr_printf(p, TRAW_MAGIC "build-id=%s cpus=%u ms=%u events=%lu dropped=", build_id(), cpus,
              s->ps_ms, events);
    for (unsigned i = 0; i < cpus; i++)
        pr_printf(p, "%s%u", i ? "," : "", (unsigned)s->ps_drops[i]);
    pr_puts(p, "\n");
    prof_trace_iter_init(it, s);
    while ((r = prof_trace_iter_next(it, &cpu)))
        if (cmd_trace_raw_is(r) && (!ct->ct_cpus || (ct->ct_cpus >> cpu & 1)))
            cmd_trace_raw_event(p, r, cpu);
    kfree(it);
}

/* The window's reader (prof_window_read_fn): the rows, then each CPU's
 * summary; or the raw trace. */
static void cmd_trace_read(const struct prof_snapshot *s, void *arg)
{
    struct cmd_trace *ct = arg;
    struct prof_trace_fold *f = ct->ct_fold;
    struct printer *p = ct->ct_p;
    char w[24];
    if (ct->ct_raw) {
        cmd_trace_raw(s, ct);
        return;
    }
    f->tf_ns = s->ps_ns;
    f->tf_cpus = ct->ct_cpus;
    cmd_trace_ms(w, sizeof w, s->ps_ns);
    pr_printf(p, "trace: %s ms from %lu ns on the clock, %u cpus, samples from %s\n", w,
              (unsigned long)s->ps_t0, s->ps_ncpus, s->ps_source ? s->ps_source : "?");
    if (ct->ct_map)
        pr_puts(p, "map: a column per cpu, * the cpu that switched, . idle\n");
    else
        pr_printf(p, "%12s %6s  %-22s %10s %10s %10s   %s\n", "time (ms)", "cpu", "task[pid]",
                  "wait (ms)", "delay (ms)", "run (ms)", "left => next");
    prof_trace_fold(s, f, task_is_idle, cmd_trace_row, ct);
    pr_printf(p, "%u switches shown; per cpu (+: ran from the window's start):\n",
              (unsigned)f->tf_rows);
    for (unsigned c = 0; c < MAX_CPUS; c++)
        if (f->tf_cpu[c].cs_seen && (!ct->ct_cpus || (ct->ct_cpus >> c & 1)))
            cmd_trace_cpu(f, c, p);
    if (f->tf_untracked)
        pr_printf(p, "trace: %u events of tasks past the first %u not followed\n",
                  (unsigned)f->tf_untracked, PROF_TRACE_TASKS);
}

/* ---- the words --------------------------------------------------------- */

/* "0,2,3": each an online CPU, into *mask. */
static bool cmd_trace_cpus(const char *s, unsigned *mask, struct printer *p)
{
    *mask = 0;
    char buf[64];
    if (strlcpy(buf, s, sizeof buf) >= sizeof buf) {
        pr_printf(p, "trace: cpu list '%.20s...' too long\n", s);
        return false;
    }
    for (char *w = buf; *w;) {
        char *e = w;
        while (*e && *e != ',')
            e++;
        bool last = *e == '\0';
        *e = '\0';
        uint64_t c;
        if (!parse_range(w, 0, cpu_count() - 1, &c) || !cpu_online((unsigned)c)) {
            pr_printf(p, "trace: cpu '%s' is not an online cpu (0-%u)\n", w, cpu_count() - 1);
            return false;
        }
        *mask |= 1u << c;
        if (last)
            break;
        w = e + 1;
        if (!*w) {
            pr_puts(p, "trace: a cpu list ends with a cpu, not ','\n");
            return false;
        }
    }
    return true;
}

/* trace stream <port> [ms|0]: every CPU's, as `profile stream` (the
 * stream's words are kernel/cmd/profile_stream.c's). */
static int cmd_trace_stream(int argc, char **argv, struct printer *p)
{
    if (argc > 4) {
        pr_puts(p, "trace: too many arguments (usage: trace stream <port> [ms|0])\n");
        return 1;
    }
    return cmd_profile_stream_start(argc, argv, PROF_STREAM_TRACE, p);
}

static int cmd_trace(int argc, char **argv, struct printer *p)
{
    if (argc >= 2 && strcmp(argv[1], "stream") == 0)
        return cmd_trace_stream(argc, argv, p);
    struct cmd_trace ct = { .ct_p = p };
    uint64_t ms = PROF_WINDOW_DEF;
    int n = argc;
    if (n > 1 && strcmp(argv[n - 1], "map") == 0) {
        ct.ct_map = true;
        n--;
    } else if (n > 1 && strcmp(argv[n - 1], "raw") == 0) {
        ct.ct_raw = true;
        n--;
    }
    if (n > 3) {
        pr_puts(p, "trace: too many arguments (usage: " CMD_TRACE_USAGE ")\n");
        return 1;
    }
    for (int i = 1; i < n; i++) {
        if (strcmp(argv[i], "map") == 0 || strcmp(argv[i], "raw") == 0) {
            pr_printf(p, "trace: '%s' must be the last argument, and only one of map and raw"
                      " (usage: " CMD_TRACE_USAGE ")\n", argv[i]);
            return 1;
        }
    }
    if (n > 1) {
        if (!parse_u64(argv[1], &ms)) {
            pr_printf(p, "trace: '%s' is not a window (%u-%u ms)\n", argv[1], PROF_WINDOW_MIN,
                      PROF_WINDOW_MAX);
            return 1;
        }
        if (!prof_window_ok(ms)) {
            pr_printf(p, "trace: window %lu out of range (%u-%u ms)\n", (unsigned long)ms,
                      PROF_WINDOW_MIN, PROF_WINDOW_MAX);
            return 1;
        }
    }
    if (n > 2 && !cmd_trace_cpus(argv[2], &ct.ct_cpus, p))
        return 1;
    ct.ct_fold = kzalloc(sizeof *ct.ct_fold);
    if (!ct.ct_fold) {
        pr_printf(p, "trace: no memory for the trace's fold (%lu bytes)\n",
                  (unsigned long)sizeof *ct.ct_fold);
        return 1;
    }
    struct prof_window_spec ws = {
        .ws_kind = PROF_KIND_TRACE, .ws_ms = (unsigned)ms, .ws_pid = PROF_ALL,
        .ws_chains = PROF_CHAINS_DEF, .ws_format = PROF_TEXT,
        .ws_read = cmd_trace_read, .ws_arg = &ct,
    };
    struct prof_err e = { 0 };
    int rc = prof_window_run(&ws, p, &e);
    if (rc != PROF_OK)
        cmd_profile_say("trace", &e, p);
    kfree(ct.ct_fold);
    return rc == PROF_OK ? 0 : 1;
}

SHELL_COMMAND(trace, "trace", CMD_TRACE_USAGE "  every switch, wake and interrupt of a window"
              " (1-2000 ms): what ran on each cpu, its wait, scheduling delay and run time, why it"
              " left, and each cpu's summary; map: which task ran where; raw: every event for"
              " sonde-prof (uapi/trace_raw.h) (also: trace stream <port> [ms|0],"
              " every event to the UDP shell client that asks, until `profile stop`)",
              cmd_trace);
