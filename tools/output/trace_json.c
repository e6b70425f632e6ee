/* tools/output/trace_json.c: a trace as Chrome's trace-event JSON
 * (trace_json.h).
 *
 * Two passes. The first walks the events once and derives what the raw
 * trace says only between the lines: each task's runs (a run ends at the
 * switch that takes its task off the CPU, or at the window's end), the
 * reason each run ended, and for each run the wait and scheduling delay
 * that came before it. The second writes: one event object at a time,
 * so a long trace needs no document tree in memory. */
#include "tools/output/trace_json.h"
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "tools/output/flame_json.h"
#include "tools/output/trace_names.h"

#define LANE_PID 1000000u           /* trace_json.h: CPU n is pid 1000000 + n */
#define NO_EV    ((size_t)-1)

struct run {
    uint32_t r_cpu;
    size_t r_task;                  /* index in the task table */
    uint64_t r_start, r_end;
    size_t r_left;                  /* the switch that ended it, or NO_EV */
    uint64_t r_delay, r_wait;
    size_t r_wake;                  /* the wake it followed, or NO_EV */
};

/* What the first pass knows of a task between its runs. */
struct task_state {
    bool ts_left;                   /* it has left a CPU: ts_left_ns holds */
    uint64_t ts_left_ns;
    bool ts_runnable;               /* since ts_ready_ns: preempted or woken */
    uint64_t ts_ready_ns, ts_wait;
    size_t ts_wake;                 /* the wake that made it runnable */
};

/* A CPU's run in progress. */
struct cpu_state {
    bool cs_on;                     /* some event has shown its task */
    struct run cs_run;
};

struct derive {
    const struct sp_trace *t;
    struct sp_trace_tasks tasks;
    struct task_state *ts;
    struct cpu_state *cpu;
    struct run *runs;
    size_t nruns, capruns;
    uint64_t end;                   /* the window's end, or the last event's */
};

static void run_close(struct derive *d, uint32_t cpu, uint64_t ns, size_t left)
{
    struct run *r = &d->cpu[cpu].cs_run;
    r->r_end = ns;
    r->r_left = left;
    d->runs = sp_grow(d->runs, &d->capruns, d->nruns + 1, sizeof *d->runs);
    d->runs[d->nruns++] = *r;
}

/* Task k starts a run on cpu at ns: its delay and wait are those of the
 * wake or preemption that made it runnable, which is then spent. Idle
 * (pid 0, one per CPU) is never waiting for anything. */
static void run_open(struct derive *d, uint32_t cpu, uint64_t ns, size_t k)
{
    struct run *r = &d->cpu[cpu].cs_run;
    *r = (struct run){ .r_cpu = cpu, .r_task = k, .r_start = ns, .r_left = NO_EV,
                       .r_wake = NO_EV };
    d->cpu[cpu].cs_on = true;
    struct task_state *s = &d->ts[k];
    if (d->tasks.v[k].tt_pid != 0 && s->ts_runnable && ns >= s->ts_ready_ns) {
        r->r_delay = ns - s->ts_ready_ns;
        r->r_wait = s->ts_wait;
        r->r_wake = s->ts_wake;
    }
    s->ts_runnable = false;
    s->ts_wake = NO_EV;
}

static void on_switch(struct derive *d, const struct traw_event *e)
{
    size_t out = sp_trace_tasks_find(&d->tasks, e->te_pid);
    size_t in = sp_trace_tasks_find(&d->tasks, e->te_pid2);
    run_close(d, e->te_cpu, e->te_ns, (size_t)(e - d->t->st_ev));
    struct task_state *s = &d->ts[out];
    s->ts_left = true;
    s->ts_left_ns = e->te_ns;
    /* A task preempted or yielding is runnable from the moment it left;
     * one that sleeps waits for a wake, and a wake seen before its
     * switch (a race the kernel's order allows) is not the one it waits
     * for. */
    s->ts_runnable = e->te_left == TRAW_LEFT_PREEMPTED || e->te_left == TRAW_LEFT_YIELD;
    s->ts_ready_ns = e->te_ns;
    s->ts_wait = 0;
    s->ts_wake = NO_EV;
    run_open(d, e->te_cpu, e->te_ns, in);
}

/* The first wake of a waiting task counts: later ones find it runnable
 * already, as Linux's sched_waking of a runnable task changes nothing. */
static void on_wake(struct derive *d, const struct traw_event *e)
{
    size_t k = sp_trace_tasks_find(&d->tasks, e->te_pid2);
    struct task_state *s = &d->ts[k];
    if (e->te_pid2 == 0 || s->ts_runnable)
        return;
    s->ts_runnable = true;
    s->ts_ready_ns = e->te_ns;
    s->ts_wait = s->ts_left && e->te_ns >= s->ts_left_ns ? e->te_ns - s->ts_left_ns : 0;
    s->ts_wake = (size_t)(e - d->t->st_ev);
}

static void derive(struct derive *d, const struct sp_trace *t)
{
    memset(d, 0, sizeof *d);
    d->t = t;
    sp_trace_tasks_build(&d->tasks, t);
    d->ts = sp_xcalloc(d->tasks.n + 1, sizeof *d->ts);
    d->cpu = sp_xcalloc(TRAW_CPUS, sizeof *d->cpu);
    d->end = (uint64_t)t->st_hdr.th_ms * 1000000u;
    for (size_t i = 0; i < t->st_nev; i++) {
        const struct traw_event *e = &t->st_ev[i];
        uint64_t last = e->te_type == TRAW_IRQ && e->te_end > e->te_ns ? e->te_end : e->te_ns;
        if (last > d->end)
            d->end = last;
        if (e->te_cpu >= TRAW_CPUS)
            continue;
        /* Every event names the task running on its CPU: the first one
         * seen there ran from the window's start. */
        if (!d->cpu[e->te_cpu].cs_on)
            run_open(d, e->te_cpu, 0, sp_trace_tasks_find(&d->tasks, e->te_pid));
        if (e->te_type == TRAW_SWITCH)
            on_switch(d, e);
        else if (e->te_type == TRAW_WAKE)
            on_wake(d, e);
    }
    for (uint32_t c = 0; c < TRAW_CPUS; c++)
        if (d->cpu[c].cs_on)
            run_close(d, c, d->end, NO_EV);
}

static void derive_free(struct derive *d)
{
    sp_trace_tasks_free(&d->tasks);
    free(d->ts);
    free(d->cpu);
    free(d->runs);
}

/* stackFrames: one node per distinct (parent, function, file, line). */
struct sf_node {
    size_t sf_parent;               /* 0: a root; else the parent's id */
    const struct sp_frame *sf_frame;
};

struct sf_table {
    struct sf_node *v;              /* v[id - 1] */
    size_t n, cap;
    size_t *slot;                   /* id, 0 free */
    size_t nslots;
};

static bool same_frame(const struct sp_frame *a, const struct sp_frame *b)
{
    return strcmp(a->pf_func, b->pf_func) == 0 && a->pf_line == b->pf_line &&
           (a->pf_file == b->pf_file ||
            (a->pf_file && b->pf_file && strcmp(a->pf_file, b->pf_file) == 0));
}

static size_t sf_hash(size_t parent, const struct sp_frame *f)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)parent * 0x9e3779b97f4a7c15ull ^ f->pf_line;
    for (const unsigned char *c = (const unsigned char *)f->pf_func; *c; c++)
        h = (h ^ *c) * 1099511628211ull;
    return (size_t)(h ^ h >> 29);
}

static size_t *sf_slot(const struct sf_table *s, size_t parent, const struct sp_frame *f)
{
    size_t mask = s->nslots - 1;
    for (size_t h = sf_hash(parent, f) & mask;; h = (h + 1) & mask) {
        size_t c = s->slot[h];
        if (!c || (s->v[c - 1].sf_parent == parent && same_frame(s->v[c - 1].sf_frame, f)))
            return &s->slot[h];
    }
}

static size_t sf_step(struct sf_table *s, size_t parent, const struct sp_frame *f)
{
    if (2 * (s->n + 1) > s->nslots) {
        free(s->slot);
        s->nslots = s->nslots ? 2 * s->nslots : 256;
        s->slot = sp_xcalloc(s->nslots, sizeof *s->slot);
        for (size_t i = 0; i < s->n; i++)
            *sf_slot(s, s->v[i].sf_parent, s->v[i].sf_frame) = i + 1;
    }
    size_t *slot = sf_slot(s, parent, f);
    if (!*slot) {
        s->v = sp_grow(s->v, &s->cap, s->n + 1, sizeof *s->v);
        s->v[s->n] = (struct sf_node){ .sf_parent = parent, .sf_frame = f };
        *slot = ++s->n;
    }
    return *slot;
}

/* A sample's chain as a path of stackFrames from the outermost caller,
 * inlined frames each a node of their own; its leaf's id (0: no frame). */
static size_t sf_chain(struct sf_table *s, const struct sp_chain *c)
{
    size_t at = 0;
    for (unsigned d = c->c_depth; d-- > 0;) {
        const struct sp_loc *l = c->c_locs[d];
        for (unsigned k = l->pl_nframes; k-- > 0;)
            at = sf_step(s, at, &l->pl_frames[k]);
    }
    return at;
}

/* The writer: each event object after a comma but the first. */
struct out {
    FILE *f;
    bool first;
};

static void us(FILE *f, const char *key, uint64_t ns)
{
    fprintf(f, ",\"%s\":%llu.%03u", key, (unsigned long long)(ns / 1000), (unsigned)(ns % 1000));
}

/* A JSON string: printable ASCII that needs no escape as it is (task
 * names, reasons, labels: nearly every string here), anything else
 * through flame_json's escaping, which a page's <script> can hold. The
 * two write the same text for the first kind; the shortcut is the
 * writer's speed: through jansson, 2.5 million events took 13.9 s to
 * write, 4.5 s with it. */
static void jstr(FILE *f, const char *s)
{
    for (const unsigned char *c = (const unsigned char *)s; *c; c++)
        if (*c < 0x20 || *c > 0x7e || strchr("\"\\<>&", *c)) {
            sp_fj_str(f, s);
            return;
        }
    fprintf(f, "\"%s\"", s);
}

static void str(FILE *f, const char *key, const char *s)
{
    fprintf(f, ",\"%s\":", key);
    jstr(f, s);
}

/* An event's head: {"ph":PH,"cat":CAT,"name":NAME,"pid":P,"tid":P,"ts":TS
 * and the caller writes the rest and the closing brace. */
static void head(struct out *o, const char *ph, const char *cat, const char *name,
                 uint32_t cpu, uint64_t ns)
{
    fputs(o->first ? "\n" : ",\n", o->f);
    o->first = false;
    fprintf(o->f, "{\"ph\":\"%s\",\"cat\":\"%s\"", ph, cat);
    str(o->f, "name", name);
    fprintf(o->f, ",\"pid\":%u,\"tid\":%u", LANE_PID + cpu, LANE_PID + cpu);
    us(o->f, "ts", ns);
}

static void write_run(struct out *o, const struct derive *d, const struct run *r)
{
    const struct sp_trace_task *k = &d->tasks.v[r->r_task];
    bool idle = k->tt_pid == 0;
    head(o, "X", idle ? "idle" : "run", idle ? TRAW_IDLE_TASK : k->tt_name, r->r_cpu, r->r_start);
    us(o->f, "dur", r->r_end - r->r_start);
    fprintf(o->f, ",\"args\":{\"pid\":%u", (unsigned)k->tt_pid);
    str(o->f, "task", k->tt_name);
    /* The reason it left; "" for a run the window's end cut short. */
    char left[TRAW_NAME_MAX + 16] = "";
    if (r->r_left != NO_EV) {
        const struct traw_event *e = &d->t->st_ev[r->r_left];
        snprintf(left, sizeof left, "%s%s%s", sp_trace_left_word(e->te_left),
                 e->te_name[0] ? ":" : "", e->te_name);
    }
    str(o->f, "left", left);
    us(o->f, "delay_us", r->r_delay);
    us(o->f, "wait_us", r->r_wait);
    fputs("}}", o->f);
}

/* A wake's flow: its start on the waker's CPU at the wake, its end where
 * the run it led to starts. Its id is the wake's event index + 1, so
 * each wake has one and no two share it. */
static void write_flow(struct out *o, const struct derive *d, const struct run *r)
{
    const struct traw_event *w = &d->t->st_ev[r->r_wake];
    char waker[TRAW_NAME_MAX + 32];
    if (w->te_in_irq)
        sp_trace_irq_label(w, waker, sizeof waker);
    else
        snprintf(waker, sizeof waker, "%s", w->te_task);
    for (int end = 0; end < 2; end++) {
        head(o, end ? "f" : "s", "wake", "wake", end ? r->r_cpu : w->te_cpu,
             end ? r->r_start : w->te_ns);
        if (end)
            fputs(",\"bp\":\"e\"", o->f);
        fprintf(o->f, ",\"id\":%zu,\"args\":{", r->r_wake + 1);
        fputs("\"waker\":", o->f);
        jstr(o->f, waker);
        str(o->f, "wakee", w->te_task2);
        fputs("}}", o->f);
    }
}

static void write_irq(struct out *o, const struct traw_event *e)
{
    char name[TRAW_NAME_MAX + 32];
    sp_trace_irq_label(e, name, sizeof name);
    head(o, "X", "irq", name, e->te_cpu, e->te_ns);
    us(o->f, "dur", e->te_end > e->te_ns ? e->te_end - e->te_ns : 0);
    fprintf(o->f, ",\"args\":{\"vector\":%u", (unsigned)e->te_vec);
    str(o->f, "class", sp_trace_class_word(e->te_class));
    str(o->f, "task", e->te_task);
    fputs("}}", o->f);
}

static void write_sample(struct out *o, const struct traw_event *e, size_t sf)
{
    head(o, "i", "sample", "sample", e->te_cpu, e->te_ns);
    fputs(",\"s\":\"t\"", o->f);
    if (sf)
        fprintf(o->f, ",\"sf\":%zu", sf);
    fprintf(o->f, ",\"args\":{\"pid\":%u", (unsigned)e->te_pid);
    str(o->f, "task", e->te_task);
    fputs("}}", o->f);
}

static void write_frames(FILE *f, const struct sf_table *s)
{
    fputs("\"stackFrames\":{", f);
    for (size_t i = 0; i < s->n; i++) {
        const struct sf_node *x = &s->v[i];
        fprintf(f, "%s\n\"%zu\":{\"name\":", i ? "," : "", i + 1);
        jstr(f, x->sf_frame->pf_func);
        char cat[512] = "kernel";
        if (x->sf_frame->pf_file)
            snprintf(cat, sizeof cat, "%s:%u", x->sf_frame->pf_file, x->sf_frame->pf_line);
        str(f, "category", cat);
        if (x->sf_parent)
            fprintf(f, ",\"parent\":\"%zu\"", x->sf_parent);
        fputs("}", f);
    }
    fputs("}", f);
}

/* The samples as the object format's "samples" array (speedscope's way
 * in): the same stackFrames ids the instant events carry. */
static void write_samples(FILE *f, const struct sp_trace *t, struct sf_table *sf)
{
    fputs("\"samples\":[", f);
    bool first = true;
    for (size_t i = 0; i < t->st_nev; i++) {
        const struct traw_event *e = &t->st_ev[i];
        const struct sp_chain *c = sp_trace_sample(t, i);
        if (e->te_type != TRAW_SAMPLE || !c)
            continue;
        fprintf(f, "%s\n{\"cpu\":%u,\"pid\":%u,\"tid\":%u", first ? "" : ",",
                (unsigned)e->te_cpu, LANE_PID + e->te_cpu, LANE_PID + e->te_cpu);
        us(f, "ts", e->te_ns);
        fprintf(f, ",\"name\":\"sample\",\"sf\":%zu,\"weight\":1}", sf_chain(sf, c));
        first = false;
    }
    fputs("]", f);
}

static void write_other(FILE *f, const struct sp_trace *t)
{
    const struct traw_header *h = &t->st_hdr;
    fputs("\"otherData\":{\"kernel\":", f);
    jstr(f, t->st_kernel ? t->st_kernel : "");
    str(f, "build_id", h->th_build_id);
    fprintf(f, ",\"ms\":%u,\"cpus\":%u,\"dropped\":[", (unsigned)h->th_ms, (unsigned)h->th_cpus);
    for (uint32_t c = 0; c < h->th_cpus && c < TRAW_CPUS; c++)
        fprintf(f, "%s%u", c ? "," : "", (unsigned)h->th_dropped[c]);
    fputs("]}", f);
}

int sp_trace_json_write(const struct sp_trace *t, FILE *f)
{
    struct derive d;
    derive(&d, t);
    struct out o = { .f = f, .first = true };
    fputs("{\"traceEvents\":[", f);
    for (uint32_t c = 0; c < t->st_hdr.th_cpus && c < TRAW_CPUS; c++) {
        fputs(o.first ? "\n" : ",\n", f);
        o.first = false;
        fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%u,\"tid\":%u,"
                "\"args\":{\"name\":\"CPU %u\"}}", LANE_PID + c, LANE_PID + c, (unsigned)c);
    }
    for (size_t i = 0; i < d.nruns; i++) {
        write_run(&o, &d, &d.runs[i]);
        if (d.runs[i].r_wake != NO_EV)
            write_flow(&o, &d, &d.runs[i]);
    }
    struct sf_table sf = { 0 };
    for (size_t i = 0; i < t->st_nev; i++) {
        const struct traw_event *e = &t->st_ev[i];
        if (e->te_type == TRAW_IRQ)
            write_irq(&o, e);
        else if (e->te_type == TRAW_SAMPLE) {
            const struct sp_chain *c = sp_trace_sample(t, i);
            write_sample(&o, e, c ? sf_chain(&sf, c) : 0);
        }
    }
    fputs("\n],\n", f);
    write_frames(f, &sf);
    fputs(",\n", f);
    write_samples(f, t, &sf);
    fputs(",\n\"displayTimeUnit\":\"ns\",\n", f);
    write_other(f, t);
    fputs("}\n", f);
    free(sf.v);
    free(sf.slot);
    derive_free(&d);
    return ferror(f) ? -1 : 0;
}
